//! `fibkit verify`: compare engines with the RIB.
//!
//! IPv4: every range boundary, `--random` uniformly random addresses, and
//! with `--exhaustive` all 2^32 addresses. IPv6: every range boundary, then
//! `--random` random addresses from each of three places: the whole 128-bit
//! space (almost all miss every route, which checks the misses), the global
//! unicast space 2000::/3, and inside announced prefixes (a random route,
//! then random host bits, which checks the hits).

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Result};
use clap::Args;
use fibkit::addr::Address;
use fibkit::verify::{self, Keys6, Report};
use fibkit::workload::{key_space, GLOBAL_UNICAST};

use crate::family::{build_timed_in, select_engines_in, AnyFib, Family, FamilyArgs};
use crate::TableArgs;

/// Arguments of `fibkit verify`.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// Engine to check, a comma-separated list, or `all`.
    #[arg(long, default_value = "all")]
    engine: String,
    /// Also check all 2^32 addresses (both cores; about a minute per
    /// engine). IPv4 only.
    #[arg(long)]
    exhaustive: bool,
    /// How many random addresses to check (IPv6: this many from each of
    /// the whole space, 2000::/3 and the announced prefixes).
    #[arg(long, default_value_t = 10_000_000)]
    random: u64,
    /// Seed of the random addresses.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    table: TableArgs,
    #[command(flatten)]
    family: FamilyArgs,
}

fn show<A: Address>(engine: &str, sweep: &str, report: &Report<A>, seconds: f64) -> bool {
    let verdict = if report.passed() { "ok" } else { "MISMATCH" };
    // IPv6 sweeps also say how many answers were routes: a sweep whose
    // keys all miss checks only the misses.
    let routed = if A::BITS == 128 { format!("  {:>9} routed", report.routed) } else { String::new() };
    println!(
        "{engine:>8} {sweep:<11} {:>13} addresses {:>9} wrong{routed}  {seconds:>7.2} s  {verdict}",
        report.checked, report.mismatches
    );
    let width = if A::BITS == 128 { 39 } else { 15 };
    for mismatch in &report.first {
        println!(
            "         {:<width$} expected {:>6} got {:>6}",
            mismatch.addr.display(),
            mismatch.expected,
            mismatch.got
        );
    }
    report.passed()
}

/// Runs `fibkit verify`.
pub fn run(args: &VerifyArgs) -> Result<ExitCode> {
    if args.exhaustive && args.family.explicit() == Some(Family::Ipv6) {
        bail!("--exhaustive walks the 2^32 IPv4 addresses; IPv6 has the boundary and random sweeps");
    }
    let table = args.table.load()?;
    let family = args.family.resolve(&table)?;
    if args.exhaustive && family == Family::Ipv6 {
        bail!("--exhaustive walks the 2^32 IPv4 addresses, and {} has IPv6 routes only", table.name);
    }
    println!(
        "{}: {} {family} prefixes, {} next hops",
        table.name,
        family.prefixes(&table),
        table.next_hops.len()
    );
    let mut all_passed = true;
    for name in select_engines_in(family, &args.engine)? {
        let (fib, _) = build_timed_in(family, name, &table)?;
        match &fib {
            AnyFib::V4(fib) => {
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
            AnyFib::V6(fib) => {
                let start = Instant::now();
                let report = verify::boundaries6(fib.as_ref(), &table.v6);
                all_passed &= show(name, "boundaries", &report, start.elapsed().as_secs_f64());
                let sweeps = [
                    ("anywhere", Keys6::Anywhere),
                    ("2000::/3", Keys6::Inside(key_space(GLOBAL_UNICAST))),
                    ("announced", Keys6::Announced),
                ];
                for (sweep, keys) in sweeps {
                    let start = Instant::now();
                    let report = verify::random6(fib.as_ref(), &table.v6, keys, args.random, args.seed);
                    all_passed &= show(name, sweep, &report, start.elapsed().as_secs_f64());
                }
            }
        }
    }
    Ok(if all_passed { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
