//! Every engine on a tiny table of both families, small enough for Miri
//! (`make test-miri`): scalar and batch lookups at every route's edges
//! against the RIB, and each savable engine's file written, checked and
//! opened from its bytes, answering the same; and every in-place engine
//! following a script of updates through the router (the default route's
//! flaps among them), written in place and in atomic batches, with held
//! snapshots answering as their generation. Under Miri the engines whose
//! structure holds a fixed table of 2^19 entries or more (DIR-24-8 and
//! DXR from K = 19) are left out: each build would take minutes to
//! interpret. `FIBKIT_TINY_ENGINES` (names, comma-separated) keeps the
//! pairs that hold one of them (and the in-place engines named, or one
//! family's as `ipv6:poptrie16`), or a pair named as `ipv4/ipv6`
//! (`sail/radix` under Miri, whose list of engines is shorter, so pairs
//! differ), so that Miri can be run an engine or a pair at a time; each
//! says when it is done (`--nocapture` shows it).

use super::{CompileOptions, CompiledTable};
use crate::addr::{Address, Family, Prefix};
use crate::fib::Fib;
use crate::file::FibFile;
use crate::load::RouteTable;
use crate::nexthop::{Label, Mapping};
use crate::random::XorShift32;
use crate::registry::{self, Engine};
use crate::rib::Rib;
use crate::router::{Router, Window};
use crate::update::Update;

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
fn edges<A: Address>(rib: &Rib<A>) -> Vec<A> {
    let mut keys = Vec::new();
    for (prefix, _) in rib.iter() {
        keys.extend([prefix.first(), prefix.last()]);
        keys.extend(prefix.first().checked_prev());
        keys.extend(prefix.last().checked_next());
    }
    keys
}

/// `compiled`'s family `A` answers as the RIB.
fn check<A: Address>(compiled: &CompiledTable, table: &RouteTable, engine: &str) {
    let family = compiled.family_fib::<A>().expect("the table has both families");
    assert!(!family.has_prefixes(), "{engine}: its structure answers next hops");
    answers_as(family.fib(), table.rib(), &edges(table.rib()), engine);
}

/// `fib` answers every key as `rib`, one by one and in a batch.
fn answers_as<A: Address>(fib: &dyn Fib<A>, rib: &Rib<A>, keys: &[A], what: &str) {
    let mut batch = vec![0; keys.len()];
    fib.lookup_batch(keys, &mut batch);
    for (&key, &answer) in keys.iter().zip(&batch) {
        let expected = rib.lookup(key);
        assert_eq!(fib.lookup(key), expected, "{what}: {}", key.display());
        assert_eq!(answer, expected, "{what} batch: {}", key.display());
    }
}

fn engines_of(family: Family) -> Vec<&'static Engine> {
    let included = |engine: &&Engine| !cfg!(miri) || !TOO_LARGE_FOR_MIRI.contains(&engine.name);
    registry::engines().into_iter().filter(|engine| engine.serves(family)).filter(included).collect()
}

/// Whether `FIBKIT_TINY_ENGINES` names one of `engines` (a pair, or one
/// engine), or the pair itself as `ipv4/ipv6`; all are kept when it is
/// unset or empty.
fn chosen(engines: &[&str]) -> bool {
    let pair = engines.join("/");
    named(|name| name == pair || engines.contains(&name))
}

/// Whether `FIBKIT_TINY_ENGINES` names the in-place engine `engine` of
/// `family`: by its name (both families), or as `ipv4:NAME` or
/// `ipv6:NAME` (one family's updates, an hour or more under Miri for some).
fn updates_chosen(engine: &str, family: Family) -> bool {
    let tag = if family == Family::Ipv4 { "ipv4:" } else { "ipv6:" };
    named(|name| name == engine || name.strip_prefix(tag) == Some(engine))
}

/// Whether `FIBKIT_TINY_ENGINES` is unset or empty, or holds a name that
/// `matches`.
fn named(matches: impl Fn(&str) -> bool) -> bool {
    let names = std::env::var("FIBKIT_TINY_ENGINES").unwrap_or_default();
    names.is_empty() || names.split(',').map(str::trim).any(matches)
}

#[test]
fn every_engine_answers_a_tiny_table_and_its_file_answers_the_same() {
    let table = table();
    let (ipv4, ipv6) = (engines_of(Family::Ipv4), engines_of(Family::Ipv6));
    assert!(ipv4.len() >= 10 && ipv6.len() >= 4, "{} and {}", ipv4.len(), ipv6.len());
    // Each IPv4 engine beside each IPv6 one in turn (cycling the shorter list).
    for index in 0..ipv4.len().max(ipv6.len()) {
        let (engine4, engine6) = (ipv4[index % ipv4.len()], ipv6[index % ipv6.len()]);
        if !chosen(&[engine4.name, engine6.name]) {
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

/// A script of updates for family `A`, in batches of 1 to 4: the first
/// update of every fifth batch announces or withdraws the default route;
/// the others announce a prefix inside or around a route of the table or
/// the script, or one anywhere, or withdraw such a route (perhaps gone
/// already).
fn script<A: Address>(table: &RouteTable) -> Vec<Vec<Update<Prefix<A>>>> {
    let mut bits = XorShift32::new(7);
    let mut routed: Vec<Prefix<A>> = table.rib::<A>().iter().map(|(prefix, _)| prefix).collect();
    let mut batches = Vec::new();
    for size in (1..=4).cycle().take(12) {
        let mut batch = Vec::new();
        for _ in 0..size {
            let value = Label::Number(u64::from(bits.next() % 9));
            let update = if batch.is_empty() && batches.len() % 5 == 2 {
                match bits.next() % 2 {
                    0 => Update::Announce { prefix: Prefix::default_route(), value },
                    _ => Update::Withdraw { prefix: Prefix::default_route() },
                }
            } else {
                match bits.next() % 4 {
                    0 | 1 => {
                        let near = routed[bits.next() as usize % routed.len()];
                        let len =
                            (i32::from(near.prefix_len()) + (bits.next() % 9) as i32 - 4).clamp(1, A::BITS.into());
                        Update::Announce { prefix: Prefix::truncating(near.addr(), len as u8), value }
                    }
                    2 => {
                        let len = 1 + (bits.next() % u32::from(A::BITS)) as u8;
                        Update::Announce { prefix: Prefix::truncating(A::from_words(|| bits.next()), len), value }
                    }
                    _ => Update::Withdraw { prefix: routed[bits.next() as usize % routed.len()] },
                }
            };
            if let Update::Announce { prefix, .. } = update {
                routed.push(prefix);
            }
            batch.push(update);
        }
        batches.push(batch);
    }
    batches
}

/// The edges of every route the table or the script holds.
fn script_edges<A: Address>(table: &RouteTable, batches: &[Vec<Update<Prefix<A>>>]) -> Vec<A> {
    let mut all = table.rib::<A>().clone();
    for update in batches.iter().flatten() {
        all.insert(update.prefix(), 1);
    }
    edges(&all)
}

/// Each in-place engine of family `A` follows the script: in place, every
/// batch's answers equal the router's RIB after it; in atomic batches, a
/// snapshot held from the start and one held from halfway still answer
/// as the RIB of their generation when the script has ended.
fn follows_updates<A: Address>(table: &RouteTable) {
    let batches = script::<A>(table);
    let keys = script_edges(table, &batches);
    for engine in engines_of(A::FAMILY).into_iter().filter(|engine| engine.incremental::<A>()) {
        if !updates_chosen(engine.name, A::FAMILY) {
            continue;
        }
        for atomic in [false, true] {
            let what =
                format!("{} {} ({})", A::FAMILY, engine.name, if atomic { "atomic batches" } else { "in place" });
            let rib = table.rib::<A>().clone();
            let mut router = Router::new(engine.name, rib, table.next_hops.clone(), Window::Count(1))
                .unwrap_or_else(|error| panic!("{what}: {error}"));
            router.set_atomic_batches(atomic);
            let reader = router.reader();
            let mut held = vec![(reader.snapshot(), router.rib().clone())];
            for (index, batch) in batches.iter().enumerate() {
                let published = router.apply(batch).unwrap_or_else(|error| panic!("{what}, batch {index}: {error}"));
                if index == batches.len() / 2 {
                    assert_eq!(reader.snapshot().generation(), published.generation, "{what}");
                    held.push((reader.snapshot(), router.rib().clone()));
                }
                answers_as(reader.snapshot().fib(), router.rib(), &keys, &format!("{what}, after batch {index}"));
            }
            if atomic {
                for (snapshot, rib) in &held {
                    let generation = snapshot.generation();
                    answers_as(snapshot.fib(), rib, &keys, &format!("{what}, generation {generation} held"));
                }
            }
            eprintln!("tiny: {what} follows the updates");
        }
    }
}

#[test]
fn every_in_place_engine_follows_updates_and_held_snapshots_keep_their_generation() {
    let table = table();
    follows_updates::<u32>(&table);
    follows_updates::<u128>(&table);
}
