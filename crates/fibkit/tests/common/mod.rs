//! Shared helpers of the integration tests: real tables from `../shared/data`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use fibkit::load::{self, LoadOptions, RouteTable};
use fibkit::nexthop::Mapping;

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

/// The LINX update trace (23,446 IPv4 updates) as router updates, values
/// mapped as given.
pub fn linx_trace(mapping: Mapping) -> Option<Vec<fibkit::router::Update>> {
    use fibkit::load::{IpPrefix, Update as Traced};
    use fibkit::router::Update;
    let path = shared_data("linx-p52-2014-12-17.updates.gz")?;
    let stream = load::load_updates(&path, &LoadOptions { mapping, ..Default::default() }).expect("trace loads");
    let updates: Vec<Update> = stream
        .updates
        .iter()
        .map(|timed| match timed.update {
            Traced::Announce { prefix: IpPrefix::V4(prefix), value } => Update::Announce(prefix, value),
            Traced::Withdraw { prefix: IpPrefix::V4(prefix) } => Update::Withdraw(prefix),
            ref other => panic!("an IPv6 update in the IPv4 trace: {other:?}"),
        })
        .collect();
    assert_eq!(updates.len(), 23_446);
    Some(updates)
}
