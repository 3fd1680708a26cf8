//! Scalar and batched RND lookup rates of D16R and D20R on a table, for
//! comparing storage layouts of the DXR arrays (`cargo run --release
//! --example dxr_lookup_rate -- TABLE [ROUNDS]`; values mapped onto 239
//! next hops, as the DXR paper's LINX table has).

use std::path::PathBuf;
use std::time::Instant;

use fibkit::engines::dxr::Dxr;
use fibkit::fib::Fib;
use fibkit::load::{self, LoadOptions};
use fibkit::measure::workload::{Test, Workload};
use fibkit::nexthop::Mapping;

fn rate<F: Fib<u32>>(fib: &F, batch: usize) -> (f64, u64) {
    const LOOKUPS: u64 = 50_000_000;
    let workload = Workload::new(Test::Rnd, batch, 1);
    let start = Instant::now();
    let checksum = fib.run_workload(&workload, LOOKUPS);
    (LOOKUPS as f64 / start.elapsed().as_secs_f64() / 1e6, checksum)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(args.next().expect("usage: dxr_lookup_rate TABLE [ROUNDS]"));
    let rounds: usize = args.next().map_or(5, |text| text.parse().expect("ROUNDS is a number"));
    let table =
        load::load_path(&path, &LoadOptions { mapping: Mapping::Modulo(239), strict: false, ..Default::default() })
            .unwrap_or_else(|error| panic!("{error}"));
    let d16 = Dxr::<16>::build(&table.v4).expect("d16r builds");
    let d20 = Dxr::<20>::build(&table.v4).expect("d20r builds");
    for round in 0..rounds {
        let (d16_scalar, sum16) = rate(&d16, 0);
        let (d20_scalar, sum20) = rate(&d20, 0);
        let (d16_batch, _) = rate(&d16, 256);
        let (d20_batch, _) = rate(&d20, 256);
        println!(
            "round {round}: RND scalar d16r {d16_scalar:.1} d20r {d20_scalar:.1}  batch256 d16r {d16_batch:.1} d20r {d20_batch:.1} Mlps (checksums {sum16} {sum20})"
        );
    }
}
