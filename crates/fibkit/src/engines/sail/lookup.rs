//! The lookup: at most three dependent loads, no search; and the batch
//! path, which loads level 16 for a group of keys before going on below.

use std::sync::atomic::{fence, Ordering};

use super::{Sail, Word};
use crate::simd;
use crate::NextHop;

impl<W: Word> Sail<W> {
    /// Longest-prefix match for `addr`.
    #[inline]
    pub fn lookup(&self, addr: u32) -> NextHop {
        let entry = self.level16(addr, Ordering::Acquire);
        if entry & W::FLAG == 0 {
            return entry;
        }
        self.below16(entry, addr)
    }

    /// `BCN16[addr >> 16]`, loaded with `order` (`Acquire`, or `Relaxed`
    /// followed by an `Acquire` fence).
    #[inline(always)]
    fn level16(&self, addr: u32, order: Ordering) -> u32 {
        let index = (addr >> 16) as usize;
        debug_assert!(index < self.bcn16.len());
        // SAFETY: `bcn16` has 2^16 entries and `index < 2^16`.
        W::load(unsafe { self.bcn16.get_unchecked(index) }, order)
    }

    /// Levels 24 and 32, for a level-16 `entry` holding a chunk ID.
    #[inline(always)]
    fn below16(&self, entry: u32, addr: u32) -> NextHop {
        let index = ((entry & W::VALUE) as usize) << 8 | (addr >> 8 & 0xff) as usize;
        debug_assert!(index < self.bcn24.len());
        // SAFETY: the builder and the updater give level-16 chunk IDs below
        // the number of level-24 chunks, each of 256 entries in `bcn24`.
        let entry = W::load(unsafe { self.bcn24.get_unchecked(index) }, Ordering::Relaxed);
        if entry & W::FLAG == 0 {
            return entry;
        }
        let index = ((entry & W::VALUE) as usize) << 8 | (addr & 0xff) as usize;
        debug_assert!(index < self.n32.len());
        // SAFETY: as above, for level-24 chunk IDs and `n32`.
        W::load(unsafe { self.n32.get_unchecked(index) }, Ordering::Relaxed)
    }

    /// Looks up every key; `out[i]` gets the next hop of `keys[i]`.
    ///
    /// Keys go in groups of 32 through [`simd::pipeline`]'s two stages:
    /// the first loads the group's level-16 entries and answers every key
    /// as if resolved there; the second, one group later, goes on from the
    /// level-16 entry kept in the answer slot, its loads overlapping the
    /// next group's. The level-16 loads are plain loads at every SIMD
    /// level: AVX2 gathers of them were slower, in RND and REP. Nor does
    /// the first stage prefetch the level-24 entries: a prefetch for every
    /// key (the level-16 entry of a resolved one names no chunk, so its
    /// prefetch is of a random line) cost about a third of the rate;
    /// prefetching only the chunked keys' level-24 entries (a loop over the
    /// mask's bits) cost a fifth too, and so did a branch-free prefetch for
    /// every key (of entry 0 for the resolved ones). Yet the loads of level
    /// 24 are where the batch path waits (under `perf`, the largest share
    /// of its samples is on the instruction after them). Nor did a second
    /// stage without the branch on the level-24 entry (always a level-32
    /// load, of entry 0 for a resolved key, and a select) pay: it was
    /// slower, as the predicted branch lets the CPU go on past a level-24
    /// load still in flight. Figures in docs/decisions.md.
    /// Nothing is allocated.
    ///
    /// # Panics
    /// If `out` is shorter than `keys`.
    pub fn lookup_batch(&self, keys: &[u32], out: &mut [NextHop]) {
        assert!(out.len() >= keys.len(), "output shorter than keys");
        let out = &mut out[..keys.len()];
        simd::pipeline(keys, out, |keys, out| self.level16_group(keys, out), |key, out| *out = self.below16(*out, key));
    }

    /// The first stage for up to 32 keys: writes each key's level-16
    /// entry as its answer and returns the mask of the keys whose entry
    /// holds a chunk ID.
    ///
    /// Eight keys at a time ([`simd::flagged_group`]), the entries are
    /// loaded `Relaxed` and handed to [`simd::store_flagged`], which stores
    /// them as answers and tests their chunk flags in one vector; one
    /// `Acquire` fence after the group orders every entry before the chunks
    /// the second stage reads. With all 32 entries in one array and the
    /// answers and mask worked out in a pass of their own, the compiler
    /// spilled registers and mixed scalar and narrow vector stores, and
    /// batched RND fell by about a seventh against the same code on plain,
    /// non-atomic entries; with the kernel it measures level with it in
    /// alternated runs (figures in docs/decisions.md).
    #[inline(always)]
    fn level16_group(&self, keys: &[u32], out: &mut [NextHop]) -> u32 {
        let chunked = simd::flagged_group(keys, out, W::FLAG, |key| self.level16(key, Ordering::Relaxed));
        fence(Ordering::Acquire);
        chunked
    }
}
