//! DXR's statistics, as its authors' `rt.stat` prints them, and the
//! distribution of chunk lengths for K = 16..22 (the DXR web page's table).

use std::collections::HashSet;
use std::sync::atomic::Ordering;

use super::{Cell, Dxr, BASE_SHIFT, FORMAT_LONG, FORMAT_SHIFT, FORMAT_SHORT, FRAGS_MASK, FRAGS_XL};
use crate::fib::Stats;
use crate::rib::Rib4;
use crate::NextHop;

/// Chunks and fragments of one range format: physical (stored once) and
/// aggregated (counted once per direct entry that refers to them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct FormatCounts {
    pub physical_chunks: usize,
    pub physical_fragments: usize,
    pub aggregated_chunks: usize,
    pub aggregated_fragments: usize,
}

/// Figures of the structure as it stands (counted by [`Dxr::scan`]).
#[derive(Clone, Debug, Default)]
pub(super) struct Summary {
    pub prefixes: usize,
    pub next_hops: usize,
    pub direct_chunks: usize,
    pub longest_chunk: usize,
    pub short: FormatCounts,
    pub long: FormatCounts,
    pub wide: FormatCounts,
}

impl<const K: u32> Dxr<K> {
    /// Share of the address space the direct table resolves on its own.
    pub fn direct_coverage(&self) -> f64 {
        let direct = self.direct.iter().filter(|entry| entry.load(Ordering::Relaxed) & FRAGS_MASK == 0).count();
        direct as f64 / (1u64 << K) as f64
    }

    /// Counts chunks and fragments by walking the direct table (so the
    /// figures hold after incremental updates too).
    pub(super) fn scan(&self) -> Summary {
        let mut summary = Summary { prefixes: self.prefixes.load(Ordering::Relaxed), ..Summary::default() };
        let mut seen_hops: HashSet<NextHop> = HashSet::new();
        let mut physical: HashSet<(u32, usize)> = HashSet::new();
        for entry in self.direct.iter().map(|entry| entry.load(Ordering::Relaxed)) {
            if entry & FRAGS_MASK == 0 {
                summary.direct_chunks += 1;
                seen_hops.insert(entry >> BASE_SHIFT);
                continue;
            }
            let format = (entry >> FORMAT_SHIFT) & 3;
            let base = (entry >> BASE_SHIFT) as usize;
            let (count, hops): (usize, Vec<NextHop>) = match format {
                FORMAT_SHORT => chunk_hops(&self.range_short, base, entry, |word| NextHop::from(word & 0xff)),
                FORMAT_LONG => chunk_hops(&self.range_long, base, entry, |word| word & Self::LONG_HOP_MASK),
                _ => chunk_hops(&self.range_wide, base, entry, |word| word as NextHop),
            };
            let counts = match format {
                FORMAT_SHORT => &mut summary.short,
                FORMAT_LONG => &mut summary.long,
                _ => &mut summary.wide,
            };
            counts.aggregated_chunks += 1;
            counts.aggregated_fragments += count;
            summary.longest_chunk = summary.longest_chunk.max(count);
            if physical.insert((format, base)) {
                counts.physical_chunks += 1;
                counts.physical_fragments += count;
                seen_hops.extend(hops);
            }
        }
        seen_hops.remove(&crate::NO_ROUTE);
        summary.next_hops = seen_hops.len();
        summary
    }

    pub(super) fn report(&self) -> Stats {
        let summary = &self.scan();
        let direct_bytes = self.direct.len() * 4;
        let range_bytes = self.range_bytes();
        let total = direct_bytes + range_bytes;
        let per_prefix = total as f64 / summary.prefixes.max(1) as f64;
        let mut stats = Stats::default();
        stats
            .text("engine", Self::engine_name())
            .count("k", u64::from(K))
            .count("prefixes", summary.prefixes as u64)
            .count("unique_next_hops", summary.next_hops as u64)
            .count("bytes_direct", direct_bytes as u64)
            .count("bytes_range", range_bytes as u64)
            .count("bytes_total", total as u64)
            .real("bytes_per_prefix", per_prefix)
            .real("direct_coverage", summary.direct_chunks as f64 / (1u64 << K) as f64)
            .count("longest_chunk", summary.longest_chunk as u64)
            .count("physical_chunks_short", summary.short.physical_chunks as u64)
            .count("physical_chunks_long", summary.long.physical_chunks as u64)
            .count("physical_chunks_wide", summary.wide.physical_chunks as u64)
            .count("physical_fragments_short", summary.short.physical_fragments as u64)
            .count("physical_fragments_long", summary.long.physical_fragments as u64)
            .count("physical_fragments_wide", summary.wide.physical_fragments as u64)
            .count("aggregated_chunks_short", summary.short.aggregated_chunks as u64)
            .count("aggregated_chunks_long", summary.long.aggregated_chunks as u64)
            .count("aggregated_chunks_wide", summary.wide.aggregated_chunks as u64)
            .count("aggregated_fragments_short", summary.short.aggregated_fragments as u64)
            .count("aggregated_fragments_long", summary.long.aggregated_fragments as u64)
            .count("aggregated_fragments_wide", summary.wide.aggregated_fragments as u64);
        // The wide format is fibkit's own; show it only where it is used.
        let wide = |counts: FormatCounts, figure: fn(&FormatCounts) -> usize| {
            if summary.wide.aggregated_chunks > 0 {
                format!(", {} wide", figure(&counts))
            } else {
                String::new()
            }
        };
        stats.report = format!(
            "DXR (D{K}R): {} prefixes, {} unique nexthops\n\
             Lookup tables: {direct_bytes} bytes direct, {range_bytes} bytes range ({per_prefix:.1} bytes/prefix)\n\
             Direct table resolves {:.1}% of IPv4 address space\n\
             Longest range chunk contains {} fragments\n\
             Physical chunks: {} short, {} long{}\n\
             Physical fragments: {} short, {} long{}\n\
             Aggregated chunks: {} short, {} long{}\n\
             Aggregated fragments: {} short, {} long{}",
            summary.prefixes,
            summary.next_hops,
            summary.direct_chunks as f64 / (1u64 << K) as f64 * 100.0,
            summary.longest_chunk,
            summary.short.physical_chunks,
            summary.long.physical_chunks,
            wide(summary.wide, |counts| counts.physical_chunks),
            summary.short.physical_fragments,
            summary.long.physical_fragments,
            wide(summary.wide, |counts| counts.physical_fragments),
            summary.short.aggregated_chunks,
            summary.long.aggregated_chunks,
            wide(summary.wide, |counts| counts.aggregated_chunks),
            summary.short.aggregated_fragments,
            summary.long.aggregated_fragments,
            wide(summary.wide, |counts| counts.aggregated_fragments),
        );
        stats
    }
}

/// The fragment count of the chunk `entry` describes at `base` (reading
/// the header entry of a long chunk) and the next hops of its fragments.
fn chunk_hops<C: Cell>(
    table: &[C],
    base: usize,
    entry: u32,
    hop: impl Fn(C::Word) -> NextHop,
) -> (usize, Vec<NextHop>) {
    let (first, count) = if entry & FRAGS_MASK == FRAGS_XL {
        (base + 1, table[base].get().into() as usize)
    } else {
        (base, (entry & FRAGS_MASK) as usize)
    };
    (count, table[first..first + count].iter().map(|cell| hop(cell.get())).collect())
}

/// Bucket labels of [`chunk_histogram`]: chunk lengths in fragments (the
/// DXR web page's buckets, plus one for chunks longer than 256).
pub const HISTOGRAM_BUCKETS: [&str; 10] =
    ["1", "2", "3-4", "5-8", "9-16", "17-32", "33-64", "65-128", "129-256", ">256"];

/// The distribution of chunk lengths for one K.
#[derive(Clone, Debug, PartialEq)]
pub struct HistogramRow {
    /// Direct bits.
    pub k: u32,
    /// Number of chunks in each bucket of [`HISTOGRAM_BUCKETS`].
    pub chunks: [u64; 10],
    /// Share of all 2^K chunks in each bucket.
    pub shares: [f64; 10],
}

fn bucket(fragments: u64) -> usize {
    // 1 -> 0, 2 -> 1, 3-4 -> 2, 5-8 -> 3, ..., 129-256 -> 8, more -> 9.
    if fragments <= 1 {
        0
    } else {
        ((64 - (fragments - 1).leading_zeros()) as usize).min(9)
    }
}

/// For K = 16..=22, how many chunks have how many fragments (merged
/// ranges), from one walk of the RIB.
pub fn chunk_histogram(rib: &Rib4) -> Vec<HistogramRow> {
    let mut starts = Vec::new();
    rib.for_each_run(0, u32::MAX, |start, _| starts.push(start));
    (16..=22)
        .map(|k: u32| {
            let shift = 32 - k;
            let total = 1u64 << k;
            let mut chunks = [0u64; 10];
            let mut counted = 0u64;
            let mut index = 0;
            while index < starts.len() {
                let chunk = starts[index] >> shift;
                let mut fragments = u64::from(starts[index] & ((1 << shift) - 1) != 0);
                while index < starts.len() && starts[index] >> shift == chunk {
                    fragments += 1;
                    index += 1;
                }
                chunks[bucket(fragments)] += 1;
                counted += 1;
            }
            // Chunks with no change point inside are one range.
            chunks[0] += total - counted;
            let shares = chunks.map(|count| count as f64 / total as f64);
            HistogramRow { k, chunks, shares }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_follow_the_dxr_page() {
        let expected = [(1, 0), (2, 1), (3, 2), (4, 2), (5, 3), (8, 3), (9, 4), (16, 4), (17, 5), (128, 7)];
        for (fragments, index) in expected {
            assert_eq!(bucket(fragments), index, "{fragments} fragments");
        }
        assert_eq!(bucket(129), 8);
        assert_eq!(bucket(256), 8);
        assert_eq!(bucket(257), 9);
    }

    #[test]
    fn histogram_counts_chunks() {
        let mut rib = Rib4::new();
        rib.insert("10.0.0.0/8".parse().unwrap(), 1);
        rib.insert("10.1.2.0/24".parse().unwrap(), 2);
        let rows = chunk_histogram(&rib);
        let d16 = &rows[0];
        assert_eq!(d16.k, 16);
        // 10.1/16 holds three ranges; every other chunk one.
        assert_eq!(d16.chunks[2], 1);
        assert_eq!(d16.chunks[0], (1 << 16) - 1);
        assert!((d16.shares.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    }
}
