//! Incremental updates of a live Poptrie with direct pointing (section 3.5
//! of the paper), IPv4 and IPv6, while readers search it.
//!
//! For every direct slot that an interval whose answer changed overlaps
//! ([`changed_spans`]: for a default route under a full table, the gaps
//! between the more specific routes, not every slot), the updater rewrites
//! the slot's subtree by copy on write of the path down to the changes
//! ([`SubtreeWriter`]): a node none of whose slots an interval touches is
//! kept, shared by the old and the new subtree; a node some interval
//! touches gets a new record, with a new block of children (the records of
//! its kept children copied, the touched ones rewritten the same way, one
//! level down) and a new block of leaves, both written into free segments
//! of the node and leaf arrays; a leaf slot that an interval splits gets a
//! subtree built anew from its one old next hop and the intervals' (what
//! the full build would put there, route aggregation included), and a slot
//! whose addresses come to share one next hop becomes a leaf, its old
//! subtree dropped. Each interval carries its one next hop, so the RIB is
//! not walked, and the old answers are read from the structure. The new
//! root record goes into a free node of its own, and once every touched
//! slot of the batch is written, the slots' `direct` entries are stored
//! with `Release`: a reader that loads an entry (`Acquire`) finds the whole
//! subtree it points to written.
//!
//! An update's cost is the depth of the changes times the blocks along the
//! path (at most 64 records and 64 leaves a level), not the size of the
//! slot: an IPv6 slot of s = 16 or 18 bits holds 2^110 addresses and, in
//! 2026, up to tens of thousands of routes. The paper replaces the
//! smallest affected subtree and swaps one `base1`/`base0` word, or the
//! whole top-level array when a prefix is shorter than `s`; here `direct`
//! entries are atomic words rewritten in place, so the top-level array is
//! never copied, and the nodes below an entry are reached only through it,
//! so no reader ever sees a node's record change. In a structure the
//! updater wrote, a node's children may lie before it in the array (the
//! build puts them after it): the walk ends by depth all the same.
//!
//! The replaced blocks (a node's children and leaves, a root's own node)
//! wait in a limbo, tagged with the generation being served, until the
//! router reports that no reader holds it; then they return to the free
//! space (neighbours coalesce). When a slot finds no free segment large
//! enough, the updater undoes the slot's allocations, copies the structure
//! into larger arrays (a relocation, once per batch) and rewrites the slot
//! there; if that is not enough, it rebuilds the whole structure (counted
//! as a full rebuild). Poptrie without direct pointing (`s = 0`) would
//! replace the root on every update: the router rebuilds it instead
//! ([`crate::live::FullRebuild`]).
//!
//! `poptrie16x12`'s updater, which rewrites the subtrees below its blocks
//! with the same [`SubtreeWriter`], is in `live_expanded.rs`.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use super::build::{build_slot, direct_limit, Boundaries, Prepared};
use super::stats::small;
use super::{Leaf, Node, NodeCell, Poptrie, PoptrieOptions, DIRECT_LEAF, DIRECT_MAX, FANOUT, K};
use crate::addr::{Address, Prefix};
use crate::error::{BuildError, Limit, LimitExceeded};
use crate::fib::{BuildOptions, Fib};
use crate::live::{changed_spans, replace_updater, Applied, ApplyContext, FreeSpace, Limbo, Updater};
use crate::rib::{Range, Rib};
use crate::NextHop;

/// Blocks of the node and leaf arrays (`(base, len)`): a node's children
/// and its leaves, or a root's own node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Segment {
    nodes: (u32, u32),
    leaves: (u32, u32),
}

impl Segment {
    /// The blocks `node` owns: its children and its leaves.
    fn of(node: &Node) -> Segment {
        Segment { nodes: (node.base1, node.children() as u32), leaves: (node.base0, node.leaves() as u32) }
    }

    /// The node of a root at `index`, written alone.
    fn root(index: u32) -> Segment {
        Segment { nodes: (index, 1), leaves: (0, 0) }
    }
}

/// Which base of a record an in-place store sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Base {
    /// `base0`, the leaves.
    Leaves,
    /// `base1`, the children.
    Children,
}

/// Whether two records have the same slots and runs (`vector` and
/// `leafvec`): one turns into the other by new bases alone.
fn same_shape(one: &Node, other: &Node) -> bool {
    one.vector == other.vector && one.leafvec == other.leafvec
}

/// Why rewriting an entry stopped.
#[derive(Debug)]
pub(super) enum Failure {
    /// No free segment was large enough.
    Full,
    /// A next hop or an index does not fit the structure.
    Limit(LimitExceeded),
}

impl From<LimitExceeded> for Failure {
    fn from(limit: LimitExceeded) -> Self {
        Failure::Limit(limit)
    }
}

/// What a slot becomes.
#[derive(Clone, Copy, Debug)]
enum Slot {
    /// A leaf with this next hop.
    Leaf(NextHop),
    /// An internal node with this record (its blocks written).
    Node(Node),
}

/// The first address of slot `slot` of the `bits`-bit slots of the region
/// starting at `first`, `offset` bits down.
pub(super) fn slot_first<A: Address>(first: A, offset: u32, bits: u32, slot: u32) -> A {
    first | small::<A>(slot) << (u32::from(A::BITS) - offset - bits)
}

/// The last address of the region starting at `first`, `offset` bits down.
pub(super) fn region_last<A: Address>(first: A, offset: u32) -> A {
    if offset == 0 {
        A::MAX
    } else {
        first | !A::mask(offset as u8)
    }
}

/// Groups the sorted, disjoint intervals `spans` by the `bits`-bit slots
/// of the region starting at `first`, `offset` bits down, that they touch
/// (intervals may reach beyond the region): `(slot, from, to)` with
/// `spans[from..to]` the intervals touching the slot, in slot order.
pub(super) fn group_by_slot<A: Address>(
    spans: &[Range<A>],
    first: A,
    offset: u32,
    bits: u32,
    out: &mut Vec<(u32, usize, usize)>,
) {
    out.clear();
    let last = region_last(first, offset);
    let slot_of = |addr: A| ((addr << offset) >> (u32::from(A::BITS) - bits)).to_u128() as u32;
    for (index, span) in spans.iter().enumerate() {
        if span.last < first || span.first > last {
            continue;
        }
        for slot in slot_of(span.first.max(first))..=slot_of(span.last.min(last)) {
            match out.last_mut() {
                Some(group) if group.0 == slot => group.2 = index + 1,
                _ => out.push((slot, index, index + 1)),
            }
        }
    }
}

/// The writer of subtrees below entries (a `direct` entry, or a block
/// entry of `poptrie16x12`): copy on write of the path to the changes
/// (module docs), into free segments, with the replaced blocks retired
/// into a limbo.
///
/// A rewrite is framed by [`SubtreeWriter::begin`] and
/// [`SubtreeWriter::commit`] (its replaced blocks retired) or
/// [`SubtreeWriter::undo`] (its allocations freed: it ran out of space).
#[derive(Debug)]
pub(super) struct SubtreeWriter<A: Address, L: Leaf> {
    node_space: FreeSpace,
    leaf_space: FreeSpace,
    /// Replaced blocks, until no reader can be searching them.
    limbo: Limbo<Segment>,
    /// Blocks allocated since `begin`.
    allocated: Vec<Segment>,
    /// Blocks replaced since `begin`.
    replaced: Vec<Segment>,
    /// Bases to store in place once the batch is written (record index,
    /// base, value), and how many there were at `begin`.
    bases: Vec<(usize, Base, u32)>,
    bases_at_begin: usize,
    scratch_nodes: Vec<Node>,
    scratch_leaves: Vec<L>,
    points: Boundaries<A>,
    /// Nodes and leaves in use (for the size of a relocated copy).
    pub(super) live: [usize; 2],
    /// Bytes of nodes and leaves written.
    pub(super) bytes_written: u64,
}

impl<A: Address, L: Leaf> SubtreeWriter<A, L> {
    /// A writer for arrays of `capacity` nodes and leaves whose first
    /// `used` are in use.
    pub(super) fn new(used: [usize; 2], capacity: [usize; 2]) -> Self {
        let mut writer = SubtreeWriter {
            node_space: FreeSpace::default(),
            leaf_space: FreeSpace::default(),
            limbo: Limbo::default(),
            allocated: Vec::new(),
            replaced: Vec::new(),
            bases: Vec::new(),
            bases_at_begin: 0,
            scratch_nodes: Vec::new(),
            scratch_leaves: Vec::new(),
            points: Boundaries::default(),
            live: used,
            bytes_written: 0,
        };
        writer.grow(used, capacity);
        writer
    }

    /// Frees the arrays' entries from `from` up to `to` (nodes, leaves).
    fn grow(&mut self, from: [usize; 2], to: [usize; 2]) {
        if to[0] > from[0] {
            self.node_space.free(from[0] as u32, (to[0] - from[0]) as u32);
        }
        if to[1] > from[1] {
            self.leaf_space.free(from[1] as u32, (to[1] - from[1]) as u32);
        }
    }

    /// For a copy into arrays of `to` entries (from `from`) that no reader
    /// has seen: its tail and every retired block are free.
    pub(super) fn relocated(&mut self, from: [usize; 2], to: [usize; 2]) {
        let mut limbo = std::mem::take(&mut self.limbo);
        limbo.drain(|segment| self.free(segment));
        self.grow(from, to);
    }

    /// Frees the blocks no reader can reach any more (retired while a
    /// generation older than `oldest_held` was served).
    pub(super) fn reclaim(&mut self, oldest_held: u64) {
        let mut limbo = std::mem::take(&mut self.limbo);
        limbo.reclaim(oldest_held, |segment| self.free(segment));
        self.limbo = limbo;
    }

    fn free(&mut self, segment: Segment) {
        if segment.nodes.1 > 0 {
            self.node_space.free(segment.nodes.0, segment.nodes.1);
        }
        if segment.leaves.1 > 0 {
            self.leaf_space.free(segment.leaves.0, segment.leaves.1);
        }
        self.live[0] -= segment.nodes.1 as usize;
        self.live[1] -= segment.leaves.1 as usize;
    }

    /// Starts a rewrite.
    pub(super) fn begin(&mut self) {
        self.allocated.clear();
        self.replaced.clear();
        self.bases_at_begin = self.bases.len();
    }

    /// Ends a rewrite whose new entries will be stored while `published`
    /// is served: the blocks it replaced wait for its readers.
    pub(super) fn commit(&mut self, published: u64) {
        for &segment in &self.replaced {
            self.limbo.retire(published, segment);
        }
        self.replaced.clear();
        self.allocated.clear();
    }

    /// Gives back what the rewrite allocated (no entry points to it) and
    /// forgets what it replaced (the old entries stay).
    pub(super) fn undo(&mut self) {
        let allocated = std::mem::take(&mut self.allocated);
        for &segment in &allocated {
            self.free(segment);
        }
        self.allocated = allocated;
        self.allocated.clear();
        self.replaced.clear();
        self.bases.truncate(self.bases_at_begin);
    }

    /// `len` free nodes and `leaves` free leaves (`Failure::Full` if either
    /// does not fit).
    fn allocate(&mut self, len: u32, leaves: u32) -> Result<Segment, Failure> {
        let nodes = if len == 0 { 0 } else { self.node_space.allocate(len).ok_or(Failure::Full)? };
        let leaf_base = if leaves == 0 {
            0
        } else if let Some(base) = self.leaf_space.allocate(leaves) {
            base
        } else {
            if len > 0 {
                self.node_space.free(nodes, len);
            }
            return Err(Failure::Full);
        };
        let segment = Segment { nodes: (nodes, len), leaves: (leaf_base, leaves) };
        self.live[0] += len as usize;
        self.live[1] += leaves as usize;
        self.allocated.push(segment);
        Ok(segment)
    }

    /// Retires `node`'s blocks and those of every node below it.
    fn replace_subtree<const S: u32>(&mut self, trie: &Poptrie<A, L, S>, node: &Node) {
        self.replaced.push(Segment::of(node));
        for child in 0..node.children() {
            let child = trie.nodes[node.base1 as usize + child].get();
            self.replace_subtree(trie, &child);
        }
    }

    /// Retires what entry `entry` (a next hop, or a root node's index)
    /// points to: the root's node and its subtree's blocks.
    pub(super) fn replace_entry<const S: u32>(&mut self, trie: &Poptrie<A, L, S>, entry: u32) {
        if entry & DIRECT_LEAF == 0 {
            self.replaced.push(Segment::root(entry));
            self.replace_subtree(trie, &trie.nodes[entry as usize].get());
        }
    }

    /// Rewrites the entry `entry` (a next hop with [`DIRECT_LEAF`], or a
    /// root node's index) of the region starting at `first`, `offset` bits
    /// down, whose answers the intervals `spans` (sorted, disjoint, their
    /// next hops the answers now; they may reach beyond the region) change:
    /// the new entry, or `None` if it stays (no answer changed, or the
    /// root's record keeps its shape and only its bases change: those wait
    /// in [`SubtreeWriter::store_bases`]).
    pub(super) fn rewrite_entry<const S: u32>(
        &mut self,
        trie: &Poptrie<A, L, S>,
        entry: u32,
        first: A,
        offset: u32,
        spans: &[Range<A>],
    ) -> Result<Option<u32>, Failure> {
        let slot = if entry & DIRECT_LEAF != 0 {
            self.split_leaf(trie, entry & DIRECT_MAX, first, offset, spans)?
        } else {
            let root = trie.nodes[entry as usize].get();
            match self.rewrite_node(trie, &root, first, offset, spans)? {
                Some(Slot::Node(record)) if same_shape(&record, &root) => {
                    self.queue_bases(entry as usize, &root, &record);
                    return Ok(None);
                }
                Some(slot) => {
                    self.replaced.push(Segment::root(entry));
                    Some(slot)
                }
                None => None,
            }
        };
        Ok(match slot {
            None => None,
            Some(Slot::Leaf(next_hop)) if next_hop > DIRECT_MAX => {
                return Err(direct_limit(Limit::NextHop, next_hop.into()).into());
            }
            Some(Slot::Leaf(next_hop)) => Some(DIRECT_LEAF | next_hop),
            Some(Slot::Node(root)) => {
                let segment = self.allocate(1, 0)?;
                if segment.nodes.0 > DIRECT_MAX {
                    return Err(direct_limit(Limit::DirectIndex, segment.nodes.0.into()).into());
                }
                trie.nodes[segment.nodes.0 as usize].set(root);
                self.bytes_written += size_of::<NodeCell>() as u64;
                Some(segment.nodes.0)
            }
        })
    }

    /// Queues the stores that turn the record at `index`, `old`, into
    /// `new` (the same shape: new bases only).
    fn queue_bases(&mut self, index: usize, old: &Node, new: &Node) {
        if new.base0 != old.base0 {
            self.bases.push((index, Base::Leaves, new.base0));
        }
        if new.base1 != old.base1 {
            self.bases.push((index, Base::Children, new.base1));
        }
    }

    /// Stores the bases queued by the rewrites since the batch began into
    /// `trie`'s records, with `Release` (after every block they name is
    /// written); returns the bytes written.
    pub(super) fn store_bases<const S: u32>(&mut self, trie: &Poptrie<A, L, S>) -> u64 {
        for &(index, base, value) in &self.bases {
            trie.nodes[index].store_base(base, value);
        }
        let stored = 4 * self.bases.len() as u64;
        self.bases.clear();
        stored
    }

    /// What node `node` (of the region starting at `first`, `offset` bits
    /// down) becomes under `spans`: `None` if no answer below it changes;
    /// else a leaf (its blocks retired, and its subtree's), or its record
    /// now. Only the slots an interval touches are read; a touched child
    /// is rewritten the same way. A child whose record keeps its shape
    /// (`vector` and `leafvec`) gets its new bases in place (queued);
    /// otherwise, or when a slot turns from leaf to node or back, the node
    /// gets a new block of children (the others' records copied). Its leaves
    /// are written anew when a leaf slot's next hop changes.
    fn rewrite_node<const S: u32>(
        &mut self,
        trie: &Poptrie<A, L, S>,
        node: &Node,
        first: A,
        offset: u32,
        spans: &[Range<A>],
    ) -> Result<Option<Slot>, Failure> {
        let bits = u32::from(A::BITS);
        let remaining = bits - offset;
        // Past the key's end slots come in groups of 2^pad sharing an
        // address, as the build lays them out.
        let (pad, span_bits) = if remaining >= K { (0, remaining - K) } else { (K - remaining, 0) };
        let span_mask = !A::mask((bits - span_bits) as u8);
        let (groups, last) = (FANOUT >> pad, region_last(first, offset));
        let group_first = |group: usize| first | small::<A>(group as u32) << span_bits;
        let mut changes = [(0usize, Slot::Leaf(0)); FANOUT];
        let mut count = 0;
        let (mut vector, mut children_changed, mut leaves_changed) = (node.vector, false, false);
        let (mut cursor, mut group) = (0, 0);
        while group < groups {
            while cursor < spans.len() && spans[cursor].last < group_first(group) {
                cursor += 1;
            }
            let Some(span) = spans.get(cursor).filter(|span| span.first <= last) else { break };
            group = ((span.first.max(group_first(group)) ^ first) >> span_bits).to_u128() as usize;
            let (slot_first, v) = (group_first(group), (group << pad) as u32);
            let slot_last = slot_first | span_mask;
            let end = cursor + spans[cursor..].iter().take_while(|span| span.first <= slot_last).count();
            let old = if node.is_internal(v) {
                Slot::Node(trie.nodes[node.child_index(v)].get())
            } else {
                Slot::Leaf(L::load(&trie.leaves[node.leaf_index(v)]).next_hop())
            };
            let new = match (&spans[cursor..end], old) {
                ([whole], old) if whole.first <= slot_first && whole.last >= slot_last => match old {
                    Slot::Leaf(next_hop) if next_hop == whole.next_hop => None,
                    Slot::Leaf(_) => Some(Slot::Leaf(whole.next_hop)),
                    Slot::Node(child) => {
                        self.replace_subtree(trie, &child);
                        Some(Slot::Leaf(whole.next_hop))
                    }
                },
                (here, Slot::Node(child)) => self.rewrite_node(trie, &child, slot_first, offset + K, here)?,
                (here, Slot::Leaf(next_hop)) => self.split_leaf(trie, next_hop, slot_first, offset + K, here)?,
            };
            if let Some(new) = new {
                match (old, new) {
                    (Slot::Leaf(_), Slot::Leaf(_)) => leaves_changed = true,
                    (Slot::Leaf(_), Slot::Node(_)) | (Slot::Node(_), Slot::Leaf(_)) => {
                        vector ^= 1 << group;
                        (leaves_changed, children_changed) = (true, true);
                    }
                    (Slot::Node(was), Slot::Node(now)) => children_changed |= !same_shape(&was, &now),
                }
                changes[count] = (group, new);
                count += 1;
            }
            group += 1;
        }
        let changes = &changes[..count];
        if changes.is_empty() {
            return Ok(None);
        }
        let mut record = *node;
        record.vector = vector;
        if leaves_changed {
            // The leaf slots' next hops now, a leaf per run as the build
            // makes them (internal slots skipped).
            let (mut leafvec, mut hops, mut leaves) = (0u64, [0 as NextHop; FANOUT], 0);
            let mut changed = changes.iter().peekable();
            for group in 0..groups {
                let v = (group << pad) as u32;
                let now = match changed.next_if(|&&(at, _)| at == group) {
                    Some(&(_, Slot::Leaf(next_hop))) => next_hop,
                    Some(&(_, Slot::Node(_))) => continue,
                    None if vector & 1 << group != 0 => continue,
                    None => L::load(&trie.leaves[node.leaf_index(v)]).next_hop(),
                };
                if leaves == 0 || hops[leaves - 1] != now {
                    leafvec |= 1 << v;
                    hops[leaves] = now;
                    leaves += 1;
                }
            }
            if vector == 0 && leaves == 1 {
                self.replaced.push(Segment::of(node));
                return Ok(Some(Slot::Leaf(hops[0])));
            }
            let segment = self.allocate(0, leaves as u32)?;
            for (offset, &next_hop) in hops[..leaves].iter().enumerate() {
                L::store(&trie.leaves[segment.leaves.0 as usize + offset], leaf_of::<L>(next_hop)?);
            }
            self.bytes_written += (leaves as u64) * u64::from(L::BITS / 8);
            self.replaced.push(Segment { nodes: (0, 0), leaves: (node.base0, node.leaves() as u32) });
            (record.leafvec, record.base0) = (leafvec, segment.leaves.0);
        }
        if children_changed {
            let children = vector.count_ones();
            let segment = self.allocate(children, 0)?;
            let (mut next, mut child) = (0, segment.nodes.0 as usize);
            for group in (0..groups).filter(|&group| vector & 1 << group != 0) {
                while changes.get(next).is_some_and(|&(at, _)| at < group) {
                    next += 1;
                }
                let now = match changes.get(next) {
                    Some(&(at, Slot::Node(now))) if at == group => now,
                    _ => trie.nodes[node.child_index(group as u32)].get(),
                };
                trie.nodes[child].set(now);
                child += 1;
            }
            self.bytes_written += u64::from(children) * size_of::<NodeCell>() as u64;
            self.replaced.push(Segment { nodes: (node.base1, node.children() as u32), leaves: (0, 0) });
            record.base1 = segment.nodes.0;
        } else {
            for &(group, new) in changes {
                if let Slot::Node(now) = new {
                    let index = node.child_index(group as u32);
                    let was = trie.nodes[index].get();
                    self.queue_bases(index, &was, &now);
                }
            }
        }
        Ok(Some(Slot::Node(record)))
    }

    /// What a slot whose addresses all had `next_hop` becomes under
    /// `spans`: `None` if its answers stay, else a leaf, or the subtree the
    /// build gives the slot's runs (written, its root's record returned).
    fn split_leaf<const S: u32>(
        &mut self,
        trie: &Poptrie<A, L, S>,
        next_hop: NextHop,
        first: A,
        offset: u32,
        spans: &[Range<A>],
    ) -> Result<Option<Slot>, Failure> {
        let last = region_last(first, offset);
        let points = &mut self.points;
        points.clear();
        points.push_run(first, next_hop);
        for span in spans {
            let (low, high) = (span.first.max(first), span.last.min(last));
            points.push_run(low, span.next_hop);
            if high < last {
                points.push_run(high.checked_next().expect("below the region's last address"), next_hop);
            }
        }
        if points.len() == 1 {
            let (_, now) = points.point(0);
            return Ok((now != next_hop).then_some(Slot::Leaf(now)));
        }
        let built = build_slot(points, first, offset, &mut self.scratch_nodes, &mut self.scratch_leaves)?;
        debug_assert!(built.is_none(), "two runs make a node");
        self.write_built(trie).map(|root| Some(Slot::Node(root)))
    }

    /// Writes the subtree the build left in the scratch vectors, its root
    /// aside, into free segments; returns the root's record, its indexes
    /// relocated.
    fn write_built<const S: u32>(&mut self, trie: &Poptrie<A, L, S>) -> Result<Node, Failure> {
        let (count, leaves) = (self.scratch_nodes.len() as u32 - 1, self.scratch_leaves.len() as u32);
        let segment = self.allocate(count, leaves)?;
        let (node_base, leaf_base) = (segment.nodes.0, segment.leaves.0);
        // In the scratch vectors the root is node 0: its children start at 1.
        let relocate = |node: &Node| Node {
            base0: if node.leafvec == 0 { 0 } else { node.base0 + leaf_base },
            base1: if node.vector == 0 { 0 } else { node.base1 - 1 + node_base },
            ..*node
        };
        for (offset, node) in self.scratch_nodes[1..].iter().enumerate() {
            trie.nodes[node_base as usize + offset].set(relocate(node));
        }
        for (offset, &leaf) in self.scratch_leaves.iter().enumerate() {
            L::store(&trie.leaves[leaf_base as usize + offset], leaf);
        }
        self.bytes_written += u64::from(count) * size_of::<NodeCell>() as u64 + u64::from(leaves * L::BITS / 8);
        Ok(relocate(&self.scratch_nodes[0]))
    }
}

/// The leaf holding `next_hop`, or the limit it exceeds.
fn leaf_of<L: Leaf>(next_hop: NextHop) -> Result<L, LimitExceeded> {
    L::from_next_hop(next_hop).ok_or_else(|| {
        let field = format!("{}-bit leaves", L::BITS);
        LimitExceeded::unnamed(Limit::NextHop, field, next_hop.into(), (1u64 << L::BITS) - 1)
    })
}

impl<A: Address, L: Leaf, const S: u32> Poptrie<A, L, S> {
    /// A copy with node and leaf arrays of `capacity` entries (at least
    /// the current ones), the entries past the current ones free.
    pub(super) fn copy_grown(&self, capacity: [usize; 2]) -> Self {
        let mut nodes = Vec::with_capacity(capacity[0]);
        nodes.extend(self.nodes.iter().map(|cell| NodeCell::new(cell.get())));
        nodes.resize_with(capacity[0].max(self.nodes.len()), NodeCell::default);
        let mut leaves = Vec::with_capacity(capacity[1]);
        leaves.extend(self.leaves.iter().map(|cell| L::cell(L::load(cell))));
        leaves.resize_with(capacity[1].max(self.leaves.len()), || L::cell(L::default()));
        Poptrie {
            direct: self.direct.iter().map(|entry| AtomicU32::new(entry.load(Ordering::Relaxed))).collect(),
            nodes: nodes.into(),
            leaves: leaves.into(),
            summary: self.summary.clone(),
            routes: AtomicUsize::new(self.routes.load(Ordering::Relaxed)),
            batches: AtomicU64::new(self.batches.load(Ordering::Relaxed)),
            family: std::marker::PhantomData,
        }
    }

    /// The sizes of the node and leaf arrays.
    pub(super) fn capacity(&self) -> [usize; 2] {
        [self.nodes.len(), self.leaves.len()]
    }
}

/// The size of a relocated array: half again what is in use, and 8,192
/// entries, at least the current size.
pub(super) fn grown(live: [usize; 2], capacity: [usize; 2]) -> [usize; 2] {
    let grow = |live: usize, capacity: usize| (live + live / 2 + 8192).max(capacity);
    [grow(live[0], capacity[0]), grow(live[1], capacity[1])]
}

/// The Poptrie engine's updater for addresses `A` (IPv4 or IPv6) with
/// `S > 0` bits of direct pointing (module docs above).
pub struct PoptrieUpdater<A: Address, L: Leaf, const S: u32> {
    fib: Arc<Poptrie<A, L, S>>,
    writer: SubtreeWriter<A, L>,
    /// The address intervals a batch changed, with their next hop
    /// ([`changed_spans`]).
    spans: Vec<Range<A>>,
    /// The direct slots they touch, with their intervals
    /// ([`group_by_slot`]).
    slots: Vec<(u32, usize, usize)>,
    /// Direct entries to store once the batch's subtrees are all written.
    pending: Vec<(u32, u32)>,
    /// The bookkeeping no longer matches the structure: rebuild first.
    stale: bool,
    /// The batch being applied moved to a larger copy of the structure.
    relocated: bool,
}

impl<A: Address, L: Leaf, const S: u32> PoptrieUpdater<A, L, S> {
    /// Builds the structure from `rib` with free space for updates.
    ///
    /// # Errors
    /// The build's ([`BuildError`]).
    pub fn new(rib: &Rib<A>) -> Result<Self, BuildError> {
        const { assert!(S > 0, "incremental updates need direct pointing (s > 0)") };
        let prepared = Prepared::new(rib, &PoptrieOptions::default());
        let (fib, used) = Poptrie::<A, L, S>::assemble_with_slack(prepared, true)?;
        Ok(PoptrieUpdater {
            writer: SubtreeWriter::new(used, fib.capacity()),
            fib: Arc::new(fib),
            spans: Vec::new(),
            slots: Vec::new(),
            pending: Vec::new(),
            stale: false,
            relocated: false,
        })
    }

    /// The live structure.
    pub fn poptrie(&self) -> &Arc<Poptrie<A, L, S>> {
        &self.fib
    }

    fn rebuild(&mut self, rib: &Rib<A>) -> Result<Applied, BuildError> {
        replace_updater(self, Self::new(rib), |updater| updater.fib.footprint(), |updater| updater.stale = true)
    }

    /// Moves to a copy of the structure with larger node and leaf arrays in
    /// which every replaced block is free (no reader searches the copy
    /// before it is published, and its direct entries never point at
    /// replaced subtrees once the batch's are stored).
    fn relocate(&mut self, bytes_written: &mut u64) {
        let from = self.fib.capacity();
        let to = grown(self.writer.live, from);
        let relocated = self.fib.copy_grown(to);
        self.writer.relocated(from, to);
        *bytes_written += relocated.footprint() as u64;
        self.fib = Arc::new(relocated);
        self.relocated = true;
    }
}

impl<A: Address, L: Leaf, const S: u32> Updater<A> for PoptrieUpdater<A, L, S> {
    fn name(&self) -> &str {
        &self.fib.summary().name
    }

    fn fib(&self) -> Arc<dyn Fib<A>> {
        self.fib.clone()
    }

    fn max_next_hop(&self) -> NextHop {
        if L::BITS == 16 {
            NextHop::from(u16::MAX)
        } else {
            DIRECT_MAX
        }
    }

    fn apply(&mut self, rib: &Rib<A>, changed: &[Prefix<A>], context: ApplyContext) -> Result<Applied, BuildError> {
        if self.stale {
            return self.rebuild(rib);
        }
        self.writer.reclaim(context.oldest_held);
        self.writer.bytes_written = 0;
        self.relocated = false;
        let mut bytes_written = 0;
        changed_spans(rib, changed, &mut self.spans);
        group_by_slot(&self.spans, A::ZERO, 0, S, &mut self.slots);
        self.pending.clear();
        let slots = std::mem::take(&mut self.slots);
        for &(slot, from, to) in &slots {
            let first = slot_first(A::ZERO, 0, S, slot);
            loop {
                self.writer.begin();
                let entry = self.fib.direct[slot as usize].load(Ordering::Relaxed);
                match self.writer.rewrite_entry(&self.fib, entry, first, S, &self.spans[from..to]) {
                    Ok(rewritten) => {
                        self.writer.commit(context.published);
                        self.pending.extend(rewritten.map(|entry| (slot, entry)));
                        break;
                    }
                    Err(Failure::Full) if !self.relocated => {
                        // Out of space while readers hold replaced blocks:
                        // move to a larger copy once per batch, and retry.
                        self.writer.undo();
                        self.relocate(&mut bytes_written);
                    }
                    Err(Failure::Full) => return self.rebuild(rib),
                    Err(Failure::Limit(limit)) => {
                        self.stale = true;
                        return Err(limit.of(self.name()).into());
                    }
                }
            }
        }
        self.slots = slots;
        bytes_written += self.writer.store_bases(&self.fib);
        for &(slot, entry) in &self.pending {
            self.fib.direct[slot as usize].store(entry, Ordering::Release);
        }
        bytes_written += self.writer.bytes_written + 4 * self.pending.len() as u64;
        self.fib.routes.store(rib.len(), Ordering::Relaxed);
        self.fib.batches.fetch_add(1, Ordering::Relaxed);
        Ok(Applied { rebuilt: false, relocated: self.relocated, bytes_written })
    }
}

/// The largest next hop a 16-bit leaf holds.
const NARROW_MAX: NextHop = u16::MAX as NextHop;

/// An in-place updater of one leaf width ([`Widening`]'s halves).
pub trait LeafWidth<A: Address>: Updater<A> + Sized {
    /// Built from `rib`, with free space for updates.
    ///
    /// # Errors
    /// The build's ([`BuildError`]).
    fn build(rib: &Rib<A>) -> Result<Self, BuildError>;

    /// Bytes of the lookup structure.
    fn footprint(&self) -> usize;
}

impl<A: Address, L: Leaf, const S: u32> LeafWidth<A> for PoptrieUpdater<A, L, S> {
    fn build(rib: &Rib<A>) -> Result<Self, BuildError> {
        Self::new(rib)
    }

    fn footprint(&self) -> usize {
        self.fib.footprint()
    }
}

/// The updater of an engine whose builder chooses its leaves (`poptrie16`,
/// `poptrie18`, `poptrie16x12`): in place, with 16-bit leaves (`N`) while
/// every next hop fits in them, and widened to 32-bit leaves (`W`, a
/// rebuild, counted as one) by the batch that brings a larger next hop, as
/// the builder chooses its leaves; it never narrows again.
pub enum Widening<N, W> {
    /// 16-bit leaves.
    Narrow(N),
    /// 32-bit leaves.
    Wide(W),
}

/// The updater of `poptrie16` and `poptrie18` (IPv4 and IPv6).
pub type WideningUpdater<A, const S: u32> = Widening<PoptrieUpdater<A, u16, S>, PoptrieUpdater<A, u32, S>>;

impl<N, W> Widening<N, W> {
    /// Built from `rib`, narrow if `max_next_hop` and every next hop of
    /// `rib` fit in 16 bits.
    ///
    /// # Errors
    /// The build's ([`BuildError`]).
    pub fn new<A: Address>(rib: &Rib<A>, max_next_hop: NextHop) -> Result<Self, BuildError>
    where
        N: LeafWidth<A>,
        W: LeafWidth<A>,
    {
        if max_next_hop > NARROW_MAX || rib.iter().any(|(_, next_hop)| next_hop > NARROW_MAX) {
            Ok(Widening::Wide(W::build(rib)?))
        } else {
            Ok(Widening::Narrow(N::build(rib)?))
        }
    }

    fn updater<A: Address>(&self) -> &dyn Updater<A>
    where
        N: LeafWidth<A>,
        W: LeafWidth<A>,
    {
        match self {
            Widening::Narrow(narrow) => narrow,
            Widening::Wide(wide) => wide,
        }
    }
}

impl<A: Address, N: LeafWidth<A>, W: LeafWidth<A>> Updater<A> for Widening<N, W> {
    fn name(&self) -> &str {
        self.updater::<A>().name()
    }

    fn fib(&self) -> Arc<dyn Fib<A>> {
        self.updater::<A>().fib()
    }

    fn max_next_hop(&self) -> NextHop {
        DIRECT_MAX
    }

    fn apply(&mut self, rib: &Rib<A>, changed: &[Prefix<A>], context: ApplyContext) -> Result<Applied, BuildError> {
        match self {
            Widening::Narrow(_) if context.max_next_hop > NARROW_MAX => {
                // The old structure stays with the readers that hold it:
                // the router frees it with their generation.
                let wide = W::build(rib)?;
                let bytes_written = wide.footprint() as u64;
                *self = Widening::Wide(wide);
                Ok(Applied { rebuilt: true, relocated: false, bytes_written })
            }
            Widening::Narrow(narrow) => narrow.apply(rib, changed, context),
            Widening::Wide(wide) => wide.apply(rib, changed, context),
        }
    }
}

/// Registry updater for `poptrie16` and `poptrie18` of either family
/// (`WideningUpdater`).
///
/// # Errors
/// The build's ([`BuildError`]).
pub fn updater<A: Address, const S: u32>(
    rib: &Rib<A>,
    options: &BuildOptions,
) -> Result<Box<dyn Updater<A>>, BuildError> {
    Ok(Box::new(WideningUpdater::<A, S>::new(rib, options.max_next_hop)?))
}
