//! The lookup: one `tbl24` read, one group read for extended entries; and
//! the batch path, which overlaps the reads of many keys.

use std::mem::MaybeUninit;
use std::sync::atomic::Ordering;

use super::{Dir24, Entry};
use crate::simd::{self, LANES};
use crate::NextHop;

/// Keys per round of the batch pipeline.
const ROUND: usize = 64;

/// How many keys ahead of the direct stage the batch path prefetches
/// `tbl24` lines (the table is 64 MiB: its reads go to DRAM).
const PREFETCH_AHEAD: usize = 2 * LANES;

/// A key whose `tbl24` entry is extended: its `tbl8` index and where its
/// answer goes.
#[derive(Clone, Copy)]
struct GroupRead {
    index: u32,
    slot: u32,
}

impl Dir24 {
    /// Longest-prefix match: one `tbl24` read, one group read if extended.
    #[inline]
    pub fn lookup(&self, addr: u32) -> NextHop {
        // `Acquire`: a group the updater filled before storing this entry is
        // seen filled.
        let mut entry = Entry(self.tbl24[(addr >> 8) as usize].load(Ordering::Acquire));
        if entry.is_extended() {
            entry = Entry(self.tbl8[(entry.value() as usize) << 8 | (addr & 0xff) as usize].load(Ordering::Relaxed));
        }
        entry.value()
    }

    /// Looks up every key; `out[i]` gets the next hop of `keys[i]`.
    ///
    /// Keys go in rounds of 64. Pass 1 reads `tbl24` 16 keys at a time
    /// (AVX2 gathers or 16 scalar loads, see [`crate::simd`]) while
    /// prefetching the `tbl24` lines of the keys 32 places ahead (DRAM
    /// latency is the cost here), answers the keys with plain entries and
    /// prefetches the group entry of the others; pass 2 reads those group
    /// entries. Nothing is allocated.
    ///
    /// # Panics
    /// If `out` is shorter than `keys`.
    pub fn lookup_batch(&self, keys: &[u32], out: &mut [NextHop]) {
        assert!(out.len() >= keys.len(), "output shorter than keys");
        let level = simd::level();
        let extended = Entry::VALID | Entry::EXTENDED;
        let test = simd::DirectTest {
            shift: 8,
            test_mask: extended,
            test_value: extended,
            value_shift: 0,
            value_mask: Entry::VALUE,
        };
        let mut reads = [const { MaybeUninit::<GroupRead>::uninit() }; ROUND];
        for &key in keys.iter().take(PREFETCH_AHEAD) {
            simd::prefetch(self.tbl24.as_ptr().wrapping_add((key >> 8) as usize));
        }
        for round in (0..keys.len()).step_by(ROUND) {
            let round_end = keys.len().min(round + ROUND);
            let mut pending = 0;
            for first in (round..round_end).step_by(LANES) {
                for &key in keys.iter().skip(first + PREFETCH_AHEAD).take(LANES) {
                    simd::prefetch(self.tbl24.as_ptr().wrapping_add((key >> 8) as usize));
                }
                let lanes = first..round_end.min(first + LANES);
                let mut extended = match (keys[lanes.clone()].first_chunk(), out[lanes.clone()].first_chunk_mut()) {
                    (Some(group), Some(values)) => simd::direct_stage(level, &self.tbl24, group, test, values),
                    _ => simd::padded(&keys[lanes.clone()], &mut out[lanes], 0, |group, values| {
                        simd::direct_stage(level, &self.tbl24, group, test, values)
                    }),
                };
                while extended != 0 {
                    let slot = first + extended.trailing_zeros() as usize;
                    extended &= extended - 1;
                    let index = out[slot] << 8 | (keys[slot] & 0xff);
                    simd::prefetch(self.tbl8.as_ptr().wrapping_add(index as usize));
                    reads[pending] = MaybeUninit::new(GroupRead { index, slot: slot as u32 });
                    pending += 1;
                }
            }
            for read in &reads[..pending] {
                // SAFETY: the first `pending` slots were written in this round.
                let read = unsafe { read.assume_init() };
                out[read.slot as usize] = Entry(self.tbl8[read.index as usize].load(Ordering::Relaxed)).value();
            }
        }
    }
}
