//! The openers' first check of a mapped array: one vectorised pass for the
//! largest index its entries name and the largest next hop they hold, so
//! that only a file out of bounds is searched entry by entry for the
//! position to report.

use rayon::prelude::*;

use crate::NextHop;

/// Entries a thread scans at a time.
const PIECE: usize = 1 << 18;

/// Lanes of running maxima.
const LANES: usize = 16;

/// The largest of each half of `split(entry)` over `entries` (0 for none),
/// in pieces on every core. `split` gives an entry's (reference, next hop),
/// one of them 0: an engine passes an index it names plus one, so that 0
/// means "names none", and computes both without a branch.
///
/// The maxima run in 16 lanes: as one fold over the entries, the
/// loop compiled to scalar `cmov`s, and opening a large file took several
/// times as long (see docs/decisions.md).
pub fn largest_references_and_hops<T: Copy + Into<u32> + Sync>(
    entries: &[T],
    split: impl Fn(u32) -> (u32, NextHop) + Sync,
) -> (u32, NextHop) {
    let scan = |entries: &[T]| {
        let (mut references, mut hops) = ([0u32; LANES], [0 as NextHop; LANES]);
        let mut take = |lane: usize, entry: T| {
            let (reference, hop) = split(entry.into());
            references[lane] = references[lane].max(reference);
            hops[lane] = hops[lane].max(hop);
        };
        let (blocks, rest) = entries.as_chunks::<LANES>();
        for block in blocks {
            for (lane, &entry) in block.iter().enumerate() {
                take(lane, entry);
            }
        }
        for (lane, &entry) in rest.iter().enumerate() {
            take(lane, entry);
        }
        (references.into_iter().max().unwrap_or(0), hops.into_iter().max().unwrap_or(0))
    };
    entries.par_chunks(PIECE).map(scan).reduce(|| (0, 0), |(a, b), (c, d)| (a.max(c), b.max(d)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_maxima_come_from_every_piece_and_lane() {
        // Odd entries name index `entry / 2`, even ones hold next hop `entry / 2`.
        let split = |entry: u32| if entry % 2 == 1 { (entry / 2 + 1, 0) } else { (0, entry / 2) };
        assert_eq!(largest_references_and_hops::<u32>(&[], split), (0, 0));
        let mut entries = vec![0u32; 3 * PIECE + 5];
        assert_eq!(largest_references_and_hops(&entries, split), (0, 0));
        entries[2 * PIECE + 17] = 41;
        entries[3 * PIECE + 4] = 100;
        assert_eq!(largest_references_and_hops(&entries, split), (21, 50));
        let words: Vec<u16> = vec![6, 9, 2];
        assert_eq!(largest_references_and_hops(&words, split), (5, 3));
    }
}
