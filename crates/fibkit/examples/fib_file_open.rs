//! Compile time, file size and open time of compiled FIB files, measured
//! in one run: `cargo run --release -p fibkit --example fib_file_open --
//! [--nexthops N] TABLE [ENGINE...]` (default: every engine with an IPv4
//! file format; the table's values kept distinct, or mapped onto N next
//! hops, as `fibkit --nexthops` does).
//!
//! For each engine: the build from the loaded RIB (median of 5), the file
//! written, then opened 31 times from the page cache (median, with the
//! spread from the fastest to the slowest), and the opened FIB checked
//! against the built one at every range boundary. Open time is compared
//! with the build alone and with what a run without the file does: load
//! the table and build.

use std::time::{Duration, Instant};

use fibkit::compiled::{CompileOptions, CompiledTable};
use fibkit::load::{self, LoadOptions};
use fibkit::measure::verify;
use fibkit::nexthop::Mapping;
use fibkit::{registry, Family};

fn median(mut times: Vec<Duration>) -> (f64, f64, f64) {
    times.sort();
    let ms = |time: Duration| time.as_secs_f64() * 1e3;
    (ms(times[times.len() / 2]), ms(times[0]), ms(times[times.len() - 1]))
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut mapping = Mapping::Distinct;
    if args.first().is_some_and(|arg| arg == "--nexthops") {
        let count = args.get(1).and_then(|count| count.parse().ok()).expect("--nexthops N");
        mapping = Mapping::Modulo(count);
        args.drain(..2);
    }
    let Some((table_path, engines)) = args.split_first() else {
        panic!("usage: fib_file_open [--nexthops N] TABLE [ENGINE...]");
    };
    let engines: Vec<&str> = if engines.is_empty() {
        registry::engines_of(Family::Ipv4)
            .into_iter()
            .filter(|engine| engine.savable::<u32>())
            .map(|engine| engine.name)
            .collect()
    } else {
        engines.iter().map(String::as_str).collect()
    };
    let started = Instant::now();
    let routes =
        load::load_path(table_path.as_ref(), &LoadOptions { mapping, ..LoadOptions::default() }).expect("table loads");
    let load_ms = started.elapsed().as_secs_f64() * 1e3;
    println!("{}: {} IPv4 + {} IPv6 routes, loaded in {load_ms:.1} ms", routes.name, routes.v4.len(), routes.v6.len());
    println!(
        "{:<10} {:>10} {:>12} {:>24} {:>12} {:>16}",
        "engine", "build ms", "file bytes", "open ms (min-max)", "open/build", "open/load+build"
    );
    let directory = tempfile::tempdir().expect("temporary directory");
    'engines: for engine in engines {
        let options = CompileOptions { engines: vec![engine.to_string()], prefixes: false, ..Default::default() };
        if let Some(engine) = registry::find(engine).filter(|engine| !engine.savable::<u32>()) {
            println!("{:<10} skipped: no IPv4 file format", engine.name);
            continue;
        }
        let mut builds = Vec::new();
        let mut built = None;
        for _ in 0..5 {
            let mut copy = load::RouteTable::new(&routes.name, routes.next_hops.mapping());
            copy.v4 = routes.v4.clone();
            copy.v6 = routes.v6.clone();
            copy.next_hops = routes.next_hops.clone();
            let start = Instant::now();
            match CompiledTable::build(copy, &options) {
                Ok(table) => built = Some(table),
                Err(error) => {
                    println!("{engine:<10} skipped: {error}");
                    continue 'engines;
                }
            }
            builds.push(start.elapsed());
        }
        let built = built.expect("five builds");
        let path = directory.path().join(format!("{engine}.fib"));
        built.to_file().expect("savable").write(&path).expect("written");
        let size = std::fs::metadata(&path).expect("written").len();
        let mut opens = Vec::new();
        for _ in 0..31 {
            let start = Instant::now();
            let opened = CompiledTable::open(&path).expect("opens");
            opens.push(start.elapsed());
            drop(opened);
        }
        let opened = CompiledTable::open(&path).expect("opens");
        if let (Some(before), Some(after)) = (&built.v4, &opened.v4) {
            let answers = routes.v4.ranges(0, u32::MAX);
            assert!(answers.iter().all(|range| after.lookup(range.first) == before.lookup(range.first)));
            assert!(verify::boundaries(after.fib(), &routes.v4).passed());
        }
        let (build_ms, _, _) = median(builds);
        let (open_ms, fastest, slowest) = median(opens);
        println!(
            "{engine:<10} {build_ms:>10.2} {size:>12} {:>24} {:>12} {:>16}",
            format!("{open_ms:.3} ({fastest:.3}-{slowest:.3})"),
            format!("1/{:.0}", build_ms / open_ms),
            format!("1/{:.0}", (load_ms + build_ms) / open_ms),
        );
    }
}
