//! Covering queries against a brute-force scan of the routes: the RIB's
//! (`Rib::covering`, `Rib::covered`) and a compiled family's, built and
//! opened from its file, on random tables of both families with nested
//! prefixes, /0, host routes, replacements and withdrawals, and on the
//! real tables when the data folder has them.

mod common;

use std::collections::BTreeMap;

use fibkit::compiled::{default_engine, CompiledFamily, CompiledTable, Values};
use fibkit::file::FibFile;
use fibkit::nexthop::{Mapping, NextHopTable};
use fibkit::random::XorShift32;
use fibkit::{registry, Address, NextHop, Prefix, Rib};
use proptest::prelude::*;

/// The most next hops the random tables use.
const HOPS: NextHop = 300;

/// Routes in address order, the brute force's table.
type Model<A> = BTreeMap<Prefix<A>, NextHop>;

fn brute_covering<A: Address>(model: &Model<A>, query: Prefix<A>) -> Vec<(Prefix<A>, NextHop)> {
    model.iter().filter(|(prefix, _)| prefix.covers(&query)).map(|(&prefix, &hop)| (prefix, hop)).collect()
}

fn brute_covered<A: Address>(model: &Model<A>, query: Prefix<A>) -> Vec<(Prefix<A>, NextHop)> {
    model.iter().filter(|(prefix, _)| query.covers(prefix)).map(|(&prefix, &hop)| (prefix, hop)).collect()
}

/// Insertions (`Some` next hop) and withdrawals applied in order: the RIB
/// and its brute-force model.
fn tables<A: Address>(ops: &[(Prefix<A>, Option<NextHop>)]) -> (Rib<A>, Model<A>) {
    let (mut rib, mut model) = (Rib::new(), Model::new());
    for &(prefix, hop) in ops {
        match hop {
            Some(hop) => {
                rib.insert(prefix, hop);
                model.insert(prefix, hop);
            }
            None => {
                rib.remove(prefix);
                model.remove(&prefix);
            }
        }
    }
    (rib, model)
}

/// The family built with prefixes over `rib` by the family's default
/// engine, and the same opened from its file.
fn compiled<A: Address>(rib: &Rib<A>) -> (CompiledFamily<A>, CompiledTable) {
    let engine = registry::resolve::<A>(default_engine(A::FAMILY)).unwrap();
    let family = CompiledFamily::build(engine, rib, &fibkit::fib::BuildOptions::new(HOPS), true).unwrap();
    let values = Values::new(&NextHopTable::new(Mapping::Modulo(HOPS)));
    let bytes = family.to_file("random", &values).unwrap().to_bytes();
    let opened = CompiledTable::from_file(&FibFile::from_bytes(&bytes, "random.fib").unwrap()).unwrap();
    (family, opened)
}

/// Every query answered alike by the brute force, the RIB, the compiled
/// family and the family opened from its file.
fn check<A: Address>(rib: &Rib<A>, model: &Model<A>, queries: &[Prefix<A>]) -> Result<(), TestCaseError> {
    let (built, table) = compiled(rib);
    let opened = table.family_fib::<A>().unwrap();
    for &query in queries.iter().chain(model.keys()) {
        let expected = brute_covering(model, query);
        prop_assert_eq!(&rib.covering(query).collect::<Vec<_>>(), &expected, "RIB covering {:?}", query);
        prop_assert_eq!(&built.covering(query).unwrap().collect::<Vec<_>>(), &expected, "covering {:?}", query);
        prop_assert_eq!(&opened.covering(query).unwrap().collect::<Vec<_>>(), &expected, "file covering {:?}", query);
        let expected = brute_covered(model, query);
        prop_assert_eq!(&rib.covered(query).collect::<Vec<_>>(), &expected, "RIB covered {:?}", query);
        prop_assert_eq!(&built.covered(query).unwrap().collect::<Vec<_>>(), &expected, "covered {:?}", query);
        prop_assert_eq!(&opened.covered(query).unwrap().collect::<Vec<_>>(), &expected, "file covered {:?}", query);
    }
    Ok(())
}

/// IPv4 prefixes clustered near a few anchors (low 12 bits varying) so
/// that they nest, lengths over 0..=32.
fn prefix4() -> impl Strategy<Value = Prefix<u32>> {
    let anchors = prop::sample::select(vec![0x0a00_0000u32, 0x0a01_0000, 0xc0a8_0000, 0, u32::MAX]);
    (anchors, any::<u32>(), 0u8..=32, any::<bool>()).prop_map(|(anchor, noise, len, near)| {
        Prefix::truncating(if near { anchor ^ (noise & 0xfff) } else { noise }, len)
    })
}

/// IPv6 prefixes clustered as [`prefix4`]'s, 12 varying bits at the top,
/// the middle or the bottom, lengths over 0..=128.
fn prefix6() -> impl Strategy<Value = Prefix<u128>> {
    let anchors = prop::sample::select(vec![0x2001_0db8u128 << 96, 0x2a00u128 << 112, 0, u128::MAX]);
    let shifts = prop::sample::select(vec![0u32, 52, 116]);
    (anchors, shifts, any::<u128>(), 0u8..=128, any::<bool>()).prop_map(|(anchor, shift, noise, len, near)| {
        Prefix::truncating(if near { anchor ^ ((noise & 0xfff) << shift) } else { noise }, len)
    })
}

fn op<A: Address>(prefix: impl Strategy<Value = Prefix<A>>) -> impl Strategy<Value = (Prefix<A>, Option<NextHop>)> {
    (prefix, prop_oneof![4 => (1..=HOPS).prop_map(Some), 1 => Just(None)])
}

/// Host prefixes of addresses near the anchors, and of any address.
fn hosts<A: Address>(prefix: impl Strategy<Value = Prefix<A>>) -> impl Strategy<Value = Prefix<A>> {
    prefix.prop_map(|prefix| Prefix::host(prefix.last()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn ipv4_queries_match_a_scan_of_the_routes(
        ops in prop::collection::vec(op(prefix4()), 1..200),
        prefixes in prop::collection::vec(prefix4(), 32),
        addresses in prop::collection::vec(hosts(prefix4()), 32),
    ) {
        let (rib, model) = tables(&ops);
        prop_assume!(!model.is_empty());
        let queries: Vec<_> = prefixes.into_iter().chain(addresses).chain([Prefix::default_route()]).collect();
        check(&rib, &model, &queries)?;
    }

    #[test]
    fn ipv6_queries_match_a_scan_of_the_routes(
        ops in prop::collection::vec(op(prefix6()), 1..200),
        prefixes in prop::collection::vec(prefix6(), 32),
        addresses in prop::collection::vec(hosts(prefix6()), 32),
    ) {
        let (rib, model) = tables(&ops);
        prop_assume!(!model.is_empty());
        let queries: Vec<_> = prefixes.into_iter().chain(addresses).chain([Prefix::default_route()]).collect();
        check(&rib, &model, &queries)?;
    }
}

/// On a real table: random addresses' covering routes end with their
/// longest match and agree between the RIB and the compiled family (and
/// with a scan for some); the routes inside each of `blocks` (of one
/// length, cutting `outer`) agree, and are together the table's routes
/// inside `outer` no shorter than the blocks.
fn check_real<A: Address>(rib: &Rib<A>, random_address: impl Fn(&mut XorShift32) -> A, outer: Prefix<A>, len: u8) {
    let (family, table) = compiled(rib);
    let opened = table.family_fib::<A>().unwrap();
    let model: Model<A> = rib.iter().collect();
    let mut random = XorShift32::new(45);
    for round in 0..20_000 {
        let host = Prefix::host(random_address(&mut random));
        let covering: Vec<_> = family.covering(host).unwrap().collect();
        assert_eq!(covering.last().copied(), rib.lookup_prefix(host.addr()), "{host:?}");
        assert_eq!(covering, rib.covering(host).collect::<Vec<_>>(), "{host:?}");
        assert_eq!(covering, opened.covering(host).unwrap().collect::<Vec<_>>(), "{host:?}");
        if round % 1000 == 0 {
            assert_eq!(covering, brute_covering(&model, host), "{host:?}");
            let wider = Prefix::truncating(host.addr(), (round / 1000 * 7 % (usize::from(A::BITS) + 1)) as u8);
            assert_eq!(family.covering(wider).unwrap().collect::<Vec<_>>(), brute_covering(&model, wider));
        }
    }
    let blocks = 1u32 << (len - outer.prefix_len());
    let mut listed = 0;
    for index in 0..blocks {
        // `index` in the low word, shifted up to the blocks' length.
        let mut words = 0;
        let low = A::from_words(|| {
            words += 1;
            if words == A::BITS / 32 {
                index
            } else {
                0
            }
        });
        let offset = low << u32::from(A::BITS - len);
        let block = Prefix::truncating(outer.addr() | offset, len);
        let covered: Vec<_> = family.covered(block).unwrap().collect();
        assert_eq!(covered, rib.covered(block).collect::<Vec<_>>(), "{block:?}");
        assert_eq!(covered, opened.covered(block).unwrap().collect::<Vec<_>>(), "{block:?}");
        if index % 16 == 0 {
            assert_eq!(covered, brute_covered(&model, block), "{block:?}");
        }
        listed += covered.len();
    }
    let inside = model.keys().filter(|prefix| outer.covers(prefix) && prefix.prefix_len() >= len).count();
    assert!(inside > 0);
    assert_eq!(listed, inside, "the blocks' routes are those inside {outer:?}");
    let all: Vec<_> = family.covered(Prefix::default_route()).unwrap().collect();
    assert_eq!(all, model.into_iter().collect::<Vec<_>>());
}

#[test]
fn the_2014_table_answers_as_a_scan() {
    let Some(table) = common::routeviews_2014(Mapping::Modulo(HOPS)) else { return };
    check_real(&table.v4, |random| random.next(), Prefix::default_route(), 8);
}

#[test]
fn the_linx_ipv6_table_answers_as_a_scan() {
    let Some(table) = common::linx_ipv6() else { return };
    let rib: Rib<u128> = table.v6.iter().map(|(prefix, hop)| (prefix, hop % HOPS + 1)).collect();
    let random_address = |random: &mut XorShift32| {
        let bits = u128::from(random.next()) << 96 | u128::from(random.next()) << 64 | u128::from(random.next());
        0x2000u128 << 112 | (bits & u128::MAX >> 3)
    };
    check_real(&rib, random_address, "2000::/3".parse().unwrap(), 16);
}
