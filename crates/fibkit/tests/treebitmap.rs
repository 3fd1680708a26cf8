//! Tree BitMap (treebitmap16, treebitmap64) against the RIB: property tests
//! on random IPv6 and IPv4 tables (every range boundary), the LINX IPv6
//! table, and the 2^32 sweep of the 2014 table (ignored: `make
//! test-exhaustive`).

mod common;

use fibkit::addr::{Address, Prefix, Prefix4, Prefix6};
use fibkit::fib::{BuildOptions, Figure, Stats};
use fibkit::measure::verify;
use fibkit::nexthop::Mapping;
use fibkit::registry;
use fibkit::rib::Rib;
use fibkit::NextHop;
use proptest::prelude::*;

const NAMES: [&str; 2] = ["treebitmap16", "treebitmap64"];

fn count(stats: &Stats, key: &str) -> u64 {
    match stats.get(key) {
        Some(Figure::Count(value)) => *value,
        other => panic!("figure {key}: {other:?}"),
    }
}

fn rib_of<A: Address>(routes: &[(Prefix<A>, NextHop)]) -> Rib<A> {
    let mut rib = Rib::new();
    for &(prefix, next_hop) in routes {
        rib.insert(prefix, next_hop);
    }
    rib
}

/// Both strides built from `rib` through the registry, checked at every
/// probe; the first wrong answer.
fn mismatch<A: Address>(rib: &Rib<A>) -> Result<(), TestCaseError> {
    let addrs = common::probes(rib, []);
    for name in NAMES {
        let fib = registry::build(name, rib, &BuildOptions::default()).unwrap();
        prop_assert_eq!(fib.name(), name);
        let wrong = addrs.iter().find(|&&addr| fib.lookup(addr) != rib.lookup(addr));
        prop_assert!(wrong.is_none(), "{} at {}", name, wrong.map(|addr| addr.display()).unwrap_or_default());
        let stats = fib.stats();
        prop_assert_eq!(count(&stats, "prefixes"), rib.len() as u64);
        prop_assert_eq!(count(&stats, "results"), rib.len() as u64 + 1);
        prop_assert_eq!(count(&stats, "bytes_total"), fib.footprint() as u64);
    }
    Ok(())
}

fn next_hop() -> impl Strategy<Value = NextHop> {
    prop_oneof![8 => 1u32..=4, 2 => 1u32..=100_000, 1 => Just(u32::MAX)]
}

/// IPv6 prefixes that often nest, /0 to /128, weighted towards the lengths
/// around each stride's last, partial level (/124../128).
fn prefix6() -> impl Strategy<Value = Prefix6> {
    let len = prop_oneof![
        1 => Just(0u8),
        2 => 1u8..=32,
        6 => 33u8..=64,
        3 => 65u8..=123,
        3 => 124u8..=127,
        2 => Just(128u8),
    ];
    let addr = prop_oneof![
        1 => any::<u128>(),
        4 => (prop::sample::select(vec![0u128, 0x2001, 0x2a00, 0xfe80, 0xffff]), any::<u128>(), 0u32..=112)
            .prop_map(|(top, low, zeros)| (top << 112) | ((low & (u128::MAX >> 16)) >> zeros)),
        2 => (prop::sample::select(vec![0x2001_0db8u128 << 96, u128::MAX - 0xff]), 0u128..=0xff)
            .prop_map(|(base, low)| base | low),
    ];
    (addr, len).prop_map(|(addr, len)| Prefix::truncating(addr, len))
}

/// IPv4 prefixes that often nest, weighted towards /24../32.
fn prefix4() -> impl Strategy<Value = Prefix4> {
    let len = prop_oneof![1 => Just(0u8), 2 => 1u8..=23, 4 => 24u8..=31, 2 => Just(32u8)];
    let addr = prop_oneof![
        1 => any::<u32>(),
        4 => (prop::sample::select(vec![0u32, 10, 192, 255]), any::<u32>(), 0u32..=24)
            .prop_map(|(top, low, zeros)| (top << 24) | ((low & 0x00ff_ffff) >> zeros)),
    ];
    (addr, len).prop_map(|(addr, len)| Prefix::truncating(addr, len))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn ipv6_tables_match_the_rib_at_every_boundary(routes in prop::collection::vec((prefix6(), next_hop()), 0..200)) {
        mismatch(&rib_of(&routes))?;
    }

    #[test]
    fn ipv4_tables_match_the_rib_at_every_boundary(routes in prop::collection::vec((prefix4(), next_hop()), 0..200)) {
        mismatch(&rib_of(&routes))?;
    }
}

#[test]
fn linx_ipv6_table() {
    let Some(table) = common::linx_ipv6() else { return };
    let options = BuildOptions::new(table.next_hops.max_index());
    for name in NAMES {
        let fib = registry::build(name, &table.v6, &options).unwrap();
        let checked = common::check_ipv6(name, &*fib, &table.v6, 300_000);
        assert_eq!(count(&fib.stats(), "prefixes"), 20_440);
        eprintln!("{name}: {checked} boundaries checked\n{}\n", fib.stats().report);
    }
}

/// Every one of the 2^32 addresses, for each stride (`make
/// test-exhaustive`).
#[test]
#[ignore = "2^32 lookups per stride: run with `make test-exhaustive`"]
fn routeviews_2014_exhaustive() {
    let Some(table) = common::routeviews_2014(Mapping::Modulo(239)) else { return };
    let options = BuildOptions::new(table.next_hops.max_index());
    for name in NAMES {
        let fib = registry::build(name, &table.v4, &options).unwrap();
        let start = std::time::Instant::now();
        let report = verify::exhaustive(&*fib, &table.v4);
        assert_eq!(report.checked, 1 << 32);
        assert!(report.passed(), "{name}: {} wrong, first {:?}", report.mismatches, report.first);
        eprintln!("{name}: 2^32 addresses in {:.1} s\n{}\n", start.elapsed().as_secs_f64(), fib.stats().report);
    }
}
