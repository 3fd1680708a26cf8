//! The lookup: the paper's walk down the nodes, remembering the longest
//! internal match, and one read of the result array at the end.

use super::{Layout, Node, TreeBitmap};
use crate::addr::Address;
use crate::NextHop;

/// The top `stride` bits of `key`.
#[inline(always)]
fn chunk<A: Address>(key: A, stride: u32) -> u32 {
    (key >> (u32::from(A::BITS) - stride)).to_u128() as u32
}

impl<A: Address, L: Layout> TreeBitmap<A, L> {
    /// Longest-prefix match for `addr`: its next hop, or [`crate::NO_ROUTE`].
    ///
    /// At each node: the longest internal prefix of the key's next `S`
    /// bits gives the result index to remember (a shorter match above is
    /// forgotten, a longer one below replaces it); the external bit of
    /// those bits says whether to go on down. The key is shifted left by
    /// `S` a level, so the last level reads zeros past its last bit (see
    /// the module doc).
    #[inline]
    pub fn lookup(&self, addr: A) -> NextHop {
        let stride = L::STRIDE;
        let mut key = addr;
        let mut node = self.node(0);
        // `results[0]` is NO_ROUTE: the answer when nothing matches.
        let mut best = 0;
        loop {
            let chunk = chunk(key, stride);
            if let Some(result) = node.longest_match(chunk, stride) {
                best = result as usize;
            }
            if !node.has_child(chunk) {
                break;
            }
            node = self.node(node.child_index(chunk));
            key = key << stride;
        }
        self.result(best)
    }

    #[inline(always)]
    fn node(&self, index: usize) -> &Node<L::Bitmap> {
        debug_assert!(index < self.nodes.len());
        // SAFETY: the index is 0 (the root, which every build writes) or a
        // node's `children` plus the count of its external bits below a set
        // one, which is below `children + child_count()`; `check_indexes`
        // asserted at build time that this lies inside `nodes`.
        unsafe { self.nodes.get_unchecked(index) }
    }

    #[inline(always)]
    fn result(&self, index: usize) -> NextHop {
        debug_assert!(index < self.results.len());
        // SAFETY: the index is 0 (`results` always holds the NO_ROUTE
        // entry) or a node's `results` plus the count of its internal bits
        // below a set one, which is below `results + result_count()`;
        // `check_indexes` asserted at build time that this lies inside
        // `results`.
        *unsafe { self.results.get_unchecked(index) }
    }
}
