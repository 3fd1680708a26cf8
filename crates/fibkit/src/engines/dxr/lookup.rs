//! The DXR hot path: one direct-table load, then (for a minority of keys)
//! a search in the chunk's fragments: a count of the fragments not above
//! the key where the build targets AVX2 and the chunk is small, else a
//! branch-free binary search.
//!
//! The direct entry is loaded with `Acquire` and fragments with `Relaxed`
//! (see the module docs of [`super`]): on x86-64 these are plain loads.

use std::sync::atomic::Ordering;

use super::{Cell, DirectEntry, Dxr, BASE_SHIFT, FORMAT_LONG, FORMAT_SHIFT, FORMAT_SHORT, FRAGS_MASK, FRAGS_XL};
use crate::fib::forward_fib;
use crate::simd::{self, GROUP, LANES};
use crate::NextHop;

impl<const K: u32> Dxr<K> {
    /// Longest-prefix match for `addr`.
    #[inline(always)]
    pub fn lookup(&self, addr: u32) -> NextHop {
        let chunk = (addr >> Self::SHIFT) as usize;
        debug_assert!(chunk < self.direct.len());
        // SAFETY: `direct` has exactly 2^K entries and `chunk < 2^K`.
        let entry = unsafe { self.direct.get_unchecked(chunk) }.load(Ordering::Acquire);
        if entry & FRAGS_MASK == 0 {
            return entry >> BASE_SHIFT;
        }
        self.search(entry, addr & Self::OFFSET_MASK)
    }

    /// The search of the chunk that `entry` describes for `offset`: with
    /// AVX2 in the build's target (x86-64-v3, the project's default), the
    /// batch path's AVX2 count for chunks of up to 32 short or 16 long
    /// fragments, inlined; else, and for larger chunks, the binary search.
    /// Whatever `FIBKIT_SIMD` says: that switch is the batch path's. The
    /// count lifted the scalar RND rate of D16R, D18R and D20R; D22R, whose
    /// chunks are few, and SEQ did not change. Tried and not kept: `lookup`
    /// without the branch on the direct entry (every key through the AVX2
    /// count, a directly resolved one over an empty chunk, the answer
    /// picked by a select; other chunks on a cold path): slower in scalar
    /// RND in alternated runs, as the count's dozens of instructions on
    /// every key cost more than the mispredictions they save (figures in
    /// docs/decisions.md).
    #[inline(always)]
    fn search(&self, entry: DirectEntry, offset: u32) -> NextHop {
        #[cfg(all(target_arch = "x86_64", target_feature = "avx2", target_feature = "popcnt"))]
        // SAFETY: the build's target has AVX2 and POPCNT (the `cfg`).
        return unsafe { self.search_avx2(entry, offset) };
        #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2", target_feature = "popcnt")))]
        self.binary_search(entry, offset)
    }

    /// Binary search of the chunk that `entry` describes for `offset`.
    #[inline(always)]
    fn binary_search(&self, entry: DirectEntry, offset: u32) -> NextHop {
        let base = (entry >> BASE_SHIFT) as usize;
        let count = entry & FRAGS_MASK;
        if count == FRAGS_XL {
            return self.search_rare(entry, offset);
        }
        match (entry >> FORMAT_SHIFT) & 3 {
            FORMAT_SHORT => {
                let probe = (offset | 0xff) as u16;
                NextHop::from(search_sorted(&self.range_short, base, count as usize, probe) & 0xff)
            }
            FORMAT_LONG => {
                let probe = offset << K | Self::LONG_HOP_MASK;
                search_sorted(&self.range_long, base, count as usize, probe) & Self::LONG_HOP_MASK
            }
            _ => self.search_rare(entry, offset),
        }
    }

    /// Chunks of the wide format, or of more than 254 fragments (the count
    /// then is in a header entry at `base`).
    #[cold]
    #[inline(never)]
    fn search_rare(&self, entry: DirectEntry, offset: u32) -> NextHop {
        let mut base = (entry >> BASE_SHIFT) as usize;
        let header = entry & FRAGS_MASK == FRAGS_XL;
        let mut count = (entry & FRAGS_MASK) as usize;
        match (entry >> FORMAT_SHIFT) & 3 {
            FORMAT_SHORT => {
                if header {
                    count = usize::from(self.range_short[base].get());
                    base += 1;
                }
                let fragment = search_sorted(&self.range_short, base, count, (offset | 0xff) as u16);
                NextHop::from(fragment & 0xff)
            }
            FORMAT_LONG => {
                if header {
                    count = self.range_long[base].get() as usize;
                    base += 1;
                }
                let probe = offset << K | Self::LONG_HOP_MASK;
                search_sorted(&self.range_long, base, count, probe) & Self::LONG_HOP_MASK
            }
            _ => {
                if header {
                    count = self.range_wide[base].get() as usize;
                    base += 1;
                }
                let probe = u64::from(offset) << 32 | u64::from(u32::MAX);
                search_sorted(&self.range_wide, base, count, probe) as NextHop
            }
        }
    }
}

/// The last of `table[base..base + count]` that is `<= probe` (the first
/// entry always is: it starts at offset 0).
#[inline(always)]
fn search_sorted<C: Cell>(table: &[C], base: usize, count: usize, probe: C::Word) -> C::Word {
    debug_assert!(count >= 1 && base + count <= table.len());
    let mut low = base;
    let mut remaining = count;
    while remaining > 1 {
        let half = remaining / 2;
        // SAFETY: low + half < base + count <= table.len() (checked above in
        // debug builds; the builder guarantees it for every direct entry).
        let middle = unsafe { table.get_unchecked(low + half) }.get();
        low = simd::step_if_not_above::<u64>(low, half, middle.into(), probe.into());
        remaining -= half;
    }
    // SAFETY: low lies in base..base + count.
    unsafe { table.get_unchecked(low) }.get()
}

impl<const K: u32> Dxr<K> {
    /// Looks up every key; `out[i]` gets the next hop of `keys[i]`.
    ///
    /// Keys go in groups of 32, through two stages, software-pipelined
    /// ([`simd::pipeline`]):
    ///
    /// ```text
    ///  direct(0)  direct(1)  search(0)  direct(2)  search(1)  ...  search(last)
    /// ```
    ///
    /// 1. the direct stage loads the group's direct entries at once (AVX2
    ///    gathers, 8 lanes at a time, or 32 scalar loads: see
    ///    [`crate::simd`]) and writes every key's next hop as if its chunk
    ///    were resolved directly; no branch depends on the loaded entries;
    /// 2. the range stage searches the chunks of the keys that need it
    ///    (about 1 in 8 with D18R on a full table), one group behind: the
    ///    next group's loads are in flight while it waits for fragments,
    ///    and the branches on its direct entries find them loaded.
    ///
    /// With AVX-512 a range search is no search at all for chunks of up
    /// to 64 short (32 long) fragments: one or two masked compares count
    /// the fragments that start at or below the key, and that count picks
    /// the fragment ([`crate::simd::x86::last_le_u16`]); AVX2 does the same
    /// for chunks of up to 32 short (16 long) fragments. Other chunks, and
    /// the scalar level, use the branch-free binary search.
    ///
    /// The direct stage prefetches nothing: prefetching the first line of
    /// each searched chunk as soon as the group's entries arrived (a loop
    /// over the lanes to search) made the batch path a fifth slower in
    /// alternated runs, most likely because the loop's exit branch waits
    /// for the gathers, and a misprediction of it throws away the previous
    /// group's searches the CPU had begun.
    ///
    /// Where the batch path's time goes (measured by cutting parts out,
    /// answers then wrong): the direct stage alone runs far faster than the
    /// whole path; most of the difference is the second stage's walk of the
    /// mask of keys to search (its branch waits for the gathers), then
    /// storing a value into `out` for each such key (the caller's wide
    /// loads of `out` then wait for the narrow stores); the searches
    /// themselves cost the least. Tried and not kept: one or three
    /// branch-free searches per group before the loop (a harmless dummy key
    /// when fewer keys need one), no clear gain; one mask loop per 64 keys
    /// instead of per 32, level; answers merged into `out` with masked
    /// 512-bit stores, level; a plain loop of scalar lookups, slower.
    /// Figures in docs/decisions.md.
    ///
    /// The batch path allocates nothing.
    ///
    /// # Panics
    /// If `out` is shorter than `keys`.
    pub fn lookup_batch(&self, keys: &[u32], out: &mut [NextHop]) {
        assert!(out.len() >= keys.len(), "output shorter than keys");
        let out = &mut out[..keys.len()];
        match simd::level() {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the level is at most `simd::detected()`, so the CPU has
            // AVX-512 F and BW, BMI2, POPCNT and AVX2.
            simd::Level::Avx512 => unsafe { self.lookup_batch_avx512(keys, out) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above, with AVX2 and POPCNT.
            simd::Level::Avx2 => unsafe { self.lookup_batch_avx2(keys, out) },
            _ => self.pipeline(keys, out, simd::direct_stage_scalar, Self::binary_search),
        }
    }

    /// The pipeline with AVX2 gathers and AVX2 counting range searches.
    ///
    /// # Safety
    /// The CPU must have AVX2 and POPCNT.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,popcnt")]
    unsafe fn lookup_batch_avx2(&self, keys: &[u32], out: &mut [NextHop]) {
        // SAFETY: AVX2 and POPCNT are this function's contract; `direct` has
        // 2^K entries, so every index `key >> (32 - K)` is inside it.
        let gather = |table: &_, keys: &_, test, entries: &mut _| unsafe {
            simd::x86::direct_stage_avx2(table, keys, test, entries)
        };
        // SAFETY: `search_avx2` needs AVX2 and POPCNT, this function's contract.
        self.pipeline(keys, out, gather, |dxr: &Self, entry, offset| unsafe { dxr.search_avx2(entry, offset) })
    }

    /// The pipeline with AVX2 gathers and counting range searches.
    ///
    /// # Safety
    /// The CPU must have AVX2, AVX-512 F and BW, BMI2 and POPCNT.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,avx512f,avx512bw,bmi2,popcnt")]
    unsafe fn lookup_batch_avx512(&self, keys: &[u32], out: &mut [NextHop]) {
        // SAFETY: as in `lookup_batch_avx2`; the features of `search_avx512`
        // are this function's contract.
        let gather = |table: &_, keys: &_, test, entries: &mut _| unsafe {
            simd::x86::direct_stage_avx2(table, keys, test, entries)
        };
        // SAFETY: `search_avx512`'s features are this function's contract.
        self.pipeline(keys, out, gather, |dxr: &Self, entry, offset| unsafe { dxr.search_avx512(entry, offset) })
    }

    /// The two stages (see [`Dxr::lookup_batch`]); `out.len() == keys.len()`.
    #[inline(always)]
    fn pipeline(
        &self,
        keys: &[u32],
        out: &mut [NextHop],
        gather: impl simd::DirectKernel,
        search: impl Fn(&Self, DirectEntry, u32) -> NextHop,
    ) {
        simd::pipeline(
            keys,
            out,
            |keys, out| self.direct_group(keys, out, &gather),
            |key, out| {
                // The entry is loaded again: the updater may have replaced
                // it since the direct stage, even with a direct-resolved
                // one. So it is loaded as `lookup` loads it (`Acquire`: the
                // chunk it points to is seen written) and resolved the same
                // way.
                let entry = self.direct[(key >> Self::SHIFT) as usize].load(Ordering::Acquire);
                *out = if entry & FRAGS_MASK == 0 {
                    entry >> BASE_SHIFT
                } else {
                    search(self, entry, key & Self::OFFSET_MASK)
                };
            },
        );
    }

    /// The direct stage of the first (up to) 32 keys of `keys`: writes
    /// their next hops as if resolved directly, and returns the mask of
    /// the keys that need a range search.
    #[inline(always)]
    fn direct_group(&self, keys: &[u32], out: &mut [NextHop], gather: impl simd::DirectKernel) -> u32 {
        let (Some(keys), Some(out)) = (keys.first_chunk::<GROUP>(), out.first_chunk_mut::<GROUP>()) else {
            return simd::padded::<_, GROUP>(keys, out, 0, move |keys, out| self.direct_group(keys, out, gather));
        };
        let test = simd::DirectTest {
            shift: Self::SHIFT,
            test_mask: FRAGS_MASK,
            test_value: 0,
            value_shift: BASE_SHIFT,
            value_mask: u32::MAX,
        };
        let (low, high) = out.split_at_mut(LANES);
        let resolved =
            gather(&self.direct, keys[..LANES].try_into().expect("16 keys"), test, low.try_into().expect("16 slots"))
                | gather(
                    &self.direct,
                    keys[LANES..].try_into().expect("16 keys"),
                    test,
                    high.try_into().expect("16 slots"),
                ) << LANES;
        !resolved
    }

    /// The range search of a chunk with AVX2 (see [`Dxr::counting_search`]).
    ///
    /// # Safety
    /// The CPU must have AVX2 and POPCNT.
    #[cfg(target_arch = "x86_64")]
    #[inline]
    #[target_feature(enable = "avx2,popcnt")]
    unsafe fn search_avx2(&self, entry: DirectEntry, offset: u32) -> NextHop {
        // SAFETY: the features are this function's contract; the kernels'
        // bounds are `counting_search`'s.
        let short = |words, count, probe| unsafe { simd::x86::last_le_u16_avx2(words, count, probe) };
        // SAFETY: as for `short`.
        let long = |words, count, probe| unsafe { simd::x86::last_le_u32_avx2(words, count, probe) };
        self.counting_search(entry, offset, (32, 16), short, long)
    }

    /// The range search of a chunk with AVX-512 (see [`Dxr::counting_search`]).
    ///
    /// # Safety
    /// The CPU must have AVX-512 F and BW, BMI2 and POPCNT.
    #[cfg(target_arch = "x86_64")]
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,bmi2,popcnt")]
    unsafe fn search_avx512(&self, entry: DirectEntry, offset: u32) -> NextHop {
        // SAFETY: as in `search_avx2`.
        let short = |words, count, probe| unsafe { simd::x86::last_le_u16(words, count, probe) };
        // SAFETY: as for `short`.
        let long = |words, count, probe| unsafe { simd::x86::last_le_u32(words, count, probe) };
        self.counting_search(entry, offset, (64, 32), short, long)
    }

    /// The range search of a chunk of up to `largest.0` short or
    /// `largest.1` long fragments by counting (`short` and `long` return
    /// the last of `count` sorted words not above a probe); other chunks
    /// get the binary search. The kernels are given only a chunk's own
    /// fragments, and, for short ones, one readable word after them (the
    /// chunk is not the last of its table).
    #[inline(always)]
    fn counting_search(
        &self,
        entry: DirectEntry,
        offset: u32,
        largest: (u32, u32),
        short: impl Fn(*const u16, u32, u16) -> u16,
        long: impl Fn(*const u32, u32, u32) -> u32,
    ) -> NextHop {
        let base = (entry >> BASE_SHIFT) as usize;
        let count = entry & FRAGS_MASK;
        match (entry >> FORMAT_SHIFT) & 3 {
            // The builder and the updater keep every chunk's fragments in
            // range_short[base..base + count] (range_long for long ones).
            FORMAT_SHORT if count <= largest.0 && base + (count as usize) < self.range_short.len() => {
                NextHop::from(short(self.range_short[base..].as_ptr().cast(), count, (offset | 0xff) as u16) & 0xff)
            }
            FORMAT_LONG if count <= largest.1 => {
                debug_assert!(base + count as usize <= self.range_long.len());
                long(self.range_long.as_ptr().wrapping_add(base).cast(), count, offset << K | Self::LONG_HOP_MASK)
                    & Self::LONG_HOP_MASK
            }
            _ => self.binary_search(entry, offset),
        }
    }
}

forward_fib!([const K: u32] Dxr<K>, u32, |_dxr| Self::engine_name(), [lookup_batch], [save]);
