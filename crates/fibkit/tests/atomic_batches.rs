//! Atomic batches ([`Router::set_atomic_batches`]): while a writer changes
//! the default route and a more specific route together, with churn of
//! longer prefixes beneath them, every batched lookup of every in-place
//! engine answers all its keys as the RIB at one generation; and a router
//! switched between the modes answers as its RIB throughout. (Without
//! atomic batches a batched lookup mixed generations thousands of times in
//! a hundred million calls: issue 48, item 3.)

mod common;

use common::model::{incremental_engines, label, next_hops, rib_from};
use common::racing::stress_with;

use fibkit::addr::{Address, Prefix};
use fibkit::random::XorShift32;
use fibkit::router::{Router, Update, Window};
use fibkit::Rib;

/// Next hops up to this index are written as `Label::Number(hop - 1)`.
const HOPS: u32 = 4_000_000;

/// Batches that move the default route and `specific` together to one
/// next hop of two, with announcements and withdrawals of random longer
/// prefixes inside `specific` (next hops from 10), in random order.
fn toggling_batches<A: Address>(specific: Prefix<A>, count: usize, seed: u64) -> Vec<Vec<Update<Prefix<A>>>> {
    let mut rng = XorShift32::new(seed);
    let mut random = || A::ONE << (rng.next() % u32::from(A::BITS));
    let mut bits = XorShift32::new(seed + 1);
    (0..count)
        .map(|round| {
            let value = label(1 + round as u32 % 2);
            let mut batch = vec![
                Update::Announce { prefix: Prefix::default_route(), value },
                Update::Announce { prefix: specific, value },
            ];
            for _ in 0..bits.next() % 6 {
                let len = specific.prefix_len() + 1 + (bits.next() % u32::from(A::BITS - specific.prefix_len())) as u8;
                let noise = random() | random() | random();
                let prefix = Prefix::truncating(specific.addr() | (noise & !A::mask(specific.prefix_len())), len);
                let at = bits.next() as usize % (batch.len() + 1);
                let update = if bits.next().is_multiple_of(3) {
                    Update::Withdraw { prefix }
                } else {
                    Update::Announce { prefix, value: label(10 + bits.next() % 50) }
                };
                batch.insert(at, update);
            }
            batch
        })
        .collect()
}

fn every_engine_answers_each_batched_lookup_from_one_generation<A: Address>(specific: &str, batches: usize) {
    let specific: Prefix<A> = specific.parse().unwrap();
    let initial: Vec<Update<Prefix<A>>> = toggling_batches(specific, 200, 3).into_iter().flatten().collect();
    for (engine, hops) in incremental_engines::<A>(HOPS) {
        // Each batch copies the structure: fewer for those of 16 MiB and more.
        let count = if ["dir24-8", "d21r", "d22r"].contains(&engine) { batches / 8 } else { batches };
        let batches = toggling_batches(specific, count, 7);
        let (lookups, router) = stress_with(engine, rib_from(&initial, hops), next_hops(hops), &batches, 2, true);
        let stats = router.stats();
        eprintln!("{engine}: {lookups} racing lookups checked, {} bytes written", stats.bytes_written);
        assert!(router.atomic_batches());
    }
}

#[test]
fn ipv4_batched_lookups_answer_from_one_generation() {
    every_engine_answers_each_batched_lookup_from_one_generation::<u32>("10.1.0.0/16", 400);
}

#[test]
fn ipv6_batched_lookups_answer_from_one_generation() {
    every_engine_answers_each_batched_lookup_from_one_generation::<u128>("2001:db8::/32", 400);
}

/// Switched on and off between batches, a router answers as its RIB at
/// both ends of every range after each batch.
#[test]
fn switching_between_the_modes_keeps_the_fib_equal_to_the_rib() {
    let specific: Prefix<u32> = "10.1.0.0/16".parse().unwrap();
    for (engine, hops) in incremental_engines::<u32>(HOPS) {
        let mut router = Router::new(engine, Rib::new(), next_hops(hops), Window::Count(1)).unwrap();
        for (round, batch) in toggling_batches(specific, 60, 11).iter().enumerate() {
            router.set_atomic_batches(round % 3 != 0);
            router.apply(batch).unwrap();
            let snapshot = router.reader().snapshot();
            for range in router.rib().ranges(0, u32::MAX) {
                for addr in [range.first, range.last] {
                    assert_eq!(snapshot.fib().lookup(addr), range.next_hop, "{engine}, batch {round}, at {addr:#x}");
                }
            }
        }
    }
}
