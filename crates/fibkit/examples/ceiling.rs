//! The ceiling every engine's RND figure is measured against
//! ([`fibkit::measure::ceiling`]: one random load from a 1 MiB table per
//! lookup), keys from the benchmarks' xorshift, through the same workload
//! loop as `fibkit bench` (scalar, and batched with the 16-lane generator);
//! `fibkit bench` also measures it beside the engines, as its `ceiling` row.
//!
//! ```sh
//! cargo run --release -p fibkit --example ceiling
//! cargo run --release -p fibkit --example ceiling -- --bits 18,19,20,21
//! ```
//!
//! Quote it beside `fibkit bench` figures measured in the same minute: on a
//! shared machine the ratio to the ceiling is steadier than either figure.
//! `--bits` measures the same load from tables of 2^bits words (18: 1 MiB,
//! the ceiling; 19 to 21: 2 to 8 MiB, the sizes of full and grown tables'
//! structures), in turn, each a round at a time, so that a machine's
//! swings fall on every size alike.

use std::time::Instant;

use fibkit::fib::Fib;
use fibkit::measure::ceiling::Ceiling;
use fibkit::measure::workload::{Test, Workload};

const RUNS: usize = 5;

fn main() {
    let bits = match parse_bits(std::env::args().skip(1)) {
        Ok(bits) => bits,
        Err(message) => {
            eprintln!("ceiling: {message}\nusage: ceiling [--bits B,B,...]  (B in 16..=24; default 18, 1 MiB)");
            std::process::exit(2);
        }
    };
    let tables: Vec<(u8, Box<dyn Fib<u32>>)> = bits.iter().map(|&b| (b, table(b))).collect();
    let lookups = 50_000_000;
    for (test, batch) in [(Test::Rnd, 0), (Test::Rnd, 64), (Test::Seq, 0)] {
        let workload = Workload::new(test.clone(), batch, 1);
        let mut rates = vec![Vec::with_capacity(RUNS); tables.len()];
        for _ in 0..RUNS {
            for ((_, table), rates) in tables.iter().zip(&mut rates) {
                let start = Instant::now();
                std::hint::black_box(table.run_workload(&workload, lookups));
                rates.push(lookups as f64 / start.elapsed().as_secs_f64() / 1e6);
            }
        }
        for ((bits, table), rates) in tables.iter().zip(&mut rates) {
            rates.sort_by(f64::total_cmp);
            let mib = table.footprint() as f64 / f64::from(1 << 20);
            println!(
                "{:>3} batch {batch:>2}, {mib:>4} MiB ({bits} bits): {:7.1} Mlps (median of {RUNS}, {:.1}-{:.1})",
                test.name(),
                rates[RUNS / 2],
                rates[0],
                rates[RUNS - 1]
            );
        }
    }
}

/// The `--bits` list, 18 alone without it.
fn parse_bits(mut args: impl Iterator<Item = String>) -> Result<Vec<u8>, String> {
    let Some(flag) = args.next() else { return Ok(vec![18]) };
    let (Some(list), None) = (args.next().filter(|_| flag == "--bits"), args.next()) else {
        return Err(format!("unexpected arguments after {flag:?}"));
    };
    list.split(',')
        .map(|b| match b.parse::<u8>() {
            Ok(b @ 16..=24) => Ok(b),
            _ => Err(format!("--bits: {b:?} is not a number of bits from 16 to 24")),
        })
        .collect()
}

/// A ceiling of 2^`bits` words.
fn table(bits: u8) -> Box<dyn Fib<u32>> {
    macro_rules! of {
        ($($b:literal)*) => {
            match bits {
                $($b => Box::new(Ceiling::<$b>::sized()),)*
                _ => unreachable!("parse_bits keeps 16..=24"),
            }
        };
    }
    of!(16 17 18 19 20 21 22 23 24)
}
