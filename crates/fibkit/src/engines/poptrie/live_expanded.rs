//! Incremental updates of a live `poptrie16x12` ([`Expanded`]) while
//! readers search it: the updater of its second stage.
//!
//! For every /S slot (a `first` entry) that an interval whose answer
//! changed overlaps ([`changed_spans`]):
//!
//! - one interval over the whole slot: the entry becomes that next hop,
//!   and the slot's block, if it had one, is retired with every subtree
//!   below it;
//! - a slot that is a next hop: each /(S + X) cell of it that an interval
//!   touches is rewritten as a direct slot of `poptrieS` is
//!   ([`SubtreeWriter::rewrite_entry`], `S + X` bits down); if the cells
//!   still share one next hop the entry takes it, else a free block is
//!   filled (the untouched cells the old next hop) and the entry names it;
//! - a slot with a block: each touched cell's entry is rewritten the same
//!   way (copy on write of the path to the changes below it); if every
//!   entry of the block is then one next hop, the `first` entry takes it
//!   and the block is retired.
//!
//! Once every touched slot of the batch is written, the changed block
//! entries are stored with `Release`, then the changed `first` entries: a
//! reader that loads an entry (`Acquire`) finds written whatever it points
//! to. Replaced blocks of the node and leaf arrays wait in the
//! [`SubtreeWriter`]'s limbo, replaced blocks of entries in this updater's,
//! until no reader holds the generation they were retired in. Out of free
//! nodes, leaves or blocks, the updater undoes the slot, moves to a larger
//! copy of the structure once per batch and rewrites the slot there; then
//! it rebuilds the whole structure. A copy whose memory the system refuses
//! fails the batch ([`BuildError::OutOfMemory`]) with no entry stored.
//!
//! The build leaves the nodes above depth S + X in the node array,
//! unreached (module docs of `expanded.rs`); the updater never frees them,
//! and a block entry's root node, one of its parent's children there, is
//! retired alone.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use super::build::{direct_limit, Prepared};
use super::live::{grown, leaf_max, LeafWidth, Widening};
use super::live_subtree::{group_by_slot, region_last, slot_first, Failure, SubtreeWriter};
use super::{Expanded, Leaf, PoptrieOptions, DIRECT_LEAF, DIRECT_MAX, MAX_BLOCK_ENTRIES};
use crate::addr::{Address, Prefix};
use crate::error::{BuildError, Limit};
use crate::fib::{BuildOptions, Fib};
use crate::live::{changed_spans, replace_updater, Applied, ApplyContext, Limbo, Updater, WithDefault};
use crate::mem::{try_copy_cells_grown, try_reserve};
use crate::rib::{Range, Rib};
use crate::NextHop;

/// What rewriting a slot did, applied once it is written whole.
#[derive(Clone, Copy, Debug, Default)]
struct Rewritten {
    /// The slot's new `first` entry.
    first: Option<u32>,
    /// The block it filled (its entries written, its `first` entry to
    /// store).
    filled: Option<u32>,
    /// The block it retired.
    dropped: Option<u32>,
    /// The block whose entries it changed (in `cell_pending`), with the
    /// count of its entries that are nodes then.
    changed: Option<(u32, u32)>,
}

/// The array named when the system refuses the room of the updater's
/// lists of free blocks and of blocks' inner entries.
const BOOKKEEPING: &str = "block bookkeeping";

/// The updater of `poptrieSxX` ([`Expanded`], module docs above).
pub struct ExpandedUpdater<A: Address, L: Leaf, const S: u32, const X: u32> {
    fib: Arc<WithDefault<Expanded<A, L, S, X>>>,
    writer: SubtreeWriter<A, L>,
    /// Blocks no entry names and no reader can still be reading.
    free_blocks: Vec<u32>,
    /// Retired blocks, until no reader can be searching them.
    block_limbo: Limbo<u32>,
    /// For each block, its entries that are nodes (while none are, the
    /// block may be one next hop).
    inner: Vec<u32>,
    /// The intervals a batch changed ([`changed_spans`]).
    spans: Vec<Range<A>>,
    /// The slots they touch, and a slot's cells ([`group_by_slot`]).
    slots: Vec<(u32, usize, usize)>,
    cells: Vec<(u32, usize, usize)>,
    /// A block's entries, as they will be.
    entries: Vec<u32>,
    /// The changed entries of the slot being rewritten (cell, entry).
    cell_pending: Vec<(u32, u32)>,
    /// Block entries (index into `blocks`) and `first` entries to store
    /// once the batch's subtrees are all written.
    pending_blocks: Vec<(usize, u32)>,
    pending_first: Vec<(u32, u32)>,
    /// The bookkeeping no longer matches the structure: rebuild first.
    stale: bool,
    /// The batch being applied moved to a larger copy of the structure.
    relocated: bool,
}

impl<A: Address, L: Leaf, const S: u32, const X: u32> ExpandedUpdater<A, L, S, X> {
    /// Builds the structure from `rib` with free space for updates.
    ///
    /// # Errors
    /// The build's ([`BuildError`]).
    pub fn new(rib: &Rib<A>) -> Result<Self, BuildError> {
        let prepared = Prepared::new(rib, &PoptrieOptions::default());
        let name = Expanded::<A, L, S, X>::engine_name();
        let (fib, used, blocks_used) = Expanded::<A, L, S, X>::assemble_with_slack(prepared, name, true)?;
        let capacity = fib.blocks.len() >> X;
        let inner = (0..capacity)
            .map(|block| {
                let entries = &fib.blocks[block << X..(block + 1) << X];
                entries.iter().filter(|entry| entry.load(Ordering::Relaxed) & DIRECT_LEAF == 0).count() as u32
            })
            .collect();
        Ok(ExpandedUpdater {
            writer: SubtreeWriter::new(used, fib.trie.capacity()),
            free_blocks: (blocks_used as u32..capacity as u32).rev().collect(),
            block_limbo: Limbo::default(),
            inner,
            fib: Arc::new(WithDefault::new(fib)),
            spans: Vec::new(),
            slots: Vec::new(),
            cells: Vec::new(),
            entries: Vec::new(),
            cell_pending: Vec::new(),
            pending_blocks: Vec::new(),
            pending_first: Vec::new(),
            stale: false,
            relocated: false,
        })
    }

    /// The live structure.
    pub fn expanded(&self) -> &Arc<WithDefault<Expanded<A, L, S, X>>> {
        &self.fib
    }

    fn rebuild(&mut self, rib: &Rib<A>) -> Result<Applied, BuildError> {
        replace_updater(self, Self::new(rib), |updater| updater.fib.footprint(), |updater| updater.stale = true)
    }

    /// Moves to a copy of the structure with larger node and leaf arrays,
    /// and more blocks if none is free, in which every retired block is
    /// free (module docs of `live.rs`).
    ///
    /// # Errors
    /// [`BuildError::OutOfMemory`] when the system refuses the copy or its
    /// bookkeeping's room; the updater and its structure are as they were
    /// then.
    fn relocate(&mut self, bytes_written: &mut u64) -> Result<(), BuildError> {
        let fib = &*self.fib;
        let from = fib.trie.capacity();
        let to = grown(self.writer.live, from);
        let capacity = fib.blocks.len() >> X;
        let grown_capacity = if self.free_blocks.is_empty() && self.block_limbo.is_empty() {
            (capacity + capacity / 2 + 4).min(MAX_BLOCK_ENTRIES >> X).max(capacity)
        } else {
            capacity
        };
        // Every array of the copy first: nothing changes if one is refused.
        // SAFETY: the updater is the structure's only writer (so for the
        // two copies below).
        let trie = unsafe { fib.trie.copy_grown(to) }.map_err(|error| error.of(&fib.name))?;
        let refused = |array| move |error| BuildError::out_of_memory(&fib.name, array, error);
        let free = || AtomicU32::new(DIRECT_LEAF);
        // SAFETY: as above.
        let first = unsafe { try_copy_cells_grown(&fib.first, 0, free) }.map_err(refused("first array"))?;
        // SAFETY: as above.
        let blocks = unsafe { try_copy_cells_grown(&fib.blocks, grown_capacity << X, free) };
        let blocks = blocks.map_err(refused("block array"))?;
        let relocated = Expanded { trie, first, blocks, name: fib.name.clone() };
        let new_blocks = grown_capacity - capacity;
        try_reserve(&mut self.free_blocks, self.block_limbo.len() + new_blocks).map_err(refused(BOOKKEEPING))?;
        let new_inner = grown_capacity.saturating_sub(self.inner.len());
        try_reserve(&mut self.inner, new_inner).map_err(refused(BOOKKEEPING))?;
        self.writer.relocated(from, to);
        let mut limbo = std::mem::take(&mut self.block_limbo);
        limbo.drain(|block| self.free_blocks.push(block));
        self.free_blocks.extend((capacity as u32..grown_capacity as u32).rev());
        self.inner.resize(grown_capacity, 0);
        *bytes_written += relocated.footprint() as u64;
        self.fib = Arc::new(WithDefault::like(relocated, &self.fib));
        self.relocated = true;
        Ok(())
    }

    /// Rewrites slot `slot`, which the intervals `spans[from..to]` touch
    /// (module docs): its subtrees and blocks written, what to store and
    /// retire returned.
    fn rewrite_slot(&mut self, slot: u32, from: usize, to: usize) -> Result<Rewritten, Failure> {
        let fib = &*self.fib;
        let trie = &fib.trie;
        let spans = &self.spans[from..to];
        let first = slot_first(A::ZERO, 0, S, slot);
        let last = region_last(first, S);
        let entry = fib.first[slot as usize].load(Ordering::Relaxed);
        let leaf = |next_hop: NextHop| {
            if next_hop > DIRECT_MAX {
                Err(Failure::from(direct_limit(Limit::NextHop, next_hop.into())))
            } else {
                Ok(DIRECT_LEAF | next_hop)
            }
        };
        let mut rewritten = Rewritten::default();
        if let [whole] = spans {
            if whole.first <= first && whole.last >= last {
                let now = leaf(whole.next_hop)?;
                if entry & DIRECT_LEAF == 0 {
                    for cell in &fib.blocks[(entry as usize) << X..(entry as usize + 1) << X] {
                        self.writer.replace_entry(trie, cell.load(Ordering::Relaxed));
                    }
                    rewritten.dropped = Some(entry);
                }
                rewritten.first = (now != entry).then_some(now);
                return Ok(rewritten);
            }
        }
        group_by_slot(spans, first, S, X, &mut self.cells);
        self.entries.clear();
        self.cell_pending.clear();
        if entry & DIRECT_LEAF != 0 {
            self.entries.resize(1 << X, entry);
            for &(cell, from, to) in &self.cells {
                let cell_first = slot_first(first, S, X, cell);
                if let Some(now) = self.writer.rewrite_entry(trie, entry, cell_first, S + X, &spans[from..to])? {
                    self.entries[cell as usize] = now;
                }
            }
        } else {
            for &(cell, from, to) in &self.cells {
                let cell_first = slot_first(first, S, X, cell);
                let old = fib.blocks[(entry as usize) << X | cell as usize].load(Ordering::Relaxed);
                if let Some(now) = self.writer.rewrite_entry(trie, old, cell_first, S + X, &spans[from..to])? {
                    self.cell_pending.push((cell, now));
                }
            }
            if self.cell_pending.is_empty() {
                return Ok(rewritten);
            }
            let block = &fib.blocks[(entry as usize) << X..(entry as usize + 1) << X];
            let node = |entry: u32| u32::from(entry & DIRECT_LEAF == 0);
            let inner = self.cell_pending.iter().fold(self.inner[entry as usize], |inner, &(cell, now)| {
                inner + node(now) - node(block[cell as usize].load(Ordering::Relaxed))
            });
            if inner > 0 {
                rewritten.changed = Some((entry, inner));
                return Ok(rewritten);
            }
            // Every entry a next hop: perhaps all one (the changed entries
            // are in cell order).
            let now = self.cell_pending[0].1;
            let mut changed = self.cell_pending.iter().map(|&(cell, _)| cell as usize).peekable();
            let uniform = self.cell_pending.iter().all(|&(_, other)| other == now)
                && block
                    .iter()
                    .enumerate()
                    .all(|(cell, entry)| changed.next_if_eq(&cell).is_some() || entry.load(Ordering::Relaxed) == now);
            if uniform {
                rewritten.dropped = Some(entry);
                rewritten.first = Some(now);
            } else {
                rewritten.changed = Some((entry, 0));
            }
            return Ok(rewritten);
        }
        let now = self.entries[0];
        if self.entries.iter().all(|&other| other == now) {
            debug_assert!(now & DIRECT_LEAF != 0, "cells never share a node");
            rewritten.first = (now != entry).then_some(now);
            return Ok(rewritten);
        }
        let block = self.free_blocks.pop().ok_or(Failure::Full)?;
        let entries = &fib.blocks[(block as usize) << X..(block as usize + 1) << X];
        for (cell, &now) in entries.iter().zip(&self.entries) {
            cell.store(now, Ordering::Relaxed);
        }
        self.writer.bytes_written += 4 << X;
        let inner = self.entries.iter().filter(|&&entry| entry & DIRECT_LEAF == 0).count() as u32;
        rewritten.first = Some(block);
        rewritten.filled = Some(block);
        rewritten.changed = None;
        self.inner[block as usize] = inner;
        Ok(rewritten)
    }
}

impl<A: Address, L: Leaf, const S: u32, const X: u32> Updater<A> for ExpandedUpdater<A, L, S, X> {
    fn name(&self) -> &str {
        &self.fib.name
    }

    fn fib(&self) -> Arc<dyn Fib<A>> {
        self.fib.clone()
    }

    fn set_default(&mut self, next_hop: NextHop) -> bool {
        self.fib.set_default(next_hop);
        true
    }

    fn max_next_hop(&self) -> NextHop {
        leaf_max::<L>()
    }

    fn copy_for_batch(&mut self) -> Result<u64, BuildError> {
        let mut bytes_written = 0;
        if !self.stale {
            self.relocate(&mut bytes_written)?;
        }
        Ok(bytes_written)
    }

    fn apply(&mut self, rib: &Rib<A>, changed: &[Prefix<A>], context: ApplyContext) -> Result<Applied, BuildError> {
        if self.stale {
            return self.rebuild(rib);
        }
        self.writer.reclaim(context.oldest_held);
        let mut limbo = std::mem::take(&mut self.block_limbo);
        limbo.reclaim(context.oldest_held, |block| self.free_blocks.push(block));
        self.block_limbo = limbo;
        self.writer.bytes_written = 0;
        self.relocated = false;
        let mut bytes_written = 0;
        changed_spans(rib, changed, &mut self.spans);
        group_by_slot(&self.spans, A::ZERO, 0, S, &mut self.slots);
        self.pending_blocks.clear();
        self.pending_first.clear();
        let slots = std::mem::take(&mut self.slots);
        for &(slot, from, to) in &slots {
            let rewritten = loop {
                self.writer.begin();
                match self.rewrite_slot(slot, from, to) {
                    Ok(rewritten) => {
                        self.writer.commit(context.published);
                        break rewritten;
                    }
                    Err(Failure::Full) if !self.relocated => {
                        self.writer.undo();
                        if let Err(refused) = self.relocate(&mut bytes_written) {
                            // Nothing of the batch is published yet.
                            self.stale = true;
                            return Err(refused);
                        }
                    }
                    Err(Failure::Full) => return self.rebuild(rib),
                    Err(Failure::Refused(stop)) => {
                        self.stale = true;
                        return Err(stop.named(self.name()));
                    }
                }
            };
            if let Some((block, inner)) = rewritten.changed {
                self.inner[block as usize] = inner;
                let base = (block as usize) << X;
                self.pending_blocks.extend(self.cell_pending.iter().map(|&(cell, now)| (base | cell as usize, now)));
            }
            if let Some(block) = rewritten.dropped {
                self.block_limbo.retire(context.published, block);
            }
            self.pending_first.extend(rewritten.first.map(|now| (slot, now)));
        }
        self.slots = slots;
        let fib = &*self.fib;
        bytes_written += self.writer.store_bases(&fib.trie);
        for &(index, entry) in &self.pending_blocks {
            fib.blocks[index].store(entry, Ordering::Release);
        }
        for &(slot, entry) in &self.pending_first {
            fib.first[slot as usize].store(entry, Ordering::Release);
        }
        bytes_written += self.writer.bytes_written + 4 * (self.pending_blocks.len() + self.pending_first.len()) as u64;
        fib.trie.routes.store(rib.len(), Ordering::Relaxed);
        fib.trie.batches.fetch_add(1, Ordering::Relaxed);
        Ok(Applied { rebuilt: false, relocated: self.relocated, bytes_written })
    }
}

impl<A: Address, L: Leaf, const S: u32, const X: u32> LeafWidth<A> for ExpandedUpdater<A, L, S, X> {
    fn build(rib: &Rib<A>) -> Result<Self, BuildError> {
        Self::new(rib)
    }

    fn footprint(&self) -> usize {
        self.fib.footprint()
    }
}

/// Registry updater for `poptrieSxX`: [`Widening`] of
/// [`ExpandedUpdater`]s.
///
/// # Errors
/// The build's ([`BuildError`]).
pub fn updater_expanded<A: Address, const S: u32, const X: u32>(
    rib: &Rib<A>,
    options: &BuildOptions,
) -> Result<Box<dyn Updater<A>>, BuildError> {
    let updater =
        Widening::<ExpandedUpdater<A, u16, S, X>, ExpandedUpdater<A, u32, S, X>>::new(rib, options.max_next_hop)?;
    Ok(Box::new(updater))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::poptrie::PoptrieUpdater;

    /// Routes in `count` /16s from 2400::, each with a /32, a /48 and a
    /// /128 below a /20 (blocks and subtrees in every /16).
    fn routes(count: u32, round: u32) -> Vec<(Prefix<u128>, NextHop)> {
        (0..count)
            .flat_map(|index| {
                let base = (0x2400u128 + u128::from(index)) << 112 | u128::from(round) << 100;
                let hop = 1 + (index + round) % 50;
                [
                    (Prefix::truncating(base, 20), hop),
                    (Prefix::truncating(base | 0xdb8 << 80, 32), hop + 1),
                    (Prefix::truncating(base | 0xdb8 << 80 | 7 << 64, 48), hop + 2),
                    (Prefix::truncating(base | 0xdb8 << 80 | 0xff, 128), hop + 3),
                ]
            })
            .collect()
    }

    fn answers_as(fib: &dyn Fib<u128>, rib: &Rib<u128>) {
        for range in rib.ranges(0, u128::MAX) {
            for addr in [range.first, range.last] {
                assert_eq!(fib.lookup(addr), range.next_hop, "{} at {addr:#x}", fib.name());
            }
        }
    }

    /// While readers hold an old generation nothing is reclaimed: the
    /// updaters run out of free nodes, leaves and (`poptrie16x12`) blocks
    /// and move to larger copies, answering as the RIB all along; then, the
    /// generations released, they go on in place.
    #[test]
    fn held_generations_make_the_updaters_relocate() {
        type New = fn(&Rib<u128>) -> Box<dyn Updater<u128>>;
        let updaters: [New; 3] = [
            |rib| Box::new(PoptrieUpdater::<u128, u16, 16>::new(rib).unwrap()),
            |rib| Box::new(PoptrieUpdater::<u128, u32, 18>::new(rib).unwrap()),
            |rib| Box::new(ExpandedUpdater::<u128, u16, 16, 12>::new(rib).unwrap()),
        ];
        for new in updaters {
            let mut rib = Rib::new();
            for (prefix, hop) in routes(8, 0) {
                rib.insert(prefix, hop);
            }
            let mut updater = new(&rib);
            let mut relocations = 0;
            for round in 1..40u32 {
                let changed: Vec<Prefix<u128>> = routes(8 + round * 4, round)
                    .into_iter()
                    .map(|(prefix, hop)| {
                        rib.insert(prefix, hop);
                        prefix
                    })
                    .collect();
                let oldest_held = if round < 30 { 0 } else { u64::from(round) };
                let context = ApplyContext { published: u64::from(round), oldest_held, max_next_hop: 1000 };
                let applied = updater.apply(&rib, &changed, context).unwrap();
                assert!(!applied.rebuilt, "{}: round {round}", updater.name());
                relocations += u32::from(applied.relocated);
                answers_as(&*updater.fib(), &rib);
            }
            assert!(relocations > 0, "{}: never out of space", updater.name());
        }
    }
}
