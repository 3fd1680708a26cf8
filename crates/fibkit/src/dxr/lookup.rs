//! The DXR hot path: one direct-table load, then (for a minority of keys)
//! a branch-free binary search in the chunk's fragments.

use super::{Dxr, DirectEntry, BASE_SHIFT, FORMAT_LONG, FORMAT_SHIFT, FORMAT_SHORT, FRAGS_MASK, FRAGS_XL};
use crate::engine::{Fib4, Stats};
use crate::NextHop;

impl<const K: u32> Dxr<K> {
    /// Longest-prefix match for `addr`.
    #[inline(always)]
    pub fn lookup(&self, addr: u32) -> NextHop {
        let chunk = (addr >> Self::SHIFT) as usize;
        debug_assert!(chunk < self.direct.len());
        // SAFETY: `direct` has exactly 2^K entries and `chunk < 2^K`.
        let entry = unsafe { *self.direct.get_unchecked(chunk) };
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
                    count = usize::from(self.range_short[base]);
                    base += 1;
                }
                let fragment = search_sorted(&self.range_short, base, count, (offset | 0xff) as u16);
                NextHop::from(fragment & 0xff)
            }
            FORMAT_LONG => {
                if header {
                    count = self.range_long[base] as usize;
                    base += 1;
                }
                let probe = offset << K | Self::LONG_HOP_MASK;
                search_sorted(&self.range_long, base, count, probe) & Self::LONG_HOP_MASK
            }
            _ => {
                if header {
                    count = self.range_wide[base] as usize;
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
fn search_sorted<T: Copy + Ord>(table: &[T], base: usize, count: usize, probe: T) -> T {
    debug_assert!(count >= 1 && base + count <= table.len());
    let mut low = base;
    let mut remaining = count;
    while remaining > 1 {
        let half = remaining / 2;
        // SAFETY: low + half < base + count <= table.len() (checked above in
        // debug builds; the builder guarantees it for every direct entry).
        let middle = unsafe { *table.get_unchecked(low + half) };
        low = if middle <= probe { low + half } else { low };
        remaining -= half;
    }
    // SAFETY: low lies in base..base + count.
    unsafe { *table.get_unchecked(low) }
}

/// Keys resolved together by [`Dxr::lookup_batch`]: their direct-table
/// loads are all issued before any search starts.
const GROUP: usize = 16;

impl<const K: u32> Dxr<K> {
    /// Looks up every key; `out[i]` gets the next hop of `keys[i]`.
    ///
    /// Keys go in groups of 16: first every direct entry of the group is
    /// loaded (independent loads the CPU overlaps), and the line each range
    /// search will probe first is prefetched; then the searches run. A
    /// mispredicted direct/range branch then no longer throws away the
    /// other keys' loads.
    ///
    /// # Panics
    /// If `out` is shorter than `keys`.
    pub fn lookup_batch(&self, keys: &[u32], out: &mut [NextHop]) {
        assert!(out.len() >= keys.len(), "output shorter than keys");
        let mut groups = keys.chunks_exact(GROUP);
        let mut outs = out.chunks_exact_mut(GROUP);
        for (group, slots) in (&mut groups).zip(&mut outs) {
            let mut entries = [0 as DirectEntry; GROUP];
            for (entry, &key) in entries.iter_mut().zip(group) {
                let chunk = (key >> Self::SHIFT) as usize;
                debug_assert!(chunk < self.direct.len());
                // SAFETY: `direct` has exactly 2^K entries and `chunk < 2^K`.
                *entry = unsafe { *self.direct.get_unchecked(chunk) };
            }
            for &entry in &entries {
                self.prefetch_chunk(entry);
            }
            for ((slot, &entry), &key) in slots.iter_mut().zip(&entries).zip(group) {
                *slot = if entry & FRAGS_MASK == 0 {
                    entry >> BASE_SHIFT
                } else {
                    self.search(entry, key & Self::OFFSET_MASK)
                };
            }
        }
        let rest = groups.remainder();
        for (slot, &key) in outs.into_remainder().iter_mut().zip(rest) {
            *slot = self.lookup(key);
        }
    }

    /// Prefetches the middle fragment of the chunk `entry` points to (the
    /// binary search's first probe); nothing for direct entries.
    #[inline(always)]
    fn prefetch_chunk(&self, entry: DirectEntry) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let count = entry & FRAGS_MASK;
            if count == 0 {
                return;
            }
            let middle = (entry >> BASE_SHIFT) as usize + (count / 2) as usize;
            let pointer = match (entry >> FORMAT_SHIFT) & 3 {
                FORMAT_SHORT => self.range_short.as_ptr().wrapping_add(middle).cast::<i8>(),
                FORMAT_LONG => self.range_long.as_ptr().wrapping_add(middle).cast::<i8>(),
                _ => return,
            };
            // SAFETY: prefetching is a hint and never faults, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(pointer) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = entry;
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
