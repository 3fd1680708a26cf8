//! Memory refused to the engines' builds (issue 48, defect 7): with one
//! fallible allocation refused ([`crate::mem::refuse_nth`], what the system
//! does under a memory limit), the first, the second, and so on until the
//! build gets all it asks for, each engine whose arrays grow with the
//! table fails with [`BuildError::OutOfMemory`] naming it and the array
//! refused, every time. So every fallible allocation a build makes is
//! refused once, and each is the typed error, never a panic. Before the
//! builders allocated fallibly, they did not ask and built.

use std::collections::BTreeSet;

use super::build;
use crate::addr::{Address, Family, Prefix};
use crate::error::BuildError;
use crate::fib::BuildOptions;
use crate::mem::refuse_nth;
use crate::random::XorShift32;
use crate::rib::Rib;

/// The arrays named by the refusals of `engine`'s build from `rib`, each
/// fallible allocation refused in turn, up to the first build that gets
/// all it asks for.
fn refused_arrays<A: Address>(engine: &str, rib: &Rib<A>) -> BTreeSet<&'static str> {
    let mut arrays = BTreeSet::new();
    for nth in 0..10_000 {
        let built = {
            let _refusing = refuse_nth(nth);
            build::<A>(engine, rib, &BuildOptions::default())
        };
        match built {
            Ok(_) => {
                assert!(nth > 0, "{engine} built with its first array refused");
                return arrays;
            }
            Err(BuildError::OutOfMemory { engine: named, array, bytes }) => {
                assert_eq!(named, engine);
                assert!(bytes > 0, "{engine}: an empty {array} refused");
                arrays.insert(array);
            }
            Err(other) => panic!("{engine} with allocation {nth} refused: {other}"),
        }
    }
    panic!("{engine} asked for memory 10,000 times");
}

/// Scattered IPv4 routes: /16s, /20s, /24s (next hops above 255 too, for
/// DXR's long fragments) and /32s, in random places; and dense corners
/// (Luleå's dense chunks): 60 /24s of a /16, 60 /32s of a /24.
fn table4() -> Rib<u32> {
    let mut random = XorShift32::new(48);
    let mut rib = Rib::new();
    for index in 0..6000u32 {
        let len = [16, 20, 24, 24, 32, 32][index as usize % 6];
        rib.insert(Prefix::truncating(random.next(), len), 1 + random.next() % 400);
    }
    for index in 0..60u32 {
        rib.insert(Prefix::truncating(0x0a01_0000 | index << 10, 24), 1 + index);
        rib.insert(Prefix::truncating(0x0a02_0300 | index << 2, 32), 1 + index);
    }
    rib
}

/// IPv6 routes below 40 /16s: /32s, /48s and /64s.
fn table6() -> Rib<u128> {
    let mut random = XorShift32::new(6);
    let mut rib = Rib::new();
    for index in 0..3000u32 {
        let slash16 = 0x2000 + u128::from(random.next() % 40);
        let addr = slash16 << 112 | u128::from(random.next()) << 80 | u128::from(random.next()) << 48;
        let len = [32, 48, 64][index as usize % 3];
        rib.insert(Prefix::truncating(addr, len), 1 + random.next() % 100);
    }
    rib
}

#[test]
fn every_engine_whose_arrays_grow_names_the_array_refused() {
    let ipv4 = table4();
    let poptrie = ["node array", "leaf array"];
    let mut expected: Vec<(&str, Vec<&str>)> = vec![
        ("lctrie", vec!["node array", "alias array"]),
        ("lulea", vec!["leaf list", "level-2 chunk arrays", "level-2 pointer array", "level-3 chunk arrays"]),
        ("treebitmap16", vec!["node array", "result array"]),
        ("treebitmap64", vec!["node array", "result array"]),
        ("sail", vec!["level-16 array", "level-24 array", "level-32 array"]),
        ("sail-wide", vec!["level-16 array", "level-24 array", "level-32 array"]),
        ("sail-runs", vec!["level-16 array", "line array", "level-32 array"]),
        ("dir24-8", vec!["tbl8 of groups"]),
    ];
    for k in 16..=22 {
        let name = ["d16r", "d17r", "d18r", "d19r", "d20r", "d21r", "d22r"][k - 16];
        expected.push((name, vec!["direct table", "short range table", "long range table"]));
    }
    for engine in super::engines().iter().filter(|engine| engine.name.starts_with("poptrie")) {
        let mut arrays = poptrie.to_vec();
        if !engine.name.starts_with("poptrie0") {
            arrays.push("direct array");
        }
        if engine.serves(Family::Ipv4) {
            expected.push((engine.name, arrays));
        }
    }
    for (engine, arrays) in &expected {
        let refused = refused_arrays(engine, &ipv4);
        assert!(arrays.iter().all(|array| refused.contains(array)), "{engine}: {refused:?}");
    }
    let ipv6 = table6();
    for (engine, arrays) in [
        ("poptrie16", vec!["direct array", "node array", "leaf array"]),
        ("poptrie18", vec!["direct array", "node array", "leaf array"]),
        ("poptrie16x12", vec!["node array", "leaf array", "block array"]),
        ("treebitmap64", vec!["node array", "result array"]),
        ("d16r6", vec!["direct table", "range table"]),
        ("d18r6", vec!["direct table", "range table"]),
    ] {
        let refused = refused_arrays(engine, &ipv6);
        assert!(arrays.iter().all(|array| refused.contains(array)), "{engine}: {refused:?}");
    }
}
