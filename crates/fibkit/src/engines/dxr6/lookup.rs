//! The hot path: direct table, then binary search over the chunk's ranges.

use super::{Dxr6, RangeEntry, SIZE_XL};
use crate::fib::forward_fib;
use crate::NextHop;

impl<const K: u32> Dxr6<K> {
    /// Longest-prefix match for `addr`.
    #[inline]
    pub fn lookup(&self, addr: u128) -> NextHop {
        let chunk = (addr >> (128 - K)) as usize;
        debug_assert!(chunk < self.direct.len());
        // SAFETY: the direct table has 2^K entries and `chunk` < 2^K.
        let entry = unsafe { *self.direct.get_unchecked(chunk) };
        if entry.size() == 0 {
            return entry.base();
        }
        self.search(entry.base() as usize, entry.size(), addr << K | ((1 << K) - 1))
    }

    /// The binary search over a chunk's ranges for `probe` (offset << K
    /// with every next-hop bit set), without a branch on the comparisons:
    /// each step moves `low` by `half` or by nothing (a multiply, not a
    /// jump the CPU would mispredict half the time) and always halves
    /// `len`, so the steps are as many as `count`'s bits whatever the key.
    #[inline]
    fn search(&self, base: usize, size: u32, probe: u128) -> NextHop {
        let (mut low, count) = if size == SIZE_XL { self.header(base) } else { (base, size as usize) };
        debug_assert!(low + count <= self.range.len() && count > 0);
        // Invariant: range[low].start <= offset, and the range holding the
        // offset is among range[low .. low + len].
        let mut len = count;
        while len > 1 {
            let half = len / 2;
            // SAFETY: low + half < low + len <= base + count <= range.len().
            let middle = unsafe { *self.range.get_unchecked(low + half) };
            low += usize::from(middle.0 <= probe) * half;
            len -= half;
        }
        // SAFETY: low < base + count <= range.len().
        unsafe { self.range.get_unchecked(low) }.next_hop::<K>()
    }

    /// A large chunk: its first range and count from the header at `base`.
    #[cold]
    #[inline(never)]
    fn header(&self, base: usize) -> (usize, usize) {
        (base + 1, self.range[base].0 as usize)
    }
}

forward_fib!([const K: u32] Dxr6<K>, u128, |dxr| &dxr.summary.name, []);

const _: () = assert!(std::mem::align_of::<RangeEntry>() <= 16);
