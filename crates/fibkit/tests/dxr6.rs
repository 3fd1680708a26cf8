//! DXR for IPv6 (d16r6, d18r6) on the LINX IPv6 table against the RIB.

mod common;

use fibkit::fib::{BuildOptions, Figure};
use fibkit::registry;

#[test]
fn linx_ipv6_table() {
    let Some(table) = common::linx_ipv6() else { return };
    let rib = table.v6;
    let options = BuildOptions::new(table.next_hops.max_index());
    for (name, k) in [("d16r6", 16u64), ("d18r6", 18)] {
        let fib = registry::build(name, &rib, &options).unwrap();
        let stats = fib.stats();
        assert_eq!(stats.get("k"), Some(&Figure::Count(k)));
        assert_eq!(stats.get("direct_entries"), Some(&Figure::Count(1 << k)));
        assert_eq!(
            fib.footprint() as u64,
            match stats.get("bytes_total") {
                Some(Figure::Count(bytes)) => *bytes,
                other => panic!("bytes_total: {other:?}"),
            }
        );
        common::check_ipv6(name, &*fib, &rib, 300_000);
        eprintln!("{}\n", stats.report);
    }
}
