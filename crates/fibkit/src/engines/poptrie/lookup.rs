//! The lookup: Algorithm 1 of the paper with the *leafvec* of Algorithm 2
//! and the direct pointing of Algorithm 3.
//!
//! The key is shifted left as the lookup descends, so every level reads its
//! chunk from the key's top 6 bits; past the key's last bit the chunk fills
//! with zeros, which the builder accounts for.

use crate::addr::Address;
use crate::fib::forward_fib;
use crate::NextHop;

use std::sync::atomic::Ordering;

use super::{Leaf, NodeLayout, Poptrie, DIRECT_LEAF, K};
use crate::simd::{self, GROUP, LANES};

/// The top 6 bits of `key`.
#[inline(always)]
fn chunk<A: Address>(key: A) -> u32 {
    (key >> (u32::from(A::BITS) - K)).to_u128() as u32
}

/// Clears the [`DIRECT_LEAF`] flag of a group's direct entries, loaded
/// whole into `entries` (1 to 32 of them), and returns the mask of those
/// that had it clear (bit i for `entries[i]`): the keys that go on down
/// the trie.
///
/// A pass of its own after the loads: folding each entry's flag into the
/// mask as it was loaded chained every key's mask step to its load, and
/// the IPv6 direct stages ran slower, by up to a fifth.
///
/// `poptrieS` takes the flags a group later, as the mask of
/// [`simd::pipeline_settled`]: read back right after the loads, the
/// entries wait for their stores to reach the cache (batched REP about a
/// tenth slower, RND a little faster; a little slower where every key
/// walks). `poptrie16x12` takes them at once: a group later it lost a
/// little where every key walks, its own table. Figures in
/// docs/decisions.md.
#[inline(always)]
pub(super) fn take_leaf_flags(entries: &mut [u32]) -> u32 {
    debug_assert!(!entries.is_empty() && entries.len() <= GROUP);
    let mut leaves = 0;
    for (lane, entry) in entries.iter_mut().enumerate() {
        leaves |= (*entry >> DIRECT_LEAF.trailing_zeros()) << lane;
        *entry &= !DIRECT_LEAF;
    }
    !leaves & u32::MAX >> (GROUP - entries.len())
}

/// Node `index` of the node array `nodes`.
#[inline(always)]
fn node_in<N>(nodes: &[N], index: usize) -> &N {
    debug_assert!(index < nodes.len());
    // SAFETY: node indexes come from a `direct` or block entry, `base1`
    // plus a count of at most the node's children, or 0 for S = 0;
    // `check_indexes` asserted at build time that all of these lie inside
    // `nodes`; the updater only publishes blocks it allocated inside the
    // arrays, with the build's records (`SubtreeWriter` in `live.rs`).
    unsafe { nodes.get_unchecked(index) }
}

impl<A: Address, L: Leaf, const S: u32, N: NodeLayout> Poptrie<A, L, S, N> {
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
        self.walk(index, key)
    }

    /// The lookup below the direct table: from node `index` down, with
    /// `key` shifted past the bits read above it.
    #[inline(always)]
    pub(super) fn walk(&self, index: usize, mut key: A) -> NextHop {
        // The node array's address in a register: through `self`, the
        // `Acquire` loads of the bases made the compiler load it again at
        // every level.
        let nodes: &[N] = &self.nodes;
        let mut node = node_in(nodes, index);
        let mut v = chunk(key);
        while node.is_internal(v) {
            node = node_in(nodes, node.child_index(v));
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
        // `Acquire`: the subtree an updater stored before this entry is seen.
        unsafe { self.direct.get_unchecked(index) }.load(Ordering::Acquire)
    }

    #[inline(always)]
    pub(super) fn node(&self, index: usize) -> &N {
        node_in(&self.nodes, index)
    }

    #[inline(always)]
    pub(super) fn leaf(&self, index: usize) -> L {
        debug_assert!(index < self.leaves.len());
        // SAFETY: `index` is `base0` plus the count of leafvec bits (the
        // basic layout: of leaf slots) through a leaf slot, at least 1 (the first leaf slot is always marked) and
        // at most the node's leaf count; `check_indexes` asserted both and
        // that the node's leaves lie inside `leaves`.
        L::load(unsafe { self.leaves.get_unchecked(index) })
    }
}

impl<A: Address, L: Leaf, const S: u32, N: NodeLayout> Poptrie<A, L, S, N> {
    /// Looks up every key; `out[i]` gets the next hop of `keys[i]`.
    ///
    /// With direct pointing (s > 0), keys go in groups of 32 through two
    /// stages, software-pipelined as in DXR's batch lookup
    /// ([`simd::pipeline`]):
    ///
    /// ```text
    ///  direct(0)  direct(1)  walk(0)  direct(2)  walk(1)  ...  walk(last)
    /// ```
    ///
    /// 1. the direct stage loads the group's `direct` entries at once
    ///    (IPv4: AVX2 gathers, 8 lanes at a time, see [`crate::simd`];
    ///    IPv6 and the scalar level: one load a key; the AVX2 gathers on
    ///    the keys' top 32 bits were slower for IPv6, in RND and REP) and
    ///    writes each entry
    ///    as the key's answer: a direct leaf's next hop, or for now the
    ///    node index of a key that goes on down the trie; no branch depends
    ///    on the loaded entries;
    /// 2. one group behind, the keys that go on (about 1 in 8 with s = 18
    ///    on a full table) walk down from that node as the scalar lookup
    ///    does, side by side as far as the CPU overlaps them, while the
    ///    next group's loads are in flight.
    ///
    /// Those walks stay one key at a time: walking the few keys of a group
    /// level by level side by side, as poptrie0 does, made these engines
    /// slower, in RND and REP, and so did a queue gathering walks across
    /// groups.
    ///
    /// Without direct pointing (poptrie0) every key walks from the root,
    /// four keys side by side (IPv6: two), a level a round, with no branch
    /// on a lane's walk ending (`walk_side_by_side`): faster than one by
    /// one in RND and REP, for IPv4 and IPv6; 8 lanes did no better, 16
    /// were slower than one by one. Figures in docs/decisions.md.
    /// Nothing is allocated.
    ///
    /// # Panics
    /// If `out` is shorter than `keys`.
    pub fn lookup_batch(&self, keys: &[A], out: &mut [NextHop]) {
        assert!(out.len() >= keys.len(), "output shorter than keys");
        let out = &mut out[..keys.len()];
        if S == 0 {
            // A 128-bit key takes two registers: half the lanes fit.
            if A::BITS == 32 {
                self.walk_all::<4>(keys, out);
            } else {
                self.walk_all::<2>(keys, out);
            }
            return;
        }
        match simd::level() {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the level is at most `simd::detected()`, so the CPU has AVX2.
            simd::Level::Avx512 | simd::Level::Avx2 if A::BITS == 32 => unsafe { self.lookup_batch_avx2(keys, out) },
            _ => self.pipeline(keys, out, simd::direct_stage_scalar),
        }
    }

    /// The pipeline with AVX2 gathers (IPv4).
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn lookup_batch_avx2(&self, keys: &[A], out: &mut [NextHop]) {
        // SAFETY: AVX2 is this function's contract; `direct` has 2^S
        // entries, so every index `key >> (32 - S)` is inside it.
        let gather = |table: &_, keys: &_, test, entries: &mut _| unsafe {
            simd::x86::direct_stage_avx2(table, keys, test, entries)
        };
        self.pipeline(keys, out, gather)
    }

    /// The two stages (see [`Poptrie::lookup_batch`]); `out.len() == keys.len()`.
    #[inline(always)]
    fn pipeline(&self, keys: &[A], out: &mut [NextHop], gather: impl simd::DirectKernel) {
        simd::pipeline_settled(
            keys,
            out,
            |keys, out| self.direct_group(keys, out, &gather),
            |walks, out| if A::BITS == 32 { walks } else { take_leaf_flags(out) },
            |key, out| *out = self.walk(*out as usize, key << S),
        );
    }

    /// Every key walks from the root, `W` side by side
    /// ([`Self::walk_side_by_side`]); `out.len() == keys.len()`.
    #[inline(always)]
    fn walk_all<const W: usize>(&self, keys: &[A], out: &mut [NextHop]) {
        let mut keys = keys.chunks_exact(W);
        let mut outs = out.chunks_exact_mut(W);
        for (keys, out) in (&mut keys).zip(&mut outs) {
            out.copy_from_slice(&self.walk_side_by_side([0; W], keys.try_into().expect("a full chunk")));
        }
        for (slot, &key) in outs.into_remainder().iter_mut().zip(keys.remainder()) {
            *slot = self.walk(0, key);
        }
    }

    /// [`Self::walk`] for `W` keys at once, a level a round: every round
    /// loads the node of each lane, and the lanes still at an internal
    /// slot step down, until none is. Each round's loads are independent,
    /// so they are in flight together; a lane whose walk has ended reads
    /// its node again (from L1) until the last one ends.
    #[inline(always)]
    fn walk_side_by_side<const W: usize>(&self, mut index: [usize; W], mut key: [A; W]) -> [NextHop; W] {
        // With the step written as an `if`, LLVM branches on each lane's
        // `internal`, mispredicted at the end of every walk, and the
        // rounds ran slower than walks one by one.
        let nodes: &[N] = &self.nodes;
        loop {
            let mut descending = false;
            for lane in 0..W {
                let node = node_in(nodes, index[lane]);
                let v = chunk(key[lane]);
                let internal = node.is_internal(v);
                descending |= internal;
                // All ones where the lane stays.
                let stay = usize::from(internal).wrapping_sub(1);
                index[lane] = node.child_index(v) & !stay | index[lane] & stay;
                key[lane] = key[lane] << (K * u32::from(internal));
            }
            if !descending {
                break;
            }
        }
        std::array::from_fn(|lane| self.leaf(node_in(nodes, index[lane]).leaf_index(chunk(key[lane]))).next_hop())
    }

    /// The direct stage of up to 32 keys. IPv4: writes each key's `direct`
    /// entry without its leaf flag (a next hop, or a node index) to `out`
    /// and returns the mask of the keys whose entry is a node. IPv6:
    /// writes the entries whole and returns 0; [`take_leaf_flags`] takes
    /// the flags a group later.
    #[inline(always)]
    fn direct_group(&self, keys: &[A], out: &mut [NextHop], gather: impl simd::DirectKernel) -> u32 {
        debug_assert!(keys.len() <= GROUP && out.len() == keys.len());
        if A::BITS == 32 {
            let (Some(keys), Some(out)) = (keys.first_chunk::<GROUP>(), out.first_chunk_mut::<GROUP>()) else {
                return simd::padded::<_, GROUP>(keys, out, A::ZERO, move |keys, out| {
                    self.direct_group(keys, out, gather)
                });
            };
            let test = simd::DirectTest {
                shift: 32 - S,
                test_mask: DIRECT_LEAF,
                test_value: 0,
                value_shift: 0,
                value_mask: !DIRECT_LEAF,
            };
            let keys = keys.map(|key| key.to_u128() as u32);
            let (low, high) = out.split_at_mut(LANES);
            gather(&self.direct, keys[..LANES].try_into().expect("16 keys"), test, low.try_into().expect("16 slots"))
                | gather(
                    &self.direct,
                    keys[LANES..].try_into().expect("16 keys"),
                    test,
                    high.try_into().expect("16 slots"),
                ) << LANES
        } else {
            for (&key, slot) in keys.iter().zip(out.iter_mut()) {
                *slot = self.direct_entry((key >> (u32::from(A::BITS) - S)).to_u128() as usize);
            }
            0
        }
    }
}

forward_fib!([A: Address, L: Leaf, const S: u32, N: NodeLayout] Poptrie<A, L, S, N>, A, |poptrie| &poptrie.summary.name, [lookup_batch], [save]);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::Prefix6;
    use crate::engines::poptrie::PoptrieOptions;
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
    fn leaf_flags_leave_the_walks_mask() {
        let mut entries = [DIRECT_LEAF | 7, 12, DIRECT_LEAF, 0, DIRECT_LEAF | 0x7fff_ffff];
        assert_eq!(take_leaf_flags(&mut entries), 0b01010);
        assert_eq!(entries, [7, 12, 0, 0, 0x7fff_ffff]);
        let mut group = [DIRECT_LEAF; GROUP];
        group[31] = 5;
        assert_eq!(take_leaf_flags(&mut group), 1 << 31);
        assert_eq!(group[30..], [0, 5]);
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
            for (addr, want) in
                [(base, 1), (base | 1, 2), (base | 2, 1), (base | 0xfe, 4), (base | 0xff, 3), (base - 1, NO_ROUTE)]
            {
                assert_eq!(t0.lookup(addr), want, "s=0 {addr:x}");
                assert_eq!(t18.lookup(addr), want, "s=18 {addr:x}");
            }
            assert_eq!(t0.summary().levels, 22, "128 bits need 22 levels of 6");
        }
    }
}
