//! A loom model of the reclamation protocol (`make test-loom`): a writer
//! applying batches through the real [`Router`] (its publish and retire,
//! its oldest held generation, its order of writes around the default
//! route) to an updater that writes in place as the engines do, and two
//! readers pinning a generation, looking up and unpinning, in every
//! interleaving loom explores.
//!
//! The structure ([`Segments`]) is the engines' protocol in miniature: a
//! directory entry (`Release` stores, `Acquire` loads) points at a segment
//! holding the answers; an update writes a free segment, then the entry,
//! and retires the old segment into a [`Limbo`] tagged with the generation
//! served; the segment is reused only once [`Limbo::reclaim`] hands it
//! back. Segments are loom cells of plain memory, not atomics: loom fails a
//! run in which a write to a segment is not ordered after every read of
//! it, so a clean run shows that no reader can reach space once it is
//! reused (the engines' cells are atomics, a weaker need). The readers also
//! check every answer against the RIB of their generation or a later one,
//! and, with atomic batches, every batched lookup against the RIB of
//! exactly their generation. Two updaters with a wrong rule of reuse show
//! that the model finds the fault.

use std::array;
use std::sync::Arc;

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicU32, Ordering};
use loom::thread;

use super::{Router, Update, Window};
use crate::addr::Prefix4;
use crate::error::BuildError;
use crate::fib::{Fib, Stats};
use crate::live::{Applied, ApplyContext, Limbo, Updater, WithDefault};
use crate::nexthop::{Label, Mapping, NextHopTable};
use crate::rib::Rib4;
use crate::{NextHop, NO_ROUTE};

/// The addresses the readers look up: one in 10.0/16, one in 10.1/16.
const PROBES: [u32; 2] = [0x0a00_0001, 0x0a01_0001];
/// Segments of the structure: the first, and one for each write of the
/// two batches (each writes twice around the default route), so that an
/// updater never runs out while readers hold old space.
const SEGMENTS: usize = 5;

/// The structure: the entry names the segment holding each probe's answer.
struct Segments {
    entry: AtomicU32,
    cells: [[UnsafeCell<NextHop>; PROBES.len()]; SEGMENTS],
}

// SAFETY: a segment's cells are written only while no reader can reach
// the segment (free, or retired and reclaimed), and read only through an
// entry loaded `Acquire` after the `Release` store that published them:
// the protocol under test, which loom checks for every access.
unsafe impl Sync for Segments {}

impl Segments {
    /// A structure whose segments all answer [`NO_ROUTE`].
    fn empty() -> Self {
        Segments { entry: AtomicU32::new(0), cells: array::from_fn(|_| array::from_fn(|_| UnsafeCell::new(NO_ROUTE))) }
    }

    /// A structure whose segment 0 answers `rib`.
    fn new(rib: &Rib4) -> Self {
        let segments = Segments::empty();
        segments.write(0, rib);
        segments
    }

    /// Writes `rib`'s answers into segment `segment`, which no reader can
    /// reach.
    fn write(&self, segment: u32, rib: &Rib4) {
        for (cell, &probe) in self.cells[segment as usize].iter().zip(&PROBES) {
            // SAFETY: the caller's promise; loom checks it.
            cell.with_mut(|cell| unsafe { *cell = rib.lookup(probe) });
        }
    }
}

impl Fib<u32> for Segments {
    fn name(&self) -> &str {
        "model"
    }

    fn lookup(&self, addr: u32) -> NextHop {
        let probe = PROBES.iter().position(|&probe| probe == addr).expect("a probe");
        let segment = self.entry.load(Ordering::Acquire) as usize;
        // SAFETY: the segment was published by the entry; loom checks that
        // no write to it races this read.
        self.cells[segment][probe].with(|cell| unsafe { *cell })
    }

    fn footprint(&self) -> usize {
        size_of::<Self>()
    }

    fn stats(&self) -> Stats {
        Stats::default()
    }
}

/// When an in-place updater reuses a retired segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reuse {
    /// Once no reader holds the generation it was retired in, as the
    /// engines do.
    AfterReaders,
    /// A fault: one generation too early.
    OneGenerationEarly,
    /// A fault: at once.
    AtOnce,
}

/// An updater of [`Segments`] in place, or into a copy per batch.
struct Model {
    fib: Arc<WithDefault<Segments>>,
    retired: Limbo<u32>,
    free: Vec<u32>,
    unused: u32,
    reuse: Reuse,
}

impl Model {
    fn new(rib: &Rib4, reuse: Reuse) -> Self {
        let fib = Arc::new(WithDefault::new(Segments::new(rib)));
        Model { fib, retired: Limbo::default(), free: Vec::new(), unused: 1, reuse }
    }
}

impl Updater<u32> for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn fib(&self) -> Arc<dyn Fib<u32>> {
        self.fib.clone()
    }

    fn max_next_hop(&self) -> NextHop {
        NextHop::MAX
    }

    fn apply(&mut self, rib: &Rib4, _: &[Prefix4], context: ApplyContext) -> Result<Applied, BuildError> {
        let free = &mut self.free;
        match self.reuse {
            Reuse::AfterReaders => self.retired.reclaim(context.oldest_held, |segment| free.push(segment)),
            Reuse::OneGenerationEarly => self.retired.reclaim(context.oldest_held + 1, |segment| free.push(segment)),
            Reuse::AtOnce => self.retired.drain(|segment| free.push(segment)),
        }
        let segment = self.free.pop().unwrap_or_else(|| {
            self.unused += 1;
            self.unused - 1
        });
        assert!((segment as usize) < SEGMENTS, "the model has room for every write");
        self.fib.write(segment, rib);
        let old = self.fib.entry.load(Ordering::Relaxed);
        self.fib.entry.store(segment, Ordering::Release);
        self.retired.retire(context.published, old);
        Ok(Applied { bytes_written: 8, ..Applied::default() })
    }

    fn set_default(&mut self, next_hop: NextHop) -> bool {
        self.fib.set_default(next_hop);
        true
    }

    fn copy_for_batch(&mut self) -> Result<u64, BuildError> {
        let served: &Segments = &self.fib;
        let copy = Segments::empty();
        for (cell, &probe) in copy.cells[0].iter().zip(&PROBES) {
            let answer = served.lookup(probe);
            // SAFETY: no reader has seen the copy.
            cell.with_mut(|cell| unsafe { *cell = answer });
        }
        self.fib = Arc::new(WithDefault::like(copy, &self.fib));
        self.retired.drain(drop);
        self.free.clear();
        self.unused = 1;
        Ok(8)
    }
}

fn prefix(text: &str) -> Prefix4 {
    text.parse().expect("a prefix")
}

/// Runs the model: a router over 10.0/16 and 10.1/16 applies two batches
/// that move 10.0.0.1 to the default route and back to a new 10.0/16
/// (each written in the three steps around the default route), while two
/// readers each pin twice.
fn check(reuse: Reuse, atomic: bool) {
    let mut builder = loom::model::Builder::new();
    // Three preemptions cover a reader paused across both of the writer's
    // publishes and reclaims; each more multiplies the interleavings
    // (docs/hardening.md, "Model checking").
    builder.preemption_bound = Some(3);
    builder.check(move || {
        let mut next_hops = NextHopTable::new(Mapping::Distinct);
        let [a, b, five, nine] = [1, 2, 5, 9].map(|value| next_hops.intern(Label::Number(value)));
        let mut rib = Rib4::new();
        rib.insert(prefix("10.0.0.0/16"), a);
        rib.insert(prefix("10.1.0.0/16"), b);
        let updater = Box::new(Model::new(&rib, reuse));
        let mut router = Router::with_updater(updater, rib, next_hops, Window::Count(1));
        router.set_atomic_batches(atomic);
        // What the probes answer in each generation.
        let answers: Arc<[[NextHop; 2]]> = Arc::new([[a, b], [nine, b], [five, b]]);
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let (reader, answers) = (router.reader(), answers.clone());
                thread::spawn(move || {
                    for _ in 0..2 {
                        let pinned = reader.snapshot();
                        let generation = pinned.generation() as usize;
                        let mut found = [NO_ROUTE; 2];
                        pinned.fib().lookup_batch(&PROBES, &mut found);
                        if atomic {
                            assert_eq!(found, answers[generation], "a batched lookup sees its generation whole");
                        }
                        for (probe, &answer) in found.iter().enumerate() {
                            assert!(
                                answers[generation..].iter().any(|now| now[probe] == answer),
                                "probe {probe} answered {answer}, no RIB since generation {generation} did"
                            );
                        }
                    }
                })
            })
            .collect();
        let batches = [
            [
                Update::Announce { prefix: prefix("0.0.0.0/0"), value: Label::Number(9) },
                Update::Withdraw { prefix: prefix("10.0.0.0/16") },
            ],
            [
                Update::Announce { prefix: prefix("10.0.0.0/16"), value: Label::Number(5) },
                Update::Withdraw { prefix: prefix("0.0.0.0/0") },
            ],
        ];
        for batch in &batches {
            let published = router.apply(batch).expect("the model takes every batch");
            assert!(published.rejected.is_empty());
        }
        for reader in readers {
            reader.join().expect("a reader");
        }
    });
}

#[test]
fn no_reader_reaches_space_an_updater_reuses() {
    check(Reuse::AfterReaders, false);
}

#[test]
fn a_batched_lookup_sees_one_generation_when_batches_are_atomic() {
    check(Reuse::AfterReaders, true);
}

#[test]
#[should_panic(expected = "Causality violation")]
fn the_model_finds_space_reused_one_generation_early() {
    check(Reuse::OneGenerationEarly, false);
}

#[test]
#[should_panic(expected = "Causality violation")]
fn the_model_finds_space_reused_at_once() {
    check(Reuse::AtOnce, false);
}
