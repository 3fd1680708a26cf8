//! The invariants the lookup's unchecked indexing relies on: every index
//! a lookup can compute from any key lies inside its array, and children
//! come after their parent (lookups end). The build asserts them
//! ([`Poptrie::check_indexes`]); opening a compiled file checks them
//! ([`Poptrie::bad_index`]) and refuses a file that breaks one.

use super::{Leaf, NodeLayout, Poptrie, DIRECT_LEAF};
use crate::addr::Address;
use crate::NextHop;

impl<A: Address, L: Leaf, const S: u32, N: NodeLayout> Poptrie<A, L, S, N> {
    /// Asserts the invariants the unchecked indexing of the lookup relies
    /// on: every index a lookup can compute from any key lies inside its
    /// array, and children come after their parent (lookups end). Only the
    /// first `used` nodes are built ones (the rest is free space).
    pub(super) fn check_indexes(&mut self, used: usize) {
        if let Some(bad) = self.bad_index(used, NextHop::MAX) {
            panic!("{}[{}] = {:#x}: {}", bad.array, bad.index, bad.value, bad.problem);
        }
    }

    /// The first index among the direct entries and the first `used` nodes
    /// that breaks an invariant [`Poptrie::check_indexes`] names, or the
    /// first next hop of a direct entry past `max_next_hop` (the build's
    /// are right by construction; a file's are checked).
    pub(super) fn bad_index(&mut self, used: usize, max_next_hop: NextHop) -> Option<BadIndex> {
        let nodes = self.nodes.len();
        let bad = |array, index, value, problem| Some(BadIndex { array, index, value, problem });
        if S == 0 && nodes == 0 {
            return bad("nodes", 0, 0, "no root node");
        }
        if S > 0 && self.direct.len() != 1 << S {
            return bad("direct", 0, self.direct.len() as u64, "the direct array does not have 2^s entries");
        }
        // A branch-free pass (vectorised) first, in `i32` (31-bit values),
        // which AVX2 compares in one instruction; the position on failure.
        let (nodes_i32, largest) =
            (i32::try_from(nodes).unwrap_or(i32::MAX), i32::try_from(max_next_hop).unwrap_or(i32::MAX));
        let wrong = |entry: u32| {
            let (leaf, value) = (entry & DIRECT_LEAF != 0, (entry & !DIRECT_LEAF) as i32);
            leaf & (value > largest) | !leaf & (value >= nodes_i32)
        };
        let direct = self.direct.words();
        if direct.iter().fold(false, |any, &entry| any | wrong(entry)) {
            let index = direct.iter().position(|&entry| wrong(entry)).unwrap_or_default();
            let problem = if direct[index] & DIRECT_LEAF != 0 {
                "next hop beyond the file's values"
            } else {
                "node index out of range"
            };
            return bad("direct", index, direct[index].into(), problem);
        }
        self.bad_node(used)
    }

    /// The first of the first `used` nodes whose children or leaves lie
    /// outside their arrays or before it, or whose bit vectors disagree:
    /// from any node, a walk stays inside the arrays and ends.
    pub(super) fn bad_node(&self, used: usize) -> Option<BadIndex> {
        let (nodes, leaves) = (self.nodes.len(), self.leaves.len());
        let bad = |array, index, value, problem| Some(BadIndex { array, index, value, problem });
        for (index, node) in self.nodes.iter().take(used).map(N::get).enumerate() {
            if node.vector & node.leafvec != 0 {
                return bad("nodes", index, node.leafvec, "leafvec marks an internal slot");
            }
            if node.vector != 0 && node.base1 as usize <= index {
                return bad("nodes", index, node.base1.into(), "children before their parent");
            }
            if node.vector != 0 && node.base1 as usize + node.children() > nodes {
                return bad("nodes", index, node.base1.into(), "children out of range");
            }
            if node.vector != u64::MAX {
                let first_leaf_slot = (!node.vector).trailing_zeros();
                if node.leafvec & (1u64 << first_leaf_slot) == 0 {
                    return bad("nodes", index, node.leafvec, "first leaf slot unmarked");
                }
                if node.base0 as usize + node.leaves() > leaves {
                    return bad("nodes", index, node.base0.into(), "leaves out of range");
                }
            }
        }
        None
    }
}

/// An index that breaks an invariant of the lookup ([`Poptrie::bad_index`]).
pub(super) struct BadIndex {
    /// `direct` or `nodes`.
    pub array: &'static str,
    /// The entry's index.
    pub index: usize,
    /// The field's value.
    pub value: u64,
    /// What is wrong.
    pub problem: &'static str,
}
