//! The writer of subtrees below the entries of a live Poptrie (a
//! `direct` entry of `poptrieS`, a block entry of `poptrie16x12`), shared by
//! both updaters (`live.rs`, `live_expanded.rs`, whose module docs say what
//! a batch does): [`SubtreeWriter::rewrite_entry`] walks down from an entry
//! to the changes, reading only the slots an interval touches, and writes
//! what changes into free segments of the node and leaf arrays:
//!
//! - a leaf slot that an interval splits gets a subtree built anew from its
//!   one old next hop and the intervals' (what the full build would put
//!   there, route aggregation included); a slot whose addresses come to
//!   share one next hop becomes a leaf, its old subtree retired;
//! - a node whose leaf slots change gets a new block of leaves; a node
//!   whose slots turn from leaf to node or back, or whose child's record
//!   changes shape (`vector` or `leafvec`), gets a new block of children
//!   (the others' records copied, their subtrees shared);
//! - a record that keeps its shape while its blocks move gets its new
//!   `base0` or `base1` in place: queued, and stored with `Release` once the
//!   batch is written ([`SubtreeWriter::store_bases`]), read with `Acquire`
//!   ([`super::NodeCell`]); a record that changes shape is written into its
//!   parent's new block, or for a root into a free node of its own, which
//!   the entry then names.
//!
//! So an update writes the blocks that change and, at most, its parent's
//! block of children, not the path up to the entry: an IPv6 slot of s = 16
//! or 18 bits holds, in 2026, up to tens of thousands of routes. The paper
//! replaces the smallest affected subtree and swaps one `base1`/`base0`
//! word, or the whole top-level array when a prefix is shorter than `s`;
//! this is that, with the entries themselves atomic words rewritten in
//! place. A reader that reads one base of a record old and the other new
//! finds both blocks valid (same shape; the old ones stay until no reader
//! can hold them), so every lookup answers as before or after the batch.
//! In a structure the updater wrote, a node's children may lie before it in
//! the array (the build puts them after it): the walk ends by depth all the
//! same.
//!
//! The replaced blocks (a node's children and leaves, a root's own node)
//! are retired into a [`Limbo`], tagged with the generation being served,
//! until the router reports that no reader holds it; then they return to
//! the free space (neighbours coalesce). A rewrite that finds no free
//! segment large enough is undone (its allocations freed, its queued bases
//! dropped) for its updater to relocate and retry.

use super::build::{build_slot, direct_limit, Boundaries, Stop};
use super::stats::small;
use super::{Leaf, Node, NodeCell, Poptrie, DIRECT_LEAF, DIRECT_MAX, FANOUT, K};
use crate::addr::Address;
use crate::error::{Limit, LimitExceeded};
use crate::live::{FreeSpace, Limbo};
use crate::rib::Range;
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
    /// A next hop or an index does not fit the structure, or the system
    /// refused the memory of a subtree being built.
    Refused(Stop),
}

impl From<LimitExceeded> for Failure {
    fn from(limit: LimitExceeded) -> Self {
        Failure::Refused(Stop::Limit(limit))
    }
}

impl From<Stop> for Failure {
    fn from(stop: Stop) -> Self {
        Failure::Refused(stop)
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

/// What a node's leaves become ([`SubtreeWriter::rewrite_leaves`]).
#[derive(Clone, Copy, Debug)]
enum Leaves {
    /// No slot is internal and one run remains: the node is this leaf.
    Collapsed(NextHop),
    /// The runs stay; their changed leaves were stored in place.
    InPlace,
    /// A new block of leaves: the node's `leafvec` and `base0` now.
    Block(u64, u32),
}

/// The slots a node uses, by `pad` (past the key's end, every `2^pad`-th:
/// the slots of a group share an address, the first stands for them).
const USED_SLOTS: [u64; K as usize] = {
    let mut used = [0u64; K as usize];
    let mut pad = 0;
    while pad < K as usize {
        let mut v = 0;
        while v < FANOUT {
            used[pad] |= 1 << v;
            v += 1 << pad;
        }
        pad += 1;
    }
    used
};

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

/// The next hop of the one interval of `spans` if it covers the whole
/// region from `first` to `last` by itself.
fn covering<A: Address>(spans: &[Range<A>], first: A, last: A) -> Option<NextHop> {
    match spans {
        [span] if span.first <= first && span.last >= last => Some(span.next_hop),
        _ => None,
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
/// entry of `poptrie16x12`): new blocks into free segments, new bases
/// queued, the replaced blocks retired into a limbo (module docs).
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
    /// The slots a rewrite changes, `(slot, what it becomes)`, a stack of
    /// one run of entries per node being rewritten (in slot order).
    changes: Vec<(u32, Slot)>,
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
            changes: Vec::new(),
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
        self.changes.clear();
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
    /// down) becomes under `spans`: `None` if its record stays (no answer
    /// below it changes, or only leaves rewritten in place); else a leaf
    /// (its blocks retired, and its subtree's), or its record now. Only the
    /// slots an interval touches are read; a touched child is rewritten the
    /// same way. A child whose record keeps its shape (`vector` and
    /// `leafvec`) gets its new bases in place (queued); otherwise, or when
    /// a slot turns from leaf to node or back, the node gets a new block of
    /// children (the others' records copied). Its leaves are written anew
    /// when a leaf slot's next hop changes ([`SubtreeWriter::rewrite_leaves`]).
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
        let last = region_last(first, offset);
        let group_first = |group: usize| first | small::<A>(group as u32) << span_bits;
        let group_of = |addr: A| ((addr ^ first) >> span_bits).to_u128() as usize;
        // This node's changes follow those of the nodes above it on the
        // stack; a child's are popped before this node's next one is pushed.
        let from = self.changes.len();
        let (mut vector, mut children_changed, mut leaves_changed) = (node.vector, false, false);
        // The groups an interval touches, the wide-address arithmetic done
        // once per interval: those it covers whole get its next hop; one it
        // covers in part (at either end) is rewritten under every interval
        // touching it. Groups before `next_group` are done.
        let (mut cursor, mut next_group) = (0, 0);
        while let Some(span) = spans.get(cursor) {
            if span.first > last {
                break;
            }
            cursor += 1;
            if span.last < first {
                continue;
            }
            let high = group_of(span.last.min(last));
            if high < next_group {
                continue;
            }
            let low = group_of(span.first.max(first)).max(next_group);
            let low_whole = span.first <= group_first(low);
            let high_whole = span.last >= group_first(high) | span_mask;
            for group in low..=high {
                let v = (group << pad) as u32;
                let old = if node.is_internal(v) {
                    Slot::Node(trie.nodes[node.child_index(v)].get())
                } else {
                    Slot::Leaf(L::load(&trie.leaves[node.leaf_index(v)]).next_hop())
                };
                let new = if (group > low || low_whole) && (group < high || high_whole) {
                    match old {
                        Slot::Leaf(next_hop) if next_hop == span.next_hop => None,
                        Slot::Leaf(_) => Some(Slot::Leaf(span.next_hop)),
                        Slot::Node(child) => {
                            self.replace_subtree(trie, &child);
                            Some(Slot::Leaf(span.next_hop))
                        }
                    }
                } else {
                    let slot_first = group_first(group);
                    let slot_last = slot_first | span_mask;
                    let touching =
                        cursor - 1 + spans[cursor..].iter().take_while(|span| span.first <= slot_last).count();
                    let here = &spans[cursor - 1..=touching];
                    match old {
                        Slot::Node(child) => self.rewrite_node(trie, &child, slot_first, offset + K, here)?,
                        Slot::Leaf(next_hop) => self.split_leaf(trie, next_hop, slot_first, offset + K, here)?,
                    }
                };
                if let Some(new) = new {
                    match (old, new) {
                        (Slot::Leaf(_), Slot::Leaf(_)) => leaves_changed = true,
                        (Slot::Leaf(_), Slot::Node(_)) | (Slot::Node(_), Slot::Leaf(_)) => {
                            vector ^= 1 << v;
                            (leaves_changed, children_changed) = (true, true);
                        }
                        // The child's record stays (what changed below it
                        // changed in place): nothing to do here.
                        (Slot::Node(was), Slot::Node(now)) if was == now => continue,
                        (Slot::Node(was), Slot::Node(now)) => children_changed |= !same_shape(&was, &now),
                    }
                    self.changes.push((v, new));
                }
            }
            next_group = high + 1;
        }
        if self.changes.len() == from {
            return Ok(None);
        }
        let outcome = self.rewrite_record(trie, node, vector, pad, from, leaves_changed, children_changed);
        self.changes.truncate(from);
        outcome
    }

    /// The rest of [`SubtreeWriter::rewrite_node`], once the slots'
    /// changes (`self.changes[from..]`) are known: `vector` is the node's
    /// now.
    #[allow(clippy::too_many_arguments)]
    fn rewrite_record<const S: u32>(
        &mut self,
        trie: &Poptrie<A, L, S>,
        node: &Node,
        vector: u64,
        pad: u32,
        from: usize,
        leaves_changed: bool,
        children_changed: bool,
    ) -> Result<Option<Slot>, Failure> {
        let mut record = *node;
        record.vector = vector;
        if leaves_changed {
            match self.rewrite_leaves(trie, node, vector, pad, from)? {
                Leaves::Collapsed(next_hop) => return Ok(Some(Slot::Leaf(next_hop))),
                Leaves::InPlace
                    if !children_changed
                        && !self.changes[from..].iter().any(|(_, new)| matches!(new, Slot::Node(_))) =>
                {
                    return Ok(None);
                }
                Leaves::InPlace => {}
                Leaves::Block(leafvec, base0) => (record.leafvec, record.base0) = (leafvec, base0),
            }
        }
        let end = self.changes.len();
        if children_changed {
            let children = vector.count_ones();
            let segment = self.allocate(children, 0)?;
            // Between two changed slots, the children that stay are
            // contiguous in the old block and in the new: copied a run at a
            // time, the changed slots' records written between the runs.
            let (mut old_at, mut new_at, mut slot) = (node.base1 as usize, segment.nodes.0 as usize, 0);
            for at in from..=end {
                let (v, new) = match self.changes.get(at) {
                    Some(&(v, new)) if at < end => (v, Some(new)),
                    _ => (FANOUT as u32, None),
                };
                let between = u64::MAX.checked_shl(slot).unwrap_or(0) & !u64::MAX.checked_shl(v).unwrap_or(0);
                let staying = (node.vector & between).count_ones() as usize;
                NodeCell::copy_block(&trie.nodes, old_at, new_at, staying);
                (old_at, new_at) = (old_at + staying, new_at + staying);
                if let Some(new) = new {
                    old_at += usize::from(node.is_internal(v));
                    if let Slot::Node(now) = new {
                        trie.nodes[new_at].set(now);
                        new_at += 1;
                    }
                }
                slot = v + 1;
            }
            debug_assert_eq!(new_at, (segment.nodes.0 + children) as usize);
            self.bytes_written += u64::from(children) * size_of::<NodeCell>() as u64;
            self.replaced.push(Segment { nodes: (node.base1, node.children() as u32), leaves: (0, 0) });
            record.base1 = segment.nodes.0;
        } else {
            for at in from..end {
                if let (v, Slot::Node(now)) = self.changes[at] {
                    let index = node.child_index(v);
                    let was = trie.nodes[index].get();
                    self.queue_bases(index, &was, &now);
                }
            }
        }
        Ok(Some(Slot::Node(record)))
    }

    /// The leaves of node `node` under the changes `self.changes[from..]`
    /// (`vector` its slots' kinds now): the run starts are recomputed only
    /// where a slot changed and at the leaf slot after it (elsewhere a
    /// slot's run start, which compares it with the leaf slot before it,
    /// compares the same slots with the same next hops), so the cost
    /// follows the changes and the runs, not the 64 slots. If every run
    /// stays (same `vector` and `leafvec`), the changed runs' leaves are
    /// stored in place: a reader finds the old next hop or the new one,
    /// each its address's answer before or after the batch. Otherwise a new
    /// block of leaves, one per run as the build makes them; or, if no
    /// slot is internal and one run remains, the leaf the node collapses
    /// to (its blocks retired).
    fn rewrite_leaves<const S: u32>(
        &mut self,
        trie: &Poptrie<A, L, S>,
        node: &Node,
        vector: u64,
        pad: u32,
        from: usize,
    ) -> Result<Leaves, Failure> {
        let leaf_slots = USED_SLOTS[pad as usize] & !vector;
        let (mut changed, mut to_leaf, mut hops) = (0u64, 0u64, [0 as NextHop; FANOUT]);
        for &(v, new) in &self.changes[from..] {
            changed |= 1 << v;
            if let Slot::Leaf(next_hop) = new {
                to_leaf |= 1 << v;
                hops[v as usize] = next_hop;
            }
        }
        let hop = |v: u32| {
            if to_leaf & 1 << v != 0 {
                hops[v as usize]
            } else {
                L::load(&trie.leaves[node.leaf_index(v)]).next_hop()
            }
        };
        // The slots whose run start is recomputed: the changed leaf slots,
        // and the leaf slot after each changed slot.
        let mut dirty = to_leaf;
        let mut rest = changed;
        while rest != 0 {
            let after = leaf_slots & (u64::MAX << rest.trailing_zeros() << 1);
            dirty |= after & after.wrapping_neg();
            rest &= rest - 1;
        }
        let mut leafvec = node.leafvec & leaf_slots & !dirty;
        let mut rest = dirty;
        while rest != 0 {
            let v = rest.trailing_zeros();
            rest &= rest - 1;
            let before = leaf_slots & !(u64::MAX << v);
            if before == 0 || hop(63 - before.leading_zeros()) != hop(v) {
                leafvec |= 1 << v;
            }
        }
        let leaves = leafvec.count_ones();
        if vector == 0 && leaves == 1 {
            self.replaced.push(Segment::of(node));
            return Ok(Leaves::Collapsed(hop(leafvec.trailing_zeros())));
        }
        if vector == node.vector && leafvec == node.leafvec {
            // Each changed run changed at its start (a slot after it in
            // the run has the start's next hop, before and after).
            let mut rest = to_leaf & leafvec;
            while rest != 0 {
                let v = rest.trailing_zeros();
                rest &= rest - 1;
                L::store(&trie.leaves[node.leaf_index(v)], leaf_of::<L>(hops[v as usize])?);
                self.bytes_written += u64::from(L::BITS / 8);
            }
            return Ok(Leaves::InPlace);
        }
        let segment = self.allocate(0, leaves)?;
        let (mut rest, mut at) = (leafvec, segment.leaves.0 as usize);
        while rest != 0 {
            let v = rest.trailing_zeros();
            rest &= rest - 1;
            L::store(&trie.leaves[at], leaf_of::<L>(hop(v))?);
            at += 1;
        }
        self.bytes_written += u64::from(leaves) * u64::from(L::BITS / 8);
        self.replaced.push(Segment { nodes: (0, 0), leaves: (node.base0, node.leaves() as u32) });
        Ok(Leaves::Block(leafvec, segment.leaves.0))
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
        // One interval over the whole region (the slots of a short prefix,
        // of the default route taken out): its leaf, no runs to work out.
        if let Some(now) = covering(spans, first, last) {
            return Ok((now != next_hop).then_some(Slot::Leaf(now)));
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_interval_over_the_whole_region_covers_it() {
        let span = |first: u32, last: u32, next_hop: NextHop| Range { first, last, next_hop };
        // The slot of 10.0.0.0 with 18 bits: 10.0.0.0 to 10.0.63.255.
        let (first, last) = (0x0a00_0000, 0x0a00_3fff);
        assert_eq!(covering(&[span(0, u32::MAX, 5)], first, last), Some(5));
        assert_eq!(covering(&[span(first, last, 5)], first, last), Some(5));
        assert_eq!(covering(&[span(first + 1, last, 5)], first, last), None, "partly covered");
        assert_eq!(covering(&[span(first, last - 1, 5)], first, last), None, "partly covered");
        let two = [span(first, first + 9, 5), span(first + 10, last, 6)];
        assert_eq!(covering(&two, first, last), None, "two intervals");
    }
}
