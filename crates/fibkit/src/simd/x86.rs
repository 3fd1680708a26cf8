//! x86-64 kernels: AVX-512 and AVX2 gathers for the direct stage.
//!
//! Each kernel is a `#[target_feature]` function, called only after
//! [`super::level`] found the feature on the CPU.
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

/// [`super::direct_stage`] with one 16-lane AVX-512 gather.
///
/// # Safety
/// The CPU must have AVX-512 F, and `keys[i] >> test.shift` must index
/// `table` for every key (`table.len() >= 2^(32 - shift)`).
#[target_feature(enable = "avx512f")]
pub unsafe fn direct_stage_avx512(
    table: &[AtomicU32],
    keys: &[u32; LANES],
    test: DirectTest,
    entries: &mut [u32; LANES],
) -> u32 {
    debug_assert!(table.len() >= 1usize << (32 - test.shift));
    // SAFETY: `keys` and `entries` are 64 bytes each (unaligned access is
    // allowed); every lane index is below table.len() (the caller's
    // contract), so each gathered 4-byte read lies inside `table`.
    unsafe {
        let key = _mm512_loadu_si512(keys.as_ptr().cast());
        let index = _mm512_srlv_epi32(key, _mm512_set1_epi32(test.shift as i32));
        let entry = _mm512_i32gather_epi32::<4>(index, table.as_ptr().cast::<i32>());
        compiler_fence(Ordering::Acquire);
        _mm512_storeu_si512(entries.as_mut_ptr().cast(), entry);
        let tested = _mm512_and_si512(entry, _mm512_set1_epi32(test.test_mask as i32));
        u32::from(_mm512_cmpeq_epi32_mask(tested, _mm512_set1_epi32(test.test_value as i32)))
    }
}

/// [`super::direct_stage`] with two 8-lane AVX2 gathers.
///
/// # Safety
/// The CPU must have AVX2, and `keys[i] >> test.shift` must index `table`
/// for every key.
#[target_feature(enable = "avx2")]
pub unsafe fn direct_stage_avx2(
    table: &[AtomicU32],
    keys: &[u32; LANES],
    test: DirectTest,
    entries: &mut [u32; LANES],
) -> u32 {
    debug_assert!(table.len() >= 1usize << (32 - test.shift));
    // SAFETY: as in `direct_stage_avx512`, in two halves of 32 bytes.
    unsafe {
        let shift = _mm_cvtsi32_si128(test.shift as i32);
        let test_mask = _mm256_set1_epi32(test.test_mask as i32);
        let test_value = _mm256_set1_epi32(test.test_value as i32);
        let base = table.as_ptr().cast::<i32>();
        let mut mask = 0u32;
        for half in 0..2 {
            let key = _mm256_loadu_si256(keys.as_ptr().add(half * 8).cast());
            let index = _mm256_srl_epi32(key, shift);
            let entry = _mm256_i32gather_epi32::<4>(base, index);
            compiler_fence(Ordering::Acquire);
            _mm256_storeu_si256(entries.as_mut_ptr().add(half * 8).cast(), entry);
            let passed = _mm256_cmpeq_epi32(_mm256_and_si256(entry, test_mask), test_value);
            mask |= (_mm256_movemask_ps(_mm256_castsi256_ps(passed)) as u32) << (half * 8);
        }
        mask
    }
}
