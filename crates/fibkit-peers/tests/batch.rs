//! The peers' batch lookups (the trait's default loop) answer as their
//! one-by-one lookups, for every batch length 0..=300 and unaligned slices,
//! on a random table and the real 2014 table.

mod common;

use fibkit::addr::Prefix4;
use fibkit::fib::BuildOptions;
use fibkit::load::{self, LoadOptions};
use fibkit::measure::verify;
use fibkit::nexthop::Mapping;
use fibkit::random::XorShift32;
use fibkit::rib::Rib4;
use fibkit_peers::PEERS;

const MAX_LEN: usize = 300;

fn keys_for(rib: &Rib4, seed: u64) -> Vec<u32> {
    let mut rng = XorShift32::new(seed);
    let ranges = rib.ranges(0, u32::MAX);
    (0..2 * (MAX_LEN + 3))
        .map(|index| {
            let range = &ranges[rng.next() as usize % ranges.len()];
            [range.first, range.last, rng.next()][index % 3]
        })
        .collect()
}

fn check(rib: &Rib4, table: &str) {
    let keys = keys_for(rib, 5);
    for spec in PEERS {
        let fib = spec.build(rib, &BuildOptions::new(u32::MAX)).expect("peers accept any table");
        let checked = verify::batches(&keys, MAX_LEN, |key| fib.lookup(key), |keys, out| fib.lookup_batch(keys, out))
            .unwrap_or_else(|mismatch| panic!("{} on {table}: {mismatch:?}", spec.name));
        assert_eq!(checked, (MAX_LEN + 1) * 4);
    }
}

#[test]
fn peers_batch_as_they_look_up_on_a_random_table() {
    let mut rng = XorShift32::new(3);
    let mut rib = Rib4::new();
    rib.insert(Prefix4::truncating(0, 0), 1);
    for _ in 0..2_000 {
        let addr = if rng.next().is_multiple_of(2) { 0x0a00_0000 ^ (rng.next() & 0xffff) } else { rng.next() };
        rib.insert(Prefix4::truncating(addr, (rng.next() % 33) as u8), 1 + rng.next() % 300);
    }
    check(&rib, "a random table");
}

#[test]
fn peers_batch_as_they_look_up_on_the_2014_table() {
    let Some(path) = common::shared_data("routeviews-2014-05-13.ipasn.gz") else { return };
    let table = load::load_path(&path, &LoadOptions { mapping: Mapping::Modulo(239), ..Default::default() }).unwrap();
    check(&table.v4, "the 2014 table");
}
