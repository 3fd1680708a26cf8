//! The lookup: Algorithm 1 of the paper with the *leafvec* of Algorithm 2
//! and the direct pointing of Algorithm 3.
//!
//! The key is shifted left as the lookup descends, so every level reads its
//! chunk from the key's top 6 bits; past the key's last bit the chunk fills
//! with zeros, which the builder accounts for.

use crate::addr::Address;
use crate::engine::{Fib4, Fib6, Stats};
use crate::NextHop;

use super::{Leaf, Node, Poptrie, DIRECT_LEAF, K};

/// The top 6 bits of `key`.
#[inline(always)]
fn chunk<A: Address>(key: A) -> u32 {
    (key >> (u32::from(A::BITS) - K)).to_u128() as u32
}

impl<A: Address, L: Leaf, const S: u32> Poptrie<A, L, S> {
    /// Longest-prefix match for `addr`: its next hop, or [`crate::NO_ROUTE`].
    #[inline]
    pub fn lookup(&self, addr: A) -> NextHop {
        let mut key = addr;
        let mut index = 0;
        if S > 0 {
            let entry = self.direct_entry((addr >> (u32::from(A::BITS) - S)).to_u128() as usize);
            if entry & DIRECT_LEAF != 0 {
                return entry & !DIRECT_LEAF;
            }
            index = entry as usize;
            key = key << S;
        }
        let mut node = self.node(index);
        let mut v = chunk(key);
        while node.is_internal(v) {
            node = self.node(node.child_index(v));
            key = key << K;
            v = chunk(key);
        }
        self.leaf(node.leaf_index(v)).next_hop()
    }

    #[inline(always)]
    fn direct_entry(&self, index: usize) -> u32 {
        debug_assert!(index < self.direct.len());
        // SAFETY: `index` has S bits and `direct` has 2^S entries
        // (`check_indexes` asserts it at build time).
        unsafe { *self.direct.get_unchecked(index) }
    }

    #[inline(always)]
    fn node(&self, index: usize) -> &Node {
        debug_assert!(index < self.nodes.len());
        // SAFETY: node indexes come from a `direct` entry, `base1` plus a
        // count of at most the node's children, or 0 for S = 0;
        // `check_indexes` asserted at build time that all of these lie
        // inside `nodes`, and the arrays are never changed afterwards.
        unsafe { self.nodes.get_unchecked(index) }
    }

    #[inline(always)]
    fn leaf(&self, index: usize) -> L {
        debug_assert!(index < self.leaves.len());
        // SAFETY: `index` is `base0` plus the count of leafvec bits through a
        // leaf slot, at least 1 (the first leaf slot is always marked) and
        // at most the node's leaf count; `check_indexes` asserted both and
        // that the node's leaves lie inside `leaves`.
        unsafe { *self.leaves.get_unchecked(index) }
    }
}

impl<L: Leaf, const S: u32> Fib4 for Poptrie<u32, L, S> {
    fn name(&self) -> &str {
        &self.summary.name
    }

    #[inline]
    fn lookup(&self, addr: u32) -> NextHop {
        Poptrie::lookup(self, addr)
    }

    fn footprint(&self) -> usize {
        Poptrie::footprint(self)
    }

    fn stats(&self) -> Stats {
        self.report()
    }
}

impl<L: Leaf, const S: u32> Fib6 for Poptrie<u128, L, S> {
    fn name(&self) -> &str {
        &self.summary.name
    }

    #[inline]
    fn lookup(&self, addr: u128) -> NextHop {
        Poptrie::lookup(self, addr)
    }

    fn footprint(&self) -> usize {
        Poptrie::footprint(self)
    }

    fn stats(&self) -> Stats {
        self.report()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::Prefix6;
    use crate::poptrie::PoptrieOptions;
    use crate::rib::Rib6;
    use crate::NO_ROUTE;

    #[test]
    fn chunks_are_the_top_six_bits() {
        assert_eq!(chunk(0xfc00_0000u32), 63);
        assert_eq!(chunk(0x0800_0000u32), 2);
        assert_eq!(chunk(1u128 << 122), 1);
        assert_eq!(chunk(u128::MAX), 63);
        // Zero padding past the key's end.
        assert_eq!(chunk(3u32 << 30), 48);
    }

    #[test]
    fn ipv6_host_routes_at_every_depth() {
        let base: u128 = 0x2001_0db8_0000_0000_0000_0000_0000_0000;
        let mut rib = Rib6::new();
        rib.insert("2001:db8::/32".parse::<Prefix6>().unwrap(), 1);
        rib.insert(Prefix6::new(base | 1, 128).unwrap(), 2);
        rib.insert(Prefix6::new(base | 0xff, 128).unwrap(), 3);
        rib.insert(Prefix6::new(base | 0xfe, 127).unwrap(), 4);
        for aggregate in [true, false] {
            let options = PoptrieOptions { aggregate };
            let t0 = Poptrie::<u128, u16, 0>::build(&rib, &options).unwrap();
            let t18 = Poptrie::<u128, u16, 18>::build(&rib, &options).unwrap();
            for (addr, want) in [(base, 1), (base | 1, 2), (base | 2, 1), (base | 0xfe, 4), (base | 0xff, 3), (base - 1, NO_ROUTE)] {
                assert_eq!(t0.lookup(addr), want, "s=0 {addr:x}");
                assert_eq!(t18.lookup(addr), want, "s=18 {addr:x}");
            }
            assert_eq!(t0.summary().levels, 22, "128 bits need 22 levels of 6");
        }
    }
}
