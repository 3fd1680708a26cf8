//! Readers racing the writer: while a router applies batches, reader
//! threads look up addresses inside (and just around) the changed
//! prefixes, and every answer must be the RIB's answer at some generation
//! between the last one published before the lookup and the one being
//! applied after it. One harness for both families.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use fibkit::addr::{Address, Prefix};
use fibkit::nexthop::NextHopTable;
use fibkit::random::XorShift32;
use fibkit::rib::Rib;
use fibkit::router::{Router, Update, Window};
use fibkit::NextHop;

/// For each probe address, the generations at which its answer changes:
/// `(generation, answer)`, the first at generation 0.
struct Expected<A: Address> {
    probes: Vec<A>,
    changes: Vec<Vec<(u64, NextHop)>>,
}

impl<A: Address> Expected<A> {
    /// Replays `batches` on a copy of `rib`, recording the answers of
    /// addresses inside (and just around) every changed prefix.
    fn record(rib: &Rib<A>, batches: &[Vec<Update<Prefix<A>>>], hops: &NextHopTable) -> Self {
        let mut probes: Vec<A> = batches
            .iter()
            .flatten()
            .flat_map(|update| {
                let prefix = update.prefix();
                let (first, last) = (prefix.first(), prefix.last());
                let middle = first | ((first ^ last) >> 1);
                let before = first.checked_prev().unwrap_or(A::MAX);
                let after = last.checked_next().unwrap_or(A::ZERO);
                [first, middle, last, before, after]
            })
            .collect();
        probes.sort_unstable();
        probes.dedup();
        let (mut rib, mut hops) = (rib.clone(), hops.clone());
        let mut changes: Vec<Vec<(u64, NextHop)>> = probes.iter().map(|&addr| vec![(0, rib.lookup(addr))]).collect();
        for (index, batch) in batches.iter().enumerate() {
            for update in batch {
                match *update {
                    Update::Announce { prefix, value } => {
                        rib.insert(prefix, hops.intern(value));
                    }
                    Update::Withdraw { prefix } => {
                        rib.remove(prefix);
                    }
                }
            }
            for update in batch {
                let prefix = update.prefix();
                let from = probes.partition_point(|&addr| addr < prefix.first());
                let to = probes.partition_point(|&addr| addr <= prefix.last());
                for probe in from..to {
                    let answer = rib.lookup(probes[probe]);
                    if changes[probe].last().unwrap().1 != answer {
                        changes[probe].push((index as u64 + 1, answer));
                    }
                }
            }
        }
        Expected { probes, changes }
    }

    /// The RIB's answer for probe `index` at generation `generation`.
    fn at(&self, index: usize, generation: u64) -> NextHop {
        let history = &self.changes[index];
        history[history.partition_point(|&(changed, _)| changed <= generation) - 1].1
    }

    /// Whether `answer` for probe `index` is the RIB's answer at some
    /// generation in `first..=last`.
    fn allows(&self, index: usize, first: u64, last: u64, answer: NextHop) -> bool {
        let history = &self.changes[index];
        let start = history.partition_point(|&(generation, _)| generation <= first) - 1;
        history[start..].iter().take_while(|&&(generation, _)| generation <= last).any(|&(_, hop)| hop == answer)
    }
}

/// Readers (half batched, half scalar) look up addresses inside the
/// prefixes being changed while the writer applies `batches` to a router of
/// `engine` over `rib`; every answer must be the RIB's answer before or
/// after a batch in flight during the lookup, and a snapshot held all along
/// stays at generation 0. Returns the lookups done and the router.
pub fn stress<A: Address>(
    engine: &str,
    rib: Rib<A>,
    hops: NextHopTable,
    batches: &[Vec<Update<Prefix<A>>>],
    readers: usize,
) -> (u64, Router<A>) {
    stress_with(engine, rib, hops, batches, readers, false)
}

/// [`stress`], with the router's batches atomic if `atomic`: then every
/// batched lookup must answer all its keys as the RIB at one generation.
pub fn stress_with<A: Address>(
    engine: &str,
    rib: Rib<A>,
    hops: NextHopTable,
    batches: &[Vec<Update<Prefix<A>>>],
    readers: usize,
    atomic: bool,
) -> (u64, Router<A>) {
    let expected = Arc::new(Expected::record(&rib, batches, &hops));
    let mut router = Router::new(engine, rib, hops, Window::Count(1)).unwrap();
    router.set_atomic_batches(atomic);
    // `started`: the generation the batch being applied will publish;
    // `done`: the last generation published.
    let (started, done) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let stop = Arc::new(AtomicBool::new(false));
    // Readers that have done their first lookups: the writer starts after all.
    let ready = Arc::new(AtomicU64::new(0));
    // One snapshot held by the test all along: the writer must not wait for it.
    let held = router.reader().snapshot();
    let threads: Vec<_> = (0..readers)
        .map(|seed| {
            let (reader, expected, started, done, stop, ready) =
                (router.reader(), expected.clone(), started.clone(), done.clone(), stop.clone(), ready.clone());
            std::thread::spawn(move || {
                let mut rng = XorShift32::new(seed as u64 + 1);
                let (mut lookups, mut wrong, mut mixed) = (0u64, Vec::new(), 0u64);
                let (mut keys, mut indexes, mut out) = ([A::ZERO; 8], [0usize; 8], [0; 8]);
                while !stop.load(Ordering::Acquire) {
                    for (key, index) in keys.iter_mut().zip(&mut indexes) {
                        *index = rng.next() as usize % expected.probes.len();
                        *key = expected.probes[*index];
                    }
                    let first = done.load(Ordering::Acquire);
                    if seed % 2 == 0 {
                        reader.lookup_batch(&keys, &mut out);
                    } else {
                        for (slot, &key) in out.iter_mut().zip(&keys) {
                            *slot = reader.lookup(key);
                        }
                    }
                    let last = started.load(Ordering::Acquire);
                    for ((&key, &index), &answer) in keys.iter().zip(&indexes).zip(&out) {
                        if !expected.allows(index, first, last, answer) && wrong.len() < 10 {
                            wrong.push((key, first, last, answer));
                        }
                    }
                    let one_generation = |generation: u64| {
                        indexes.iter().zip(&out).all(|(&index, &answer)| expected.at(index, generation) == answer)
                    };
                    if atomic && seed % 2 == 0 && !(first..=last).any(one_generation) {
                        mixed += 1;
                    }
                    if lookups == 0 {
                        ready.fetch_add(1, Ordering::Release);
                    }
                    lookups += keys.len() as u64;
                }
                (lookups, wrong, mixed)
            })
        })
        .collect();
    while ready.load(Ordering::Acquire) < readers as u64 {
        std::thread::yield_now();
    }
    for (index, batch) in batches.iter().enumerate() {
        let generation = index as u64 + 1;
        started.store(generation, Ordering::Release);
        router.apply(batch).unwrap();
        done.store(generation, Ordering::Release);
    }
    stop.store(true, Ordering::Release);
    let mut total = 0;
    for thread in threads {
        let (lookups, wrong, mixed) = thread.join().unwrap();
        assert!(wrong.is_empty(), "{engine}: wrong answers (addr, first, last generation, answer): {wrong:x?}");
        assert_eq!(mixed, 0, "{engine}: batched lookups that mixed generations of atomic batches");
        assert!(lookups > 0, "{engine}: a reader made no progress");
        total += lookups;
    }
    assert_eq!(held.generation(), 0, "the held snapshot stayed valid while the writer went on");
    (total, router)
}
