//! IPv6 updated in place through the router (`Router<u128>`): Poptrie with
//! s = 16 and 18 and `poptrie16x12` answer as the RIB after every batch and
//! as a FIB built from scratch from the final RIB (random update sequences:
//! the default route, prefixes shorter than a direct slot or a block's
//! cell, inside and across slots and cells, down to /128s), and readers
//! racing the writer only ever see the RIB's answer before or after the
//! batch in flight; on the real IPv6 tables when the data folder has them.

mod common;

use common::model::{label, next_hops, rib_from};

use fibkit::addr::Prefix6;
use fibkit::fib::{BuildOptions, Fib};
use fibkit::nexthop::{Label, Mapping, NextHopTable};
use fibkit::random::XorShift32;
use fibkit::registry;
use fibkit::rib::Rib6;
use fibkit::router::{Router, Update, Window};
use proptest::prelude::*;

/// Next hops up to this index are written as `Label::Number(hop - 1)`.
const HOPS: u32 = 4_000_000;

/// The engines whose router updates IPv6 in place, with the next hops
/// their tests give them.
fn incremental_engines() -> Vec<(&'static str, u32)> {
    let engines = common::model::incremental_engines::<u128>(HOPS);
    for engine in ["poptrie16", "poptrie18", "poptrie16x12"] {
        assert!(engines.iter().any(|&(name, _)| name == engine), "{engine} updates IPv6 in place");
    }
    engines
}

/// Addresses the prefixes nest around: inside one /16 and one /18 slot
/// (2001:db8::), next to a /18 boundary (2001:4000::, and the /16 boundary
/// 2002::), in another /16 (2a00:1450::), and at both ends of the space.
const ANCHORS: [u128; 7] = [
    0x2001_0db8_0000_0000_0000_0000_0000_0000,
    0x2001_4000_0000_0000_0000_0000_0000_0000,
    0x2001_ffff_f000_0000_0000_0000_0000_0000,
    0x2002_0000_0000_0000_0000_0000_0000_0000,
    0x2a00_1450_0000_0000_0000_0000_0000_0000,
    0,
    u128::MAX,
];

/// Prefixes clustered around [`ANCHORS`] so that they nest and share
/// slots and cells, with lengths over 0..=128: short ones (below a direct
/// slot's 16 or 18 bits, across slots), around the slots' and cells' (16 to
/// 30), where routes are (31 to 64), long ones and /128s.
fn prefix() -> impl Strategy<Value = Prefix6> {
    let lengths = prop_oneof![1 => 0u8..=15, 2 => 16u8..=30, 3 => 31u8..=64, 1 => 65u8..=127, 1 => Just(128u8)];
    (prop::sample::select(ANCHORS.to_vec()), any::<u128>(), 0u32..100, lengths, any::<bool>()).prop_map(
        |(anchor, noise, shift, prefix_len, near)| {
            let addr = if near { anchor ^ (noise >> (18 + shift)) } else { noise };
            Prefix6::truncating(addr, prefix_len)
        },
    )
}

fn update() -> impl Strategy<Value = Update<Prefix6>> {
    prop_oneof![
        // Next hops mostly small, sometimes past 16-bit leaves (widening).
        4 => (prefix(), prop_oneof![6 => 1u32..=8, 3 => 1u32..=300, 1 => 1u32..=200_000])
            .prop_map(|(prefix, next_hop)| Update::Announce { prefix, value: label(next_hop) }),
        2 => prefix().prop_map(|prefix| Update::Withdraw { prefix }),
    ]
}

fn apply(rib: &mut Rib6, hops: &mut NextHopTable, update: &Update<Prefix6>) {
    match *update {
        Update::Announce { prefix, value } => {
            rib.insert(prefix, hops.intern(value));
        }
        Update::Withdraw { prefix } => {
            rib.remove(prefix);
        }
    }
}

/// Addresses near the anchors and anywhere.
fn random_addresses(seed: u64, count: usize) -> Vec<u128> {
    let mut rng = XorShift32::new(seed);
    let mut random = || u128::from(rng.next()) << 96 | u128::from(rng.next()) << 64 | u128::from(rng.next()) << 32;
    (0..count)
        .map(|index| {
            let noise = random();
            if index % 4 == 0 {
                noise
            } else {
                ANCHORS[index % ANCHORS.len()] ^ (noise >> (16 + index % 100))
            }
        })
        .collect()
}

/// `fib` answers as `rib` at both ends of every range and the addresses
/// around them, and at random addresses.
fn check_against(fib: &dyn Fib<u128>, rib: &Rib6, seed: u64) -> Result<(), TestCaseError> {
    for addr in common::probes(rib, random_addresses(seed, 256)) {
        prop_assert_eq!(fib.lookup(addr), rib.lookup(addr), "{} at {:#x}", fib.name(), addr);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Random update sequences applied incrementally, in random batches,
    /// give a FIB that answers as the RIB after every batch, and exactly as
    /// one built from scratch from the final RIB.
    #[test]
    fn ipv6_incremental_updates_match_a_fresh_build(
        initial in prop::collection::vec(update(), 0..150),
        updates in prop::collection::vec(update(), 1..120),
        cuts in prop::collection::vec(1usize..12, 1..40),
    ) {
        for (name, hops) in incremental_engines() {
            let mut router = Router::new(name, rib_from(&initial, hops), next_hops(hops), Window::Count(1)).unwrap();
            prop_assert!(router.incremental());
            let mut rest = &updates[..];
            let mut cut = cuts.iter().cycle();
            while !rest.is_empty() {
                let (batch, after) = rest.split_at((*cut.next().unwrap()).min(rest.len()));
                router.apply(batch).unwrap();
                check_against(router.reader().snapshot().fib(), router.rib(), batch.len() as u64)?;
                rest = after;
            }
            // Labels map onto next hops by value (`Mapping::Modulo`), in any order.
            let mut expected = rib_from(&initial, hops);
            let mut table = next_hops(hops);
            for update in &updates {
                apply(&mut expected, &mut table, update);
            }
            prop_assert_eq!(router.rib().ranges(0, u128::MAX), expected.ranges(0, u128::MAX));
            let fresh = registry::build(name, &expected, &BuildOptions::new(hops)).unwrap();
            let snapshot = router.reader().snapshot();
            let live = snapshot.fib();
            for addr in common::probes(&expected, random_addresses(99, 1000)) {
                prop_assert_eq!(live.lookup(addr), fresh.lookup(addr), "{} at {:#x}", name, addr);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// A default route, or another short prefix, flapping over many more
    /// specific routes: the updaters rewrite only the intervals no more
    /// specific route covers, keep the rest of each slot, block and node
    /// as the structure holds it, and answer as the RIB after every batch,
    /// with other updates in the announcing batch.
    #[test]
    fn ipv6_short_prefixes_flapping_over_more_specific_routes(
        table in prop::collection::vec(update(), 50..300),
        flapping in (
            prop_oneof![Just(0u8), 1u8..=15, 16u8..=28],
            prop_oneof![prop::sample::select(ANCHORS.to_vec()), any::<u128>()],
        ).prop_map(|(prefix_len, addr)| Prefix6::truncating(addr, prefix_len)),
        flaps in prop::collection::vec((1u32..=300, prop::collection::vec(update(), 0..4)), 1..6),
    ) {
        for (name, hops) in incremental_engines() {
            let mut router = Router::new(name, rib_from(&table, hops), next_hops(hops), Window::Count(1)).unwrap();
            for (round, (next_hop, others)) in flaps.iter().enumerate() {
                let mut batch = vec![Update::Announce { prefix: flapping, value: label(*next_hop) }];
                batch.extend(others.iter().copied());
                router.apply(&batch).unwrap();
                check_against(router.reader().snapshot().fib(), router.rib(), round as u64)?;
                router.apply(&[Update::Withdraw { prefix: flapping }]).unwrap();
                check_against(router.reader().snapshot().fib(), router.rib(), round as u64 + 100)?;
            }
        }
    }
}

/// The shared race of readers and writer ([`common::racing::stress`]),
/// and the engine updated in place throughout.
fn stress(engine: &str, rib: Rib6, hops: NextHopTable, batches: &[Vec<Update<Prefix6>>], readers: usize) -> u64 {
    let (lookups, router) = common::racing::stress(engine, rib, hops, batches, readers);
    assert!(router.incremental(), "{engine} updates IPv6 in place");
    assert_eq!(router.stats().full_rebuilds, 0, "{engine}: updated in place");
    lookups
}

/// Random batches of updates near [`ANCHORS`].
fn random_batches(count: usize, seed: u64) -> Vec<Vec<Update<Prefix6>>> {
    let mut rng = XorShift32::new(seed);
    (0..count)
        .map(|round| {
            (0..1 + rng.next() % 4)
                .map(|index| {
                    let anchor = ANCHORS[rng.next() as usize % ANCHORS.len()];
                    let prefix_len =
                        [0, 12, 16, 17, 20, 28, 32, 40, 48, 48, 56, 64, 100, 128][rng.next() as usize % 14];
                    let noise = u128::from(rng.next()) << 96 | u128::from(rng.next()) << 64 | u128::from(rng.next());
                    let prefix = Prefix6::truncating(anchor ^ (noise >> (18 + rng.next() % 60)), prefix_len);
                    if index > 0 && rng.next().is_multiple_of(3) {
                        Update::Withdraw { prefix }
                    } else {
                        Update::Announce { prefix, value: label(1000 + round as u32) }
                    }
                })
                .collect()
        })
        .collect()
}

#[test]
fn ipv6_readers_see_the_rib_before_or_after_the_batch_in_flight() {
    let initial: Vec<Update<Prefix6>> = random_batches(400, 5).into_iter().flatten().collect();
    let batches = random_batches(1500, 17);
    for (engine, hops) in incremental_engines() {
        let lookups = stress(engine, rib_from(&initial, hops), next_hops(hops), &batches, 2);
        eprintln!("{engine}: {lookups} racing lookups checked");
    }
}

/// Churn on a real table, seeded: each step picks a route of the table;
/// an announced one is withdrawn, or one time in three announced with
/// another value, a withdrawn one announced back with a new value. Values
/// are numbers past the table's own.
fn churn(rib: &Rib6, count: usize, seed: u64) -> Vec<Update<Prefix6>> {
    let routes: Vec<Prefix6> = rib.iter().map(|(prefix, _)| prefix).collect();
    let mut announced = vec![true; routes.len()];
    let mut rng = XorShift32::new(seed);
    (0..count)
        .map(|step| {
            let index = rng.next() as usize % routes.len();
            let prefix = routes[index];
            let value = Label::Number(1_000_000 + step as u64 % 5_000);
            if announced[index] && !rng.next().is_multiple_of(3) {
                announced[index] = false;
                Update::Withdraw { prefix }
            } else {
                announced[index] = true;
                Update::Announce { prefix, value }
            }
        })
        .collect()
}

/// `updates` applied to `table` in batches of 1 to 4 by each in-place
/// engine: the FIB answers as the RIB around every changed prefix after
/// each batch (every `check_every` batches), and as the RIB and a fresh
/// build everywhere at the end.
fn real_table(name: &str, table: &fibkit::load::RouteTable, updates: &[Update<Prefix6>], check_every: usize) {
    for (engine, _) in incremental_engines() {
        let mut router = Router::new(engine, table.v6.clone(), table.next_hops.clone(), Window::Count(1)).unwrap();
        let mut rng = XorShift32::new(3);
        let mut rest = updates;
        let mut batches = 0;
        while !rest.is_empty() {
            let (batch, after) = rest.split_at((1 + rng.next() as usize % 4).min(rest.len()));
            router.apply(batch).unwrap();
            batches += 1;
            if batches % check_every == 0 {
                let snapshot = router.reader().snapshot();
                for update in batch {
                    let prefix = update.prefix();
                    let mut addrs = vec![prefix.first(), prefix.last()];
                    addrs.extend(prefix.first().checked_sub(1));
                    addrs.extend(prefix.last().checked_add(1));
                    router.rib().for_each_range(prefix.first(), prefix.last(), |range| {
                        addrs.extend([range.first, range.last]);
                    });
                    for addr in addrs {
                        assert_eq!(snapshot.fib().lookup(addr), router.rib().lookup(addr), "{engine} at {addr:#x}");
                    }
                }
            }
            rest = after;
        }
        let stats = router.stats();
        assert_eq!(stats.full_rebuilds, 0, "{engine} on {name}: updated in place ({stats:?})");
        let snapshot = router.reader().snapshot();
        let checked = common::check_ipv6(engine, snapshot.fib(), router.rib(), 100_000);
        let options = BuildOptions::new(router.next_hops().max_index());
        let fresh = registry::build(engine, router.rib(), &options).unwrap();
        for addr in common::probes(router.rib(), random_addresses(7, 10_000)) {
            assert_eq!(snapshot.fib().lookup(addr), fresh.lookup(addr), "{engine} against a fresh build at {addr:#x}");
        }
        eprintln!(
            "{engine} on {name}: {} updates in {} publishes ({} relocations), {checked} boundaries checked",
            stats.updates, stats.publishes, stats.relocations
        );
    }
}

#[test]
fn ipv6_churn_on_the_linx_table() {
    let Some(table) = common::linx_ipv6() else { return };
    let updates = churn(&table.v6, 4_000, 11);
    real_table("the LINX IPv6 table", &table, &updates, 1);
}

#[test]
fn ipv6_churn_on_the_2026_table() {
    let Some(table) = common::ipdb_2026_ipv6(Mapping::Distinct) else { return };
    let updates = churn(&table.v6, 3_000, 13);
    real_table("the 2026 IPv6 table", &table, &updates, 1);
}

/// The 2026 table under 200,000 churn updates with readers racing the
/// writer (long: `--ignored`).
#[test]
#[ignore = "long: 200,000 updates on the 2026 table per engine, with racing readers"]
fn ipv6_long_churn_with_readers_on_the_2026_table() {
    let Some(table) = common::ipdb_2026_ipv6(Mapping::Distinct) else { return };
    let updates = churn(&table.v6, 200_000, 17);
    real_table("the 2026 IPv6 table", &table, &updates, 50);
    let batches: Vec<Vec<Update<Prefix6>>> =
        churn(&table.v6, 50_000, 19).into_iter().map(|update| vec![update]).collect();
    for (engine, _) in incremental_engines() {
        let lookups = stress(engine, table.v6.clone(), table.next_hops.clone(), &batches, 2);
        eprintln!("{engine}: {lookups} racing lookups on the 2026 table checked");
    }
}
