//! Differential tests of the Luleå, DIR-24-8 and LC-trie engines against the
//! RIB: random tables (property tests) and the 2014 RouteViews table.

mod common;

use std::sync::OnceLock;

use fibkit::addr::Prefix4;
use fibkit::fib::{BuildOptions, Fib, Figure};
use fibkit::load::RouteTable;
use fibkit::measure::verify::{self, Space};
use fibkit::nexthop::Mapping;
use fibkit::registry;
use fibkit::rib::Rib4;
use fibkit::NextHop;
use proptest::prelude::*;

const FIELD: [&str; 3] = ["lulea", "dir24-8", "lctrie"];

/// One step of building a random table.
#[derive(Clone, Debug)]
enum Step {
    Insert(Prefix4, NextHop),
    /// Withdraw the prefix inserted `n` steps before (modulo), if any.
    Withdraw(usize),
}

/// Address regions that random prefixes crowd into, so that chunks of every
/// kind, level-3 chunks and DIR-24-8 groups appear: (base, shortest length).
const CLUSTERS: [(u32, u8); 5] =
    [(0x0a00_0000, 16), (0x0a01_0000, 16), (0xc0a8_0100, 24), (0xc0a8_0200, 24), (0xffff_ff00, 24)];

fn prefix_strategy() -> impl Strategy<Value = Prefix4> {
    prop_oneof![
        // Anywhere, any length (includes /0 and /32).
        (any::<u32>(), 0u8..=32).prop_map(|(addr, len)| Prefix4::truncating(addr, len)),
        // Inside a cluster, long prefixes.
        (0..CLUSTERS.len(), any::<u32>(), 0u8..=16).prop_map(|(cluster, bits, extra)| {
            let (base, shortest) = CLUSTERS[cluster];
            let len = (shortest + extra).min(32);
            Prefix4::truncating(base | (bits >> shortest), len)
        }),
        // The edges of the address space.
        prop_oneof![Just(0u32), Just(u32::MAX)]
            .prop_flat_map(|addr| (Just(addr), 0u8..=32))
            .prop_map(|(addr, len)| Prefix4::truncating(addr, len)),
    ]
}

fn next_hop_strategy() -> impl Strategy<Value = NextHop> {
    prop_oneof![8 => 1u32..=4, 1 => 1u32..=300]
}

fn step_strategy() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (prefix_strategy(), next_hop_strategy()).prop_map(|(prefix, next_hop)| Step::Insert(prefix, next_hop)),
        1 => (1usize..50).prop_map(Step::Withdraw),
    ]
}

/// Applies the steps to a RIB: inserts replace, withdrawals remove an
/// earlier prefix.
fn rib_from(steps: &[Step]) -> Rib4 {
    let mut rib = Rib4::new();
    let mut inserted = Vec::new();
    for step in steps {
        match *step {
            Step::Insert(prefix, next_hop) => {
                rib.insert(prefix, next_hop);
                inserted.push(prefix);
            }
            Step::Withdraw(back) if !inserted.is_empty() => {
                let prefix = inserted[inserted.len() - 1 - back % inserted.len()];
                rib.remove(prefix);
            }
            Step::Withdraw(_) => {}
        }
    }
    rib
}

fn max_next_hop(rib: &Rib4) -> NextHop {
    rib.iter().map(|(_, next_hop)| next_hop).max().unwrap_or(0)
}

/// Checks every range boundary and some random addresses.
fn check(fib: &dyn Fib<u32>, rib: &Rib4, random: u64) -> Result<(), String> {
    let report = verify::boundaries(fib, rib);
    if !report.passed() {
        return Err(format!("{}: boundaries: {:?}", fib.name(), report));
    }
    let report = verify::random(fib, rib, Space::Anywhere, random, 7);
    if !report.passed() {
        return Err(format!("{}: random: {:?}", fib.name(), report));
    }
    Ok(())
}

fn build(name: &str, rib: &Rib4) -> Box<dyn Fib<u32>> {
    let options = BuildOptions::new(max_next_hop(rib));
    registry::build(name, rib, &options).unwrap_or_else(|error| panic!("{name}: {error}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn lulea_matches_the_rib(steps in prop::collection::vec(step_strategy(), 0..400)) {
        let rib = rib_from(&steps);
        let fib = build("lulea", &rib);
        let outcome = check(fib.as_ref(), &rib, 2000);
        prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn lctrie_matches_the_rib(steps in prop::collection::vec(step_strategy(), 0..400)) {
        let rib = rib_from(&steps);
        let fib = build("lctrie", &rib);
        let outcome = check(fib.as_ref(), &rib, 2000);
        prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }
}

proptest! {
    // Each case fills a 64 MiB table: fewer cases (dir24_updates.rs has more).
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn dir24_matches_the_rib(steps in prop::collection::vec(step_strategy(), 0..400)) {
        let rib = rib_from(&steps);
        let fib = build("dir24-8", &rib);
        let outcome = check(fib.as_ref(), &rib, 2000);
        prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }
}

// ---------------------------------------------------------------- Luleå limits

fn p(text: &str) -> Prefix4 {
    text.parse().unwrap()
}

fn figure(fib: &dyn Fib<u32>, key: &str) -> Figure {
    fib.stats().get(key).unwrap_or_else(|| panic!("no figure {key}")).clone()
}

#[test]
fn lulea_builds_the_paper_variant_when_the_table_fits() {
    let rib: Rib4 = [("10.0.0.0/8", 1), ("10.1.0.0/16", 2), ("10.1.2.0/24", 3), ("10.1.2.128/25", 4)]
        .into_iter()
        .map(|(prefix, next_hop)| (p(prefix), next_hop))
        .collect();
    let fib = build("lulea", &rib);
    assert_eq!(figure(fib.as_ref(), "variant"), Figure::Text("paper".into()));
    assert_eq!(figure(fib.as_ref(), "level3_chunks"), Figure::Count(1));
    check(fib.as_ref(), &rib, 10_000).unwrap();
}

#[test]
fn lulea_widens_pointers_past_16384_chunks_of_a_kind() {
    // 20,000 /16s each holding one /24: 20,000 sparse level-2 chunks.
    let rib: Rib4 = (0..20_000u32).map(|i| (Prefix4::truncating(i << 16 | 0x0100, 24), 1 + i % 3)).collect();
    let fib = build("lulea", &rib);
    assert_eq!(figure(fib.as_ref(), "variant"), Figure::Text("wide-pointers".into()));
    assert_eq!(figure(fib.as_ref(), "level2_sparse"), Figure::Count(20_000));
    assert!(fib.stats().report.contains("20000 sparse chunks"), "{}", fib.stats().report);
    check(fib.as_ref(), &rib, 100_000).unwrap();
}

#[test]
fn lulea_widens_base_indices_past_65535_level2_pointers() {
    // 300 /16s of 256 /24s with alternating next hops: very dense chunks
    // with 256 pointers each, 76,800 pointers in level 2.
    let rib: Rib4 = (0..300u32)
        .flat_map(|slash16| (0..256u32).map(move |i| (Prefix4::truncating((slash16 << 16) | (i << 8), 24), 1 + i % 2)))
        .collect();
    let fib = build("lulea", &rib);
    assert_eq!(figure(fib.as_ref(), "variant"), Figure::Text("wide-base".into()));
    assert_eq!(figure(fib.as_ref(), "level2_very_dense"), Figure::Count(300));
    assert_eq!(figure(fib.as_ref(), "level2_pointers"), Figure::Count(76_800));
    check(fib.as_ref(), &rib, 100_000).unwrap();
}

#[test]
fn lulea_handles_next_hops_beyond_14_bits_and_beyond_direct_code_words() {
    for big in [16_384, 22_207, 22_208, 40_000, (1 << 30) - 1] {
        let mut rib = Rib4::new();
        rib.insert(p("0.0.0.0/0"), big);
        rib.insert(p("10.0.0.0/8"), big - 1);
        rib.insert(p("10.0.0.0/12"), 3);
        rib.insert(p("10.16.0.0/12"), big);
        rib.insert(p("10.1.0.0/16"), big);
        rib.insert(p("10.1.2.0/24"), big - 2);
        rib.insert(p("10.1.2.1/32"), big);
        for i in 0..20u32 {
            rib.insert(Prefix4::truncating(0x0a02_0000 | i << 8, 24), big - i % 3);
            rib.insert(Prefix4::truncating(0x0a03_0000 | i << 12, 20), big - i % 5);
        }
        let fib = build("lulea", &rib);
        assert_eq!(figure(fib.as_ref(), "pointer_bits"), Figure::Count(32), "next hop {big}");
        check(fib.as_ref(), &rib, 100_000).unwrap();
    }
}

#[test]
fn lulea_reads_direct_code_words_past_its_last_pointer() {
    // Level 1 reads the pointer at `base + six` whatever the code word
    // (without a branch on it): next hop 63 in direct code words after the
    // last pointer puts that slot past the end of the array, and with only
    // the default route there is no level-1 pointer at all.
    for more in [&[][..], &[("0.1.0.0/17", 2), ("0.2.0.0/24", 3)][..]] {
        let rib: Rib4 =
            [("0.0.0.0/0", 63)].iter().chain(more).map(|&(prefix, next_hop)| (p(prefix), next_hop)).collect();
        let fib = build("lulea", &rib);
        check(fib.as_ref(), &rib, 100_000).unwrap();
        assert_eq!(fib.lookup(u32::MAX), 63);
    }
}

#[test]
fn lulea_refuses_next_hops_no_pointer_holds() {
    let mut rib = Rib4::new();
    rib.insert(p("10.0.0.0/8"), 1);
    let error = registry::build("lulea", &rib, &BuildOptions::new(1 << 30)).err().unwrap();
    assert_eq!(error.engine(), "lulea");
    assert!(error.to_string().contains("30-bit"), "{}", error.to_string());
}

#[test]
fn dir24_refuses_next_hops_beyond_24_bits_and_lctrie_takes_any() {
    let mut rib = Rib4::new();
    rib.insert(p("10.0.0.0/8"), 1);
    let error = registry::build("dir24-8", &rib, &BuildOptions::new(1 << 24)).err().unwrap();
    assert_eq!(error.engine(), "dir24-8");
    assert!(error.to_string().contains("24-bit"), "{}", error.to_string());
    rib.insert(p("10.1.0.0/16"), u32::MAX);
    let fib = build("lctrie", &rib);
    assert_eq!(fib.lookup(0x0a01_0000), u32::MAX);
    assert_eq!(fib.lookup(0x0a02_0000), 1);
}

// ------------------------------------------------------- the 2014 table

/// The 2014 RouteViews table with values mapped `asn % 239 + 1`, or `None`
/// (with a visible note) when the file is absent.
fn routeviews_2014() -> Option<&'static Rib4> {
    static TABLE: OnceLock<Option<RouteTable>> = OnceLock::new();
    TABLE.get_or_init(|| common::routeviews_2014(Mapping::Modulo(239))).as_ref().map(|table| &table.v4)
}

#[test]
fn field_engines_match_the_rib_on_the_2014_table() {
    let Some(rib) = routeviews_2014() else { return };
    assert!(rib.len() > 500_000, "{} prefixes", rib.len());
    for name in FIELD {
        let fib = build(name, rib);
        eprintln!("{}", fib.stats().report);
        let report = verify::boundaries(fib.as_ref(), rib);
        assert!(report.passed(), "{name}: boundaries: {report:?}");
        assert!(report.checked > 400_000, "{name}: only {} boundary addresses", report.checked);
        let report = verify::random(fib.as_ref(), rib, Space::Anywhere, 1_000_000, 2014);
        assert!(report.passed(), "{name}: random: {report:?}");
    }
}

#[test]
#[ignore = "all 2^32 addresses per engine: run with `make test-exhaustive`"]
fn field_engines_match_the_rib_exhaustively_on_the_2014_table() {
    let Some(rib) = routeviews_2014() else { return };
    for name in FIELD {
        let fib = build(name, rib);
        let report = verify::exhaustive(fib.as_ref(), rib);
        assert_eq!(report.checked, 1 << 32);
        assert!(report.passed(), "{name}: {report:?}");
    }
}
