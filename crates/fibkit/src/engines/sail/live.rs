//! SAIL serving readers while the router applies updates: copy on write,
//! a /16 at a time.
//!
//! The router hands over the address intervals whose answer a batch
//! changed ([`changed_spans`]), each with its one next hop. For every /16
//! they touch, the updater works out the /16's new level-24 entries from
//! its current ones (the answers the intervals leave alone are read back
//! from the structure):
//!
//! ```text
//!  /24 covered whole by an interval ......... entry = its next hop
//!  /24 covered in part ...................... its 256 answers, patched:
//!                                               all one -> entry = that next hop
//!                                               else    -> a fresh level-32 chunk
//!  /24 untouched ............................ entry kept (a level-32 chunk stays shared)
//!
//!  all 256 entries one next hop -> BCN16 = that next hop
//!  else                         -> a fresh level-24 chunk holding them
//! ```
//!
//! Fresh chunks are free ones no reader can reach: they are written
//! whole, then the /16's level-16 entry is stored with `Release` once the
//! whole batch is written (children before parents). A lookup loads that
//! entry with `Acquire`, so it finds the /16 as it was before the batch or
//! as it is after it, never half rewritten. The chunks the new /16 no
//! longer names are retired into a [`Limbo`] with the generation being
//! served, and reused once no reader holds it.
//!
//! The chunk arrays are allocated with room to grow (half the chunks in
//! use and 1,024 more, up to the entry's chunk-ID limit), since they
//! cannot be reallocated under readers. When a level runs out, the updater
//! moves to a copy with more room, where every retired chunk is free (a
//! relocation, published whole); when even that cannot hold the batch (a
//! level at its chunk-ID limit), it rebuilds from the RIB, which refuses a
//! table beyond the limits as a build does. Nothing readers can reach is
//! written before the batch is known to fit, so a refused batch leaves the
//! served structure as it was; so does a copy whose memory the system
//! refuses ([`BuildError::OutOfMemory`]).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::build::next_hop_refused;
use super::{Sail, Word, CHUNK_ENTRIES};
use crate::addr::Prefix4;
use crate::error::BuildError;
use crate::fib::{BuildOptions, Fib};
use crate::live::{
    changed_spans, for_each_slash16, replace_updater, whole_slash16, Applied, ApplyContext, Limbo, Updater, WithDefault,
};
use crate::rib::{Range, Rib4};
use crate::NextHop;

/// The chunk IDs of one level (24 or 32).
#[derive(Debug, Default)]
struct Chunks {
    /// IDs no reader can reach, free for reuse.
    free: Vec<u32>,
    /// Retired IDs, until no reader can hold an entry naming them.
    limbo: Limbo<u32>,
    /// IDs of the array ever handed out (the rest is room to grow).
    used: u32,
}

impl Chunks {
    /// Chunks that entries of the structure name.
    fn in_use(&self) -> usize {
        self.used as usize - self.free.len() - self.limbo.len()
    }

    /// A chunk no reader can reach, among the first `capacity`.
    fn take(&mut self, capacity: usize) -> Option<u32> {
        if let Some(id) = self.free.pop() {
            return Some(id);
        }
        ((self.used as usize) < capacity).then(|| {
            self.used += 1;
            self.used - 1
        })
    }
}

/// Why a batch stopped before anything was published.
#[derive(Debug)]
enum Stop {
    /// A level has no free chunk even after a relocation: rebuild.
    Full,
    /// The system refused the memory of a copy with more room.
    Refused(BuildError),
}

/// The buffers of one /16's rewrite.
#[derive(Debug, Default)]
struct Scratch {
    /// The changed intervals inside the /16 being rewritten
    /// ([`for_each_slash16`]'s buffer).
    parts: Vec<Range<u32>>,
    /// Its level-24 entries before the batch.
    old: Vec<u32>,
    /// Its level-24 entries after the batch.
    entries: Vec<u32>,
    /// The 256 answers of the /24 covered in part.
    answers: Vec<u32>,
}

/// The SAIL engines' updater: for every /16 a batch changes, fresh level-24
/// and level-32 chunks, then one `Release` store of its level-16 entry
/// ([the engine's docs](super#updates)); replaced chunks are reused once no
/// reader holds them, and the arrays move to a copy with more room (or the
/// structure is rebuilt) when a level runs out.
pub struct SailUpdater<W: Word> {
    fib: Arc<WithDefault<Sail<W>>>,
    level24: Chunks,
    level32: Chunks,
    /// Address intervals a batch changed, with their next hop.
    spans: Vec<Range<u32>>,
    /// Level-16 entries to store once the batch is written: (/16, entry).
    pending: Vec<(u32, u32)>,
    scratch: Scratch,
    /// The batch being applied moved to a copy with more room.
    relocated: bool,
    /// A refused batch left chunks half accounted for: the next batch
    /// rebuilds.
    stale: bool,
}

/// Chunks to allocate room for when `in_use` are in use, at least
/// `at_least`, at most the entry's chunk-ID limit.
fn capacity_for<W: Word>(in_use: usize, at_least: usize) -> usize {
    (in_use + in_use / 2 + 1024).max(at_least).min(W::FLAG as usize)
}

impl<W: Word> SailUpdater<W> {
    /// Builds the structure from `rib`, with room for more chunks.
    ///
    /// # Errors
    /// As [`Sail::build`]: a table beyond the entry's limits, or memory the
    /// system refuses.
    pub fn new(rib: &Rib4) -> Result<Self, BuildError> {
        // The build numbers each level's chunks from 0: those in use.
        let fib = Sail::<W>::build_with_room(rib, |needed| capacity_for::<W>(needed, 0))?;
        let (chunks_24, chunks_32) = (fib.chunks_24(), fib.chunks_32());
        Ok(SailUpdater {
            fib: Arc::new(WithDefault::new(fib)),
            level24: Chunks { used: chunks_24 as u32, ..Chunks::default() },
            level32: Chunks { used: chunks_32 as u32, ..Chunks::default() },
            spans: Vec::new(),
            pending: Vec::new(),
            scratch: Scratch::default(),
            relocated: false,
            stale: false,
        })
    }

    /// The live structure.
    pub fn sail(&self) -> &Arc<WithDefault<Sail<W>>> {
        &self.fib
    }

    fn rebuild(&mut self, rib: &Rib4) -> Result<Applied, BuildError> {
        replace_updater(self, Self::new(rib), |updater| updater.fib.footprint(), |updater| updater.stale = true)
    }

    /// A free chunk of level 24 (`deep` false) or 32 (`deep` true); moves
    /// to a copy with more room once per batch when the level has none.
    fn allocate(&mut self, deep: bool, bytes_written: &mut u64) -> Result<u32, Stop> {
        loop {
            let (chunks, cells) =
                if deep { (&mut self.level32, &self.fib.n32) } else { (&mut self.level24, &self.fib.bcn24) };
            if let Some(id) = chunks.take(cells.len() / CHUNK_ENTRIES) {
                return Ok(id);
            }
            if self.relocated {
                return Err(Stop::Full);
            }
            self.relocate(bytes_written).map_err(Stop::Refused)?;
        }
    }

    /// Moves to a copy of the structure with more room at both levels, in
    /// which every retired chunk is free: no reader searches the copy
    /// before it is published, and its entries name no retired chunk once
    /// the batch's level-16 entries are stored.
    ///
    /// # Errors
    /// [`BuildError::OutOfMemory`] when the system refuses the copy; the
    /// updater and its structure are as they were then.
    fn relocate(&mut self, bytes_written: &mut u64) -> Result<(), BuildError> {
        let fib = &*self.fib;
        let room_24 = capacity_for::<W>(self.level24.in_use(), fib.bcn24.len() / CHUNK_ENTRIES);
        let room_32 = capacity_for::<W>(self.level32.in_use(), fib.n32.len() / CHUNK_ENTRIES);
        // SAFETY: the updater is the structure's only writer.
        let copy = unsafe { fib.with_room(room_24, room_32) }?;
        for chunks in [&mut self.level24, &mut self.level32] {
            let free = &mut chunks.free;
            chunks.limbo.drain(|id| free.push(id));
        }
        *bytes_written += copy.footprint() as u64;
        self.fib = Arc::new(WithDefault::like(copy, &self.fib));
        self.relocated = true;
        Ok(())
    }

    /// Writes `words` into a fresh chunk of level 24 or 32 and returns the
    /// entry naming it.
    fn fresh_chunk(&mut self, deep: bool, words: &[u32], bytes_written: &mut u64) -> Result<u32, Stop> {
        let id = self.allocate(deep, bytes_written)?;
        let cells = if deep { &self.fib.n32 } else { &self.fib.bcn24 };
        let start = id as usize * CHUNK_ENTRIES;
        for (cell, &word) in cells[start..start + CHUNK_ENTRIES].iter().zip(words) {
            W::store(cell, word, Ordering::Relaxed);
        }
        *bytes_written += (CHUNK_ENTRIES * std::mem::size_of::<W>()) as u64;
        Ok(W::FLAG | id)
    }

    /// Rewrites the /16s the changed intervals `spans` (sorted, disjoint)
    /// touch, queueing their level-16 entries in `pending`.
    fn write_spans(&mut self, spans: &[Range<u32>], generation: u64, bytes_written: &mut u64) -> Result<(), Stop> {
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut parts = std::mem::take(&mut scratch.parts);
        let outcome = for_each_slash16(spans, &mut parts, |slash16, parts| {
            self.rewrite_16(slash16, parts, &mut scratch, generation, bytes_written)
        });
        scratch.parts = parts;
        self.scratch = scratch;
        outcome
    }

    /// The new level-24 entries of /16 `slash16` given the changed
    /// intervals inside it (`parts`), and the level-16 entry that publishes
    /// them, queued; the chunks it stops naming are retired.
    fn rewrite_16(
        &mut self,
        slash16: u32,
        parts: &[Range<u32>],
        scratch: &mut Scratch,
        generation: u64,
        bytes_written: &mut u64,
    ) -> Result<(), Stop> {
        let old16 = W::load(&self.fib.bcn16[slash16 as usize], Ordering::Relaxed);
        // A /16 that held one next hop and is changed whole to another:
        // no chunk to read, write or retire.
        if let Some(next_hop) = whole_slash16(parts).filter(|&hop| (old16 | hop) & W::FLAG == 0) {
            if next_hop != old16 {
                self.pending.push((slash16, next_hop));
            }
            return Ok(());
        }
        scratch.old.clear();
        if old16 & W::FLAG != 0 {
            let start = (old16 & W::VALUE) as usize * CHUNK_ENTRIES;
            let chunk = &self.fib.bcn24[start..start + CHUNK_ENTRIES];
            scratch.old.extend(chunk.iter().map(|cell| W::load(cell, Ordering::Relaxed)));
        } else {
            scratch.old.resize(CHUNK_ENTRIES, old16);
        }
        scratch.entries.clone_from(&scratch.old);
        // The /24 whose answers `scratch.answers` holds, patched by the
        // intervals that cover it in part.
        let mut partial: Option<usize> = None;
        for part in parts {
            let (first24, last24) = (part.first >> 8 & 0xff, part.last >> 8 & 0xff);
            for slash24 in first24..=last24 {
                let low = if slash24 == first24 { part.first & 0xff } else { 0 };
                let high = if slash24 == last24 { part.last & 0xff } else { 0xff };
                if low == 0 && high == 0xff {
                    scratch.entries[slash24 as usize] = part.next_hop;
                    continue;
                }
                if partial != Some(slash24 as usize) {
                    if let Some(done) = partial.replace(slash24 as usize) {
                        scratch.entries[done] = self.settle_24(&scratch.answers, bytes_written)?;
                    }
                    self.read_24(scratch.entries[slash24 as usize], &mut scratch.answers);
                }
                scratch.answers[low as usize..=high as usize].fill(part.next_hop);
            }
        }
        if let Some(done) = partial {
            scratch.entries[done] = self.settle_24(&scratch.answers, bytes_written)?;
        }
        if scratch.entries == scratch.old {
            return Ok(());
        }
        let first = scratch.entries[0];
        let new16 = if first & W::FLAG == 0 && scratch.entries.iter().all(|&entry| entry == first) {
            first
        } else {
            self.fresh_chunk(false, &scratch.entries, bytes_written)?
        };
        for (&old, &new) in scratch.old.iter().zip(&scratch.entries) {
            if old & W::FLAG != 0 && old != new {
                self.level32.limbo.retire(generation, old & W::VALUE);
            }
        }
        if old16 & W::FLAG != 0 {
            self.level24.limbo.retire(generation, old16 & W::VALUE);
        }
        if new16 != old16 {
            self.pending.push((slash16, new16));
        }
        Ok(())
    }

    /// The 256 answers of a /24 whose level-24 entry is `entry`.
    fn read_24(&self, entry: u32, answers: &mut Vec<u32>) {
        answers.clear();
        if entry & W::FLAG != 0 {
            let start = (entry & W::VALUE) as usize * CHUNK_ENTRIES;
            answers
                .extend(self.fib.n32[start..start + CHUNK_ENTRIES].iter().map(|cell| W::load(cell, Ordering::Relaxed)));
        } else {
            answers.resize(CHUNK_ENTRIES, entry);
        }
    }

    /// The level-24 entry of a /24 answering `answers`: their one next
    /// hop, or a fresh level-32 chunk holding them.
    fn settle_24(&mut self, answers: &[u32], bytes_written: &mut u64) -> Result<u32, Stop> {
        if answers.iter().all(|&answer| answer == answers[0]) {
            return Ok(answers[0]);
        }
        self.fresh_chunk(true, answers, bytes_written)
    }
}

impl<W: Word> Updater<u32> for SailUpdater<W> {
    fn name(&self) -> &str {
        W::NAME
    }

    fn fib(&self) -> Arc<dyn Fib<u32>> {
        self.fib.clone()
    }

    fn set_default(&mut self, next_hop: NextHop) -> bool {
        self.fib.set_default(next_hop);
        true
    }

    fn max_next_hop(&self) -> NextHop {
        W::VALUE
    }

    fn copy_for_batch(&mut self) -> Result<u64, BuildError> {
        let mut bytes_written = 0;
        if !self.stale {
            self.relocate(&mut bytes_written)?;
        }
        Ok(bytes_written)
    }

    fn apply(&mut self, rib: &Rib4, changed: &[Prefix4], context: ApplyContext) -> Result<Applied, BuildError> {
        if self.stale {
            return self.rebuild(rib);
        }
        self.relocated = false;
        for chunks in [&mut self.level24, &mut self.level32] {
            let free = &mut chunks.free;
            chunks.limbo.reclaim(context.oldest_held, |id| free.push(id));
        }
        changed_spans(rib, changed, &mut self.spans);
        self.pending.clear();
        let spans = std::mem::take(&mut self.spans);
        let mut bytes_written = 0;
        let outcome = self.write_spans(&spans, context.published, &mut bytes_written);
        self.spans = spans;
        match outcome {
            Err(Stop::Full) => return self.rebuild(rib),
            Err(Stop::Refused(error)) => {
                // Nothing of the batch is published (the level-16 entries
                // wait in `pending`), but chunks are half accounted for.
                self.stale = true;
                return Err(error);
            }
            Ok(()) => {}
        }
        for &(slash16, entry) in &self.pending {
            W::store(&self.fib.bcn16[slash16 as usize], entry, Ordering::Release);
        }
        bytes_written += (self.pending.len() * std::mem::size_of::<W>()) as u64;
        self.fib.prefixes.store(rib.len(), Ordering::Relaxed);
        Ok(Applied { rebuilt: false, relocated: self.relocated, bytes_written })
    }
}

/// Registry updater for `sail` and `sail-wide`: in place, copy on write a
/// /16 at a time ([`SailUpdater`]).
///
/// # Errors
/// [`BuildError::Limit`] when the table is beyond the entry's limits, or
/// `options` asks for next hops larger than an entry holds.
pub fn updater<W: Word>(rib: &Rib4, options: &BuildOptions) -> Result<Box<dyn Updater<u32>>, BuildError> {
    if options.max_next_hop > W::VALUE {
        return Err(next_hop_refused::<W>(options.max_next_hop).into());
    }
    Ok(Box::new(SailUpdater::<W>::new(rib)?))
}

#[cfg(test)]
mod tests {
    use crate::addr::Prefix4;
    use crate::fib::Figure;
    use crate::nexthop::{Label, Mapping, NextHopTable};
    use crate::rib::Rib4;
    use crate::router::{assert_matches_rib, Router, Update, Window};

    fn label(hop: u64) -> Label {
        Label::Number(hop - 1)
    }

    /// A /25 in the `index`-th /24 from 10.0.0.0.
    fn slash25(index: u32) -> Prefix4 {
        Prefix4::new(0x0a00_0000 | index << 8, 25).unwrap()
    }

    fn chunks(router: &Router) -> (u64, u64) {
        let stats = router.reader().snapshot().fib().stats();
        let count = |key| match stats.get(key) {
            Some(Figure::Count(count)) => *count,
            other => panic!("{key}: {other:?}"),
        };
        (count("chunks_24"), count("chunks_32"))
    }

    #[test]
    fn chunks_are_reused_only_past_readers_and_relocate_when_out() {
        let mut rib = Rib4::new();
        rib.insert("10.0.0.0/8".parse().unwrap(), 1);
        let mut router = Router::new("sail", rib, NextHopTable::new(Mapping::Modulo(100)), Window::Count(1)).unwrap();
        let held = router.reader().snapshot();
        // 2,000 /24s split in two: a level-32 chunk each, where the build
        // left room for 1,024.
        for index in 0..2000 {
            router
                .apply(&[Update::Announce { prefix: slash25(index), value: label(2 + u64::from(index % 50)) }])
                .unwrap();
        }
        assert!(router.stats().relocations >= 1, "{:?}", router.stats());
        assert_eq!(router.stats().full_rebuilds, 0);
        assert_matches_rib(&router);
        assert_eq!(chunks(&router), (8, 2000));
        // The held generation's structure was updated a /16 at a time
        // until the relocation: per address, the old or a newer answer.
        assert!([1, 3].contains(&held.fib().lookup(0x0a00_0100)));
        assert_eq!(held.fib().lookup(0x0a00_0180), 1);
        drop(held);
        for index in 0..2000 {
            router.apply(&[Update::Withdraw { prefix: slash25(index) }]).unwrap();
        }
        // Every /16 answers one next hop again: no chunk is named.
        assert_eq!(chunks(&router), (0, 0));
        assert_matches_rib(&router);
        // A batch of many: the retired chunks came back for reuse.
        let batch: Vec<_> =
            (0..2000).map(|index| Update::Announce { prefix: slash25(index), value: label(7) }).collect();
        router.apply(&batch).unwrap();
        assert_eq!(router.stats().full_rebuilds, 0);
        assert_matches_rib(&router);
        assert_eq!(router.reader().lookup(0x0a00_0a7f), 7);
        assert_eq!(router.reader().lookup(0x0a00_0a80), 1);
    }

    #[test]
    fn a_batch_beyond_the_chunk_id_limit_is_refused_and_changes_nothing() {
        // 2^15 level-32 chunks: all the IDs a 16-bit entry names.
        let mut rib = Rib4::new();
        rib.insert("10.0.0.0/8".parse().unwrap(), 1);
        for index in 0..1 << 15 {
            rib.insert(slash25(index), 2);
        }
        let mut router = Router::new("sail", rib, NextHopTable::new(Mapping::Modulo(100)), Window::Count(1)).unwrap();
        let before = router.rib().ranges(0, u32::MAX);
        let refused = router.apply(&[Update::Announce { prefix: slash25(1 << 15), value: label(3) }]);
        assert!(refused.unwrap_err().to_string().contains("chunk"), "refused for its chunk IDs");
        assert_eq!(router.rib().ranges(0, u32::MAX), before);
        assert_eq!(router.reader().lookup(0x0a80_0000), 1);
        assert_matches_rib(&router);
        // The engine takes updates that fit.
        router
            .apply(&[
                Update::Withdraw { prefix: slash25(0) },
                Update::Announce { prefix: slash25(1 << 15), value: label(3) },
            ])
            .unwrap();
        assert_eq!(router.reader().lookup(0x0a80_0000), 3);
        assert_eq!(router.reader().lookup(0x0a00_0000), 1);
        assert_matches_rib(&router);
    }
}
