//! Compiled FIB files of the real tables (when the shared data is present):
//! every engine with a file format, saved and mapped back from disk,
//! answers as the RIB at every range boundary and at random addresses, its
//! arrays read in place; with prefixes, the matched route too. The
//! embedded default table stands in when the shared data is absent; an
//! engine whose typed limit refuses it is then left out, said on stderr.

mod common;

use fibkit::compiled::{CompileOptions, CompiledTable};
use fibkit::load::RouteTable;
use fibkit::measure::verify::{self, Space};
use fibkit::nexthop::Mapping;
use fibkit::{registry, Address, Family, Rib};

/// A copy of `table` (the compiled table consumes its routes).
fn copy(table: &RouteTable) -> RouteTable {
    let mut copy = RouteTable::new(&table.name, table.next_hops.mapping());
    (copy.v4, copy.v6, copy.next_hops) = (table.v4.clone(), table.v6.clone(), table.next_hops.clone());
    copy
}

/// Saves `table` compiled by `engine` (with `prefixes`) to a file, opens it
/// from disk, and checks family `A` against the RIB. On a table standing
/// in for the real one, an engine's typed limit leaves it out
/// ([`common::unless_limit`]).
fn check_file<A: Address>(table: &RouteTable, stand_in: bool, engine: &str, prefixes: bool, random: u64) {
    let options = CompileOptions { engines: vec![engine.to_string()], prefixes, ..Default::default() };
    let Some(compiled) = common::unless_limit(engine, CompiledTable::build(copy(table), &options), stand_in) else {
        return;
    };
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("table.fib");
    compiled.to_file().unwrap().write(&path).unwrap();
    let opened = CompiledTable::open(&path).unwrap_or_else(|error| panic!("{engine}: {error}"));
    let family = opened.family_fib::<A>().unwrap();
    assert_eq!(family.fib().name(), engine);
    let rib: &Rib<A> = table.rib::<A>();
    if !prefixes {
        let report = verify::boundaries(family.fib(), rib);
        assert!(report.checked > rib.len() as u64 / 2 && report.passed(), "{engine}: {report:?}");
        let report = verify::random(family.fib(), rib, Space::Anywhere, random, 19);
        assert!(report.passed(), "{engine}: {report:?}");
        return;
    }
    // With prefixes the FIB answers route numbers: the route gives prefix
    // and next hop, checked against the RIB's longest match.
    for range in rib.ranges(A::ZERO, A::MAX) {
        for key in [range.first, range.last] {
            let answer = family.fib().lookup(key);
            let expected = rib.lookup_prefix(key);
            assert_eq!(family.route(answer), expected, "{engine} at {}", key.display());
            assert_eq!(family.next_hop(answer), expected.map_or(0, |(_, hop)| hop));
        }
    }
}

fn savable(family: Family) -> Vec<&'static str> {
    registry::engines_of(family)
        .into_iter()
        .filter(|engine| match family {
            Family::Ipv4 => engine.savable::<u32>(),
            Family::Ipv6 => engine.savable::<u128>(),
        })
        .map(|engine| engine.name)
        .collect()
}

#[test]
fn every_savable_ipv4_engine_answers_the_2014_table_from_its_file() {
    let (table, stand_in) = common::routeviews_2014_or_default(Mapping::Distinct);
    let (table_239, _) = common::routeviews_2014_or_default(Mapping::Modulo(239));
    let engines = savable(Family::Ipv4);
    assert_eq!(engines.len(), 14, "{engines:?}");
    for engine in engines {
        // sail's and sail-runs' 15-bit next hops cannot hold the 2014
        // table's 46,823 origin ASNs: they get the same routes with 239
        // next hops.
        let table = if matches!(engine, "sail" | "sail-runs") { &table_239 } else { &table };
        check_file::<u32>(table, stand_in, engine, false, 200_000);
    }
    check_file::<u32>(&table, stand_in, "d18r", true, 0);
    check_file::<u32>(&table, stand_in, "poptrie18", true, 0);
    check_file::<u32>(&table, stand_in, "sail-wide", true, 0);
}

#[test]
fn every_savable_ipv6_engine_answers_the_linx_table_from_its_file() {
    let Some(table) = common::linx_ipv6() else { return };
    let engines = savable(Family::Ipv6);
    assert_eq!(engines, ["poptrie0", "poptrie16", "poptrie18", "poptrie16x12"]);
    for engine in engines {
        check_file::<u128>(&table, false, engine, false, 100_000);
    }
    check_file::<u128>(&table, false, "poptrie18", true, 0);
}
