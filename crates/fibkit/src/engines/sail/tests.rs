//! SAIL's levels on small tables, and its limits.

use std::sync::atomic::Ordering;

use super::*;
use crate::addr::Prefix4;
use crate::error::{BuildError, Limit};
use crate::rib::rib_of;

fn ip(text: &str) -> u32 {
    text.parse::<std::net::Ipv4Addr>().unwrap().into()
}

/// Every address of the table's ranges' edges and middles answers as the
/// RIB does, scalar and batched.
fn assert_matches<W: Word>(sail: &Sail<W>, rib: &Rib4) {
    let mut keys = Vec::new();
    for range in rib.ranges(0, u32::MAX) {
        keys.extend([range.first, range.last, range.first + (range.last - range.first) / 2]);
    }
    for &key in &keys {
        assert_eq!(sail.lookup(key), rib.lookup(key), "{} at {key:#010x}", W::NAME);
    }
    let mut out = vec![0; keys.len()];
    sail.lookup_batch(&keys, &mut out);
    for (&key, &got) in keys.iter().zip(&out) {
        assert_eq!(got, rib.lookup(key), "{} batch at {key:#010x}", W::NAME);
    }
}

#[test]
fn levels_hold_next_hops_or_chunks() {
    let table = rib_of(&[
        ("0.0.0.0/0", 1),
        ("10.0.0.0/8", 2),
        ("10.1.0.0/16", 3),
        ("10.2.0.0/20", 4),
        ("10.2.3.0/24", 5),
        ("10.2.3.128/25", 6),
        ("10.2.3.7/32", 7),
        ("255.255.255.255/32", 8),
    ]);
    let sail = Sail::<u16>::build(&table).unwrap();
    // Chunks where longer routes lie: 10.2/16 and 255.255/16 at level 24;
    // 10.2.3/24 and 255.255.255/24 at level 32.
    assert_eq!((sail.chunks_24(), sail.chunks_32()), (2, 2));
    assert_eq!(u16::load(&sail.bcn16[ip("10.1.0.0") as usize >> 16], Ordering::Relaxed), 3);
    assert_eq!(u16::load(&sail.bcn16[ip("10.3.0.0") as usize >> 16], Ordering::Relaxed), 2);
    assert_eq!(u16::load(&sail.bcn16[0x0a02], Ordering::Relaxed), 0x8000, "the first chunk, in address order");
    assert_eq!(u16::load(&sail.bcn16[0xffff], Ordering::Relaxed), 0x8001);
    // 10.2.4.0/24 lies under the /20 (pushed to 24), 10.2.16.0/24 under the /8.
    assert_eq!(u16::load(&sail.bcn24[4], Ordering::Relaxed), 4);
    assert_eq!(u16::load(&sail.bcn24[16], Ordering::Relaxed), 2);
    assert_eq!(u16::load(&sail.bcn24[3], Ordering::Relaxed), 0x8000);
    assert_eq!(sail.lookup(ip("10.2.3.7")), 7);
    assert_eq!(sail.lookup(ip("10.2.3.8")), 5);
    assert_eq!(sail.lookup(ip("10.2.3.200")), 6);
    assert_eq!(sail.lookup(ip("255.255.255.254")), 1);
    assert_eq!(sail.lookup(u32::MAX), 8);
    assert_matches(&sail, &table);
    assert_matches(&Sail::<u32>::build(&table).unwrap(), &table);
    assert_eq!(sail.footprint(), (65_536 + 2 * 256 + 2 * 256) * 2);
}

#[test]
fn chunks_depend_on_routes_not_on_next_hops() {
    // A /24 with the next hop of its /16 still makes a chunk, as in SAIL.
    let table = rib_of(&[("10.0.0.0/16", 1), ("10.0.5.0/24", 1)]);
    let sail = Sail::<u16>::build(&table).unwrap();
    assert_eq!((sail.chunks_24(), sail.chunks_32()), (1, 0));
    assert_matches(&sail, &table);
}

#[test]
fn empty_table_and_default_route() {
    let empty = Rib4::new();
    let sail = Sail::<u16>::build(&empty).unwrap();
    assert_eq!(sail.lookup(0x0102_0304), crate::NO_ROUTE);
    assert_eq!(sail.footprint(), 65_536 * 2);
    let table = rib_of(&[("0.0.0.0/0", 9)]);
    assert_matches(&Sail::<u16>::build(&table).unwrap(), &table);
}

#[test]
fn the_15_bit_chunk_id_limit_is_refused_and_sail_wide_takes_it() {
    // A /24 in each of 2^15 + 1 different /16s: one level-24 chunk too many.
    let mut table = Rib4::new();
    for slash16 in 0..=0x8000u32 {
        table.insert(Prefix4::new(slash16 << 16 | 0x0100, 24).unwrap(), 1 + slash16 % 5);
    }
    let Err(BuildError::Limit(error)) = Sail::<u16>::build(&table) else { panic!("sail took the table") };
    assert_eq!((error.limit, error.value, error.max), (Limit::Chunks, 32_769, 32_768));
    assert_eq!(
        error.to_string(),
        "sail: chunk count 32769 exceeds the 15-bit chunk ID of a level-16 entry (at most 32768); the sail-wide engine has no such limit"
    );
    let wide = Sail::<u32>::build(&table).unwrap();
    assert_eq!(wide.chunks_24(), 32_769);
    assert_matches(&wide, &table);
    // Exactly 2^15 chunks fit.
    table.remove(Prefix4::new(0x8000 << 16 | 0x0100, 24).unwrap());
    assert_eq!(Sail::<u16>::build(&table).unwrap().chunks_24(), 32_768);
}

#[test]
fn the_15_bit_chunk_id_limit_of_level_24_too() {
    // A /25 in each of 2^15 + 1 /24s (of 129 /16s): one level-32 chunk too many.
    let mut table = Rib4::new();
    for slash24 in 0..=0x8000u32 {
        table.insert(Prefix4::new(0x0a00_0000 + (slash24 << 8), 25).unwrap(), 2);
    }
    let Err(BuildError::Limit(error)) = Sail::<u16>::build(&table) else { panic!("sail took the table") };
    assert_eq!((error.limit, error.value, error.max), (Limit::Chunks, 32_769, 32_768));
    assert!(error.to_string().contains("the 15-bit chunk ID of a level-24 entry"), "{error}");
    let wide = Sail::<u32>::build(&table).unwrap();
    assert_eq!((wide.chunks_24(), wide.chunks_32()), (129, 32_769));
    assert_matches(&wide, &table);
}

#[test]
fn next_hops_beyond_15_bits_are_refused() {
    let table = rib_of(&[("10.0.0.0/8", 0x7fff), ("10.1.2.3/32", 3)]);
    assert_matches(&Sail::<u16>::build(&table).unwrap(), &table);
    let table = rib_of(&[("10.0.0.0/8", 0x8000)]);
    let Err(BuildError::Limit(error)) = Sail::<u16>::build(&table) else { panic!("sail took the table") };
    assert_eq!((error.limit, error.value, error.max), (Limit::NextHop, 0x8000, 0x7fff));
    assert!(error.to_string().contains("the 15-bit next hop of an entry"), "{error}");
    assert_matches(&Sail::<u32>::build(&table).unwrap(), &table);
}

#[test]
fn batches_of_every_length() {
    let table = rib_of(&[("10.0.0.0/8", 2), ("10.2.0.0/24", 4), ("10.2.0.0/30", 5)]);
    let sail = Sail::<u16>::build(&table).unwrap();
    let keys: Vec<u32> = (0..100u32).map(|i| ip("10.2.0.0") + i % 7 + (i / 7) * 0x100).collect();
    for length in 0..keys.len() {
        let mut out = vec![u32::MAX; length];
        sail.lookup_batch(&keys[..length], &mut out);
        assert!(keys[..length].iter().zip(&out).all(|(&key, &got)| got == table.lookup(key)), "length {length}");
    }
}
