//! The DXR hot path: one direct-table load, then (for a minority of keys)
//! a branch-free binary search in the chunk's fragments.
//!
//! The direct entry is loaded with `Acquire` and fragments with `Relaxed`
//! (see the module docs of [`super`]): on x86-64 these are plain loads.

use std::mem::MaybeUninit;
use std::sync::atomic::Ordering;

use super::{Cell, DirectEntry, Dxr, BASE_SHIFT, FORMAT_LONG, FORMAT_SHIFT, FORMAT_SHORT, FRAGS_MASK, FRAGS_XL, LongEntry, ShortEntry};
use crate::engine::{Fib4, Stats};
use crate::simd::{self, LANES};
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

    /// Binary search of the chunk that `entry` describes for `offset`.
    #[inline(always)]
    fn search(&self, entry: DirectEntry, offset: u32) -> NextHop {
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
        low = if middle <= probe { low + half } else { low };
        remaining -= half;
    }
    // SAFETY: low lies in base..base + count.
    unsafe { table.get_unchecked(low) }.get()
}

/// A key waiting for its binary search: the search's window and probe,
/// and where its answer goes.
#[derive(Clone, Copy, Default)]
struct RangeSearch<W> {
    /// First candidate fragment.
    low: u32,
    /// Candidates left (the answer is found when 1 is left).
    remaining: u32,
    /// The probe compared with whole fragments.
    probe: W,
    /// Index of the key in the batch.
    slot: usize,
}

/// Keys per round of the batch pipeline: their direct stages all run
/// before their range searches.
const ROUND: usize = 64;

/// The range searches queued by one round of keys, by range table.
///
/// The slots are uninitialised until queued: a batch call must not pay
/// for zeroing 2 KiB of stack it mostly never reads.
struct RangeQueue {
    short: [MaybeUninit<RangeSearch<ShortEntry>>; ROUND],
    long: [MaybeUninit<RangeSearch<LongEntry>>; ROUND],
    /// Initialised slots at the front of `short` and of `long`.
    shorts: usize,
    longs: usize,
    /// Largest fragment count among the searches of each table.
    widest_short: u32,
    widest_long: u32,
}

impl RangeQueue {
    #[inline(always)]
    fn new() -> Self {
        RangeQueue {
            short: [const { MaybeUninit::uninit() }; ROUND],
            long: [const { MaybeUninit::uninit() }; ROUND],
            shorts: 0,
            longs: 0,
            widest_short: 1,
            widest_long: 1,
        }
    }

    /// The queued searches of each table.
    #[inline(always)]
    #[allow(clippy::type_complexity)]
    fn queued(&mut self) -> (&mut [RangeSearch<ShortEntry>], &mut [RangeSearch<LongEntry>]) {
        debug_assert!(self.shorts <= ROUND && self.longs <= ROUND);
        // SAFETY: the first `shorts` (`longs`) slots were written by
        // `queue_search` since the last `clear`; `RangeSearch` is `Copy`
        // plain data and `MaybeUninit<T>` has the layout of `T`.
        unsafe {
            (
                std::slice::from_raw_parts_mut(self.short.as_mut_ptr().cast(), self.shorts),
                std::slice::from_raw_parts_mut(self.long.as_mut_ptr().cast(), self.longs),
            )
        }
    }

    #[inline(always)]
    fn clear(&mut self) {
        self.shorts = 0;
        self.longs = 0;
        self.widest_short = 1;
        self.widest_long = 1;
    }
}

/// Binary-search steps that narrow `count` candidates down to one.
#[inline(always)]
fn steps(count: u32) -> u32 {
    32 - (count.max(1) - 1).leading_zeros()
}

/// Runs the binary searches of `searches` side by side, one step of every
/// search per round (so the loads of a round are independent), and
/// returns each search's final fragment through `answer`.
#[inline(always)]
fn search_interleaved<C: Cell>(
    table: &[C],
    searches: &mut [RangeSearch<C::Word>],
    widest: u32,
    mut answer: impl FnMut(usize, C::Word),
) {
    for _ in 0..steps(widest) {
        for search in searches.iter_mut() {
            let half = search.remaining / 2;
            let index = (search.low + half) as usize;
            debug_assert!(index < table.len());
            // SAFETY: low + half < low + remaining <= base + count, and the
            // builder keeps every chunk's fragments inside its table.
            let middle = unsafe { table.get_unchecked(index) }.get();
            // A conditional move: the outcome is a coin toss per key.
            search.low += std::hint::select_unpredictable(middle <= search.probe, half, 0);
            search.remaining -= half;
        }
    }
    for search in searches.iter() {
        debug_assert!(search.remaining == 1 && (search.low as usize) < table.len());
        // SAFETY: low lies in the chunk's fragments (see above).
        answer(search.slot, unsafe { table.get_unchecked(search.low as usize) }.get());
    }
}

impl<const K: u32> Dxr<K> {
    /// Looks up every key; `out[i]` gets the next hop of `keys[i]`.
    ///
    /// Keys go in rounds of 64, each in two passes:
    ///
    /// 1. the direct stage, 16 keys at a time ([`LANES`]): their direct
    ///    entries are loaded at once (AVX2 gathers or 16 scalar loads: see
    ///    [`crate::simd`]) while the next 16 keys' entries are prefetched;
    ///    keys whose chunk is resolved directly get their answer, the others
    ///    queue a range search and prefetch the fragment it probes first;
    /// 2. the queued range searches run side by side, one binary-search
    ///    step of every key per round: the loads of a step are independent
    ///    and no branch depends on a key.
    ///
    /// Rare chunks (wide format, more than 254 fragments) are searched on
    /// the spot. The batch path allocates nothing.
    ///
    /// # Panics
    /// If `out` is shorter than `keys`.
    pub fn lookup_batch(&self, keys: &[u32], out: &mut [NextHop]) {
        assert!(out.len() >= keys.len(), "output shorter than keys");
        let level = simd::level();
        let mut queue = RangeQueue::new();
        let mut padded = [0u32; LANES];
        for round in (0..keys.len()).step_by(ROUND) {
            let round_end = keys.len().min(round + ROUND);
            for first in (round..round_end).step_by(LANES) {
                for &key in keys.iter().skip(first + LANES).take(LANES) {
                    simd::prefetch(self.direct.as_ptr().wrapping_add((key >> Self::SHIFT) as usize));
                }
                let count = LANES.min(keys.len() - first);
                let group: &[u32; LANES] = match keys[first..].first_chunk() {
                    Some(group) => group,
                    None => {
                        padded[..count].copy_from_slice(&keys[first..]);
                        &padded
                    }
                };
                self.direct_stage(level, group, count, first, out, &mut queue);
            }
            self.range_stage(&mut queue, out);
        }
    }

    /// Pass 1 for the `count` keys of a group starting at `first`.
    #[inline(always)]
    fn direct_stage(
        &self,
        level: simd::Level,
        keys: &[u32; LANES],
        count: usize,
        first: usize,
        out: &mut [NextHop],
        queue: &mut RangeQueue,
    ) {
        let test = simd::DirectTest { shift: Self::SHIFT, test_mask: FRAGS_MASK, test_value: 0 };
        let mut entries = [0 as DirectEntry; LANES];
        let direct = simd::direct_stage(level, &self.direct, keys, test, &mut entries);
        for (slot, &entry) in out[first..first + count].iter_mut().zip(&entries) {
            *slot = entry >> BASE_SHIFT;
        }
        let mut searches = !direct & ((1u32 << count) - 1);
        while searches != 0 {
            let lane = searches.trailing_zeros() as usize;
            searches &= searches - 1;
            self.queue_search(entries[lane], keys[lane] & Self::OFFSET_MASK, first + lane, out, queue);
        }
    }

    /// Queues the range search of a key (or does a rare one right away).
    #[inline(always)]
    fn queue_search(&self, entry: DirectEntry, offset: u32, slot: usize, out: &mut [NextHop], queue: &mut RangeQueue) {
        let base = entry >> BASE_SHIFT;
        let count = entry & FRAGS_MASK;
        let format = (entry >> FORMAT_SHIFT) & 3;
        if count == FRAGS_XL || format > FORMAT_SHORT {
            out[slot] = self.search_rare(entry, offset);
            return;
        }
        let middle = (base + count / 2) as usize;
        if format == FORMAT_SHORT {
            simd::prefetch(self.range_short.as_ptr().wrapping_add(middle));
            let probe = (offset | 0xff) as u16;
            queue.short[queue.shorts] = MaybeUninit::new(RangeSearch { low: base, remaining: count, probe, slot });
            queue.shorts += 1;
            queue.widest_short = queue.widest_short.max(count);
        } else {
            simd::prefetch(self.range_long.as_ptr().wrapping_add(middle));
            let probe = offset << K | Self::LONG_HOP_MASK;
            queue.long[queue.longs] = MaybeUninit::new(RangeSearch { low: base, remaining: count, probe, slot });
            queue.longs += 1;
            queue.widest_long = queue.widest_long.max(count);
        }
    }

    /// Pass 2: the queued range searches of a round, side by side.
    #[inline(always)]
    fn range_stage(&self, queue: &mut RangeQueue, out: &mut [NextHop]) {
        let (widest_short, widest_long) = (queue.widest_short, queue.widest_long);
        let (short, long) = queue.queued();
        search_interleaved(&self.range_short, short, widest_short, |slot, fragment| {
            out[slot] = NextHop::from(fragment & 0xff);
        });
        search_interleaved(&self.range_long, long, widest_long, |slot, fragment| {
            out[slot] = fragment & Self::LONG_HOP_MASK;
        });
        queue.clear();
    }
}

impl<const K: u32> Fib4 for Dxr<K> {
    fn name(&self) -> &str {
        Self::engine_name()
    }

    #[inline]
    fn lookup(&self, addr: u32) -> NextHop {
        Dxr::lookup(self, addr)
    }

    fn lookup_batch(&self, keys: &[u32], out: &mut [NextHop]) {
        Dxr::lookup_batch(self, keys, out)
    }

    fn footprint(&self) -> usize {
        Dxr::footprint(self)
    }

    fn stats(&self) -> Stats {
        self.report()
    }
}
