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
