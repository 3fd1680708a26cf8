use super::*;
use crate::addr::Prefix4;
use crate::NO_ROUTE;

fn p(text: &str) -> Prefix4 {
    text.parse().unwrap()
}

fn check_all_boundaries<const K: u32>(rib: &Rib4) -> Dxr<K> {
    let dxr = Dxr::<K>::build(rib).unwrap();
    for range in rib.ranges(0, u32::MAX) {
        for addr in [range.first, range.last] {
            assert_eq!(dxr.lookup(addr), range.next_hop, "D{K}R at {addr:#010x}");
        }
    }
    dxr
}

#[test]
fn empty_table_is_all_direct() {
    let dxr = check_all_boundaries::<16>(&Rib4::new());
    assert_eq!(dxr.lookup(0x0a00_0000), NO_ROUTE);
    assert_eq!(dxr.direct_coverage(), 1.0);
    assert_eq!(dxr.footprint(), 4 << 16);
}

#[test]
fn short_and_long_chunks() {
    let mut rib = Rib4::new();
    rib.insert(p("10.0.0.0/8"), 1);
    rib.insert(p("10.1.2.0/24"), 2); // short chunk in D16R
    rib.insert(p("10.2.3.128/25"), 3); // long chunk: not /24-aligned
    rib.insert(p("10.3.0.0/24"), 300); // long chunk: next hop over 8 bits
    let dxr = check_all_boundaries::<16>(&rib);
    let summary = &dxr.summary;
    assert_eq!(summary.physical_short_chunks, 1);
    assert_eq!(summary.physical_long_chunks, 2);
    assert_eq!(summary.physical_short_fragments, 3);
    assert_eq!(summary.physical_long_fragments, 3 + 2);
    assert_eq!(dxr.lookup(0x0a02_0380), 3);
    assert_eq!(dxr.lookup(0x0a02_037f), 1);
    assert_eq!(dxr.lookup(0x0a03_00ff), 300);
    assert_eq!(dxr.lookup(0x0a03_0100), 1);
    check_all_boundaries::<22>(&rib);
}

#[test]
fn identical_chunks_are_shared() {
    let mut rib = Rib4::new();
    for second in 0..100u32 {
        let prefix = Prefix4::new(0x0a00_0000 | second << 16 | 0x0100, 24).unwrap();
        rib.insert(prefix, 5);
    }
    let dxr = check_all_boundaries::<16>(&rib);
    assert_eq!(dxr.summary.aggregated_short_chunks, 100);
    assert_eq!(dxr.summary.physical_short_chunks, 1);
    assert_eq!(dxr.range_short.len(), 3);
}

#[test]
fn huge_chunks_use_a_header() {
    // 1,000 alternating /32s inside one /16: more than 510 fragments.
    let mut rib = Rib4::new();
    for host in 0..1000u32 {
        rib.insert(Prefix4::new(0x0b00_0000 | host * 2, 32).unwrap(), 1 + host % 2);
    }
    let dxr = check_all_boundaries::<16>(&rib);
    assert_eq!(dxr.summary.longest_chunk, 2000);
    assert_eq!(dxr.direct[0x0b00] & FRAGS_MASK, FRAGS_XL);
    for addr in 0x0b00_0000..0x0b00_0800u32 {
        assert_eq!(dxr.lookup(addr), rib.lookup(addr));
    }
}

#[test]
fn next_hops_too_wide_are_refused() {
    let mut rib = Rib4::new();
    rib.insert(p("10.0.0.0/8"), 1);
    rib.insert(p("10.0.0.0/25"), 70_000);
    let error = Dxr::<16>::build(&rib).unwrap_err();
    assert!(error.message.contains("16-bit next-hop field"), "{error}");
    // K = 17 stores 17-bit next hops in long fragments.
    let dxr = check_all_boundaries::<17>(&rib);
    assert_eq!(dxr.lookup(0x0a00_0000), 70_000);
}

#[test]
fn default_route_and_extremes() {
    let mut rib = Rib4::new();
    rib.insert(p("0.0.0.0/0"), 9);
    rib.insert(p("255.255.255.255/32"), 8);
    rib.insert(p("0.0.0.0/32"), 7);
    check_all_boundaries::<16>(&rib);
    check_all_boundaries::<19>(&rib);
    check_all_boundaries::<22>(&rib);
}

#[test]
fn stats_report_like_rt_stat() {
    let mut rib = Rib4::new();
    rib.insert(p("10.0.0.0/8"), 1);
    rib.insert(p("10.1.2.0/24"), 2);
    let dxr = Dxr::<16>::build(&rib).unwrap();
    let stats = crate::engine::Fib4::stats(&dxr);
    assert!(stats.report.starts_with("DXR (D16R): 2 prefixes, 2 unique nexthops"), "{}", stats.report);
    assert_eq!(stats.get("bytes_total"), Some(&crate::engine::Figure::Count(4 << 16 | 6)));
}
