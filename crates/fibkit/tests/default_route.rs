//! The default route kept aside from the in-place structures
//! (`fibkit::live::WithDefault`, the router's "The default route"): every
//! engine updated in place, of both families, answers as the RIB after
//! batches that announce, change and withdraw the default route among
//! other updates, and as a FIB built from scratch; a default route alone
//! rewrites nothing of the table; readers racing such batches see the RIB
//! before or after the batch in flight; compiled files keep the default
//! route in their structure and answer it.

mod common;

use common::model::{incremental_engines, label, next_hops, rib_from};

use common::racing::stress;

use fibkit::addr::{Address, Prefix, Prefix4, Prefix6};
use fibkit::compiled::{CompileOptions, CompiledTable};
use fibkit::file::Problem;
use fibkit::load::RouteTable;
use fibkit::nexthop::{Label, Mapping};
use fibkit::random::XorShift32;
use fibkit::registry;
use fibkit::router::{Router, Update, Window};
use fibkit::{BuildOptions, Family, Fib, Rib, NO_ROUTE};
use proptest::prelude::*;

/// Next hops up to this index are written as `Label::Number(hop - 1)`.
const HOPS: u32 = 4_000_000;

/// `fib` answers as `rib` at both ends of every range.
fn check_against<A: Address>(fib: &dyn Fib<A>, rib: &Rib<A>, when: &str) -> Result<(), TestCaseError> {
    for range in rib.ranges(A::ZERO, A::MAX) {
        for addr in [range.first, range.last] {
            prop_assert_eq!(fib.lookup(addr), range.next_hop, "{} {} at {}", fib.name(), when, addr.display());
        }
    }
    Ok(())
}

/// Prefixes around a few anchors (`anchor` gives one from a choice and
/// noise), so that they nest and share chunks, of lengths up to the
/// family's; the default route often.
fn prefix<A: Address>(anchor: impl Fn(u8, u128) -> A + Clone + 'static) -> impl Strategy<Value = Prefix<A>> {
    let bits = A::BITS;
    let length = prop_oneof![1 => Just(0u8), 1 => 1u8..=15, 4 => 16u8..=bits];
    (any::<u8>(), any::<u128>(), length)
        .prop_map(move |(choice, noise, prefix_len)| Prefix::truncating(anchor(choice, noise), prefix_len))
}

fn update<A: Address>(anchor: impl Fn(u8, u128) -> A + Clone + 'static) -> impl Strategy<Value = Update<Prefix<A>>> {
    prop_oneof![
        4 => (prefix(anchor.clone()), prop_oneof![6 => 1u32..=8, 3 => 1u32..=300, 1 => 1u32..=200_000])
            .prop_map(|(prefix, next_hop)| Update::Announce { prefix, value: label(next_hop) }),
        2 => prefix(anchor).prop_map(|prefix| Update::Withdraw { prefix }),
        // The default route, announced with one of a few next hops (so
        // that it changes, and is sometimes announced again unchanged) or
        // withdrawn.
        2 => (1u32..=4).prop_map(|next_hop| Update::Announce { prefix: Prefix::default_route(), value: label(next_hop) }),
        1 => Just(Update::Withdraw { prefix: Prefix::default_route() }),
    ]
}

fn anchor4(choice: u8, noise: u128) -> u32 {
    let anchors = [0x0a00_0000u32, 0x0a01_0000, 0xc0a8_0000, 0, u32::MAX];
    let noise = noise as u32;
    if choice.is_multiple_of(4) {
        noise
    } else {
        anchors[usize::from(choice) % anchors.len()] ^ (noise & 0x3ffff)
    }
}

fn anchor6(choice: u8, noise: u128) -> u128 {
    let anchors = [0x2001_0db8u128 << 96, 0x2001_4000u128 << 96, 0x2a00_1450u128 << 96, 0, u128::MAX];
    if choice.is_multiple_of(4) {
        noise
    } else {
        anchors[usize::from(choice) % anchors.len()] ^ (noise & ((1 << 90) - 1))
    }
}

/// The router of every in-place engine over `initial` takes `updates` in
/// batches cut by `cuts`, answering as the RIB after each, and ends as a
/// FIB built from scratch.
fn mixed_batches<A: Address>(
    initial: &[Update<Prefix<A>>],
    updates: &[Update<Prefix<A>>],
    cuts: &[usize],
) -> Result<(), TestCaseError> {
    for (name, hops) in incremental_engines::<A>(HOPS) {
        let mut router = Router::new(name, rib_from(initial, hops), next_hops(hops), Window::Count(1)).unwrap();
        check_against(router.reader().snapshot().fib(), router.rib(), "built")?;
        let mut rest = updates;
        let mut cut = cuts.iter().cycle();
        let mut round = 0;
        while !rest.is_empty() {
            let (batch, after) = rest.split_at((*cut.next().unwrap()).min(rest.len()));
            router.apply(batch).unwrap();
            check_against(router.reader().snapshot().fib(), router.rib(), &format!("after batch {round}"))?;
            (rest, round) = (after, round + 1);
        }
        let all: Vec<Update<Prefix<A>>> = initial.iter().chain(updates).copied().collect();
        let expected = rib_from(&all, hops);
        prop_assert_eq!(router.rib().ranges(A::ZERO, A::MAX), expected.ranges(A::ZERO, A::MAX));
        let fresh = registry::build(name, &expected, &BuildOptions::new(hops)).unwrap();
        let snapshot = router.reader().snapshot();
        for range in expected.ranges(A::ZERO, A::MAX) {
            for addr in [range.first, range.last] {
                prop_assert_eq!(snapshot.fib().lookup(addr), fresh.lookup(addr), "{} at {}", name, addr.display());
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// IPv4: the default route announced, changed and withdrawn in
    /// batches with other updates (and in the table the router starts
    /// from, or not).
    #[test]
    fn ipv4_default_route_mixed_with_other_updates(
        initial in prop::collection::vec(update(anchor4), 0..150),
        updates in prop::collection::vec(update(anchor4), 1..120),
        cuts in prop::collection::vec(1usize..8, 1..40),
    ) {
        mixed_batches::<u32>(&initial, &updates, &cuts)?;
    }

    /// IPv6: the same.
    #[test]
    fn ipv6_default_route_mixed_with_other_updates(
        initial in prop::collection::vec(update(anchor6), 0..150),
        updates in prop::collection::vec(update(anchor6), 1..120),
        cuts in prop::collection::vec(1usize..8, 1..40),
    ) {
        mixed_batches::<u128>(&initial, &updates, &cuts)?;
    }
}

/// A table of `count` routes over the family's space (IPv6: 2000::/3),
/// lengths 8 to 32 (IPv4) or 16 to 64 (IPv6), next hops 1 to 200.
fn table<A: Address>(count: usize) -> Vec<Update<Prefix<A>>> {
    let mut rng = XorShift32::new(5);
    (0..count)
        .map(|_| {
            let hop = 1 + rng.next() % 200;
            let mut first = A::BITS == 128;
            let addr = A::from_words(|| {
                let word = rng.next();
                if std::mem::take(&mut first) {
                    word >> 3 | 0x2000_0000
                } else {
                    word
                }
            });
            let prefix_len = if A::BITS == 32 { 8 + (rng.next() % 25) as u8 } else { 16 + (rng.next() % 49) as u8 };
            Update::Announce { prefix: Prefix::truncating(addr, prefix_len), value: label(hop) }
        })
        .collect()
}

/// Under a table of thousands of routes, the default route announced,
/// changed, withdrawn and announced back, each alone: one word stored
/// (8 bytes), no rebuild and no relocation, and the RIB's answers.
fn flaps_store_one_word<A: Address>() {
    for (name, hops) in incremental_engines::<A>(HOPS) {
        let mut router =
            Router::new(name, rib_from(&table::<A>(4000), hops), next_hops(hops), Window::Count(1)).unwrap();
        let default = Prefix::<A>::default_route();
        let flaps = [
            Update::Announce { prefix: default, value: label(7) },
            Update::Announce { prefix: default, value: label(9) },
            Update::Withdraw { prefix: default },
            Update::Announce { prefix: default, value: label(7) },
        ];
        for (index, update) in flaps.iter().enumerate() {
            let published = router.apply(&[*update]).unwrap();
            assert_eq!(
                (published.bytes_written, published.rebuilt, published.relocated),
                (8, false, false),
                "{name}: flap {index} ({update})"
            );
            check_against(router.reader().snapshot().fib(), router.rib(), &format!("after flap {index}")).unwrap();
        }
    }
}

#[test]
fn ipv4_default_route_flaps_store_one_word() {
    flaps_store_one_word::<u32>();
}

#[test]
fn ipv6_default_route_flaps_store_one_word() {
    flaps_store_one_word::<u128>();
}

/// Random batches near the anchors, a third of them changing the default
/// route too (announced with one of three next hops, or withdrawn) among
/// announcements and withdrawals of other prefixes.
fn batches_with_the_default_route(count: usize, seed: u64) -> Vec<Vec<Update<Prefix4>>> {
    let mut rng = XorShift32::new(seed);
    let anchors = [0x0a00_0000u32, 0x0a01_0000, 0xc0a8_0000];
    (0..count)
        .map(|_| {
            let mut batch: Vec<Update<Prefix4>> = (0..1 + rng.next() % 4)
                .map(|_| {
                    let anchor = anchors[rng.next() as usize % anchors.len()];
                    let prefix_len = [8, 12, 16, 20, 24, 24, 25, 28, 32][rng.next() as usize % 9];
                    let prefix = Prefix4::truncating(anchor ^ (rng.next() & 0x3ffff), prefix_len);
                    if rng.next().is_multiple_of(2) {
                        Update::Withdraw { prefix }
                    } else {
                        Update::Announce { prefix, value: label(10 + rng.next() % 300) }
                    }
                })
                .collect();
            if rng.next().is_multiple_of(3) {
                let default = Prefix4::default_route();
                let at = rng.next() as usize % (batch.len() + 1);
                let update = match rng.next() % 4 {
                    0 => Update::Withdraw { prefix: default },
                    hop => Update::Announce { prefix: default, value: label(hop) },
                };
                batch.insert(at, update);
            }
            batch
        })
        .collect()
}

/// Readers racing batches that change the default route among other
/// routes only ever see, for each address, the RIB before or after a batch
/// in flight (the three steps of such a batch: its announcements, the
/// default, its withdrawals).
#[test]
fn readers_racing_default_route_changes_see_the_rib_before_or_after() {
    let initial: Vec<Update<Prefix4>> = batches_with_the_default_route(300, 3).into_iter().flatten().collect();
    for (engine, hops) in incremental_engines::<u32>(HOPS) {
        let batches = batches_with_the_default_route(1200, 11);
        let (lookups, router) = stress(engine, rib_from(&initial, hops), next_hops(hops), &batches, 2);
        eprintln!("{engine}: {lookups} racing lookups checked");
        check_against(router.reader().snapshot().fib(), router.rib(), "at the end").unwrap();
    }
}

/// Compiled files keep the default route in their structure: every
/// savable engine's file of a table with a default route answers it where
/// no other route does. A live FIB holding a default aside refuses to be
/// saved, naming why; without one it saves.
#[test]
fn compiled_files_answer_the_default_route() {
    let mut table = RouteTable::new("with a default route", Mapping::Distinct);
    let hop = table.next_hops.intern(Label::Number(64_512));
    let other = table.next_hops.intern(Label::Number(64_513));
    table.v4.insert(Prefix4::default_route(), hop);
    table.v4.insert("10.0.0.0/8".parse().unwrap(), other);
    table.v6.insert(Prefix6::default_route(), hop);
    table.v6.insert("2001:db8::/32".parse().unwrap(), other);
    let directory = tempfile::tempdir().unwrap();
    for family in [Family::Ipv4, Family::Ipv6] {
        for engine in registry::engines_of(family) {
            if !engine.savable::<u32>() && !engine.savable::<u128>() {
                continue;
            }
            let mut copy = RouteTable::new(&table.name, table.next_hops.mapping());
            (copy.v4, copy.v6, copy.next_hops) = (table.v4.clone(), table.v6.clone(), table.next_hops.clone());
            let options =
                CompileOptions { engines: vec![engine.name.to_string()], prefixes: false, ..Default::default() };
            let compiled = CompiledTable::build(copy, &options).unwrap();
            let path = directory.path().join(format!("{}.fib", engine.name));
            compiled.to_file().unwrap().write(&path).unwrap();
            let opened = CompiledTable::open(&path).unwrap();
            if let Some(v4) = opened.family_fib::<u32>().filter(|v4| v4.fib().name() == engine.name) {
                assert_eq!(
                    (v4.fib().lookup(0x0b00_0001), v4.fib().lookup(0x0a00_0001)),
                    (hop, other),
                    "{}",
                    engine.name
                );
            }
            if let Some(v6) = opened.family_fib::<u128>().filter(|v6| v6.fib().name() == engine.name) {
                let (outside, inside) = (0x2a00u128 << 112, 0x2001_0db8u128 << 96 | 1);
                assert_eq!((v6.fib().lookup(outside), v6.fib().lookup(inside)), (hop, other), "{}", engine.name);
            }
        }
    }
    let mut router = Router::new("d16r", table.v4.clone(), table.next_hops.clone(), Window::Count(1)).unwrap();
    let snapshot = router.reader().snapshot();
    let refused = snapshot.fib().save(&mut fibkit::file::FileWriter::new().family::<u32>()).unwrap_err();
    assert!(matches!(refused, Problem::DefaultAside { .. }), "{refused}");
    drop(snapshot);
    router.withdraw(Prefix4::default_route()).unwrap();
    assert_eq!(router.reader().lookup(0x0b00_0001), NO_ROUTE);
    let snapshot = router.reader().snapshot();
    snapshot.fib().save(&mut fibkit::file::FileWriter::new().family::<u32>()).unwrap();
}
