//! `fibkit verify`: compare engines with the RIB.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use clap::Args;
use fibkit::addr::Address;
use fibkit::verify::{self, Report};

use crate::{build_timed, select_engines, TableArgs};

/// Arguments of `fibkit verify`.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// Engine to check, a comma-separated list, or `all`.
    #[arg(long, default_value = "all")]
    engine: String,
    /// Also check all 2^32 addresses (both cores; about a minute per engine).
    #[arg(long)]
    exhaustive: bool,
    /// How many random addresses to check.
    #[arg(long, default_value_t = 10_000_000)]
    random: u64,
    /// Seed of the random addresses.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    table: TableArgs,
}

fn show(engine: &str, sweep: &str, report: &Report, seconds: f64) -> bool {
    let verdict = if report.passed() { "ok" } else { "MISMATCH" };
    println!(
        "{engine:>8} {sweep:<11} {:>13} addresses {:>9} wrong  {seconds:>7.2} s  {verdict}",
        report.checked, report.mismatches
    );
    for mismatch in &report.first {
        println!(
            "         {:<15} expected {:>6} got {:>6}",
            mismatch.addr.display(),
            mismatch.expected,
            mismatch.got
        );
    }
    report.passed()
}

/// Runs `fibkit verify`.
pub fn run(args: &VerifyArgs) -> Result<ExitCode> {
    let table = args.table.load()?;
    println!("{}: {} IPv4 prefixes, {} next hops", table.name, table.v4.len(), table.next_hops.len());
    let mut all_passed = true;
    for name in select_engines(&args.engine)? {
        let (fib, _) = build_timed(name, &table)?;
        let start = Instant::now();
        let report = verify::boundaries(fib.as_ref(), &table.v4);
        all_passed &= show(name, "boundaries", &report, start.elapsed().as_secs_f64());
        let start = Instant::now();
        let report = verify::random(fib.as_ref(), &table.v4, args.random, args.seed);
        all_passed &= show(name, "random", &report, start.elapsed().as_secs_f64());
        if args.exhaustive {
            let start = Instant::now();
            let report = verify::exhaustive(fib.as_ref(), &table.v4);
            all_passed &= show(name, "exhaustive", &report, start.elapsed().as_secs_f64());
        }
    }
    Ok(if all_passed { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
