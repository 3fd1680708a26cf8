//! Shared helpers of the integration tests: real tables from the data
//! folder (`data::data_dir`: `FIBKIT_DATA`, else `../shared/data`).
#![allow(dead_code)]

mod data;
pub mod model;
pub mod racing;

pub use data::shared_data;

use fibkit::addr::{Address, Prefix6};
use fibkit::error::BuildError;
use fibkit::fib::Fib;
use fibkit::load::{self, synthetic, LoadOptions, RouteTable};
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

/// The 2014 RouteViews table (512,621 prefixes), values mapped as given.
pub fn routeviews_2014(mapping: Mapping) -> Option<RouteTable> {
    let path = shared_data("routeviews-2014-05-13.ipasn.gz")?;
    Some(load::load_path(&path, &LoadOptions { mapping, ..Default::default() }).expect("2014 table loads"))
}

/// The 2014 RouteViews table, values mapped as given; without the data,
/// the embedded synthetic default table stands in for it (then `stand_in`
/// is true: see [`unless_limit`]).
pub fn routeviews_2014_or_default(mapping: Mapping) -> (RouteTable, bool) {
    match routeviews_2014(mapping) {
        Some(table) => (table, false),
        None => {
            eprintln!("the embedded synthetic default table stands in for the 2014 table");
            (synthetic::default_table(mapping), true)
        }
    }
}

/// What an engine built from a table: on a table standing in for a real one
/// (the synthetic default table without the data), a typed limit of the
/// engine ([`BuildError::Limit`]) means the engine does not take that
/// table: said on stderr, and `None`. Any other error fails the test.
pub fn unless_limit<T>(engine: &str, built: Result<T, BuildError>, stand_in: bool) -> Option<T> {
    match built {
        Ok(built) => Some(built),
        Err(BuildError::Limit(refused)) if stand_in => {
            eprintln!("{engine}: does not take the stand-in table, not checked on it: {refused}");
            None
        }
        Err(error) => panic!("{engine}: {error}"),
    }
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
