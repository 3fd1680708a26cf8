//! The cost of each lookup, one by one, in time-stamp counter ticks: the
//! Poptrie paper's CPU-cycle analysis (section 4.6, Table 4, Figures 10
//! and 11).
//!
//! Each lookup is bracketed by serialised counter reads:
//!
//! ```text
//!   lfence; rdtsc; lfence      start: earlier work done, later not begun
//!   next_hop = fib.lookup(key)
//!   rdtscp; lfence             end: the lookup's loads have completed
//! ```
//!
//! The pair costs something even around nothing; [`Stopwatch::new`]
//! measures that overhead (the mean of timing an empty body many times)
//! and [`Percentiles::of`] subtracts it, as the paper subtracted its
//! 83-cycle counter overhead.
//!
//! **Resolution.** Some counters advance in steps of more than one tick
//! (AMD's Zen parts: about every 10 ns); [`Stopwatch::resolution`] is the
//! step (the greatest common divisor of its advances). A lookup shorter
//! than a step then reads as 0 or one step, depending on where it falls
//! between steps: single timings are
//! coarse, but as lookups start at every phase of the step, the mean of
//! many is not biased, and the overhead is a mean for the same reason.
//!
//! **Ticks are not core cycles.** The paper read a performance counter of
//! core clock cycles; the time-stamp counter of a modern x86 CPU is
//! invariant ([`Stopwatch::invariant`]): it runs at one fixed rate
//! whatever the core's clock does (turbo, power states), and a virtual
//! machine rarely exposes the core-cycle counters. So a tick is
//! `1 / tsc_ghz` ns, and equals a core cycle only where the core runs at the
//! TSC's rate. [`Stopwatch::tsc_ghz`] measures that rate against the
//! system clock so that ticks convert to nanoseconds.

use crate::addr::Address;
use crate::fib::Fib;
use crate::NextHop;

/// Why per-lookup timing is not possible here.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CyclesError {
    /// The architecture has no time-stamp counter fibkit can read.
    #[error("no time-stamp counter on {0}: per-lookup cycles are measured on x86-64 only")]
    NoCounter(&'static str),
    /// More keys than the tick buffer holds, or the other way round.
    #[error("{keys} keys but room for {ticks} ticks")]
    Lengths {
        /// Keys given.
        keys: usize,
        /// Tick slots given.
        ticks: usize,
    },
}

/// Times lookups one by one (see the module documentation).
#[derive(Clone, Copy, Debug)]
pub struct Stopwatch {
    overhead: f64,
    resolution: u64,
    tsc_ghz: f64,
    invariant: bool,
}

#[cfg(target_arch = "x86_64")]
mod counter {
    use std::arch::x86_64::{__cpuid, __rdtscp, _mm_lfence, _rdtsc};

    /// The counter at the start of a timed section.
    #[inline(always)]
    pub fn start() -> u64 {
        // SAFETY: lfence and rdtsc exist on every x86-64 CPU.
        unsafe {
            _mm_lfence();
            let ticks = _rdtsc();
            _mm_lfence();
            ticks
        }
    }

    /// The counter at the end of a timed section.
    #[inline(always)]
    pub fn end() -> u64 {
        let mut processor = 0u32;
        // SAFETY: rdtscp exists on every x86-64 CPU since 2006's; the
        // caller checked for it through `available`.
        unsafe {
            let ticks = __rdtscp(&mut processor);
            _mm_lfence();
            ticks
        }
    }

    /// Whether rdtscp exists, and whether the counter is invariant
    /// (CPUID 0x8000_0001 EDX bit 27, 0x8000_0007 EDX bit 8).
    pub fn available() -> (bool, bool) {
        let largest = __cpuid(0x8000_0000).eax;
        let rdtscp = largest >= 0x8000_0001 && __cpuid(0x8000_0001).edx & (1 << 27) != 0;
        let invariant = largest >= 0x8000_0007 && __cpuid(0x8000_0007).edx & (1 << 8) != 0;
        (rdtscp, invariant)
    }
}

impl Stopwatch {
    /// A stopwatch with its overhead and the counter's rate measured
    /// (about 0.1 s).
    ///
    /// # Errors
    /// [`CyclesError::NoCounter`] on a CPU without a readable time-stamp
    /// counter (every architecture but x86-64, or an x86-64 without
    /// rdtscp).
    pub fn new() -> Result<Self, CyclesError> {
        #[cfg(target_arch = "x86_64")]
        {
            let (rdtscp, invariant) = counter::available();
            if !rdtscp {
                return Err(CyclesError::NoCounter("this x86-64 CPU (no rdtscp)"));
            }
            const SAMPLES: u64 = 1 << 16;
            let overhead = (0..SAMPLES)
                .map(|i| {
                    let start = counter::start();
                    std::hint::black_box(i);
                    counter::end().wrapping_sub(start)
                })
                .sum::<u64>() as f64
                / SAMPLES as f64;
            // The step: the greatest common divisor of the advances between
            // back-to-back reads (the smallest advance would be the cost of
            // a read where that exceeds the step).
            let mut resolution = 0u64;
            let mut previous = counter::start();
            for _ in 0..SAMPLES {
                let now = counter::start();
                resolution = gcd(resolution, now.wrapping_sub(previous));
                previous = now;
            }
            let resolution = resolution.max(1);
            let clock = std::time::Instant::now();
            let first = counter::start();
            while clock.elapsed() < std::time::Duration::from_millis(100) {
                std::hint::spin_loop();
            }
            let ticks = counter::end().wrapping_sub(first);
            let tsc_ghz = ticks as f64 / clock.elapsed().as_nanos() as f64;
            Ok(Stopwatch { overhead, resolution, tsc_ghz, invariant })
        }
        #[cfg(not(target_arch = "x86_64"))]
        Err(CyclesError::NoCounter(std::env::consts::ARCH))
    }

    /// Ticks the counter reads cost around an empty section, on average:
    /// what [`Percentiles::of`] subtracts.
    pub fn overhead(&self) -> f64 {
        self.overhead
    }

    /// The step the counter advances by, in ticks (1 where it counts every tick).
    pub fn resolution(&self) -> u64 {
        self.resolution
    }

    /// The counter's rate in GHz (ticks per nanosecond), measured against
    /// the system clock.
    pub fn tsc_ghz(&self) -> f64 {
        self.tsc_ghz
    }

    /// Whether the CPU says its counter runs at a fixed rate.
    pub fn invariant(&self) -> bool {
        self.invariant
    }

    /// Looks up every key of `keys` in order, timing each lookup alone:
    /// `ticks[i]` gets the ticks between the counter reads around
    /// `keys[i]`'s lookup (the overhead included), saturated at
    /// `u32::MAX`. Returns the checksum
    /// of the next hops (so the lookups cannot be dropped). The first
    /// `keys.len().min(65536)` keys are looked up once untimed first.
    ///
    /// # Errors
    /// [`CyclesError::Lengths`] if `ticks` is not as long as `keys`.
    pub fn time_each<A: Address, F: Fib<A> + ?Sized>(
        &self,
        fib: &F,
        keys: &[A],
        ticks: &mut [u32],
    ) -> Result<u64, CyclesError> {
        if keys.len() != ticks.len() {
            return Err(CyclesError::Lengths { keys: keys.len(), ticks: ticks.len() });
        }
        let mut checksum = 0u64;
        for &key in &keys[..keys.len().min(1 << 16)] {
            checksum = checksum.wrapping_add(u64::from(fib.lookup(key)));
        }
        #[cfg(target_arch = "x86_64")]
        for (&key, slot) in keys.iter().zip(ticks.iter_mut()) {
            let start = counter::start();
            let next_hop: NextHop = fib.lookup(key);
            let took = counter::end().wrapping_sub(start);
            checksum = checksum.wrapping_add(u64::from(next_hop));
            *slot = took.min(u64::from(u32::MAX)) as u32;
        }
        Ok(checksum)
    }
}

/// Euclid's greatest common divisor (`gcd(0, b) = b`).
fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The distribution of a set of timings less an overhead: the paper's
/// Table 4 columns and Figure 11's candlestick (5th, 25th, 50th, 75th,
/// 95th percentiles).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Percentiles {
    /// How many timings.
    pub count: usize,
    /// Their mean.
    pub mean: f64,
    /// The `n`-th percentile: `n` percent of the timings are no larger.
    pub p5: f64,
    /// 25th percentile (first quartile).
    pub p25: f64,
    /// Median.
    pub p50: f64,
    /// 75th percentile (third quartile).
    pub p75: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
}

impl Percentiles {
    /// The percentiles and mean of `timings` (sorted in place) less
    /// `overhead` (each figure at least 0), or `None` if there are none.
    /// The `n`-th percentile is the smallest timing that at least `n`
    /// percent of the timings do not exceed (nearest rank).
    pub fn of(timings: &mut [u32], overhead: f64) -> Option<Self> {
        if timings.is_empty() {
            return None;
        }
        timings.sort_unstable();
        let count = timings.len();
        let net = |ticks: f64| (ticks - overhead).max(0.0);
        let rank = |percent: usize| net(f64::from(timings[(count * percent).div_ceil(100).max(1) - 1]));
        let sum: u64 = timings.iter().map(|&t| u64::from(t)).sum();
        Some(Percentiles {
            count,
            mean: net(sum as f64 / count as f64),
            p5: rank(5),
            p25: rank(25),
            p50: rank(50),
            p75: rank(75),
            p95: rank(95),
            p99: rank(99),
        })
    }
}

/// The percentiles of `ticks` less `overhead` grouped by `depths` (the
/// binary radix depth of each key, [`crate::rib::Rib::radix_depth`]):
/// entry `d` describes the keys of depth `d`, `None` where there is none.
/// `depths` and `ticks` are paired by index.
pub fn by_depth(ticks: &[u32], depths: &[u8], overhead: f64) -> Vec<Option<Percentiles>> {
    let deepest = depths.iter().copied().max().map_or(0, usize::from);
    let mut groups: Vec<Vec<u32>> = vec![Vec::new(); deepest + 1];
    for (&tick, &depth) in ticks.iter().zip(depths) {
        groups[usize::from(depth)].push(tick);
    }
    groups.iter_mut().map(|group| Percentiles::of(group, overhead)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::radix::Radix;
    use crate::rib::Rib4;

    #[test]
    fn percentiles_take_the_nearest_rank() {
        let mut hundred: Vec<u32> = (1..=100).rev().collect();
        let p = Percentiles::of(&mut hundred, 0.0).unwrap();
        assert_eq!((p.p5, p.p25, p.p50, p.p75, p.p95, p.p99), (5.0, 25.0, 50.0, 75.0, 95.0, 99.0));
        assert_eq!((p.count, p.mean), (100, 50.5));
        let less = Percentiles::of(&mut hundred, 10.5).unwrap();
        assert_eq!((less.p5, less.p50, less.p99, less.mean), (0.0, 39.5, 88.5, 40.0));
        let one = Percentiles::of(&mut [7], 0.0).unwrap();
        assert_eq!((one.p5, one.p99, one.mean), (7.0, 7.0, 7.0));
        assert_eq!(Percentiles::of(&mut [], 0.0), None);
    }

    #[test]
    fn steps_are_the_gcd_of_advances() {
        assert_eq!([40, 20, 60, 100].into_iter().fold(0, gcd), 20);
        assert_eq!([7, 3].into_iter().fold(0, gcd), 1);
        assert_eq!(gcd(0, 0), 0);
    }

    #[test]
    fn by_depth_groups_timings_by_their_keys_depth() {
        let groups = by_depth(&[10, 20, 30, 40], &[2, 0, 2, 2], 5.0);
        assert_eq!(groups.len(), 3);
        assert_eq!(groups[0].unwrap().p50, 15.0);
        assert!(groups[1].is_none());
        assert_eq!((groups[2].unwrap().count, groups[2].unwrap().p50), (3, 25.0));
    }

    #[test]
    fn every_lookup_is_timed_with_the_fibs_answers() {
        let stopwatch = match Stopwatch::new() {
            Ok(stopwatch) => stopwatch,
            Err(error) if cfg!(target_arch = "x86_64") => panic!("x86-64 has a time-stamp counter: {error}"),
            Err(_) => return,
        };
        assert!(stopwatch.tsc_ghz() > 0.1 && stopwatch.tsc_ghz() < 20.0, "{} GHz", stopwatch.tsc_ghz());
        assert!(stopwatch.resolution() >= 1 && stopwatch.resolution() < 1000, "{}", stopwatch.resolution());
        assert!(stopwatch.overhead() > 0.0 && stopwatch.overhead() < 10_000.0, "{}", stopwatch.overhead());
        let mut rib = Rib4::new();
        rib.insert("10.0.0.0/8".parse().unwrap(), 3);
        rib.insert("10.1.0.0/16".parse().unwrap(), 5);
        let radix = Radix::build(&rib);
        let keys = [0x0a01_0000u32, 0x0a02_0000, 0x0b00_0000];
        let mut ticks = [u32::MAX; 3];
        let checksum = stopwatch.time_each(&radix, &keys, &mut ticks).unwrap();
        // Once untimed, once timed.
        assert_eq!(checksum, 2 * (5 + 3));
        assert!(ticks.iter().all(|&t| t < 10_000_000), "{ticks:?}");
        let error = stopwatch.time_each(&radix, &keys, &mut ticks[..2]).unwrap_err();
        assert_eq!(error, CyclesError::Lengths { keys: 3, ticks: 2 });
    }
}
