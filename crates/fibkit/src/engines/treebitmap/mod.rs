//! Tree BitMap (Eatherton, Varghese, Dittia, "Tree Bitmap: Hardware/Software
//! IP Lookups with Incremental Updates", CCR 2004), as the Poptrie paper
//! (SIGCOMM 2015, sections 4 and 4.5) built it for its comparison: the
//! bitmaps are searched with the CPU's population count (`popcnt`) instead
//! of the original's lookup table, which makes a 64-ary node as cheap to
//! index as a 16-ary one.
//!
//! Engines `treebitmap16` (stride 4, the original's 16-ary nodes) and
//! `treebitmap64` (stride 6, the Poptrie paper's "Tree BitMap (64-ary)"),
//! both for IPv4 and IPv6 from one generic implementation: the structure is
//! [`TreeBitmap<A, L>`] for addresses `A` (`u32`, `u128`) and the layout
//! `L` = [`Stride<S>`], whose const generic `S` is the stride. No
//! incremental updater (the router rebuilds) and no file format.
//!
//! # Layout
//!
//! A node stands for one `S`-bit step down a binary trie: the prefixes of
//! relative lengths `0..S` that end inside it, and the `2^S` subtrees
//! below it. Its children sit side by side in one array, its results (next
//! hops) side by side in another, and each block is found from one base
//! index plus a population count:
//!
//! ```text
//!  key: |  S  |  S  |  S  | ... | r | 0-padding |   (each node reads S bits;
//!         |     |     |                              the last one reads the
//!         v     |     |                              r = BITS mod S bits left
//!  nodes[0] (root)    |                              and zeros past them)
//!  +-----------------------------------------------+
//!  | internal | external | children | results      |   12 bytes (S = 4)
//!  +-----------------------------------------------+   24 bytes (S = 6)
//!     |          |          |          |
//!     |          |          |          v
//!     |          |          |   results[]: | NO_ROUTE | .. | r0 | r1 | r2 | .. |
//!     |          |          |                              ^ one per set bit of
//!     |          |          |                                `internal`, in bit order
//!     |          |          v
//!     |          |   nodes[]: | .. | c0 | c1 | c2 | c3 | .. |  one per set bit of
//!     |          |                                            `external`, in bit order
//!     |          +-- bit c: the child for the next S key bits = c exists,
//!     |              nodes[children + popcount(external & (2^c - 1))]
//!     +------------- bit p: the prefix at position p (below) ends here,
//!                    results[results + popcount(internal & (2^p - 1))]
//! ```
//!
//! The internal bitmap numbers the `2^S - 1` prefixes of a node breadth
//! first, as the paper draws them: the prefix of relative length `l` whose
//! `l` bits read `v` is at position `2^l - 1 + v` (`*` at 0, `0*` at 1,
//! `1*` at 2, `00*` at 3, ..., `111*` at 14 for S = 4); bit `p` of the word
//! (least significant first) is position `p`. A prefix of relative length
//! `S` or more belongs to a child: one of length `S` is the child's `*`.
//!
//! | field | S = 4 | S = 6 | meaning |
//! |---|---|---|---|
//! | [`Node::internal`] | bits 14..0 of a `u16` (bit 15 unused) | bits 62..0 of a `u64` (bit 63 unused) | bit `p`: the prefix at breadth-first position `p` ends in the node |
//! | [`Node::external`] | bits 15..0 of a `u16` | bits 63..0 of a `u64` | bit `c`: the child for the next `S` key bits = `c` exists |
//! | [`Node::children`] | 32 bits | 32 bits | index in `nodes` of the first child |
//! | [`Node::results`] | 32 bits | 32 bits | index in `results` of the first result |
//! | `results[j]` | 32 bits | 32 bits | a next hop; `results[0]` is [`crate::NO_ROUTE`] |
//!
//! The node of either stride is `repr(C)` with no padding: 2 + 2 + 4 + 4 =
//! 12 bytes for S = 4, 8 + 8 + 4 + 4 = 24 bytes for S = 6 (asserted below).
//! The root is `nodes[0]`; the builder writes the tree depth first, a
//! node's children as one block before any grandchild.
//!
//! # The lookup
//!
//! The paper's algorithm ([`TreeBitmap::lookup`]): at each node, search the
//! internal bitmap for the longest prefix of the key's next `S` bits, from
//! relative length `S - 1` down to 0 (the Poptrie paper's O(k) search inside
//! a node), and remember the index of its result; descend if the external
//! bit of those `S` bits is set; at the bottom read `results` once, at the
//! index remembered last. The index starts at 0, where `results[0]` holds
//! [`crate::NO_ROUTE`], so a key no prefix covers needs no test.
//!
//! # The last, partial level
//!
//! The key is read `S` bits a node, shifted left as the lookup descends, so
//! past its last bit it reads zeros. A prefix of length `len` lives in the
//! node at depth `len / S` (the root is depth 0), at relative length
//! `len % S`, so a full-length route (/32, /128) lives at depth `BITS / S`:
//!
//! | family, stride | levels | last node holds | its key bits |
//! |---|---|---|---|
//! | IPv4, S = 4 | 9 | /32 only, at position 0 (`*`) | 0 (32 = 4 * 8) |
//! | IPv4, S = 6 | 6 | /30, /31, /32 at relative lengths 0, 1, 2 | 2 (32 = 6 * 5 + 2) |
//! | IPv6, S = 4 | 33 | /128 only, at position 0 | 0 (128 = 4 * 32) |
//! | IPv6, S = 6 | 22 | /126, /127, /128 at relative lengths 0, 1, 2 | 2 (128 = 6 * 21 + 2) |
//!
//! A node of the last depth is an ordinary node: its chunk is its `r` real
//! bits followed by `S - r` zeros, the internal positions of relative
//! lengths past `r` (prefixes longer than the address) are never set, so
//! the search falls through them to the real ones, and its external bitmap
//! is always empty, so the walk ends there. No node, no bit and no branch
//! of the lookup is special to the last level. What it costs is memory,
//! as for every prefix whose length is a multiple of the stride: such a
//! prefix is the `*` of a node of its own unless a longer prefix needs
//! that node anyway, so with S = 4 each distinct /32 (/128) takes a node
//! for its one result (the /24s do the same at either stride: 271,637
//! nodes of the 2014 table's). The original paper's end-node optimisation
//! (a node without children reusing its external bitmap's bits for one
//! more level of prefixes) is not built: the Poptrie paper's comparison
//! does not describe it.
//!
//! # Population count
//!
//! The counts use `u64::count_ones` (S = 6) and `u32::count_ones` (S = 4,
//! the `u16` widened); the workspace compiles for `x86-64-v3`, so both are
//! the `popcnt` instruction (the stats say which the build got: `popcnt`).
//!
//! # Rooms
//!
//! - [`build()`]: the registry's builder; `build.rs` writes the arrays
//!   from the RIB's routes in address order, depth first.
//! - `lookup.rs`: the hot path.
//! - `stats.rs`: footprint and the report.

use std::fmt;
use std::marker::PhantomData;

use crate::addr::Address;
use crate::error::BuildError;
use crate::fib::{forward_fib, BuildOptions, Fib};
use crate::mem::LookupArray;
use crate::rib::Rib;
use crate::NextHop;

mod build;
mod lookup;
mod stats;
#[cfg(test)]
mod tests;

/// A bitmap word of a node: `u16` (stride 4) or `u64` (stride 6).
pub trait Bitmap: Copy + Default + Eq + fmt::Debug + Send + Sync + 'static {
    /// Width in bits.
    const BITS: u32;

    /// The word holding the low `Self::BITS` bits of `bits` (the builder
    /// sets no bit past them).
    fn from_bits(bits: u64) -> Self;

    /// Whether bit `position` (below `Self::BITS`) is set.
    fn test(self, position: u32) -> bool;

    /// The number of set bits below bit `position` (below `Self::BITS`).
    fn ones_below(self, position: u32) -> u32;

    /// The number of set bits.
    fn ones(self) -> u32;
}

impl Bitmap for u16 {
    const BITS: u32 = 16;

    fn from_bits(bits: u64) -> Self {
        debug_assert!(bits >> 16 == 0, "bits past a 16-bit bitmap: {bits:#x}");
        bits as u16
    }

    #[inline(always)]
    fn test(self, position: u32) -> bool {
        debug_assert!(position < 16);
        u32::from(self) >> position & 1 != 0
    }

    #[inline(always)]
    fn ones_below(self, position: u32) -> u32 {
        debug_assert!(position < 16);
        (u32::from(self) & ((1u32 << position) - 1)).count_ones()
    }

    #[inline(always)]
    fn ones(self) -> u32 {
        u32::from(self).count_ones()
    }
}

impl Bitmap for u64 {
    const BITS: u32 = 64;

    fn from_bits(bits: u64) -> Self {
        bits
    }

    #[inline(always)]
    fn test(self, position: u32) -> bool {
        debug_assert!(position < 64);
        self >> position & 1 != 0
    }

    #[inline(always)]
    fn ones_below(self, position: u32) -> u32 {
        debug_assert!(position < 64);
        (self & ((1u64 << position) - 1)).count_ones()
    }

    #[inline(always)]
    fn ones(self) -> u32 {
        self.count_ones()
    }
}

/// A Tree BitMap node (see the module doc for its fields' bits).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Node<W: Bitmap> {
    /// Bit `p`: the prefix at breadth-first position `p` (relative length
    /// `l`, bits `v`: `p = 2^l - 1 + v`) ends in this node.
    pub internal: W,
    /// Bit `c`: the child for the next `S` key bits = `c` exists.
    pub external: W,
    /// Index in the node array of the first child.
    pub children: u32,
    /// Index in the result array of the first result.
    pub results: u32,
}

const _: () = assert!(std::mem::size_of::<Node<u16>>() == 12);
const _: () = assert!(std::mem::size_of::<Node<u64>>() == 24);

/// The breadth-first position in the internal bitmap of the prefix of
/// relative length `len` whose `len` bits read `bits`.
#[inline(always)]
pub const fn position(len: u32, bits: u32) -> u32 {
    (1 << len) - 1 + bits
}

impl<W: Bitmap> Node<W> {
    /// Index in the result array of the longest prefix of the `stride`-bit
    /// `chunk` among the node's internal prefixes, searched from relative
    /// length `stride - 1` down to 0 (the paper's search, O(stride)).
    #[inline(always)]
    pub fn longest_match(&self, chunk: u32, stride: u32) -> Option<u32> {
        let mut len = stride;
        while len > 0 {
            len -= 1;
            let position = position(len, chunk >> (stride - len));
            if self.internal.test(position) {
                return Some(self.results + self.internal.ones_below(position));
            }
        }
        None
    }

    /// Whether the child for `chunk` exists.
    #[inline(always)]
    pub fn has_child(&self, chunk: u32) -> bool {
        self.external.test(chunk)
    }

    /// Index in the node array of the child for `chunk` (which must
    /// exist).
    #[inline(always)]
    pub fn child_index(&self, chunk: u32) -> usize {
        self.children as usize + self.external.ones_below(chunk) as usize
    }

    /// Number of children.
    pub fn child_count(&self) -> usize {
        self.external.ones() as usize
    }

    /// Number of results (prefixes ending in the node).
    pub fn result_count(&self) -> usize {
        self.internal.ones() as usize
    }
}

/// A stride as a type: [`Stride<4>`] (16-ary nodes, `u16` bitmaps) and
/// [`Stride<6>`] (64-ary nodes, `u64` bitmaps) implement [`Layout`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Stride<const S: u32>;

/// What a stride fixes: the bitmap word and the engine's name.
pub trait Layout: Send + Sync + 'static {
    /// Key bits per node.
    const STRIDE: u32;
    /// The bitmap word, at least `2^STRIDE` bits.
    type Bitmap: Bitmap;
    /// The registry name.
    const NAME: &'static str;
}

impl Layout for Stride<4> {
    const STRIDE: u32 = 4;
    type Bitmap = u16;
    const NAME: &'static str = "treebitmap16";
}

impl Layout for Stride<6> {
    const STRIDE: u32 = 6;
    type Bitmap = u64;
    const NAME: &'static str = "treebitmap64";
}

const _: () = assert!(1 << <Stride<4> as Layout>::STRIDE <= <u16 as Bitmap>::BITS);
const _: () = assert!(1 << <Stride<6> as Layout>::STRIDE <= <u64 as Bitmap>::BITS);

/// A compiled Tree BitMap for addresses `A` with the layout (stride) `L`.
pub struct TreeBitmap<A: Address, L: Layout> {
    /// The nodes; the root is `nodes[0]`.
    nodes: LookupArray<Node<L::Bitmap>>,
    /// The next hops; `results[0]` is [`crate::NO_ROUTE`].
    results: LookupArray<NextHop>,
    /// Routes in the RIB.
    prefixes: usize,
    /// Nodes at each depth (the root's is 0); its length is the depth.
    nodes_per_level: Vec<usize>,
    family: PhantomData<A>,
}

impl<A: Address, L: Layout> TreeBitmap<A, L> {
    /// A copy of the nodes.
    pub fn nodes(&self) -> Vec<Node<L::Bitmap>> {
        self.nodes.to_vec()
    }

    /// A copy of the results (entry 0 is [`crate::NO_ROUTE`]).
    pub fn results(&self) -> Vec<NextHop> {
        self.results.to_vec()
    }

    /// Levels of nodes: the deepest node's depth plus one.
    pub fn levels(&self) -> usize {
        self.nodes_per_level.len()
    }
}

impl<A: Address, L: Layout> fmt::Debug for TreeBitmap<A, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TreeBitmap")
            .field("name", &L::NAME)
            .field("nodes", &self.nodes.len())
            .field("results", &self.results.len())
            .field("levels", &self.levels())
            .finish()
    }
}

forward_fib!([A: Address, L: Layout] TreeBitmap<A, L>, A, |_engine| L::NAME, []);

/// Registry builder for `treebitmap16` (`S` = 4) and `treebitmap64` (`S` =
/// 6), either family.
///
/// # Errors
/// [`BuildError::Limit`] when the nodes or the results outgrow their 32-bit
/// indexes.
pub fn build<A: Address, const S: u32>(rib: &Rib<A>, _options: &BuildOptions) -> Result<Box<dyn Fib<A>>, BuildError>
where
    Stride<S>: Layout,
{
    Ok(Box::new(TreeBitmap::<A, Stride<S>>::build(rib)?))
}
