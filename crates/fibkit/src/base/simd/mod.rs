//! SIMD kernels of the batch lookups, chosen at run time.
//!
//! The build targets x86-64-v3 (AVX2 at compile time, but the kernels still
//! check for it at run time, so a build for an older target runs anywhere);
//! the CPU's features and the `FIBKIT_SIMD` switch are read once, at the
//! first batch lookup, and the decision is cached in an atomic, so a batch
//! pays one relaxed load for it.
//!
//! # Switch
//!
//! | `FIBKIT_SIMD` (read at first use) | kernels used |
//! |---|---|
//! | unset, or anything else | the best the CPU has: AVX-512, else AVX2, else scalar |
//! | `avx512` | as unset |
//! | `avx2` | AVX2 if the CPU has it, else scalar |
//! | `off`, `scalar`, `0`, `none`, `false` | none: the portable scalar code |
//!
//! Both SIMD levels count instead of searching inside a cache line or two:
//! DXR's range search becomes one count of the fragments not above the
//! key ([`x86::last_le_u16`]: masked 512-bit compares over up to 64
//! fragments at the AVX-512 level, which needs F, BW, BMI2 and POPCNT;
//! [`x86::last_le_u16_avx2`]: up to 32 at the AVX2 level). The AVX-512
//! level's direct stage still gathers 8 lanes at a time: 16-lane gathers
//! made the batch lookups slower, both on a CPU that splits 512-bit
//! operations in two and on one whose 512-bit units are whole. Sixteen
//! scalar loads with the tests in AVX2 registers measured level with the
//! 8-lane gathers (within the noise), so the gathers stay (figures in
//! docs/decisions.md).
//!
//! # The direct stage ([`direct_stage`])
//!
//! Every engine with a direct table (DXR `direct`, Poptrie `direct`,
//! DIR-24-8 `tbl24`) starts a lookup the same way, which the kernels do for
//! [`LANES`] keys at once:
//!
//! ```text
//!  keys[16] --(key >> shift)--> gather table[...] --> entry
//!                                                      |
//!            values[i] = entry >> value_shift & value_mask  (the answer if direct)
//!            mask bit i = (entry & test_mask == test_value)
//! ```
//!
//! The engine then finishes the lanes of one kind (say, DXR's chunks with
//! fragments) in its own scalar code; the other lanes' values are their
//! answers.
//!
//! Per-architecture code lives in its own module ([`x86`] on x86-64).
//!
//! # Readers during updates
//!
//! An in-place updater stores a table's entries with `Release` after
//! writing what they name; the portable direct stage loads them with
//! `Acquire`. A gather is not an atomic load in Rust's memory model: it
//! reads each lane's aligned 4 bytes whole, and on x86-64 no load passes an
//! earlier one, so the loads that follow an entry (which need its value for
//! their address) see what the updater wrote before storing it, as after an
//! `Acquire` load. ThreadSanitizer does not see a gather's reads, so it
//! reports those later loads as unordered with the updater's writes:
//! `make test-tsan` runs the portable kernels (docs/hardening.md).

use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};

use crate::NextHop;

#[cfg(target_arch = "x86_64")]
pub mod x86;

/// Keys per direct-stage call.
pub const LANES: usize = 16;

/// Whether `count_ones` compiles to the CPU's population count instruction
/// in this build (Poptrie's and Tree BitMap's stats say which they got).
pub const HARDWARE_POPCNT: bool = cfg!(any(
    all(any(target_arch = "x86", target_arch = "x86_64"), target_feature = "popcnt"),
    target_arch = "aarch64",
    target_arch = "powerpc64",
    all(target_arch = "riscv64", target_feature = "zbb"),
));

/// An instruction-set level of the batch kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Level {
    /// Portable scalar code (the reference).
    Scalar = 1,
    /// AVX2 gathers, 8 lanes at a time, and AVX2 compares for searches.
    Avx2 = 2,
    /// AVX2 gathers with AVX-512 (F, BW) masked compares for searches.
    Avx512 = 3,
}

impl Level {
    /// Lower-case name (`scalar`, `avx2`, `avx512`).
    pub fn name(self) -> &'static str {
        match self {
            Level::Scalar => "scalar",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
        }
    }

    fn from_u8(value: u8) -> Option<Level> {
        match value {
            1 => Some(Level::Scalar),
            2 => Some(Level::Avx2),
            3 => Some(Level::Avx512),
            _ => None,
        }
    }
}

/// The level in use; 0 until decided.
static LEVEL: AtomicU8 = AtomicU8::new(0);

/// The best level this CPU runs (ignores the switch).
pub fn detected() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("avx2") && has!("avx512f") && has!("avx512bw") && has!("bmi2") && has!("popcnt") {
            return Level::Avx512;
        }
        if has!("avx2") && has!("popcnt") {
            return Level::Avx2;
        }
    }
    Level::Scalar
}

/// The level the `FIBKIT_SIMD` value asks for, capped at what the CPU has.
fn from_switch(switch: Option<&str>) -> Level {
    let best = detected();
    match switch.map(|text| text.trim().to_ascii_lowercase()) {
        Some(text) if matches!(text.as_str(), "off" | "scalar" | "0" | "none" | "false") => Level::Scalar,
        Some(text) if text == "avx2" => best.min(Level::Avx2),
        _ => best,
    }
}

/// The level batch lookups use: decided at the first call from the CPU
/// and `FIBKIT_SIMD` (see the table in the module docs), or as last set by
/// [`set_level`].
#[inline]
pub fn level() -> Level {
    match Level::from_u8(LEVEL.load(Ordering::Relaxed)) {
        Some(level) => level,
        None => decide(),
    }
}

#[cold]
fn decide() -> Level {
    let level = from_switch(std::env::var("FIBKIT_SIMD").ok().as_deref());
    // A concurrent `set_level` wins over the environment.
    match LEVEL.compare_exchange(0, level as u8, Ordering::Relaxed, Ordering::Relaxed) {
        Ok(_) => level,
        Err(current) => Level::from_u8(current).unwrap_or(level),
    }
}

/// Makes batch lookups use `wanted` (capped at what the CPU has) from now
/// on, in every thread; returns the level now in use. `set_level(Level::Scalar)`
/// turns SIMD off, as `FIBKIT_SIMD=off` does.
pub fn set_level(wanted: Level) -> Level {
    let level = wanted.min(detected());
    LEVEL.store(level as u8, Ordering::Relaxed);
    level
}

/// What the direct stage reads, tests and keeps of each loaded entry.
#[derive(Clone, Copy, Debug)]
pub struct DirectTest {
    /// The table index of a key is `key >> shift`.
    pub shift: u32,
    /// Bits of an entry to test.
    pub test_mask: u32,
    /// A lane's mask bit is set when `entry & test_mask == test_value`.
    pub test_value: u32,
    /// A lane's value is `entry >> value_shift & value_mask`.
    pub value_shift: u32,
    /// See `value_shift`.
    pub value_mask: u32,
}

/// A direct-stage kernel: [`direct_stage_scalar`], or an architecture's
/// (inlined into an engine's batch loop compiled for its features).
pub trait DirectKernel: Fn(&[AtomicU32], &[u32; LANES], DirectTest, &mut [u32; LANES]) -> u32 {}

impl<F: Fn(&[AtomicU32], &[u32; LANES], DirectTest, &mut [u32; LANES]) -> u32> DirectKernel for F {}

/// Loads `table[keys[i] >> test.shift]` for every lane with [`level`]'s
/// kernel, stores the entry's value (see [`DirectTest`]) in `values[i]`
/// and returns the mask of lanes whose entry passes `test` (bit i for
/// lane i).
///
/// `Acquire` loads, as the engines' scalar lookups do.
///
/// # Panics
/// In debug builds, if an index falls outside `table` (the engines size
/// their tables for every key: 2^(32 - shift) entries).
#[inline]
pub fn direct_stage(
    level: Level,
    table: &[AtomicU32],
    keys: &[u32; LANES],
    test: DirectTest,
    values: &mut [u32; LANES],
) -> u32 {
    debug_assert!(test.shift >= 1 && table.len() >= 1usize << (32 - test.shift));
    match level {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the level is at most `detected()`, so the CPU has AVX2 (both
        // levels gather 8 lanes at a time: see the module docs); every index
        // `key >> shift` is below 2^(32 - shift) <= table.len().
        Level::Avx512 | Level::Avx2 => unsafe { x86::direct_stage_avx2(table, keys, test, values) },
        _ => direct_stage_scalar(table, keys, test, values),
    }
}

/// The portable direct stage (the reference of the kernels).
///
/// The loads go first and the tests and values in a pass of their own:
/// with each lane's test folded into the mask as its entry was loaded,
/// batched RND ran slower with `FIBKIT_SIMD=off`, and REP stayed level
/// (see docs/decisions.md).
#[inline]
pub fn direct_stage_scalar(
    table: &[AtomicU32],
    keys: &[u32; LANES],
    test: DirectTest,
    values: &mut [u32; LANES],
) -> u32 {
    for (value, &key) in values.iter_mut().zip(keys) {
        let index = (key >> test.shift) as usize;
        debug_assert!(index < table.len());
        // SAFETY: `index < 2^(32 - shift) <= table.len()` (asserted by the caller).
        *value = unsafe { table.get_unchecked(index) }.load(Ordering::Acquire);
    }
    let mut mask = 0;
    for (lane, value) in values.iter_mut().enumerate() {
        mask |= u32::from(*value & test.test_mask == test.test_value) << lane;
        *value = *value >> test.value_shift & test.value_mask;
    }
    mask
}

/// Stores eight loaded entries into `out` as they are and returns the mask
/// of those with a bit of `flag` set (lane i, bit i): the first stage of a
/// batch whose entries are answers unless flagged (SAIL's level 16).
///
/// With AVX2 enabled at compile time (the project's x86-64-v3 build) the
/// entries go into one vector, stored at once and tested with one compare;
/// the portable loop, inlined 32 lanes at a time into SAIL's first stage
/// after its atomic loads, compiled to spilled registers and a mix of
/// scalar and 8-byte stores, and SAIL's batched RND fell by about a seventh;
/// the kernel brought it back level (see docs/decisions.md).
#[inline(always)]
pub fn store_flagged(entries: [u32; 8], flag: u32, out: &mut [NextHop; 8]) -> u32 {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    // SAFETY: the build enables AVX2, so every CPU running it has it.
    unsafe {
        x86::store_flagged_avx2(entries, flag, out)
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
    {
        let mut mask = 0;
        for (lane, (answer, entry)) in out.iter_mut().zip(entries).enumerate() {
            *answer = entry;
            mask |= u32::from(entry & flag != 0) << lane;
        }
        mask
    }
}

/// Keys per group of the two-stage batch pipelines ([`pipeline`]).
pub const GROUP: usize = 32;

const _: () = assert!(GROUP == 2 * LANES);

/// The first stage of a batch whose entries are answers unless flagged
/// (SAIL's and SAIL-R's level 16) for up to [`GROUP`] keys: stores each
/// key's entry, `load(key)`, as its answer and returns the mask of the keys
/// whose entry has a bit of `flag` set (bit i for `keys[i]`), eight at a
/// time through [`store_flagged`].
#[inline(always)]
pub fn flagged_group(keys: &[u32], out: &mut [NextHop], flag: u32, load: impl Fn(u32) -> u32 + Copy) -> u32 {
    let (Some(keys), Some(out)) = (keys.first_chunk::<GROUP>(), out.first_chunk_mut::<GROUP>()) else {
        return padded::<_, GROUP>(keys, out, 0, |keys, out| flagged_group(keys, out, flag, load));
    };
    let mut flagged = 0;
    for (part, (keys, out)) in keys.as_chunks::<8>().0.iter().zip(out.as_chunks_mut::<8>().0).enumerate() {
        flagged |= store_flagged(keys.map(load), flag, out) << (part * 8);
    }
    flagged
}

/// A stage made for `N` keys at a time, run on the last keys of a batch
/// (fewer than `N`): `full` gets them padded with `pad` and a scratch
/// answer array; `out` gets the answers of the real keys, and the result
/// is `full`'s lane mask without the padding lanes.
///
/// Full groups go to their stage straight from the batch's keys and into
/// its answers: copying every group in and out, as this does, cost two
/// `memmove` calls a group and made the batch paths slower (see
/// docs/decisions.md).
///
/// # Panics
/// In debug builds, if `keys` holds `N` keys or more, `N` is above 32, or
/// `out.len() != keys.len()`.
#[cold]
pub fn padded<K: Copy, const N: usize>(
    keys: &[K],
    out: &mut [NextHop],
    pad: K,
    full: impl FnOnce(&[K; N], &mut [NextHop; N]) -> u32,
) -> u32 {
    let count = keys.len();
    debug_assert!(count < N && N <= 32 && out.len() == count);
    let (mut padded, mut answers) = ([pad; N], [0 as NextHop; N]);
    padded[..count].copy_from_slice(keys);
    let mask = full(&padded, &mut answers);
    out.copy_from_slice(&answers[..count]);
    mask & !(u32::MAX << count)
}

/// The skeleton of DXR's and Poptrie's batch lookups: keys in groups of
/// [`GROUP`], through two stages one group apart,
///
/// ```text
///  direct(0)  direct(1)  finish(0)  direct(2)  finish(1)  ...  finish(last)
/// ```
///
/// `direct(keys, out)` gets a group's keys and answers (up to 32), writes
/// the answers of the keys it resolves and returns the mask of the others;
/// one group later, `finish(key, answer)` completes each of those. The next
/// group's loads are in flight while `finish` waits for its own, and the
/// branches of `finish` find the first stage's loads done.
///
/// The keys to finish are indexed without bounds checks (the mask cut to
/// the group's lanes once a group): faster in alternated runs for d18r's
/// batched RND and slightly for REP of the DXR engines, poptrie18 and
/// sail-runs; RND of the others stayed level (see docs/decisions.md).
///
/// # Panics
/// If `out` is shorter than `keys`.
#[inline(always)]
pub fn pipeline<K: Copy>(
    keys: &[K],
    out: &mut [NextHop],
    direct: impl FnMut(&[K], &mut [NextHop]) -> u32,
    finish: impl FnMut(K, &mut NextHop),
) {
    pipeline_settled(keys, out, direct, |mask, _| mask, finish);
}

/// [`pipeline`] whose first stage's mask is settled one group later:
/// `settle(direct's value, the group's answers)` gives the mask of the
/// keys to finish, just before they are finished.
///
/// For a first stage that stores its entries one by one and would read
/// them back a group at a time to find the keys to finish (Poptrie's
/// IPv6 direct stage): read back at once, the wide loads wait for the
/// narrow stores to reach the cache (no store forwarding); a group later,
/// they have.
///
/// # Panics
/// If `out` is shorter than `keys`.
#[inline(always)]
pub fn pipeline_settled<K: Copy>(
    keys: &[K],
    out: &mut [NextHop],
    mut direct: impl FnMut(&[K], &mut [NextHop]) -> u32,
    mut settle: impl FnMut(u32, &mut [NextHop]) -> u32,
    mut finish: impl FnMut(K, &mut NextHop),
) {
    assert!(out.len() >= keys.len(), "output shorter than keys");
    let groups = keys.len().div_ceil(GROUP);
    let lanes_of = |group: usize| group * GROUP..keys.len().min(group * GROUP + GROUP);
    let mut pending = [0u32; 2];
    for group in 0..=groups {
        if group < groups {
            let lanes = lanes_of(group);
            pending[group % 2] = direct(&keys[lanes.clone()], &mut out[lanes]);
        }
        if let Some(previous) = group.checked_sub(1) {
            let span = lanes_of(previous);
            // Only the group's own lanes: the index of every bit left is
            // below `span.end <= keys.len() <= out.len()`.
            let mut lanes = settle(pending[previous % 2], &mut out[span.clone()]) & !(u64::MAX << span.len()) as u32;
            while lanes != 0 {
                let index = span.start + lanes.trailing_zeros() as usize;
                lanes &= lanes - 1;
                debug_assert!(index < span.end);
                // SAFETY: `index < span.end <= keys.len() <= out.len()` (the
                // mask above and the assert at the top).
                let (key, answer) = unsafe { (*keys.get_unchecked(index), out.get_unchecked_mut(index)) };
                finish(key, answer);
            }
        }
    }
}

/// One step of a binary search without a branch: `low + half` if
/// `middle <= probe`, else `low`.
///
/// LLVM compiles the plain expression (an `if`, a multiply by the
/// comparison, even `std::hint::select_unpredictable`) to a jump after the
/// comparison, which the CPU mispredicts every other step of a search; on
/// x86-64 the step is written out as a compare (with a subtract with
/// borrow for 128-bit words) and a `cmov`. Elsewhere it is the plain
/// expression.
#[inline(always)]
pub fn step_if_not_above<W: Into<u128> + Copy>(low: usize, half: usize, middle: W, probe: W) -> usize {
    // Miri runs no inline assembly: it checks the portable step.
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        let (middle, probe): (u128, u128) = (middle.into(), probe.into());
        let mut result = low;
        if std::mem::size_of::<W>() <= 8 {
            // SAFETY: registers and flags only: the carry of
            // probe - middle is set exactly when probe < middle, and
            // `cmovae` takes `low + half` when it is clear.
            unsafe {
                std::arch::asm!(
                    "cmp {probe}, {middle}",
                    "cmovae {result}, {next}",
                    probe = in(reg) probe as u64,
                    middle = in(reg) middle as u64,
                    result = inout(reg) result,
                    next = in(reg) low + half,
                    options(pure, nomem, nostack),
                );
            }
        } else {
            // SAFETY: as above, the subtraction carried across both
            // halves (`cmp` the low, `sbb` the high).
            unsafe {
                std::arch::asm!(
                    "cmp {probe_low}, {middle_low}",
                    "sbb {probe_high}, {middle_high}",
                    "cmovae {result}, {next}",
                    probe_low = in(reg) probe as u64,
                    middle_low = in(reg) middle as u64,
                    probe_high = inout(reg) (probe >> 64) as u64 => _,
                    middle_high = in(reg) (middle >> 64) as u64,
                    result = inout(reg) result,
                    next = in(reg) low + half,
                    options(pure, nomem, nostack),
                );
            }
        }
        result
    }
    #[cfg(any(not(target_arch = "x86_64"), miri))]
    {
        if middle.into() <= probe.into() {
            low + half
        } else {
            low
        }
    }
}

/// Hints the CPU to bring the line holding `*pointer` into L1 (no-op on
/// other architectures). Never faults, whatever the address.
#[inline(always)]
pub fn prefetch<T>(pointer: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it never faults and changes no state
    // the program can observe.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(pointer.cast::<i8>())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = pointer;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_switch_reads_off_and_avx2() {
        assert_eq!(from_switch(Some("off")), Level::Scalar);
        assert_eq!(from_switch(Some(" OFF ")), Level::Scalar);
        assert_eq!(from_switch(Some("scalar")), Level::Scalar);
        assert_eq!(from_switch(Some("avx2")), detected().min(Level::Avx2));
        assert_eq!(from_switch(Some("avx512")), detected());
        assert_eq!(from_switch(None), detected());
        assert_eq!(from_switch(Some("on")), detected());
    }

    #[test]
    fn a_search_step_moves_exactly_when_the_middle_is_not_above() {
        let words: [u128; 7] = [0, 1, 0xffff, u64::MAX as u128, 1 << 64, (1 << 64) | 1, u128::MAX];
        for &middle in &words {
            for &probe in &words {
                let want = if middle <= probe { 10 + 7 } else { 10 };
                assert_eq!(step_if_not_above(10, 7, middle, probe), want, "{middle:x} <= {probe:x}");
                if let (Ok(middle), Ok(probe)) = (u64::try_from(middle), u64::try_from(probe)) {
                    assert_eq!(step_if_not_above(10, 7, middle, probe), want, "u64 {middle:x} <= {probe:x}");
                }
                if let (Ok(middle), Ok(probe)) = (u16::try_from(middle), u16::try_from(probe)) {
                    assert_eq!(step_if_not_above(10, 7, middle, probe), want, "u16 {middle:x} <= {probe:x}");
                }
            }
        }
    }

    #[test]
    fn stored_entries_are_kept_and_flagged_lanes_masked() {
        let entries = [0x8000, 0x7fff, 0, 0xffff, 0x8001, 1, 0x1_0000, 0x8000_8000];
        let mut out = [7; 8];
        assert_eq!(store_flagged(entries, 0x8000, &mut out), 0b1001_1001);
        assert_eq!(out, entries);
        assert_eq!(store_flagged(entries, 0x8000_0000, &mut out), 0b1000_0000);
        assert_eq!(store_flagged(entries, 0x1_0000, &mut out), 0b0100_0000);
    }

    #[test]
    fn every_level_gives_the_scalar_values_and_mask() {
        let table: Vec<AtomicU32> =
            (0..1u32 << 16).map(|index| AtomicU32::new(index.wrapping_mul(0x9e37_79b9))).collect();
        let mut rng = crate::random::XorShift32::new(11);
        let test = DirectTest { shift: 16, test_mask: 0x0300, test_value: 0x0100, value_shift: 3, value_mask: 0xffff };
        for _ in 0..200 {
            let mut keys = [0u32; LANES];
            keys.iter_mut().for_each(|key| *key = rng.next());
            keys[0] = u32::MAX;
            keys[1] = 0;
            let mut want = [0u32; LANES];
            let want_mask = direct_stage_scalar(&table, &keys, test, &mut want);
            for level in [Level::Scalar, Level::Avx2, Level::Avx512] {
                if level > detected() {
                    eprintln!("skipped: {} not on this CPU", level.name());
                    continue;
                }
                let mut got = [0u32; LANES];
                assert_eq!(direct_stage(level, &table, &keys, test, &mut got), want_mask, "{level:?}");
                assert_eq!(got, want, "{level:?}");
            }
        }
    }
}
