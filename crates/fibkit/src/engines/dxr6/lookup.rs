//! The hot path: direct table, then binary search over the chunk's ranges;
//! and the batch path, which searches a group's keys side by side.

use super::{DirectEntry, Dxr6, RangeEntry, SIZE_XL};
use crate::fib::forward_fib;
use crate::simd::{self, GROUP};
use crate::NextHop;

/// Searches a batch lookup advances side by side.
const WAYS: usize = 4;

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
    /// Keys go in groups of 32. The direct stage loads every key's entry,
    /// answers the keys it resolves and lists the others; their binary
    /// searches then advance four at a time, one step of each a round:
    ///
    /// ```text
    ///  round 1: range[low0 + half0]  range[low1 + half1]  ...  range[low3 + half3]   (independent loads)
    ///  round 2: ...
    ///  until the longest of the four has one range left; then each reads
    ///  its range's next hop
    /// ```
    ///
    /// A round's loads do not wait on one another, so four searches have
    /// four loads in flight where the scalar search has one, and their
    /// state stays in registers. Four ways did better than two or eight,
    /// and better than all 32 of a group side by side in arrays, as before,
    /// where every key searches one large chunk. The direct stage lists a
    /// lane as its entry arrives: loading all 32 entries first and listing
    /// in a second pass, which made Poptrie's IPv6 direct stage faster
    /// ([`crate::engines::poptrie`]), made this one slower for D16R6 and
    /// left D18R6 level (figures in docs/decisions.md). Nothing is
    /// allocated.
    ///
    /// # Panics
    /// If `out` is shorter than `keys`.
    pub fn lookup_batch(&self, keys: &[u128], out: &mut [NextHop]) {
        assert!(out.len() >= keys.len(), "output shorter than keys");
        for (keys, out) in keys.chunks(GROUP).zip(out.chunks_mut(GROUP)) {
            self.search_group(keys, out);
        }
    }

    /// [`Dxr6::lookup_batch`] for up to [`GROUP`] keys: the direct stage
    /// answers what it resolves and lists the lanes left to search; those
    /// are searched [`WAYS`] at a time.
    #[inline(always)]
    fn search_group(&self, keys: &[u128], out: &mut [NextHop]) {
        let mut searching = [0u8; GROUP];
        let mut count = 0;
        for (lane, (&addr, answer)) in keys.iter().zip(out.iter_mut()).enumerate() {
            let entry = self.direct_entry(addr);
            *answer = entry.base();
            searching[count] = lane as u8;
            count += usize::from(entry.size() != 0);
        }
        for lanes in searching[..count].chunks(WAYS) {
            self.search_side_by_side(keys, out, lanes);
        }
    }

    /// The binary searches of up to [`WAYS`] keys (`lanes` of `keys`),
    /// a step of each a round, in registers; a search that has converged
    /// (or an unused way, searching one range) steps in place until the
    /// longest ends.
    #[inline(always)]
    fn search_side_by_side(&self, keys: &[u128], out: &mut [NextHop], lanes: &[u8]) {
        debug_assert!(!lanes.is_empty() && lanes.len() <= WAYS);
        let (mut low, mut len, mut probe) = ([0usize; WAYS], [1usize; WAYS], [0u128; WAYS]);
        for (way, &lane) in lanes.iter().enumerate() {
            let addr = keys[usize::from(lane)];
            (low[way], len[way]) = self.ranges(self.direct_entry(addr));
            probe[way] = Self::probe(addr);
        }
        let mut longest = len.iter().copied().max().unwrap_or(1);
        while longest > 1 {
            for way in 0..WAYS {
                let half = len[way] / 2;
                // SAFETY: as in `search`: low + half < low + len <= the
                // chunk's end <= range.len() while len > 1; a converged
                // search (len == 1) reads range[low], inside its chunk; an
                // unused way reads range[0] (a listed lane's chunk has
                // ranges, so `range` is not empty).
                let middle = unsafe { self.range.get_unchecked(low[way] + half) }.0;
                low[way] = simd::step_if_not_above(low[way], half, middle, probe[way]);
                len[way] -= half;
            }
            longest -= longest / 2;
        }
        for (way, &lane) in lanes.iter().enumerate() {
            // SAFETY: low stays inside the chunk's ranges (see above).
            out[usize::from(lane)] = unsafe { self.range.get_unchecked(low[way]) }.next_hop::<K>();
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
