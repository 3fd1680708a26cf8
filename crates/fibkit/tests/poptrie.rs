//! Poptrie against the RIB: property tests on random IPv4 and IPv6 tables,
//! and the real tables of `../shared/data/` when present.

mod common;

use common::{probes, routeviews_2014};
use fibkit::addr::{Address, Prefix, Prefix4, Prefix6};
use fibkit::engines::poptrie::{aggregate, Leaf, Poptrie, PoptrieOptions};
use fibkit::error::{BuildError, Limit};
use fibkit::fib::{BuildOptions, Figure};
use fibkit::measure::verify::{self, Space};
use fibkit::nexthop::Mapping;
use fibkit::random::XorShift32;
use fibkit::registry;
use fibkit::rib::{Rib, Rib4, Rib6};
use fibkit::{NextHop, NO_ROUTE};
use proptest::prelude::*;

const NAMES: [&str; 3] = ["poptrie0", "poptrie16", "poptrie18"];

/// The full engines and the rows of the paper's Table 2: leafvec without
/// route aggregation, and basic (neither).
const ALL: [&str; 9] = [
    "poptrie0",
    "poptrie16",
    "poptrie18",
    "poptrie0-leafvec",
    "poptrie16-leafvec",
    "poptrie18-leafvec",
    "poptrie0-basic",
    "poptrie16-basic",
    "poptrie18-basic",
];

/// Poptrie engines for IPv6 only: two-stage direct pointing.
const IPV6_ONLY: [&str; 1] = ["poptrie16x12"];

// ---------------------------------------------------------------- helpers

/// 128 random bits from four xorshift draws.
fn random128(rng: &mut XorShift32) -> u128 {
    (0..4).fold(0u128, |acc, _| (acc << 32) | u128::from(rng.next()))
}

/// Every probe of `rib` looked up in `lookup`; the first wrong answer.
fn first_mismatch<A: Address>(
    rib: &Rib<A>,
    addrs: &[A],
    lookup: impl Fn(A) -> NextHop,
) -> Option<(String, NextHop, NextHop)> {
    addrs.iter().find_map(|&addr| {
        let (want, got) = (rib.lookup(addr), lookup(addr));
        (want != got).then(|| (addr.display(), want, got))
    })
}

fn count(stats: &fibkit::fib::Stats, key: &str) -> u64 {
    match stats.get(key) {
        Some(Figure::Count(value)) => *value,
        other => panic!("figure {key}: {other:?}"),
    }
}

fn rib_of<A: Address>(ops: &[(Prefix<A>, NextHop, bool)]) -> Rib<A> {
    let mut rib = Rib::new();
    for &(prefix, next_hop, withdraw) in ops {
        if withdraw {
            rib.remove(prefix);
        } else {
            rib.insert(prefix, next_hop);
        }
    }
    rib
}

fn same_arrays<A: Address, L: Leaf, const S: u32>(one: &Poptrie<A, L, S>, other: &Poptrie<A, L, S>) -> bool {
    one.direct() == other.direct() && one.nodes() == other.nodes() && one.leaves() == other.leaves()
}

// ------------------------------------------------------------- strategies

fn next_hop() -> impl Strategy<Value = NextHop> {
    prop_oneof![
        12 => 1u32..=3,
        4 => 1u32..=300,
        1 => Just(u32::from(u16::MAX)),
        1 => Just(70_000u32),
        1 => Just(0x7fff_ffffu32),
    ]
}

/// IPv4 prefixes that often nest: a few first octets, runs of zero bits.
fn prefix4() -> impl Strategy<Value = Prefix4> {
    let len = prop_oneof![1 => Just(0u8), 2 => 1u8..8, 8 => 8u8..=24, 4 => 25u8..=32, 2 => Just(32u8)];
    let addr = prop_oneof![
        1 => any::<u32>(),
        4 => (prop::sample::select(vec![0u32, 10, 11, 192, 255]), any::<u32>(), 0u32..=24)
            .prop_map(|(top, low, zeros)| (top << 24) | ((low & 0x00ff_ffff) >> zeros)),
    ];
    (addr, len).prop_map(|(addr, len)| Prefix::truncating(addr, len))
}

/// IPv6 prefixes that often nest, /0 to /128.
fn prefix6() -> impl Strategy<Value = Prefix6> {
    let len = prop_oneof![
        1 => Just(0u8),
        2 => 1u8..=32,
        6 => 33u8..=64,
        3 => 65u8..=127,
        2 => Just(128u8),
    ];
    let addr = prop_oneof![
        1 => any::<u128>(),
        4 => (prop::sample::select(vec![0u128, 0x2001, 0x2a00, 0xfe80, 0xffff]), any::<u128>(), 0u32..=112)
            .prop_map(|(top, low, zeros)| (top << 112) | ((low & (u128::MAX >> 16)) >> zeros)),
    ];
    (addr, len).prop_map(|(addr, len)| Prefix::truncating(addr, len))
}

/// Announcements, replacements (the same prefix again) and withdrawals.
fn ops<A: Address, P: Strategy<Value = Prefix<A>>>(
    prefix: P,
) -> impl Strategy<Value = Vec<(Prefix<A>, NextHop, bool)>> {
    prop::collection::vec((prefix, next_hop(), prop::bool::weighted(0.15)), 0..160).prop_map(|mut ops| {
        // Withdraw prefixes that were announced, and announce some twice.
        for index in 0..ops.len() {
            if ops[index].2 && index > 0 {
                ops[index].0 = ops[index / 2].0;
            }
        }
        ops
    })
}

// --------------------------------------------------------- property tests

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn ipv4_engines_match_the_rib(ops in ops(prefix4()), seed in any::<u64>()) {
        let rib = rib_of(&ops);
        let mut rng = XorShift32::new(seed);
        let addrs = probes(&rib, (0..512).map(|_| rng.next()));
        // Leaves are as wide as the widest next hop a lookup can return (a
        // route wholly covered by more specific ones never reaches a leaf).
        let mut widest = NO_ROUTE;
        rib.for_each_run(0, u32::MAX, |_, next_hop| widest = widest.max(next_hop));
        for name in ALL {
            // The largest next hop drawn, 2^31 - 1, still fits a direct entry.
            let fib = registry::build(name, &rib, &BuildOptions::default()).unwrap();
            prop_assert_eq!(fib.name(), name);
            let mismatch = first_mismatch(&rib, &addrs, |addr| fib.lookup(addr));
            prop_assert!(mismatch.is_none(), "{}: {:?}", name, mismatch);
            let stats = fib.stats();
            prop_assert_eq!(count(&stats, "leaf_bits"), if widest > 0xffff { 32 } else { 16 });
            prop_assert_eq!(count(&stats, "prefixes"), rib.len() as u64);
            prop_assert!(count(&stats, "prefixes_aggregated") <= rib.len() as u64);
            prop_assert_eq!(count(&stats, "bytes_total"), fib.footprint() as u64);
        }
    }

    #[test]
    fn ipv6_engines_match_the_rib(ops in ops(prefix6()), seed in any::<u64>()) {
        let rib = rib_of(&ops);
        let routes: Vec<Prefix6> = rib.iter().map(|(prefix, _)| prefix).collect();
        let mut rng = XorShift32::new(seed);
        let mut extra: Vec<u128> = (0..256).map(|_| random128(&mut rng)).collect();
        // Inside announced prefixes: a uniform 128-bit key almost never hits.
        for _ in 0..512 {
            if let Some(prefix) = routes.get(rng.next() as usize % routes.len().max(1)) {
                extra.push(prefix.addr() | (random128(&mut rng) & !u128::mask(prefix.prefix_len())));
            }
        }
        let addrs = probes(&rib, extra);
        for name in ALL.into_iter().chain(IPV6_ONLY) {
            let fib = registry::build(name, &rib, &BuildOptions::default()).unwrap();
            prop_assert_eq!(fib.name(), name);
            let mismatch = first_mismatch(&rib, &addrs, |addr| fib.lookup(addr));
            prop_assert!(mismatch.is_none(), "{}: {:?}", name, mismatch);
            prop_assert_eq!(count(&fib.stats(), "bytes_total"), fib.footprint() as u64);
        }
    }

    #[test]
    fn ipv4_without_aggregation_matches_the_rib(ops in ops(prefix4()), seed in any::<u64>()) {
        let rib = rib_of(&ops);
        let mut rng = XorShift32::new(seed);
        let addrs = probes(&rib, (0..256).map(|_| rng.next()));
        let plain = PoptrieOptions { aggregate: false };
        let t0 = Poptrie::<u32, u32, 0>::build(&rib, &plain).unwrap();
        let t16 = Poptrie::<u32, u32, 16>::build(&rib, &plain).unwrap();
        let t18 = Poptrie::<u32, u32, 18>::build(&rib, &plain).unwrap();
        prop_assert_eq!(first_mismatch(&rib, &addrs, |addr| t0.lookup(addr)), None);
        prop_assert_eq!(first_mismatch(&rib, &addrs, |addr| t16.lookup(addr)), None);
        prop_assert_eq!(first_mismatch(&rib, &addrs, |addr| t18.lookup(addr)), None);
        // Aggregation never adds nodes, nor bytes (a slot that turns from a
        // node into a leaf can split a run of leaves: one leaf more, one
        // node of 24 bytes less).
        let aggregated = Poptrie::<u32, u32, 0>::build(&rib, &PoptrieOptions::default()).unwrap();
        prop_assert!(aggregated.nodes().len() <= t0.nodes().len());
        prop_assert!(aggregated.footprint() <= t0.footprint());
    }

    #[test]
    fn ipv6_without_aggregation_matches_the_rib(ops in ops(prefix6()), seed in any::<u64>()) {
        let rib = rib_of(&ops);
        let mut rng = XorShift32::new(seed);
        let addrs = probes(&rib, (0..256).map(|_| random128(&mut rng)));
        let plain = PoptrieOptions { aggregate: false };
        let t0 = Poptrie::<u128, u32, 0>::build(&rib, &plain).unwrap();
        let t16 = Poptrie::<u128, u32, 16>::build(&rib, &plain).unwrap();
        prop_assert_eq!(first_mismatch(&rib, &addrs, |addr| t0.lookup(addr)), None);
        prop_assert_eq!(first_mismatch(&rib, &addrs, |addr| t16.lookup(addr)), None);
    }

    /// Route aggregation keeps every lookup result, never adds prefixes, and
    /// building without aggregation from its prefixes gives the arrays the
    /// aggregated build gives.
    #[test]
    fn aggregation_keeps_lookups_ipv4(ops in ops(prefix4())) {
        let rib = rib_of(&ops);
        let prefixes = aggregate(&rib);
        prop_assert!(prefixes.len() <= rib.len(), "{} > {}", prefixes.len(), rib.len());
        prop_assert!(prefixes.windows(2).all(|pair| pair[0].0 < pair[1].0), "sorted, no duplicates");
        prop_assert!(prefixes.iter().all(|&(_, next_hop)| next_hop != NO_ROUTE));
        let merged: Rib4 = prefixes.iter().copied().collect();
        prop_assert_eq!(merged.ranges(0, u32::MAX), rib.ranges(0, u32::MAX));
        let on = PoptrieOptions::default();
        let off = PoptrieOptions { aggregate: false };
        let direct = Poptrie::<u32, u32, 0>::build(&rib, &on).unwrap();
        let via_prefixes = Poptrie::<u32, u32, 0>::build(&merged, &off).unwrap();
        prop_assert!(same_arrays(&direct, &via_prefixes));
        prop_assert_eq!(direct.summary().prefixes_aggregated, prefixes.len());
        let direct = Poptrie::<u32, u32, 16>::build(&rib, &on).unwrap();
        let via_prefixes = Poptrie::<u32, u32, 16>::build(&merged, &off).unwrap();
        prop_assert!(same_arrays(&direct, &via_prefixes));
    }

    #[test]
    fn aggregation_keeps_lookups_ipv6(ops in ops(prefix6())) {
        let rib = rib_of(&ops);
        let prefixes = aggregate(&rib);
        prop_assert!(prefixes.len() <= rib.len(), "{} > {}", prefixes.len(), rib.len());
        let merged: Rib6 = prefixes.iter().copied().collect();
        prop_assert_eq!(merged.ranges(0, u128::MAX), rib.ranges(0, u128::MAX));
        let direct = Poptrie::<u128, u32, 0>::build(&rib, &PoptrieOptions::default()).unwrap();
        let via_prefixes = Poptrie::<u128, u32, 0>::build(&merged, &PoptrieOptions { aggregate: false }).unwrap();
        prop_assert!(same_arrays(&direct, &via_prefixes));
    }
}

#[test]
fn leaf_width_follows_the_options_and_the_table() {
    let mut rib = Rib4::new();
    rib.insert("10.0.0.0/8".parse().unwrap(), 5);
    let narrow = registry::build("poptrie18", &rib, &BuildOptions::new(65_535)).unwrap();
    assert_eq!(count(&narrow.stats(), "leaf_bits"), 16);
    let wide = registry::build("poptrie18", &rib, &BuildOptions::new(65_536)).unwrap();
    assert_eq!(count(&wide.stats(), "leaf_bits"), 32);
    assert_eq!(wide.lookup(0x0a00_0001), 5);
    // The table's own next hops widen the leaves even if the options say less.
    rib.insert("10.1.0.0/16".parse().unwrap(), 100_000);
    let widened = registry::build("poptrie0", &rib, &BuildOptions::new(5)).unwrap();
    assert_eq!(count(&widened.stats(), "leaf_bits"), 32);
    assert_eq!(widened.lookup(0x0a01_0000), 100_000);
    // 2^31 and more cannot go in a direct entry: an error, not a wrong answer.
    rib.insert("10.2.0.0/16".parse().unwrap(), 1 << 31);
    let error = registry::build("poptrie16", &rib, &BuildOptions::default()).err().expect("refused");
    assert!(error.to_string().contains("2147483648"), "{error}");
}

#[test]
fn empty_and_default_only_tables() {
    let empty = Rib4::new();
    let mut default_only = Rib4::new();
    default_only.insert(Prefix4::default_route(), 9);
    let mut empty6 = Rib6::new();
    for name in NAMES {
        let fib = registry::build(name, &empty, &BuildOptions::default()).unwrap();
        assert_eq!((fib.lookup(0), fib.lookup(u32::MAX)), (NO_ROUTE, NO_ROUTE));
        let fib = registry::build(name, &default_only, &BuildOptions::default()).unwrap();
        assert_eq!((fib.lookup(0), fib.lookup(u32::MAX)), (9, 9));
        let fib6 = registry::build(name, &empty6, &BuildOptions::default()).unwrap();
        assert_eq!(fib6.lookup(u128::MAX), NO_ROUTE);
    }
    empty6.insert(Prefix6::default_route(), 4);
    empty6.insert(Prefix6::new(u128::MAX, 128).unwrap(), 5);
    for name in NAMES.into_iter().chain(IPV6_ONLY) {
        let fib6 = registry::build(name, &empty6, &BuildOptions::default()).unwrap();
        assert_eq!((fib6.lookup(0), fib6.lookup(u128::MAX - 1), fib6.lookup(u128::MAX)), (4, 4, 5));
    }
    for name in IPV6_ONLY {
        let fib6 = registry::build(name, &Rib6::new(), &BuildOptions::default()).unwrap();
        assert_eq!((fib6.lookup(0), fib6.lookup(u128::MAX)), (NO_ROUTE, NO_ROUTE));
    }
}

// ---------------------------------------------------------------- real data

fn check_ipv4_table(mapping: Mapping, expect_leaf_bits: u64) {
    let Some(table) = routeviews_2014(mapping) else { return };
    let rib = table.v4;
    assert_eq!(rib.len(), 512_621);
    let options = BuildOptions::new(table.next_hops.max_index());
    for name in ALL {
        let fib = registry::build(name, &rib, &options).unwrap();
        let boundaries = verify::boundaries(&*fib, &rib);
        assert!(boundaries.passed(), "{name} ({mapping}): {boundaries:?}");
        let random = verify::random(&*fib, &rib, Space::Anywhere, 1_000_000, 2014);
        assert!(random.passed(), "{name} ({mapping}): {random:?}");
        let stats = fib.stats();
        assert_eq!(count(&stats, "leaf_bits"), expect_leaf_bits);
        let aggregated = if NAMES.contains(&name) { rib.len() - 1 } else { rib.len() };
        assert!(count(&stats, "prefixes_aggregated") <= aggregated as u64, "{name}");
        eprintln!("{}\n", stats.report);
    }
}

#[test]
fn routeviews_2014_with_239_next_hops() {
    check_ipv4_table(Mapping::Modulo(239), 16);
}

#[test]
fn routeviews_2014_with_the_asns_as_next_hops() {
    // ASNs up to 12.8 million: 32-bit leaves.
    check_ipv4_table(Mapping::Modulo(0x7fff_fff0), 32);
}

#[test]
fn linx_ipv6_table() {
    let Some(table) = common::linx_ipv6() else { return };
    let rib = table.v6;
    let options = BuildOptions::new(table.next_hops.max_index());
    for name in ALL {
        let fib = registry::build(name, &rib, &options).unwrap();
        let checked = common::check_ipv6(name, &*fib, &rib, 500_000);
        eprintln!("{name}: {checked} boundaries checked\n{}\n", fib.stats().report);
    }
}

/// Every one of the 2^32 addresses, for each engine (`make
/// test-exhaustive`).
#[test]
#[ignore = "2^32 lookups per engine: run with `make test-exhaustive`"]
fn routeviews_2014_exhaustive() {
    let Some(table) = routeviews_2014(Mapping::Modulo(239)) else { return };
    let rib = table.v4;
    let options = BuildOptions::new(table.next_hops.max_index());
    for name in ALL {
        let fib = registry::build(name, &rib, &options).unwrap();
        let report = verify::exhaustive(&*fib, &rib);
        assert_eq!(report.checked, 1 << 32);
        assert!(report.passed(), "{name}: {report:?}");
    }
}

/// The paper's Table 2 on the 2014 table: the three variants share the
/// trie of the unaggregated routes; basic keeps a leaf per leaf slot in
/// 16-byte nodes, leafvec one per run in 24-byte nodes, and route
/// aggregation shrinks the trie; only the full engines save to files.
#[test]
fn table_2_variants_on_the_2014_table() {
    let Some(table) = routeviews_2014(Mapping::Modulo(239)) else { return };
    let options = BuildOptions::default();
    for s in [0, 16, 18] {
        let stats =
            |variant: &str| registry::build(&format!("poptrie{s}{variant}"), &table.v4, &options).unwrap().stats();
        let (basic, leafvec, full) = (stats("-basic"), stats("-leafvec"), stats(""));
        let figure = |stats: &fibkit::fib::Stats, key| count(stats, key);
        assert_eq!(figure(&basic, "internal_nodes"), figure(&leafvec, "internal_nodes"), "s = {s}");
        // Every slot of every node is a leaf but those holding children:
        // one child per node but the roots (the direct entries' or s = 0's).
        let inodes = figure(&basic, "internal_nodes");
        let roots = if s == 0 { 1 } else { figure(&basic, "direct_nodes") };
        assert_eq!(figure(&basic, "leaves"), 64 * inodes - (inodes - roots), "s = {s}");
        assert_eq!(figure(&basic, "bytes_nodes"), 16 * inodes);
        assert_eq!(figure(&leafvec, "bytes_nodes"), 24 * inodes);
        assert!(figure(&leafvec, "leaves") * 10 < figure(&basic, "leaves"), "s = {s}");
        assert!(
            figure(&full, "internal_nodes") < inodes && figure(&full, "bytes_total") < figure(&leafvec, "bytes_total")
        );
        assert!(
            basic.report.contains("basic (a leaf per leaf slot)") && basic.report.contains("route aggregation off")
        );
        assert_eq!(basic.get("leafvec"), Some(&Figure::Text("off".into())));
        for variant in ["-basic", "-leafvec"] {
            let name = format!("poptrie{s}{variant}");
            let fib = registry::build(&name, &table.v4, &options).unwrap();
            let mut file = fibkit::file::FileWriter::new();
            let refused = fib.save(&mut file.family::<u32>()).unwrap_err();
            assert!(refused.to_string().contains(&name), "{refused}");
            assert!(!registry::find(&name).unwrap().savable::<u32>());
        }
    }
}

/// poptrie16 and poptrie18 start with 16-bit leaves; the batch that brings
/// the 65,536th next hop used to be rejected whole (its valid announces and
/// withdrawals with it). Now the updater widens its leaves by a rebuild and
/// takes the whole batch.
#[test]
fn the_updater_widens_its_leaves_when_next_hops_outgrow_them() {
    use fibkit::nexthop::{Label, NextHopTable};
    use fibkit::router::{Router, Update, Window};
    for name in ["poptrie16", "poptrie18"] {
        let mut rib = Rib4::new();
        let mut next_hops = NextHopTable::new(Mapping::Distinct);
        rib.insert("10.0.0.0/8".parse().unwrap(), next_hops.intern(Label::Number(1)));
        rib.insert("192.168.0.0/16".parse().unwrap(), next_hops.intern(Label::Number(2)));
        let mut router = Router::new(name, rib, next_hops, Window::Count(1)).unwrap();
        // 70,000 /24s under 10/8 and 11/8, each with its own next hop,
        // beside a withdrawal.
        let mut batch: Vec<Update<Prefix4>> = (0..70_000u32)
            .map(|i| Update::Announce {
                prefix: Prefix4::new(0x0a00_0000 + (i << 8), 24).unwrap(),
                value: Label::Number(1000 + u64::from(i)),
            })
            .collect();
        batch.push(Update::Withdraw { prefix: "192.168.0.0/16".parse().unwrap() });
        let published = router.apply(&batch).unwrap();
        assert!(published.rejected.is_empty(), "{name}: {:?}", &published.rejected[..1]);
        assert!(published.rebuilt, "{name}: the leaves were widened by a rebuild");
        let snapshot = router.reader().snapshot();
        let report = verify::boundaries(snapshot.fib(), router.rib());
        assert!(report.passed(), "{name}: {:?}", report.first);
        assert!(router.rib().lookup(0x0b11_6f00) > 65_535);
        assert_eq!(snapshot.fib().lookup(0x0b11_6f01), router.rib().lookup(0x0b11_6f01));
        assert_eq!(snapshot.fib().lookup(0xc0a8_0001), NO_ROUTE);
        // And it goes on in place with wide leaves.
        let more = [Update::Announce { prefix: "10.0.0.0/24".parse().unwrap(), value: Label::Number(7) }];
        let published = router.apply(&more).unwrap();
        assert!(!published.rebuilt && published.rejected.is_empty(), "{name}: {published:?}");
        assert!(verify::boundaries(router.reader().snapshot().fib(), router.rib()).passed());
    }
}

#[test]
fn two_stage_direct_pointing_blocks_only_what_the_trie_goes_on_under() {
    // Routes under two /16s: one block each; a /48 below a /32 so that
    // some block entries go on to nodes at depth 28, and a /20 that ends
    // in a block entry.
    let mut rib = Rib6::new();
    for (text, next_hop) in [("2001:db8::/32", 1), ("2001:db8:1::/48", 2), ("2a00::/20", 3), ("3000::/4", 4)] {
        rib.insert(text.parse().unwrap(), next_hop);
    }
    let fib = registry::build("poptrie16x12", &rib, &BuildOptions::default()).unwrap();
    let stats = fib.stats();
    assert_eq!(count(&stats, "blocks"), 2, "{}", stats.report);
    assert_eq!(count(&stats, "first_leaves"), 65_536 - 2);
    assert!(count(&stats, "block_leaves") < 2 * 4096, "{}", stats.report);
    assert_eq!(count(&stats, "bytes_total"), fib.footprint() as u64);
    let addrs = probes(&rib, []);
    assert!(first_mismatch(&rib, &addrs, |addr| fib.lookup(addr)).is_none());
}

#[test]
fn two_stage_direct_pointing_refuses_ipv4_sized_block_counts() {
    // A route in each of 5,000 /16s: 5,000 blocks of 4,096 entries exceed
    // the 2^24 the engine takes.
    let rib: Rib6 = (0..5_000u128).map(|i| (Prefix6::new((0x2000 + i) << 112 | 1 << 90, 40).unwrap(), 1)).collect();
    let Err(BuildError::Limit(refused)) = registry::build("poptrie16x12", &rib, &BuildOptions::default()) else {
        panic!("5,000 blocks built")
    };
    assert_eq!((refused.limit, refused.value, refused.max), (Limit::Chunks, 5_000 * 4_096, 1 << 24));
    assert_eq!(refused.engine, "poptrie16x12");
}
