//! Integration tests of the table and key loaders: real tables from
//! `../shared/data/` (skipped visibly when absent), compressed files,
//! bad input, and the synthetic default table.

use std::path::{Path, PathBuf};
use std::time::Instant;

use fibkit::load::{self, synthetic, LoadOptions};

/// `../shared/data/NAME` relative to the repository root, if present.
fn shared_data(name: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data").join(name);
    if path.exists() {
        Some(path)
    } else {
        eprintln!("skipped: ../shared/data/{name} not found");
        None
    }
}

#[test]
fn routeviews_2014_table_loads_512621_prefixes() {
    let Some(path) = shared_data("routeviews-2014-05-13.ipasn.gz") else { return };
    let start = Instant::now();
    let table = load::load_path(&path, &LoadOptions::default()).unwrap();
    eprintln!("loaded {} prefixes in {:.1} ms", table.v4.len(), start.elapsed().as_secs_f64() * 1e3);
    assert_eq!(table.v4.len(), 512_621);
    assert!(table.v6.is_empty());
    assert!(table.warnings.is_empty(), "{:?}", &table.warnings[..3.min(table.warnings.len())]);
    assert_eq!(table.name, "routeviews-2014-05-13.ipasn.gz");
}

#[test]
fn synthetic_default_has_the_documented_shape() {
    let start = Instant::now();
    let table = synthetic::default_table(Default::default());
    eprintln!(
        "generated {} prefixes, {} next hops in {:.1} ms",
        table.v4.len(),
        table.next_hops.len(),
        start.elapsed().as_secs_f64() * 1e3
    );
    let mut histogram = [0usize; 33];
    for (prefix, _) in table.v4.iter() {
        histogram[usize::from(prefix.prefix_len())] += 1;
    }
    assert_eq!(histogram, synthetic::target_counts(1_000_000));
    assert_eq!(table.next_hops.len(), 75_000);
    let covered: u64 = table
        .v4
        .ranges(0, u32::MAX)
        .iter()
        .filter(|range| range.next_hop != fibkit::NO_ROUTE)
        .map(|range| u64::from(range.last - range.first) + 1)
        .sum();
    let share = covered as f64 / 2f64.powi(32);
    eprintln!("address space covered: {:.1}%", share * 100.0);
    assert!((0.65..0.80).contains(&share), "coverage {share}");
}
