//! x86-64 kernels: AVX2 gathers for the direct stage, AVX-512 and AVX2
//! counts for searches inside one or two cache lines, and an AVX2 store
//! and test of eight loaded entries.
//!
//! Each kernel is a `#[target_feature]` function, called only after
//! [`super::level`] found the features on the CPU. They are `#[inline]`, so
//! that an engine's batch loop compiled for the same features (its own
//! `#[target_feature]` function) gets them inlined.
//!
//! The tables are arrays of `AtomicU32` (engines update them in place while
//! readers look up). A gather loads each lane with one aligned 4-byte read,
//! as `AtomicU32::load` does on x86-64 (every x86 load is an acquire load);
//! the compiler fence after it keeps the compiler from moving the engine's
//! later loads (fragments, nodes, groups) above it, which is what the
//! scalar `Acquire` load guarantees.

use std::arch::x86_64::*;
use std::sync::atomic::{compiler_fence, AtomicU32, Ordering};

use super::{DirectTest, LANES};

const _: () = assert!(LANES == 16 && std::mem::size_of::<AtomicU32>() == 4);

/// [`super::direct_stage`] with two 8-lane AVX2 gathers.
///
/// # Safety
/// The CPU must have AVX2, and `keys[i] >> test.shift` must index `table`
/// for every key (`table.len() >= 2^(32 - shift)`).
#[inline]
#[target_feature(enable = "avx2")]
pub unsafe fn direct_stage_avx2(
    table: &[AtomicU32],
    keys: &[u32; LANES],
    test: DirectTest,
    values: &mut [u32; LANES],
) -> u32 {
    debug_assert!(table.len() >= 1usize << (32 - test.shift));
    // SAFETY: `keys` and `values` are 64 bytes each, read and written in
    // two unaligned halves of 32; every lane index is below table.len()
    // (the caller's contract), so each gathered 4-byte read lies inside
    // `table`.
    unsafe {
        let shift = _mm_cvtsi32_si128(test.shift as i32);
        let value_shift = _mm_cvtsi32_si128(test.value_shift as i32);
        let value_mask = _mm256_set1_epi32(test.value_mask as i32);
        let test_mask = _mm256_set1_epi32(test.test_mask as i32);
        let test_value = _mm256_set1_epi32(test.test_value as i32);
        let base = table.as_ptr().cast::<i32>();
        let mut mask = 0u32;
        for half in 0..2 {
            let key = _mm256_loadu_si256(keys.as_ptr().add(half * 8).cast());
            let index = _mm256_srl_epi32(key, shift);
            let entry = _mm256_i32gather_epi32::<4>(base, index);
            compiler_fence(Ordering::Acquire);
            let value = _mm256_and_si256(_mm256_srl_epi32(entry, value_shift), value_mask);
            _mm256_storeu_si256(values.as_mut_ptr().add(half * 8).cast(), value);
            let passed = _mm256_cmpeq_epi32(_mm256_and_si256(entry, test_mask), test_value);
            mask |= (_mm256_movemask_ps(_mm256_castsi256_ps(passed)) as u32) << (half * 8);
        }
        mask
    }
}

/// [`super::store_flagged`] in one AVX2 vector.
///
/// # Safety
/// The CPU must have AVX2.
#[inline]
#[target_feature(enable = "avx2")]
pub unsafe fn store_flagged_avx2(entries: [u32; 8], flag: u32, out: &mut [u32; 8]) -> u32 {
    let e = entries.map(|entry| entry as i32);
    let entries = _mm256_setr_epi32(e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7]);
    // SAFETY: `out` is 32 bytes, written unaligned.
    unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), entries) };
    let flagged = _mm256_cmpeq_epi32(_mm256_and_si256(entries, _mm256_set1_epi32(flag as i32)), _mm256_setzero_si256());
    !(_mm256_movemask_ps(_mm256_castsi256_ps(flagged)) as u32) & 0xff
}

/// The last of the `count` sorted 16-bit words at `words` that is not
/// above `probe`, found by counting the words not above it (no search):
/// two masked 32-lane loads and compares, and a permute picking word
/// `count_not_above - 1`. Returns 0 if `count` is 0 (no memory is read);
/// unspecified (but safe) if every word is above `probe`.
///
/// This is DXR's range search for chunks of up to 64 short fragments: the
/// first fragment starts at offset 0, so at least one word is not above a
/// probe, and the words not above it are a prefix of the chunk.
///
/// # Safety
/// The CPU must have AVX-512 F and BW, BMI2 and POPCNT; `count <= 64` and
/// `words[..count]` must be readable (lanes at or past `count` are masked
/// off and never read, so they may lie outside any allocation).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,bmi2,popcnt")]
pub unsafe fn last_le_u16(words: *const u16, count: u32, probe: u16) -> u16 {
    debug_assert!(count <= 64);
    // SAFETY: masked loads read only the lanes below `count` (masked-off
    // lanes neither fault nor read), which the caller guarantees readable.
    unsafe {
        let lanes = _bzhi_u64(u64::MAX, count);
        let (low_lanes, high_lanes) = (lanes as u32, (lanes >> 32) as u32);
        let probe = _mm512_set1_epi16(probe as i16);
        let low = _mm512_maskz_loadu_epi16(low_lanes, words.cast());
        if count <= 32 {
            // One line or two, and no second vector (most chunks).
            compiler_fence(Ordering::Acquire);
            let not_above = _mm512_mask_cmple_epu16_mask(low_lanes, low, probe).count_ones();
            let pick = _mm512_set1_epi16(not_above.wrapping_sub(1) as i16);
            return _mm_cvtsi128_si32(_mm512_castsi512_si128(_mm512_permutexvar_epi16(pick, low))) as u16;
        }
        let high = _mm512_maskz_loadu_epi16(high_lanes, words.wrapping_add(32).cast());
        compiler_fence(Ordering::Acquire);
        let not_above = _mm512_mask_cmple_epu16_mask(low_lanes, low, probe).count_ones()
            + _mm512_mask_cmple_epu16_mask(high_lanes, high, probe).count_ones();
        let pick = _mm512_set1_epi16(not_above.wrapping_sub(1) as i16);
        _mm_cvtsi128_si32(_mm512_castsi512_si128(_mm512_permutex2var_epi16(low, pick, high))) as u16
    }
}

/// [`last_le_u16`] for up to 32 sorted 32-bit words.
///
/// # Safety
/// As [`last_le_u16`], with `count <= 32`.
#[inline]
#[target_feature(enable = "avx512f,bmi2,popcnt")]
pub unsafe fn last_le_u32(words: *const u32, count: u32, probe: u32) -> u32 {
    debug_assert!(count <= 32);
    // SAFETY: as in `last_le_u16`.
    unsafe {
        let lanes = _bzhi_u32(u32::MAX, count);
        let (low_lanes, high_lanes) = (lanes as u16, (lanes >> 16) as u16);
        let probe = _mm512_set1_epi32(probe as i32);
        let low = _mm512_maskz_loadu_epi32(low_lanes, words.cast());
        let high = _mm512_maskz_loadu_epi32(high_lanes, words.wrapping_add(16).cast());
        compiler_fence(Ordering::Acquire);
        let not_above = _mm512_mask_cmple_epu32_mask(low_lanes, low, probe).count_ones()
            + _mm512_mask_cmple_epu32_mask(high_lanes, high, probe).count_ones();
        let pick = _mm512_set1_epi32(not_above.wrapping_sub(1) as i32);
        _mm_cvtsi128_si32(_mm512_castsi512_si128(_mm512_permutex2var_epi32(low, pick, high))) as u32
    }
}

/// [`last_le_u16`] with AVX2, for up to 32 words: masked 32-bit loads of
/// the words in pairs, so with an odd `count` the word after the last is
/// read too (and ignored); returns 0 if `count` is 0.
///
/// # Safety
/// The CPU must have AVX2; `count <= 32`, and `words[..count]` and, for an
/// odd `count`, `words[count]` must be readable.
#[inline]
#[target_feature(enable = "avx2,popcnt")]
pub unsafe fn last_le_u16_avx2(words: *const u16, count: u32, probe: u16) -> u16 {
    debug_assert!(count <= 32);
    // SAFETY: each masked load reads only the 32-bit pairs below
    // ceil(count / 2), which the caller guarantees readable; the final read
    // is of a word below `count`.
    unsafe {
        let pairs = _mm256_set1_epi32(count.div_ceil(2) as i32);
        let words_wanted = _mm256_set1_epi16(count as i16);
        let probe = _mm256_set1_epi16(probe as i16);
        let mut not_above = 0;
        for half in 0..2 {
            let pair_index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
            let load_mask = _mm256_cmpgt_epi32(pairs, _mm256_add_epi32(pair_index, _mm256_set1_epi32(half * 8)));
            // `wrapping_add`: with `count` up to 16 the second half's
            // pointer is past the words, which `add` may not make (Miri
            // found it); the mask reads none of its lanes there.
            let block = _mm256_maskload_epi32(words.wrapping_add(half as usize * 16).cast(), load_mask);
            compiler_fence(Ordering::Acquire);
            let word_index = _mm256_add_epi16(
                _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                _mm256_set1_epi16(half as i16 * 16),
            );
            let wanted = _mm256_cmpgt_epi16(words_wanted, word_index);
            let below = _mm256_cmpeq_epi16(_mm256_max_epu16(block, probe), probe);
            not_above += (_mm256_movemask_epi8(_mm256_and_si256(wanted, below)) as u32).count_ones() / 2;
        }
        if count == 0 {
            0
        } else {
            *words.add(not_above.max(1) as usize - 1)
        }
    }
}

/// [`last_le_u32`] with AVX2, for up to 16 words (masked loads, nothing
/// read past `count`).
///
/// # Safety
/// The CPU must have AVX2; `count <= 16` and `words[..count]` readable.
#[inline]
#[target_feature(enable = "avx2,popcnt")]
pub unsafe fn last_le_u32_avx2(words: *const u32, count: u32, probe: u32) -> u32 {
    debug_assert!(count <= 16);
    // SAFETY: masked loads read only the words below `count`.
    unsafe {
        let wanted_count = _mm256_set1_epi32(count as i32);
        let probe = _mm256_set1_epi32(probe as i32);
        let mut not_above = 0;
        for half in 0..2 {
            let index = _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(half * 8));
            let wanted = _mm256_cmpgt_epi32(wanted_count, index);
            // `wrapping_add`: as in `last_le_u16_avx2`.
            let block = _mm256_maskload_epi32(words.wrapping_add(half as usize * 8).cast(), wanted);
            compiler_fence(Ordering::Acquire);
            let below = _mm256_cmpeq_epi32(_mm256_max_epu32(block, probe), probe);
            not_above += (_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_and_si256(wanted, below))) as u32).count_ones();
        }
        if count == 0 {
            0
        } else {
            *words.add(not_above.max(1) as usize - 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::{detected, Level};

    /// Checks a kernel's answer against a scan: the last word not above
    /// `probe`, or 0 for no words (unspecified when every word is above).
    fn check<W: Copy + Ord + Default + std::fmt::Debug>(found: W, words: &[W], probe: W) {
        match words.iter().rev().copied().find(|&word| word <= probe) {
            Some(want) => assert_eq!(found, want, "{words:?} {probe:?}"),
            None if words.is_empty() => assert_eq!(found, W::default()),
            None => {}
        }
    }

    #[test]
    fn counting_searches_agree_with_a_scan() {
        let (avx512, avx2) = (detected() >= Level::Avx512, detected() >= Level::Avx2);
        if !avx512 {
            eprintln!("AVX-512 kernels skipped: not on this CPU");
        }
        let mut rng = crate::random::XorShift32::new(5);
        for count in 0..=64usize {
            for _ in 0..50 {
                let mut short: Vec<u16> = (0..count).map(|_| rng.next() as u16).collect();
                short.sort_unstable();
                // One readable word past the end, as the AVX2 kernel asks.
                let padded: Vec<u16> = short.iter().copied().chain([u16::MAX]).collect();
                let mut long: Vec<u32> = (0..count.min(32)).map(|_| rng.next()).collect();
                long.sort_unstable();
                let first = short.first().map_or(0, |&word| u32::from(word));
                for probe in [0, 1, u32::MAX, rng.next(), rng.next(), first, long.first().map_or(0, |&word| word)] {
                    let (short_len, long_len) = (short.len() as u32, long.len() as u32);
                    // SAFETY: the features were checked; the slices hold
                    // their `len()` words (`padded` one more).
                    unsafe {
                        if avx512 {
                            check(last_le_u16(short.as_ptr(), short_len, probe as u16), &short, probe as u16);
                            check(last_le_u32(long.as_ptr(), long_len, probe), &long, probe);
                        }
                        if avx2 && short_len <= 32 {
                            check(last_le_u16_avx2(padded.as_ptr(), short_len, probe as u16), &short, probe as u16);
                        }
                        if avx2 && long_len <= 16 {
                            check(last_le_u32_avx2(long.as_ptr(), long_len, probe), &long, probe);
                        }
                    }
                }
            }
        }
    }
}
