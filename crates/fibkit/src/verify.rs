//! Checking an engine against the RIB.
//!
//! Three sweeps, each answering with a [`Report`]:
//! - [`boundaries`]: the first and last address of every range of the RIB,
//!   with the RIB's longest-prefix match as the expected answer (this also
//!   checks the range walk that the range-based engines build from);
//! - [`random`]: uniformly random addresses, expected answer from the RIB's
//!   ranges (binary search; the boundary sweep and the property tests check
//!   the ranges against the trie's longest-prefix match, which is too slow
//!   for ten million addresses);
//! - [`exhaustive`]: all 2^32 addresses, range by range against each range's
//!   next hop, spread over every core.

use rayon::prelude::*;

use crate::engine::Fib4;
use crate::rib::{Range, Rib4};
use crate::workload::XorShift32;
use crate::NextHop;

/// How many mismatches a report keeps in full.
pub const KEPT_MISMATCHES: usize = 10;

/// One wrong answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The address looked up.
    pub addr: u32,
    /// The RIB's answer.
    pub expected: NextHop,
    /// The engine's answer.
    pub got: NextHop,
}

/// The outcome of a sweep.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Addresses checked.
    pub checked: u64,
    /// Wrong answers found.
    pub mismatches: u64,
    /// The first wrong answers, in address order where the sweep has one.
    pub first: Vec<Mismatch>,
}

impl Report {
    /// Whether every answer was right.
    pub fn passed(&self) -> bool {
        self.mismatches == 0
    }

    fn record(&mut self, mismatch: Mismatch) {
        self.mismatches += 1;
        if self.first.len() < KEPT_MISMATCHES {
            self.first.push(mismatch);
        }
    }

    fn merge(mut self, other: Report) -> Report {
        self.checked += other.checked;
        self.mismatches += other.mismatches;
        for mismatch in other.first {
            if self.first.len() < KEPT_MISMATCHES {
                self.first.push(mismatch);
            }
        }
        self
    }
}

const BATCH: usize = 256;

/// Checks `addrs` (with their expected answers) through `lookup_batch`.
fn check_batch<F: Fib4 + ?Sized>(fib: &F, addrs: &[u32], expected: &[NextHop], report: &mut Report) {
    let mut got = [0 as NextHop; BATCH];
    for (keys, wanted) in addrs.chunks(BATCH).zip(expected.chunks(BATCH)) {
        fib.lookup_batch(keys, &mut got[..keys.len()]);
        for ((&addr, &expected), &got) in keys.iter().zip(wanted).zip(&got[..keys.len()]) {
            if got != expected {
                report.record(Mismatch { addr, expected, got });
            }
        }
        report.checked += keys.len() as u64;
    }
}

/// Checks the first and last address of every range of `rib`.
pub fn boundaries<F: Fib4 + ?Sized>(fib: &F, rib: &Rib4) -> Report {
    let ranges = rib.ranges(0, u32::MAX);
    ranges
        .par_chunks(4096)
        .map(|block| {
            let mut report = Report::default();
            let mut addrs = Vec::with_capacity(block.len() * 2);
            for range in block {
                addrs.push(range.first);
                if range.last != range.first {
                    addrs.push(range.last);
                }
            }
            let expected: Vec<NextHop> = addrs.iter().map(|&addr| rib.lookup(addr)).collect();
            check_batch(fib, &addrs, &expected, &mut report);
            report
        })
        .reduce(Report::default, Report::merge)
}

/// Checks `count` uniformly random addresses drawn from `seed`.
pub fn random<F: Fib4 + ?Sized>(fib: &F, rib: &Rib4, count: u64, seed: u64) -> Report {
    const SLICE: u64 = 1 << 16;
    let ranges = rib.ranges(0, u32::MAX);
    let expected_for = |addr: u32| ranges[ranges.partition_point(|range| range.first <= addr) - 1].next_hop;
    let slices = count.div_ceil(SLICE);
    (0..slices)
        .into_par_iter()
        .map(|slice| {
            let mut rng = XorShift32::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ slice);
            let len = SLICE.min(count - slice * SLICE) as usize;
            let addrs: Vec<u32> = (0..len).map(|_| rng.next()).collect();
            let expected: Vec<NextHop> = addrs.iter().map(|&addr| expected_for(addr)).collect();
            let mut report = Report::default();
            check_batch(fib, &addrs, &expected, &mut report);
            report
        })
        .reduce(Report::default, Report::merge)
}

/// Checks every address of the IPv4 space against the RIB's ranges.
pub fn exhaustive<F: Fib4 + ?Sized>(fib: &F, rib: &Rib4) -> Report {
    // Split big ranges so the work spreads evenly over the cores.
    const PIECE: u64 = 1 << 22;
    let mut pieces: Vec<Range<u32>> = Vec::new();
    rib.for_each_range(0, u32::MAX, |range| {
        let mut first = u64::from(range.first);
        let last = u64::from(range.last);
        while first <= last {
            let piece_last = (first + PIECE - 1).min(last);
            pieces.push(Range { first: first as u32, last: piece_last as u32, next_hop: range.next_hop });
            first = piece_last + 1;
        }
    });
    let mut reports: Vec<(u32, Report)> = pieces
        .par_chunks(64)
        .map(|block| {
            let mut report = Report::default();
            let mut keys = [0u32; BATCH];
            let mut got = [0 as NextHop; BATCH];
            for range in block {
                let mut next = u64::from(range.first);
                let end = u64::from(range.last) + 1;
                while next < end {
                    let len = (end - next).min(BATCH as u64) as usize;
                    for (offset, key) in keys[..len].iter_mut().enumerate() {
                        *key = (next + offset as u64) as u32;
                    }
                    fib.lookup_batch(&keys[..len], &mut got[..len]);
                    for (&key, &answer) in keys[..len].iter().zip(&got[..len]) {
                        if answer != range.next_hop {
                            report.record(Mismatch { addr: key, expected: range.next_hop, got: answer });
                        }
                    }
                    report.checked += len as u64;
                    next += len as u64;
                }
            }
            (block[0].first, report)
        })
        .collect();
    reports.sort_by_key(|(first, _)| *first);
    reports.into_iter().map(|(_, report)| report).fold(Report::default(), Report::merge)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::radix::Radix;

    /// A RIB-backed engine that answers wrongly for one address.
    struct Faulty(Radix<u32>, u32);

    impl Fib4 for Faulty {
        fn name(&self) -> &str {
            "faulty"
        }
        fn lookup(&self, addr: u32) -> NextHop {
            if addr == self.1 {
                99
            } else {
                self.0.lookup(addr)
            }
        }
        fn footprint(&self) -> usize {
            0
        }
        fn stats(&self) -> crate::engine::Stats {
            Default::default()
        }
    }

    fn small_rib() -> Rib4 {
        let mut rib = Rib4::new();
        rib.insert("10.0.0.0/8".parse().unwrap(), 1);
        rib.insert("10.1.0.0/16".parse().unwrap(), 2);
        rib
    }

    #[test]
    fn boundary_sweep_finds_a_wrong_range_end() {
        let rib = small_rib();
        assert!(boundaries(&Radix::build(&rib), &rib).passed());
        let faulty = Faulty(Radix::build(&rib), 0x0a01_ffff);
        let report = boundaries(&faulty, &rib);
        assert_eq!(report.mismatches, 1);
        assert_eq!(report.first[0], Mismatch { addr: 0x0a01_ffff, expected: 2, got: 99 });
        assert_eq!(report.checked, 2 * 5, "five ranges, two ends each");
    }

    #[test]
    fn random_sweep_counts_its_addresses() {
        let rib = small_rib();
        let report = random(&Radix::build(&rib), &rib, 100_000, 1);
        assert_eq!(report.checked, 100_000);
        assert!(report.passed());
    }
}
