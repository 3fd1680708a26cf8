//! `fibkit bench`: lookup throughput of every engine, measured the way the
//! DXR and Poptrie papers measure it, with third-party peers in the same run.
//!
//! For each engine: build once (timed), then for each test, batch length and
//! thread count, calibrate a lookup count that lasts about `--seconds` on
//! one thread, and run it `--runs` times. A run starts every worker at once
//! (a barrier), each on its own core where the OS allows pinning, each with
//! its own key generator over the shared read-only FIB; the run's figure is
//! the sum of the workers' lookups per second. Reported: median, minimum
//! and maximum over the runs, in million lookups per second (Mlps).
//!
//! The key streams are [`fibkit::workload`]'s: SEQ (each key XORed with the
//! previous result), RND (independent xorshift keys), REP (each key eight
//! times in a short window) and, with `--keys FILE`, a replay of the file's
//! addresses. Every result is folded into a checksum, reported in `--json`,
//! so no lookup can be optimised away.
//!
//! IPv6 (`-6`, `--family ipv6`, or a table of IPv6 routes only) runs the
//! same tests over `u128` keys ([`fibkit::workload::run6`]) on the IPv6
//! engines. A uniform 128-bit key almost never hits a route, so random keys
//! are drawn inside `--space` (2000::/3 by default; the Poptrie paper uses
//! 2000::/8); the report names the space and the share of its keys that
//! hit a route.
//!
//! `--plot OUT.png` draws throughput against threads per engine and test;
//! it also runs single-thread SEQ/RND/REP for the whole DXR family and draws
//! them against K into `OUT-dxr-k.png` (like Figures 4-6 of the SoftCOM
//! paper). Text in the plots is drawn with a TrueType font read at run time
//! (see [`plot`]), so `--plot` needs one installed; `make setup` does that.

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use fibkit::addr::Prefix6;
use fibkit::engine::{Figure, Stats};
use fibkit::workload::{self, KeyGen6, Test, Test6, Workload, Workload6, MAX_BATCH, REP_WINDOW};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{json, Map, Value};

use crate::family::{self, build_timed_in, select_engines_in, AnyFib, Family, FamilyArgs};
use crate::TableArgs;

mod plot;

/// Installed so that peers without a size report of their own (the
/// `poptrie` crate) get a measured footprint: the heap their build left.
#[global_allocator]
static ALLOCATOR: fibkit_peers::heap::CountingAllocator = fibkit_peers::heap::CountingAllocator;

/// The DXR configurations run by default; the other K are for `--plot`.
const DEFAULT_DXR: [&str; 3] = ["d16r", "d18r", "d20r"];

/// Arguments of `fibkit bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(flatten)]
    table: TableArgs,
    #[command(flatten)]
    family: FamilyArgs,
    /// IPv6: random keys (SEQ, RND, REP) are drawn inside this prefix
    /// [default: 2000::/3, global unicast; the Poptrie paper uses 2000::/8].
    #[arg(long, value_name = "PREFIX", value_parser = parse_space)]
    space: Option<Prefix6>,
    /// Engines, comma-separated, or `all` [default: d16r,d18r,d20r, every
    /// other engine except the rest of the DXR family, and the peers; for
    /// IPv6 every IPv6 engine].
    #[arg(long, value_name = "LIST")]
    engines: Option<String>,
    /// Tests to run, comma-separated (`keys` needs --keys; --keys adds it).
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_values = ["seq", "rnd", "rep"])]
    tests: Vec<TestName>,
    /// Thread counts, comma-separated [default: 1 and powers of two up to
    /// the core count, and the core count].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_threads)]
    threads: Vec<usize>,
    /// Seconds each run lasts (about; calibrated on one thread).
    #[arg(long, value_name = "S", default_value_t = 1.0, value_parser = parse_seconds)]
    seconds: f64,
    /// Runs per configuration (median, minimum and maximum are reported).
    #[arg(long, value_name = "R", default_value_t = 3, value_parser = parse_runs)]
    runs: usize,
    /// File of addresses to replay in order (text, one address a line, or
    /// raw little-endian u32; IPv6: text, or raw 16-byte addresses in
    /// network byte order); adds the `keys` test.
    #[arg(long, value_name = "FILE")]
    keys: Option<PathBuf>,
    /// Batch lengths for RND, REP and keys, comma-separated; 0 is the
    /// scalar path (SEQ always runs scalar).
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_values = ["0"], value_parser = parse_batch)]
    batch: Vec<usize>,
    /// Write every figure as JSON to this file.
    #[arg(long, value_name = "OUT.json")]
    json: Option<PathBuf>,
    /// Draw throughput against threads into this PNG, and the DXR family
    /// against K into OUT-dxr-k.png (runs the DXR configurations needed).
    #[arg(long, value_name = "OUT.png")]
    plot: Option<PathBuf>,
}

/// A test as named on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
enum TestName {
    /// Dependent keys.
    Seq,
    /// Independent random keys.
    Rnd,
    /// Each random key 8 times in a short window.
    Rep,
    /// Keys from --keys FILE.
    Keys,
}

impl TestName {
    fn as_str(self) -> &'static str {
        match self {
            TestName::Seq => "seq",
            TestName::Rnd => "rnd",
            TestName::Rep => "rep",
            TestName::Keys => "keys",
        }
    }

    /// Title as the papers print it.
    fn title(self) -> &'static str {
        match self {
            TestName::Seq => "SEQ",
            TestName::Rnd => "RND",
            TestName::Rep => "REP",
            TestName::Keys => "KEYS",
        }
    }
}

fn parse_threads(text: &str) -> Result<usize, String> {
    let count: usize = text.trim().parse().map_err(|_| format!("{text:?} is not a thread count"))?;
    if count == 0 {
        return Err("thread count must be at least 1".to_string());
    }
    Ok(count)
}

fn parse_seconds(text: &str) -> Result<f64, String> {
    let seconds: f64 = text.trim().parse().map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if !(seconds.is_finite() && seconds > 0.0) {
        return Err("seconds must be a positive number".to_string());
    }
    Ok(seconds)
}

fn parse_runs(text: &str) -> Result<usize, String> {
    let runs: usize = text.trim().parse().map_err(|_| format!("{text:?} is not a run count"))?;
    if runs == 0 {
        return Err("at least one run is needed".to_string());
    }
    Ok(runs)
}

fn parse_batch(text: &str) -> Result<usize, String> {
    let batch: usize = text.trim().parse().map_err(|_| format!("{text:?} is not a batch length"))?;
    if batch > MAX_BATCH {
        return Err(format!("batch length {batch} exceeds the largest, {MAX_BATCH}"));
    }
    Ok(batch)
}

fn parse_space(text: &str) -> Result<Prefix6, String> {
    text.trim().parse::<Prefix6>().map_err(|error| format!("{text:?} is not an IPv6 prefix: {error}"))
}

/// Default thread counts: 1, powers of two below the core count, the core count.
fn default_threads(cores: usize) -> Vec<usize> {
    let mut counts: Vec<usize> = std::iter::successors(Some(1usize), |&n| Some(n * 2)).take_while(|&n| n < cores).collect();
    counts.push(cores.max(1));
    counts.dedup();
    counts
}

/// Whether `name` is a DXR configuration (`d<K>r`), and its K.
fn dxr_k(name: &str) -> Option<u32> {
    name.strip_prefix('d')?.strip_suffix('r')?.parse().ok()
}

/// The engines run without `--engines`: D16R, D18R, D20R, every other
/// engine of fibkit's registry outside the DXR family, then the peers.
fn default_engines(family: Family) -> Vec<&'static str> {
    if family == Family::Ipv6 {
        return fibkit::engine::ENGINES6.iter().map(|spec| spec.name).collect();
    }
    fibkit::engine::ENGINES
        .iter()
        .map(|spec| spec.name)
        .filter(|name| dxr_k(name).is_none() || DEFAULT_DXR.contains(name))
        .chain(fibkit_peers::PEERS.iter().map(|spec| spec.name))
        .collect()
}

/// One measured configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Config {
    test: TestName,
    batch: usize,
    threads: usize,
}

/// What to run, validated.
#[derive(Debug)]
struct Plan {
    /// Engines the user asked for (or the default list).
    engines: Vec<&'static str>,
    /// Per engine to run (the selection, then DXR engines only `--plot`
    /// needs), the configurations to measure.
    work: Vec<(&'static str, Vec<Config>)>,
    tests: Vec<TestName>,
    threads: Vec<usize>,
    batches: Vec<usize>,
    seconds: f64,
    runs: usize,
    keys: Option<Arc<[u32]>>,
    /// The family the run works on.
    family: Family,
    /// IPv6: where random keys are drawn.
    space: Prefix6,
    /// IPv6: the `--keys` file's addresses.
    keys6: Option<Arc<[u128]>>,
}

/// A workload of either family (the plan's).
enum AnyWorkload {
    V4(Workload),
    V6(Workload6),
}

/// Runs `workload` on `fib`: the engine's own monomorphised loop.
fn run_workload(fib: &AnyFib, workload: &AnyWorkload, lookups: u64) -> u64 {
    match (fib, workload) {
        (AnyFib::V4(fib), AnyWorkload::V4(workload)) => fib.run_workload(workload, lookups),
        (AnyFib::V6(fib), AnyWorkload::V6(workload)) => fib.run_workload(workload, lookups),
        _ => unreachable!("the plan builds its engines and workloads in one family"),
    }
}

impl Plan {
    /// Checks the arguments and loads the key file for `family`; touches
    /// no table.
    fn new(args: &BenchArgs, cores: usize, family: Family) -> Result<Plan> {
        let mut engines = match &args.engines {
            Some(spec) => select_engines_in(family, spec)?,
            None => default_engines(family),
        };
        if args.space.is_some() && family == Family::Ipv4 {
            bail!("--space sets where random IPv6 keys are drawn; this run is IPv4 (add -6)");
        }
        let space = args.space.unwrap_or_else(|| workload::key_space(workload::GLOBAL_UNICAST));
        let mut seen = BTreeSet::new();
        engines.retain(|name| seen.insert(*name));
        let mut tests: Vec<TestName> = args.tests.clone();
        if args.keys.is_some() && !tests.contains(&TestName::Keys) {
            tests.push(TestName::Keys);
        }
        if tests.contains(&TestName::Keys) && args.keys.is_none() {
            bail!("the keys test needs --keys FILE");
        }
        tests.sort();
        tests.dedup();
        let mut threads = if args.threads.is_empty() { default_threads(cores) } else { args.threads.clone() };
        threads.sort_unstable();
        threads.dedup();
        let mut batches = args.batch.clone();
        batches.sort_unstable();
        batches.dedup();
        let mut keys6 = None;
        let keys = match &args.keys {
            Some(path) if family == Family::Ipv6 => {
                keys6 = Some(Arc::from(fibkit::load::load_keys6(path)?));
                None
            }
            Some(path) => {
                let keys = fibkit::load::load_keys(path)?;
                if keys.is_empty() {
                    bail!("{}: no addresses in the key file", path.display());
                }
                Some(Arc::from(keys))
            }
            None => None,
        };
        let mut work: Vec<(&'static str, Vec<Config>)> = Vec::new();
        for &engine in &engines {
            let mut configs = BTreeSet::new();
            for &test in &tests {
                let test_batches: &[usize] = if test == TestName::Seq { &[0] } else { &batches };
                for &batch in test_batches {
                    for &threads in &threads {
                        configs.insert(Config { test, batch, threads });
                    }
                }
            }
            work.push((engine, configs.into_iter().collect()));
        }
        if args.plot.is_some() && family == Family::Ipv4 {
            let sweep = [TestName::Seq, TestName::Rnd, TestName::Rep].map(|test| Config { test, batch: 0, threads: 1 });
            for spec in fibkit::engine::ENGINES.iter().filter(|spec| dxr_k(spec.name).is_some()) {
                match work.iter_mut().find(|(engine, _)| *engine == spec.name) {
                    Some((_, configs)) => {
                        for config in sweep {
                            if !configs.contains(&config) {
                                configs.push(config);
                            }
                        }
                        configs.sort();
                    }
                    None => work.push((spec.name, sweep.to_vec())),
                }
            }
        }
        Ok(Plan {
            engines,
            work,
            tests,
            threads,
            batches,
            seconds: args.seconds,
            runs: args.runs,
            keys,
            family,
            space,
            keys6,
        })
    }

    fn measurements(&self) -> u64 {
        self.work.iter().map(|(_, configs)| configs.len() as u64 * self.runs as u64).sum()
    }

    fn workload(&self, test: TestName, batch: usize, seed: u64) -> AnyWorkload {
        if self.family == Family::Ipv6 {
            let test = match test {
                TestName::Seq => Test6::Seq,
                TestName::Rnd => Test6::Rnd,
                TestName::Rep => Test6::Rep,
                TestName::Keys => Test6::Keys(self.keys6.clone().expect("the plan checked --keys")),
            };
            return AnyWorkload::V6(Workload6 { test, batch, seed, space: self.space });
        }
        let test = match test {
            TestName::Seq => Test::Seq,
            TestName::Rnd => Test::Rnd,
            TestName::Rep => Test::Rep,
            TestName::Keys => Test::Keys(self.keys.clone().expect("the plan checked --keys")),
        };
        AnyWorkload::V4(Workload { test, batch, seed })
    }

    /// How many keys the `--keys` file had.
    fn key_count(&self) -> usize {
        self.keys.as_ref().map(|keys| keys.len()).or(self.keys6.as_ref().map(|keys| keys.len())).unwrap_or(0)
    }
}

/// An engine's build figures.
#[derive(Clone, Debug)]
struct EngineFigures {
    engine: String,
    summary: String,
    /// `None` when the engine refused the table (see `error`).
    bytes_total: Option<u64>,
    build_ms: Option<f64>,
    parameters: Map<String, Value>,
    error: Option<String>,
}

/// One configuration's figures over its runs.
#[derive(Clone, Debug)]
struct Measurement {
    engine: String,
    config: Config,
    /// Lookups per second of each run, in millions.
    mlps_runs: Vec<f64>,
    lookups_per_thread: u64,
    checksum: u64,
}

impl Measurement {
    fn sorted(&self) -> Vec<f64> {
        let mut runs = self.mlps_runs.clone();
        runs.sort_by(f64::total_cmp);
        runs
    }

    fn median(&self) -> f64 {
        let runs = self.sorted();
        let middle = runs.len() / 2;
        if runs.len() % 2 == 1 {
            runs[middle]
        } else {
            (runs[middle - 1] + runs[middle]) / 2.0
        }
    }

    fn min(&self) -> f64 {
        self.sorted()[0]
    }

    fn max(&self) -> f64 {
        *self.sorted().last().expect("at least one run")
    }
}

/// The machine the figures come from.
#[derive(Clone, Debug)]
struct Machine {
    cpu_model: String,
    cores: usize,
    cache_size: Option<String>,
    /// One-minute load average when the bench started (Linux).
    load_average: Option<f64>,
    /// Whether big lookup arrays are advised onto huge pages, and the
    /// kernel's transparent-huge-page mode (see `fibkit::mem`).
    huge_pages: String,
}

impl Machine {
    fn detect() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |key: &str| {
            cpuinfo.lines().find_map(|line| {
                let (name, value) = line.split_once(':')?;
                (name.trim() == key).then(|| value.trim().to_string())
            })
        };
        Machine {
            cpu_model: field("model name").unwrap_or_else(|| format!("unknown ({})", std::env::consts::ARCH)),
            cores: std::thread::available_parallelism().map_or(1, usize::from),
            cache_size: field("cache size"),
            load_average: std::fs::read_to_string("/proc/loadavg")
                .ok()
                .and_then(|text| text.split_whitespace().next()?.parse().ok()),
            huge_pages: huge_pages(),
        }
    }
}

/// `advised` or `off` (`FIBKIT_HUGEPAGES=off`), with the kernel's
/// transparent-huge-page mode, e.g. `advised (THP madvise)`.
fn huge_pages() -> String {
    let advice = if fibkit::mem::huge_pages_enabled() { "advised" } else { "off" };
    let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").ok().and_then(|text| {
        let start = text.find('[')? + 1;
        Some(text[start..start + text[start..].find(']')?].to_string())
    });
    match mode {
        Some(mode) => format!("{advice} (THP {mode})"),
        None => format!("{advice} (THP unknown)"),
    }
}

/// Everything a bench run found, for the tables, the JSON and the plots.
#[derive(Clone, Debug)]
struct Report {
    machine: Machine,
    table_name: String,
    prefixes: usize,
    next_hops: usize,
    mapping: String,
    engines: Vec<EngineFigures>,
    measurements: Vec<Measurement>,
    /// The selection (tables and the threads plot show these first).
    selected: Vec<String>,
    tests: Vec<TestName>,
    threads: Vec<usize>,
    batches: Vec<usize>,
    seconds: f64,
    runs: usize,
    keys_file: Option<String>,
    keys: usize,
    pinned: bool,
    family: Family,
    /// IPv6: the prefix random keys were drawn inside.
    key_space: Option<Prefix6>,
    /// IPv6: the share of those keys that hit a route.
    key_space_routed: Option<f64>,
}

/// Seed of worker `thread`'s key generator (the same in every run).
fn seed_for(thread: usize) -> u64 {
    (thread as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
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
fn calibrate(fib: &AnyFib, workload: &AnyWorkload, seconds: f64, cores: &[core_affinity::CoreId]) -> u64 {
    let target = (seconds / 10.0).clamp(0.002, 0.1);
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                pin(cores, 0);
                let mut lookups = 1024u64;
                loop {
                    let start = Instant::now();
                    std::hint::black_box(run_workload(fib, workload, lookups));
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

/// One run: `threads` workers at once, each `lookups` lookups. Returns the
/// summed Mlps, the combined checksum and whether every worker was pinned.
fn run_once(
    fib: &AnyFib,
    plan: &Plan,
    config: Config,
    lookups: u64,
    cores: &[core_affinity::CoreId],
) -> (f64, u64, bool) {
    let barrier = Barrier::new(config.threads);
    let outcomes: Vec<(f64, u64, bool)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..config.threads)
            .map(|thread| {
                let barrier = &barrier;
                let workload = plan.workload(config.test, config.batch, seed_for(thread));
                scope.spawn(move || {
                    let pinned = pin(cores, thread);
                    barrier.wait();
                    let start = Instant::now();
                    let checksum = run_workload(fib, &workload, lookups);
                    let elapsed = start.elapsed().as_secs_f64();
                    (lookups as f64 / elapsed.max(1e-9) / 1e6, checksum, pinned)
                })
            })
            .collect();
        workers.into_iter().map(|worker| worker.join().expect("bench worker panicked")).collect()
    });
    let mlps = outcomes.iter().map(|outcome| outcome.0).sum();
    let checksum = outcomes.iter().fold(0u64, |sum, outcome| sum.wrapping_add(outcome.1));
    (mlps, checksum, outcomes.iter().all(|outcome| outcome.2))
}

fn progress_target() -> ProgressDrawTarget {
    if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    }
}

fn spinner(message: String) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, progress_target());
    bar.set_style(ProgressStyle::with_template("{spinner} {msg} {elapsed}").expect("valid template"));
    bar.set_message(message);
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}

/// Runs `fibkit bench`.
pub fn run(args: &BenchArgs) -> Result<ExitCode> {
    let machine = Machine::detect();
    // With the family given, the arguments are checked before the table
    // loads; otherwise the table decides it first.
    let early_plan = match args.family.explicit() {
        Some(family) => Some(Plan::new(args, machine.cores, family)?),
        None => None,
    };
    if let Some(load) = machine.load_average.filter(|&load| load > machine.cores as f64 / 2.0) {
        eprintln!(
            "warning: load average {load:.1} on {} cores: other work competes for the CPUs and caches, \
             so figures will be low and noisy",
            machine.cores
        );
    }
    if let Some(path) = &args.plot {
        plot::prepare(path)?;
    }
    if let Some(path) = &args.json {
        check_writable(path)?;
    }
    let loading = spinner(match &args.table.table {
        Some(path) => format!("loading {}", path.display()),
        None => "generating the default table".to_string(),
    });
    let table = args.table.load();
    loading.finish_and_clear();
    let table = table?;
    let family = args.family.resolve(&table)?;
    let plan = match early_plan {
        Some(plan) => plan,
        None => Plan::new(args, machine.cores, family)?,
    };
    let key_space_routed = (family == Family::Ipv6).then(|| routed_share(&table.v6, plan.space));

    let cores = core_affinity::get_core_ids().unwrap_or_default();
    if plan.threads.iter().any(|&threads| threads > cores.len().max(1)) {
        eprintln!(
            "warning: more threads than the {} cores the OS reports: workers share cores",
            cores.len().max(1)
        );
    }
    let bar = ProgressBar::with_draw_target(Some(plan.measurements()), progress_target());
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} runs  {msg}  [{elapsed} < {eta}]").expect("valid template"),
    );
    let mut engines = Vec::new();
    let mut measurements = Vec::new();
    let mut pinned = !cores.is_empty();
    for (name, configs) in &plan.work {
        bar.set_message(format!("building {name}"));
        let summary = family::summary(family, name).to_string();
        let (fib, build_ms) = match build_timed_in(family, name, &table) {
            Ok(built) => built,
            Err(error) => {
                bar.suspend(|| eprintln!("warning: {name} skipped: {error:#}"));
                bar.inc(configs.len() as u64 * plan.runs as u64);
                engines.push(EngineFigures {
                    engine: name.to_string(),
                    summary,
                    bytes_total: None,
                    build_ms: None,
                    parameters: Map::new(),
                    error: Some(format!("{error:#}")),
                });
                continue;
            }
        };
        engines.push(EngineFigures {
            engine: name.to_string(),
            summary,
            bytes_total: Some(fib.footprint() as u64),
            build_ms: Some(build_ms),
            parameters: parameters(fib.stats()),
            error: None,
        });
        for &config in configs {
            let label = format!("{name} {} batch {} x{}", config.test.as_str(), config.batch, config.threads);
            bar.set_message(format!("{label} calibrating"));
            let calibration = plan.workload(config.test, config.batch, seed_for(0));
            let lookups = calibrate(&fib, &calibration, plan.seconds, &cores);
            let mut mlps_runs = Vec::with_capacity(plan.runs);
            let mut checksum = 0;
            for run in 0..plan.runs {
                bar.set_message(format!("{label} run {}/{}", run + 1, plan.runs));
                let (mlps, run_checksum, run_pinned) = run_once(&fib, &plan, config, lookups, &cores);
                mlps_runs.push(mlps);
                checksum = run_checksum;
                pinned &= run_pinned;
                bar.inc(1);
            }
            measurements.push(Measurement {
                engine: name.to_string(),
                config,
                mlps_runs,
                lookups_per_thread: lookups,
                checksum,
            });
        }
    }
    bar.finish_and_clear();

    let report = Report {
        machine,
        table_name: table.name.clone(),
        prefixes: family.prefixes(&table),
        next_hops: table.next_hops.len(),
        mapping: table.next_hops.mapping().to_string(),
        engines,
        measurements,
        selected: plan.engines.iter().map(ToString::to_string).collect(),
        tests: plan.tests.clone(),
        threads: plan.threads.clone(),
        batches: plan.batches.clone(),
        seconds: plan.seconds,
        runs: plan.runs,
        keys_file: args.keys.as_ref().map(|path| path.display().to_string()),
        keys: plan.key_count(),
        pinned,
        family,
        key_space: (family == Family::Ipv6).then_some(plan.space),
        key_space_routed,
    };
    print!("{}", render(&report));
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&to_json(&report))?;
        std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = &args.plot {
        for written in plot::draw(&report, path)? {
            eprintln!("wrote {}", written.display());
        }
    }
    // An engine that refuses the table (a structural limit) is reported in
    // the tables and the JSON; the run itself has succeeded.
    Ok(ExitCode::SUCCESS)
}

/// The share of the first 2^16 random keys of worker 0's generator inside
/// `space` that hit a route of `rib` (what a random IPv6 test measures).
fn routed_share(rib: &fibkit::rib::Rib6, space: Prefix6) -> f64 {
    const SAMPLE: usize = 1 << 16;
    let mut keys = KeyGen6::new(space, seed_for(0));
    let routed = (0..SAMPLE).filter(|_| rib.lookup(keys.next()) != fibkit::NO_ROUTE).count();
    routed as f64 / SAMPLE as f64
}

/// Fails early, before any measuring, if `path` cannot be created.
fn check_writable(path: &Path) -> Result<()> {
    let parent = path.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !parent.is_dir() {
        bail!("{}: directory {} does not exist", path.display(), parent.display());
    }
    Ok(())
}

/// An engine's statistics figures as JSON (its parameters and structure).
fn parameters(stats: Stats) -> Map<String, Value> {
    stats
        .figures
        .into_iter()
        .map(|(key, figure)| {
            let value = match figure {
                Figure::Count(value) => json!(value),
                Figure::Real(value) => json!(value),
                Figure::Text(value) => json!(value),
            };
            (key, value)
        })
        .collect()
}

/// Engines in report order: the selection first, then the DXR sweep's.
fn engine_order(report: &Report) -> Vec<&str> {
    report.engines.iter().map(|engine| engine.engine.as_str()).collect()
}

/// The text report: build figures, then one table per test (rows: engines
/// and batch lengths, columns: thread counts), as on the DXR page.
fn render(report: &Report) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Table: {} ({} {} prefixes, {} next hops, mapping: {})",
        report.table_name, report.prefixes, report.family, report.next_hops, report.mapping
    );
    if let Some(space) = report.key_space {
        let _ = writeln!(
            out,
            "Random IPv6 keys: inside {space}{}",
            report
                .key_space_routed
                .map_or(String::new(), |share| format!(" ({:.2}% of them hit a route)", share * 100.0))
        );
    }
    let _ = writeln!(
        out,
        "Machine: {}, {} cores{}, huge pages {}; {} run(s) of {} s per configuration, workers {}",
        report.machine.cpu_model,
        report.machine.cores,
        report.machine.load_average.map_or(String::new(), |load| format!(" (load average {load:.1} at start)")),
        report.machine.huge_pages,
        report.runs,
        report.seconds,
        if report.pinned { "pinned to cores" } else { "not pinned" },
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "{:<14} {:>12} {:>12} {:>10}", "engine", "bytes", "bytes/prefix", "build ms");
    for engine in &report.engines {
        match (engine.bytes_total, engine.build_ms, &engine.error) {
            (Some(bytes), Some(build_ms), _) => {
                let _ = writeln!(
                    out,
                    "{:<14} {:>12} {:>12.2} {:>10.1}",
                    engine.engine,
                    bytes,
                    bytes as f64 / report.prefixes.max(1) as f64,
                    build_ms
                );
            }
            (_, _, error) => {
                let _ = writeln!(out, "{:<14} refused: {}", engine.engine, error.as_deref().unwrap_or("?"));
            }
        }
    }
    let order = engine_order(report);
    let show_batch = report.measurements.iter().any(|m| m.config.batch != 0);
    for test in [TestName::Seq, TestName::Rnd, TestName::Rep, TestName::Keys] {
        let of_test: Vec<&Measurement> = report.measurements.iter().filter(|m| m.config.test == test).collect();
        if of_test.is_empty() {
            continue;
        }
        let threads: BTreeSet<usize> = of_test.iter().map(|m| m.config.threads).collect();
        let _ = writeln!(out);
        let _ = writeln!(out, "{} test, Mlps: median (min-max) of {} run(s)", test.title(), report.runs);
        let _ = write!(out, "{:<14}", "engine");
        if show_batch {
            let _ = write!(out, " {:>5}", "batch");
        }
        for &count in &threads {
            let heading = if count == 1 { "1 thread".to_string() } else { format!("{count} threads") };
            let _ = write!(out, " {heading:>24}");
        }
        let _ = writeln!(out);
        let mut rows: Vec<(usize, usize)> = of_test
            .iter()
            .map(|m| (order.iter().position(|name| *name == m.engine).unwrap_or(usize::MAX), m.config.batch))
            .collect();
        rows.sort_unstable();
        rows.dedup();
        for (position, batch) in rows {
            let engine = order.get(position).copied().unwrap_or("?");
            let _ = write!(out, "{engine:<14}");
            if show_batch {
                let _ = write!(out, " {batch:>5}");
            }
            for &count in &threads {
                let cell = of_test
                    .iter()
                    .find(|m| m.engine == engine && m.config.batch == batch && m.config.threads == count)
                    .map_or_else(|| "-".to_string(), |m| format!("{:.1} ({:.1}-{:.1})", m.median(), m.min(), m.max()));
                let _ = write!(out, " {cell:>24}");
            }
            let _ = writeln!(out);
        }
    }
    out
}

/// The JSON report: `machine`, `table`, `parameters`, `engines`, `results`.
fn to_json(report: &Report) -> Value {
    let engines: Vec<Value> = report
        .engines
        .iter()
        .map(|engine| {
            let mut object = Map::new();
            object.insert("engine".into(), json!(engine.engine));
            object.insert("summary".into(), json!(engine.summary));
            object.insert("selected".into(), json!(report.selected.contains(&engine.engine)));
            object.insert("bytes_total".into(), json!(engine.bytes_total));
            object.insert(
                "bytes_per_prefix".into(),
                json!(engine.bytes_total.map(|bytes| bytes as f64 / report.prefixes.max(1) as f64)),
            );
            object.insert("build_ms".into(), json!(engine.build_ms));
            object.insert("parameters".into(), Value::Object(engine.parameters.clone()));
            if let Some(error) = &engine.error {
                object.insert("error".into(), json!(error));
            }
            Value::Object(object)
        })
        .collect();
    let results: Vec<Value> = report
        .measurements
        .iter()
        .map(|m| {
            json!({
                "engine": m.engine,
                "test": m.config.test.as_str(),
                "threads": m.config.threads,
                "batch": m.config.batch,
                "mlps_median": m.median(),
                "mlps_min": m.min(),
                "mlps_max": m.max(),
                "mlps_runs": m.mlps_runs,
                "runs": m.mlps_runs.len(),
                "lookups_per_thread": m.lookups_per_thread,
                "checksum": m.checksum,
            })
        })
        .collect();
    json!({
        "fibkit_version": env!("CARGO_PKG_VERSION"),
        "machine": {
            "cpu_model": report.machine.cpu_model,
            "cores": report.machine.cores,
            "cache_size": report.machine.cache_size,
            "load_average": report.machine.load_average,
            "huge_pages": report.machine.huge_pages,
            "os": std::env::consts::OS,
            "arch": std::env::consts::ARCH,
        },
        "table": {
            "name": report.table_name,
            "prefixes": report.prefixes,
            "family": report.family.key(),
            "next_hops": report.next_hops,
            "mapping": report.mapping,
        },
        "parameters": {
            "engines": report.selected,
            "tests": report.tests.iter().map(|test| test.as_str()).collect::<Vec<_>>(),
            "threads": report.threads,
            "batch": report.batches,
            "seconds": report.seconds,
            "runs": report.runs,
            "keys_file": report.keys_file,
            "keys": report.keys,
            "key_space": report.key_space.map(|space| space.to_string()),
            "key_space_routed_share": report.key_space_routed,
            "pinned": report.pinned,
            "seeds": (0..report.threads.iter().copied().max().unwrap_or(1)).map(seed_for).collect::<Vec<_>>(),
        },
        "engines": engines,
        "results": results,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn parse(line: &[&str]) -> Result<BenchArgs, clap::Error> {
        let mut argv = vec!["fibkit", "bench"];
        argv.extend_from_slice(line);
        match crate::Cli::try_parse_from(argv)?.command {
            crate::Command::Bench(args) => Ok(args),
            _ => unreachable!("parsed as bench"),
        }
    }

    fn plan(line: &[&str]) -> Result<Plan> {
        Plan::new(&parse(line)?, 2, Family::Ipv4)
    }

    fn plan6(line: &[&str]) -> Result<Plan> {
        Plan::new(&parse(line)?, 2, Family::Ipv6)
    }

    fn error_of(line: &[&str]) -> String {
        match plan(line) {
            Ok(plan) => panic!("{line:?} was accepted: {plan:?}"),
            Err(error) => format!("{error:#}"),
        }
    }

    #[test]
    fn thread_count_zero_is_refused_clearly() {
        let message = error_of(&["--threads", "1,0"]);
        assert!(message.contains("thread count must be at least 1"), "{message}");
        assert!(error_of(&["--threads", "two"]).contains("not a thread count"));
    }

    #[test]
    fn unknown_engine_is_named_with_the_known_ones() {
        let message = error_of(&["--engines", "d18r,nonesuch"]);
        assert!(message.contains("unknown engine \"nonesuch\""), "{message}");
        assert!(message.contains("radix") && message.contains("treebitmap"), "{message}");
    }

    #[test]
    fn missing_key_file_is_named() {
        let message = error_of(&["--keys", "no/such/keys.txt"]);
        assert!(message.contains("no/such/keys.txt"), "{message}");
    }

    #[test]
    fn other_argument_errors() {
        assert!(error_of(&["--tests", "seq,fast"]).contains("fast"));
        assert!(error_of(&["--tests", "keys"]).contains("needs --keys"));
        assert!(error_of(&["--seconds", "0"]).contains("positive"));
        assert!(error_of(&["--seconds", "nan"]).contains("positive"));
        assert!(error_of(&["--runs", "0"]).contains("at least one run"));
        assert!(error_of(&["--batch", "0,100000"]).contains("exceeds"));
    }

    #[test]
    fn default_plan_runs_the_default_dxr_and_every_peer() {
        let plan = plan(&[]).unwrap();
        for name in ["d16r", "d18r", "d20r", "radix", "prefix-trie", "treebitmap", "poptrie-crate"] {
            assert!(plan.engines.contains(&name), "{name} missing from {:?}", plan.engines);
        }
        for name in ["d17r", "d19r", "d21r", "d22r"] {
            assert!(!plan.engines.contains(&name), "{name} is run by default");
        }
        assert_eq!(plan.threads, vec![1, 2]);
        assert_eq!(plan.tests, vec![TestName::Seq, TestName::Rnd, TestName::Rep]);
        // 3 tests x 2 thread counts, batch 0 only.
        assert!(plan.work.iter().all(|(_, configs)| configs.len() == 6));
        assert_eq!(plan.work.len(), plan.engines.len());
    }

    #[test]
    fn seq_runs_scalar_only_and_batches_multiply_the_rest() {
        let plan = plan(&["--engines", "radix", "--batch", "0,64", "--threads", "2,1,2"]).unwrap();
        assert_eq!(plan.threads, vec![1, 2]);
        let (_, configs) = &plan.work[0];
        assert_eq!(configs.iter().filter(|c| c.test == TestName::Seq).count(), 2);
        assert!(configs.iter().filter(|c| c.test == TestName::Seq).all(|c| c.batch == 0));
        assert_eq!(configs.iter().filter(|c| c.test == TestName::Rnd).count(), 4);
        assert_eq!(plan.measurements(), 10 * 3);
    }

    #[test]
    fn plot_adds_the_dxr_sweep() {
        let plan =
            plan(&["--engines", "radix,d18r,radix", "--tests", "rnd", "--threads", "2", "--plot", "x.png"]).unwrap();
        assert_eq!(plan.engines, vec!["radix", "d18r"]);
        let names: Vec<&str> = plan.work.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, vec!["radix", "d18r", "d16r", "d17r", "d19r", "d20r", "d21r", "d22r"]);
        let (_, d18r) = &plan.work[1];
        // Its own rnd at 2 threads plus single-thread seq, rnd, rep.
        assert_eq!(d18r.len(), 4);
        let (_, d17r) = &plan.work[3];
        assert!(d17r.iter().all(|c| c.threads == 1 && c.batch == 0));
    }

    #[test]
    fn ipv6_plans_use_the_ipv6_registry_and_key_space() {
        let six = plan6(&["--plot", "x.png"]).unwrap();
        let names: Vec<&str> = fibkit::engine::ENGINES6.iter().map(|spec| spec.name).collect();
        assert_eq!(six.engines, names);
        assert_eq!(six.work.len(), names.len(), "no IPv4 DXR sweep for --plot");
        assert_eq!(six.space.to_string(), "2000::/3");
        match six.workload(TestName::Rnd, 64, 9) {
            AnyWorkload::V6(workload) => {
                assert_eq!((workload.test, workload.batch, workload.seed), (Test6::Rnd, 64, 9));
                assert_eq!(workload.space.to_string(), "2000::/3");
            }
            AnyWorkload::V4(_) => panic!("an IPv6 plan made an IPv4 workload"),
        }
        let paper = plan6(&["--space", "2000::/8", "--engines", "poptrie18"]).unwrap();
        assert_eq!((paper.engines.clone(), paper.space.to_string()), (vec!["poptrie18"], "2000::/8".to_string()));
        assert!(matches!(plan(&[]).unwrap().workload(TestName::Seq, 0, 1), AnyWorkload::V4(_)));
    }

    #[test]
    fn ipv6_argument_errors_say_what_is_ipv4_only() {
        let message = format!("{:#}", plan6(&["--engines", "poptrie16,d18r"]).unwrap_err());
        assert!(message.contains("\"d18r\" is IPv4 only"), "{message}");
        let message = format!("{:#}", plan6(&["--engines", "prefix-trie"]).unwrap_err());
        assert!(message.contains("fibkit-peers is IPv4 only"), "{message}");
        assert!(error_of(&["--space", "2000::/8"]).contains("this run is IPv4"));
        let message = parse(&["--space", "2000::1/8"]).expect_err("host bits refused").to_string();
        assert!(message.contains("host bits set"), "{message}");
        assert!(parse(&["-4", "-6"]).is_err(), "-4 and -6 together");
    }

    #[test]
    fn default_threads_reach_the_core_count() {
        assert_eq!(default_threads(1), vec![1]);
        assert_eq!(default_threads(2), vec![1, 2]);
        assert_eq!(default_threads(6), vec![1, 2, 4, 6]);
        assert_eq!(default_threads(8), vec![1, 2, 4, 8]);
        assert_eq!(dxr_k("d18r"), Some(18));
        assert_eq!(dxr_k("dir24-8"), None);
    }

    fn sample_report() -> Report {
        let measurement = |engine: &str, test, threads, runs: Vec<f64>| Measurement {
            engine: engine.to_string(),
            config: Config { test, batch: 0, threads },
            mlps_runs: runs,
            lookups_per_thread: 800,
            checksum: 12345,
        };
        Report {
            machine: Machine { cpu_model: "Test CPU".into(), cores: 2, cache_size: None, load_average: Some(0.5), huge_pages: "advised (THP madvise)".into() },
            table_name: "tiny".into(),
            prefixes: 4,
            next_hops: 2,
            mapping: "distinct values".into(),
            engines: vec![
                EngineFigures {
                    engine: "radix".into(),
                    summary: "trie".into(),
                    bytes_total: Some(400),
                    build_ms: Some(0.5),
                    parameters: Map::from_iter([("nodes".to_string(), json!(7))]),
                    error: None,
                },
                EngineFigures {
                    engine: "d16r".into(),
                    summary: "DXR".into(),
                    bytes_total: None,
                    build_ms: None,
                    parameters: Map::new(),
                    error: Some("too many next hops".into()),
                },
            ],
            measurements: vec![
                measurement("radix", TestName::Rnd, 1, vec![3.0, 1.0, 2.0]),
                measurement("radix", TestName::Rnd, 2, vec![4.0, 6.0]),
            ],
            selected: vec!["radix".into(), "d16r".into()],
            tests: vec![TestName::Rnd],
            threads: vec![1, 2],
            batches: vec![0],
            seconds: 0.05,
            runs: 3,
            keys_file: None,
            keys: 0,
            pinned: true,
            family: Family::Ipv4,
            key_space: None,
            key_space_routed: None,
        }
    }

    #[test]
    fn json_has_the_documented_schema() {
        let value = to_json(&sample_report());
        for key in ["machine", "table", "parameters", "engines", "results"] {
            assert!(value.get(key).is_some(), "no {key}");
        }
        assert_eq!(value["machine"]["cpu_model"], "Test CPU");
        assert_eq!(value["machine"]["cores"], 2);
        assert_eq!(value["machine"]["load_average"], 0.5);
        for key in ["name", "prefixes", "next_hops", "mapping"] {
            assert!(value["table"].get(key).is_some(), "table has no {key}");
        }
        let results = value["results"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        let first = &results[0];
        for key in ["engine", "test", "threads", "batch", "mlps_median", "mlps_min", "mlps_max", "runs", "checksum"] {
            assert!(first.get(key).is_some(), "result has no {key}");
        }
        assert_eq!(first["test"], "rnd");
        assert_eq!(first["mlps_median"], 2.0);
        assert_eq!(first["mlps_min"], 1.0);
        assert_eq!(first["mlps_max"], 3.0);
        assert_eq!(first["runs"], 3);
        assert_eq!(results[1]["mlps_median"], 5.0, "median of an even count is the middle mean");
        let engines = value["engines"].as_array().unwrap();
        assert_eq!(engines[0]["bytes_total"], 400);
        assert_eq!(engines[0]["bytes_per_prefix"], 100.0);
        assert_eq!(engines[0]["build_ms"], 0.5);
        assert_eq!(engines[0]["parameters"]["nodes"], 7);
        assert!(engines[1]["bytes_total"].is_null());
        assert_eq!(engines[1]["error"], "too many next hops");
    }

    #[test]
    fn ipv6_reports_name_the_family_and_the_key_space() {
        let mut report = sample_report();
        report.family = Family::Ipv6;
        report.key_space = Some("2000::/8".parse().unwrap());
        report.key_space_routed = Some(0.25);
        let text = render(&report);
        assert!(text.contains("(4 IPv6 prefixes,"), "{text}");
        assert!(text.contains("Random IPv6 keys: inside 2000::/8 (25.00% of them hit a route)"), "{text}");
        let value = to_json(&report);
        assert_eq!(value["table"]["family"], "ipv6");
        assert_eq!(value["parameters"]["key_space"], "2000::/8");
        assert_eq!(value["parameters"]["key_space_routed_share"], 0.25);
        let ipv4 = to_json(&sample_report());
        assert_eq!(ipv4["table"]["family"], "ipv4");
        assert!(ipv4["parameters"]["key_space"].is_null());
    }

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
    fn text_tables_have_engines_as_rows_and_threads_as_columns() {
        let text = render(&sample_report());
        assert!(text.contains("RND test"), "{text}");
        assert!(!text.contains("SEQ test"), "{text}");
        let header = text.lines().find(|line| line.starts_with("engine") && line.contains("thread")).unwrap();
        assert!(header.contains("1 thread") && header.contains("2 threads"), "{header}");
        let row = text.lines().filter(|line| line.starts_with("radix")).nth(1).unwrap();
        assert!(row.contains("2.0 (1.0-3.0)") && row.contains("5.0 (4.0-6.0)"), "{row}");
        assert!(text.contains("d16r           refused: too many next hops"), "{text}");
    }
}
