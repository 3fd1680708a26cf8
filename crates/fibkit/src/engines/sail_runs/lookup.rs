//! The lookup: level 16, then the count in a line of a chunk, then
//! level 32; and the batch path, which loads level 16 for a group of keys
//! before going on below.

use std::sync::atomic::{fence, AtomicU16, AtomicU32, Ordering};

use super::{LineCell, SailRuns, CHUNK, CHUNK_ENTRIES, INDEX, SHIFT_AT, SPLIT, VALUE};
use crate::simd;
use crate::NextHop;

impl LineCell {
    /// The answer of /24 `b`: the value of the run holding it, the count of
    /// starts not above `b`.
    #[inline(always)]
    pub(super) fn value(&self, b: u8) -> u16 {
        let run = self.run_of(b);
        debug_assert!(run < self.values.len());
        // SAFETY: a count of the 20 starts is at most 20, below `RUNS`.
        unsafe { self.values.get_unchecked(run) }.load(Ordering::Relaxed)
    }

    /// The run holding /24 `b`: one 32-byte compare of the line's first
    /// bytes (the starts and, masked off, the first values) with AVX2.
    #[inline(always)]
    fn run_of(&self, b: u8) -> usize {
        #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
        // SAFETY: the build enables AVX2, so every CPU running it has it;
        // a line is 64 bytes aligned to 64, so its first 32 are readable
        // and aligned. No store races this plain load: the updater writes
        // only lines no reader can reach (the module docs' protocol).
        unsafe {
            use std::arch::x86_64::*;
            let bytes = _mm256_load_si256(std::ptr::from_ref(self).cast());
            let probe = _mm256_set1_epi8(b as i8);
            // start <= b exactly when max(start, b) == b (unsigned).
            let not_above = _mm256_cmpeq_epi8(_mm256_max_epu8(bytes, probe), probe);
            let starts = (1u32 << self.starts.len()) - 1;
            (_mm256_movemask_epi8(not_above) as u32 & starts).count_ones() as usize
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
        {
            self.starts.iter().map(|start| usize::from(start.load(Ordering::Relaxed) <= b)).sum()
        }
    }
}

/// The three levels as slices: what a lookup reads. A batch takes them
/// once, at its start: [`SailRuns`] holds an atomic (its route count), so
/// the compiler may not assume its fields unchanged across the stores of
/// answers, and reading the levels through it reloaded the lines' address
/// for every key (SAIL's batch path does too, but there taking its levels
/// once measured no faster).
#[derive(Clone, Copy)]
struct Levels<'a> {
    level16: &'a [AtomicU32],
    lines: &'a [LineCell],
    n32: &'a [AtomicU16],
}

impl Levels<'_> {
    /// Longest-prefix match for `addr`.
    #[inline(always)]
    fn lookup(self, addr: u32) -> NextHop {
        let entry = self.level16_entry(addr, Ordering::Acquire);
        if entry & CHUNK == 0 {
            return entry;
        }
        self.below16(entry, addr)
    }

    /// `level16[addr >> 16]`, loaded with `order` (`Acquire`, or `Relaxed`
    /// followed by an `Acquire` fence).
    #[inline(always)]
    fn level16_entry(self, addr: u32, order: Ordering) -> u32 {
        let index = (addr >> 16) as usize;
        debug_assert!(index < self.level16.len());
        // SAFETY: `level16` has 2^16 entries and `index < 2^16`.
        unsafe { self.level16.get_unchecked(index) }.load(order)
    }

    /// Levels 24 and 32, for a level-16 `entry` naming a chunk.
    #[inline(always)]
    fn below16(self, entry: u32, addr: u32) -> NextHop {
        let b = addr >> 8 & 0xff;
        let index = (entry & INDEX) as usize + (b >> (entry >> SHIFT_AT & 0xf)) as usize;
        debug_assert!(index < self.lines.len());
        // SAFETY: the builder and the updater give a chunk's entry its first
        // line's index and a shift leaving a line for every /24 of the /16
        // after it (the opener checks both in a file's entries).
        let value = unsafe { self.lines.get_unchecked(index) }.value(b as u8);
        if value & SPLIT == 0 {
            return value.into();
        }
        self.level32(value, addr)
    }

    /// Level 32, for a value naming a level-32 chunk.
    #[cold]
    fn level32(self, value: u16, addr: u32) -> NextHop {
        let index = usize::from(value & VALUE) * CHUNK_ENTRIES + (addr & 0xff) as usize;
        debug_assert!(index < self.n32.len());
        // SAFETY: the builder and the updater give values level-32 chunk IDs
        // below the count of chunks, 256 entries each in `n32` (the opener
        // checks a file's).
        unsafe { self.n32.get_unchecked(index) }.load(Ordering::Relaxed).into()
    }
}

impl SailRuns {
    /// The levels a lookup reads.
    #[inline(always)]
    fn levels(&self) -> Levels<'_> {
        Levels { level16: &self.level16, lines: &self.lines, n32: &self.n32 }
    }

    /// Longest-prefix match for `addr`.
    ///
    /// The branch on the level-16 entry's chunk flag stays a branch.
    /// Measured and not kept: no branch below level 16 (a key resolved
    /// there reads an all-zero line kept for it, picked with a `cmov`, and
    /// its entry masked into the answer), slower in SEQ, RND and REP in
    /// alternated runs (figures in docs/decisions.md). The predicted
    /// branch lets the CPU go on to the next key while a line's load is in
    /// flight.
    #[inline]
    pub fn lookup(&self, addr: u32) -> NextHop {
        self.levels().lookup(addr)
    }

    /// Levels 24 and 32, for a level-16 `entry` naming a chunk (as a reader
    /// that loaded `entry` earlier goes on).
    #[cfg(test)]
    pub(super) fn below16(&self, entry: u32, addr: u32) -> NextHop {
        self.levels().below16(entry, addr)
    }

    /// Looks up every key; `out[i]` gets the next hop of `keys[i]`.
    ///
    /// Keys go in groups of 32 through [`simd::pipeline`]'s two stages:
    /// the first loads the group's level-16 entries and answers every key
    /// as if resolved there; the second, one group later, goes on from the
    /// level-16 entry kept in the answer slot, its loads overlapping the
    /// next group's. The level-16 entries are loaded `Relaxed`, and one
    /// `Acquire` fence after each group orders them before the lines and
    /// chunks the second stage reads. Nothing is allocated.
    ///
    /// The arrays are atomic cells, so that the updater writes while
    /// lookups read: batched RND within a few percent of the same code on
    /// plain arrays, and faster than before the batch took the levels once,
    /// at its start.
    ///
    /// The first stage loads level 16 as SAIL's does ([`simd::flagged_group`]:
    /// eight plain loads stored as answers and tested in one vector).
    /// Measured and not kept, each slower in batched RND in alternated runs:
    /// AVX2 gathers of level 16 ([`simd::direct_stage`]); the entries stored
    /// one by one and their flags taken a group later
    /// ([`simd::pipeline_settled`]); each entry stored and its flag folded
    /// into the mask in one scalar loop. The first stage alone (no second
    /// stage, wrong answers) runs at about two thirds of the batch
    /// ceiling: of the time a key the whole path spends beyond the
    /// ceiling's, half goes to level 16 and half below it.
    ///
    /// The same cuts on a machine with 2 MiB of L2 a core and on one with
    /// 1 MiB, as shares of the batch ceiling in the same runs, say where a
    /// key's time goes: level 16 for every key most, then the second
    /// stage's own work for the fifth of the keys that need a line, then
    /// the lines' misses. So packing big chunks' runs greedily into lines
    /// (a line could start at any multiple of 16 /24s: 1,274 KiB of lines
    /// instead of 1,677) could gain at most what reading one line that
    /// stays in L1 for every such key gains; and at 0.8 of the ceiling the
    /// second stage would have less time than its own work takes with
    /// every line in L1. Measured and not kept, each slower in alternated
    /// rounds: a third stage between the two, prefetching the line of each
    /// key the first stage flagged (RND and REP; where the lines sit in
    /// L3, the prefetch at the end of the first stage's group as well);
    /// the keys that need a line queued by AVX-512 compressing stores, 128
    /// keys at a time, and then finished in one loop (no overlap with the
    /// next group's loads); groups of 16 keys instead of 32 (more of a
    /// 64-key batch overlapped, twice the loop exits). Figures in
    /// docs/decisions.md.
    ///
    /// # Panics
    /// If `out` is shorter than `keys`.
    pub fn lookup_batch(&self, keys: &[u32], out: &mut [NextHop]) {
        assert!(out.len() >= keys.len(), "output shorter than keys");
        let out = &mut out[..keys.len()];
        let levels = self.levels();
        simd::pipeline(
            keys,
            out,
            |keys, out| {
                let chunked = simd::flagged_group(keys, out, CHUNK, |key| levels.level16_entry(key, Ordering::Relaxed));
                fence(Ordering::Acquire);
                chunked
            },
            |key, out| *out = levels.below16(*out, key),
        );
    }
}
