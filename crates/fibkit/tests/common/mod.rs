//! Shared helpers of the integration tests: real tables from `../shared/data`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use fibkit::addr::{Address, Prefix6};
use fibkit::fib::Fib;
use fibkit::load::{self, LoadOptions, RouteTable};
use fibkit::measure::verify::{self, Space};
use fibkit::nexthop::Mapping;
use fibkit::rib::{Rib, Rib6};

/// Addresses to check in a table: both ends of every range and the
/// addresses just outside them, plus `extra` ones.
pub fn probes<A: Address>(rib: &Rib<A>, extra: impl IntoIterator<Item = A>) -> Vec<A> {
    let mut addrs = Vec::new();
    rib.for_each_range(A::ZERO, A::MAX, |range| {
        addrs.extend([range.first, range.last]);
        addrs.extend(range.first.checked_prev());
        addrs.extend(range.last.checked_next());
    });
    addrs.extend(extra);
    addrs
}

/// `../shared/data/NAME` beside the repository, if present; otherwise says
/// so on stderr, so a skipped test is visible.
pub fn shared_data(name: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data").join(name);
    if path.exists() {
        Some(path)
    } else {
        eprintln!("skipped: ../shared/data/{name} not found");
        None
    }
}

/// The 2014 RouteViews table (512,621 prefixes), values mapped as given.
pub fn routeviews_2014(mapping: Mapping) -> Option<RouteTable> {
    let path = shared_data("routeviews-2014-05-13.ipasn.gz")?;
    Some(load::load_path(&path, &LoadOptions { mapping, ..Default::default() }).expect("2014 table loads"))
}

/// The LINX IPv6 table (20,440 prefixes), distinct values.
pub fn linx_ipv6() -> Option<RouteTable> {
    let path = shared_data("linx-p69-2014-12-25.rib6.gz")?;
    let table = load::load_path(&path, &LoadOptions::default()).expect("LINX IPv6 table loads");
    assert_eq!(table.v6.len(), 20_440);
    Some(table)
}

/// The 2026 IPv6 table of origin ASNs (167,903 prefixes), values mapped as
/// given.
pub fn ipdb_2026_ipv6(mapping: Mapping) -> Option<RouteTable> {
    let path = shared_data("ipdb-asn-2026-06/asn-ipv6.csv.gz")?;
    let table = load::load_path(&path, &LoadOptions { mapping, ..Default::default() }).expect("2026 IPv6 table loads");
    assert_eq!(table.v6.len(), 167_903);
    Some(table)
}

/// The LINX update trace (23,446 IPv4 updates) as router updates, values
/// mapped as given.
pub fn linx_trace(mapping: Mapping) -> Option<Vec<fibkit::router::Update<fibkit::Prefix4>>> {
    use fibkit::addr::Prefix4;
    use fibkit::router::Update;
    let path = shared_data("linx-p52-2014-12-17.updates.gz")?;
    let stream = load::load_updates(&path, &LoadOptions { mapping, ..Default::default() }).expect("trace loads");
    let updates: Vec<Update<Prefix4>> = stream
        .updates
        .iter()
        .map(|timed| {
            timed.update.of().unwrap_or_else(|| panic!("an IPv6 update in the IPv4 trace: {:?}", timed.update))
        })
        .collect();
    assert_eq!(updates.len(), 23_446);
    Some(updates)
}

/// Checks IPv6 engine `name` against `rib`: every range boundary, then
/// `count` random keys over the whole space, inside 2000::/3, and inside
/// announced prefixes (a uniform 128-bit key almost never hits; every
/// announced one does). Returns the boundaries checked.
pub fn check_ipv6(name: &str, fib: &dyn Fib<u128>, rib: &Rib6, count: u64) -> u64 {
    let global: Prefix6 = "2000::/3".parse().unwrap();
    let boundaries = verify::boundaries(fib, rib);
    assert!(boundaries.passed(), "{name}: {boundaries:?}");
    assert!(boundaries.checked > 2 * rib.len() as u64);
    for (space, seed) in [(Space::Anywhere, 1), (Space::Inside(global), 2), (Space::Announced, 3)] {
        let report = verify::random(fib, rib, space, count, seed);
        assert!(report.passed(), "{name} {space:?}: {report:?}");
        if space == Space::Announced {
            assert_eq!(report.routed, report.checked);
        }
    }
    boundaries.checked
}
