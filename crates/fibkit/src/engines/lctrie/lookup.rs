//! The lookup: descend, then backtrack for the longest match.

use super::build::clear_low;
use super::{LcTrie, Node, NONE};
use crate::{NextHop, NO_ROUTE};

impl LcTrie {
    /// Longest-prefix match for `key`.
    #[inline]
    pub fn lookup(&self, key: u32) -> NextHop {
        if self.nodes.is_empty() {
            return NO_ROUTE;
        }
        // The deepest node passed whose subtree holds prefixes short enough
        // to cover addresses beside the path (Linux's `pn`).
        let mut backtrack_from = NONE;
        let mut index = 0u32;
        loop {
            let node = &self.nodes[index as usize];
            let diff = key ^ node.key;
            let child_index = u64::from(diff) >> node.pos;
            if child_index >> node.bits != 0 {
                // The key leaves the node's shared bits (or, at a leaf,
                // differs from its address) at bit `top`.
                let top = 31 - diff.leading_zeros();
                if let Some(next_hop) = self.below_mismatch(node, key, top) {
                    return next_hop;
                }
                return self.backtrack(key, backtrack_from);
            }
            if node.is_leaf() {
                if node.is_empty() {
                    return self.backtrack(key, backtrack_from);
                }
                // The key is the leaf's address: its longest alias matches.
                return self.aliases[node.first as usize].next_hop;
            }
            if node.slen > node.pos {
                backtrack_from = index;
            }
            index = node.first + child_index as u32;
        }
    }

    /// The longest prefix inside `node` covering `key` when `key` and
    /// `node.key` first differ at bit `top`: its address is `key` with bits
    /// `0..=top` cleared, which is inside the node only if the node's key
    /// is zero there, and only aliases with a suffix beyond `top` cover it.
    #[inline(always)]
    fn below_mismatch(&self, node: &Node, key: u32, top: u32) -> Option<NextHop> {
        if u32::from(node.slen) <= top || clear_low(node.key, top + 1) != node.key {
            return None;
        }
        if node.is_leaf() {
            return self.longest_alias_beyond(node, top);
        }
        self.descend_chopped(node, clear_low(key, top + 1), top)
    }

    /// The first (longest) alias of `leaf` whose suffix exceeds `cut`.
    #[inline(always)]
    fn longest_alias_beyond(&self, leaf: &Node, cut: u32) -> Option<NextHop> {
        let aliases = &self.aliases[leaf.first as usize..][..usize::from(leaf.aliases)];
        aliases.iter().find(|alias| u32::from(alias.suffix_len) > cut).map(|alias| alias.next_hop)
    }

    /// Descends from `start` with `chopped` (an address whose bits
    /// `0..=cut` are zero) to the leaf with exactly that address, and
    /// returns its longest alias with a suffix beyond `cut`.
    fn descend_chopped(&self, start: &Node, chopped: u32, cut: u32) -> Option<NextHop> {
        let mut node = start;
        loop {
            if u32::from(node.slen) <= cut {
                return None; // empty slots too: their slen is 0
            }
            let diff = chopped ^ node.key;
            if node.is_leaf() {
                return if diff == 0 { self.longest_alias_beyond(node, cut) } else { None };
            }
            let child_index = u64::from(diff) >> node.pos;
            if child_index >> node.bits != 0 {
                return None;
            }
            node = &self.nodes[node.first as usize + child_index as usize];
        }
    }

    /// From `from` up to the root: clear the lowest set bit of the key's
    /// child index one at a time and look for the prefix whose address is
    /// the key chopped there.
    #[cold]
    fn backtrack(&self, key: u32, from: u32) -> NextHop {
        let mut index = from;
        while index != NONE {
            let node = &self.nodes[index as usize];
            let mut child_index = ((key ^ node.key) >> node.pos) & (((1u64 << node.bits) - 1) as u32);
            while child_index != 0 {
                let cut = u32::from(node.pos) + child_index.trailing_zeros();
                if u32::from(node.slen) <= cut {
                    break;
                }
                child_index &= child_index - 1;
                let child = &self.nodes[node.first as usize + child_index as usize];
                if let Some(next_hop) = self.descend_chopped(child, clear_low(key, cut + 1), cut) {
                    return next_hop;
                }
            }
            index = node.parent;
        }
        NO_ROUTE
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::Prefix4;
    use crate::rib::Rib4;

    fn rib(routes: &[(&str, NextHop)]) -> Rib4 {
        routes.iter().map(|&(text, next_hop)| (text.parse::<Prefix4>().unwrap(), next_hop)).collect()
    }

    #[test]
    fn backtracks_to_shorter_prefixes_beside_the_path() {
        let rib = rib(&[
            ("0.0.0.0/0", 9),
            ("10.0.0.0/8", 1),
            ("10.0.0.0/24", 2),
            ("10.0.1.0/24", 3),
            ("10.64.0.0/10", 4),
            ("10.96.0.0/12", 5),
            ("10.255.255.255/32", 6),
        ]);
        let trie = LcTrie::build(&rib).unwrap();
        for addr in [
            0x0a00_0000, // exact leaf address
            0x0a00_0005, // inside a /24
            0x0a00_0105,
            0x0a00_0205, // beside both /24s: the /8 at the same leaf key
            0x0a40_0001, // the /10
            0x0a61_0000, // the /12 inside the /10
            0x0a70_0000, // the /10 again, after the /12
            0x0aff_fffe, // beside the /32: back to the /8
            0x0aff_ffff,
            0x0b00_0000, // the default route
            0xffff_ffff,
            0,
        ] {
            assert_eq!(trie.lookup(addr), rib.lookup(addr), "address {addr:#010x}");
        }
    }

    #[test]
    fn empty_and_single_route_tries() {
        assert_eq!(LcTrie::build(&Rib4::new()).unwrap().lookup(1), NO_ROUTE);
        let trie = LcTrie::build(&rib(&[("192.168.0.0/16", 7)])).unwrap();
        assert_eq!(trie.lookup(0xc0a8_0101), 7);
        assert_eq!(trie.lookup(0xc0a9_0101), NO_ROUTE);
        let trie = LcTrie::build(&rib(&[("0.0.0.0/0", 3)])).unwrap();
        assert_eq!(trie.lookup(0xdead_beef), 3);
    }
}
