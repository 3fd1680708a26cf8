//! Batch lookups (`lookup_batch`) answer exactly as one-by-one lookups, for
//! every engine, every batch length 0..=300, unaligned slices, and every
//! SIMD level the CPU has (scalar included, switched in-process through
//! `fibkit::simd::set_level`), on random tables and the real 2014 table.
//! The `FIBKIT_SIMD=off` environment switch is checked in a child process.

mod common;

use fibkit::addr::{Address, Prefix4, Prefix6};
use fibkit::fib::{BuildOptions, Fib};
use fibkit::measure::verify;
use fibkit::nexthop::Mapping;
use fibkit::random::XorShift32;
use fibkit::registry;
use fibkit::rib::{Rib4, Rib6};
use fibkit::simd::{self, Level};
use fibkit::Family;
use fibkit::NextHop;

/// Longest batch checked.
const MAX_LEN: usize = 300;

/// The levels to check: every one the CPU runs.
fn levels() -> Vec<Level> {
    let levels: Vec<Level> =
        [Level::Scalar, Level::Avx2, Level::Avx512].into_iter().filter(|&level| level <= simd::detected()).collect();
    if levels.len() < 3 {
        eprintln!("note: this CPU runs SIMD levels up to {} only", simd::detected().name());
    }
    levels
}

/// Keys that reach every kind of answer: the first and last address of
/// ranges of `rib` (so range searches and deep trie nodes are hit), their
/// neighbours, and random addresses, shuffled together.
fn keys_for(rib: &Rib4, seed: u64) -> Vec<u32> {
    let mut rng = XorShift32::new(seed);
    let ranges = rib.ranges(0, u32::MAX);
    let mut keys = Vec::new();
    while keys.len() < 3 * (MAX_LEN + 3) {
        let range = &ranges[rng.next() as usize % ranges.len()];
        keys.push(range.first);
        keys.push(range.last);
        keys.push(range.first.wrapping_sub(1));
        keys.push(rng.next());
    }
    for index in (1..keys.len()).rev() {
        keys.swap(index, rng.next() as usize % (index + 1));
    }
    keys
}

/// Checks `fib`'s batches on `keys` at every level (either family).
fn check<A: Address>(fib: &dyn Fib<A>, keys: &[A], table: &str) {
    for level in levels() {
        // Other tests of this binary may flip the level concurrently: any
        // level must give the same answers, so that only adds coverage.
        simd::set_level(level);
        let checked = verify::batches(keys, MAX_LEN, |key| fib.lookup(key), |keys, out| fib.lookup_batch(keys, out))
            .unwrap_or_else(|mismatch| panic!("{} on {table} at {level:?}: {mismatch:?}", fib.name()));
        assert_eq!(checked, (MAX_LEN + 1) * 4);
    }
}

/// A random table: prefixes nested around a few anchors (lengths 0..=32,
/// with /0 and /32), some replaced and withdrawn; next hops up to `widest`.
fn random_rib(seed: u64, widest: NextHop) -> Rib4 {
    let mut rng = XorShift32::new(seed);
    let anchors = [0x0a00_0000u32, 0x0a01_0000, 0xc0a8_0000, 0, u32::MAX, 0x8000_0000];
    let mut rib = Rib4::new();
    rib.insert(Prefix4::truncating(0, 0), 1 + rng.next() % widest);
    let mut inserted = Vec::new();
    for _ in 0..3_000 {
        let anchor = anchors[rng.next() as usize % anchors.len()];
        let noise = rng.next();
        let addr = if rng.next().is_multiple_of(2) { anchor ^ (noise & 0xffff) } else { noise };
        let prefix = Prefix4::truncating(addr, (rng.next() % 33) as u8);
        rib.insert(prefix, 1 + rng.next() % widest);
        inserted.push(prefix);
    }
    for _ in 0..300 {
        rib.remove(inserted[rng.next() as usize % inserted.len()]);
    }
    for anchor in anchors {
        rib.insert(Prefix4::truncating(anchor, 32), 1 + rng.next() % widest);
    }
    rib
}

fn max_next_hop(rib: &Rib4) -> NextHop {
    rib.iter().map(|(_, next_hop)| next_hop).max().unwrap_or(0)
}

#[test]
fn every_engine_batches_as_it_looks_up_on_random_tables() {
    // Narrow next hops (every engine builds) and wide ones (DXR's wide
    // chunks; engines with narrower next-hop fields may refuse).
    for (seed, widest) in [(1, 4), (2, 250), (3, 300), (4, 200_000)] {
        let rib = random_rib(seed, widest);
        let options = BuildOptions::new(max_next_hop(&rib));
        let keys = keys_for(&rib, seed);
        let mut built = 0;
        for spec in registry::engines_of(Family::Ipv4) {
            match spec.build(&rib, &options) {
                Ok(fib) => {
                    check(fib.as_ref(), &keys, &format!("random table {seed}"));
                    built += 1;
                }
                Err(error) if widest > 65_535 => eprintln!("{}: refuses random table {seed}: {error}", spec.name),
                Err(error) => panic!("{}: {error}", spec.name),
            }
        }
        assert!(built >= 8, "only {built} engines built random table {seed}");
    }
}

#[test]
fn every_engine_batches_as_it_looks_up_on_the_2014_table() {
    let Some(table) = common::routeviews_2014(Mapping::Modulo(239)) else { return };
    let options = BuildOptions::new(max_next_hop(&table.v4));
    let keys = keys_for(&table.v4, 2014);
    for spec in registry::engines_of(Family::Ipv4) {
        let fib = spec.build(&table.v4, &options).unwrap_or_else(|error| panic!("{error}"));
        check(fib.as_ref(), &keys, "the 2014 table");
    }
}

#[test]
fn long_batches_match_too() {
    // Batches much longer than the pipelines' rounds, with odd lengths.
    let rib = random_rib(9, 300);
    let options = BuildOptions::new(max_next_hop(&rib));
    let mut keys = keys_for(&rib, 9);
    let mut rng = XorShift32::new(99);
    keys.extend((0..10_000).map(|_| rng.next()));
    for name in ["d16r", "d20r", "poptrie0", "poptrie18", "dir24-8", "lulea", "sail", "sail-runs"] {
        let fib = registry::build(name, &rib, &options).unwrap();
        let want: Vec<NextHop> = keys.iter().map(|&key| fib.lookup(key)).collect();
        for level in levels() {
            simd::set_level(level);
            for len in [keys.len(), keys.len() - 1, 4_097] {
                let mut out = vec![verify::BATCH_UNTOUCHED; len];
                fib.lookup_batch(&keys[..len], &mut out);
                assert!(out == want[..len], "{name} at {level:?}, {len} keys");
            }
        }
    }
}

#[test]
#[should_panic(expected = "output shorter than keys")]
fn a_short_output_is_refused() {
    let rib = random_rib(5, 10);
    let fib = registry::build("d18r", &rib, &BuildOptions::new(10)).unwrap();
    fib.lookup_batch(&[1, 2, 3], &mut [0; 2]);
}

/// A random IPv6 table around a few /32s, with /0 and /128 routes.
fn random_rib6(seed: u64) -> Rib6 {
    let mut rng = XorShift32::new(seed);
    let mut next = || (u128::from(rng.next()) << 96) | (u128::from(rng.next()) << 64) | u128::from(rng.next());
    let anchors = [0x2001_0db8u128 << 96, 0x2a00_1450u128 << 96, 0x2600u128 << 112];
    let mut rib = Rib6::new();
    rib.insert(Prefix6::new(0, 0).unwrap(), 1);
    for index in 0..2_000u32 {
        let anchor = anchors[index as usize % anchors.len()];
        let noise = next();
        let addr = if index % 3 == 0 { noise } else { anchor ^ (noise >> (index % 64)) };
        let prefix_len = [16, 32, 48, 56, 64, 96, 127, 128][(noise % 8) as usize] as u8;
        let masked = addr & (u128::MAX << (128 - u32::from(prefix_len)));
        rib.insert(Prefix6::new(masked, prefix_len).unwrap(), 1 + index % 200);
    }
    rib
}

fn keys6_for(rib: &Rib6, seed: u64) -> Vec<u128> {
    let mut rng = XorShift32::new(seed);
    let routes: Vec<_> = rib.iter().collect();
    (0..3 * (MAX_LEN + 3))
        .map(|index| {
            let (prefix, _) = routes[rng.next() as usize % routes.len()];
            let noise = (u128::from(rng.next()) << 64) | u128::from(rng.next());
            match index % 3 {
                0 => prefix.addr(),
                1 => prefix.addr() | noise.checked_shr(u32::from(prefix.prefix_len())).unwrap_or(0),
                _ => noise << 32 | noise,
            }
        })
        .collect()
}

#[test]
fn every_ipv6_engine_batches_as_it_looks_up() {
    for seed in [1, 2] {
        let rib = random_rib6(seed);
        let keys = keys6_for(&rib, seed);
        for spec in registry::engines_of(Family::Ipv6) {
            let fib = spec.build(&rib, &BuildOptions::new(200)).unwrap_or_else(|error| panic!("{error}"));
            check(fib.as_ref(), &keys, &format!("random IPv6 table {seed}"));
        }
    }
    let Some(path) = common::shared_data("linx-p69-2014-12-25.rib6.gz") else { return };
    let table = fibkit::load::load_path(&path, &Default::default()).expect("the LINX IPv6 table loads");
    let max = table.v6.iter().map(|(_, next_hop)| next_hop).max().unwrap_or(0);
    let keys = keys6_for(&table.v6, 6);
    for spec in registry::engines_of(Family::Ipv6) {
        let fib = spec.build(&table.v6, &BuildOptions::new(max)).unwrap_or_else(|error| panic!("{error}"));
        check(fib.as_ref(), &keys, "the LINX IPv6 table");
    }
}

/// Run by `the_environment_switch_turns_simd_off` in a child process with
/// `FIBKIT_SIMD=off`: the first use reads the switch.
#[test]
#[ignore = "run in a child process by the_environment_switch_turns_simd_off"]
fn child_reads_fibkit_simd_off() {
    assert_eq!(std::env::var("FIBKIT_SIMD").as_deref(), Ok("off"), "run me through the parent test");
    assert_eq!(simd::level(), Level::Scalar);
    // The batch path runs (and agrees) with the switch off.
    let rib = random_rib(7, 300);
    let fib = registry::build("d16r", &rib, &BuildOptions::new(300)).unwrap();
    let keys = keys_for(&rib, 7);
    let mut out = vec![0; keys.len()];
    fib.lookup_batch(&keys, &mut out);
    assert!(keys.iter().zip(&out).all(|(&key, &got)| fib.lookup(key) == got));
    assert_eq!(simd::level(), Level::Scalar);
}

#[test]
fn the_environment_switch_turns_simd_off() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "child_reads_fibkit_simd_off", "--nocapture"])
        .env("FIBKIT_SIMD", "off")
        .output()
        .expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "child failed:\n{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("1 passed"), "the child test did not run:\n{stdout}");
}
