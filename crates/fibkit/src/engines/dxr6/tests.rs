//! D`K`R6 against the RIB: entry encoding, large chunks, limits, and
//! property tests on random IPv6 tables (nested prefixes, /0, /128).

use proptest::prelude::*;

use super::*;
use crate::addr::{Address, Prefix6};
use crate::rib::Rib6;
use crate::NextHop;

use crate::addr::p;
use crate::rib::rib_of;

/// Every range end of `rib`, the addresses just beside them, and `extra`.
fn check_against_rib<const K: u32>(rib: &Rib6, extra: &[u128]) -> Result<(), String> {
    let fib = Dxr6::<K>::build(rib).map_err(|error| error.to_string())?;
    let mut addrs = extra.to_vec();
    rib.for_each_range(0, u128::MAX, |range| {
        addrs.extend([range.first, range.last]);
        addrs.extend(range.first.checked_prev());
        addrs.extend(range.last.checked_next());
    });
    for &addr in &addrs {
        let (want, got) = (rib.lookup(addr), fib.lookup(addr));
        if want != got {
            return Err(format!("d{K}r6 at {}: want {want}, got {got}", addr.display()));
        }
    }
    // The batch path, in order and with the keys of far-apart chunks
    // side by side in a group (taken from both ends in turn).
    let mixed: Vec<u128> =
        (0..addrs.len()).map(|i| if i % 2 == 0 { addrs[i / 2] } else { addrs[addrs.len() - 1 - i / 2] }).collect();
    for keys in [&addrs, &mixed] {
        let mut out = vec![0; keys.len()];
        fib.lookup_batch(keys, &mut out);
        if let Some((addr, got)) = keys.iter().zip(&out).find(|&(&addr, &got)| rib.lookup(addr) != got) {
            return Err(format!("d{K}r6 batch at {}: want {}, got {got}", addr.display(), rib.lookup(*addr)));
        }
    }
    Ok(())
}

#[test]
fn entries_pack_their_fields() {
    let entry = DirectEntry::ranges(BASE_MAX, 5);
    assert_eq!((entry.size(), entry.base()), (5, BASE_MAX));
    assert_eq!(DirectEntry::ranges(7, 8190).size(), 8190);
    assert_eq!(DirectEntry::ranges(7, 8191).size(), SIZE_XL, "8191 ranges need the header");
    assert_eq!(DirectEntry::resolved(42), DirectEntry(42 << 13));
    let range = RangeEntry::new::<18>(u128::MAX >> 18, (1 << 18) - 1);
    assert_eq!(range.0, u128::MAX);
    assert_eq!(range.next_hop::<18>(), (1 << 18) - 1);
    assert_eq!(RangeEntry::new::<16>(1, 3).0, (1 << 16) | 3);
}

#[test]
fn nested_prefixes_default_and_host_routes() {
    let rib: Rib6 = rib_of(&[
        ("::/0", 1),
        ("2001:db8::/32", 2),
        ("2001:db8:1::/48", 3),
        ("2001:db8:1::7/128", 4),
        ("2001:db8:1::8/128", 3),
        ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128", 5),
        ("::/128", 6),
    ]);
    check_against_rib::<16>(&rib, &[]).unwrap();
    check_against_rib::<18>(&rib, &[]).unwrap();
    let fib = Dxr6::<16>::build(&rib).unwrap();
    assert_eq!(fib.lookup(0x2001_0db8_0001 << 80 | 7), 4);
    assert_eq!(fib.lookup(0x2001_0db8_0001 << 80 | 9), 3);
    assert_eq!(fib.lookup(0x3000 << 112), 1);
    assert_eq!(fib.direct().len(), 1 << 16);
    // Chunks 0 (::/128), 2001 and ffff have ranges; the rest resolve to 1.
    let stats = fib.report();
    assert_eq!(stats.get("chunks_with_ranges"), Some(&crate::fib::Figure::Count(3)));
    assert!(stats.report.contains("d16r6: DXR (IPv6), K = 16"), "{}", stats.report);
}

#[test]
fn empty_and_default_only_tables_resolve_in_the_direct_table() {
    let empty = Dxr6::<16>::build(&Rib6::new()).unwrap();
    assert!(empty.range().is_empty());
    assert_eq!(empty.lookup(0x2001 << 112), crate::NO_ROUTE);
    let mut default_only = Rib6::new();
    default_only.insert(p("::/0"), 9);
    let fib = Dxr6::<18>::build(&default_only).unwrap();
    assert!(fib.range().is_empty() && fib.lookup(u128::MAX) == 9 && fib.lookup(0) == 9);
}

#[test]
fn a_chunk_of_more_than_8190_ranges_keeps_its_count_in_a_header() {
    let mut rib = Rib6::new();
    let base = 0x2001_0db8u128 << 96;
    for host in 0..5000u128 {
        rib.insert(Prefix6::new(base | (host * 2), 128).unwrap(), (host % 3 + 1) as NextHop);
    }
    let fib = Dxr6::<16>::build(&rib).unwrap();
    let stats = fib.report();
    assert_eq!(stats.get("range_headers"), Some(&crate::fib::Figure::Count(1)));
    assert!(matches!(stats.get("largest_chunk"), Some(crate::fib::Figure::Count(n)) if *n >= 8191));
    check_against_rib::<16>(&rib, &[]).unwrap();
}

#[test]
fn next_hops_wider_than_k_bits_are_refused_by_name() {
    let mut rib = Rib6::new();
    rib.insert(p("2001:db8::/32"), 70_000);
    // Inside a chunk with ranges: the K-bit field cannot hold it.
    let error = Dxr6::<16>::build(&rib).err().expect("70000 does not fit 16 bits");
    assert_eq!(error.engine(), "d16r6");
    assert!(error.to_string().contains("next hop 70000") && error.to_string().contains("16-bit"), "{error}");
    // D18R6 holds it.
    check_against_rib::<18>(&rib, &[]).unwrap();
    // Resolved in the direct table, a wide next hop needs only the 19-bit base.
    let mut whole = Rib6::new();
    whole.insert(p("2001::/16"), 70_000);
    assert_eq!(Dxr6::<16>::build(&whole).unwrap().lookup(0x2001 << 112 | 5), 70_000);
    whole.insert(p("2002::/16"), 1 << 20);
    assert!(Dxr6::<16>::build(&whole).err().expect("2^20 refused").to_string().contains("19-bit"));
}

/// IPv6 prefixes that nest: a few top 16-bit groups, long zero runs, /0
/// and /128 among the lengths.
fn prefix6() -> impl Strategy<Value = Prefix6> {
    let top = prop::sample::select(vec![0u128, 0x2001, 0x2001, 0x2a00, 0xffff]);
    let len = prop_oneof![1 => Just(0u8), 3 => 1u8..=48, 4 => 49u8..=127, 2 => Just(128u8)];
    (top, any::<u128>(), 0u32..=112, len)
        .prop_map(|(top, bits, zeros, len)| Prefix6::truncating(top << 112 | (bits >> 16) >> zeros, len))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn dxr6_matches_the_rib(
        routes in prop::collection::vec((prefix6(), 1u32..=4, any::<bool>()), 0..120),
        extra in prop::collection::vec(any::<u128>(), 32),
    ) {
        let mut rib = Rib6::new();
        for &(prefix, next_hop, withdraw_later) in &routes {
            rib.insert(prefix, next_hop);
            if withdraw_later && next_hop == 4 {
                rib.remove(prefix);
            }
        }
        prop_assert_eq!(check_against_rib::<16>(&rib, &extra), Ok(()));
        prop_assert_eq!(check_against_rib::<18>(&rib, &extra), Ok(()));
    }
}
