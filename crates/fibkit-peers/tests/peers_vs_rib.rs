//! Every peer against the RIB on the real 2014 RouteViews table: every
//! range boundary and a million random addresses. A peer that disagrees
//! fails the test unless `KNOWN_WRONG` lists it with the reason.

mod common;

use fibkit::fib::BuildOptions;
use fibkit::load::{self, LoadOptions};
use fibkit::measure::verify::{self, Space};
use fibkit::nexthop::Mapping;
use fibkit::rib::Rib4;
use fibkit_peers::{heap, KNOWN_WRONG, PEERS};

#[global_allocator]
static ALLOCATOR: heap::CountingAllocator = heap::CountingAllocator;

/// The 2014 table with each distinct origin ASN as its own next hop.
fn load_2014() -> Option<Rib4> {
    let path = common::shared_data("routeviews-2014-05-13.ipasn.gz")?;
    let table = load::load_path(&path, &LoadOptions { mapping: Mapping::Distinct, ..Default::default() })
        .expect("loading the 2014 table");
    Some(table.v4)
}

#[test]
fn peers_agree_with_the_rib_on_the_2014_table() {
    let Some(rib) = load_2014() else { return };
    assert!(rib.len() > 500_000, "only {} prefixes", rib.len());
    let options = BuildOptions::new(u32::MAX);
    let ranges = rib.ranges(0, u32::MAX).len() as u64;
    let mut unexpected = Vec::new();
    for spec in PEERS {
        let start = std::time::Instant::now();
        let fib = spec.build(&rib, &options).expect("peers accept any table");
        let build_seconds = start.elapsed().as_secs_f64();
        assert!(fib.footprint() > 0, "{}: no footprint with the counting allocator on", spec.name);
        let boundaries = verify::boundaries(fib.as_ref(), &rib);
        let random = verify::random(fib.as_ref(), &rib, Space::Anywhere, 1_000_000, 1);
        eprintln!(
            "{:>14}: built in {build_seconds:.2} s, {} bytes; boundaries {} checked, {} wrong; random {} checked, {} wrong",
            spec.name,
            fib.footprint(),
            boundaries.checked,
            boundaries.mismatches,
            random.checked,
            random.mismatches
        );
        assert!(boundaries.checked >= ranges, "{} boundaries for {ranges} ranges", boundaries.checked);
        if boundaries.passed() && random.passed() {
            continue;
        }
        let first = boundaries.first.iter().chain(&random.first).next().copied();
        match KNOWN_WRONG.iter().find(|(name, _)| *name == spec.name) {
            Some((_, reason)) => eprintln!("{}: known wrong ({reason}); first: {first:?}", spec.name),
            None => unexpected.push(format!(
                "{}: {} boundary and {} random mismatches, first {first:?}",
                spec.name, boundaries.mismatches, random.mismatches
            )),
        }
    }
    assert!(unexpected.is_empty(), "peers disagree with the RIB:\n{}", unexpected.join("\n"));
}
