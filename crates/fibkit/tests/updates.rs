//! Live updates through the router: incremental FIBs answer exactly as
//! FIBs built from scratch, failed updates change nothing, and readers
//! racing a writer only ever see the RIB's answer before or after the batch
//! in flight.

mod common;

use common::model::{incremental_engines, label, next_hops, rib_from};

use common::racing::stress;

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;

use fibkit::addr::Prefix4;
use fibkit::fib::{BuildOptions, Fib};
use fibkit::live::{Applied, ApplyContext, Updater};
use fibkit::nexthop::{Label, Mapping, NextHopTable};
use fibkit::random::XorShift32;
use fibkit::registry;
use fibkit::rib::Rib4;
use fibkit::router::{Router, Update, UpdateError, Window};
use fibkit::BuildError;
use fibkit::NextHop;
use proptest::prelude::*;

/// Next hops up to this index are written as `Label::Number(hop - 1)`.
const HOPS: u32 = 4_000_000;

/// Prefixes clustered around a few anchors so that they nest and share
/// chunks, with lengths spread over 0..=32.
fn prefix() -> impl Strategy<Value = Prefix4> {
    let anchors = prop::sample::select(vec![0x0a00_0000u32, 0x0a01_0000, 0x0a02_0000, 0xc0a8_0000, 0, u32::MAX]);
    (anchors, any::<u32>(), prop_oneof![1 => 0u8..=15, 4 => 16u8..=32], any::<bool>()).prop_map(
        |(anchor, noise, prefix_len, near)| {
            let addr = if near { anchor ^ (noise & 0x3ffff) } else { noise };
            Prefix4::truncating(addr, prefix_len)
        },
    )
}

fn update() -> impl Strategy<Value = Update<Prefix4>> {
    prop_oneof![
        // Next hops mostly small (short and long DXR chunks), sometimes wide.
        4 => (prefix(), prop_oneof![6 => 1u32..=8, 3 => 1u32..=300, 1 => 1u32..=200_000])
            .prop_map(|(prefix, next_hop)| Update::Announce { prefix, value: label(next_hop) }),
        2 => prefix().prop_map(|prefix| Update::Withdraw { prefix }),
    ]
}

/// `fib` answers as `rib` at every range boundary and at random addresses.
fn check_against(fib: &dyn Fib<u32>, rib: &Rib4, seed: u64) -> Result<(), TestCaseError> {
    for range in rib.ranges(0, u32::MAX) {
        for addr in [range.first, range.last] {
            prop_assert_eq!(fib.lookup(addr), range.next_hop, "{} at {:#010x}", fib.name(), addr);
        }
    }
    let mut rng = XorShift32::new(seed);
    for _ in 0..256 {
        let addr = rng.next();
        prop_assert_eq!(fib.lookup(addr), rib.lookup(addr), "{} at {:#010x}", fib.name(), addr);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Random update sequences applied incrementally, in random batches,
    /// give a FIB that answers exactly as one built from scratch from the
    /// final RIB (and as the RIB after every batch).
    #[test]
    fn incremental_updates_match_a_fresh_build(
        initial in prop::collection::vec(update(), 0..150),
        updates in prop::collection::vec(update(), 1..120),
        cuts in prop::collection::vec(1usize..12, 1..40),
    ) {
        for (name, hops) in incremental_engines::<u32>(HOPS) {
            let mut router = Router::new(name, rib_from(&initial, hops), next_hops(hops), Window::Count(1)).unwrap();
            let mut rest = &updates[..];
            let mut cut = cuts.iter().cycle();
            while !rest.is_empty() {
                let (batch, after) = rest.split_at((*cut.next().unwrap()).min(rest.len()));
                router.apply(batch).unwrap();
                check_against(router.reader().snapshot().fib(), router.rib(), batch.len() as u64)?;
                rest = after;
            }
            let mut expected = rib_from(&initial, hops);
            let max_next_hop = hops;
            let mut hops = next_hops(hops);
            for update in &updates {
                match *update {
                    Update::Announce { prefix, value } => { expected.insert(prefix, hops.intern(value)); }
                    Update::Withdraw { prefix } => { expected.remove(prefix); }
                }
            }
            prop_assert_eq!(router.rib().ranges(0, u32::MAX), expected.ranges(0, u32::MAX));
            let fresh = registry::build(name, &expected, &BuildOptions::new(max_next_hop)).unwrap();
            let snapshot = router.reader().snapshot();
            let live = snapshot.fib();
            let mut rng = XorShift32::new(99);
            let boundaries = expected.ranges(0, u32::MAX).into_iter().flat_map(|range| [range.first, range.last]);
            for addr in boundaries.chain((0..1000).map(|_| rng.next())) {
                prop_assert_eq!(live.lookup(addr), fresh.lookup(addr), "{} at {:#010x}", name, addr);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// A default route, or another short prefix, flapping over many more
    /// specific routes: the updaters rewrite only the intervals no more
    /// specific route covers (`fibkit::live::changed_spans`), read back the
    /// rest of each chunk, slot or block from the structure, and answer as
    /// the RIB after every batch, with other updates in the announcing
    /// batch and with the prefix's own more specifics changing under it.
    #[test]
    fn short_prefixes_flapping_over_more_specific_routes(
        table in prop::collection::vec(update(), 50..300),
        flapping in (
            prop_oneof![Just(0u8), 1u8..=8, 9u8..=16],
            prop_oneof![prop::sample::select(vec![0x0a00_0000u32, 0xc0a8_0000, 0, u32::MAX]), any::<u32>()],
        ).prop_map(|(prefix_len, addr)| Prefix4::truncating(addr, prefix_len)),
        flaps in prop::collection::vec((1u32..=300, prop::collection::vec(update(), 0..4)), 1..6),
    ) {
        for (name, hops) in incremental_engines::<u32>(HOPS) {
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

/// Wraps an updater and fails every batch that changes a route of the
/// prefix length in `poison` (none when it is above 32), before touching
/// anything (as the contract asks of a failing engine): an engine that can
/// take some updates and not others.
struct Flaky {
    inner: Box<dyn Updater<u32>>,
    poison: Arc<AtomicU8>,
}

impl Updater<u32> for Flaky {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn fib(&self) -> Arc<dyn Fib<u32>> {
        self.inner.fib()
    }
    fn max_next_hop(&self) -> NextHop {
        self.inner.max_next_hop()
    }
    fn incremental(&self) -> bool {
        self.inner.incremental()
    }
    fn apply(&mut self, rib: &Rib4, changed: &[Prefix4], context: ApplyContext) -> Result<Applied, BuildError> {
        let poison = self.poison.load(Ordering::Relaxed);
        if changed.iter().any(|prefix| prefix.prefix_len() == poison) {
            let engine = self.name().to_string();
            return Err(BuildError::Route {
                engine,
                route: format!("{} changes", changed.len()),
                problem: "injected failure",
            });
        }
        self.inner.apply(rib, changed, context)
    }
}

/// A batch of the model test: updates, perhaps one with a next hop beyond
/// DXR's 2^22 - 1, and perhaps a prefix length the engine fails on.
#[derive(Clone, Debug)]
struct Step {
    updates: Vec<Update<Prefix4>>,
    overflow_at: Option<usize>,
    poison: u8,
}

fn step() -> impl Strategy<Value = Step> {
    (
        prop::collection::vec(update(), 1..6),
        prop_oneof![4 => Just(false), 1 => Just(true)],
        prop_oneof![3 => Just(false), 1 => Just(true)],
        prefix(),
    )
        .prop_map(|(mut updates, overflow, engine_fails, prefix)| {
            // The engine fails on the length of the batch's first prefix.
            let poison = if engine_fails { updates[0].prefix().prefix_len() } else { u8::MAX };
            let overflow_at = overflow.then(|| {
                let at = updates.len() / 2;
                updates.insert(at, Update::Announce { prefix, value: Label::Number(u64::from(1u32 << 22) + 5) });
                at
            });
            Step { updates, overflow_at, poison }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Model-based: in a batch that mixes valid updates with one whose next
    /// hop the engine cannot hold and with updates the engine fails on,
    /// each invalid update is rejected alone, saying why, and every valid
    /// one lands: the RIB and every answer of the serving FIB are the
    /// model's, which applies the batch in order without the invalid ones.
    #[test]
    fn failed_updates_take_no_valid_update_with_them(
        initial in prop::collection::vec(update(), 0..100),
        steps in prop::collection::vec(step(), 1..25),
    ) {
        let mut model = rib_from(&initial, HOPS);
        let poison = Arc::new(AtomicU8::new(u8::MAX));
        let inner = registry::updater("d16r", &model, &BuildOptions::new(HOPS)).unwrap();
        let flaky = Flaky { inner, poison: poison.clone() };
        let mut router = Router::with_updater(Box::new(flaky), model.clone(), NextHopTable::new(Mapping::Modulo(u32::MAX)), Window::Count(1));
        let mut hops = NextHopTable::new(Mapping::Modulo(u32::MAX));
        let mut rejected_in_all = 0;
        for step in &steps {
            poison.store(step.poison, Ordering::Relaxed);
            let mut expected_rejections = 0;
            for (index, update) in step.updates.iter().enumerate() {
                if Some(index) == step.overflow_at {
                    expected_rejections += 1;
                    continue;
                }
                let mut probe = model.clone();
                match *update {
                    Update::Announce { prefix, value } => { probe.insert(prefix, hops.intern(value)); }
                    Update::Withdraw { prefix } => { probe.remove(prefix); }
                }
                let changes = probe.get(update.prefix()) != model.get(update.prefix());
                if changes && update.prefix().prefix_len() == step.poison {
                    expected_rejections += 1;
                } else {
                    model = probe;
                }
            }
            rejected_in_all += expected_rejections;
            match router.apply(&step.updates) {
                Ok(published) => {
                    prop_assert_eq!(published.rejected.len(), expected_rejections, "{:?}", published.rejected);
                    prop_assert!(expected_rejections < step.updates.len());
                    for error in &published.rejected {
                        match error {
                            UpdateError::NextHopOverflow { index, .. } => {
                                prop_assert_eq!(Some(*index), step.overflow_at);
                                prop_assert!(error.to_string().contains("exceeds the 4194303 that d16r holds"), "{}", error);
                            }
                            UpdateError::Engine { .. } => prop_assert!(error.to_string().contains("injected failure; rejected"), "{}", error),
                            UpdateError::Ipv4Mapped { .. } => prop_assert!(false, "an IPv4 route is never IPv4-mapped: {}", error),
                        }
                    }
                }
                Err(error) => prop_assert_eq!(expected_rejections, step.updates.len(), "{}", error),
            }
            prop_assert_eq!(router.rib().ranges(0, u32::MAX), model.ranges(0, u32::MAX));
            check_against(router.reader().snapshot().fib(), &model, steps.len() as u64)?;
        }
        prop_assert_eq!(router.stats().rejected as usize, rejected_in_all);
    }
}

#[test]
fn submitted_updates_publish_when_the_window_closes() {
    let mut router = Router::new("d16r", Rib4::new(), next_hops(HOPS), Window::Count(3)).unwrap();
    let reader = router.reader();
    let prefix = |text: &str| text.parse::<Prefix4>().unwrap();
    assert_eq!(router.submit(Update::Announce { prefix: prefix("10.0.0.0/8"), value: label(1) }).unwrap(), None);
    assert_eq!(router.submit(Update::Announce { prefix: prefix("10.1.0.0/16"), value: label(2) }).unwrap(), None);
    assert_eq!(reader.lookup(0x0a01_0000), 0, "nothing published yet");
    let published = router.submit(Update::Withdraw { prefix: prefix("10.0.0.0/8") }).unwrap().unwrap();
    assert_eq!((published.generation, published.updates, published.changed), (1, 3, 3));
    assert_eq!(reader.lookup(0x0a01_0000), 2);
    assert_eq!(reader.lookup(0x0a02_0000), 0);
    // An invalid update is refused alone; the queue keeps the others.
    let mut wide =
        Router::new("d16r", Rib4::new(), NextHopTable::new(Mapping::Modulo(u32::MAX)), Window::Count(2)).unwrap();
    assert_eq!(wide.submit(Update::Announce { prefix: prefix("10.0.0.0/8"), value: Label::Number(7) }).unwrap(), None);
    assert!(wide.submit(Update::Announce { prefix: prefix("11.0.0.0/8"), value: Label::Number(1 << 23) }).is_err());
    assert_eq!(wide.queued(), 1);
    assert_eq!(wide.flush().unwrap().unwrap().changed, 1);
    assert_eq!(wide.reader().lookup(0x0a00_0000), 8);
    // A time window publishes at the first poll after it expires.
    let mut timed =
        Router::new("d16r", Rib4::new(), next_hops(HOPS), Window::Time(std::time::Duration::from_millis(20))).unwrap();
    assert_eq!(timed.submit(Update::Announce { prefix: prefix("10.0.0.0/8"), value: label(4) }).unwrap(), None);
    while timed.poll().unwrap().is_none() {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    assert_eq!(timed.reader().lookup(0x0a00_0000), 4);
}

/// Random batches of updates near the anchors of [`prefix`].
fn random_batches(count: usize, seed: u32) -> Vec<Vec<Update<Prefix4>>> {
    let mut rng = XorShift32::new(u64::from(seed));
    let anchors = [0x0a00_0000u32, 0x0a01_0000, 0x0a02_0000, 0xc0a8_0000];
    (0..count)
        .map(|_| {
            (0..1 + rng.next() % 4)
                .map(|_| {
                    let anchor = anchors[rng.next() as usize % anchors.len()];
                    let prefix_len = [8, 12, 16, 20, 22, 24, 24, 25, 28, 32][rng.next() as usize % 10];
                    let prefix = Prefix4::truncating(anchor ^ (rng.next() & 0x3ffff), prefix_len);
                    if rng.next().is_multiple_of(3) {
                        Update::Withdraw { prefix }
                    } else {
                        Update::Announce { prefix, value: label(1 + rng.next() % 300) }
                    }
                })
                .collect()
        })
        .collect()
}

#[test]
fn readers_see_the_rib_before_or_after_the_batch_in_flight() {
    let initial: Vec<Update<Prefix4>> = random_batches(400, 5).into_iter().flatten().collect();
    for (engine, hops) in incremental_engines::<u32>(HOPS).into_iter().chain([("radix", HOPS)]) {
        let batches = random_batches(if engine == "radix" { 300 } else { 1500 }, 17);
        let (lookups, _) = stress(engine, rib_from(&initial, hops), next_hops(hops), &batches, 2);
        eprintln!("{engine}: {lookups} racing lookups checked");
    }
}

#[test]
fn readers_racing_the_real_trace_on_the_2014_table() {
    let (Some(table), Some(updates)) =
        (common::routeviews_2014(Mapping::Modulo(239)), common::linx_trace(Mapping::Modulo(239)))
    else {
        return;
    };
    for engine in ["d16r", "d20r", "poptrie18", "dir24-8", "sail-runs"] {
        let batches: Vec<Vec<Update<Prefix4>>> = updates.chunks(4).map(<[Update<Prefix4>]>::to_vec).collect();
        let (lookups, _) = stress(engine, table.v4.clone(), table.next_hops.clone(), &batches, 1);
        eprintln!("{engine}: {lookups} racing lookups on the 2014 table checked");
    }
}

/// A bug found by `readers_racing_the_real_trace_on_the_2014_table` (about
/// one run in ten): DXR's batch lookup loads a chunk's direct entry in its
/// direct stage, then loads it again one group later for the range search.
/// An update in between may have made the chunk direct-resolved, and the
/// second entry was range-searched all the same (and loaded `Relaxed`, not
/// `Acquire`), reading some other chunk's fragments. Here a writer flips one
/// chunk between direct-resolved and ranged as fast as it can while readers
/// batch-look-up keys of that chunk; other chunks' fragments carry next
/// hops no key of the flipping chunk may get.
#[test]
fn batch_lookups_race_a_chunk_flipping_between_direct_and_ranged() {
    let p = |text: &str| text.parse::<Prefix4>().unwrap();
    for engine in ["d16r", "d20r"] {
        let mut hops = next_hops(HOPS);
        let mut rib = Rib4::new();
        // Ranged chunks stored first, at the low bases of the range tables.
        for (index, block) in ["20.0.0.0/16", "20.1.0.0/16", "20.2.0.0/16"].iter().enumerate() {
            rib.insert(p(block), hops.intern(label(7)));
            rib.insert(Prefix4::new(p(block).addr() | 0x100 << index, 24).unwrap(), hops.intern(label(8)));
        }
        rib.insert(p("10.1.0.0/16"), hops.intern(label(1)));
        let flipping = p("10.1.2.0/24");
        let mut router = Router::new(engine, rib, hops, Window::Count(1)).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let readers: Vec<_> = (0..2u64)
            .map(|seed| {
                let (reader, stop) = (router.reader(), stop.clone());
                std::thread::spawn(move || {
                    let mut rng = XorShift32::new(seed + 1);
                    let mut keys = [0u32; 256];
                    let mut out = [0; 256];
                    let mut wrong = Vec::new();
                    while !stop.load(Ordering::Relaxed) && wrong.len() < 10 {
                        // Keys in the flipping chunk (10.1.0.0/20 holds it
                        // whole for K up to 20).
                        keys.iter_mut().for_each(|key| *key = 0x0a01_0000 | (rng.next() & 0x0fff));
                        reader.lookup_batch(&keys, &mut out);
                        for (&key, &answer) in keys.iter().zip(&out) {
                            let allowed = answer == 1 || (answer == 2 && flipping.contains(key));
                            if !allowed {
                                wrong.push((key, answer));
                            }
                        }
                    }
                    wrong
                })
            })
            .collect();
        for _ in 0..20_000 {
            router.announce(flipping, label(2)).unwrap();
            router.withdraw(flipping).unwrap();
        }
        stop.store(true, Ordering::Relaxed);
        for reader in readers {
            let wrong = reader.join().unwrap();
            assert!(wrong.is_empty(), "{engine}: wrong answers (address, answer): {wrong:x?}");
        }
    }
}
