use super::*;
use crate::addr::Prefix4;
use crate::{NextHop, NO_ROUTE};

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
    assert_eq!(summary.short.physical_chunks, 1);
    assert_eq!(summary.long.physical_chunks, 2);
    assert_eq!(summary.short.physical_fragments, 3);
    assert_eq!(summary.long.physical_fragments, 3 + 2);
    assert_eq!(summary.wide.aggregated_chunks, 0);
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
    assert_eq!(dxr.summary.short.aggregated_chunks, 100);
    assert_eq!(dxr.summary.short.physical_chunks, 1);
    assert_eq!(dxr.range_short.len(), 3);
}

/// A chunk at 11.0/16 of `2 * stripes + 1` alternating ranges, `step`
/// addresses each, with next hops `first_hop` and `first_hop + 1`.
fn striped_rib(stripes: u32, step: u32, first_hop: NextHop) -> Rib4 {
    let mut rib = Rib4::new();
    let prefix_len = 32 - step.trailing_zeros() as u8;
    for index in 0..stripes {
        rib.insert(Prefix4::new(0x0b00_0000 | ((2 * index + 1) * step), prefix_len).unwrap(), first_hop + 1);
    }
    rib.insert(p("11.0.0.0/16"), first_hop);
    rib
}

#[test]
fn huge_chunks_use_a_header_in_every_format() {
    // (stripes, spacing, first next hop, format): long, short, wide.
    for (stripes, step, first_hop, format) in
        [(1000, 1, 1, FORMAT_LONG), (127, 256, 1, FORMAT_SHORT), (300, 4, 100_000, FORMAT_WIDE)]
    {
        let rib = striped_rib(stripes, step, first_hop);
        let dxr = check_all_boundaries::<16>(&rib);
        assert_eq!(dxr.summary.longest_chunk, 2 * stripes as usize + 1);
        let entry = dxr.direct[0x0b00];
        assert_eq!(entry & FRAGS_MASK, FRAGS_XL);
        assert_eq!((entry >> FORMAT_SHIFT) & 3, format);
        for addr in (0x0b00_0000..0x0b01_0000u32).step_by(7) {
            assert_eq!(dxr.lookup(addr), rib.lookup(addr), "{addr:#x}");
        }
    }
    // 253 fragments still fit the entry; 255 need the header.
    let entry = Dxr::<16>::build(&striped_rib(126, 256, 1)).unwrap().direct[0x0b00];
    assert_eq!(entry & FRAGS_MASK, 253);
}

#[test]
fn next_hops_wider_than_k_bits_go_wide() {
    let mut rib = Rib4::new();
    rib.insert(p("10.0.0.0/8"), 1);
    rib.insert(p("10.0.0.0/25"), 70_000);
    rib.insert(p("10.0.1.0/24"), 3);
    let dxr = check_all_boundaries::<16>(&rib);
    assert_eq!(dxr.summary.wide.physical_chunks, 1);
    assert_eq!(dxr.summary.wide.physical_fragments, 4);
    assert_eq!(dxr.lookup(0x0a00_0000), 70_000);
    assert!(crate::engine::Fib4::stats(&dxr).report.contains("1 wide"));
    // K = 17 stores 17-bit next hops in long fragments.
    let dxr = check_all_boundaries::<17>(&rib);
    assert_eq!(dxr.summary.wide.physical_chunks, 0);
    assert_eq!(dxr.lookup(0x0a00_0000), 70_000);
    // A next hop resolved in the direct table is limited to 22 bits.
    let mut huge = Rib4::new();
    huge.insert(p("10.0.0.0/8"), 1 << 22);
    let error = Dxr::<16>::build(&huge).unwrap_err();
    assert!(error.message.contains("direct entry"), "{error}");
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

#[test]
fn batches_of_every_length_match_scalar_lookups() {
    let mut rib = striped_rib(300, 4, 100_000); // wide, header
    for (index, prefix) in ["10.0.0.0/8", "10.1.2.0/24", "10.2.3.128/25", "10.3.0.0/24"].iter().enumerate() {
        rib.insert(p(prefix), index as NextHop + 1);
    }
    let dxr = Dxr::<16>::build(&rib).unwrap();
    let mut rng = crate::workload::XorShift32::new(3);
    let keys: Vec<u32> = (0..301)
        .map(|index| match index % 3 {
            0 => rng.next(),
            1 => 0x0a00_0000 | (rng.next() & 0x03ff_ffff),
            _ => 0x0b00_0000 | (rng.next() & 0xffff),
        })
        .collect();
    for len in 0..=300 {
        for start in [0, 1] {
            let slice = &keys[start..start + len.min(keys.len() - start)];
            let mut out = vec![u32::MAX; slice.len()];
            dxr.lookup_batch(slice, &mut out);
            for (&key, &got) in slice.iter().zip(&out) {
                assert_eq!(got, dxr.lookup(key), "batch of {len} at {key:#x}");
            }
        }
    }
}
