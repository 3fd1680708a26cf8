//! Building the LC-trie from the RIB: group the prefixes by address into
//! leaves, then split the sorted leaf keys recursively, each node skipping
//! the bits its keys share and branching on as many bits as the fill
//! factor allows.

use super::{Alias, LcTrie, Node, Shape, NONE};
use crate::addr::Prefix4;
use crate::error::BuildError;
use crate::mem::{try_reserve, try_with_capacity, AllocError};
use crate::rib::Rib4;
use crate::NextHop;

/// Fill factor of internal nodes: at least half the slots used.
const FILL: (u64, u64) = (1, 2);
/// Fill factor of the root: at least 30% of the slots used.
const ROOT_FILL: (u64, u64) = (3, 10);

/// The largest number of index bits (at most `top + 1`) for which the keys,
/// which agree above bit `top` and differ at it, fill at least
/// `numerator / denominator` of the slots. One bit always qualifies.
pub(crate) fn branching_bits(keys: &[u32], top: u32, (numerator, denominator): (u64, u64)) -> u32 {
    let mut best = 1;
    for bits in 2..=top + 1 {
        let slots = 1u64 << bits;
        if keys.len() as u64 * denominator < slots * numerator {
            break; // even one key per slot cannot fill enough
        }
        let shift = top + 1 - bits;
        let used = 1 + keys.windows(2).filter(|pair| pair[0] >> shift != pair[1] >> shift).count();
        if used as u64 * denominator >= slots * numerator {
            best = bits;
        }
    }
    best
}

/// `key` with bits `0..count` cleared (`count` up to 32).
#[inline(always)]
pub(crate) fn clear_low(key: u32, count: u32) -> u32 {
    ((u64::from(key) >> count) << count) as u32
}

struct Builder<'a> {
    keys: &'a [u32],
    /// Per key: (first alias, alias count, largest suffix length).
    leaves: &'a [(u32, u8, u8)],
    trie: LcTrie,
}

/// The error of memory refused to the LC-trie's array `array`.
fn refused(array: &'static str) -> impl Fn(AllocError) -> BuildError {
    move |error| BuildError::out_of_memory("lctrie", array, error)
}

impl Builder<'_> {
    /// Builds the subtrie of keys `lo..hi` at `depth` into the node slot
    /// `slot` (reserved by the parent, whose children are consecutive).
    ///
    /// # Errors
    /// [`AllocError`] when the system refuses the node array's growth.
    fn subtrie(&mut self, lo: usize, hi: usize, slot: u32, parent: u32, depth: u32) -> Result<(), AllocError> {
        if hi - lo == 1 {
            let (first, aliases, slen) = self.leaves[lo];
            self.trie.nodes[slot as usize] = Node { key: self.keys[lo], first, parent, pos: 0, bits: 0, slen, aliases };
            self.trie.shape.depth_sum += u64::from(depth);
            self.trie.shape.max_depth = self.trie.shape.max_depth.max(depth);
            return Ok(());
        }
        let keys = &self.keys[lo..hi];
        let top = 31 - (keys[0] ^ keys[keys.len() - 1]).leading_zeros();
        let fill = if parent == NONE { ROOT_FILL } else { FILL };
        let bits = branching_bits(keys, top, fill);
        let pos = top + 1 - bits;
        let first = self.trie.nodes.len() as u32;
        try_reserve(&mut self.trie.nodes, 1 << bits)?;
        self.trie.nodes.resize(self.trie.nodes.len() + (1 << bits), Node::EMPTY);
        let by_bits = &mut self.trie.shape.internal_by_bits;
        if by_bits.len() <= bits as usize {
            by_bits.resize(bits as usize + 1, 0);
        }
        by_bits[bits as usize] += 1;
        let slot_of = |key: u32| ((key >> pos) & ((1u64 << bits) - 1) as u32) as usize;
        let mut start = lo;
        while start < hi {
            let child_slot = slot_of(self.keys[start]);
            let end = start + self.keys[start..hi].iter().take_while(|&&key| slot_of(key) == child_slot).count();
            self.subtrie(start, end, first + child_slot as u32, slot, depth + 1)?;
            start = end;
        }
        let children = &self.trie.nodes[first as usize..][..1 << bits];
        let slen = children.iter().map(|child| child.slen).max().unwrap_or(0);
        self.trie.nodes[slot as usize] = Node {
            key: clear_low(keys[0], top + 1),
            first,
            parent,
            pos: pos as u8,
            bits: bits as u8,
            slen,
            aliases: 0,
        };
        Ok(())
    }
}

impl LcTrie {
    /// Builds the trie holding every route of `rib`.
    ///
    /// # Errors
    /// [`BuildError::OutOfMemory`] when the system refuses an array (the
    /// trie's nodes or aliases, or the builder's lists of routes, keys and
    /// leaves, each as long as the table).
    pub fn build(rib: &Rib4) -> Result<Self, BuildError> {
        let mut routes: Vec<(Prefix4, NextHop)> = try_with_capacity(rib.len()).map_err(refused("route list"))?;
        routes.extend(rib.iter());
        routes.sort_unstable_by_key(|(prefix, _)| *prefix);
        // At most one key and leaf per route.
        let mut keys = try_with_capacity(routes.len()).map_err(refused("key list"))?;
        let mut leaves = try_with_capacity(routes.len()).map_err(refused("leaf list"))?;
        let mut aliases = try_with_capacity(routes.len()).map_err(refused("alias array"))?;
        let mut start = 0;
        while start < routes.len() {
            let addr = routes[start].0.addr();
            let end = start + routes[start..].iter().take_while(|(prefix, _)| prefix.addr() == addr).count();
            // Sorted by length ascending; aliases go longest first.
            let first = aliases.len() as u32;
            aliases.extend(
                routes[start..end]
                    .iter()
                    .rev()
                    .map(|&(prefix, next_hop)| Alias { next_hop, suffix_len: 32 - prefix.prefix_len() }),
            );
            let slen = 32 - routes[start].0.prefix_len();
            keys.push(addr);
            leaves.push((first, (end - start) as u8, slen));
            start = end;
        }
        let trie = LcTrie { aliases, shape: Shape { prefixes: routes.len(), ..Shape::default() }, ..LcTrie::default() };
        drop(routes);
        let mut builder = Builder { keys: &keys, leaves: &leaves, trie };
        if !keys.is_empty() {
            builder.trie.nodes.push(Node::EMPTY);
            builder.subtrie(0, keys.len(), 0, NONE, 1).map_err(refused("node array"))?;
        }
        builder.trie.nodes.shrink_to_fit();
        Ok(builder.trie)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branching_follows_the_fill_factor() {
        // Four keys differing in bits 31..30: 4 of 8 slots is half full.
        let full = [0x0000_0000, 0x4000_0000, 0x8000_0000, 0xc000_0000];
        assert_eq!(branching_bits(&full, 31, FILL), 3);
        // Three of four slots used (75%): 2 bits; 3 of 8 (37%): no.
        let three = [0x0000_0000, 0x4000_0000, 0xc000_0000];
        assert_eq!(branching_bits(&three, 31, FILL), 2);
        assert_eq!(branching_bits(&three, 31, (1, 4)), 3, "3 of 8 slots is above 25%");
        // Keys crowded at one end: 2 of 4 slots is half full, 2 of 8 is not.
        let skewed = [0x0000_0000, 0x0000_0001, 0x0000_0002, 0x8000_0000];
        assert_eq!(branching_bits(&skewed, 31, FILL), 2);
        assert_eq!(branching_bits(&skewed, 31, (3, 4)), 1, "one bit always qualifies");
        assert_eq!(branching_bits(&[6, 7], 0, FILL), 1);
    }

    #[test]
    fn nodes_skip_shared_bits_and_leaves_group_prefixes_by_address() {
        let mut rib = Rib4::new();
        rib.insert("10.0.0.0/8".parse().unwrap(), 1);
        rib.insert("10.0.0.0/16".parse().unwrap(), 2);
        rib.insert("10.128.0.0/9".parse().unwrap(), 3);
        let trie = LcTrie::build(&rib).unwrap();
        assert_eq!(trie.nodes.len(), 5, "root and its four slots, two of them empty");
        let root = trie.nodes[0];
        // Keys 10.0.0.0 and 10.128.0.0 differ first at bit 23; at the root
        // 2 of 4 slots (50%) pass the 30% fill factor, 2 of 8 do not.
        assert_eq!((root.pos, root.bits, root.key, root.slen), (22, 2, 0x0a00_0000, 24));
        assert_eq!(trie.nodes[root.first as usize + 2].key, 0x0a80_0000, "10.128/9 in slot 0b10");
        assert!(trie.nodes[root.first as usize + 1].is_empty() && trie.nodes[root.first as usize + 3].is_empty());
        let leaf = trie.nodes[root.first as usize];
        assert_eq!((leaf.key, leaf.aliases, leaf.slen), (0x0a00_0000, 2, 24));
        let aliases = &trie.aliases[leaf.first as usize..][..2];
        assert_eq!(aliases, [Alias { next_hop: 2, suffix_len: 16 }, Alias { next_hop: 1, suffix_len: 24 }]);
        assert_eq!(trie.shape.max_depth, 2);
    }

    #[test]
    fn clearing_low_bits_up_to_all_of_them() {
        assert_eq!(clear_low(0xffff_ffff, 0), 0xffff_ffff);
        assert_eq!(clear_low(0xffff_ffff, 8), 0xffff_ff00);
        assert_eq!(clear_low(0xffff_ffff, 32), 0);
    }
}
