//! `auto`: the engine and parameter (K, s) for this table on this machine,
//! chosen by measuring them.
//!
//! ```text
//!  candidates of the family (registry::AUTO_CANDIDATES: d16r..d22r, poptrie16/18, IPv4 sail,
//!     |   sail-wide and sail-runs, IPv6 poptrie16x12)
//!     | build each over the table (two at a time); one that cannot hold the table is out
//!     | keep those whose footprint fits the caches the OS reports (L2 + L3 of cpu0;
//!     |   all of them when none fits, or the OS reports no cache)
//!     | measure each: batches of 64 keys (as `fibkit lookup`, Python's lookup_batch and
//!     |   the C _bulk calls look up) of the caller's keys (BuildOptions::calibration: a
//!     |   sample of them, or a prefix they fall in; by default uniform random keys),
//!     |   ROUNDS short runs interleaved, each after an untimed run as long that
//!     |   refills the caches, their median
//!     v
//!  the fastest, or the smallest of those within TIE (3%) of it: `auto` builds its FIB
//!     (its own name, file format and updater)
//! ```
//!
//! FreeBSD's DXR picks its direct-table split by the table's size; `auto`
//! measures instead, because which K (or s) is fastest depends on the
//! machine's caches as much as on the table. The calibration takes a few
//! tenths of a second on a full table (the builds most of it); [`choose`]
//! reports what it measured, and `fibkit stat --engine auto` prints it.

use std::fmt;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::addr::Address;
use crate::error::BuildError;
use crate::fib::{BuildOptions, Calibration, Fib};
use crate::live::Updater;
use crate::random::Keyed;
use crate::registry::catalogue::{self, Engine, AUTO_CANDIDATES, AUTO_NAME};
use crate::rib::Rib;
use crate::workload::{Test, Workload};

/// The name `auto` goes by.
pub const NAME: &str = AUTO_NAME;

/// Short runs per candidate (their median is its figure).
const ROUNDS: usize = 3;

/// How long one run of one candidate lasts.
const RUN: Duration = Duration::from_millis(4);

/// Keys per batch of the measured workload.
const BATCH: usize = 64;

/// Candidates within this fraction of the fastest count as fast as it: a
/// calibration's short runs differ by about as much from one to the next
/// (two engines traded places between calibrations on the same table; see
/// docs/decisions.md). Of them `auto` takes the smallest, which leaves
/// the most cache to the rest of the program.
const TIE: f64 = 0.03;

/// What `auto` found out about one candidate.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The engine.
    pub name: &'static str,
    /// Its footprint on this table, if it built.
    pub footprint: Option<usize>,
    /// Why it could not hold the table, if it could not.
    pub refused: Option<String>,
    /// Whether its footprint fits the caches (and so it was measured).
    pub measured: bool,
    /// Batched RND, millions of lookups per second (median of the runs).
    pub mlps: Option<f64>,
}

/// The engine `auto` chose, its FIB, and why.
pub struct Choice<A: Address> {
    /// The engine chosen.
    pub engine: &'static Engine,
    /// Its FIB over the table.
    pub fib: Box<dyn Fib<A>>,
    /// Every candidate, in registry order.
    pub candidates: Vec<Candidate>,
    /// The cache the footprints were held against (L2 + L3), if the OS
    /// reports it.
    pub cache_bytes: Option<usize>,
    /// The keys measured: a sample of the caller's, or uniform random
    /// keys in a prefix (the family's default space where none was given).
    pub calibration: Calibration<A>,
    /// How long choosing took (builds and measurements).
    pub elapsed: Duration,
}

impl<A: Address> fmt::Display for Choice<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let measured = self.candidates.iter().filter(|candidate| candidate.measured).count();
        let cache = self.cache_bytes.map_or_else(
            || "no cache size reported by the OS".to_string(),
            |bytes| format!("{:.1} MiB of L2 + L3", bytes as f64 / (1 << 20) as f64),
        );
        writeln!(
            f,
            "auto chose {} ({}) for {}: the smallest of those within {:.0}% of the fastest in batches of \
             {BATCH} keys ({}) among {measured} candidates whose footprint fits {cache}; chosen in {:.0} ms",
            self.engine.name,
            self.engine.summary,
            A::FAMILY,
            TIE * 100.0,
            self.calibration,
            self.elapsed.as_secs_f64() * 1e3,
        )?;
        for candidate in &self.candidates {
            let footprint = candidate
                .footprint
                .map_or_else(String::new, |bytes| format!("{:.2} MiB", bytes as f64 / (1 << 20) as f64));
            let verdict = match (&candidate.refused, candidate.mlps) {
                (Some(why), _) => format!("cannot hold the table: {why}"),
                (None, Some(mlps)) => format!("{mlps:.1} Mlps"),
                (None, None) => "not measured: does not fit the cache".to_string(),
            };
            writeln!(f, "  {:<12} {footprint:>10}  {verdict}", candidate.name)?;
        }
        Ok(())
    }
}

/// Builds every candidate of family `A` over `rib`, measures those that
/// fit the caches on the keys of `options.calibration` (by default keys
/// uniform over the family's default space, [`crate::random::KeyGen::default_space`]: all
/// of IPv4, 2000::/3), and keeps the fastest (module docs). The caller's
/// keys matter: most IPv6 traffic goes to 2001::/16, where a table's routes
/// crowd into few direct-table slots and another engine is faster.
///
/// # Errors
/// When no candidate can hold the table: the first candidate's error.
pub fn choose<A: Keyed>(rib: &Rib<A>, options: &BuildOptions) -> Result<Choice<A>, BuildError> {
    let start = Instant::now();
    let (workload, calibration) = measured_keys(options.calibration.of::<A>());
    let engines: Vec<&'static Engine> = AUTO_CANDIDATES
        .iter()
        .filter_map(|name| catalogue::listed(name).filter(|engine| engine.serves(A::FAMILY)))
        .collect();
    let built: Vec<Result<Box<dyn Fib<A>>, BuildError>> =
        engines.par_iter().map(|engine| engine.build(rib, options)).collect();
    let cache_bytes = cache_bytes();
    let fits_any = built.iter().flatten().any(|fib| fits(fib.footprint(), cache_bytes));
    let mut candidates: Vec<Candidate> = engines
        .iter()
        .zip(&built)
        .map(|(engine, fib)| Candidate {
            name: engine.name,
            footprint: fib.as_ref().ok().map(|fib| fib.footprint()),
            refused: fib.as_ref().err().map(ToString::to_string),
            measured: fib.as_ref().is_ok_and(|fib| !fits_any || fits(fib.footprint(), cache_bytes)),
            mlps: None,
        })
        .collect();
    // The built candidates that fit, as (index, FIB).
    let measured: Vec<(usize, &dyn Fib<A>)> = built
        .iter()
        .enumerate()
        .filter(|&(index, _)| candidates[index].measured)
        .filter_map(|(index, fib)| Some((index, fib.as_ref().ok()?.as_ref())))
        .collect();
    let Some(&(_, first)) = measured.first() else {
        return Err(built.into_iter().find_map(Result::err).unwrap_or_else(no_candidate::<A>));
    };
    let lookups = calibrate(first, &workload);
    let mut rates = vec![Vec::with_capacity(ROUNDS); candidates.len()];
    for _ in 0..ROUNDS {
        for &(index, fib) in &measured {
            // Untimed: bring the candidate back into the caches the ones
            // before evicted it from. Without it a 4 ms run of a 4 MiB
            // table spent much of its time refilling them, and the
            // biggest candidates read slowest (d20r below d19r); with a
            // quarter run, still so for the largest (well below what
            // `bench` gave them, and auto chose a smaller engine); with a
            // whole run their rates came close to `bench`'s, and auto chose
            // the one `bench` found fastest (see docs/decisions.md).
            std::hint::black_box(fib.run_workload(&workload, lookups));
            let run = Instant::now();
            std::hint::black_box(fib.run_workload(&workload, lookups));
            rates[index].push(lookups as f64 / run.elapsed().as_secs_f64() / 1e6);
        }
    }
    for &(index, _) in &measured {
        rates[index].sort_by(f64::total_cmp);
        candidates[index].mlps = rates[index].get(ROUNDS / 2).copied();
    }
    let best = pick(&candidates).ok_or_else(no_candidate::<A>)?;
    let fib = built.into_iter().nth(best).and_then(Result::ok).ok_or_else(no_candidate::<A>)?;
    Ok(Choice { engine: engines[best], fib, candidates, cache_bytes, calibration, elapsed: start.elapsed() })
}

/// The workload measuring the keys of `calibration`, and the calibration
/// as measured: the default made the space it stands for, and an empty
/// sample the default.
fn measured_keys<A: Keyed>(calibration: &Calibration<A>) -> (Workload<A>, Calibration<A>) {
    let random = Workload::new(Test::Rnd, BATCH, 1);
    match calibration {
        Calibration::Keys(keys) if !keys.is_empty() => {
            (Workload { test: Test::Keys(keys.clone()), ..random }, calibration.clone())
        }
        Calibration::Space(space) => (Workload { space: *space, ..random }, calibration.clone()),
        Calibration::Default | Calibration::Keys(_) => {
            let space = random.space;
            (random, Calibration::Space(space))
        }
    }
}

/// The candidate `auto` takes: of those measured within [`TIE`] of the
/// fastest, the one with the smallest footprint (the first of equals).
fn pick(candidates: &[Candidate]) -> Option<usize> {
    let fastest = candidates.iter().filter_map(|candidate| candidate.mlps).reduce(f64::max)?;
    let fast = |candidate: &Candidate| candidate.mlps.is_some_and(|mlps| mlps >= fastest * (1.0 - TIE));
    let smallest = |candidate: &Candidate| candidate.footprint.unwrap_or(usize::MAX);
    (0..candidates.len()).filter(|&index| fast(&candidates[index])).min_by_key(|&index| smallest(&candidates[index]))
}

/// The FIB of the engine [`choose`] picks: the registry's builder of `auto`.
///
/// # Errors
/// As [`choose`].
pub fn build<A: Keyed>(rib: &Rib<A>, options: &BuildOptions) -> Result<Box<dyn Fib<A>>, BuildError> {
    Ok(choose(rib, options)?.fib)
}

/// The updater of the engine [`choose`] picks (its incremental one where it
/// has it): the registry's updater of `auto`.
///
/// # Errors
/// As [`choose`].
pub fn updater<A: Keyed>(rib: &Rib<A>, options: &BuildOptions) -> Result<Box<dyn Updater<A>>, BuildError> {
    choose(rib, options)?.engine.updater(rib, options)
}

/// The error when the family has no candidate at all.
#[cold]
fn no_candidate<A: Address>() -> BuildError {
    BuildError::Unknown(catalogue::unknown::<A>(""))
}

/// Lookups per run: about [`RUN`] of `fib` on `workload`.
fn calibrate<A: Keyed>(fib: &dyn Fib<A>, workload: &Workload<A>) -> u64 {
    let mut lookups = 1u64 << 12;
    loop {
        let start = Instant::now();
        std::hint::black_box(fib.run_workload(workload, lookups));
        let taken = start.elapsed();
        if taken >= RUN / 4 || lookups >= 1 << 26 {
            return (lookups as f64 * RUN.as_secs_f64() / taken.as_secs_f64().max(1e-9))
                .clamp(4096.0, (1u64 << 28) as f64) as u64;
        }
        lookups *= 4;
    }
}

/// Whether `footprint` bytes fit `cache` (no cache reported: everything does).
fn fits(footprint: usize, cache: Option<usize>) -> bool {
    cache.is_none_or(|cache| footprint <= cache)
}

/// The L2 and L3 (unified or data) caches of cpu0 as the OS reports them
/// (Linux sysfs), added up; `None` where it reports none.
pub fn cache_bytes() -> Option<usize> {
    let root = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
    let mut total = 0;
    for entry in std::fs::read_dir(root).ok()?.flatten() {
        let read =
            |field: &str| std::fs::read_to_string(entry.path().join(field)).ok().map(|text| text.trim().to_string());
        let level: u32 = read("level").and_then(|level| level.parse().ok()).unwrap_or(0);
        let kind = read("type").unwrap_or_default();
        if level >= 2 && kind != "Instruction" {
            total += read("size").and_then(|size| parse_size(&size)).unwrap_or(0);
        }
    }
    (total > 0).then_some(total)
}

/// A sysfs cache size: `512K`, `32768K`, `8M`.
fn parse_size(text: &str) -> Option<usize> {
    let (digits, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len()));
    let count: usize = digits.parse().ok()?;
    let scale = match unit {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => return None,
    };
    count.checked_mul(scale)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::Prefix;
    use crate::random::XorShift32;
    use crate::registry;

    fn random_rib(routes: usize, max_next_hop: u32) -> Rib<u32> {
        let mut rng = XorShift32::new(7);
        let mut rib = Rib::new();
        for _ in 0..routes {
            let len = (rng.next() % 25 + 8) as u8;
            rib.insert(crate::Prefix::truncating(rng.next(), len), rng.next() % max_next_hop + 1);
        }
        rib
    }

    #[test]
    fn auto_builds_the_fastest_candidate_that_holds_the_table_and_answers_as_the_rib() {
        let rib = random_rib(5000, 200);
        let choice = choose(&rib, &BuildOptions::new(200)).unwrap();
        assert_eq!(choice.fib.name(), choice.engine.name);
        assert!(registry::AUTO_CANDIDATES.contains(&choice.engine.name));
        let chosen = choice.candidates.iter().find(|candidate| candidate.name == choice.engine.name).unwrap();
        let best = choice.candidates.iter().filter_map(|candidate| candidate.mlps).fold(0.0, f64::max);
        assert!(chosen.mlps.unwrap() >= best * (1.0 - TIE), "{choice}");
        for other in choice.candidates.iter().filter(|other| other.mlps.is_some_and(|mlps| mlps >= best * (1.0 - TIE)))
        {
            assert!(chosen.footprint <= other.footprint, "{choice}");
        }
        assert!(choice.to_string().starts_with(&format!("auto chose {}", choice.engine.name)), "{choice}");
        let mut rng = XorShift32::new(3);
        for _ in 0..100_000 {
            let key = rng.next();
            assert_eq!(choice.fib.lookup(key), rib.lookup(key), "{key:#x}");
        }
        let fib = registry::build::<u32>(NAME, &rib, &BuildOptions::new(200)).unwrap();
        assert!(registry::AUTO_CANDIDATES.contains(&fib.name()));
    }

    #[test]
    fn of_candidates_about_as_fast_the_smallest_is_picked() {
        let candidate = |name, footprint, mlps: Option<f64>| Candidate {
            name,
            footprint: Some(footprint),
            refused: None,
            measured: mlps.is_some(),
            mlps,
        };
        let mut candidates = vec![
            candidate("d19r", 2_500_000, Some(850.0)),
            candidate("sail", 11_000_000, Some(1_010.0)),
            candidate("sail-runs", 2_300_000, Some(990.0)),
            candidate("d16r", 700_000, None),
        ];
        // sail-runs is within 3% of sail and smaller; d16r was not measured.
        assert_eq!(pick(&candidates), Some(2));
        candidates[2].mlps = Some(970.0);
        assert_eq!(pick(&candidates), Some(1), "4% slower is slower");
        candidates[1].footprint = Some(2_300_000);
        candidates[2].mlps = Some(1_000.0);
        assert_eq!(pick(&candidates), Some(1), "the first of equal footprints");
        assert_eq!(pick(&candidates[3..]), None);
    }

    #[test]
    fn auto_never_chooses_an_engine_that_cannot_hold_the_table() {
        // Next hops beyond DXR's 22-bit fields: Poptrie's wide leaves hold them.
        let max_next_hop = 1 << 24;
        let rib = random_rib(2000, max_next_hop);
        let options = BuildOptions::new(max_next_hop);
        let choice = choose(&rib, &options).unwrap();
        let refused: Vec<&str> = choice
            .candidates
            .iter()
            .filter(|candidate| candidate.refused.is_some())
            .map(|candidate| candidate.name)
            .collect();
        assert!(!refused.is_empty(), "{choice}");
        assert!(!refused.contains(&choice.engine.name), "{choice}");
        assert!(choice.candidates.iter().all(|candidate| candidate.refused.is_none() || candidate.mlps.is_none()));
        assert!(choice.to_string().contains("cannot hold the table"), "{choice}");
        // And when none can (next hops past Poptrie's 31-bit direct
        // entries too), the error is a candidate's.
        let rib = random_rib(2000, u32::MAX);
        let error = choose(&rib, &BuildOptions::new(u32::MAX)).map(|choice| choice.engine.name).unwrap_err();
        assert!(matches!(error, BuildError::Limit(_)), "{error}");
    }

    #[test]
    fn ipv6_has_its_own_candidates() {
        let mut rib = Rib::<u128>::new();
        rib.insert("2001:db8::/32".parse().unwrap(), 1);
        rib.insert("2001:db8:1::/48".parse().unwrap(), 2);
        let choice = choose(&rib, &BuildOptions::new(2)).unwrap();
        assert!(choice.engine.serves(crate::Family::Ipv6));
        assert_eq!(choice.fib.lookup(0x2001_0db8_0001_u128 << 80), 2);
        assert!(choice.to_string().contains("(uniform random keys in 2000::/3)"), "{choice}");
        // Keys inside the table's own /32: still a valid choice, measured there.
        let space: Prefix<u128> = "2001:db8::/32".parse().unwrap();
        let mut options = BuildOptions::new(2);
        options.calibration.ipv6 = Calibration::Space(space);
        let inside = choose(&rib, &options).unwrap();
        assert_eq!(inside.calibration, Calibration::Space(space));
        assert!(inside.to_string().contains("(uniform random keys in 2001:db8::/32)"), "{inside}");
        assert!(inside.candidates.iter().any(|candidate| candidate.mlps.is_some()));
        // The IPv4 calibration is not IPv6's.
        options.calibration.ipv4 = Calibration::Space("10.0.0.0/8".parse().unwrap());
        assert_eq!(choose(&rib, &options).unwrap().calibration, Calibration::Space(space));
    }

    #[test]
    fn the_callers_keys_are_what_auto_measures() {
        let rib = random_rib(3000, 50);
        let keys: std::sync::Arc<[u32]> = (0..4096u32).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
        let mut options = BuildOptions::new(50);
        options.calibration.ipv4 = Calibration::Keys(keys.clone());
        let (workload, calibration) = measured_keys(options.calibration.of::<u32>());
        assert_eq!(workload.test, Test::Keys(keys.clone()));
        assert_eq!((workload.batch, calibration), (BATCH, Calibration::Keys(keys.clone())));
        let choice = choose(&rib, &options).unwrap();
        assert!(choice.to_string().contains("(4096 of the caller's keys)"), "{choice}");
        assert!(choice.candidates.iter().any(|candidate| candidate.mlps.is_some()));
        // No keys at all: the default space, said as such.
        let (workload, calibration) = measured_keys::<u32>(&Calibration::Keys(Vec::new().into()));
        assert_eq!((workload.test, calibration), (Test::Rnd, Calibration::Space(Prefix::default_route())));
    }

    #[test]
    fn ipv6_candidates_that_cannot_hold_the_table_are_out() {
        // Routes under 5,000 /16s: poptrie16x12 would need 5,000 blocks of
        // 4,096 entries, more than it takes; Poptrie holds the table.
        let rib: Rib<u128> =
            (0..5_000u128).map(|i| (Prefix::new((0x2000 + i) << 112 | 1 << 90, 40).unwrap(), 1)).collect();
        let choice = choose(&rib, &BuildOptions::new(1)).unwrap();
        let expanded = choice.candidates.iter().find(|candidate| candidate.name == "poptrie16x12").unwrap();
        assert!(expanded.refused.is_some() && expanded.mlps.is_none(), "{choice}");
        assert_ne!(choice.engine.name, "poptrie16x12");
        assert_eq!(choice.fib.lookup(0x2abc_u128 << 112 | 1 << 90), 1);
    }

    #[test]
    fn cache_sizes_parse_as_sysfs_writes_them() {
        assert_eq!(parse_size("512K"), Some(512 << 10));
        assert_eq!(parse_size("32768K"), Some(32 << 20));
        assert_eq!(parse_size("8M"), Some(8 << 20));
        assert_eq!(parse_size("12"), Some(12));
        assert_eq!(parse_size("8X"), None);
        assert!(fits(1 << 20, None) && fits(1 << 20, Some(2 << 20)) && !fits(3 << 20, Some(2 << 20)));
    }
}
