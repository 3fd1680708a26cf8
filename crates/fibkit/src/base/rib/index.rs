//! The RIB's exact-match index: from a prefix to its node, without a walk
//! down the trie.
//!
//! An open-addressing hash table of `(node, tag)` slots, 8 bytes each,
//! probed linearly from the slot the tag's top bits name: a lookup reads
//! one or two cache lines of the table, then the node it names (whose
//! prefix confirms the match), where a walk from the root reads a node a
//! level, a few dozen in a full IPv6 table. The tag is 32 bits of a
//! seeded hash of the prefix (a seed per table: a neighbour announcing
//! prefixes cannot aim them at one slot); slots whose tag differs are
//! passed over without reading their node. The table holds at most three
//! quarters of its slots and doubles beyond that (rehashed from the tags
//! alone); a removal shifts the slots after it back (no tombstones). Large
//! tables sit on huge pages ([`LookupArray`]), as the nodes do.
//!
//! ```text
//!   prefix --hash(seed)--> tag (32 bits) --top bits--> home slot
//!   slots: [ (node, tag) | (node, tag) | (NIL, -) | ... ]   linear probing
//! ```

use crate::addr::{Address, Prefix};
use crate::base::hash::{fold, seeds, MIX};
use crate::mem::LookupArray;

/// No node: an empty slot.
const EMPTY: u32 = u32::MAX;

/// Slots a new table starts with (a power of two).
const INITIAL_BITS: u32 = 4;

#[derive(Clone, Copy, Debug)]
struct Slot {
    node: u32,
    tag: u32,
}

const VACANT: Slot = Slot { node: EMPTY, tag: 0 };

/// Nodes by prefix (module docs).
#[derive(Debug)]
pub(super) struct Index {
    slots: LookupArray<Slot>,
    /// `slots.len() == 1 << bits`.
    bits: u32,
    len: usize,
    seed: [u64; 2],
}

impl Clone for Index {
    fn clone(&self) -> Self {
        Index { slots: LookupArray::from_fn(self.slots.len(), |at| self.slots[at]), ..*self }
    }
}

impl Index {
    /// An empty index with a fresh seed.
    pub(super) fn new() -> Self {
        Index { slots: LookupArray::from_fn(1 << INITIAL_BITS, |_| VACANT), bits: INITIAL_BITS, len: 0, seed: seeds() }
    }

    /// Bytes the table occupies.
    pub(super) fn footprint(&self) -> usize {
        self.slots.len() * size_of::<Slot>()
    }

    /// The tag of `prefix` (the hash's top 32 bits).
    #[inline]
    pub(super) fn tag<A: Address>(&self, prefix: Prefix<A>) -> u32 {
        let addr = prefix.addr().to_u128();
        let low = fold(addr as u64 ^ self.seed[0], MIX[1]);
        let high = fold((addr >> 64) as u64 ^ self.seed[1] ^ low, MIX[0] ^ u64::from(prefix.prefix_len()));
        (high >> 32) as u32
    }

    /// Starts loading the slot a lookup of `tag` reads first.
    #[inline]
    pub(super) fn prefetch(&self, tag: u32) {
        crate::simd::prefetch(&self.slots[self.home(tag)]);
    }

    /// The slot a tag probes first.
    #[inline(always)]
    fn home(&self, tag: u32) -> usize {
        (tag >> (32 - self.bits)) as usize
    }

    /// The first node under `tag` that `is` accepts (`is` reads the node
    /// to compare its prefix; slots of other tags are passed over).
    #[inline]
    pub(super) fn find(&self, tag: u32, mut is: impl FnMut(u32) -> bool) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut at = self.home(tag);
        loop {
            let slot = self.slots[at & mask];
            if slot.node == EMPTY {
                return None;
            }
            if slot.tag == tag && is(slot.node) {
                return Some(slot.node);
            }
            at += 1;
        }
    }

    /// Adds `node` under `tag` (it must not be in the table).
    pub(super) fn insert(&mut self, tag: u32, node: u32) {
        debug_assert_ne!(node, EMPTY);
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        self.place(Slot { node, tag });
        self.len += 1;
    }

    fn place(&mut self, slot: Slot) {
        let mask = self.slots.len() - 1;
        let mut at = self.home(slot.tag);
        while self.slots[at].node != EMPTY {
            at = (at + 1) & mask;
        }
        self.slots[at] = slot;
    }

    /// Doubles the table, rehashing every slot from its tag.
    fn grow(&mut self) {
        assert!(self.bits < 32, "RIB index exceeds 2^32 slots");
        let old = std::mem::replace(&mut self.slots, LookupArray::from_fn(2 << self.bits, |_| VACANT));
        self.bits += 1;
        for &slot in old.iter().filter(|slot| slot.node != EMPTY) {
            self.place(slot);
        }
    }

    /// Removes `node`, which is in the table under `tag`: the slots after
    /// it that may move back (their home at or before the hole) do, so
    /// that every probe still reaches its node.
    pub(super) fn remove(&mut self, tag: u32, node: u32) {
        let mask = self.slots.len() - 1;
        let mut hole = self.home(tag);
        while self.slots[hole].node != node {
            debug_assert_ne!(self.slots[hole].node, EMPTY, "node {node} is not in the index");
            hole = (hole + 1) & mask;
        }
        let mut next = (hole + 1) & mask;
        loop {
            let slot = self.slots[next];
            if slot.node == EMPTY {
                break;
            }
            // The slot may fill the hole if its home is not after the hole
            // (cyclically, between the hole and the slot itself).
            let home = self.home(slot.tag);
            if next.wrapping_sub(home) & mask >= next.wrapping_sub(hole) & mask {
                self.slots[hole] = slot;
                hole = next;
            }
            next = (next + 1) & mask;
        }
        self.slots[hole] = VACANT;
        self.len -= 1;
    }

    /// Number of nodes in the table.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Every `(node, tag)` in the table (for the tests' invariant checks).
    #[cfg(test)]
    pub(super) fn entries(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.slots.iter().filter(|slot| slot.node != EMPTY).map(|slot| (slot.node, slot.tag))
    }

    /// Whether every node is reachable by its probe (no empty slot between
    /// its home and its slot).
    #[cfg(test)]
    pub(super) fn probes_reach_every_node(&self) -> bool {
        let mask = self.slots.len() - 1;
        (0..self.slots.len()).filter(|&at| self.slots[at].node != EMPTY).all(|at| {
            let mut probe = self.home(self.slots[at].tag);
            while probe != at {
                if self.slots[probe].node == EMPTY {
                    return false;
                }
                probe = (probe + 1) & mask;
            }
            true
        })
    }
}
