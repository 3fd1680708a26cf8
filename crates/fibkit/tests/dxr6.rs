//! DXR for IPv6 (d16r6, d18r6) on the LINX IPv6 table against the RIB.

mod common;

use fibkit::addr::Prefix6;
use fibkit::engine::{self, BuildOptions, Figure};
use fibkit::verify::{self, Keys6};

#[test]
fn linx_ipv6_table() {
    let Some(table) = common::linx_ipv6() else { return };
    let rib = table.v6;
    let options = BuildOptions { max_next_hop: table.next_hops.max_index() };
    let global: Prefix6 = "2000::/3".parse().unwrap();
    for (name, k) in [("d16r6", 16u64), ("d18r6", 18)] {
        let fib = engine::build6(name, &rib, &options).unwrap();
        let stats = fib.stats();
        assert_eq!(stats.get("k"), Some(&Figure::Count(k)));
        assert_eq!(stats.get("direct_entries"), Some(&Figure::Count(1 << k)));
        assert_eq!(fib.footprint() as u64, match stats.get("bytes_total") {
            Some(Figure::Count(bytes)) => *bytes,
            other => panic!("bytes_total: {other:?}"),
        });
        let boundaries = verify::boundaries6(&*fib, &rib);
        assert!(boundaries.passed(), "{name}: {boundaries:?}");
        assert!(boundaries.checked > 2 * rib.len() as u64);
        for (keys, seed) in [(Keys6::Anywhere, 1), (Keys6::Inside(global), 2), (Keys6::Announced, 3)] {
            let report = verify::random6(&*fib, &rib, keys, 300_000, seed);
            assert!(report.passed(), "{name} {keys:?}: {report:?}");
        }
        eprintln!("{}\n", stats.report);
    }
}
