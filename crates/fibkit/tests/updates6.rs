//! IPv6 through the router (`Router<u128>`): an engine rebuilt per batch
//! and published whole answers, in a reader's snapshot of generation `g`,
//! exactly as the RIB after the `g`-th publishing batch; the engines that
//! update IPv6 in place (Poptrie 16 and 18, `poptrie16x12`) answer as the
//! RIB after every batch and as a fresh build, and readers racing them see
//! only the RIB's answer before or after a batch in flight: those are
//! tested in `updates6_live.rs`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use fibkit::addr::Prefix6;
use fibkit::nexthop::{Label, Mapping, NextHopTable};
use fibkit::random::XorShift32;
use fibkit::rib::Rib6;
use fibkit::router::{Router, Update, UpdateError, Window};
use fibkit::NextHop;

const ANCHORS: [u128; 3] = [
    0x2001_0db8_0000_0000_0000_0000_0000_0000,
    0x2001_0db8_0001_0000_0000_0000_0000_0000,
    0x2a00_1450_0000_0000_0000_0000_0000_0000,
];

fn random_prefix(rng: &mut XorShift32) -> Prefix6 {
    let anchor = ANCHORS[rng.next() as usize % ANCHORS.len()];
    let prefix_len = [0, 16, 29, 32, 40, 48, 48, 56, 64, 96, 128][rng.next() as usize % 11];
    let noise =
        (u128::from(rng.next()) << 64 | u128::from(rng.next()) << 16) & 0x0000_0000_ffff_ffff_ffff_ffff_ffff_ffff;
    Prefix6::truncating(anchor ^ (noise >> (rng.next() % 48)), prefix_len)
}

fn random_batches(count: usize, seed: u64) -> Vec<Vec<Update<Prefix6>>> {
    let mut rng = XorShift32::new(seed);
    (0..count)
        .map(|_| {
            (0..1 + rng.next() % 3)
                .map(|_| {
                    let prefix = random_prefix(&mut rng);
                    if rng.next().is_multiple_of(3) {
                        Update::Withdraw { prefix }
                    } else {
                        Update::Announce { prefix, value: Label::Number(u64::from(rng.next() % 50)) }
                    }
                })
                .collect()
        })
        .collect()
}

/// Probe addresses: the edges of every prefix the batches touch, and
/// their neighbours.
fn probes(batches: &[Vec<Update<Prefix6>>]) -> Vec<u128> {
    let mut probes: Vec<u128> = batches
        .iter()
        .flatten()
        .flat_map(|update| {
            let prefix = update.prefix();
            [Some(prefix.first()), Some(prefix.last()), prefix.first().checked_sub(1), prefix.last().checked_add(1)]
        })
        .flatten()
        .collect();
    probes.sort_unstable();
    probes.dedup();
    probes
}

/// The answers at `probes` of the RIB as each generation publishes it
/// (batches that change no route publish nothing).
fn expected(
    rib: &Rib6,
    next_hops: &NextHopTable,
    batches: &[Vec<Update<Prefix6>>],
    probes: &[u128],
) -> Vec<Vec<NextHop>> {
    let (mut rib, mut next_hops) = (rib.clone(), next_hops.clone());
    let answers = |rib: &Rib6| probes.iter().map(|&addr| rib.lookup(addr)).collect::<Vec<_>>();
    let mut generations = vec![answers(&rib)];
    for batch in batches {
        let mut changed = false;
        for update in batch {
            changed |= match *update {
                Update::Announce { prefix, value: label } => {
                    let next_hop = next_hops.intern(label);
                    rib.insert(prefix, next_hop) != Some(next_hop)
                }
                Update::Withdraw { prefix } => rib.remove(prefix).is_some(),
            };
        }
        if changed {
            generations.push(answers(&rib));
        }
    }
    generations
}

#[test]
fn ipv6_readers_see_exactly_the_generation_they_hold() {
    let mut rng = XorShift32::new(3);
    let mut next_hops = NextHopTable::new(Mapping::Modulo(1000));
    let mut rib = Rib6::new();
    for _ in 0..200 {
        let prefix = random_prefix(&mut rng);
        rib.insert(prefix, next_hops.intern(Label::Number(u64::from(rng.next() % 50))));
    }
    let batches = random_batches(400, 21);
    let probes = Arc::new(probes(&batches));
    let expected = Arc::new(expected(&rib, &next_hops, &batches, &probes));
    for engine in ["poptrie0", "d16r6", "radix"] {
        let mut router = Router::new(engine, rib.clone(), next_hops.clone(), Window::Count(1)).unwrap();
        assert!(!router.incremental(), "{engine} is rebuilt per batch");
        let stop = Arc::new(AtomicBool::new(false));
        let checked = Arc::new(AtomicU64::new(0));
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let (reader, stop, checked) = (router.reader(), stop.clone(), checked.clone());
                let (probes, expected) = (probes.clone(), expected.clone());
                std::thread::spawn(move || {
                    let mut out = vec![0; probes.len()];
                    loop {
                        // Read the flag first: the last round runs after the
                        // writer's last publish.
                        let stopping = stop.load(Ordering::Acquire);
                        let snapshot = reader.snapshot();
                        let want = &expected[snapshot.generation() as usize];
                        snapshot.fib().lookup_batch(&probes, &mut out);
                        for (index, (&got, &want)) in out.iter().zip(want).enumerate() {
                            assert_eq!(got, want, "generation {} at {:#x}", snapshot.generation(), probes[index]);
                        }
                        checked.fetch_add(probes.len() as u64, Ordering::Relaxed);
                        if stopping {
                            return;
                        }
                    }
                })
            })
            .collect();
        for batch in &batches {
            router.apply(batch).unwrap();
        }
        assert_eq!(router.generation() as usize, expected.len() - 1, "{engine}: one generation per changing batch");
        assert_eq!(router.stats().full_rebuilds, router.stats().publishes);
        stop.store(true, Ordering::Release);
        for reader in readers {
            reader.join().expect("no reader saw a wrong answer");
        }
        assert!(checked.load(Ordering::Relaxed) > 0);
        let last = router.reader().snapshot();
        for (&addr, &want) in probes.iter().zip(&expected[expected.len() - 1]) {
            assert_eq!(last.fib().lookup(addr), want);
        }
    }
}

#[test]
fn ipv6_unknown_engines_are_rejected_and_updates_apply() {
    let error = Router::<u128>::new("d16r", Rib6::new(), NextHopTable::new(Mapping::Distinct), Window::Count(1))
        .expect_err("d16r has no IPv6 version");
    assert!(error.to_string().contains("unknown IPv6 engine"), "{}", error.to_string());
    let mut router =
        Router::<u128>::new("poptrie18", Rib6::new(), NextHopTable::new(Mapping::Distinct), Window::Count(1)).unwrap();
    let prefix: Prefix6 = "2001:db8::/32".parse().unwrap();
    router.announce(prefix, Label::Number(7)).unwrap();
    assert_eq!(router.reader().lookup(0x2001_0db8_0000_0000_0000_0000_0000_0001), 1);
    router.withdraw(prefix).unwrap();
    assert_eq!(router.reader().lookup(0x2001_0db8_0000_0000_0000_0000_0000_0001), fibkit::NO_ROUTE);
    assert!(matches!(router.withdraw(prefix), Ok(published) if published.changed == 0));
}

#[test]
fn ipv6_routes_inside_the_ipv4_mapped_space_are_rejected_naming_the_ipv4_route() {
    let mut router =
        Router::<u128>::new("poptrie16", Rib6::new(), NextHopTable::new(Mapping::Distinct), Window::Count(1)).unwrap();
    let mapped: Prefix6 = "::ffff:10.1.0.0/112".parse().unwrap();
    let covering: Prefix6 = "::/0".parse().unwrap();
    let native: Prefix6 = "2001:db8::/32".parse().unwrap();
    let batch = [
        Update::Announce { prefix: covering, value: Label::Number(1) },
        Update::Announce { prefix: mapped, value: Label::Number(2) },
        Update::Announce { prefix: native, value: Label::Number(3) },
    ];
    let published = router.apply(&batch).unwrap();
    // The mapped route alone is rejected, by its place in the batch, and
    // the error names the IPv4 route it stands for; the others land.
    assert_eq!(published.rejected.len(), 1, "{:?}", published.rejected);
    let error = &published.rejected[0];
    assert!(matches!(error, UpdateError::Ipv4Mapped { index: 1, .. }), "{error:?}");
    assert!(error.to_string().contains("announce 10.1.0.0/16 as an IPv4 route"), "{error}");
    assert_eq!(router.rib().get(mapped), None);
    assert_eq!(router.rib().len(), 2);
    // A route that only covers the mapped space stays (an IPv6 route).
    assert_eq!(router.reader().lookup(0xffff_0a01_0203), 1);
    // Alone, it fails the batch; submitted, it is refused at once; its
    // withdrawal changes nothing.
    let alone = router.announce(mapped, Label::Number(2)).unwrap_err();
    assert!(matches!(alone, UpdateError::Ipv4Mapped { index: 0, .. }), "{alone:?}");
    let queued = router.submit(Update::Announce { prefix: mapped, value: Label::Number(2) }).unwrap_err();
    assert!(matches!(queued, UpdateError::Ipv4Mapped { .. }), "{queued:?}");
    assert!(matches!(router.withdraw(mapped), Ok(published) if published.changed == 0));
    // Shorter than /96, a prefix is not inside the mapped space, though
    // it covers it.
    let shorter: Prefix6 = "::fffe:0:0/95".parse().unwrap();
    assert!(router.announce(shorter, Label::Number(4)).is_ok());
}
