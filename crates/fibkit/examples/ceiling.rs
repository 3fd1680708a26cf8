//! The ceiling every engine's RND figure is measured against: one random
//! load from a 1 MiB table per lookup, keys from the benchmarks' xorshift,
//! through the same workload loop as `fibkit bench` (scalar, and batched
//! with the 16-lane generator).
//!
//! ```sh
//! cargo run --release -p fibkit --example ceiling
//! ```
//!
//! Quote it beside `fibkit bench` figures measured in the same minute: on a
//! shared machine the ratio to the ceiling is steadier than either figure.

use std::time::Instant;

use fibkit::fib::{Fib, Stats};
use fibkit::mem::LookupArray;
use fibkit::measure::workload::{Test, Workload};
use fibkit::NextHop;

/// 2^18 words: 1 MiB, indexed by a key's top 18 bits.
struct OneLoad(LookupArray<u32>);

impl Fib<u32> for OneLoad {
    fn name(&self) -> &str {
        "ceiling"
    }

    #[inline]
    fn lookup(&self, addr: u32) -> NextHop {
        self.0[(addr >> 14) as usize]
    }

    fn lookup_batch(&self, keys: &[u32], out: &mut [NextHop]) {
        for (slot, &key) in out.iter_mut().zip(keys) {
            *slot = self.lookup(key);
        }
    }

    fn footprint(&self) -> usize {
        self.0.len() * 4
    }

    fn stats(&self) -> Stats {
        Stats::default()
    }
}

fn main() {
    let table = OneLoad(LookupArray::from_fn(1 << 18, |index| (index as u32).wrapping_mul(0x9e37_79b9) >> 24));
    let lookups = 50_000_000;
    for (test, batch) in [(Test::Rnd, 0), (Test::Rnd, 64), (Test::Seq, 0)] {
        let workload = Workload::new(test.clone(), batch, 1);
        let mut rates: Vec<f64> = (0..5)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(table.run_workload(&workload, lookups));
                lookups as f64 / start.elapsed().as_secs_f64() / 1e6
            })
            .collect();
        rates.sort_by(f64::total_cmp);
        println!("{:>3} batch {batch:>2}: {:7.1} Mlps (median of 5)", test.name(), rates[2]);
    }
}
