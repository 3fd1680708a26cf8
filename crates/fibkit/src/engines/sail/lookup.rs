//! The lookup: at most three dependent loads, no search; and the batch
//! path, which gathers level 16 for many keys and prefetches level 24.

use super::{Sail, Word};
use crate::simd::{self, GROUP, LANES};
use crate::NextHop;

impl<W: Word> Sail<W> {
    /// Longest-prefix match for `addr`.
    #[inline]
    pub fn lookup(&self, addr: u32) -> NextHop {
        let entry = self.level16(addr);
        if entry & W::FLAG == 0 {
            return entry;
        }
        self.below16(entry, addr)
    }

    /// `BCN16[addr >> 16]`.
    #[inline(always)]
    fn level16(&self, addr: u32) -> u32 {
        let index = (addr >> 16) as usize;
        debug_assert!(index < self.bcn16.len());
        // SAFETY: `bcn16` has 2^16 + 1 entries and `index < 2^16`.
        unsafe { *self.bcn16.get_unchecked(index) }.into()
    }

    /// Levels 24 and 32, for a level-16 `entry` holding a chunk ID.
    #[inline(always)]
    fn below16(&self, entry: u32, addr: u32) -> NextHop {
        let index = ((entry & W::VALUE) as usize) << 8 | (addr >> 8 & 0xff) as usize;
        debug_assert!(index < self.bcn24.len());
        // SAFETY: the builder gives level-16 chunk IDs below the number of
        // level-24 chunks, each of 256 entries in `bcn24`.
        let entry: u32 = unsafe { *self.bcn24.get_unchecked(index) }.into();
        if entry & W::FLAG == 0 {
            return entry;
        }
        let index = ((entry & W::VALUE) as usize) << 8 | (addr & 0xff) as usize;
        debug_assert!(index < self.n32.len());
        // SAFETY: as above, for level-24 chunk IDs and `n32`.
        unsafe { *self.n32.get_unchecked(index) }.into()
    }

    /// Looks up every key; `out[i]` gets the next hop of `keys[i]`.
    ///
    /// Keys go in groups of 32 through [`simd::pipeline`]'s two stages:
    /// the first gathers the group's level-16 entries (AVX2 gathers of
    /// 16- or 32-bit words, or scalar loads), answers every key as if
    /// resolved there and prefetches the level-24 entry of the others;
    /// the second, one group later, finishes those. Nothing is allocated.
    ///
    /// # Panics
    /// If `out` is shorter than `keys`.
    pub fn lookup_batch(&self, keys: &[u32], out: &mut [NextHop]) {
        assert!(out.len() >= keys.len(), "output shorter than keys");
        let out = &mut out[..keys.len()];
        match simd::level() {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the level is at most `simd::detected()`: the CPU has AVX2.
            simd::Level::Avx512 | simd::Level::Avx2 => unsafe { self.lookup_batch_avx2(keys, out) },
            _ => self.pipeline(keys, out, |keys, entries| {
                for (entry, &key) in entries.iter_mut().zip(keys) {
                    *entry = self.level16(key);
                }
            }),
        }
    }

    /// The pipeline with AVX2 gathers.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn lookup_batch_avx2(&self, keys: &[u32], out: &mut [NextHop]) {
        let table = self.bcn16.as_ptr().cast::<u8>();
        let word_bytes = std::mem::size_of::<W>();
        // SAFETY: AVX2 is this function's contract; every index `key >> 16`
        // is below 2^16, and `bcn16` has one entry more, so each 4-byte
        // read (from a 16-bit entry or a 32-bit one) lies inside it.
        let gather = |keys: &_, entries: &mut _| unsafe { simd::x86::gather_words_avx2(table, word_bytes, keys, 16, entries) };
        self.pipeline(keys, out, gather);
    }

    /// The two stages; `out.len() == keys.len()`.
    #[inline(always)]
    fn pipeline(&self, keys: &[u32], out: &mut [NextHop], gather: impl Fn(&[u32; LANES], &mut [u32; LANES])) {
        simd::pipeline(keys, out, |keys, out| self.level16_group(keys, out, &gather), |key, out| *out = self.lookup(key));
    }

    /// The first stage for up to 32 keys: writes each key's level-16
    /// entry as its answer and returns the mask of the keys whose entry
    /// holds a chunk ID (their level-24 entries prefetched).
    #[inline(always)]
    fn level16_group(&self, keys: &[u32], out: &mut [NextHop], gather: impl Fn(&[u32; LANES], &mut [u32; LANES])) -> u32 {
        let count = keys.len();
        debug_assert!(count <= GROUP && out.len() == count);
        let mut padded = [0u32; GROUP];
        padded[..count].copy_from_slice(keys);
        let mut entries = [0u32; GROUP];
        let (low, high) = entries.split_at_mut(LANES);
        let (low_keys, high_keys) = padded.split_at(LANES);
        gather(low_keys.try_into().expect("16 keys"), low.try_into().expect("16 entries"));
        gather(high_keys.try_into().expect("16 keys"), high.try_into().expect("16 entries"));
        out.copy_from_slice(&entries[..count]);
        // `count >= 1`: the pipeline gives no empty group.
        let chunked = entries.iter().enumerate().fold(0u32, |mask, (lane, &entry)| mask | u32::from(entry & W::FLAG != 0) << lane)
            & u32::MAX >> (GROUP - count);
        let mut lanes = chunked;
        while lanes != 0 {
            let lane = lanes.trailing_zeros() as usize;
            lanes &= lanes - 1;
            let index = ((entries[lane] & W::VALUE) as usize) << 8 | (padded[lane] >> 8 & 0xff) as usize;
            simd::prefetch(self.bcn24.as_ptr().wrapping_add(index));
        }
        chunked
    }
}
