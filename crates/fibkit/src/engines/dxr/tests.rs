use super::*;
use crate::addr::Prefix4;
use crate::{NextHop, NO_ROUTE};

use crate::addr::p;
use crate::rib::rib_of;

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
    let summary = &dxr.scan();
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
    assert_eq!(dxr.scan().short.aggregated_chunks, 100);
    assert_eq!(dxr.scan().short.physical_chunks, 1);
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
        assert_eq!(dxr.scan().longest_chunk, 2 * stripes as usize + 1);
        let entry = dxr.direct_entry(0x0b00);
        assert_eq!(entry & FRAGS_MASK, FRAGS_XL);
        assert_eq!((entry >> FORMAT_SHIFT) & 3, format);
        for addr in (0x0b00_0000..0x0b01_0000u32).step_by(7) {
            assert_eq!(dxr.lookup(addr), rib.lookup(addr), "{addr:#x}");
        }
    }
    // 253 fragments still fit the entry; 255 need the header.
    let entry = Dxr::<16>::build(&striped_rib(126, 256, 1)).unwrap().direct_entry(0x0b00);
    assert_eq!(entry & FRAGS_MASK, 253);
}

#[test]
fn next_hops_wider_than_k_bits_go_wide() {
    let rib = rib_of(&[("10.0.0.0/8", 1), ("10.0.0.0/25", 70_000), ("10.0.1.0/24", 3)]);
    let dxr = check_all_boundaries::<16>(&rib);
    assert_eq!(dxr.scan().wide.physical_chunks, 1);
    assert_eq!(dxr.scan().wide.physical_fragments, 4);
    assert_eq!(dxr.lookup(0x0a00_0000), 70_000);
    assert!(<Dxr<16> as crate::fib::Fib<u32>>::stats(&dxr).report.contains("1 wide"));
    // K = 17 stores 17-bit next hops in long fragments.
    let dxr = check_all_boundaries::<17>(&rib);
    assert_eq!(dxr.scan().wide.physical_chunks, 0);
    assert_eq!(dxr.lookup(0x0a00_0000), 70_000);
    // A next hop resolved in the direct table is limited to 22 bits.
    let mut huge = Rib4::new();
    huge.insert(p("10.0.0.0/8"), 1 << 22);
    let error = Dxr::<16>::build(&huge).unwrap_err();
    assert!(error.to_string().contains("direct entry"), "{error}");
}

#[test]
fn default_route_and_extremes() {
    let rib = rib_of(&[("0.0.0.0/0", 9), ("255.255.255.255/32", 8), ("0.0.0.0/32", 7)]);
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
    let stats = <Dxr<16> as crate::fib::Fib<u32>>::stats(&dxr);
    assert!(stats.report.starts_with("DXR (D16R): 2 prefixes, 2 unique nexthops"), "{}", stats.report);
    assert_eq!(stats.get("bytes_total"), Some(&crate::fib::Figure::Count(4 << 16 | 6)));
}

#[test]
fn batches_of_every_length_match_scalar_lookups() {
    let mut rib = striped_rib(300, 4, 100_000); // wide, header
    for (index, prefix) in ["10.0.0.0/8", "10.1.2.0/24", "10.2.3.128/25", "10.3.0.0/24"].iter().enumerate() {
        rib.insert(p(prefix), index as NextHop + 1);
    }
    let dxr = Dxr::<16>::build(&rib).unwrap();
    let mut rng = crate::random::XorShift32::new(3);
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

#[test]
fn every_simd_level_searches_chunks_of_every_shape() {
    use crate::simd::{self, Level};
    // Fragments per chunk are 2 * stripes + 1: around the 32 and 64 that
    // the AVX-512 count covers, and past 254 (header); short (/24 steps),
    // long (single addresses) and wide (next hops past 16 bits).
    for stripes in [0, 1, 15, 16, 31, 32, 126, 127] {
        for (step, first_hop) in [(256, 1), (1, 1), (4, 100_000)] {
            let mut rib = striped_rib(stripes, step, first_hop);
            // A later chunk, so the striped one is not at the end of its
            // range table (the AVX2 kernel reads a word past odd counts).
            rib.insert(p("12.0.1.0/24"), 7);
            rib.insert(p("13.0.2.0/31"), 8);
            let dxr = Dxr::<16>::build(&rib).unwrap();
            let keys: Vec<u32> = (0..2 * stripes + 2)
                .flat_map(|stripe| [stripe * step, (stripe + 1) * step - 1])
                .map(|offset| 0x0b00_0000 | offset.min(0xffff))
                .collect();
            let want: Vec<NextHop> = keys.iter().map(|&key| rib.lookup(key)).collect();
            for level in [Level::Scalar, Level::Avx2, Level::Avx512] {
                let level = simd::set_level(level);
                let mut out = vec![u32::MAX; keys.len()];
                dxr.lookup_batch(&keys, &mut out);
                assert_eq!(out, want, "{stripes} stripes of {step} at {level:?}");
            }
        }
    }
}

mod updates {
    use super::*;
    use crate::nexthop::{Label, Mapping, NextHopTable};
    use crate::router::{assert_matches_rib, Router, Update, UpdateError, Window};

    fn router(rib: Rib4, engine: &str) -> Router {
        let mut next_hops = NextHopTable::new(Mapping::Modulo(1000));
        for hop in 1..=1000 {
            next_hops.intern(Label::Number(hop));
        }
        Router::new(engine, rib, next_hops, Window::Count(1)).unwrap()
    }

    /// Label whose `Modulo(1000)` index is `hop`.
    fn hop(hop: NextHop) -> Label {
        Label::Number(u64::from(hop) - 1)
    }

    #[test]
    fn shared_chunk_changes_for_one_user_only() {
        let mut rib = Rib4::new();
        for second in 0..4u32 {
            rib.insert(Prefix4::new(0x0a00_0100 | second << 16, 24).unwrap(), 5);
        }
        let mut router = router(rib, "d16r");
        router.announce(p("10.2.0.128/25"), hop(7)).unwrap();
        assert_matches_rib(&router);
        router.withdraw(p("10.2.0.128/25")).unwrap();
        router.withdraw(p("10.3.1.0/24")).unwrap();
        assert_matches_rib(&router);
        assert_eq!(router.stats().full_rebuilds, 0);
        assert_eq!(router.stats().publishes, 3);
    }

    #[test]
    fn retired_space_waits_for_readers() {
        let rib = striped_rib(100, 256, 1);
        let mut router = router(rib, "d16r");
        let reader = router.reader();
        let held = reader.snapshot();
        let before = held.fib().lookup(0x0b00_0100);
        assert_eq!(before, 2);
        // Each change rewrites the 201-fragment chunk 11.0/16 elsewhere;
        // the held generation keeps every old copy out of reuse.
        for round in 0..5u32 {
            router.announce(Prefix4::new(0x0b00_0000 | (2 * round + 1) << 8, 24).unwrap(), hop(3 + round)).unwrap();
        }
        assert_eq!(router.retired_generations(), 5);
        assert_eq!(router.stats().full_rebuilds, 0);
        // The held generation's chunk copy is still intact.
        assert_eq!(held.fib().lookup(0x0b00_0100), 3, "same structure, in place: per address old or new");
        assert_matches_rib(&router);
        drop(held);
        router.announce(p("11.0.200.0/24"), hop(9)).unwrap();
        assert_eq!(router.retired_generations(), 1, "released generations are forgotten");
        assert_matches_rib(&router);
    }

    #[test]
    fn running_out_of_space_relocates_and_publishes_a_new_structure() {
        let mut router = router(striped_rib(1000, 1, 1), "d16r");
        let held = router.reader().snapshot();
        // The 2,001-fragment long chunk needs 2,002 entries; the slack is
        // 4,096 + a quarter: a few rewrites while a reader holds generation 0
        // exhaust it.
        for round in 0..8u32 {
            router.announce(Prefix4::new(0x0b00_0000 | (2 * round + 1), 32).unwrap(), hop(500 + round)).unwrap();
        }
        // The first exhaustion moves the structure to larger arrays (a copy,
        // no rebuild from the RIB).
        assert!(router.stats().relocations >= 1, "{:?}", router.stats());
        assert_eq!(router.stats().full_rebuilds, 0, "{:?}", router.stats());
        assert_matches_rib(&router);
        // The held generation still answers from its own structure, which
        // was updated in place until the copy replaced it.
        let current = router.reader().snapshot();
        assert!(!std::ptr::addr_eq(held.fib(), current.fib()), "a new structure was published");
        assert_eq!(held.generation(), 0);
        assert!([2, 500].contains(&held.fib().lookup(0x0b00_0001)));
        assert_eq!(held.fib().lookup(0x0b00_0002), 1);
        assert_eq!(held.fib().lookup(0x0b00_07cf), 2);
    }

    #[test]
    fn next_hop_too_wide_for_a_direct_entry_is_rejected() {
        let mut rib = Rib4::new();
        rib.insert(p("10.0.0.0/8"), 1);
        let mut next_hops = NextHopTable::new(Mapping::Modulo(u32::MAX));
        next_hops.intern(Label::Number(0));
        let mut router = Router::new("d16r", rib, next_hops, Window::Count(1)).unwrap();
        let before = router.generation();
        let too_wide = Update::Announce { prefix: p("10.0.0.0/8"), value: Label::Number(1 << 22) };
        let error = router.apply(&[too_wide]).unwrap_err();
        assert!(error.to_string().contains("exceeds the 4194303 that d16r holds"), "{error}");
        assert_eq!(router.generation(), before);
        assert_eq!(router.rib().get(p("10.0.0.0/8")), Some(1));
        assert_eq!(router.reader().lookup(0x0a00_0000), 1);
        // In a batch, it is rejected alone: the withdraw beside it lands.
        let published = router.apply(&[Update::Withdraw { prefix: p("10.0.0.0/8") }, too_wide]).unwrap();
        assert_eq!(published.rejected.len(), 1);
        assert!(matches!(published.rejected[0], UpdateError::NextHopOverflow { index: 1, .. }));
        assert_eq!(router.rib().get(p("10.0.0.0/8")), None);
        assert_eq!(router.reader().lookup(0x0a00_0000), NO_ROUTE);
    }

    #[test]
    fn patching_huge_chunks_of_every_format() {
        // (stripes, spacing, first next hop): long, short and wide chunks
        // of more than 254 fragments (header entries), patched in the middle,
        // at both ends, and across a chunk boundary.
        for (stripes, step, first_hop) in [(1000, 1, 1), (127, 256, 1), (300, 4, 100)] {
            let mut router = router(striped_rib(stripes, step, first_hop), "d16r");
            let step_len = 32 - step.trailing_zeros() as u8;
            let changes = [
                Update::Announce {
                    prefix: Prefix4::new(0x0b00_0000 | (10 * step), step_len).unwrap(),
                    value: hop(900),
                },
                Update::Announce { prefix: Prefix4::new(0x0b00_0000, step_len).unwrap(), value: hop(901) },
                Update::Announce { prefix: Prefix4::new(0x0b00_ff00, 24).unwrap(), value: hop(902) },
                Update::Announce { prefix: p("11.0.255.0/24"), value: hop(903) },
                Update::Announce { prefix: p("11.1.0.0/24"), value: hop(904) },
                Update::Announce { prefix: p("10.255.255.0/24"), value: hop(905) },
                Update::Withdraw { prefix: Prefix4::new(0x0b00_0000 | (3 * step), step_len).unwrap() },
                Update::Withdraw { prefix: p("11.0.0.0/16") },
            ];
            for update in changes {
                router.apply(&[update]).unwrap();
                assert_matches_rib(&router);
            }
            router.apply(&changes[..3]).unwrap();
            assert_matches_rib(&router);
        }
    }
}
