//! `fibkit bench`: lookup throughput of every engine, measured the way the
//! DXR and Poptrie papers measure it, with third-party peers in the same run.
//!
//! For each engine: build once (timed), then for each test, batch length and
//! thread count, calibrate a lookup count that lasts about `--seconds` on
//! one thread, and run it `--runs` times, the runs of a test's
//! configurations interleaved (every configuration once a round, rounds
//! `--runs` times: A B C A B C). A run starts every worker at once
//! (a barrier), each on its own core where the OS allows pinning, each with
//! its own key generator over the shared read-only FIB; the run's figure is
//! all workers' lookups over the wall-clock time from the first worker's
//! start to the last one's end (not the sum of each worker's own rate,
//! which counts a worker that ran part of the time alone at its solo
//! speed). Reported: median, minimum
//! and maximum over the runs, in million lookups per second (Mlps).
//!
//! The key streams are [`fibkit::measure::workload`]'s: SEQ (each key XORed with the
//! previous result), RND (independent xorshift keys), REP (each key eight
//! times in a short window) and, with `--keys FILE`, a replay of the file's
//! addresses. Every result is folded into a checksum, reported in `--json`,
//! so no lookup can be optimised away.
//!
//! IPv6 (`-6`, `--family ipv6`, or a table of IPv6 routes only) runs the
//! same tests over `u128` keys ([`fibkit::measure::workload::run`]) on the IPv6
//! engines. A uniform 128-bit key almost never hits a route, so random keys
//! are drawn inside `--space` (2000::/3 by default; the Poptrie paper uses
//! 2000::/8); the report names the space and the share of its keys that
//! hit a route.
//!
//! Beside the engines it measures the ceiling
//! ([`fibkit::measure::ceiling`]: one random load from a 1 MiB table per
//! key) in every configuration, the tables' last row, so each engine's
//! figure has a reference measured in the same minutes.
//!
//! `--plot OUT.png` draws a bar chart per test (engines best first, a bar
//! per thread count, the ceiling dashed); it also runs single-thread
//! SEQ/RND/REP for the whole DXR family and draws them against K into
//! `OUT-dxr-k.png` (like Figures 4-6 of the SoftCOM paper). Text in the
//! plots is set from a TrueType font read at run time
//! (see [`plot`]), so `--plot` needs one installed; `make setup` does that.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use fibkit::addr::{Family, IpPrefix};
use fibkit::error::BuildError;
use fibkit::load::RouteTable;
use fibkit::measure::ceiling::Ceiling;
use fibkit::random::{worker_seed, Keyed};
use serde_json::Map;

use crate::family::{build_timed, check_names};

mod args;
pub(crate) mod glyphs;
pub(crate) mod machine;
mod plan;
pub(crate) mod plot;
mod report;
pub(crate) mod run;

pub use args::BenchArgs;
use machine::Machine;
use plan::Plan;
use report::{parameters, render_footer, render_preamble, render_test, to_json, EngineFigures, Report, CEILING};
use run::{calibrate, routed_share, run_once, spinner, Measurement};

/// Installed so that peers without a size report of their own (the
/// `poptrie` crate) get a measured footprint: the heap their build left.
#[global_allocator]
static ALLOCATOR: fibkit_peers::heap::CountingAllocator = fibkit_peers::heap::CountingAllocator;

/// Runs `fibkit bench`. With the family given, the arguments are checked
/// (the plan made) before the table loads; otherwise the table decides the
/// family first.
pub fn run(args: &BenchArgs) -> Result<ExitCode> {
    let mut machine = Machine::detect();
    match args.family.explicit() {
        Some(Family::Ipv4) => run_in::<u32>(args, machine, None),
        Some(Family::Ipv6) => run_in::<u128>(args, machine, None),
        None => {
            if let Some(spec) = &args.engines {
                check_names(spec)?;
            }
            let table = prepare_and_load(args, &mut machine)?;
            match args.family.resolve(&table)? {
                Family::Ipv4 => run_in::<u32>(args, machine, Some(table)),
                Family::Ipv6 => run_in::<u128>(args, machine, Some(table)),
            }
        }
    }
}

/// Checks the output paths, loads the table, then waits briefly for a busy
/// machine to settle (warning if it does not).
fn prepare_and_load(args: &BenchArgs, machine: &mut Machine) -> Result<RouteTable> {
    if let Some(path) = &args.plot {
        if crate::is_stdio(path) {
            bail!("--plot writes PNG files (OUT.png and OUT-dxr-k.png): give a file name, not -");
        }
        plot::prepare(path)?;
    }
    if let Some(path) = args.json.as_deref().filter(|&path| !crate::is_stdio(path)) {
        check_writable(path)?;
    }
    let loading = spinner(match &args.table.table {
        Some(path) => format!("loading {}", path.display()),
        None => "generating the default table".to_string(),
    });
    let table = args.table.load();
    loading.finish_and_clear();
    machine.busy_cores = machine::settled_busy_cores(machine.cores, Duration::from_secs(5));
    if let Some(busy) = machine.busy_cores.filter(|&busy| busy > machine.cores as f64 / 2.0) {
        eprintln!(
            "warning: {busy:.1} of {} cores busy with other work: it competes for the CPUs and caches, \
             so figures will be low and noisy",
            machine.cores
        );
    }
    table
}

/// The run on addresses of type `A`, on `table` if it is loaded already.
fn run_in<A: Keyed>(args: &BenchArgs, mut machine: Machine, table: Option<RouteTable>) -> Result<ExitCode> {
    let plan = Plan::<A>::new(args, machine.cores)?;
    let table = match table {
        Some(table) => table,
        None => {
            if let Some(spec) = &args.engines {
                check_names(spec)?;
            }
            let table = prepare_and_load(args, &mut machine)?;
            args.family.resolve(&table)?;
            table
        }
    };
    let family = A::FAMILY;
    let key_space_routed = (family == Family::Ipv6).then(|| routed_share(table.rib::<A>(), plan.space));

    let cores = core_affinity::get_core_ids().unwrap_or_default();
    if plan.threads.iter().any(|&threads| threads > cores.len().max(1)) {
        eprintln!("warning: more threads than the {} cores the OS reports: workers share cores", cores.len().max(1));
    }
    // Every engine first: the first table (sizes and build times) prints
    // within seconds. Progress goes to stderr a line at a time, terminal or
    // not; each test's table to stdout as soon as it is measured.
    let started = Instant::now();
    let mut engines = Vec::new();
    let mut built = Vec::new();
    for &(engine, ref configs) in &plan.work {
        let (name, summary) = (engine.name, engine.summary.to_string());
        match build_timed::<A>(engine, &table, &plan.calibration()) {
            Ok((fib, build_ms)) => {
                eprintln!("built {name} in {build_ms:.1} ms");
                engines.push(EngineFigures {
                    engine: name.to_string(),
                    summary,
                    bytes_total: Some(fib.footprint() as u64),
                    build_ms: Some(build_ms),
                    parameters: parameters(fib.stats()),
                    error: None,
                });
                built.push((name, fib, configs.clone()));
            }
            Err(error) => {
                match error.downcast_ref::<BuildError>() {
                    // A limit of the engine's structure is by design (the
                    // default table exceeds sail's 15-bit chunk IDs): a
                    // note saying which, in one line.
                    Some(BuildError::Limit(refused)) => eprintln!(
                        "note: {name} skipped, the table exceeds a limit of its structure: {} {} exceeds {} \
                         (at most {}); {} has no such limit",
                        refused.limit, refused.value, refused.field, refused.max, refused.instead
                    ),
                    _ => eprintln!("warning: {name} skipped: {error:#}"),
                }
                engines.push(EngineFigures {
                    engine: name.to_string(),
                    summary,
                    bytes_total: None,
                    build_ms: None,
                    parameters: Map::new(),
                    error: Some(format!("{error:#}")),
                });
            }
        }
    }
    // The ceiling, measured like the engines in the same minutes, in every
    // configuration any engine is (module docs).
    let every_config: BTreeSet<_> = plan.work.iter().flat_map(|(_, configs)| configs.iter().copied()).collect();
    built.push((CEILING, Box::new(Ceiling::new()), every_config.into_iter().collect()));
    let mut report = Report {
        machine,
        table_name: table.name.clone(),
        prefixes: table.prefixes(family),
        next_hops: table.next_hops_of(family),
        mapping: table.next_hops.mapping().to_string(),
        engines,
        measurements: Vec::new(),
        selected: plan.engines.iter().map(|engine| engine.name.to_string()).collect(),
        tests: plan.tests.clone(),
        threads: plan.threads.clone(),
        batches: plan.batches.clone(),
        seconds: plan.seconds,
        runs: plan.runs,
        keys_file: args.keys.as_ref().map(|path| path.display().to_string()),
        keys: plan.key_count(),
        pinned: !cores.is_empty(),
        family,
        key_space: IpPrefix::from(plan.space).of::<u128>(),
        key_space_routed,
    };
    // `--json -`: the JSON is the output, in place of the text tables.
    let tables = !args.json.as_deref().is_some_and(crate::is_stdio);
    if tables {
        crate::write_stdout(&render_preamble(&report))?;
    }
    let total: usize = built.iter().map(|(_, _, configs)| configs.len()).sum();
    for &test in &plan.tests {
        // Every configuration of the test (the ceiling's too), calibrated
        // once; then the runs in rounds, each configuration once a round.
        let mut slots = Vec::new();
        for (name, fib, configs) in &built {
            for &config in configs.iter().filter(|config| config.test == test) {
                let calibration = plan.workload(config.test, config.batch, worker_seed(0));
                let lookups = calibrate(fib.as_ref(), &calibration, plan.seconds, &cores);
                let measurement = Measurement {
                    engine: name.to_string(),
                    config,
                    mlps_runs: Vec::with_capacity(plan.runs),
                    lookups_per_thread: lookups,
                    checksum: 0,
                };
                slots.push((fib.as_ref(), measurement));
            }
        }
        for (round, slot) in interleaved(slots.len(), plan.runs) {
            if slot == 0 && plan.runs > 1 {
                eprintln!("{} round {}/{}: {} configurations", test.as_str(), round + 1, plan.runs, slots.len());
            }
            let (fib, measurement) = &mut slots[slot];
            let config = measurement.config;
            let workload_of = |thread| plan.workload(config.test, config.batch, worker_seed(thread));
            let (mlps, checksum, pinned) =
                run_once(*fib, &workload_of, config.threads, measurement.lookups_per_thread, &cores);
            measurement.mlps_runs.push(mlps);
            measurement.checksum = checksum;
            report.pinned &= pinned;
            if round + 1 == plan.runs {
                eprintln!(
                    "[{}/{total} {:.0} s] {} {} batch {} x{}: {:.1} Mlps ({:.1}-{:.1})",
                    report.measurements.len() + slot + 1,
                    started.elapsed().as_secs_f64(),
                    measurement.engine,
                    test.as_str(),
                    measurement.config.batch,
                    measurement.config.threads,
                    measurement.median(),
                    measurement.min(),
                    measurement.max()
                );
            }
        }
        report.measurements.extend(slots.into_iter().map(|(_, measurement)| measurement));
        if tables {
            crate::write_stdout(&render_test(&report, test))?;
        }
    }
    if tables {
        crate::write_stdout(&render_footer(&report))?;
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&to_json(&report))? + "\n";
        if crate::is_stdio(path) {
            crate::write_stdout(&text)?;
        } else {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
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

/// The order of a test's runs: `(round, slot)` for `runs` rounds over
/// `slots` configurations, every configuration once a round (A B C A B C,
/// not A A B B C C), so that a swing of a shared machine spreads over all
/// of them instead of falling on one engine's runs.
fn interleaved(slots: usize, runs: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..runs).flat_map(move |round| (0..slots).map(move |slot| (round, slot)))
}

/// Fails early, before any measuring, if `path` cannot be created.
pub(crate) fn check_writable(path: &Path) -> Result<()> {
    let parent = path.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !parent.is_dir() {
        bail!("{}: directory {} does not exist", path.display(), parent.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_go_round_every_configuration() {
        let order: Vec<_> = interleaved(2, 3).collect();
        assert_eq!(order, [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]);
        assert_eq!(interleaved(0, 3).count(), 0);
        assert_eq!(interleaved(3, 1).collect::<Vec<_>>(), [(0, 0), (0, 1), (0, 2)]);
    }
}
