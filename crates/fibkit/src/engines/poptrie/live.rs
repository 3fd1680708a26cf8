//! Incremental updates of a live IPv4 Poptrie with direct pointing
//! (section 3.5 of the paper), while readers search it.
//!
//! The unit of replacement is the subtree of one `direct` entry: for every
//! direct slot that an interval whose answer changed overlaps
//! ([`changed_spans`]: for a default route under a full table, the gaps
//! between the more specific routes, not every slot), the updater takes
//! the slot's runs as the structure holds them (decoded from its nodes and
//! leaves, contiguous in memory; not needed when one interval covers the
//! slot), splices in each interval's one next hop (no walk of the RIB),
//! skips the slot if its runs did not change, and otherwise builds the
//! slot's subtree anew from those runs (what the full build would put
//! there, route aggregation included), writes its nodes and leaves into
//! free segments of the node and leaf arrays (one contiguous
//! segment each, indexes relocated), and, once every touched slot of the
//! batch is written, stores the slots' `direct` entries with `Release`. The
//! paper replaces the smallest affected subtree and swaps one `base1`/`base0`
//! word, or the whole top-level array when a prefix is shorter than `s`;
//! here `direct` entries are atomic words rewritten in place, so the
//! top-level array is never copied, and a subtree below `s` bits is small
//! (a /18 slot holds at most 2^14 addresses).
//!
//! The replaced segments wait in a limbo, tagged with the generation being
//! served, until the router reports that no reader holds it; then they
//! return to the free space (neighbours coalesce). When a subtree finds no
//! free segment large enough, the updater rebuilds the whole structure
//! (counted as a full rebuild). Poptrie without direct pointing (`s = 0`)
//! would replace the root's subtree, the whole trie, on every update: the
//! router rebuilds it instead ([`crate::live::FullRebuild`]).

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use super::build::{build_slot, direct_limit, Boundaries, Prepared};
use super::{Leaf, Node, Poptrie, PoptrieOptions, DIRECT_LEAF, DIRECT_MAX};
use crate::addr::Prefix4;
use crate::error::{BuildError, Limit};
use crate::fib::{BuildOptions, Fib};
use crate::live::{changed_spans, replace_updater, Applied, ApplyContext, FreeSpace, Limbo, Updater};
use crate::rib::{Range, Rib4};
use crate::NextHop;

/// Where a direct slot's subtree lives: its node segment and leaf segment
/// (`(base, len)`, len 0 for a slot that is a leaf).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Segment {
    nodes: (u32, u32),
    leaves: (u32, u32),
}

/// The Poptrie engine's updater for IPv4 with `S > 0` bits of direct
/// pointing (module docs above).
pub struct PoptrieUpdater<L: Leaf, const S: u32> {
    fib: Arc<Poptrie<u32, L, S>>,
    /// The segments of each direct slot's subtree.
    segments: Vec<Segment>,
    node_space: FreeSpace,
    leaf_space: FreeSpace,
    /// Replaced segments, until no reader can be searching them.
    limbo: Limbo<Segment>,
    scratch_nodes: Vec<Node>,
    scratch_leaves: Vec<L>,
    /// The address intervals a batch changed, with their next hop
    /// ([`changed_spans`]).
    spans: Vec<Range<u32>>,
    /// Those intervals clipped to direct slots, with their slot; sorted.
    ranges: Vec<(u32, Range<u32>)>,
    /// A slot's runs as the structure holds them, and as the RIB has them
    /// now.
    old_points: Boundaries<u32>,
    new_points: Boundaries<u32>,
    /// Direct entries to store once the batch's subtrees are all written.
    pending: Vec<(u32, u32)>,
    /// The bookkeeping no longer matches the structure: rebuild first.
    stale: bool,
    /// The batch being applied moved to a larger copy of the structure.
    relocated: bool,
    /// Nodes and leaves in use (for the size of a relocated copy).
    live: [usize; 2],
}

impl<L: Leaf, const S: u32> PoptrieUpdater<L, S> {
    /// Builds the structure from `rib` with free space for updates.
    pub fn new(rib: &Rib4) -> Result<Self, BuildError> {
        const { assert!(S > 0, "incremental updates need direct pointing (s > 0)") };
        let prepared = Prepared::new(rib, &PoptrieOptions::default());
        let (fib, used) = Poptrie::<u32, L, S>::assemble_with_slack(prepared, true)?;
        // The builder writes each slot's subtree depth first, slot after
        // slot: a subtree's nodes run from its root to the next root, its
        // leaves from its root's `base0` to the next root's.
        let direct = fib.direct();
        let mut segments = vec![Segment::default(); direct.len()];
        let roots: Vec<(usize, u32)> = direct
            .iter()
            .enumerate()
            .filter(|&(_, &entry)| entry & DIRECT_LEAF == 0)
            .map(|(slot, &entry)| (slot, entry))
            .collect();
        for (index, &(slot, root)) in roots.iter().enumerate() {
            let (node_end, leaf_end) = match roots.get(index + 1) {
                Some(&(_, next)) => (next, fib.nodes[next as usize].get().base0),
                None => (used[0] as u32, used[1] as u32),
            };
            let base0 = fib.nodes[root as usize].get().base0;
            segments[slot] = Segment { nodes: (root, node_end - root), leaves: (base0, leaf_end - base0) };
        }
        let mut node_space = FreeSpace::default();
        node_space.free(used[0] as u32, (fib.nodes.len() - used[0]) as u32);
        let mut leaf_space = FreeSpace::default();
        leaf_space.free(used[1] as u32, (fib.leaves.len() - used[1]) as u32);
        Ok(PoptrieUpdater {
            fib: Arc::new(fib),
            segments,
            node_space,
            leaf_space,
            limbo: Limbo::default(),
            scratch_nodes: Vec::new(),
            scratch_leaves: Vec::new(),
            spans: Vec::new(),
            ranges: Vec::new(),
            old_points: Boundaries::default(),
            new_points: Boundaries::default(),
            pending: Vec::new(),
            stale: false,
            relocated: false,
            live: used,
        })
    }

    /// The live structure.
    pub fn poptrie(&self) -> &Arc<Poptrie<u32, L, S>> {
        &self.fib
    }

    fn rebuild(&mut self, rib: &Rib4) -> Result<Applied, BuildError> {
        replace_updater(self, Self::new(rib), |updater| updater.fib.footprint(), |updater| updater.stale = true)
    }

    /// Moves to a copy of the structure with larger node and leaf arrays in
    /// which every replaced segment is free (no reader searches the copy
    /// before it is published, and its direct entries never point at
    /// replaced subtrees).
    fn relocate(&mut self, bytes_written: &mut u64) {
        let fib = Arc::clone(&self.fib);
        let grow = |live: usize, capacity: usize| (live + live / 2 + 8192).max(capacity);
        let node_capacity = grow(self.live[0], fib.nodes.len());
        let leaf_capacity = grow(self.live[1], fib.leaves.len());
        let mut nodes = Vec::with_capacity(node_capacity);
        nodes.extend(fib.nodes.iter().map(|cell| super::NodeCell::new(cell.get())));
        nodes.resize_with(node_capacity, super::NodeCell::default);
        let mut leaves = Vec::with_capacity(leaf_capacity);
        leaves.extend(fib.leaves.iter().map(|cell| L::cell(L::load(cell))));
        leaves.resize_with(leaf_capacity, || L::cell(L::default()));
        let mut limbo = std::mem::take(&mut self.limbo);
        limbo.drain(|segment| self.free_segment(segment));
        if node_capacity > fib.nodes.len() {
            self.node_space.free(fib.nodes.len() as u32, (node_capacity - fib.nodes.len()) as u32);
        }
        if leaf_capacity > fib.leaves.len() {
            self.leaf_space.free(fib.leaves.len() as u32, (leaf_capacity - fib.leaves.len()) as u32);
        }
        let relocated = Poptrie {
            direct: fib.direct.iter().map(|entry| AtomicU32::new(entry.load(Ordering::Relaxed))).collect(),
            nodes: nodes.into(),
            leaves: leaves.into(),
            summary: fib.summary.clone(),
            routes: AtomicUsize::new(fib.routes.load(Ordering::Relaxed)),
            batches: AtomicU64::new(fib.batches.load(Ordering::Relaxed)),
            family: std::marker::PhantomData,
        };
        *bytes_written += relocated.footprint() as u64;
        self.fib = Arc::new(relocated);
        self.relocated = true;
    }

    /// Rebuilds the subtree of every slot `ranges` touch whose runs
    /// changed, queueing its direct entry in `pending`; `Some` ends the
    /// batch early (a rebuild or an error).
    fn apply_ranges(
        &mut self,
        rib: &Rib4,
        ranges: &[(u32, Range<u32>)],
        context: ApplyContext,
        bytes_written: &mut u64,
    ) -> Option<Result<Applied, BuildError>> {
        let mut index = 0;
        while index < ranges.len() {
            let slot = ranges[index].0;
            let end = index + ranges[index..].iter().take_while(|range| range.0 == slot).count();
            let changed = self.splice_slot(slot, &ranges[index..end]);
            index = end;
            if !changed {
                continue;
            }
            let built =
                build_slot(&self.new_points, slot << (32 - S), S, &mut self.scratch_nodes, &mut self.scratch_leaves);
            let (entry, segment) = match built {
                Ok(Some(next_hop)) if next_hop <= DIRECT_MAX => (DIRECT_LEAF | next_hop, Segment::default()),
                Ok(Some(next_hop)) => {
                    self.stale = true;
                    return Some(Err(direct_limit(Limit::NextHop, next_hop.into()).of(self.name()).into()));
                }
                Ok(None) => {
                    let mut written = self.write_subtree(bytes_written);
                    if written.is_none() && !self.relocated {
                        // Out of space while readers hold replaced subtrees:
                        // move to a larger copy once per batch, then rebuild.
                        self.relocate(bytes_written);
                        written = self.write_subtree(bytes_written);
                    }
                    match written {
                        Some(segment) if segment.nodes.0 <= DIRECT_MAX => (segment.nodes.0, segment),
                        _ => return Some(self.rebuild(rib)),
                    }
                }
                Err(limit) => {
                    self.stale = true;
                    return Some(Err(limit.of(self.name()).into()));
                }
            };
            let old = std::mem::replace(&mut self.segments[slot as usize], segment);
            if old != Segment::default() {
                self.limbo.retire(context.published, old);
            }
            self.pending.push((slot, entry));
        }
        None
    }

    fn free_segment(&mut self, segment: Segment) {
        if segment.nodes.1 > 0 {
            self.node_space.free(segment.nodes.0, segment.nodes.1);
        }
        if segment.leaves.1 > 0 {
            self.leaf_space.free(segment.leaves.0, segment.leaves.1);
        }
        self.live[0] -= segment.nodes.1 as usize;
        self.live[1] -= segment.leaves.1 as usize;
    }

    /// The maximal runs of direct slot `slot` as the structure holds them
    /// (the writer reads what it wrote), into `old_points`.
    fn decode_slot(&mut self, slot: u32) {
        self.old_points.clear();
        let first = slot << (32 - S);
        let entry = self.fib.direct[slot as usize].load(Ordering::Relaxed);
        if entry & DIRECT_LEAF != 0 {
            self.old_points.push_run(first, entry & DIRECT_MAX);
        } else {
            let mut census = super::stats::Census::default();
            self.fib.append_runs(entry as usize, first, S, 1, &mut self.old_points, &mut census);
        }
    }

    /// The runs of `slot` after the batch, into `new_points`: the slot's
    /// runs as the structure holds them (`old_points`, decoded here), with
    /// each changed range's next hop spliced in. Outside the changed ranges
    /// no answer changed, and the structure answers as the RIB did before
    /// the batch. `ranges` are the slot's changed ranges, sorted and
    /// disjoint. Returns whether the runs changed.
    fn splice_slot(&mut self, slot: u32, ranges: &[(u32, Range<u32>)]) -> bool {
        let slot_first = slot << (32 - S);
        let slot_last = slot_first | (u32::MAX >> S);
        if let [(_, Range { first, last, next_hop })] = *ranges {
            if first == slot_first && last == slot_last {
                // The whole slot changed: no need to read it back.
                self.new_points.clear();
                self.new_points.push_run(first, next_hop);
                return self.fib.direct[slot as usize].load(Ordering::Relaxed) != DIRECT_LEAF | next_hop;
            }
        }
        self.decode_slot(slot);
        let (old, new) = (&self.old_points, &mut self.new_points);
        new.clear();
        let mut next_old = 0;
        for &(_, Range { first, last, next_hop }) in ranges {
            while next_old < old.len() && old.point(next_old).0 < first {
                let (at, next_hop) = old.point(next_old);
                new.push_run(at, next_hop);
                next_old += 1;
            }
            new.push_run(first, next_hop);
            if last == slot_last {
                next_old = old.len();
                break;
            }
            // The old answer resumes after the range.
            while next_old < old.len() && old.point(next_old).0 <= last + 1 {
                next_old += 1;
            }
            new.push_run(last + 1, old.point(next_old - 1).1);
        }
        for index in next_old..old.len() {
            let (at, next_hop) = old.point(index);
            new.push_run(at, next_hop);
        }
        self.old_points != self.new_points
    }

    /// Writes the subtree in the scratch vectors into free segments;
    /// `None` when no segment is large enough.
    fn write_subtree(&mut self, bytes_written: &mut u64) -> Option<Segment> {
        let (node_count, leaf_count) = (self.scratch_nodes.len() as u32, self.scratch_leaves.len() as u32);
        let node_base = self.node_space.allocate(node_count)?;
        let Some(leaf_base) = (if leaf_count == 0 { Some(0) } else { self.leaf_space.allocate(leaf_count) }) else {
            self.node_space.free(node_base, node_count);
            return None;
        };
        let fib = &*self.fib;
        for (offset, node) in self.scratch_nodes.iter().enumerate() {
            let relocated = Node { base0: node.base0 + leaf_base, base1: node.base1 + node_base, ..*node };
            // The same invariants `check_indexes` asserts of a full build.
            debug_assert!(
                relocated.vector == 0
                    || (relocated.base1 as usize > node_base as usize + offset
                        && relocated.base1 + relocated.children() as u32 <= node_base + node_count)
            );
            debug_assert!(
                relocated.vector == u64::MAX || relocated.base0 + relocated.leaves() as u32 <= leaf_base + leaf_count
            );
            fib.nodes[node_base as usize + offset].set(relocated);
        }
        for (offset, &leaf) in self.scratch_leaves.iter().enumerate() {
            L::store(&fib.leaves[leaf_base as usize + offset], leaf);
        }
        *bytes_written += u64::from(node_count) * 24 + u64::from(leaf_count) * u64::from(L::BITS / 8);
        self.live[0] += node_count as usize;
        self.live[1] += leaf_count as usize;
        Some(Segment { nodes: (node_base, node_count), leaves: (leaf_base, leaf_count) })
    }
}

impl<L: Leaf, const S: u32> Updater<u32> for PoptrieUpdater<L, S> {
    fn name(&self) -> &str {
        &self.fib.summary().name
    }

    fn fib(&self) -> Arc<dyn Fib<u32>> {
        self.fib.clone()
    }

    fn max_next_hop(&self) -> NextHop {
        if L::BITS == 16 {
            NextHop::from(u16::MAX)
        } else {
            DIRECT_MAX
        }
    }

    fn apply(&mut self, rib: &Rib4, changed: &[Prefix4], context: ApplyContext) -> Result<Applied, BuildError> {
        if self.stale {
            return self.rebuild(rib);
        }
        let mut limbo = std::mem::take(&mut self.limbo);
        limbo.reclaim(context.oldest_held, |segment| self.free_segment(segment));
        self.limbo = limbo;
        self.relocated = false;
        let shift = 32 - S;
        changed_spans(rib, changed, &mut self.spans);
        self.ranges.clear();
        for &Range { first, last, next_hop } in &self.spans {
            for slot in first >> shift..=last >> shift {
                let slot_first = slot << shift;
                let (first, last) = (first.max(slot_first), last.min(slot_first | (u32::MAX >> S)));
                self.ranges.push((slot, Range { first, last, next_hop }));
            }
        }
        self.pending.clear();
        let mut bytes_written = 0;
        let ranges = std::mem::take(&mut self.ranges);
        let outcome = self.apply_ranges(rib, &ranges, context, &mut bytes_written);
        self.ranges = ranges;
        if let Some(outcome) = outcome {
            return outcome;
        }
        for &(slot, entry) in &self.pending {
            self.fib.direct[slot as usize].store(entry, Ordering::Release);
        }
        bytes_written += 4 * self.pending.len() as u64;
        self.fib.routes.store(rib.len(), Ordering::Relaxed);
        self.fib.batches.fetch_add(1, Ordering::Relaxed);
        Ok(Applied { rebuilt: false, relocated: self.relocated, bytes_written })
    }
}

/// The updater of IPv4 `poptrie16` and `poptrie18`: in place, with 16-bit
/// leaves while every next hop fits in them, and widened to 32-bit leaves
/// (a rebuild, counted as one) by the batch that brings a larger next hop,
/// as the builder chooses its leaves; it never narrows again.
pub enum WideningUpdater<const S: u32> {
    /// 16-bit leaves.
    Narrow(PoptrieUpdater<u16, S>),
    /// 32-bit leaves.
    Wide(PoptrieUpdater<u32, S>),
}

/// The largest next hop a 16-bit leaf holds.
const NARROW_MAX: NextHop = u16::MAX as NextHop;

impl<const S: u32> WideningUpdater<S> {
    /// Built from `rib`, narrow if `max_next_hop` and every next hop of
    /// `rib` fit in 16 bits.
    pub fn new(rib: &Rib4, max_next_hop: NextHop) -> Result<Self, BuildError> {
        if max_next_hop > NARROW_MAX || rib.iter().any(|(_, next_hop)| next_hop > NARROW_MAX) {
            Ok(WideningUpdater::Wide(PoptrieUpdater::new(rib)?))
        } else {
            Ok(WideningUpdater::Narrow(PoptrieUpdater::new(rib)?))
        }
    }

    fn updater(&self) -> &dyn Updater<u32> {
        match self {
            WideningUpdater::Narrow(narrow) => narrow,
            WideningUpdater::Wide(wide) => wide,
        }
    }
}

impl<const S: u32> Updater<u32> for WideningUpdater<S> {
    fn name(&self) -> &str {
        self.updater().name()
    }

    fn fib(&self) -> Arc<dyn Fib<u32>> {
        self.updater().fib()
    }

    fn max_next_hop(&self) -> NextHop {
        DIRECT_MAX
    }

    fn apply(&mut self, rib: &Rib4, changed: &[Prefix4], context: ApplyContext) -> Result<Applied, BuildError> {
        match self {
            WideningUpdater::Narrow(_) if context.max_next_hop > NARROW_MAX => {
                // The old structure stays with the readers that hold it:
                // the router frees it with their generation.
                let wide = PoptrieUpdater::<u32, S>::new(rib)?;
                let bytes_written = wide.fib.footprint() as u64;
                *self = WideningUpdater::Wide(wide);
                Ok(Applied { rebuilt: true, relocated: false, bytes_written })
            }
            WideningUpdater::Narrow(narrow) => narrow.apply(rib, changed, context),
            WideningUpdater::Wide(wide) => wide.apply(rib, changed, context),
        }
    }
}

/// Registry updater for IPv4 `poptrie16` and `poptrie18`
/// (`WideningUpdater`).
pub fn updater<const S: u32>(rib: &Rib4, options: &BuildOptions) -> Result<Box<dyn Updater<u32>>, BuildError> {
    Ok(Box::new(WideningUpdater::<S>::new(rib, options.max_next_hop)?))
}
