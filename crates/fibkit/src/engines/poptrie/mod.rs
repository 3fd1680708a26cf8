//! Poptrie (Asai and Ohara, SIGCOMM 2015): a 64-ary trie whose nodes find
//! their children and leaves by population count.
//!
//! Engines `poptrie0`, `poptrie16` and `poptrie18` (IPv4 and IPv6): k = 6
//! bits per level, the *leafvec* leaf compression (section 3.3), direct
//! pointing on the top `s` bits (section 3.4, `S` below, a const generic)
//! and route aggregation (on by default, [`PoptrieOptions`]).
//!
//! The rows of the paper's Table 2 are engines too, at s = 0, 16 and 18:
//! `poptrieS-leafvec` (leafvec, no route aggregation) and `poptrieS-basic`
//! (neither: Algorithm 1's 16-byte nodes, [`BasicNodeCell`], one leaf per
//! leaf slot). The node layout is a type parameter ([`NodeLayout`]); the
//! builder, the lookups and the stats serve both; only the full engines
//! update in place and save to files.
//!
//! # Layout
//!
//! ```text
//!  key: | top S bits |  6  |  6  |  6  | ...   (the last chunk is padded
//!            |          |     |            with zero bits past the key)
//!            v          |     |
//!  direct[2^S]: u32     |     |      (S = 0: no direct array; the lookup
//!   +------+------+---  |     |       starts at nodes[0], the root)
//!   | leaf | node | ... |     |
//!   +------+--|---+---  |     |
//!             v         v     |
//!  nodes[]:  +---------------------------------------+
//!            | vector | leafvec | base0 | base1      |  (24 bytes)
//!            +---------------------------------------+
//!   chunk v = 6 key bits; bit v of `vector` set: an internal child,
//!     nodes[base1 + popcount(vector  & bits 0..=v) - 1]  (siblings contiguous)
//!   bit v clear: a leaf,
//!     leaves[base0 + popcount(leafvec & bits 0..=v) - 1] (one leaf per run
//!     of equal next hops among the node's leaf slots, internal slots
//!     skipped: the hole punching of figure 3 does not split a run)
//!
//!  leaves[]: L = u16 while every next hop fits, u32 otherwise
//! ```
//!
//! | word | bits | meaning |
//! |---|---|---|
//! | `direct[i]` | 31 | 1: a leaf, 0: an internal node |
//! | `direct[i]` | 30..0 | the next hop (leaf) or the index into `nodes` |
//! | [`Node::vector`] | 63..0 | bit v: slot v (chunk value v) is an internal node |
//! | [`Node::leafvec`] | 63..0 | bit v: slot v is a leaf that starts a new run of equal next hops |
//! | [`Node::base0`] | 31..0 | index into `leaves` of the node's first leaf |
//! | [`Node::base1`] | 31..0 | index into `nodes` of the node's first internal child |
//! | [`BasicNodeCell`] | 16 bytes | `vector`, `base0`, `base1` as above, no `leafvec`: leaf slot v's leaf is `leaves[base0 + popcount(!vector & bits 0..=v) - 1]` |
//! | `leaves[j]` | 15..0 or 31..0 | a next-hop index, [`crate::NO_ROUTE`] for none |
//!
//! # Population count
//!
//! The hot path counts bits with `u64::count_ones`. On x86-64 that becomes
//! the `popcnt` instruction only when the target has the feature; the
//! workspace's `.cargo/config.toml` compiles for `x86-64-v3` (Haswell, Zen
//! and later), so it does. Without it (`RUSTFLAGS` set in the environment
//! replaces the config's flags) the count is a dozen shifts and masks; the
//! engine's stats say which one the build got (`popcnt`).
//!
//! # Rooms
//!
//! - [`build`]: RIB -> boundary points (the RIB's runs, aggregated, or every
//!   prefix's edges, not aggregated) -> arrays, depth first; route
//!   aggregation's prefix count ([`build::aggregate`]).
//! - `check`: the invariants the lookup's unchecked indexing relies on,
//!   asserted after a build and checked when a compiled file is opened.
//! - `lookup`: the hot path (Algorithms 1-3 of the paper).
//! - `stats`: the figures of the paper's Table 2, counted in the live
//!   arrays (after live updates: of the updated trie; the allocated sizes
//!   include the updater's free space).
//! - `live`: incremental updates under concurrent lookups (section 3.5),
//!   IPv4 and IPv6 ([`PoptrieUpdater`]); `live_expanded`: the same below
//!   the blocks of `poptrie16x12` ([`ExpandedUpdater`]), its second stage;
//!   `live_subtree`: what both write below an entry that an update touches
//!   (new blocks in free space, the bases of a record that keeps its shape
//!   stored in place, the entry stored when its root's record changes).
//!
//! The arrays ([`Poptrie`]) hold nothing but what lookups read: the
//! children of one node form one contiguous block at `base1`, its leaves one
//! block at `base0`, and the builder writes a subtree from a sub-range of the
//! boundary points, which is what the updater builds a direct entry's
//! subtree from.

use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crate::addr::Address;
use crate::mem::LookupArray;
use crate::NextHop;

mod build;
mod check;
mod expanded;
mod file;
mod live;
mod live_expanded;
mod live_subtree;
mod lookup;
mod stats;

pub use build::{aggregate, PoptrieOptions};

use crate::error::BuildError;
use crate::fib::{BuildOptions, Fib};
use crate::rib::Rib;
use build::Prepared;
pub use expanded::{build_expanded, Expanded, MAX_BLOCK_ENTRIES};
pub use file::{open, open_expanded};
pub use live::{updater, LeafWidth, PoptrieUpdater, Widening, WideningUpdater};
pub use live_expanded::{updater_expanded, ExpandedUpdater};

/// Bits of the key each trie level consumes (k in the paper).
pub const K: u32 = 6;

/// Children (slots) per node: 2^k.
pub const FANOUT: usize = 1 << K;

/// Flag of a `direct` entry that holds a next hop rather than a node index.
pub const DIRECT_LEAF: u32 = 1 << 31;

/// Largest next hop or node index a `direct` entry can hold.
pub const DIRECT_MAX: u32 = DIRECT_LEAF - 1;

/// An internal node: 64 slots, each an internal child or a leaf.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Node {
    /// Bit v set: slot v is an internal node.
    pub vector: u64,
    /// Bit v set: slot v is a leaf whose next hop differs from the previous
    /// leaf slot's (or is the first leaf slot).
    pub leafvec: u64,
    /// Index of the node's first leaf in the leaf array.
    pub base0: u32,
    /// Index of the node's first internal child in the node array.
    pub base1: u32,
}

const _: () = assert!(std::mem::size_of::<Node>() == 24);

/// The number of ones among bits `0..=v` of `word` (shifting the higher
/// bits out costs one instruction less than masking them).
#[inline(always)]
pub const fn ones_through(word: u64, v: u32) -> u32 {
    (word << (63 - v)).count_ones()
}

/// Index in the node array of the internal child in slot `v` of a node
/// with `base1` and `vector`. For a leaf slot the value means nothing, but
/// computing it is harmless: it wraps rather than overflows, so a walk can
/// compute it before it knows which index it needs.
#[inline(always)]
const fn child_at(base1: u32, vector: u64, v: u32) -> usize {
    (base1 as usize + ones_through(vector, v) as usize).wrapping_sub(1)
}

impl Node {
    /// Whether slot `v` holds an internal child.
    #[inline(always)]
    pub fn is_internal(&self, v: u32) -> bool {
        self.vector & (1u64 << v) != 0
    }

    /// Index in the node array of the internal child in slot `v` (which
    /// must be an internal slot; for a leaf slot the value means
    /// nothing, but it is computed without overflow).
    #[inline(always)]
    pub fn child_index(&self, v: u32) -> usize {
        child_at(self.base1, self.vector, v)
    }

    /// Index in the leaf array of the leaf in slot `v` (which must be a
    /// leaf slot).
    #[inline(always)]
    pub fn leaf_index(&self, v: u32) -> usize {
        self.base0 as usize + ones_through(self.leafvec, v) as usize - 1
    }

    /// Number of internal children.
    pub fn children(&self) -> usize {
        self.vector.count_ones() as usize
    }

    /// Number of leaves the node owns.
    pub fn leaves(&self) -> usize {
        self.leafvec.count_ones() as usize
    }
}

/// A [`Node`] as the node array stores it: four atomic words, so that the
/// updater (`live`) can write new subtrees into free space of an array that
/// readers are searching. `vector` and `leafvec` are read with `Relaxed`
/// loads, `base0` and `base1` with `Acquire` (all plain loads on x86-64). A
/// reader reaches a new node through a `direct` entry, or a base of a
/// record that keeps its shape, loaded with `Acquire` after the updater
/// stored it with `Release`, so it sees the blocks it points to as
/// written; a record changes in place only in its bases, and a reader that
/// reads one base old and the other new finds both blocks valid (the old
/// ones are retired until no reader can hold them). Its fields are in the order of
/// [`Node`]'s (`repr(C)`, no padding), as compiled FIB files store them.
#[repr(C)]
#[derive(Debug, Default)]
pub struct NodeCell {
    vector: AtomicU64,
    leafvec: AtomicU64,
    base0: AtomicU32,
    base1: AtomicU32,
}

const _: () = assert!(std::mem::size_of::<NodeCell>() == 24);

// SAFETY: four atomic integers in `repr(C)` order, 8 + 8 + 4 + 4 bytes with
// no padding: every bit pattern is a node; written field by field.
unsafe impl crate::mem::Plain for NodeCell {
    fn write_le(cells: &[Self], out: &mut Vec<u8>) {
        out.reserve(cells.len() * 24);
        for node in cells.iter().map(NodeCell::get) {
            out.extend_from_slice(&node.vector.to_le_bytes());
            out.extend_from_slice(&node.leafvec.to_le_bytes());
            out.extend_from_slice(&node.base0.to_le_bytes());
            out.extend_from_slice(&node.base1.to_le_bytes());
        }
    }
}

impl NodeCell {
    /// A cell holding `node`.
    pub fn new(node: Node) -> Self {
        NodeCell {
            vector: AtomicU64::new(node.vector),
            leafvec: AtomicU64::new(node.leafvec),
            base0: AtomicU32::new(node.base0),
            base1: AtomicU32::new(node.base1),
        }
    }

    /// The node.
    pub fn get(&self) -> Node {
        Node {
            vector: self.vector.load(Ordering::Relaxed),
            leafvec: self.leafvec.load(Ordering::Relaxed),
            base0: self.base0.load(Ordering::Acquire),
            base1: self.base1.load(Ordering::Acquire),
        }
    }

    /// Stores a base of a live record with `Release` (the updater, once
    /// the block it names is written; the record keeps its shape).
    fn store_base(&self, base: live_subtree::Base, value: u32) {
        match base {
            live_subtree::Base::Leaves => self.base0.store(value, Ordering::Release),
            live_subtree::Base::Children => self.base1.store(value, Ordering::Release),
        }
    }

    /// Writes `node` (the updater, into space no reader sees).
    pub fn set(&self, node: Node) {
        self.vector.store(node.vector, Ordering::Relaxed);
        self.leafvec.store(node.leafvec, Ordering::Relaxed);
        self.base0.store(node.base0, Ordering::Relaxed);
        self.base1.store(node.base1, Ordering::Relaxed);
    }

    /// Copies the `len` records at `from` in `cells` to `to`: the updater
    /// moving the children that stay into a node's new block, a copy of
    /// bytes rather than eight atomic accesses a record.
    ///
    /// # Panics
    /// If either range is out of `cells` or they overlap.
    pub(crate) fn copy_block(cells: &[NodeCell], from: usize, to: usize, len: usize) {
        let (source, target) = (&cells[from..from + len], &cells[to..to + len]);
        assert!(from + len <= to || to + len <= from, "overlapping blocks");
        // SAFETY: both ranges are in bounds and disjoint (checked above). A
        // `NodeCell` is atomics only (`repr(C)`, no padding), so every byte
        // written is inside an `UnsafeCell`, which a pointer derived from a
        // shared reference may mutate. No data race: the single writer
        // (the updater, here) is the only thread that writes the array,
        // readers only read the source, and the target is free space that
        // no reader can reach until an entry or a base stored later with
        // `Release` names it.
        unsafe { std::ptr::copy_nonoverlapping(source.as_ptr(), target.as_ptr().cast_mut(), len) };
    }

    /// [`Node::is_internal`], reading only `vector`.
    #[inline(always)]
    pub fn is_internal(&self, v: u32) -> bool {
        self.vector.load(Ordering::Relaxed) & (1u64 << v) != 0
    }

    /// [`Node::child_index`], reading only `vector` and `base1`.
    #[inline(always)]
    pub fn child_index(&self, v: u32) -> usize {
        child_at(self.base1.load(Ordering::Acquire), self.vector.load(Ordering::Relaxed), v)
    }

    /// [`Node::leaf_index`], reading only `leafvec` and `base0`.
    #[inline(always)]
    pub fn leaf_index(&self, v: u32) -> usize {
        self.base0.load(Ordering::Acquire) as usize + ones_through(self.leafvec.load(Ordering::Relaxed), v) as usize - 1
    }
}

/// A node as the node array stores it: [`NodeCell`] (with `leafvec`) or
/// [`BasicNodeCell`] (without). Both are read with `Relaxed` loads.
pub trait NodeLayout: crate::mem::Plain + Default + fmt::Debug {
    /// Whether leaves are one per run of equal next hops (`leafvec`), or
    /// one per leaf slot.
    const LEAFVEC: bool;

    /// A cell holding `node` (for the basic layout, whose `leafvec` is
    /// implied, every leaf slot must be marked in it).
    fn new(node: Node) -> Self;

    /// The node (for the basic layout, with every leaf slot marked in
    /// `leafvec`, which is what its leaf index counts).
    fn get(&self) -> Node;

    /// Whether slot `v` holds an internal child.
    fn is_internal(&self, v: u32) -> bool;

    /// Index in the node array of the internal child in slot `v` (for a
    /// leaf slot: meaningless, but computed without overflow).
    fn child_index(&self, v: u32) -> usize;

    /// Index in the leaf array of the leaf in slot `v`.
    fn leaf_index(&self, v: u32) -> usize;
}

impl NodeLayout for NodeCell {
    const LEAFVEC: bool = true;

    fn new(node: Node) -> Self {
        NodeCell::new(node)
    }

    fn get(&self) -> Node {
        NodeCell::get(self)
    }

    #[inline(always)]
    fn is_internal(&self, v: u32) -> bool {
        NodeCell::is_internal(self, v)
    }

    #[inline(always)]
    fn child_index(&self, v: u32) -> usize {
        NodeCell::child_index(self, v)
    }

    #[inline(always)]
    fn leaf_index(&self, v: u32) -> usize {
        NodeCell::leaf_index(self, v)
    }
}

/// The basic Poptrie's node (section 3.1 of the paper, Algorithm 1): 16
/// bytes, no `leafvec`; a node's leaves are one per leaf slot, so slot v's
/// leaf is counted by the zeros of `vector` through v.
#[repr(C)]
#[derive(Debug, Default)]
pub struct BasicNodeCell {
    vector: AtomicU64,
    base0: AtomicU32,
    base1: AtomicU32,
}

const _: () = assert!(std::mem::size_of::<BasicNodeCell>() == 16);

// SAFETY: three atomic integers in `repr(C)` order, 8 + 4 + 4 bytes with
// no padding: every bit pattern is a node; written field by field.
unsafe impl crate::mem::Plain for BasicNodeCell {
    fn write_le(cells: &[Self], out: &mut Vec<u8>) {
        out.reserve(cells.len() * 16);
        for node in cells.iter().map(NodeLayout::get) {
            out.extend_from_slice(&node.vector.to_le_bytes());
            out.extend_from_slice(&node.base0.to_le_bytes());
            out.extend_from_slice(&node.base1.to_le_bytes());
        }
    }
}

impl NodeLayout for BasicNodeCell {
    const LEAFVEC: bool = false;

    fn new(node: Node) -> Self {
        debug_assert_eq!(node.leafvec, !node.vector, "a basic node has a leaf per leaf slot");
        BasicNodeCell {
            vector: AtomicU64::new(node.vector),
            base0: AtomicU32::new(node.base0),
            base1: AtomicU32::new(node.base1),
        }
    }

    fn get(&self) -> Node {
        let vector = self.vector.load(Ordering::Relaxed);
        Node {
            vector,
            leafvec: !vector,
            base0: self.base0.load(Ordering::Relaxed),
            base1: self.base1.load(Ordering::Relaxed),
        }
    }

    #[inline(always)]
    fn is_internal(&self, v: u32) -> bool {
        self.vector.load(Ordering::Relaxed) & (1u64 << v) != 0
    }

    #[inline(always)]
    fn child_index(&self, v: u32) -> usize {
        child_at(self.base1.load(Ordering::Relaxed), self.vector.load(Ordering::Relaxed), v)
    }

    #[inline(always)]
    fn leaf_index(&self, v: u32) -> usize {
        self.base0.load(Ordering::Relaxed) as usize + ones_through(!self.vector.load(Ordering::Relaxed), v) as usize - 1
    }
}

/// A next-hop index as a leaf stores it: `u16` or `u32`.
pub trait Leaf: Copy + Default + Eq + fmt::Debug + Send + Sync + 'static {
    /// Width in bits.
    const BITS: u32;

    /// The atomic cell a leaf array element is (read `Relaxed`).
    type Cell: crate::mem::AtomicCell<Word = Self> + fmt::Debug;

    /// A cell holding `leaf`.
    fn cell(leaf: Self) -> Self::Cell;

    /// The leaf in `cell`.
    fn load(cell: &Self::Cell) -> Self;

    /// Writes `leaf` into `cell` (the updater, into space no reader sees).
    fn store(cell: &Self::Cell, leaf: Self);

    /// The leaf for `next_hop`, or `None` if it does not fit.
    fn from_next_hop(next_hop: NextHop) -> Option<Self>;

    /// The next hop the leaf holds.
    fn next_hop(self) -> NextHop;
}

/// Implements [`Leaf`] for an unsigned integer `$leaf` stored in `$cell`.
macro_rules! leaf {
    ($leaf:ty, $cell:ty) => {
        impl Leaf for $leaf {
            const BITS: u32 = <$leaf>::BITS;
            type Cell = $cell;

            #[inline(always)]
            fn cell(leaf: Self) -> $cell {
                <$cell>::new(leaf)
            }

            #[inline(always)]
            fn load(cell: &$cell) -> Self {
                cell.load(Ordering::Relaxed)
            }

            #[inline(always)]
            fn store(cell: &$cell, leaf: Self) {
                cell.store(leaf, Ordering::Relaxed)
            }

            #[inline]
            fn from_next_hop(next_hop: NextHop) -> Option<Self> {
                Self::try_from(next_hop).ok()
            }

            #[inline(always)]
            fn next_hop(self) -> NextHop {
                NextHop::from(self)
            }
        }
    };
}

leaf!(u16, AtomicU16);
leaf!(u32, AtomicU32);

/// What the builder saw and did, for the stats (lookups never read it).
#[derive(Clone, Debug)]
pub struct BuildSummary {
    /// Registry-style name (`poptrie18`).
    pub name: String,
    /// Whether route aggregation was on.
    pub aggregated: bool,
    /// Routes in the RIB.
    pub prefixes: usize,
    /// Prefixes left after route aggregation (equal to `prefixes` when off).
    pub prefixes_aggregated: usize,
    /// Boundary points the arrays were built from.
    pub boundaries: usize,
    /// `direct` entries that are leaves.
    pub direct_leaves: usize,
    /// Deepest level of internal nodes (the root or a direct-pointed node
    /// is level 1).
    pub levels: u32,
    /// Wall-clock build time, RIB to arrays, in seconds (`None` for a
    /// structure opened from a compiled FIB file, which does not keep it:
    /// two compilations of one table give the same file).
    pub build_seconds: Option<f64>,
}

/// A compiled Poptrie for addresses `A` (u32 or u128), leaves `L` (u16 or
/// u32), `S` bits of direct pointing and nodes `N` ([`NodeCell`] with
/// leafvec, [`BasicNodeCell`] without).
///
/// The arrays are atomic words (see [`NodeCell`]): `direct` entries are
/// loaded with `Acquire`, nodes and leaves with `Relaxed`, all plain loads
/// on x86-64; [`PoptrieUpdater`] replaces the subtrees of direct entries
/// while readers search.
pub struct Poptrie<A: Address, L: Leaf, const S: u32, N: NodeLayout = NodeCell> {
    /// 2^S entries (empty for S = 0); see the module doc for the encoding.
    direct: LookupArray<AtomicU32>,
    /// Internal nodes; for S = 0 the root is `nodes[0]`.
    nodes: LookupArray<N>,
    /// Next-hop indexes.
    leaves: LookupArray<L::Cell>,
    summary: BuildSummary,
    /// Routes in the RIB the structure answers for (the build's count,
    /// then kept by the updater).
    routes: AtomicUsize,
    /// Batches the updater applied in place since the build.
    batches: AtomicU64,
    family: PhantomData<A>,
}

impl<A: Address, L: Leaf, const S: u32, N: NodeLayout> Poptrie<A, L, S, N> {
    /// A copy of the direct-pointing array (empty for S = 0).
    pub fn direct(&self) -> Vec<u32> {
        self.direct.iter().map(|entry| entry.load(Ordering::Relaxed)).collect()
    }

    /// A copy of the internal nodes (free space of an updatable structure
    /// included).
    pub fn nodes(&self) -> Vec<Node> {
        self.nodes.iter().map(N::get).collect()
    }

    /// A copy of the leaves (free space of an updatable structure included).
    pub fn leaves(&self) -> Vec<L> {
        self.leaves.iter().map(L::load).collect()
    }

    /// What the builder saw and did.
    pub fn summary(&self) -> &BuildSummary {
        &self.summary
    }

    /// Bytes of the lookup structure: direct array, nodes and leaves.
    pub fn footprint(&self) -> usize {
        self.direct.len() * std::mem::size_of::<u32>()
            + self.nodes.len() * std::mem::size_of::<N>()
            + self.leaves.len() * std::mem::size_of::<L::Cell>()
    }
}

impl<A: Address, L: Leaf, const S: u32, N: NodeLayout> fmt::Debug for Poptrie<A, L, S, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Poptrie")
            .field("name", &self.summary.name)
            .field("direct", &self.direct.len())
            .field("nodes", &self.nodes.len())
            .field("leaves", &self.leaves.len())
            .finish()
    }
}

/// Registry builder for `poptrieS` of either family (direct pointing on
/// the top S bits): 16-bit leaves while every next hop (the table's and
/// `options.max_next_hop`) fits, 32-bit otherwise.
pub fn build<A: Address, const S: u32>(rib: &Rib<A>, options: &BuildOptions) -> Result<Box<dyn Fib<A>>, BuildError> {
    build_variant::<A, S, NodeCell, true>(rib, options)
}

/// Registry builder for `poptrieS-leafvec` (`N` = [`NodeCell`], no
/// `AGGREGATE`) and `poptrieS-basic` ([`BasicNodeCell`], no
/// `AGGREGATE`): as [`build`], with nodes `N` and route aggregation
/// `AGGREGATE`.
pub fn build_variant<A: Address, const S: u32, N: NodeLayout, const AGGREGATE: bool>(
    rib: &Rib<A>,
    options: &BuildOptions,
) -> Result<Box<dyn Fib<A>>, BuildError> {
    let prepared = Prepared::new(rib, &PoptrieOptions { aggregate: AGGREGATE });
    Ok(if prepared.needs_wide_leaves(options) {
        Box::new(Poptrie::<A, u32, S, N>::assemble(prepared)?)
    } else {
        Box::new(Poptrie::<A, u16, S, N>::assemble(prepared)?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ones_through_counts_bits_zero_to_v() {
        assert_eq!(ones_through(u64::MAX, 0), 1);
        assert_eq!(ones_through(u64::MAX, 63), 64);
        assert_eq!(ones_through(0b1010, 0), 0);
        assert_eq!(ones_through(0b1010, 1), 1);
        assert_eq!(ones_through(0b1010, 3), 2);
        assert_eq!(ones_through(1 << 63, 62), 0);
        assert_eq!(ones_through(1 << 63, 63), 1);
    }

    /// Figure 4 of the paper scaled to k = 6: slots 0..=63 of one node with
    /// internal children at 1 and 40 and three runs of leaves.
    fn sample() -> Node {
        let vector = (1u64 << 1) | (1u64 << 40);
        // Leaf runs: slots 0, 2..=9 -> A (slot 1 is internal: the run
        // continues across it), 10..=39 and 41..=62 -> B (across slot 40),
        // 63 -> C.
        let leafvec = 1u64 | (1u64 << 10) | (1u64 << 63);
        Node { vector, leafvec, base0: 100, base1: 7 }
    }

    #[test]
    fn children_are_counted_by_the_ones_of_vector() {
        let node = sample();
        assert!(node.is_internal(1) && node.is_internal(40));
        assert!(!node.is_internal(0) && !node.is_internal(2) && !node.is_internal(63));
        assert_eq!(node.child_index(1), 7);
        assert_eq!(node.child_index(40), 8);
        assert_eq!(node.children(), 2);
    }

    #[test]
    fn leaves_are_counted_by_the_ones_of_leafvec() {
        let node = sample();
        assert_eq!(node.leaf_index(0), 100);
        // Across the hole punched by the internal slot 1: still leaf A.
        assert_eq!(node.leaf_index(2), 100);
        assert_eq!(node.leaf_index(9), 100);
        assert_eq!(node.leaf_index(10), 101);
        assert_eq!(node.leaf_index(41), 101);
        assert_eq!(node.leaf_index(62), 101);
        assert_eq!(node.leaf_index(63), 102);
        assert_eq!(node.leaves(), 3);
    }

    #[test]
    fn a_full_node_and_an_all_leaf_node() {
        let full = Node { vector: u64::MAX, leafvec: 0, base0: 0, base1: 3 };
        assert_eq!(full.child_index(0), 3);
        assert_eq!(full.child_index(63), 66);
        let flat = Node { vector: 0, leafvec: 1, base0: 5, base1: 0 };
        assert!((0..64).all(|v| !flat.is_internal(v) && flat.leaf_index(v) == 5));
        // A side-by-side walk computes the child index of a leaf slot too
        // (and drops it): with no child before the slot and `base1` 0 it
        // wraps, in every layout, rather than panicking in a debug build.
        assert_eq!(flat.child_index(7), usize::MAX);
        assert_eq!(<NodeCell as NodeLayout>::new(flat).child_index(7), usize::MAX);
        let basic = Node { leafvec: u64::MAX, ..flat };
        assert_eq!(<BasicNodeCell as NodeLayout>::new(basic).child_index(7), usize::MAX);
    }

    #[test]
    fn leaf_widths() {
        assert_eq!(u16::from_next_hop(65_535), Some(65_535));
        assert_eq!(u16::from_next_hop(65_536), None);
        assert_eq!(u32::from_next_hop(1 << 31), Some(1 << 31));
        assert_eq!(7u16.next_hop(), 7);
        assert_eq!(DIRECT_LEAF | 5, 0x8000_0005);
        assert_eq!(DIRECT_MAX, 0x7fff_ffff);
    }
}
