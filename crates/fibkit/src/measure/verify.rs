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
//!
//! The boundary and random sweeps serve both families; random keys come
//! from the whole space, a given prefix such as 2000::/3, or inside
//! announced prefixes ([`Space`]). The exhaustive sweep is IPv4's.

use rayon::prelude::*;

use crate::addr::{Address, Prefix};
use crate::fib::Fib;
use crate::random::XorShift32;
use crate::rib::{Range, Rib};
use crate::NextHop;

/// How many mismatches a report keeps in full.
pub const KEPT_MISMATCHES: usize = 10;

/// One wrong answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mismatch<A: Address = u32> {
    /// The address looked up.
    pub addr: A,
    /// The RIB's answer.
    pub expected: NextHop,
    /// The engine's answer.
    pub got: NextHop,
}

/// The outcome of a sweep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report<A: Address = u32> {
    /// Addresses checked.
    pub checked: u64,
    /// Wrong answers found.
    pub mismatches: u64,
    /// How many of the expected answers were a route (not
    /// [`crate::NO_ROUTE`]): random IPv6 keys easily miss every prefix.
    pub routed: u64,
    /// The first wrong answers, in address order where the sweep has one.
    pub first: Vec<Mismatch<A>>,
}

impl<A: Address> Default for Report<A> {
    fn default() -> Self {
        Report { checked: 0, mismatches: 0, routed: 0, first: Vec::new() }
    }
}

impl<A: Address> Report<A> {
    /// Whether every answer was right.
    pub fn passed(&self) -> bool {
        self.mismatches == 0
    }

    fn record(&mut self, mismatch: Mismatch<A>) {
        self.mismatches += 1;
        if self.first.len() < KEPT_MISMATCHES {
            self.first.push(mismatch);
        }
    }

    fn merge(mut self, other: Report<A>) -> Report<A> {
        self.checked += other.checked;
        self.mismatches += other.mismatches;
        self.routed += other.routed;
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
fn check_batch<A: Address, F: Fib<A> + ?Sized>(fib: &F, addrs: &[A], expected: &[NextHop], report: &mut Report<A>) {
    let mut got = [0 as NextHop; BATCH];
    for (keys, wanted) in addrs.chunks(BATCH).zip(expected.chunks(BATCH)) {
        fib.lookup_batch(keys, &mut got[..keys.len()]);
        for ((&addr, &expected), &got) in keys.iter().zip(wanted).zip(&got[..keys.len()]) {
            report.routed += u64::from(expected != crate::NO_ROUTE);
            if got != expected {
                report.record(Mismatch { addr, expected, got });
            }
        }
        report.checked += keys.len() as u64;
    }
}

/// Checks the first and last address of every range of `rib`.
pub fn boundaries<A: Address, F: Fib<A> + ?Sized>(fib: &F, rib: &Rib<A>) -> Report<A> {
    let ranges = rib.ranges(A::ZERO, A::MAX);
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

/// The random sweep of either family: `count` addresses from `draw`, in
/// slices of 2^16 with a generator per slice (so the result does not depend
/// on how the slices spread over the cores).
fn random_of<A: Address, F: Fib<A> + ?Sized>(
    fib: &F,
    rib: &Rib<A>,
    count: u64,
    seed: u64,
    draw: impl Fn(&mut XorShift32) -> A + Sync,
) -> Report<A> {
    const SLICE: u64 = 1 << 16;
    let ranges = rib.ranges(A::ZERO, A::MAX);
    let expected_for = |addr: A| ranges[ranges.partition_point(|range| range.first <= addr) - 1].next_hop;
    let slices = count.div_ceil(SLICE);
    (0..slices)
        .into_par_iter()
        .map(|slice| {
            let mut rng = XorShift32::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ slice);
            let len = SLICE.min(count - slice * SLICE) as usize;
            let addrs: Vec<A> = (0..len).map(|_| draw(&mut rng)).collect();
            let expected: Vec<NextHop> = addrs.iter().map(|&addr| expected_for(addr)).collect();
            let mut report = Report::default();
            check_batch(fib, &addrs, &expected, &mut report);
            report
        })
        .reduce(Report::default, Report::merge)
}

/// Checks every address of the IPv4 space against the RIB's ranges.
pub fn exhaustive<F: Fib<u32> + ?Sized>(fib: &F, rib: &Rib<u32>) -> Report {
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
                    report.routed += if range.next_hop == crate::NO_ROUTE { 0 } else { len as u64 };
                    next += len as u64;
                }
            }
            (block[0].first, report)
        })
        .collect();
    reports.sort_by_key(|(first, _)| *first);
    reports.into_iter().map(|(_, report)| report).fold(Report::default(), Report::merge)
}

/// Where [`random`] draws its keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space<A: Address> {
    /// Uniform over the whole address space (for IPv6 almost never inside
    /// a route).
    Anywhere,
    /// Uniform inside `prefix` (e.g. the global unicast 2000::/3).
    Inside(Prefix<A>),
    /// Inside the RIB's routes: a random route, then random host bits.
    Announced,
}

/// Checks `count` random addresses drawn from `space` with `seed`. With
/// [`Space::Announced`] and an empty RIB there is nothing to draw from:
/// the report is empty.
pub fn random<A: Address, F: Fib<A> + ?Sized>(
    fib: &F,
    rib: &Rib<A>,
    space: Space<A>,
    count: u64,
    seed: u64,
) -> Report<A> {
    let routes: Vec<Prefix<A>> = match space {
        Space::Announced => rib.iter().map(|(prefix, _)| prefix).collect(),
        _ => Vec::new(),
    };
    if space == Space::Announced && routes.is_empty() {
        return Report::default();
    }
    random_of(fib, rib, count, seed, |rng| {
        let prefix = match space {
            Space::Anywhere => Prefix::default_route(),
            Space::Inside(prefix) => prefix,
            Space::Announced => routes[rng.next() as usize % routes.len()],
        };
        prefix.addr() | (A::from_words(|| rng.next()) & !A::mask(prefix.prefix_len()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::Prefix6;
    use crate::engines::radix::Radix;

    /// A RIB-backed engine that answers wrongly for one address.
    struct Faulty<A: Address>(Radix<A>, A);

    impl<A: Address> Fib<A> for Faulty<A> {
        fn name(&self) -> &str {
            "faulty"
        }
        fn lookup(&self, addr: A) -> NextHop {
            if addr == self.1 {
                99
            } else {
                self.0.lookup(addr)
            }
        }
        fn footprint(&self) -> usize {
            0
        }
        fn stats(&self) -> crate::fib::Stats {
            Default::default()
        }
    }

    /// `outer` with next hop 1 and `inner` inside it with next hop 2.
    fn nested<A: Address>(outer: &str, inner: &str) -> Rib<A> {
        let mut rib = Rib::new();
        rib.insert(outer.parse().unwrap(), 1);
        rib.insert(inner.parse().unwrap(), 2);
        rib
    }

    fn small_rib() -> Rib<u32> {
        nested("10.0.0.0/8", "10.1.0.0/16")
    }

    fn small_rib6() -> Rib<u128> {
        nested("2001:db8::/32", "2001:db8:1::/48")
    }

    /// The boundary sweep of `rib` (two nested prefixes) finds the one wrong
    /// answer of an engine at the last address of `inner`.
    fn boundary_sweep_finds_a_wrong_end_of<A: Address>(rib: &Rib<A>, inner: &str) {
        let last = inner.parse::<Prefix<A>>().unwrap().last();
        assert!(boundaries(&Radix::build(rib), rib).passed());
        let report = boundaries(&Faulty(Radix::build(rib), last), rib);
        assert_eq!(report.mismatches, 1);
        assert_eq!(report.first[0], Mismatch { addr: last, expected: 2, got: 99 });
        assert_eq!(report.checked, 2 * 5, "five ranges, two ends each");
    }

    #[test]
    fn boundary_sweep_finds_a_wrong_range_end() {
        boundary_sweep_finds_a_wrong_end_of(&small_rib(), "10.1.0.0/16");
        assert_eq!("10.1.0.0/16".parse::<Prefix<u32>>().unwrap().last(), 0x0a01_ffff);
        boundary_sweep_finds_a_wrong_end_of(&small_rib6(), "2001:db8:1::/48");
    }

    #[test]
    fn random_sweep_counts_its_addresses() {
        let rib = small_rib();
        let report = random(&Radix::build(&rib), &rib, Space::Anywhere, 100_000, 1);
        assert_eq!(report.checked, 100_000);
        assert!(report.passed());
    }

    #[test]
    fn random_keys_land_where_asked6() {
        let rib = small_rib6();
        let engine = Radix::build(&rib);
        let anywhere = random(&engine, &rib, Space::Anywhere, 10_000, 1);
        assert_eq!((anywhere.checked, anywhere.routed), (10_000, 0));
        let announced = random(&engine, &rib, Space::Announced, 10_000, 1);
        assert_eq!((announced.checked, announced.routed), (10_000, 10_000));
        let global = random(&engine, &rib, Space::Inside("2001:db8::/33".parse().unwrap()), 10_000, 1);
        assert_eq!(global.routed, 10_000);
        assert!(global.passed() && announced.passed() && anywhere.passed());
        let one = Prefix6::new(u128::MAX, 128).unwrap();
        let faulty = Faulty(Radix::build(&rib), u128::MAX);
        assert_eq!(random(&faulty, &rib, Space::Inside(one), 100, 1).mismatches, 100);
    }
}

/// Where a batch lookup disagreed with the one-by-one lookup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchMismatch {
    /// Length of the batch.
    pub len: usize,
    /// Where the batch's keys (and its output) start in their buffers.
    pub offset: usize,
    /// Position in the output buffer: inside the batch (`offset..offset +
    /// len`) a wrong answer, outside it a slot the batch should not have
    /// written.
    pub position: usize,
    /// The expected value (the scalar answer, or [`BATCH_UNTOUCHED`]).
    pub expected: NextHop,
    /// What the batch left there.
    pub got: NextHop,
}

/// What [`batches`] fills output buffers with, to see writes outside a batch.
pub const BATCH_UNTOUCHED: NextHop = 0xdead_beef;

/// Checks a batch lookup against the scalar one: for every batch length
/// `0..=max_len` and every start offset 0..=3 (unaligned slices), the keys
/// `keys[offset..offset + len]` go through `batch` into an output buffer at
/// the same offset (a slice longer than the batch); every answer must equal `scalar`'s, and no slot outside
/// the batch may change. Returns the number of batches checked.
///
/// # Panics
/// If `keys` has fewer than `max_len + 3` keys.
pub fn batches<K: Copy>(
    keys: &[K],
    max_len: usize,
    scalar: impl Fn(K) -> NextHop,
    batch: impl Fn(&[K], &mut [NextHop]),
) -> Result<usize, BatchMismatch> {
    assert!(keys.len() >= max_len + 3, "need {} keys", max_len + 3);
    let expected: Vec<NextHop> = keys[..max_len + 3].iter().map(|&key| scalar(key)).collect();
    let mut out = vec![BATCH_UNTOUCHED; max_len + 3 + 8];
    let mut checked = 0;
    for len in 0..=max_len {
        for offset in 0..=3 {
            out.fill(BATCH_UNTOUCHED);
            // The output slice runs past the batch: only `len` slots may change.
            batch(&keys[offset..offset + len], &mut out[offset..]);
            for (position, &got) in out.iter().enumerate() {
                let inside = (offset..offset + len).contains(&position);
                let want = if inside { expected[position] } else { BATCH_UNTOUCHED };
                if got != want {
                    return Err(BatchMismatch { len, offset, position, expected: want, got });
                }
            }
            checked += 1;
        }
    }
    Ok(checked)
}
