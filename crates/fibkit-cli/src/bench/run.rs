//! Running the workloads: worker seeds, pinning to cores, calibration,
//! one timed run ([`run_once`]), progress bars, and a configuration's
//! [`Measurement`] over its runs.

use std::io::IsTerminal;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use fibkit::addr::Prefix;
use fibkit::fib::Fib;
use fibkit::measure::workload::{Workload, REP_WINDOW};
use fibkit::random::{worker_seed, KeyGen, Keyed};
use fibkit::rib::Rib;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::plan::Config;

/// One configuration's figures over its runs.
#[derive(Clone, Debug)]
pub(super) struct Measurement {
    pub(super) engine: String,
    pub(super) config: Config,
    /// Lookups per second of each run, in millions.
    pub(super) mlps_runs: Vec<f64>,
    pub(super) lookups_per_thread: u64,
    pub(super) checksum: u64,
}

impl Measurement {
    /// The median, minimum and maximum of the runs.
    fn rate(&self) -> Rate {
        Rate::of(self.mlps_runs.clone())
    }

    pub(super) fn median(&self) -> f64 {
        self.rate().median
    }

    pub(super) fn min(&self) -> f64 {
        self.rate().min
    }

    pub(super) fn max(&self) -> f64 {
        self.rate().max
    }
}

/// A rate over several runs, in Mlps: their median, minimum and maximum.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Rate {
    pub(crate) median: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
}

impl Rate {
    /// The figures of `runs` (at least one).
    pub(crate) fn of(mut runs: Vec<f64>) -> Rate {
        runs.sort_by(f64::total_cmp);
        let middle = runs.len() / 2;
        let median = if runs.len() % 2 == 1 { runs[middle] } else { (runs[middle - 1] + runs[middle]) / 2.0 };
        Rate { median, min: runs[0], max: *runs.last().expect("at least one run") }
    }

    /// `min-max`, for notes.
    pub(crate) fn spread(&self) -> String {
        format!("{:.1}-{:.1}", self.min, self.max)
    }
}

/// Pins the calling thread to `core`; whether the OS allowed it.
fn pin(cores: &[core_affinity::CoreId], index: usize) -> bool {
    match cores.get(index % cores.len().max(1)) {
        Some(&core) => core_affinity::set_for_current(core),
        None => false,
    }
}

/// A lookup count that lasts about `seconds` on one thread (a multiple of
/// REP's window, so every test does exactly that many lookups).
pub(crate) fn calibrate<A: Keyed>(
    fib: &dyn Fib<A>,
    workload: &Workload<A>,
    seconds: f64,
    cores: &[core_affinity::CoreId],
) -> u64 {
    let target = (seconds / 10.0).clamp(0.002, 0.1);
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                pin(cores, 0);
                let mut lookups = 1024u64;
                loop {
                    let start = Instant::now();
                    std::hint::black_box(fib.run_workload(workload, lookups));
                    let elapsed = start.elapsed().as_secs_f64();
                    if elapsed >= target || lookups >= 1 << 40 {
                        let wanted = (lookups as f64 / elapsed.max(1e-9) * seconds).max(1024.0) as u64;
                        return wanted.div_ceil(REP_WINDOW as u64) * REP_WINDOW as u64;
                    }
                    lookups *= if elapsed < target / 16.0 { 8 } else { 2 };
                }
            })
            .join()
            .expect("calibration thread panicked")
    })
}

/// One run: `threads` workers at once, worker `t` doing `lookups` lookups
/// of `workload_of(t)`. Returns the Mlps of them all over the run's
/// wall-clock time, the combined checksum and whether every worker was
/// pinned.
pub(crate) fn run_once<A: Keyed>(
    fib: &dyn Fib<A>,
    workload_of: &(dyn Fn(usize) -> Workload<A> + Sync),
    threads: usize,
    lookups: u64,
    cores: &[core_affinity::CoreId],
) -> (f64, u64, bool) {
    let barrier = Barrier::new(threads);
    let outcomes: Vec<(Instant, Instant, u64, bool)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|thread| {
                let barrier = &barrier;
                let workload = workload_of(thread);
                scope.spawn(move || {
                    let pinned = pin(cores, thread);
                    barrier.wait();
                    let start = Instant::now();
                    let checksum = fib.run_workload(&workload, lookups);
                    (start, Instant::now(), checksum, pinned)
                })
            })
            .collect();
        workers.into_iter().map(|worker| worker.join().expect("bench worker panicked")).collect()
    });
    let spans: Vec<(Instant, Instant)> = outcomes.iter().map(|outcome| (outcome.0, outcome.1)).collect();
    let mlps = wall_clock_mlps(&spans, lookups);
    let checksum = outcomes.iter().fold(0u64, |sum, outcome| sum.wrapping_add(outcome.2));
    (mlps, checksum, outcomes.iter().all(|outcome| outcome.3))
}

/// Mlps of workers that each did `lookups` lookups between their (start,
/// end): all lookups over the wall-clock time from the first start to the
/// last end. A sum of per-worker rates would count a worker that ran part of
/// its time alone at its solo speed, and read as more than the machine did
/// (super-linear scaling on two cores).
fn wall_clock_mlps(spans: &[(Instant, Instant)], lookups: u64) -> f64 {
    let first = spans.iter().map(|span| span.0).min();
    let last = spans.iter().map(|span| span.1).max();
    let elapsed = first.zip(last).map_or(0.0, |(first, last)| last.duration_since(first).as_secs_f64());
    (lookups * spans.len() as u64) as f64 / elapsed.max(1e-9) / 1e6
}

pub(crate) fn progress_target() -> ProgressDrawTarget {
    if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    }
}

pub(crate) fn spinner(message: String) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, progress_target());
    bar.set_style(ProgressStyle::with_template("{spinner} {msg} {elapsed}").expect("valid template"));
    bar.set_message(message);
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}

/// The share of the first 2^16 random keys of worker 0's generator inside
/// `space` that hit a route of `rib` (what a random IPv6 test measures).
pub(super) fn routed_share<A: Keyed>(rib: &Rib<A>, space: Prefix<A>) -> f64 {
    const SAMPLE: usize = 1 << 16;
    let mut keys = A::Keys::new(space, worker_seed(0));
    let routed = (0..SAMPLE).filter(|_| rib.lookup(keys.next()) != fibkit::NO_ROUTE).count();
    routed as f64 / SAMPLE as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routed_share_counts_hits_inside_the_space() {
        let mut rib = fibkit::rib::Rib6::new();
        rib.insert("2000::/4".parse().unwrap(), 1);
        let share = routed_share(&rib, "2000::/3".parse().unwrap());
        assert!((0.45..0.55).contains(&share), "{share}");
        assert_eq!(routed_share(&rib, "2000::/8".parse().unwrap()), 1.0);
        assert_eq!(routed_share(&rib, "3000::/4".parse().unwrap()), 0.0);
    }

    #[test]
    fn rates_are_the_median_and_spread_of_their_runs() {
        let rate = Rate::of(vec![3.0, 1.0, 2.0]);
        assert_eq!(rate, Rate { median: 2.0, min: 1.0, max: 3.0 });
        assert_eq!(Rate::of(vec![4.0, 1.0]).median, 2.5);
        assert_eq!(rate.spread(), "1.0-3.0");
    }

    #[test]
    fn a_run_is_its_lookups_over_its_wall_clock_time() {
        let start = Instant::now();
        let at = |seconds: u64| start + Duration::from_secs(seconds);
        // One worker done in 1 s, the other in 2 s: 2 million lookups in
        // 2 s, where the per-worker rates would add up to 1.5 Mlps.
        assert!((wall_clock_mlps(&[(at(0), at(1)), (at(0), at(2))], 1_000_000) - 1.0).abs() < 1e-9);
        // A late start counts from the first one.
        assert!((wall_clock_mlps(&[(at(0), at(2)), (at(1), at(2))], 1_000_000) - 1.0).abs() < 1e-9);
        assert!((wall_clock_mlps(&[(at(0), at(4))], 2_000_000) - 0.5).abs() < 1e-9);
    }
}
