//! Every engine on a tiny table of both families, small enough for Miri
//! (`make test-miri`): scalar and batch lookups at every route's edges
//! against the RIB, and each savable engine's file written, checked and
//! opened from its bytes, answering the same. Under Miri the engines whose
//! structure holds a fixed table of 2^19 entries or more (DIR-24-8 and
//! DXR from K = 19) are left out: each build would take minutes to
//! interpret. `FIBKIT_TINY_ENGINES` (names, comma-separated) keeps the
//! pairs that hold one of them, so that Miri can be run an engine at a
//! time; each pair says when it is done (`--nocapture` shows it).

use super::{CompileOptions, CompiledTable};
use crate::addr::{Address, Family, Prefix};
use crate::file::FibFile;
use crate::load::RouteTable;
use crate::nexthop::{Label, Mapping};
use crate::random::XorShift32;
use crate::registry::{self, Engine};

/// Engines too large to interpret.
const TOO_LARGE_FOR_MIRI: &[&str] = &["dir24-8", "d19r", "d20r", "d21r", "d22r"];

fn table() -> RouteTable {
    let mut table = RouteTable::new("tiny", Mapping::Distinct);
    let mut bits = XorShift32::new(48);
    for index in 0..40u32 {
        let hop = table.next_hops.intern(Label::Number(u64::from(index % 7)));
        let len = 8 + (bits.next() % 25) as u8;
        table.v4.insert(Prefix::truncating(bits.next(), len), hop);
        let wide = u128::from(bits.next()) << 96 | u128::from(bits.next()) << 64;
        table.v6.insert(Prefix::truncating(0x2001 << 112 | wide >> 16, 16 + (bits.next() % 49) as u8), hop);
    }
    let default = table.next_hops.intern(Label::Number(99));
    table.v4.insert(Prefix::default_route(), default);
    table
}

/// Every route's first and last address and their neighbours.
fn edges<A: Address>(table: &RouteTable) -> Vec<A> {
    let mut keys = Vec::new();
    for (prefix, _) in table.rib::<A>().iter() {
        keys.extend([prefix.first(), prefix.last()]);
        keys.extend(prefix.first().checked_prev());
        keys.extend(prefix.last().checked_next());
    }
    keys
}

/// `compiled`'s family `A` answers as the RIB, one by one and in a batch.
fn check<A: Address>(compiled: &CompiledTable, table: &RouteTable, engine: &str) {
    let family = compiled.family_fib::<A>().expect("the table has both families");
    let keys = edges::<A>(table);
    let mut batch = vec![0; keys.len()];
    family.lookup_batch(&keys, &mut batch);
    for (&key, &answer) in keys.iter().zip(&batch) {
        let expected = table.rib::<A>().lookup(key);
        assert_eq!(family.lookup(key), expected, "{engine}: {}", key.display());
        assert_eq!(answer, expected, "{engine} batch: {}", key.display());
    }
}

fn engines_of(family: Family) -> Vec<&'static Engine> {
    let included = |engine: &&Engine| !cfg!(miri) || !TOO_LARGE_FOR_MIRI.contains(&engine.name);
    registry::engines().into_iter().filter(|engine| engine.serves(family)).filter(included).collect()
}

/// Whether the pair is one `FIBKIT_TINY_ENGINES` keeps (all when unset).
fn chosen(pair: [&str; 2]) -> bool {
    std::env::var("FIBKIT_TINY_ENGINES").map_or(true, |names| names.split(',').any(|name| pair.contains(&name.trim())))
}

#[test]
fn every_engine_answers_a_tiny_table_and_its_file_answers_the_same() {
    let table = table();
    let (ipv4, ipv6) = (engines_of(Family::Ipv4), engines_of(Family::Ipv6));
    assert!(ipv4.len() >= 10 && ipv6.len() >= 4, "{} and {}", ipv4.len(), ipv6.len());
    // Each IPv4 engine beside each IPv6 one in turn (cycling the shorter list).
    for index in 0..ipv4.len().max(ipv6.len()) {
        let (engine4, engine6) = (ipv4[index % ipv4.len()], ipv6[index % ipv6.len()]);
        if !chosen([engine4.name, engine6.name]) {
            continue;
        }
        let engines = vec![engine4.name.to_string(), engine6.name.to_string()];
        let compiled = CompiledTable::build(table.clone(), &CompileOptions { engines, ..Default::default() })
            .unwrap_or_else(|error| panic!("{} and {}: {error}", engine4.name, engine6.name));
        check::<u32>(&compiled, &table, engine4.name);
        check::<u128>(&compiled, &table, engine6.name);
        if engine4.savable::<u32>() && engine6.savable::<u128>() {
            let bytes = compiled.to_file().unwrap().to_bytes();
            let file = FibFile::from_bytes(&bytes, "tiny.fib").unwrap();
            file.verify_payload().unwrap();
            let opened = CompiledTable::from_file(&file).unwrap();
            check::<u32>(&opened, &table, engine4.name);
            check::<u128>(&opened, &table, engine6.name);
        }
        eprintln!("tiny: {} and {} answer as the RIB", engine4.name, engine6.name);
    }
}
