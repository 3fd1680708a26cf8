//! The lookup: Algorithm 1 of the paper with the *leafvec* of Algorithm 2
//! and the direct pointing of Algorithm 3.
//!
//! The key is shifted left as the lookup descends, so every level reads its
//! chunk from the key's top 6 bits; past the key's last bit the chunk fills
//! with zeros, which the builder accounts for.

use crate::addr::Address;
use crate::engine::{Fib4, Fib6, Stats};
use crate::NextHop;

use std::mem::MaybeUninit;
use std::sync::atomic::Ordering;

use super::{ones_through, Leaf, NodeCell, Poptrie, DIRECT_LEAF, K};
use crate::simd::{self, LANES};

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
        // `Acquire`: the subtree an updater stored before this entry is seen.
        unsafe { self.direct.get_unchecked(index) }.load(Ordering::Acquire)
    }

    #[inline(always)]
    fn node(&self, index: usize) -> &NodeCell {
        debug_assert!(index < self.nodes.len());
        // SAFETY: node indexes come from a `direct` entry, `base1` plus a
        // count of at most the node's children, or 0 for S = 0;
        // `check_indexes` asserted at build time that all of these lie
        // inside `nodes`; the updater only publishes subtrees it checked the
        // same way (`PoptrieUpdater::write_subtree`).
        unsafe { self.nodes.get_unchecked(index) }
    }

    #[inline(always)]
    fn leaf(&self, index: usize) -> L {
        debug_assert!(index < self.leaves.len());
        // SAFETY: `index` is `base0` plus the count of leafvec bits through a
        // leaf slot, at least 1 (the first leaf slot is always marked) and
        // at most the node's leaf count; `check_indexes` asserted both and
        // that the node's leaves lie inside `leaves`.
        L::load(unsafe { self.leaves.get_unchecked(index) })
    }
}

/// Keys per round of the batch pipeline.
const ROUND: usize = 32;

/// A key on its way down the trie: the key shifted past the levels read so
/// far, the node to read next, and where its answer goes.
#[derive(Clone, Copy)]
struct Descent<A> {
    key: A,
    node: u32,
    slot: u32,
}

/// A key whose leaf is found: the leaf's index and where its answer goes.
#[derive(Clone, Copy)]
struct Landing {
    leaf: u32,
    slot: u32,
}

impl<A: Address, L: Leaf, const S: u32> Poptrie<A, L, S> {
    /// Looks up every key; `out[i]` gets the next hop of `keys[i]`.
    ///
    /// Keys go in rounds of 64, pipelined three deep: the direct pass of a
    /// round runs between the descent of the round before and the leaf
    /// reads of the one before that, and the next round's `direct` entries
    /// are prefetched while a round runs. The direct pass reads the
    /// `direct` entries, 16 keys at a time (IPv4: AVX2 gathers or 16 scalar loads, see
    /// [`crate::simd`]), answers the keys that end in a direct leaf, and
    /// prefetches the node of every other key. The descent walks those
    /// keys down the trie level by level, all keys side by side: each key
    /// reads its node (prefetched a stage or a level earlier), then either
    /// goes on to its child (whose node it prefetches) or lands on a leaf
    /// (which it prefetches); the landed keys read their leaves a stage
    /// later. The branches of the descent do not depend on keys (the split between walking
    /// and landed keys is by arithmetic), and nothing is allocated.
    ///
    /// # Panics
    /// If `out` is shorter than `keys`.
    pub fn lookup_batch(&self, keys: &[A], out: &mut [NextHop]) {
        assert!(out.len() >= keys.len(), "output shorter than keys");
        let level = simd::level();
        // Three stages in flight over consecutive rounds (ping-pong
        // buffers): in step r, the direct pass of round r, the leaf reads
        // of round r - 2, the descent of round r - 1, so each load was
        // prefetched a whole stage earlier.
        let mut walking = [[const { MaybeUninit::<Descent<A>>::uninit() }; ROUND]; 2];
        let mut walkers = [0usize; 2];
        let mut landed = [[const { MaybeUninit::<Landing>::uninit() }; ROUND]; 2];
        let mut landings = [0usize; 2];
        let rounds = keys.len().div_ceil(ROUND);
        for step in 0..rounds + 2 {
            if step < rounds {
                let round = step * ROUND;
                let round_keys = &keys[round..keys.len().min(round + ROUND)];
                if S > 0 {
                    // The next round's direct entries, while this round runs.
                    for &key in keys.iter().skip(round + ROUND).take(ROUND) {
                        let index = (key >> (u32::from(A::BITS) - S)).to_u128() as usize;
                        simd::prefetch(self.direct.as_ptr().wrapping_add(index));
                    }
                }
                walkers[step % 2] = self.direct_pass(level, round_keys, round, out, &mut walking[step % 2]);
            }
            if step >= 2 {
                self.read_leaves(&landed[step % 2][..landings[step % 2]], out);
            }
            if (1..=rounds).contains(&step) {
                let previous = (step - 1) % 2;
                landings[previous] = self.descend(&mut walking[previous], walkers[previous], &mut landed[previous]);
            }
        }
    }

    /// Stage 3: the answers of keys whose leaf is found (and was
    /// prefetched a stage earlier).
    #[inline(always)]
    fn read_leaves(&self, landed: &[MaybeUninit<Landing>], out: &mut [NextHop]) {
        for landing in landed {
            // SAFETY: the caller passes the slots `descend` wrote.
            let landing = unsafe { landing.assume_init() };
            out[landing.slot as usize] = self.leaf(landing.leaf as usize).next_hop();
        }
    }

    /// Pass 1 of a round starting at batch index `round`: answers the keys
    /// that end in a direct leaf and queues the others in `walking`;
    /// returns how many it queued.
    #[inline(always)]
    fn direct_pass(
        &self,
        level: simd::Level,
        keys: &[A],
        round: usize,
        out: &mut [NextHop],
        walking: &mut [MaybeUninit<Descent<A>>; ROUND],
    ) -> usize {
        debug_assert!(keys.len() <= ROUND);
        let mut walkers = 0;
        if S == 0 {
            for (index, &key) in keys.iter().enumerate() {
                walking[index] = MaybeUninit::new(Descent { key, node: 0, slot: (round + index) as u32 });
            }
            return keys.len();
        }
        if A::BITS == 32 {
            let test = simd::DirectTest { shift: 32 - S, test_mask: DIRECT_LEAF, test_value: 0 };
            for first in (0..keys.len()).step_by(LANES) {
                let count = LANES.min(keys.len() - first);
                let mut group = [0u32; LANES];
                for (lane, &key) in group.iter_mut().zip(&keys[first..first + count]) {
                    *lane = key.to_u128() as u32;
                }
                let mut entries = [0u32; LANES];
                let internal = simd::direct_stage(level, &self.direct, &group, test, &mut entries);
                for (slot, &entry) in out[round + first..round + first + count].iter_mut().zip(&entries) {
                    *slot = entry & !DIRECT_LEAF;
                }
                let mut lanes = internal & ((1u32 << count) - 1);
                while lanes != 0 {
                    let lane = lanes.trailing_zeros() as usize;
                    lanes &= lanes - 1;
                    let node = entries[lane];
                    simd::prefetch(self.nodes.as_ptr().wrapping_add(node as usize));
                    let key = keys[first + lane] << S;
                    walking[walkers] = MaybeUninit::new(Descent { key, node, slot: (round + first + lane) as u32 });
                    walkers += 1;
                }
            }
        } else {
            for (index, &key) in keys.iter().enumerate() {
                let entry = self.direct_entry((key >> (u32::from(A::BITS) - S)).to_u128() as usize);
                out[round + index] = entry & !DIRECT_LEAF;
                if entry & DIRECT_LEAF == 0 {
                    simd::prefetch(self.nodes.as_ptr().wrapping_add(entry as usize));
                    walking[walkers] = MaybeUninit::new(Descent { key: key << S, node: entry, slot: (round + index) as u32 });
                    walkers += 1;
                }
            }
        }
        walkers
    }

    /// Pass 2: walks the first `walkers` keys of `walking` down the trie,
    /// one level of every key per step, until each has found its leaf;
    /// returns how many keys it put in `landed` (their leaves prefetched).
    #[inline(always)]
    fn descend(
        &self,
        walking: &mut [MaybeUninit<Descent<A>>; ROUND],
        mut walkers: usize,
        landed: &mut [MaybeUninit<Landing>; ROUND],
    ) -> usize {
        let mut landings = 0;
        while walkers > 0 {
            let mut still = 0;
            for index in 0..walkers {
                // SAFETY: slots below `walkers` were written in this round
                // (by the direct pass or the previous step: `still` never
                // passes `index`).
                let descent = unsafe { walking[index].assume_init() };
                let node = self.node(descent.node as usize);
                let v = chunk(descent.key);
                let vector = node.vector.load(Ordering::Relaxed);
                let internal = (vector >> v) & 1 != 0;
                // One count: of `vector` (to the child) or of `leafvec` (to
                // the leaf), chosen without a branch.
                let leafvec = node.leafvec.load(Ordering::Relaxed);
                let bits = std::hint::select_unpredictable(internal, vector, leafvec);
                let (base1, base0) = (node.base1.load(Ordering::Relaxed), node.base0.load(Ordering::Relaxed));
                let base = std::hint::select_unpredictable(internal, base1, base0);
                // Wrapping: an index computed for a key that is done is never used.
                let next = base.wrapping_add(ones_through(bits, v)).wrapping_sub(1);
                let next_line = std::hint::select_unpredictable(
                    internal,
                    self.nodes.as_ptr().wrapping_add(next as usize) as usize,
                    self.leaves.as_ptr().wrapping_add(next as usize) as usize,
                );
                simd::prefetch(next_line as *const u8);
                walking[still] = MaybeUninit::new(Descent { key: descent.key << K, node: next, slot: descent.slot });
                landed[landings] = MaybeUninit::new(Landing { leaf: next, slot: descent.slot });
                still += usize::from(internal);
                landings += usize::from(!internal);
            }
            walkers = still;
        }
        landings
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

    fn lookup_batch(&self, keys: &[u32], out: &mut [NextHop]) {
        Poptrie::lookup_batch(self, keys, out)
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

    fn lookup_batch(&self, keys: &[u128], out: &mut [NextHop]) {
        Poptrie::lookup_batch(self, keys, out)
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
