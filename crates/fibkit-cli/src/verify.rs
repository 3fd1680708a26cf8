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

use anyhow::Result;
use clap::Args;
use fibkit::addr::Address;
use fibkit::fib::{Calibration, Fib};
use fibkit::load::RouteTable;
use fibkit::measure::verify::{self, Report, Space};
use fibkit::random::{key_space, GLOBAL_UNICAST};

use crate::family::{build_timed, check_names, load_table, select_engines, Family, FamilyArgs};
use crate::table::TableArgs;

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
    pub(crate) table: TableArgs,
    #[command(flatten)]
    family: FamilyArgs,
}

/// The width of the engine column: the registry's longest name, so that
/// every line of every run aligns.
fn name_width() -> usize {
    crate::registered::engines().iter().map(|engine| engine.name.len()).max().unwrap_or(8)
}

fn show<A: Address>(engine: &str, sweep: &str, report: &Report<A>, seconds: f64) -> Result<bool> {
    let verdict = if report.passed() { "ok" } else { "MISMATCH" };
    // IPv6 sweeps also say how many answers were routes: a sweep whose
    // keys all miss checks only the misses.
    let routed = if A::BITS == 128 { format!("  {:>9} routed", report.routed) } else { String::new() };
    let name = name_width();
    out!(
        "{engine:>name$} {sweep:<11} {:>13} addresses {:>9} wrong{routed}  {seconds:>7.2} s  {verdict}",
        report.checked,
        report.mismatches
    );
    let width = if A::BITS == 128 { 39 } else { 15 };
    for mismatch in &report.first {
        out!(
            "{:name$} {:<width$} expected {:>6} got {:>6}",
            "",
            mismatch.addr.display(),
            mismatch.expected,
            mismatch.got
        );
    }
    Ok(report.passed())
}

/// Runs `fibkit verify`.
pub fn run(args: &VerifyArgs) -> Result<ExitCode> {
    check_names(&args.engine)?;
    let ipv4_only = args.exhaustive.then_some("--exhaustive walks the 2^32 IPv4 addresses");
    let (table, family) = load_table(&args.table, &args.family, ipv4_only)?;
    out!("{}: {} {family} prefixes, {} next hops", table.name, table.prefixes(family), table.next_hops_of(family));
    let all_passed = match family {
        Family::Ipv4 => sweep_all::<u32>(args, &table, &[("random", Space::Anywhere)], |name, fib| {
            let start = Instant::now();
            let report = verify::exhaustive(fib, &table.v4);
            show(name, "exhaustive", &report, start.elapsed().as_secs_f64())
        })?,
        Family::Ipv6 => {
            let spaces = [
                ("anywhere", Space::Anywhere),
                ("2000::/3", Space::Inside(key_space(GLOBAL_UNICAST))),
                ("announced", Space::Announced),
            ];
            sweep_all::<u128>(args, &table, &spaces, |_, _| Ok(true))?
        }
    };
    Ok(if all_passed { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Checks every engine of family `A` that `--engine` names: the boundary
/// sweep, a random sweep in each of `spaces`, and with `--exhaustive`
/// `exhaustive(name, fib)`. Whether every answer was right.
fn sweep_all<A: Address>(
    args: &VerifyArgs,
    table: &RouteTable,
    spaces: &[(&str, Space<A>)],
    exhaustive: impl Fn(&str, &dyn Fib<A>) -> Result<bool>,
) -> Result<bool> {
    let rib = table.rib::<A>();
    let mut all_passed = true;
    for engine in select_engines::<A>(&args.engine)? {
        // An engine that cannot build the table is a failure of its own:
        // the engines after it are still checked.
        let fib = match build_timed::<A>(engine, table, &Calibration::Default) {
            Ok((fib, _)) => fib,
            Err(error) => {
                out!("{:>width$} cannot build the table: {error:#}  FAILED", engine.name, width = name_width());
                all_passed = false;
                continue;
            }
        };
        let start = Instant::now();
        let report = verify::boundaries(fib.as_ref(), rib);
        all_passed &= show(engine.name, "boundaries", &report, start.elapsed().as_secs_f64())?;
        for &(sweep, space) in spaces {
            let start = Instant::now();
            let report = verify::random(fib.as_ref(), rib, space, args.random, args.seed);
            all_passed &= show(engine.name, sweep, &report, start.elapsed().as_secs_f64())?;
        }
        if args.exhaustive {
            all_passed &= exhaustive(engine.name, fib.as_ref())?;
        }
    }
    Ok(all_passed)
}
