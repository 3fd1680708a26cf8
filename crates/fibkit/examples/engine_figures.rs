//! Footprint, build time and single-thread lookup rates of some engines on
//! one table, until `fibkit bench` covers them:
//!
//! ```text
//! cargo run --release -p fibkit --example engine_figures -- \
//!     ../shared/data/routeviews-2014-05-13.ipasn.gz 239 lulea,dir24-8,lctrie,radix,d18r
//! ```
//!
//! Arguments: table file, number of next hops (`value % N + 1`; 0 keeps
//! distinct values), comma-separated engines.
//!
//! Rates are lookups per second of wall time and, where Linux tells the
//! thread's time on the CPU (`/proc/thread-self/schedstat`), per second of
//! CPU time in brackets: on a shared machine the second is the fairer one.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use fibkit::fib::BuildOptions;
use fibkit::load::{self, LoadOptions};
use fibkit::measure::workload::{self, Test, Workload};
use fibkit::nexthop::Mapping;
use fibkit::registry;

const LOOKUPS: u64 = 50_000_000;

/// Nanoseconds this thread has spent on a CPU, if the kernel says.
fn cpu_nanos() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, nexthops, engines] = args.as_slice() else {
        eprintln!("usage: engine_figures TABLE NEXTHOPS ENGINE[,ENGINE...]");
        return ExitCode::from(2);
    };
    let mapping = match nexthops.parse::<u32>() {
        Ok(0) => Mapping::Distinct,
        Ok(n) => Mapping::Modulo(n),
        Err(error) => {
            eprintln!("engine_figures: next hops {nexthops:?}: {error}");
            return ExitCode::from(2);
        }
    };
    let table = match load::load_path(&PathBuf::from(path), &LoadOptions { mapping, ..Default::default() }) {
        Ok(table) => table,
        Err(error) => {
            eprintln!("engine_figures: {error}");
            return ExitCode::from(2);
        }
    };
    let prefixes = table.v4.len();
    println!("{}: {prefixes} prefixes, next hops: {}", table.name, table.next_hops.mapping());
    println!(
        "{:<8} {:>12} {:>9} {:>10} {:>16} {:>16} {:>16}",
        "engine", "bytes", "B/prefix", "build ms", "RND Mlps [cpu]", "SEQ Mlps [cpu]", "REP Mlps [cpu]"
    );
    let options = BuildOptions::new(table.next_hops.max_index());
    for name in engines.split(',') {
        let start = Instant::now();
        let fib = match registry::build(name, &table.v4, &options) {
            Ok(fib) => fib,
            Err(error) => {
                eprintln!("engine_figures: {error}");
                return ExitCode::from(1);
            }
        };
        let build_ms = start.elapsed().as_secs_f64() * 1e3;
        let mut rates = Vec::new();
        for test in [Test::Rnd, Test::Seq, Test::Rep] {
            let workload = Workload::new(test, 0, 1);
            // Warm the caches (and fault in lazily zeroed pages) first.
            let mut checksum = workload::run(fib.as_ref(), &workload, LOOKUPS / 10);
            let cpu_start = cpu_nanos();
            let start = Instant::now();
            checksum = checksum.wrapping_add(fib.run_workload(&workload, LOOKUPS));
            let seconds = start.elapsed().as_secs_f64();
            let cpu_seconds = cpu_start.zip(cpu_nanos()).map(|(from, to)| (to - from) as f64 / 1e9);
            std::hint::black_box(checksum);
            let wall = LOOKUPS as f64 / seconds / 1e6;
            rates.push(match cpu_seconds {
                Some(cpu) => format!("{wall:.1} [{:.1}]", LOOKUPS as f64 / cpu / 1e6),
                None => format!("{wall:.1}"),
            });
        }
        let bytes = fib.footprint();
        println!(
            "{name:<8} {bytes:>12} {:>9.2} {build_ms:>10.1} {:>16} {:>16} {:>16}",
            bytes as f64 / prefixes as f64,
            rates[0],
            rates[1],
            rates[2]
        );
    }
    ExitCode::SUCCESS
}
