//! LC-trie (`lctrie`): the level- and path-compressed trie of Nilsson and
//! Karlsson ("IP-address lookup using LC-tries", 1999) in the shape Linux's
//! `fib_trie` gives it, built once from the RIB.
//!
//! Leaves are the distinct prefix addresses; each leaf holds every prefix
//! with that address as an *alias* (its next hop and its suffix length
//! `32 - prefix_len`), longest prefix first. Internal nodes are path
//! compressed (a node's `key` holds the bits all keys below it share, which
//! the lookup compares) and level compressed (a node branches on `bits`
//! bits, chosen as the largest count whose slots are at least half full,
//! 30% at the root, as Linux's inflate thresholds).
//!
//! ```text
//!  key bits:  31 ............ pos+bits | pos+bits-1 .. pos | pos-1 .. 0
//!             compared with node.key   | child index       | below
//!
//!  nodes[n] --first--> nodes[first .. first + 2^bits]   (the children,
//!                      consecutive as in Nilsson-Karlsson's array; an
//!                      empty slot is a node with bits = 0, aliases = 0)
//!  leaf: nodes[n] --first--> aliases[first .. first + count]
//!         (suffix_len ascending = prefix_len descending)
//! ```
//!
//! | field | bits | meaning |
//! |---|---|---|
//! | `key` | 32 | leaf: the prefix address; node: shared bits, zero from `pos + bits - 1` down |
//! | `first` | 32 | node: index of the first child; leaf: first alias |
//! | `parent` | 32 | parent node (`u32::MAX` at the root), for backtracking |
//! | `pos` | 8 | lowest bit of the child index (0 for leaves) |
//! | `bits` | 8 | child index width (0 marks a leaf or an empty slot) |
//! | `slen` | 8 | largest suffix length of any alias below (Linux's `slen`) |
//! | `aliases` | 8 | leaf: number of aliases (0 marks an empty slot) |
//!
//! A lookup descends comparing the compressed bits. When it falls off the
//! trie (mismatch, empty slot, or a leaf none of whose aliases covers the
//! address), it backtracks: a prefix covering the address has the
//! address's bits with the low ones cleared, so from the deepest node
//! upwards it clears the lowest set bit of the child index, one at a time,
//! and descends again with the key chopped to match (Linux's
//! `cindex &= cindex - 1`). `slen` prunes subtrees holding no prefix short
//! enough. The first alias found is the longest match.

mod build;
mod lookup;
mod stats;

use crate::error::BuildError;
use crate::fib::{forward_fib, BuildOptions, Fib};
use crate::rib::Rib4;
use crate::NextHop;

/// The root's parent.
pub const NONE: u32 = u32::MAX;

/// A node or a leaf of the trie.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Node {
    /// Leaf: the prefix address. Node: the bits shared below, zero from
    /// bit `pos + bits - 1` down.
    pub key: u32,
    /// Node: first child slot. Leaf: first alias.
    pub first: u32,
    /// The parent node, [`NONE`] at the root.
    pub parent: u32,
    /// Lowest bit of the child index.
    pub pos: u8,
    /// Width of the child index; 0 for a leaf.
    pub bits: u8,
    /// Largest `32 - prefix_len` of the prefixes below.
    pub slen: u8,
    /// Leaf: number of aliases.
    pub aliases: u8,
}

/// A prefix stored at a leaf: its next hop and `32 - prefix_len`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Alias {
    /// The next hop.
    pub next_hop: NextHop,
    /// `32 - prefix_len`.
    pub suffix_len: u8,
}

const _: () = assert!(std::mem::size_of::<Node>() == 16);
const _: () = assert!(std::mem::size_of::<Alias>() == 8);

impl Node {
    /// An empty child slot.
    pub const EMPTY: Node = Node { key: 0, first: 0, parent: NONE, pos: 0, bits: 0, slen: 0, aliases: 0 };

    /// Whether the node is a leaf or an empty slot.
    #[inline(always)]
    pub fn is_leaf(&self) -> bool {
        self.bits == 0
    }

    /// Whether the node is an empty child slot.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.bits == 0 && self.aliases == 0
    }
}

/// Shape figures gathered at build time.
#[derive(Clone, Debug, Default)]
pub struct Shape {
    /// Prefixes stored.
    pub prefixes: usize,
    /// Sum of leaf depths (the root is depth 1).
    pub depth_sum: u64,
    /// Deepest leaf.
    pub max_depth: u32,
    /// `internal_by_bits[b]`: internal nodes branching on `b` bits.
    pub internal_by_bits: Vec<usize>,
}

/// A level- and path-compressed trie.
#[derive(Clone, Debug, Default)]
pub struct LcTrie {
    /// Internal nodes, leaves and empty slots; the root is `nodes[0]`
    /// unless the trie is empty.
    pub(crate) nodes: Vec<Node>,
    /// The leaves' prefixes.
    pub(crate) aliases: Vec<Alias>,
    /// Build figures.
    pub(crate) shape: Shape,
}

forward_fib!([] LcTrie, u32, |_trie| "lctrie", []);

/// Registry builder for `lctrie` (next hops are stored whole: no limit).
pub fn build(rib: &Rib4, _options: &BuildOptions) -> Result<Box<dyn Fib<u32>>, BuildError> {
    Ok(Box::new(LcTrie::build(rib)?))
}
