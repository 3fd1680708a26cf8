//! Criterion micro-benchmarks: every engine (fibkit's and the peers'),
//! scalar lookups (SEQ: dependent, RND: independent) and batch lookups
//! (RND through `lookup_batch`, 64 keys a batch), on the 2014 RouteViews
//! table with `--nexthops 239` when the data folder (`FIBKIT_DATA`, else
//! `../shared/data`) has it, else on the
//! embedded synthetic default table with the same mapping.
//!
//! `cargo bench -p fibkit-peers --bench lookup [FILTER]`. When the binary
//! runs as a test (`cargo test --all-targets`, no `--bench` flag), each
//! benchmark runs once on a small synthetic table to keep the suite quick.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use fibkit::fib::BuildOptions;
use fibkit::load::{self, synthetic, LoadOptions, RouteTable};
use fibkit::measure::workload::{Test, Workload};
use fibkit::nexthop::Mapping;

#[path = "../tests/common/mod.rs"]
mod common;

/// Lookups per benchmark iteration.
const LOOKUPS: u64 = 4096;

/// Batch length of the batch benchmark.
const BATCH: usize = 64;

const MAPPING: Mapping = Mapping::Modulo(239);

fn table() -> RouteTable {
    if !std::env::args().any(|arg| arg == "--bench") {
        let params = synthetic::SynthParams { prefixes: 20_000, next_hops: 2_000, ..Default::default() };
        return synthetic::generate_with_mapping(&params, MAPPING);
    }
    match common::shared_data("routeviews-2014-05-13.ipasn.gz") {
        Some(path) => match load::load_path(&path, &LoadOptions { mapping: MAPPING, ..Default::default() }) {
            Ok(table) => return table,
            Err(error) => eprintln!("{error}; using the synthetic default table"),
        },
        None => eprintln!("using the synthetic default table"),
    }
    synthetic::default_table(MAPPING)
}

fn lookups(c: &mut Criterion) {
    let table = table();
    eprintln!("table: {} ({} prefixes, next hops {})", table.name, table.v4.len(), table.next_hops.mapping());
    let options = BuildOptions::new(table.next_hops.max_index());
    fibkit_peers::register().expect("the peers' names are free");
    for spec in fibkit::registry::engines_of(fibkit::Family::Ipv4) {
        let fib = match spec.build(&table.v4, &options) {
            Ok(fib) => fib,
            Err(error) => {
                eprintln!("{}: not benchmarked: {error}", spec.name);
                continue;
            }
        };
        let mut group = c.benchmark_group(format!("lookup/{}", spec.name));
        group.throughput(Throughput::Elements(LOOKUPS));
        for (id, test, batch) in [("seq", Test::Seq, 0), ("rnd", Test::Rnd, 0), ("rnd_batch64", Test::Rnd, BATCH)] {
            let mut seed = 1u64;
            group.bench_function(id, |bencher| {
                bencher.iter_custom(|iterations| {
                    // A fresh seed each sample: keys never repeat between
                    // samples, so no sample runs on a warmed-up key set.
                    seed += 1;
                    let workload = Workload::new(test.clone(), batch, seed);
                    let start = Instant::now();
                    black_box(fib.run_workload(&workload, iterations * LOOKUPS));
                    start.elapsed()
                })
            });
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    targets = lookups
}
criterion_main!(benches);
