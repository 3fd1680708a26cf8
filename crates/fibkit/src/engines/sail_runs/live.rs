//! SAIL-R serving readers while the router applies updates: copy on write,
//! a /16 at a time.
//!
//! The router hands over the address intervals whose answer a batch
//! changed ([`changed_spans`]), each with its one next hop. For every /16
//! they touch, the updater reads the /16's 256 /24 answers back from its
//! lines, patches them, and writes the /16 anew:
//!
//! ```text
//!  /24 covered whole by an interval ...... answer = its next hop
//!  /24 covered in part ................... its 256 answers, patched:
//!                                            all one -> answer = that next hop
//!                                            else    -> a fresh level-32 chunk
//!  /24 untouched ......................... answer kept (a level-32 chunk stays named)
//!
//!  all 256 answers one next hop -> level-16 entry = that next hop
//!  else                         -> fresh lines holding their runs (1 to 16)
//! ```
//!
//! Fresh lines and chunks are free ones no reader can reach: they are
//! written whole, then the /16's level-16 entry is stored with `Release`
//! once the whole batch is written (children before parents). A lookup
//! loads that entry with `Acquire`, so it finds the /16 as it was before
//! the batch or as it is after it, never half rewritten. The lines and
//! chunks the new /16 no longer names are retired into a [`Limbo`] with the
//! generation being served, and reused once no reader holds it.
//!
//! Free lines are segments of 1 to 16 lines in a [`FreeSpace`]; free
//! level-32 chunks a list of IDs. The arrays are allocated with room to
//! grow (half the lines and chunks in use and 1,024 more, within the
//! entries' limits), since they cannot be reallocated under readers. A
//! batch counts the lines and chunks it takes ([`Demand`]); one that finds
//! no room goes on counting without writing, then the updater moves to a
//! compacted copy (every chunk in use packed first: no retired chunk and no
//! hole left) with room for at least that much, and applies the batch
//! there (a relocation, published whole). When even that cannot hold the
//! batch (at the 2^15 level-32 chunk IDs), it rebuilds from the RIB, which
//! refuses a table beyond the limits as a build does. Nothing readers can
//! reach is written before the batch is known to fit, so a refused batch
//! leaves the served structure as it was; so does a copy whose memory the
//! system refuses ([`BuildError::OutOfMemory`]).
//!
//! Much of an update's time goes to reading the /16 back and packing it
//! again: a line is read back a run at a time (each run's /24s filled at
//! once), packed with each run's answer written once (the padding after
//! the last run at the end), and the old answers are searched for retired
//! level-32 chunks only when one OR of them has the flag. That made an
//! update about a quarter faster in alternated runs (figures in
//! docs/decisions.md); /24 by /24, the read-back and the packing were a
//! third of the time `Router::apply` took.

use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::build::{chunk_entry, line_count, next_hop_refused, pack};
use super::{Line, SailRuns, CHUNK, CHUNK_ENTRIES, INDEX, MAX_LINES, NAME, SPLIT, VALUE};
use crate::addr::Prefix4;
use crate::error::BuildError;
use crate::fib::{BuildOptions, Fib};
use crate::live::{
    changed_spans, for_each_slash16, replace_updater, whole_slash16, Applied, ApplyContext, FreeSpace, Limbo, Updater,
    WithDefault,
};
use crate::rib::{Range, Rib4};
use crate::NextHop;

/// What a batch takes: lines and level-32 chunks, and whether some of them
/// found no room (then nothing of the batch is published).
#[derive(Clone, Copy, Debug, Default)]
struct Demand {
    lines: usize,
    chunks: usize,
    short: bool,
}

/// Room to allocate beside `in_use` lines or chunks, keeping the total
/// within `limit`.
fn room(in_use: usize, limit: usize) -> usize {
    (in_use / 2 + 1024).min(limit.saturating_sub(in_use))
}

/// The free and retired lines and level-32 chunks of the live arrays.
#[derive(Debug, Default)]
struct Space {
    /// Free line segments (1 to 16 lines).
    lines: FreeSpace,
    /// Retired line segments (first, count), until no reader holds them.
    retired_lines: Limbo<(u32, u32)>,
    /// Free level-32 chunk IDs.
    chunks: Vec<u16>,
    /// Retired level-32 chunk IDs.
    retired_chunks: Limbo<u16>,
}

impl Space {
    /// The space of `fib`, a compacted structure whose entries name its
    /// first `lines_used` lines and `chunks_used` level-32 chunks: the rest
    /// is free.
    fn of(fib: &SailRuns, lines_used: usize, chunks_used: usize) -> Self {
        let mut space = Space::default();
        if fib.lines.len() > lines_used {
            space.lines.free(lines_used as u32, (fib.lines.len() - lines_used) as u32);
        }
        // Lowest IDs first out.
        space.chunks.extend((chunks_used..fib.n32.len() / CHUNK_ENTRIES).rev().map(|id| id as u16));
        space
    }

    /// Frees what no reader can still reach.
    fn reclaim(&mut self, oldest_held: u64) {
        let lines = &mut self.lines;
        self.retired_lines.reclaim(oldest_held, |(first, count)| lines.free(first, count));
        let chunks = &mut self.chunks;
        self.retired_chunks.reclaim(oldest_held, |id| chunks.push(id));
    }
}

/// The buffers of one /16's rewrite.
#[derive(Debug, Default)]
struct Scratch {
    /// The changed intervals inside the /16 being rewritten
    /// ([`for_each_slash16`]'s buffer).
    parts: Vec<Range<u32>>,
    /// Its 256 /24 answers (values) before the batch.
    old: Vec<u16>,
    /// Its 256 /24 answers after the batch.
    answers: Vec<u16>,
    /// The 256 next hops of the /24 covered in part.
    deep: Vec<u16>,
    /// The lines of its new answers.
    lines: Vec<Line>,
}

/// SAIL-R's updater: for every /16 a batch changes, fresh lines and
/// level-32 chunks, then one `Release` store of its level-16 entry ([the
/// engine's docs](super#updates)); replaced lines and chunks are reused
/// once no reader holds them, and the structure moves to a compacted copy
/// with room (or is rebuilt) when it runs out.
pub struct SailRunsUpdater {
    fib: Arc<WithDefault<SailRuns>>,
    space: Space,
    /// Address intervals a batch changed, with their next hop.
    spans: Vec<Range<u32>>,
    /// Level-16 entries to store once the batch is written: (/16, entry).
    pending: Vec<(u32, u32)>,
    /// Line segments (first, count) and level-32 chunks the batch stops
    /// naming, retired once it is published.
    retiring_lines: Vec<(u32, u32)>,
    retiring_chunks: Vec<u16>,
    demand: Demand,
    scratch: Scratch,
    /// A refused batch left the space half accounted for: the next batch
    /// rebuilds.
    stale: bool,
}

impl SailRunsUpdater {
    /// Builds the structure from `rib`, with room for more lines and
    /// chunks.
    ///
    /// # Errors
    /// As [`SailRuns::build`]: a table beyond the limits, or memory the
    /// system refuses.
    pub fn new(rib: &Rib4) -> Result<Self, BuildError> {
        let (fib, space) = Self::with_room(&SailRuns::build(rib)?, Demand::default())?;
        Ok(SailRunsUpdater {
            fib: Arc::new(WithDefault::new(fib)),
            space,
            spans: Vec::new(),
            pending: Vec::new(),
            retiring_lines: Vec::new(),
            retiring_chunks: Vec::new(),
            demand: Demand::default(),
            scratch: Scratch::default(),
            stale: false,
        })
    }

    /// A compacted copy of `fib` with room to grow, at least `demand`, and
    /// its space.
    ///
    /// # Errors
    /// [`BuildError::OutOfMemory`] when the system refuses the copy.
    fn with_room(fib: &SailRuns, demand: Demand) -> Result<(SailRuns, Space), BuildError> {
        let (lines, chunks) = (fib.lines_in_use(), fib.chunks_32());
        let line_room = room(lines, MAX_LINES).max(demand.lines).min(MAX_LINES - lines);
        let chunk_room = room(chunks, usize::from(SPLIT)).max(demand.chunks).min(usize::from(SPLIT) - chunks);
        let copy = fib.compacted(line_room, chunk_room)?;
        let space = Space::of(&copy, lines, chunks);
        Ok((copy, space))
    }

    /// Moves to a compacted copy of the structure readers are served, with
    /// room for at least `demand` (a batch's, which found too little) and
    /// all of it free.
    ///
    /// # Errors
    /// [`BuildError::OutOfMemory`] when the system refuses the copy; the
    /// structure is as it was then.
    fn relocate(&mut self, demand: Demand) -> Result<u64, BuildError> {
        let (fib, space) = Self::with_room(&self.fib, demand)?;
        (self.fib, self.space) = (Arc::new(WithDefault::like(fib, &self.fib)), space);
        Ok(self.fib.footprint() as u64)
    }

    fn rebuild(&mut self, rib: &Rib4) -> Result<Applied, BuildError> {
        replace_updater(self, Self::new(rib), |updater| updater.fib.footprint(), |updater| updater.stale = true)
    }

    /// Writes the /16s the changed intervals `spans` (sorted, disjoint)
    /// touch into free space, queueing their level-16 entries in `pending`
    /// and what they stop naming in `retiring_lines` and `retiring_chunks`;
    /// `demand` counts what they take (short: some found no room, and what
    /// was queued must not be published).
    fn write_spans(&mut self, spans: &[Range<u32>], bytes_written: &mut u64) {
        self.pending.clear();
        self.retiring_lines.clear();
        self.retiring_chunks.clear();
        self.demand = Demand::default();
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut parts = std::mem::take(&mut scratch.parts);
        let Ok(()) = for_each_slash16(spans, &mut parts, |slash16, parts| {
            self.rewrite_16(slash16, parts, &mut scratch, bytes_written);
            Ok::<(), Infallible>(())
        });
        scratch.parts = parts;
        self.scratch = scratch;
    }

    /// The new answers of /16 `slash16` given the changed intervals inside
    /// it (`parts`), written into fresh lines (or a level-16 next hop), and
    /// the level-16 entry that publishes them, queued.
    fn rewrite_16(&mut self, slash16: u32, parts: &[Range<u32>], scratch: &mut Scratch, bytes_written: &mut u64) {
        let old16 = self.fib.level16[slash16 as usize].load(Ordering::Relaxed);
        // A /16 that held one next hop and is changed whole to another:
        // no line or chunk to read, write or retire.
        if let Some(next_hop) = whole_slash16(parts).filter(|&hop| old16 & CHUNK == 0 && hop <= NextHop::from(VALUE)) {
            if next_hop != old16 {
                self.pending.push((slash16, next_hop));
            }
            return;
        }
        self.read_16(old16, &mut scratch.old);
        scratch.answers.clone_from(&scratch.old);
        // The /24 whose next hops `scratch.deep` holds, patched by the
        // intervals that cover it in part.
        let mut partial: Option<usize> = None;
        for part in parts {
            debug_assert!(part.next_hop <= NextHop::from(VALUE), "the router holds next hops to max_next_hop");
            let next_hop = part.next_hop as u16;
            let (first24, last24) = (part.first >> 8 & 0xff, part.last >> 8 & 0xff);
            for slash24 in first24..=last24 {
                let low = if slash24 == first24 { part.first & 0xff } else { 0 };
                let high = if slash24 == last24 { part.last & 0xff } else { 0xff };
                if low == 0 && high == 0xff {
                    scratch.answers[slash24 as usize] = next_hop;
                    continue;
                }
                if partial != Some(slash24 as usize) {
                    if let Some(done) = partial.replace(slash24 as usize) {
                        scratch.answers[done] = self.settle_24(&scratch.deep, bytes_written);
                    }
                    self.read_24(scratch.answers[slash24 as usize], &mut scratch.deep);
                }
                scratch.deep[low as usize..=high as usize].fill(next_hop);
            }
        }
        if let Some(done) = partial {
            scratch.answers[done] = self.settle_24(&scratch.deep, bytes_written);
        }
        if scratch.answers == scratch.old {
            return;
        }
        let first = scratch.answers[0];
        let new16 = if first & SPLIT == 0 && scratch.answers.iter().all(|&answer| answer == first) {
            first.into()
        } else {
            self.fresh_lines(&scratch.answers, &mut scratch.lines, bytes_written)
        };
        // A level-32 chunk is the answer of one /24 only (most /16s have
        // none: one OR over the old answers tells).
        if scratch.old.iter().fold(0, |any, &old| any | old) & SPLIT != 0 {
            for (&old, &new) in scratch.old.iter().zip(&scratch.answers) {
                if old & SPLIT != 0 && old != new {
                    self.retiring_chunks.push(old & VALUE);
                }
            }
        }
        if old16 & CHUNK != 0 {
            self.retiring_lines.push((old16 & INDEX, line_count(old16) as u32));
        }
        self.pending.push((slash16, new16));
    }

    /// The 256 /24 answers of a /16 whose level-16 entry is `entry`.
    fn read_16(&self, entry: u32, answers: &mut Vec<u16>) {
        answers.clear();
        if entry & CHUNK == 0 {
            answers.resize(CHUNK_ENTRIES, entry as u16);
            return;
        }
        let (first, span) = ((entry & INDEX) as usize, CHUNK_ENTRIES / line_count(entry));
        for (part, cell) in self.fib.lines[first..first + line_count(entry)].iter().enumerate() {
            cell.get().answers((part * span) as u8, span, answers);
        }
    }

    /// The 256 next hops of a /24 whose answer is `value`.
    fn read_24(&self, value: u16, hops: &mut Vec<u16>) {
        hops.clear();
        if value & SPLIT == 0 {
            hops.resize(CHUNK_ENTRIES, value);
            return;
        }
        let start = usize::from(value & VALUE) * CHUNK_ENTRIES;
        hops.extend(self.fib.n32[start..start + CHUNK_ENTRIES].iter().map(|hop| hop.load(Ordering::Relaxed)));
    }

    /// The answer of a /24 of next hops `hops`: their one next hop, or a
    /// fresh level-32 chunk holding them (with no chunk free, one that is
    /// not written: the batch is short).
    fn settle_24(&mut self, hops: &[u16], bytes_written: &mut u64) -> u16 {
        if hops.iter().all(|&hop| hop == hops[0]) {
            return hops[0];
        }
        self.demand.chunks += 1;
        let Some(id) = self.space.chunks.pop() else {
            self.demand.short = true;
            return SPLIT;
        };
        let start = usize::from(id) * CHUNK_ENTRIES;
        for (cell, &hop) in self.fib.n32[start..start + CHUNK_ENTRIES].iter().zip(hops) {
            cell.store(hop, Ordering::Relaxed);
        }
        *bytes_written += size_of_val(hops) as u64;
        SPLIT | id
    }

    /// Writes the lines of a /16's `answers` into a free segment and
    /// returns the level-16 entry naming them (with no segment free, lines
    /// that are not written: the batch is short).
    fn fresh_lines(&mut self, answers: &[u16], lines: &mut Vec<Line>, bytes_written: &mut u64) -> u32 {
        lines.clear();
        let shift = pack(answers, lines);
        self.demand.lines += lines.len();
        let Some(first) = self.space.lines.allocate(lines.len() as u32) else {
            self.demand.short = true;
            return chunk_entry(shift, 0);
        };
        for (cell, line) in self.fib.lines[first as usize..].iter().zip(lines.iter()) {
            cell.set(line);
        }
        *bytes_written += size_of_val(lines.as_slice()) as u64;
        chunk_entry(shift, first as usize)
    }
}

impl Updater<u32> for SailRunsUpdater {
    fn name(&self) -> &str {
        NAME
    }

    fn fib(&self) -> Arc<dyn Fib<u32>> {
        self.fib.clone()
    }

    fn set_default(&mut self, next_hop: NextHop) -> bool {
        self.fib.set_default(next_hop);
        true
    }

    fn max_next_hop(&self) -> NextHop {
        VALUE.into()
    }

    fn copy_for_batch(&mut self) -> Result<u64, BuildError> {
        if self.stale {
            return Ok(0);
        }
        self.relocate(Demand::default())
    }

    fn apply(&mut self, rib: &Rib4, changed: &[Prefix4], context: ApplyContext) -> Result<Applied, BuildError> {
        if self.stale {
            return self.rebuild(rib);
        }
        self.space.reclaim(context.oldest_held);
        changed_spans(rib, changed, &mut self.spans);
        let spans = std::mem::take(&mut self.spans);
        let mut bytes_written = 0;
        self.write_spans(&spans, &mut bytes_written);
        let relocated = self.demand.short;
        if relocated {
            // The batch wrote only space no reader reaches: again, on a
            // compacted copy of what readers are served with room for it.
            match self.relocate(self.demand) {
                Ok(copied) => bytes_written = copied,
                Err(refused) => {
                    // Nothing of the batch is published, but its space is
                    // half accounted for.
                    self.spans = spans;
                    self.stale = true;
                    return Err(refused);
                }
            }
            self.write_spans(&spans, &mut bytes_written);
        }
        self.spans = spans;
        if self.demand.short {
            return self.rebuild(rib);
        }
        for &(slash16, entry) in &self.pending {
            self.fib.level16[slash16 as usize].store(entry, Ordering::Release);
        }
        bytes_written += (self.pending.len() * size_of::<u32>()) as u64;
        for &segment in &self.retiring_lines {
            self.space.retired_lines.retire(context.published, segment);
        }
        for &id in &self.retiring_chunks {
            self.space.retired_chunks.retire(context.published, id);
        }
        self.fib.prefixes.store(rib.len(), Ordering::Relaxed);
        Ok(Applied { rebuilt: false, relocated, bytes_written })
    }
}

/// Registry updater for `sail-runs`: in place, copy on write a /16 at a
/// time ([`SailRunsUpdater`]).
///
/// # Errors
/// [`BuildError::Limit`] when the table is beyond the limits, or `options`
/// asks for next hops above 2^15 - 1.
pub fn updater(rib: &Rib4, options: &BuildOptions) -> Result<Box<dyn Updater<u32>>, BuildError> {
    if options.max_next_hop > NextHop::from(VALUE) {
        return Err(next_hop_refused(options.max_next_hop).into());
    }
    Ok(Box::new(SailRunsUpdater::new(rib)?))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;
    use std::sync::Arc;

    use super::super::{SailRuns, CHUNK};
    use super::SailRunsUpdater;
    use crate::addr::Prefix4;
    use crate::fib::Figure;
    use crate::file::FileWriter;
    use crate::live::{ApplyContext, Updater};
    use crate::nexthop::{Label, Mapping, NextHopTable};
    use crate::random::XorShift32;
    use crate::rib::Rib4;
    use crate::router::{assert_matches_rib, Router, Update, Window};

    fn label(hop: u64) -> Label {
        Label::Number(hop - 1)
    }

    /// A prefix of `prefix_len` at the `index`-th /24 from 10.0.0.0.
    fn at_24(index: u32, prefix_len: u8) -> Prefix4 {
        Prefix4::new(0x0a00_0000 | index << 8, prefix_len).unwrap()
    }

    fn router_over(rib: Rib4) -> Router {
        Router::new("sail-runs", rib, NextHopTable::new(Mapping::Modulo(1000)), Window::Count(1)).unwrap()
    }

    /// The router's statistic `key`.
    fn count(router: &Router, key: &str) -> u64 {
        match router.reader().snapshot().fib().stats().get(key) {
            Some(Figure::Count(count)) => *count,
            other => panic!("{key}: {other:?}"),
        }
    }

    #[test]
    fn lines_and_chunks_are_reused_only_past_readers_and_relocate_when_out() {
        let mut router = router_over(crate::rib::rib_of(&[("10.0.0.0/8", 1)]));
        let held = router.reader().snapshot();
        // 2,000 /24s split in two, each in its own batch: a level-32 chunk
        // each, and every batch fresh lines for its /16, where the build
        // left room for 1,024 of each. The held reader keeps every retired
        // line and chunk from reuse.
        for index in 0..2000 {
            router
                .apply(&[Update::Announce { prefix: at_24(index, 25), value: label(2 + u64::from(index % 50)) }])
                .unwrap();
        }
        assert!(router.stats().relocations >= 1, "{:?}", router.stats());
        assert_eq!(router.stats().full_rebuilds, 0);
        assert_matches_rib(&router);
        assert_eq!((count(&router, "chunks_24"), count(&router, "chunks_32")), (8, 2000));
        // The held generation's structure was updated a /16 at a time until
        // the relocation, never in lines or chunks it could still reach:
        // per address, the old answer or the new one.
        for index in 0..2000 {
            let (low, high) = (0x0a00_0000 | index << 8, 0x0a00_0080 | index << 8);
            assert!([1, 2 + index % 50].contains(&held.fib().lookup(low)), "{low:#x}");
            assert_eq!(held.fib().lookup(high), 1, "{high:#x}");
        }
        drop(held);
        for index in 0..2000 {
            router.apply(&[Update::Withdraw { prefix: at_24(index, 25) }]).unwrap();
        }
        // Every /16 answers one next hop again: nothing is named.
        assert_eq!((count(&router, "lines"), count(&router, "chunks_32")), (0, 0));
        assert_matches_rib(&router);
        // With no reader holding old generations, the same updates again
        // reuse what they retired: no relocation.
        let relocations = router.stats().relocations;
        for index in 0..2000 {
            router.apply(&[Update::Announce { prefix: at_24(index, 25), value: label(7) }]).unwrap();
        }
        assert_eq!((router.stats().relocations, router.stats().full_rebuilds), (relocations, 0));
        assert_matches_rib(&router);
        assert_eq!(router.reader().lookup(0x0a00_0a7f), 7);
        assert_eq!(router.reader().lookup(0x0a00_0a80), 1);
    }

    #[test]
    fn what_a_batch_retires_keeps_its_answers_until_no_reader_holds_it() {
        // A reader that loaded 10.0/16's level-16 entry before each batch
        // and reads below it only after all of them, holding generation 1
        // all along: the lines and level-32 chunks each entry names must
        // still give the answers of its time.
        let mut rib = crate::rib::rib_of(&[("10.0.0.0/8", 1)]);
        let mut updater = SailRunsUpdater::new(&rib).unwrap();
        let fib = updater.fib.clone();
        let mut loaded = Vec::new();
        for index in 0..60u32 {
            let entry = fib.level16[0x0a00].load(Ordering::Acquire);
            let answers: Vec<_> = (0..256).map(|b| rib.lookup(0x0a00_0000 | b << 8 | b)).collect();
            loaded.push((entry, answers));
            // A /25, then its /24 with another next hop: fresh lines each
            // batch, and a fresh level-32 chunk for the /24 each (the /25's
            // retired by the /24's).
            let prefix = at_24(index / 2 % 256, 25 - (index % 2) as u8);
            rib.insert(prefix, 2 + index % 7);
            let context = ApplyContext { published: u64::from(index) + 1, oldest_held: 1, max_next_hop: 8 };
            let applied = updater.apply(&rib, &[prefix], context).unwrap();
            assert!(!applied.rebuilt && !applied.relocated, "batch {index}: {applied:?}");
        }
        for (entry, answers) in &loaded {
            for b in 0..256u32 {
                let addr = 0x0a00_0000 | b << 8 | b;
                let got = if entry & CHUNK == 0 { *entry } else { fib.below16(*entry, addr) };
                assert_eq!(got, answers[b as usize], "{addr:#x} under {entry:#x}");
            }
        }
        // Once the reader lets go, the same updates again take back what
        // the first ones retired.
        let allocated = (fib.lines.len(), fib.n32.len());
        for index in 0..60u32 {
            let prefix = at_24(index / 2 % 256, 25 - (index % 2) as u8);
            rib.insert(prefix, 3 + index % 5);
            let generation = u64::from(index) + 61;
            let context = ApplyContext { published: generation, oldest_held: generation, max_next_hop: 8 };
            updater.apply(&rib, &[prefix], context).unwrap();
        }
        assert!(Arc::ptr_eq(&fib, &updater.fib), "no relocation");
        assert_eq!((fib.lines.len(), fib.n32.len()), allocated);
        for addr in (0..1 << 16).map(|low| 0x0a00_0000 | low) {
            assert_eq!(fib.lookup(addr), rib.lookup(addr), "{addr:#x}");
        }
    }

    #[test]
    fn an_updated_structure_saves_as_a_fresh_build_of_its_table() {
        // Random nested routes in three /16s and across them, announced and
        // withdrawn in batches of 1 to 8, with a reader holding a generation
        // now and then: every batch answers as the RIB, and the structure
        // saved (compacted) is the file of a fresh build, byte for byte.
        let mut rng = XorShift32::new(7);
        let mut rib = crate::rib::rib_of(&[("10.0.0.0/8", 1)]);
        let mut updater = SailRunsUpdater::new(&rib).unwrap();
        let mut held = 1;
        for generation in 1..400u64 {
            let mut changed = Vec::new();
            for _ in 0..=rng.next() % 8 {
                let addr = 0x0a00_0000 | (rng.next() % 3) << 16 | (rng.next() & 0x1ff) << 7;
                let prefix = Prefix4::truncating(addr, [14, 16, 20, 23, 24, 25, 30, 32][rng.next() as usize % 8]);
                if rng.next().is_multiple_of(3) {
                    rib.remove(prefix);
                } else {
                    rib.insert(prefix, 1 + rng.next() % 9);
                }
                changed.push(prefix);
            }
            if rng.next().is_multiple_of(16) {
                held = generation;
            }
            let context = ApplyContext { published: generation, oldest_held: held, max_next_hop: 9 };
            updater.apply(&rib, &changed, context).unwrap();
            for range in rib.ranges(0x0a00_0000, 0x0a03_ffff) {
                for addr in [range.first, range.last] {
                    assert_eq!(updater.fib.lookup(addr), range.next_hop, "batch {generation} at {addr:#x}");
                }
            }
        }
        let file_of = |fib: &SailRuns| {
            let mut file = FileWriter::new();
            file.created = Some(0);
            fib.save(&mut file.family::<u32>()).unwrap();
            file.to_bytes()
        };
        let fresh = SailRuns::build(&rib).unwrap();
        assert!(updater.fib.footprint() > fresh.footprint(), "the live arrays have room");
        assert_eq!(file_of(&updater.fib), file_of(&fresh));
    }

    #[test]
    fn a_batch_larger_than_the_room_relocates_once_with_room_for_it() {
        // 3,000 /16s with a /24 each: 3,000 lines in use, room for 2,524
        // more. A new route over them all (a /3: the default route is kept
        // aside from the structure) rewrites every one in one batch: it
        // needs 3,000 fresh lines at once.
        let mut rib = crate::rib::rib_of(&[("0.0.0.0/3", 1)]);
        for slash16 in 0..3000u32 {
            rib.insert(Prefix4::new(0x0a00_0000 + (slash16 << 16) + 0x100, 24).unwrap(), 2);
        }
        let mut router = router_over(rib);
        assert_eq!((count(&router, "lines"), count(&router, "lines_allocated")), (3000, 3000 + 2524));
        router.apply(&[Update::Announce { prefix: "0.0.0.0/3".parse().unwrap(), value: label(3) }]).unwrap();
        assert_eq!((router.stats().relocations, router.stats().full_rebuilds), (1, 0));
        assert_matches_rib(&router);
        assert_eq!(router.reader().lookup(0x0a00_0100), 2);
        assert_eq!(router.reader().lookup(0x0a00_0000), 3);
        assert!(count(&router, "lines_allocated") >= 6000, "room for the batch beside what is in use");
    }

    #[test]
    fn a_chunk_grows_to_sixteen_lines_and_back_to_one() {
        // 10.0/16 gets a different next hop in every other /24, one batch
        // at a time, spread out (bit-reversed order): 1 line, then 2, 4, 8
        // and 16 as its runs grow; then they are withdrawn again, down to a
        // next hop.
        let mut router = router_over(crate::rib::rib_of(&[("10.0.0.0/8", 1)]));
        let mut seen = Vec::new();
        for index in (0..128u32).map(|index| index.reverse_bits() >> 24) {
            router
                .apply(&[Update::Announce { prefix: at_24(index, 24), value: label(2 + u64::from(index % 3)) }])
                .unwrap();
            let lines = count(&router, "lines");
            if seen.last() != Some(&lines) {
                seen.push(lines);
            }
        }
        assert_eq!(seen, [1, 2, 4, 8, 16]);
        assert_matches_rib(&router);
        for index in (0..256).step_by(2) {
            router.apply(&[Update::Withdraw { prefix: at_24(index, 24) }]).unwrap();
            assert_eq!(router.reader().lookup(0x0a00_0000 | index << 8), 1);
        }
        assert_eq!(count(&router, "lines"), 0);
        assert_eq!(router.stats().full_rebuilds, 0);
        assert_matches_rib(&router);
    }

    #[test]
    fn a_batch_beyond_the_chunk_id_limit_is_refused_and_changes_nothing() {
        // 2^15 level-32 chunks: all the IDs a 15-bit value names.
        let mut rib = Rib4::new();
        rib.insert("10.0.0.0/8".parse().unwrap(), 1);
        for index in 0..1 << 15 {
            rib.insert(at_24(index, 25), 2);
        }
        let mut router = router_over(rib);
        let before = router.rib().ranges(0, u32::MAX);
        let refused = router.apply(&[Update::Announce { prefix: at_24(1 << 15, 25), value: label(3) }]);
        assert!(refused.unwrap_err().to_string().contains("level-32 chunk"), "refused for its chunk IDs");
        assert_eq!(router.rib().ranges(0, u32::MAX), before);
        assert_eq!(router.reader().lookup(0x0a80_0000), 1);
        assert_matches_rib(&router);
        // The engine takes updates that fit.
        router
            .apply(&[
                Update::Withdraw { prefix: at_24(0, 25) },
                Update::Announce { prefix: at_24(1 << 15, 25), value: label(3) },
            ])
            .unwrap();
        assert_eq!(router.reader().lookup(0x0a80_0000), 3);
        assert_eq!(router.reader().lookup(0x0a00_0000), 1);
        assert_matches_rib(&router);
    }

    #[test]
    fn next_hops_beyond_15_bits_are_refused_by_name() {
        let options = crate::fib::BuildOptions::new(1 << 15);
        let error = super::updater(&Rib4::new(), &options).err().expect("refused").to_string();
        assert!(error.contains("the 15-bit next hop of a value") && error.contains("sail-wide"), "{error}");
    }
}
