use std::sync::atomic::AtomicU32;

use super::*;
use crate::compiled::{CompileOptions, CompiledTable};
use crate::load::RouteTable;
use crate::measure::verify;
use crate::nexthop::{Label, Mapping};
use crate::random::{XorShift32, XorShift64Pair};
use crate::Prefix;

/// A random table of `count` IPv4 and `count / 4` IPv6 routes (lengths 8
/// to 32, and 16 to 64), values from a few hundred ASNs, nested prefixes
/// and a default route among them.
fn table(count: usize, seed: u64) -> RouteTable {
    let mut table = RouteTable::new("random table", Mapping::Distinct);
    let (mut bits, mut wide) = (XorShift32::new(seed), XorShift64Pair::new(seed));
    for index in 0..count {
        let hop = table.next_hops.intern(Label::Number(64_500 + u64::from(bits.next() % 300)));
        let prefix_len = if index == 0 { 0 } else { 8 + (bits.next() % 25) as u8 };
        table.v4.insert(Prefix::truncating(bits.next(), prefix_len), hop);
        if index % 4 == 0 {
            let prefix_len = 16 + (bits.next() % 49) as u8;
            table.v6.insert(Prefix::truncating(wide.next() >> 3 | 1 << 125, prefix_len), hop);
        }
    }
    table
}

fn compiled(engine: &str, prefixes: bool, count: usize) -> CompiledTable {
    let options = CompileOptions { engines: vec![engine.to_string()], prefixes, ..Default::default() };
    CompiledTable::build(table(count, 7), &options).unwrap()
}

fn bytes_of(compiled: &CompiledTable) -> Vec<u8> {
    compiled.to_file().unwrap().to_bytes()
}

fn open(bytes: &[u8]) -> Result<CompiledTable, FileError> {
    CompiledTable::from_file(&FibFile::from_bytes(bytes, "test.fib")?)
}

#[test]
fn sections_come_back_in_place_with_the_header_fields() {
    let atomics = [AtomicU32::new(9), AtomicU32::new(10)];
    let mut writer = FileWriter::new();
    writer.source_modified = 1_400_000_000;
    writer.section("source", b"table.txt".to_vec());
    writer.array::<u64>("numbers", &[1, u64::MAX, 3]);
    writer.array("atomics", &atomics);
    let bytes = writer.to_bytes();
    assert_eq!(&bytes[..8], &MAGIC);
    assert!(is_fib_file(&bytes) && !is_fib_file(b"10.0.0.0/8 1\n"));
    let file = FibFile::from_bytes(&bytes, "x.fib").unwrap();
    assert_eq!(file.section_names().collect::<Vec<_>>(), ["source", "numbers", "atomics"]);
    assert_eq!(file.source_modified, 1_400_000_000);
    assert!(file.created > 1_700_000_000);
    assert_eq!(file.section("source").unwrap(), Some(&b"table.txt"[..]));
    let numbers = file.array::<u64>("numbers").unwrap();
    assert!(numbers.is_mapped());
    assert_eq!(*numbers, [1, u64::MAX, 3]);
    assert_eq!(numbers.as_ptr() as usize % ALIGN, 0);
    let atomics = file.array::<u32>("atomics").unwrap();
    assert_eq!(*atomics, [9, 10]);
    let twice = file.array::<u32>("atomics").unwrap_err().to_string();
    assert!(twice.contains("read twice"), "{twice}");
    let error = FibFile::from_bytes(&bytes, "x.fib").unwrap().array::<u128>("numbers").unwrap_err();
    assert!(matches!(error.problem, Problem::SectionLength { element: 16, .. }), "{error}");
    assert_eq!(file.array::<u8>("nonesuch").unwrap_err().problem, Problem::MissingSection("nonesuch".into()));
}

/// Sections of elements are written a chunk at a time: arrays of many
/// chunks, borrowed or owned, of each element size, and an empty one come
/// back as the elements' little-endian bytes, each where the section
/// table says, and `len` is the length written.
#[test]
fn sections_of_many_chunks_are_written_whole() {
    let words: Vec<u16> = (0..100_003u32).map(|index| index.wrapping_mul(40_503) as u16).collect();
    let wide: Vec<u128> = (0..9_001u128).map(|index| index << 64 | index.wrapping_mul(0x9e37)).collect();
    let atomics: Vec<AtomicU32> = (0..70_001).map(AtomicU32::new).collect();
    let mut writer = FileWriter::new();
    writer.created = Some(1_700_000_000);
    writer.array("words", &words);
    writer.owned_array("wide", wide.clone());
    writer.array("atomics", &atomics);
    writer.array::<u64>("empty", &[]);
    writer.array::<u8>("odd", &[1, 2, 3]);
    let bytes = writer.to_bytes();
    assert_eq!(bytes.len() as u64, writer.len());
    let mut again = Vec::new();
    writer.write_to(&mut again).unwrap();
    assert_eq!(again, bytes, "two writes of one writer give the same bytes");
    let file = FibFile::from_bytes(&bytes, "x.fib").unwrap();
    assert_eq!(*file.array::<u16>("words").unwrap(), *words);
    assert_eq!(*file.array::<u128>("wide").unwrap(), *wide);
    assert!(file.array::<u32>("atomics").unwrap().iter().enumerate().all(|(index, &word)| word == index as u32));
    assert!(file.array::<u64>("empty").unwrap().is_empty());
    assert_eq!(*file.array::<u8>("odd").unwrap(), [1, 2, 3]);
}

#[test]
fn every_savable_engine_answers_as_before_after_a_round_trip() {
    for engine in crate::registry::engines() {
        for prefixes in [false, true] {
            if !engine.savable::<u32>() && !engine.savable::<u128>() {
                let error = compiled(engine.name, prefixes, 300).to_file().unwrap_err().to_string();
                assert!(
                    error.contains(&format!("engine {} cannot be saved", engine.name)) && error.contains("d16r, "),
                    "{error}"
                );
                continue;
            }
            let built = compiled(engine.name, prefixes, 3000);
            let opened = open(&bytes_of(&built)).unwrap_or_else(|error| panic!("{}: {error}", engine.name));
            assert_eq!(opened.name, "random table");
            let routes = table(3000, 7);
            for hop in 0..=built.values.max_index() + 1 {
                assert_eq!(opened.values.value_text(hop), built.values.value_text(hop));
            }
            let (before, after) = (built.v4.as_ref().unwrap(), opened.v4.as_ref().unwrap());
            assert_eq!(after.fib().name(), before.fib().name());
            assert_eq!(after.has_prefixes(), prefixes);
            let answers: Vec<(u32, u32)> = routes
                .v4
                .ranges(0, u32::MAX)
                .iter()
                .map(|range| (range.first, before.fib().lookup(range.first)))
                .collect();
            for (key, answer) in answers {
                assert_eq!(after.fib().lookup(key), answer, "{} at {key:#x}", engine.name);
                assert_eq!(after.route(answer), before.route(answer));
            }
            if !prefixes {
                let report = verify::boundaries(after.fib(), &routes.v4);
                assert!(report.passed(), "{}: {report:?}", engine.name);
            }
            if engine.savable::<u128>() && !prefixes {
                let report = verify::boundaries(opened.v6.as_ref().unwrap().fib(), &routes.v6);
                assert!(report.passed(), "{} IPv6: {report:?}", engine.name);
            }
        }
    }
}

#[test]
fn every_flipped_byte_and_every_truncation_is_refused() {
    let bytes = bytes_of(&compiled("poptrie0", true, 40));
    assert!(bytes.len() < 8192, "{} bytes", bytes.len());
    open(&bytes).unwrap();
    for position in 0..bytes.len() {
        let mut damaged = bytes.clone();
        damaged[position] ^= 0xff;
        let error = open(&damaged).err().unwrap_or_else(|| panic!("byte {position} flipped was taken"));
        assert!(error.to_string().starts_with("test.fib: "), "{error}");
    }
    for length in 0..bytes.len() {
        let error = open(&bytes[..length]).err().unwrap_or_else(|| panic!("truncated to {length} was taken"));
        let expected = if length < 8 { Problem::NotFibFile } else { error.problem.clone() };
        assert_eq!(error.problem, expected);
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(open(&longer).unwrap_err().problem, Problem::Length { .. }));
}

#[test]
fn a_newer_version_is_refused_with_a_clear_message() {
    let mut bytes = bytes_of(&compiled("d16r", false, 100));
    bytes[8..12].copy_from_slice(&(VERSION + 1).to_le_bytes());
    let error = open(&bytes).unwrap_err();
    assert_eq!((error.offset, &error.problem), (Some(8), &Problem::NewerVersion { found: VERSION + 1 }));
    assert!(error.to_string().contains("is newer than this fibkit reads"), "{error}");
    let text = FibFile::from_bytes(b"10.0.0.0/8 64500\n", "table.txt").err().unwrap();
    assert_eq!(
        text.to_string(),
        "table.txt: offset 0: not a compiled FIB file (it does not start with fibkit's magic)"
    );
}

/// Bytes changed on purpose and resealed pass the checksums: the openers'
/// own checks must refuse what the lookups cannot follow, or give a FIB
/// whose every lookup stays in bounds. Damages `bytes` `rounds` times (1
/// to 4 random bytes past the header) and opens each: a refusal must name
/// the file; a table taken must answer `keys` (drawn anew each time) alike
/// in a batch and one by one. Returns how many were refused and taken.
fn open_damaged<A: crate::addr::Address>(
    bytes: &[u8],
    rounds: usize,
    mut keys: impl FnMut() -> Vec<A>,
) -> (usize, usize) {
    let mut bits = XorShift32::new(99);
    let (mut refused, mut taken) = (0, 0);
    for _ in 0..rounds {
        let mut damaged = bytes.to_vec();
        for _ in 0..1 + bits.next() % 4 {
            let position = 64 + bits.next() as usize % (damaged.len() - 64);
            damaged[position] = bits.next() as u8;
        }
        reseal(&mut damaged);
        match open(&damaged) {
            Err(error) => {
                refused += 1;
                assert!(error.to_string().starts_with("test.fib: "), "{error}");
            }
            Ok(table) => {
                taken += 1;
                let family = table.family_fib::<A>().unwrap();
                let keys = keys();
                let mut answers = vec![0; keys.len()];
                family.lookup_batch(&keys, &mut answers);
                for (&key, &answer) in keys.iter().zip(&answers) {
                    assert_eq!(family.fib().lookup(key), answer);
                    let _ = (
                        family.route(answer),
                        table.values.value_text(family.next_hop(answer)),
                        table.values.label(answer),
                    );
                }
            }
        }
    }
    (refused, taken)
}

#[test]
fn damaged_files_with_valid_checksums_never_panic() {
    for (engine, count) in [("d16r", 3000), ("poptrie16", 3000), ("poptrie0", 300), ("sail", 3000)] {
        let bytes = bytes_of(&compiled(engine, engine == "poptrie0", count));
        let mut bits = XorShift32::new(98);
        let (refused, taken) =
            open_damaged::<u32>(&bytes, 300, || (0..2000).map(|_| bits.next()).chain([u32::MAX]).collect());
        assert!(refused > 0 && taken > 0, "{engine}: {refused} refused, {taken} taken");
    }
}

#[test]
fn hostile_direct_entries_are_named_with_their_offset() {
    let bytes = bytes_of(&compiled("d16r", false, 3000));
    let file = FibFile::from_bytes(&bytes, "t.fib").unwrap();
    let direct_at = file.section_offset("v4.direct").unwrap() as usize;
    let direct = file.array::<u32>("v4.direct").unwrap();
    let chunk = direct.iter().position(|&entry| entry & 0xff != 0 && entry & 0xff != 0xff).unwrap();
    let entry = direct[chunk];
    for (hostile, problem) in [
        (entry | 3 << 8, "format 3 is no range table"),
        ((entry & 0x3ff) | 0x3f_ffff << 10, "the chunk's fragments are not inside its range table"),
        (0xff | 0x3f_ffff << 10, "the chunk's header entry is past the end of its range table"),
        (0x3f_ffff << 10, "next hop beyond the file's values"),
    ] {
        let mut damaged = bytes.clone();
        damaged[direct_at + 4 * chunk..][..4].copy_from_slice(&hostile.to_le_bytes());
        reseal(&mut damaged);
        let error = open(&damaged).unwrap_err();
        assert_eq!(error.offset, Some((direct_at + 4 * chunk) as u64));
        let expected =
            format!("test.fib: offset {}: v4.direct[{chunk}] = {hostile:#x}: {problem}", direct_at + 4 * chunk);
        assert_eq!(error.to_string(), expected);
    }
}

#[test]
fn hostile_two_stage_entries_are_named_and_damage_never_panics() {
    let bytes = bytes_of(&compiled("poptrie16x12", false, 3000));
    let file = FibFile::from_bytes(&bytes, "t.fib").unwrap();
    let leaf = crate::engines::poptrie::DIRECT_LEAF;
    for (section, hostile, problem) in [
        ("v6.first", 0x7fff_ffff, "block number out of range"),
        ("v6.first", leaf | 0x7fff_ffff, "next hop beyond the file's values"),
        ("v6.blocks", 0x7fff_ffff, "node index out of range"),
        ("v6.blocks", leaf | 0x7fff_ffff, "next hop beyond the file's values"),
    ] {
        let at = file.section_offset(section).unwrap() as usize;
        let mut damaged = bytes.clone();
        damaged[at..][..4].copy_from_slice(&hostile.to_le_bytes());
        reseal(&mut damaged);
        let error = open(&damaged).unwrap_err();
        assert_eq!(error.to_string(), format!("test.fib: offset {at}: {section}[0] = {hostile:#x}: {problem}"));
    }
    let mut wide = XorShift64Pair::new(98);
    let (refused, taken) = open_damaged::<u128>(&bytes, 200, || {
        (0..2000).map(|_| wide.next() >> 3 | 1 << 125).chain([0, u128::MAX]).collect()
    });
    assert!(refused > 0 && taken > 0, "{refused} refused, {taken} taken");
}

/// A DIR-24-8 file of `routes` (`PREFIX/LEN` text), its bytes and the
/// offsets of `v4.tbl24` and `v4.tbl8`.
fn dir24_file(routes: &[&str]) -> (Vec<u8>, usize, usize) {
    let mut table = RouteTable::new("dir24 routes", Mapping::Distinct);
    for (index, route) in routes.iter().enumerate() {
        let hop = table.next_hops.intern(Label::Number(64_500 + index as u64));
        table.v4.insert(route.parse().unwrap(), hop);
    }
    let options = CompileOptions { engines: vec!["dir24-8".to_string()], prefixes: false, ..Default::default() };
    let bytes = bytes_of(&CompiledTable::build(table, &options).unwrap());
    let file = FibFile::from_bytes(&bytes, "t.fib").unwrap();
    let at = |section| file.section_offset(section).unwrap() as usize;
    (bytes.clone(), at("v4.tbl24"), at("v4.tbl8"))
}

#[test]
fn hostile_dir24_entries_are_named_with_their_offset() {
    use crate::engines::dir24::Entry;
    // No route longer than /24: no groups at all, so even group 0 is past
    // the last (a file taking it would read outside an empty tbl8).
    let (short, short_tbl24, _) = dir24_file(&["10.0.0.0/8"]);
    let (long, long_tbl24, long_tbl8) = dir24_file(&["10.0.0.0/8", "10.1.2.128/25"]);
    for (bytes, at, hostile, problem) in [
        (&short, short_tbl24, Entry::group(0).0, "group past the last of tbl8"),
        (&long, long_tbl24, Entry::group(1).0, "group past the last of tbl8"),
        (&long, long_tbl24, Entry::route(3, 8).0, "next hop beyond the file's values"),
        (&long, long_tbl8, Entry::route(3, 25).0, "next hop beyond the file's values"),
    ] {
        let mut damaged = bytes.clone();
        damaged[at..][..4].copy_from_slice(&hostile.to_le_bytes());
        reseal(&mut damaged);
        let section = if at == long_tbl8 { "v4.tbl8" } else { "v4.tbl24" };
        let error = open(&damaged).err().unwrap_or_else(|| panic!("{section}[0] = {hostile:#x} was taken"));
        assert_eq!(error.to_string(), format!("test.fib: offset {at}: {section}[0] = {hostile:#x}: {problem}"));
    }
}

#[test]
fn hostile_sail_entries_are_named_with_their_offset() {
    let table = compiled("sail", false, 3000);
    let bytes = bytes_of(&table);
    let file = FibFile::from_bytes(&bytes, "t.fib").unwrap();
    // The first values past each bound: chunk IDs, next hops.
    let chunks = |section| (file.array::<u16>(section).unwrap().len() / 256) as u16;
    let (chunks_24, chunks_32, past_hops) = (chunks("v4.bcn24"), chunks("v4.n32"), table.values.max_index() as u16 + 1);
    for (section, hostile, problem) in [
        ("v4.bcn16", 0x8000 | chunks_24, "a chunk ID past the last chunk of the next level"),
        ("v4.bcn16", past_hops, "next hop beyond the file's values"),
        ("v4.bcn24", 0x8000 | chunks_32, "a chunk ID past the last chunk of the next level"),
        ("v4.bcn24", past_hops, "next hop beyond the file's values"),
        ("v4.n32", 0x8000, "a chunk ID where only next hops are"),
        ("v4.n32", past_hops, "next hop beyond the file's values"),
    ] {
        let at = file.section_offset(section).unwrap() as usize;
        let mut damaged = bytes.clone();
        damaged[at..][..2].copy_from_slice(&hostile.to_le_bytes());
        reseal(&mut damaged);
        let error = open(&damaged).err().unwrap_or_else(|| panic!("{section}[0] = {hostile:#x} was taken"));
        assert_eq!(error.to_string(), format!("test.fib: offset {at}: {section}[0] = {hostile:#x}: {problem}"));
    }
}

#[test]
fn hostile_sail_runs_entries_are_named_with_their_offset() {
    let table = compiled("sail-runs", false, 3000);
    let bytes = bytes_of(&table);
    let file = FibFile::from_bytes(&bytes, "t.fib").unwrap();
    let lines = file.array::<u8>("v4.lines").unwrap().len() as u32 / 64;
    let chunks_32 = (file.array::<u16>("v4.n32").unwrap().len() / 256) as u64;
    let past_hops = table.values.max_index() as u64 + 1;
    assert!(lines >= 16 && chunks_32 > 0, "{lines} lines, {chunks_32} level-32 chunks");
    let chunk = |shift: u32, first: u32| u64::from(1 << 31 | shift << 27 | first);
    // The first line's second start made equal to its first (or below it).
    let repeated = u64::from(bytes[file.section_offset("v4.lines").unwrap() as usize].min(254));
    // (section, byte offset in it, width, hostile value, problem)
    for (section, at, width, hostile, problem) in [
        ("v4.level16", 0, 4, chunk(3, 0), "a chunk's shift outside 4 to 8"),
        ("v4.level16", 0, 4, chunk(9, 0), "a chunk's shift outside 4 to 8"),
        ("v4.level16", 0, 4, chunk(8, lines), "a chunk's lines past the last line"),
        ("v4.level16", 0, 4, chunk(4, lines - 15), "a chunk's lines past the last line"),
        ("v4.level16", 0, 4, past_hops, "next hop beyond the file's values"),
        ("v4.lines", 0, 1, 0, "a line whose starts do not rise from above 0"),
        ("v4.lines", 1, 1, repeated, "a line whose starts do not rise from above 0"),
        ("v4.lines", 62, 2, 1, "a line whose spare bytes are not zero"),
        ("v4.lines", 20, 2, 0x8000 | chunks_32, "a level-32 chunk ID past the last chunk"),
        ("v4.lines", 20, 2, past_hops, "next hop beyond the file's values"),
        ("v4.n32", 0, 2, past_hops, "next hop beyond the file's values"),
    ] {
        let start = file.section_offset(section).unwrap() as usize;
        let mut damaged = bytes.clone();
        damaged[start + at..][..width].copy_from_slice(&hostile.to_le_bytes()[..width]);
        reseal(&mut damaged);
        let error = open(&damaged).err().unwrap_or_else(|| panic!("{section} + {at} = {hostile:#x} was taken"));
        // A line's starts are shown as their first eight bytes.
        let shown = if at < 20 && section == "v4.lines" {
            u64::from_le_bytes(damaged[start..][..8].try_into().unwrap())
        } else {
            hostile
        };
        assert_eq!(error.to_string(), format!("test.fib: offset {start}: {section}[0] = {shown:#x}: {problem}"));
    }
}

#[test]
fn every_byte_is_covered_by_a_checksum_whatever_the_table_length() {
    for count in 1..=3 {
        let mut writer = FileWriter::new();
        for index in 0..count {
            writer.owned_array::<u16, _>(&format!("s{index}"), vec![index; 5]);
        }
        let bytes = writer.to_bytes();
        for position in 0..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[position] ^= 0x10;
            assert!(FibFile::from_bytes(&damaged, "t").is_err(), "{count} sections: byte {position} flipped was taken");
        }
    }
}

/// The `fib_file` fuzz target's seeds (`fuzz/seeds/fib_file`): small
/// compiled tables of the engines with a file format, with and without
/// prefixes. `FIBKIT_WRITE_SEEDS=1` (re)writes them; without it the test
/// checks that they are what this fibkit writes.
#[test]
fn fuzz_seeds_are_current() {
    let seeds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/fib_file");
    for (name, engine, prefixes, count) in [
        ("poptrie0_prefixes", "poptrie0", true, 60),
        ("poptrie0", "poptrie0", false, 200),
        ("d16r", "d16r", false, 400),
        ("sail", "sail", false, 100),
        ("sail-runs", "sail-runs", false, 100),
        ("poptrie16", "poptrie16", false, 100),
        ("poptrie16x12", "poptrie16x12", false, 12),
    ] {
        // The other family by poptrie0 where the engine serves one (no
        // direct array, a small seed); poptrie16 serves both and gets no
        // IPv6 routes, which would add a second direct array of 256 KB.
        let mut routes = table(count, 7);
        if engine == "poptrie16" {
            routes.v6 = Default::default();
        }
        let options = CompileOptions {
            engines: vec![engine.to_string(), "poptrie0".to_string()],
            prefixes,
            ..Default::default()
        };
        let compiled = CompiledTable::build(routes, &options).unwrap();
        let mut file = compiled.to_file().unwrap();
        file.created = Some(1_700_000_000);
        let seed = file.to_bytes();
        let path = seeds.join(name);
        if std::env::var_os("FIBKIT_WRITE_SEEDS").is_some() {
            std::fs::create_dir_all(&seeds).unwrap();
            std::fs::write(&path, &seed).unwrap();
        }
        let stored = std::fs::read(&path).unwrap_or_default();
        assert!(stored == seed, "{} is not current: run with FIBKIT_WRITE_SEEDS=1", path.display());
    }
}

#[test]
fn a_file_with_values_but_no_fib_of_either_family_is_refused_naming_the_file() {
    // A forged file: a table's name and values, written through the
    // FileWriter, with neither family's FIB (fibkit never writes one: a
    // table with no route is refused when loaded).
    let mut forged = compiled("d18r", false, 100);
    forged.v4 = None;
    forged.v6 = None;
    assert_eq!(forged.to_file().err(), Some(Problem::NoFib), "such a table is not written either");
    let mut writer = FileWriter::new();
    writer.section("source", b"forged".to_vec());
    forged.values.save(&mut writer);
    let error = open(&writer.to_bytes()).unwrap_err();
    assert_eq!(error.problem, Problem::NoFib, "{error}");
    assert!(error.to_string().starts_with("test.fib: "), "{error}");
    assert!(error.to_string().contains("holds no FIB of either family"), "{error}");
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("values-only.fib");
    writer.write(&path).unwrap();
    let error = CompiledTable::open(&path).unwrap_err();
    assert!(error.to_string().contains("values-only.fib"), "{error}");
    assert!(error.to_string().contains("holds no FIB of either family"), "{error}");
    // One family alone is a table.
    let mut v4_only = compiled("d18r", false, 100);
    v4_only.v6 = None;
    assert!(open(&bytes_of(&v4_only)).unwrap().v6.is_none());
}
