//! The hot path: direct table, then binary search over the chunk's ranges;
//! and the batch path, which searches a group's keys side by side.

use super::{DirectEntry, Dxr6, RangeEntry, SIZE_XL};
use crate::fib::forward_fib;
use crate::simd::{self, GROUP};
use crate::NextHop;

impl<const K: u32> Dxr6<K> {
    /// Longest-prefix match for `addr`.
    #[inline]
    pub fn lookup(&self, addr: u128) -> NextHop {
        let entry = self.direct_entry(addr);
        if entry.size() == 0 {
            return entry.base();
        }
        self.search(self.ranges(entry), Self::probe(addr))
    }

    /// The direct entry of `addr`'s chunk.
    #[inline(always)]
    fn direct_entry(&self, addr: u128) -> DirectEntry {
        let chunk = (addr >> (128 - K)) as usize;
        debug_assert!(chunk < self.direct.len());
        // SAFETY: the direct table has 2^K entries and `chunk` < 2^K.
        unsafe { *self.direct.get_unchecked(chunk) }
    }

    /// The first range and the range count of a chunk with ranges (`size`
    /// of its entry not 0).
    #[inline(always)]
    fn ranges(&self, entry: DirectEntry) -> (usize, usize) {
        let base = entry.base() as usize;
        let ranges = if entry.size() == SIZE_XL { self.header(base) } else { (base, entry.size() as usize) };
        debug_assert!(ranges.0 + ranges.1 <= self.range.len() && ranges.1 > 0);
        ranges
    }

    /// What the search compares range entries with: `addr`'s offset in its
    /// chunk above every next-hop bit set.
    #[inline(always)]
    fn probe(addr: u128) -> u128 {
        addr << K | ((1 << K) - 1)
    }

    /// The binary search over a chunk's ranges for `probe` (offset << K
    /// with every next-hop bit set), without a branch on the comparisons:
    /// each step moves `low` by `half` or by nothing
    /// ([`simd::step_if_not_above`]: a `cmov`, not a jump the CPU would
    /// mispredict half the time) and always halves
    /// `len`, so the steps are as many as `count`'s bits whatever the key.
    #[inline]
    fn search(&self, (mut low, count): (usize, usize), probe: u128) -> NextHop {
        // Invariant: range[low].start <= offset, and the range holding the
        // offset is among range[low .. low + len].
        let mut len = count;
        while len > 1 {
            let half = len / 2;
            // SAFETY: low + half < low + len <= the chunk's end <= range.len()
            // (`ranges`).
            let middle = unsafe { *self.range.get_unchecked(low + half) }.0;
            low = simd::step_if_not_above(low, half, middle, probe);
            len -= half;
        }
        // SAFETY: low lies inside the chunk's ranges.
        unsafe { self.range.get_unchecked(low) }.next_hop::<K>()
    }

    /// Looks up every key; `out[i]` gets the next hop of `keys[i]`.
    ///
    /// Keys go in groups of 32. The direct stage loads every key's entry
    /// and answers the keys it resolves; the keys left to search are
    /// listed, and their binary searches advance in rounds, one step of
    /// every listed search a round:
    ///
    /// ```text
    ///  round 1: range[low0 + half0]  range[low1 + half1]  ...   (independent loads)
    ///  round 2: ...
    ///  until the longest search has one range left; then every listed key
    ///  reads its range's next hop
    /// ```
    ///
    /// A round's loads do not wait on one another, so a group has up to 32
    /// loads in flight where the scalar search has one; a search that has
    /// converged steps in place (its `half` is 0) until the round ends.
    /// Nothing is allocated.
    ///
    /// # Panics
    /// If `out` is shorter than `keys`.
    pub fn lookup_batch(&self, keys: &[u128], out: &mut [NextHop]) {
        assert!(out.len() >= keys.len(), "output shorter than keys");
        for (keys, out) in keys.chunks(GROUP).zip(out.chunks_mut(GROUP)) {
            self.search_group(keys, out);
        }
    }

    /// [`Dxr6::lookup_batch`] for up to [`GROUP`] keys. The searches are
    /// kept in arrays by their position in the list of searching keys, so
    /// a round walks them in order without an index to load.
    #[inline(always)]
    fn search_group(&self, keys: &[u128], out: &mut [NextHop]) {
        let mut lane_of = [0u8; GROUP];
        let (mut low, mut len, mut probe) = ([0usize; GROUP], [0usize; GROUP], [0u128; GROUP]);
        let (mut count, mut longest) = (0, 0);
        for (lane, (&addr, answer)) in keys.iter().zip(out.iter_mut()).enumerate() {
            let entry = self.direct_entry(addr);
            *answer = entry.base();
            if entry.size() != 0 {
                let (first, ranges) = self.ranges(entry);
                (low[count], len[count], probe[count]) = (first, ranges, Self::probe(addr));
                lane_of[count] = lane as u8;
                count += 1;
                longest = longest.max(ranges);
            }
        }
        let (low, len, probe) = (&mut low[..count], &mut len[..count], &probe[..count]);
        while longest > 1 {
            for ((low, len), &probe) in low.iter_mut().zip(len.iter_mut()).zip(probe) {
                let half = *len / 2;
                // SAFETY: as in `search`: low + half < low + len <= the
                // chunk's end <= range.len() while len > 1; a converged
                // search (len == 1) reads range[low], inside the chunk.
                let middle = unsafe { self.range.get_unchecked(*low + half) }.0;
                *low = simd::step_if_not_above(*low, half, middle, probe);
                *len -= half;
            }
            longest -= longest / 2;
        }
        for (&lane, &low) in lane_of[..count].iter().zip(low.iter()) {
            // SAFETY: low stays inside the chunk's ranges (see above).
            out[usize::from(lane)] = unsafe { self.range.get_unchecked(low) }.next_hop::<K>();
        }
    }

    /// A large chunk: its first range and count from the header at `base`.
    #[cold]
    #[inline(never)]
    fn header(&self, base: usize) -> (usize, usize) {
        (base + 1, self.range[base].0 as usize)
    }
}

forward_fib!([const K: u32] Dxr6<K>, u128, |dxr| &dxr.summary.name, [lookup_batch]);

const _: () = assert!(std::mem::align_of::<RangeEntry>() <= 16);
