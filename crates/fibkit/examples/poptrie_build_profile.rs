//! Profiling helper: builds poptrie18 from the 2014 table many times.
use fibkit::engine::BuildOptions;
use fibkit::nexthop::Mapping;
#[path = "../tests/tables/mod.rs"]
mod tables;
fn main() {
    let path = tables::data_file("routeviews-2014-05-13.ipasn.gz").unwrap();
    let (rib, _) = tables::load_ipasn(&path, Mapping::Modulo(239));
    for _ in 0..40 {
        drop(fibkit::poptrie::build_boxed::<18>(&rib, &BuildOptions { max_next_hop: 239 }).unwrap());
    }
}
