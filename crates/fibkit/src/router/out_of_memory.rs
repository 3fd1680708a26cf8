//! Relocations refused (issue 48, defect 7). An in-place updater out of
//! room moves to a larger copy of its structure (a relocation), and with
//! atomic batches copies it before every batch
//! ([`Updater::copy_for_batch`]). Here the system refuses that copy's
//! memory ([`crate::mem::refuse_above`]: every fallible allocation above
//! 200 KiB fails, which each copy has an array of, a direct or level-16
//! array at least, and which nothing else a batch of these tables
//! allocates is): the batch fails with [`BuildError::OutOfMemory`] naming
//! the engine, the structure readers are served is the one before the
//! batch and answers as the table before it, and once memory is there
//! again the batch goes through. Before relocations allocated fallibly,
//! they did not ask and relocated.

use std::sync::Arc;

use super::{Router, Update, UpdateError, Window};
use crate::addr::{Address, Prefix};
use crate::error::BuildError;
use crate::fib::{BuildOptions, Fib};
use crate::live::ApplyContext;
use crate::mem::{refuse_above, refuse_nth};
use crate::nexthop::{Label, Mapping, NextHopTable};
use crate::random::XorShift32;
use crate::registry;
use crate::rib::Rib;
use crate::NextHop;

/// Fallible allocations above this many bytes are refused.
const LIMIT: usize = 200 << 10;

/// The engines that update in place, of each family.
const IPV4: [&str; 9] = ["d16r", "d18r", "d22r", "dir24-8", "poptrie16", "poptrie18", "sail", "sail-wide", "sail-runs"];
const IPV6: [&str; 3] = ["poptrie16", "poptrie18", "poptrie16x12"];

/// Batch `batch`'s routes: 512 /32s at random places.
fn routes4(batch: u32) -> Vec<(Prefix<u32>, NextHop)> {
    let mut random = XorShift32::new(u64::from(batch) + 1);
    (0..512).map(|_| (Prefix::truncating(random.next(), 32), 1 + random.next() % 1000)).collect()
}

/// Batch `batch`'s routes: 256 /64s at random places of 2400::/10.
fn routes6(batch: u32) -> Vec<(Prefix<u128>, NextHop)> {
    let mut random = XorShift32::new(u64::from(batch) + 1);
    let mut addr = || {
        let bits = (0..4).fold(0u128, |bits, _| bits << 32 | u128::from(random.next()));
        0x2400u128 << 112 | bits & ((1 << 118) - 1)
    };
    (0..256).map(|index| (Prefix::truncating(addr(), 64), 1 + index % 1000)).collect()
}

/// `fib` answers as `rib` at both ends of every range.
fn answers_as<A: Address>(fib: &dyn Fib<A>, rib: &Rib<A>) {
    for range in rib.ranges(A::ZERO, A::MAX) {
        for addr in [range.first, range.last] {
            assert_eq!(fib.lookup(addr), range.next_hop, "{} at {addr:?}", fib.name());
        }
    }
}

fn same(one: &Arc<dyn Fib<impl Address>>, other: &Arc<dyn Fib<impl Address>>) -> bool {
    std::ptr::addr_eq(Arc::as_ptr(one), Arc::as_ptr(other))
}

/// `engine`'s updater, batches of `routes` applied with every generation
/// held by a reader (nothing reclaimed) and relocations refused: the
/// first batch that needs one fails as the module docs say; then, memory
/// back, it goes through.
fn refused_relocation<A: Address>(engine: &str, routes: impl Fn(u32) -> Vec<(Prefix<A>, NextHop)>) {
    let mut rib: Rib<A> = routes(0).into_iter().collect();
    let options = BuildOptions::new(1000);
    let mut updater = registry::updater::<A>(engine, &rib, &options).unwrap();
    for batch in 1..100 {
        let (before, old) = (updater.fib(), rib.clone());
        let changed: Vec<Prefix<A>> = routes(batch)
            .into_iter()
            .map(|(prefix, next_hop)| {
                rib.insert(prefix, next_hop);
                prefix
            })
            .collect();
        let context = ApplyContext { published: u64::from(batch), oldest_held: 0, max_next_hop: 1000 };
        let outcome = {
            let _refusing = refuse_above(LIMIT);
            updater.apply(&rib, &changed, context)
        };
        match outcome {
            Ok(applied) => assert!(!applied.relocated && !applied.rebuilt, "{engine}: {applied:?}"),
            Err(BuildError::OutOfMemory { engine: named, array, bytes }) => {
                assert_eq!(named, engine);
                assert!(bytes > LIMIT as u64, "{engine}: {array} of {bytes} bytes");
                assert!(same(&before, &updater.fib()), "{engine}: the structure served was replaced");
                answers_as(&*before, &old);
                updater.apply(&rib, &changed, context).unwrap();
                answers_as(&*updater.fib(), &rib);
                return;
            }
            Err(other) => panic!("{engine}: {other}"),
        }
    }
    panic!("{engine} never relocated");
}

#[test]
fn a_relocation_refused_fails_its_batch_and_leaves_the_structure_served() {
    for engine in IPV4 {
        refused_relocation::<u32>(engine, routes4);
    }
    for engine in IPV6 {
        refused_relocation::<u128>(engine, routes6);
    }
}

/// `engine`'s copy for an atomic batch refused: nothing changes; then
/// made, it is a new structure answering as the table.
fn refused_copy<A: Address>(engine: &str, rib: &Rib<A>) {
    let mut updater = registry::updater::<A>(engine, rib, &BuildOptions::default()).unwrap();
    let before = updater.fib();
    let refused = {
        let _refusing = refuse_above(LIMIT);
        updater.copy_for_batch()
    };
    let Err(BuildError::OutOfMemory { engine: named, .. }) = refused else { panic!("{engine}: {refused:?}") };
    assert_eq!(named, engine);
    assert!(same(&before, &updater.fib()), "{engine}: the structure served was replaced");
    assert!(updater.copy_for_batch().unwrap() > 0, "{engine}");
    assert!(!same(&before, &updater.fib()), "{engine}: no copy");
    answers_as(&*updater.fib(), rib);
}

#[test]
fn a_copy_for_an_atomic_batch_refused_changes_nothing() {
    let rib4: Rib<u32> = routes4(0).into_iter().collect();
    for engine in IPV4 {
        refused_copy(engine, &rib4);
    }
    let rib6: Rib<u128> = routes6(0).into_iter().collect();
    for engine in IPV6 {
        refused_copy(engine, &rib6);
    }
}

/// The router takes a copy refused as an engine's failure: the update is
/// rejected, naming the engine, the RIB rolled back, nothing published.
#[test]
fn the_router_rejects_an_atomic_batch_whose_copy_is_refused() {
    let rib: Rib<u32> = routes4(0).into_iter().collect();
    let mut router = Router::new("d18r", rib, NextHopTable::new(Mapping::Modulo(100)), Window::Count(1)).unwrap();
    router.set_atomic_batches(true);
    let prefix = Prefix::truncating(0x0a0b_0c0d, 32);
    let update = Update::Announce { prefix, value: Label::Number(7) };
    let refused = {
        let _refusing = refuse_above(LIMIT);
        router.apply(&[update])
    };
    let Err(UpdateError::Engine { index: 0, error, .. }) = refused else { panic!("{refused:?}") };
    assert!(matches!(*error, BuildError::OutOfMemory { ref engine, .. } if engine == "d18r"), "{error}");
    assert_eq!((router.generation(), router.rib().get(prefix)), (0, None));
    answers_as(router.reader().snapshot().fib(), router.rib());
    let published = router.apply(&[update]).unwrap();
    assert_eq!(published.generation, 1);
    assert_eq!(router.reader().lookup(0x0a0b_0c0d), 8);
}

/// Each fallible allocation of `engine`'s relocations refused in turn (a
/// fresh updater brought to the relocating batch each time), relocation
/// after relocation until one names `wanted`: every refusal fails the batch
/// and leaves the structure served. Returns the arrays named.
fn every_allocation_of_a_relocation<A: Address>(
    engine: &str,
    routes: impl Fn(u32) -> Vec<(Prefix<A>, NextHop)>,
    wanted: &str,
) -> Vec<String> {
    let context = |batch: u32| ApplyContext { published: u64::from(batch), oldest_held: 0, max_next_hop: 1000 };
    // The updater and RIB after `batches` batches, and the RIB and the
    // prefixes of the next.
    let at = |batches: u32| {
        let mut rib: Rib<A> = routes(0).into_iter().collect();
        let mut updater = registry::updater::<A>(engine, &rib, &BuildOptions::new(1000)).unwrap();
        for batch in 1..=batches {
            let changed: Vec<Prefix<A>> =
                routes(batch).into_iter().map(|(prefix, hop)| (rib.insert(prefix, hop), prefix).1).collect();
            updater.apply(&rib, &changed, context(batch)).unwrap();
        }
        let old = rib.clone();
        let changed: Vec<Prefix<A>> =
            routes(batches + 1).into_iter().map(|(prefix, hop)| (rib.insert(prefix, hop), prefix).1).collect();
        (updater, old, rib, changed)
    };
    let mut named = Vec::new();
    for relocating in 0..100 {
        let (mut updater, _, rib, changed) = at(relocating);
        match updater.apply(&rib, &changed, context(relocating + 1)) {
            Ok(applied) if applied.relocated => {}
            Ok(_) => continue,
            // The table outgrew the engine before `wanted` was named.
            Err(_) => break,
        }
        for nth in 0.. {
            assert!(nth < 10_000, "{engine}: more than 10,000 allocations in one relocation");
            let (mut updater, old, rib, changed) = at(relocating);
            let before = updater.fib();
            let outcome = {
                let _refusing = refuse_nth(nth);
                updater.apply(&rib, &changed, context(relocating + 1))
            };
            match outcome {
                Ok(_) => break,
                Err(BuildError::OutOfMemory { engine: refused, array, .. }) => {
                    assert_eq!(refused, engine);
                    assert!(
                        same(&before, &updater.fib()),
                        "{engine}, {array} refused: the structure served was replaced"
                    );
                    answers_as(&*before, &old);
                    named.push(array.to_string());
                }
                Err(other) => panic!("{engine}: {other}"),
            }
        }
        if named.iter().any(|array| array == wanted) {
            break;
        }
    }
    named
}

/// Found by review: the updaters of DXR and of Poptrie's expanded form
/// grew their bookkeeping (a word a chunk or block) infallibly after the
/// copy; a refusal there now fails the batch as the copy's own would.
#[test]
fn every_allocation_of_a_relocation_refused_in_turn_leaves_the_structure_served() {
    let bookkeeping = "range-table bookkeeping";
    let dxr = every_allocation_of_a_relocation::<u32>("d18r", routes4, bookkeeping);
    assert!(dxr.iter().any(|array| array == bookkeeping), "d18r: {dxr:?}");
    // /32s all over 2000::/3, each a block of its own /16 (those of
    // `routes6`, in 2400::/10, share 64 blocks, which the first copy has).
    let spread = |batch: u32| {
        let mut random = XorShift32::new(u64::from(batch) + 7);
        let mut prefix = || Prefix::truncating(0x2000u128 << 112 | u128::from(random.next() & 0x1fff_ffff) << 96, 32);
        (0..256).map(|index| (prefix(), 1 + index % 1000)).collect()
    };
    let bookkeeping = "block bookkeeping";
    let expanded = every_allocation_of_a_relocation::<u128>("poptrie16x12", spread, bookkeeping);
    assert!(expanded.iter().any(|array| array == bookkeeping), "poptrie16x12: {expanded:?}");
}
