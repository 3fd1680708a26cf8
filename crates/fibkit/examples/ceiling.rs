//! The ceiling every engine's RND figure is measured against
//! ([`fibkit::measure::ceiling`]: one random load from a 1 MiB table per
//! lookup), keys from the benchmarks' xorshift, through the same workload
//! loop as `fibkit bench` (scalar, and batched with the 16-lane generator);
//! `fibkit bench` also measures it beside the engines, as its `ceiling` row.
//!
//! ```sh
//! cargo run --release -p fibkit --example ceiling
//! ```
//!
//! Quote it beside `fibkit bench` figures measured in the same minute: on a
//! shared machine the ratio to the ceiling is steadier than either figure.

use std::time::Instant;

use fibkit::fib::Fib;
use fibkit::measure::ceiling::Ceiling;
use fibkit::measure::workload::{Test, Workload};

fn main() {
    let table = Ceiling::new();
    let lookups = 50_000_000;
    for (test, batch) in [(Test::Rnd, 0), (Test::Rnd, 64), (Test::Seq, 0)] {
        let workload = Workload::new(test.clone(), batch, 1);
        let mut rates: Vec<f64> = (0..5)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(Fib::<u32>::run_workload(&table, &workload, lookups));
                lookups as f64 / start.elapsed().as_secs_f64() / 1e6
            })
            .collect();
        rates.sort_by(f64::total_cmp);
        println!("{:>3} batch {batch:>2}: {:7.1} Mlps (median of 5)", test.name(), rates[2]);
    }
}
