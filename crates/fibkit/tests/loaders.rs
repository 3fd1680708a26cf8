//! Integration tests of the table and key loaders: real tables from
//! `../shared/data/` (skipped visibly when absent), compressed files,
//! bad input, and the synthetic default table.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use common::shared_data;
use fibkit::addr::Prefix4;
use fibkit::load::{self, synthetic, LoadOptions, Position, RouteTable};
use fibkit::nexthop::Mapping;
use fibkit::Family;
use proptest::prelude::*;

#[test]
fn routeviews_2014_table_loads_512621_prefixes() {
    let Some(path) = shared_data("routeviews-2014-05-13.ipasn.gz") else { return };
    let start = Instant::now();
    let table = load::load_path(&path, &LoadOptions::default()).unwrap();
    eprintln!("loaded {} prefixes in {:.1} ms", table.v4.len(), start.elapsed().as_secs_f64() * 1e3);
    assert_eq!(table.v4.len(), 512_621);
    assert!(table.v6.is_empty());
    assert!(table.warnings.is_empty(), "{:?}", &table.warnings[..3.min(table.warnings.len())]);
    assert_eq!(table.name, "routeviews-2014-05-13.ipasn.gz");
}

#[test]
fn synthetic_default_has_the_documented_shape() {
    let start = Instant::now();
    let table = synthetic::default_table(Default::default());
    eprintln!(
        "generated {} prefixes, {} next hops in {:.1} ms",
        table.v4.len(),
        table.next_hops.len(),
        start.elapsed().as_secs_f64() * 1e3
    );
    let mut histogram = [0usize; 33];
    for (prefix, _) in table.v4.iter() {
        histogram[usize::from(prefix.prefix_len())] += 1;
    }
    assert_eq!(histogram, synthetic::target_counts(1_000_000));
    assert_eq!(table.next_hops.len(), 75_000);
    let covered: u64 = table
        .v4
        .ranges(0, u32::MAX)
        .iter()
        .filter(|range| range.next_hop != fibkit::NO_ROUTE)
        .map(|range| u64::from(range.last - range.first) + 1)
        .sum();
    let share = covered as f64 / 2f64.powi(32);
    eprintln!("address space covered: {:.1}%", share * 100.0);
    assert!((0.65..0.80).contains(&share), "coverage {share}");
}

#[test]
fn linx_2014_ipv6_rib_loads_20440_prefixes() {
    let Some(path) = shared_data("linx-p69-2014-12-25.rib6.gz") else { return };
    let table = load::load_path(&path, &LoadOptions::default()).unwrap();
    assert_eq!(table.v6.len(), 20_440);
    assert!(table.v4.is_empty());
    let hop = table.v6.lookup(u128::from("2600:2004::1".parse::<std::net::Ipv6Addr>().unwrap()));
    assert_eq!(table.next_hops.describe(hop), "2001:7f8:4::1a0b:1");
}

#[test]
fn routeviews_2014_with_nexthops_239() {
    let Some(path) = shared_data("routeviews-2014-05-13.ipasn.gz") else { return };
    let options = LoadOptions { mapping: Mapping::Modulo(239), strict: true, ..Default::default() };
    let table = load::load_path(&path, &options).unwrap();
    assert_eq!(table.v4.len(), 512_621);
    assert_eq!(table.next_hops.max_index(), 239);
    // 1.0.0.0/24 is originated by AS15169.
    assert_eq!(table.v4.lookup(0x0100_0001), 15169 % 239 + 1);
}

#[test]
fn tables_past_a_structural_limit_say_which_and_what_can_take_them() {
    // Next hops past 2^22 - 1 (more than a DXR direct entry holds), 2^24 - 1
    // (DIR-24-8's field), 2^30 - 1 (Luleå's pointers), 2^31 - 1 (Poptrie's).
    for huge in [(1 << 22) + 5, (1 << 24) + 1, (1 << 31) + 1, u32::MAX] {
        refusals_name_an_engine_that_takes_it(huge);
    }
}

/// Regression (fuzz target `fib_build`, out of memory): DXR counted unique
/// next hops in a vector indexed by next hop, which a single route with a
/// next hop near 2^32 in a range chunk grew to gigabytes.
#[test]
fn dxr_counts_huge_next_hops_without_a_huge_vector() {
    let mut rib = fibkit::rib::Rib4::new();
    rib.insert("10.0.0.0/8".parse().unwrap(), 1);
    rib.insert("10.1.2.0/24".parse().unwrap(), u32::MAX - 1);
    rib.insert("10.1.3.0/24".parse().unwrap(), 234_881_024);
    let options = fibkit::fib::BuildOptions::new(u32::MAX - 1);
    for name in ["d16r", "d22r"] {
        let start = Instant::now();
        let fib = fibkit::registry::build(name, &rib, &options).unwrap();
        assert!(start.elapsed().as_secs_f64() < 5.0, "{name} took {:?}", start.elapsed());
        assert_eq!(fib.lookup(0x0a01_0203), u32::MAX - 1);
        assert_eq!(fib.lookup(0x0a01_0303), 234_881_024);
        assert_eq!(fib.stats().get("unique_next_hops"), Some(&fibkit::fib::Figure::Count(3)));
    }
}

fn refusals_name_an_engine_that_takes_it(huge: u32) {
    let mut rib = fibkit::rib::Rib4::new();
    rib.insert("10.0.0.0/8".parse().unwrap(), huge);
    rib.insert("10.1.0.0/16".parse().unwrap(), 1);
    let options = fibkit::fib::BuildOptions::new(huge);
    let mut built = 0;
    for spec in fibkit::registry::engines_of(Family::Ipv4) {
        match spec.build(&rib, &options) {
            Ok(fib) => {
                built += 1;
                assert_eq!(fib.lookup(0x0a00_0001), huge, "{}", spec.name);
                assert_eq!(fib.lookup(0x0a01_0001), 1, "{}", spec.name);
            }
            Err(error) => {
                let shown = error.to_string();
                assert!(shown.starts_with(&format!("{}: ", spec.name)), "{shown}");
                // Which limit: the value and the field it does not fit.
                assert!(shown.contains(&huge.to_string()) && shown.contains("bit"), "{shown} does not say which limit");
                // It names an engine that takes the table, and that engine does.
                let other = fibkit::registry::engines_of(Family::Ipv4)
                    .into_iter()
                    .find(|other| other.name != spec.name && shown.contains(&format!("the {} engine", other.name)))
                    .unwrap_or_else(|| panic!("{shown} names no engine that can take the table"));
                assert!(other.build(&rib, &options).is_ok(), "{shown}");
            }
        }
    }
    assert!(built >= 1);
}

/// A temporary directory for this test run, removed on drop.
fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("fibkit-loaders").tempdir().unwrap()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn bzip2(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn routes(table: &RouteTable) -> Vec<String> {
    let v4 = table.v4.iter().map(|(p, hop)| format!("{p} {}", table.next_hops.describe(hop)));
    let v6 = table.v6.iter().map(|(p, hop)| format!("{p} {}", table.next_hops.describe(hop)));
    v4.chain(v6).collect()
}

#[test]
fn files_on_disk_in_every_format_and_compression() {
    let dir = temp_dir();
    let formats: [(&str, &[u8]); 4] = [
        ("ipasn", b"; pyasn\n10.0.0.0/8\t64500\n10.1.0.0/16\t64501\n2001:db8::/32\t64502\n"),
        ("plain", b"10.0.0.0/8 64500\n10.1.0.0/16 64501\n2001:db8::/32 64502\n"),
        ("ranges.csv", b"\"10.0.0.0\",\"10.0.255.255\",\"64500\",\"x\"\n10.1.0.0,10.1.255.255,64501\n10.2.0.0,10.255.255.255,64500\n2001:db8::,2001:db8:ffff:ffff:ffff:ffff:ffff:ffff,64502\n"),
        ("ranges.tsv", b"167772160\t167837695\t64500\tZZ\tAS one\n167837696\t167903231\t64501\tZZ\tAS two\n167903232\t184549375\t64500\tZZ\tAS one\n"),
    ];
    let options = LoadOptions::default();
    for (name, bytes) in formats {
        // Misleading names on purpose: the content decides.
        let plain = load::load_path(&write(dir.path(), &format!("{name}.bz2"), bytes), &options).unwrap();
        let gz = load::load_path(&write(dir.path(), &format!("{name}.gz.txt"), &gzip(bytes)), &options).unwrap();
        let bz = load::load_path(&write(dir.path(), &format!("{name}.csv"), &bzip2(bytes)), &options).unwrap();
        assert_eq!(routes(&plain), routes(&gz), "{name}");
        assert_eq!(routes(&plain), routes(&bz), "{name}");
        assert_eq!(plain.v4.lookup(0x0a01_0203), plain.v4.lookup(0x0a01_ffff), "{name}");
        assert_eq!(plain.next_hops.describe(plain.v4.lookup(0x0a01_0203)), "64501", "{name}");
        assert_eq!(plain.next_hops.describe(plain.v4.lookup(0x0a02_0000)), "64500", "{name}");
        assert_eq!(gz.name, format!("{name}.gz.txt"));
    }
}

#[test]
fn errors_name_the_file_and_line() {
    let dir = temp_dir();
    let path = write(dir.path(), "bad.ipasn.gz", &gzip(b"; header\n10.0.0.0/8\t1\n10.0.0.1/8\t2\n"));
    let error = load::load_path(&path, &LoadOptions::default()).unwrap_err();
    assert_eq!(error.position, Position::Line(3));
    let shown = error.to_string();
    assert!(shown.contains("bad.ipasn.gz:3: host bits set in 10.0.0.1/8"), "{shown}");
    let missing = load::load_path(&dir.path().join("absent.txt"), &LoadOptions::default()).unwrap_err();
    assert!(missing.to_string().contains("absent.txt: cannot read"), "{missing}");
    let keys_missing = load::load_keys(&dir.path().join("absent.keys")).unwrap_err();
    assert!(keys_missing.to_string().contains("absent.keys: cannot read"), "{keys_missing}");
}

#[test]
fn key_files_on_disk() {
    let dir = temp_dir();
    let keys: Vec<u32> = (0..1000u32).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
    let text: String = keys.iter().map(|&key| format!("{}\n", std::net::Ipv4Addr::from(key))).collect();
    let raw: Vec<u8> = keys.iter().flat_map(|key| key.to_le_bytes()).collect();
    assert_eq!(load::load_keys(&write(dir.path(), "k.txt", text.as_bytes())).unwrap(), keys);
    assert_eq!(load::load_keys(&write(dir.path(), "k.bin", &raw)).unwrap(), keys);
    assert_eq!(load::load_keys(&write(dir.path(), "k.txt.gz", &gzip(text.as_bytes()))).unwrap(), keys);
    assert_eq!(load::load_keys(&write(dir.path(), "k.bin.bz2", &bzip2(&raw))).unwrap(), keys);
}

const SAMPLE: &str = "; c\n1.0.0.0/24\t15169\n1.0.4.0/22\t56203\n2001:db8::/32 1\n\
                      10.0.0.0,10.0.0.255,5\n\"1.2.3.4\",\"1.2.3.9\",\"7\"\n";

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let file = Path::new("fuzz");
        let _ = load::load_bytes(file, &bytes, &LoadOptions::default());
        let _ = load::load_bytes(file, &bytes, &LoadOptions { strict: true, ..Default::default() });
        let _ = load::keys_from_bytes(file, &bytes);
    }

    #[test]
    fn random_text_lines_never_panic(lines in proptest::collection::vec("[0-9a-f.:/,\t \"x;#-]{0,40}", 0..12)) {
        let text = lines.join("\n");
        let file = Path::new("fuzz");
        let _ = load::load_bytes(file, text.as_bytes(), &LoadOptions::default());
        let _ = load::keys_from_bytes(file, text.as_bytes());
    }

    #[test]
    fn mutated_tables_never_panic(
        mutations in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
        compress in 0..3u8,
    ) {
        let mut bytes = SAMPLE.as_bytes().to_vec();
        for (index, byte) in mutations {
            let at = index.index(bytes.len());
            bytes[at] = byte;
        }
        bytes.truncate(cut.index(bytes.len() + 1));
        let bytes = match compress {
            0 => bytes,
            1 => gzip(&bytes),
            _ => bzip2(&bytes),
        };
        let file = Path::new("fuzz");
        let _ = load::load_bytes(file, &bytes, &LoadOptions::default());
        let _ = load::keys_from_bytes(file, &bytes);
    }

    #[test]
    fn corrupted_compressed_streams_never_panic(
        mutations in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        bz in any::<bool>(),
    ) {
        let mut bytes = if bz { bzip2(SAMPLE.as_bytes()) } else { gzip(SAMPLE.as_bytes()) };
        for (index, byte) in mutations {
            let at = index.index(bytes.len());
            bytes[at] = byte;
        }
        let _ = load::load_bytes(Path::new("fuzz"), &bytes, &LoadOptions::default());
    }

    #[test]
    fn random_prefix_tables_round_trip(routes in proptest::collection::vec((any::<u32>(), 0..=32u8, 1..5000u64), 1..60)) {
        let text: String = routes
            .iter()
            .map(|&(addr, len, value)| format!("{}\t{value}\n", Prefix4::truncating(addr, len)))
            .collect();
        let table = load::load_bytes(Path::new("t"), text.as_bytes(), &LoadOptions::default()).unwrap();
        let mut expected = std::collections::BTreeMap::new();
        for &(addr, len, value) in &routes {
            expected.insert(Prefix4::truncating(addr, len), value.to_string());
        }
        let loaded: std::collections::BTreeMap<Prefix4, String> =
            table.v4.iter().map(|(prefix, hop)| (prefix, table.next_hops.describe(hop))).collect();
        prop_assert_eq!(loaded, expected);
    }

    #[test]
    fn random_range_files_match_a_painted_reference(
        ranges in proptest::collection::vec((0..4096u32, 0..600u32, 0..4u64), 1..25),
    ) {
        // Ranges in a small space; later lines win; value 0 = not routed.
        let mut painted = vec![0u64; 4096 + 600];
        let mut text = String::new();
        for &(first, length, value) in &ranges {
            let last = first + length;
            text.push_str(&format!("{first},{last},{value}\n"));
            for slot in &mut painted[first as usize..=last as usize] {
                *slot = value;
            }
        }
        match load::load_bytes(Path::new("t"), text.as_bytes(), &LoadOptions::default()) {
            Ok(table) => {
                for (addr, &value) in painted.iter().enumerate() {
                    let hop = table.v4.lookup(addr as u32);
                    let got = if hop == fibkit::NO_ROUTE { 0 } else { table.next_hops.describe(hop).parse().unwrap() };
                    prop_assert_eq!(got, value, "address {}", addr);
                }
            }
            Err(error) => {
                prop_assert!(painted.iter().all(|&value| value == 0), "{}", error);
                prop_assert!(error.to_string().contains("no routes"));
            }
        }
    }
}
