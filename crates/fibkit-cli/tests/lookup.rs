//! `fibkit lookup` against the RIB: the embedded default table (always),
//! the 2014 IPv4 table and the LINX IPv6 table (when the shared data is
//! present); every prefix boundary, random addresses, addresses written as
//! logs write them; CSV columns, formats, malformed lines, order.

mod common;

use std::fmt::Write as _;
use std::path::Path;

use common::{fibkit, shared_data, text, write};

/// `fibkit ARGS...` with `input` on standard input.
fn fibkit_with_input(args: &[&str], input: &[u8]) -> std::process::Output {
    common::fibkit_with_input(Path::new("."), args, input)
}
use fibkit::load::{self, synthetic, LoadOptions, RouteTable};
use fibkit::nexthop::Mapping;
use fibkit::random::XorShift32;
use fibkit::{Address, Rib};

/// Addresses to check in `rib`: the first and last address of every
/// prefix and their neighbours, and `random` random addresses.
fn probes<A: Address>(rib: &Rib<A>, random: usize) -> Vec<A> {
    let mut probes = Vec::new();
    for (prefix, _) in rib.iter() {
        probes.extend([prefix.first(), prefix.last()]);
        probes.extend(prefix.first().checked_prev());
        probes.extend(prefix.last().checked_next());
    }
    let mut generator = XorShift32::new(2014);
    probes.extend((0..random).map(|_| A::from_words(|| generator.next())));
    probes
}

/// The expected `--prefix --format csv` line for `addr` written as `text`.
fn expected_line<A: Address>(table: &RouteTable, text: &str, addr: A) -> String {
    match table.rib::<A>().lookup_prefix(addr) {
        Some((prefix, hop)) => {
            let value = table.next_hops.value_text(hop).unwrap();
            format!("{text},{value},{prefix},{}", prefix.prefix_len())
        }
        None => format!("{text},,,"),
    }
}

/// Looks up every probe of `table`'s family `A` through `fibkit lookup
/// TABLE FILE --prefix --format csv` and compares every line; every
/// seventh address is written as a log might (spaces, tab, CRLF; IPv4 also
/// as IPv4-mapped IPv6).
fn check_against_rib<A: Address>(path: &Path, table: &RouteTable, random: usize, extra: &[&str]) {
    let probes = probes(table.rib::<A>(), random);
    let (mut input, mut expected) = (String::new(), String::from("address,value,prefix,prefix_len\n"));
    for (index, &addr) in probes.iter().enumerate() {
        let plain = addr.display();
        let written = match index % 7 {
            1 => format!("  {plain}\t\r"),
            3 if A::BITS == 32 => format!("::ffff:{plain}"),
            _ => plain.clone(),
        };
        writeln!(input, "{written}").unwrap();
        let shown = written.trim();
        writeln!(expected, "{}", expected_line(table, shown, addr)).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let keys = write(dir.path(), "addresses.txt", &input);
    let mut args = vec!["lookup", path.to_str().unwrap(), keys.to_str().unwrap(), "--prefix", "--format", "csv"];
    args.extend(extra);
    let output = fibkit(&args);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout.lines().count(), probes.len() + 1, "{stderr}");
    for (line, (got, want)) in stdout.lines().zip(expected.lines()).enumerate() {
        assert_eq!(got, want, "line {line}");
    }
}

#[test]
fn the_2014_table_answers_as_its_rib_at_every_prefix_boundary() {
    let Some(path) = shared_data("routeviews-2014-05-13.ipasn.gz") else { return };
    let table = load::load_path(&path, &LoadOptions::default()).unwrap();
    check_against_rib::<u32>(&path, &table, 200_000, &[]);
    check_against_rib::<u32>(&path, &table, 20_000, &["--engine", "poptrie18", "--threads", "1"]);
    let dir = tempfile::tempdir().unwrap();
    for engine in ["d16r", "poptrie18"] {
        let compiled = compile(dir.path(), &path, &["--prefix", "--engine", engine]);
        check_against_rib::<u32>(&compiled, &table, 20_000, &[]);
    }
}

/// `fibkit compile TABLE -o DIR/table.fib ARGS...`, checked to succeed.
fn compile(dir: &Path, table: &Path, args: &[&str]) -> std::path::PathBuf {
    let compiled = dir.join("table.fib");
    let mut all = vec!["compile", table.to_str().unwrap(), "-o", compiled.to_str().unwrap()];
    all.extend(args);
    let output = fibkit(&all);
    assert!(output.status.success(), "{}", text(&output).1);
    compiled
}

#[test]
fn the_linx_ipv6_table_answers_as_its_rib_at_every_prefix_boundary() {
    let Some(path) = shared_data("linx-p69-2014-12-25.rib6.gz") else { return };
    let table = load::load_path(&path, &LoadOptions::default()).unwrap();
    check_against_rib::<u128>(&path, &table, 100_000, &[]);
    check_against_rib::<u128>(&path, &table, 10_000, &["--engine", "d18r6"]);
    let dir = tempfile::tempdir().unwrap();
    let compiled = compile(dir.path(), &path, &["--prefix", "--engine", "poptrie16"]);
    check_against_rib::<u128>(&compiled, &table, 10_000, &[]);
}

#[test]
fn the_default_table_answers_mixed_input_in_order_in_every_format() {
    let table = synthetic::default_table(Mapping::Distinct);
    let mut generator = XorShift32::new(5);
    let mut addresses: Vec<String> = (0..300_000).map(|_| u32::from_words(|| generator.next()).display()).collect();
    for index in (0..addresses.len()).step_by(10) {
        addresses[index] = u128::from_words(|| generator.next()).display();
    }
    let input = addresses.join("\n") + "\n";
    let expected = |text: &str| -> (String, Option<String>) {
        let hop = match load::parse_address(text.as_bytes()).unwrap() {
            load::AnyAddr::V4(addr) => table.v4.lookup(addr),
            load::AnyAddr::V6(addr) => table.v6.lookup(addr),
        };
        (text.to_string(), table.next_hops.value_text(hop))
    };
    for threads in ["1", "2"] {
        let output = fibkit_with_input(&["lookup", "--threads", threads], input.as_bytes());
        let (stdout, stderr) = text(&output);
        assert!(output.status.success(), "{stderr}");
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), addresses.len());
        for (line, address) in lines.iter().zip(&addresses) {
            let (text, value) = expected(address);
            assert_eq!(*line, format!("{text}\t{}", value.unwrap_or_default()));
        }
    }
    let output = fibkit_with_input(&["lookup", "--format", "json"], input.as_bytes());
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    for (line, address) in stdout.lines().zip(&addresses) {
        let object: serde_json::Value = serde_json::from_str(line).unwrap();
        let (text, value) = expected(address);
        assert_eq!(object["address"], text.as_str());
        match value {
            Some(value) => assert_eq!(object["value"].to_string().trim_matches('"'), value),
            None => assert!(object["value"].is_null()),
        }
    }
}

/// A table for the small cases: `10.0.0.0/8` is AS 64500, `10.1.0.0/16`
/// AS 64501, `2001:db8::/32` AS 64502.
const TABLE: &str = "10.0.0.0/8 64500\n10.1.0.0/16 64501\n2001:db8::/32 64502\n";

#[test]
fn csv_columns_by_name_or_index_keep_the_row_and_the_header() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "table.txt", TABLE);
    let table = table.to_str().unwrap();
    let csv = "time,\"src ip\",bytes\r\n1,10.1.2.3,40\r\n2,\"2001:db8::1\",80\r\n3,192.0.2.1,1\r\n";
    let args = ["lookup", table, "--column", "src ip", "--format", "csv", "--prefix"];
    let output = fibkit_with_input(&args, csv.as_bytes());
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    let expected = "time,\"src ip\",bytes,value,prefix,prefix_len\n1,10.1.2.3,40,64501,10.1.0.0/16,16\n\
                    2,\"2001:db8::1\",80,64502,2001:db8::/32,32\n3,192.0.2.1,1,,,\n";
    assert_eq!(stdout, expected);
    let tsv = write(dir.path(), "flows.tsv", "10.9.9.9\tx\n10.1.0.0\ty\n");
    let output = fibkit(&["lookup", table, tsv.to_str().unwrap(), "--column", "1", "--format", "csv"]);
    assert_eq!(text(&output).0, "10.9.9.9\tx\t64500\n10.1.0.0\ty\t64501\n");
    let output = fibkit(&["lookup", table, tsv.to_str().unwrap(), "--column", "1"]);
    assert_eq!(text(&output).0, "10.9.9.9\t64500\n10.1.0.0\t64501\n");
    let output = fibkit(&["lookup", table, tsv.to_str().unwrap(), "--column", "ip"]);
    assert!(text(&output).1.contains("flows.tsv: no column \"ip\" in the header line (columns: 10.9.9.9, x)"));
}

#[test]
fn a_csv_read_without_column_gets_a_hint_naming_the_column() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "table.txt", TABLE);
    let rows: String = (1..=12).map(|row| format!("{row},\"10.1.0.{row}\",40\n")).collect();
    let csv = write(dir.path(), "flows.csv", &format!("time,src ip,bytes\n{rows}"));
    let output = fibkit(&["lookup", table.to_str().unwrap(), csv.to_str().unwrap()]);
    let (stdout, stderr) = text(&output);
    // Still what it was (every line skipped, exit status 0), now with the hint, once.
    assert!(output.status.success() && stdout.is_empty(), "{stderr}");
    assert_eq!(stderr.matches("(line skipped)").count(), 10, "{stderr}");
    let hint = format!(
        "hint: {}: the lines look like CSV with a header (columns: time, src ip, bytes): \
         --column \"src ip\" reads the addresses",
        csv.display()
    );
    assert_eq!(stderr.lines().filter(|line| line.starts_with("hint:")).collect::<Vec<_>>(), [hint], "{stderr}");
    let output = fibkit(&["lookup", table.to_str().unwrap(), csv.to_str().unwrap(), "--column", "src ip"]);
    assert!(!text(&output).1.contains("hint:"));
}

#[test]
fn lines_without_an_address_are_named_and_skipped_or_fatal_under_strict() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "table.txt", TABLE);
    let table = table.to_str().unwrap();
    let keys = write(dir.path(), "keys.txt", "10.1.1.1\n\n010.0.0.1\n10.0.0.256\n2001:db8::zz\n10.2.0.0\n");
    let output = fibkit(&["lookup", table, keys.to_str().unwrap()]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "10.1.1.1\t64501\n10.2.0.0\t64500\n");
    let file = keys.display();
    for expected in [
        format!("warning: {file}:3: an octet has a leading zero (octal or decimal?): \"010.0.0.1\" (line skipped)"),
        format!("warning: {file}:4: not an IPv4 or IPv6 address: \"10.0.0.256\" (line skipped)"),
        format!("warning: {file}:5: not an IPv4 or IPv6 address: \"2001:db8::zz\" (line skipped)"),
    ] {
        assert!(stderr.contains(&expected), "no {expected:?} in {stderr}");
    }
    let output = fibkit(&["lookup", table, keys.to_str().unwrap(), "--strict"]);
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(2));
    assert!(stdout.is_empty());
    assert!(stderr.contains(&format!("{file}:3: an octet has a leading zero")), "{stderr}");
    let output = fibkit(&["lookup", "8.8.8.8"]);
    assert!(text(&output).1.contains("8.8.8.8 is an address, not a table"));
    let output = fibkit(&["lookup", table, "10.0.0.1", "--engine", "nonesuch"]);
    assert!(text(&output).1.contains("unknown engine \"nonesuch\""));
}

#[test]
fn addresses_as_arguments_and_in_compressed_files_answer_in_their_order() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "table.txt", TABLE);
    let keys = write(dir.path(), "keys.txt", "10.1.0.1\n");
    let args = ["lookup", table.to_str().unwrap(), "2001:db8::1", keys.to_str().unwrap(), "10.200.0.0", "11.0.0.0"];
    let output = fibkit(&args);
    assert_eq!(text(&output).0, "2001:db8::1\t64502\n10.1.0.1\t64501\n10.200.0.0\t64500\n11.0.0.0\t\n");
    let mut compressed = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut compressed, b"10.1.0.1\n2001:db8::2\n").unwrap();
    let gzipped = dir.path().join("keys.txt.gz");
    std::fs::write(&gzipped, compressed.finish().unwrap()).unwrap();
    let output = fibkit(&["lookup", table.to_str().unwrap(), gzipped.to_str().unwrap()]);
    assert_eq!(text(&output).0, "10.1.0.1\t64501\n2001:db8::2\t64502\n");
    let bytes = std::fs::read(&gzipped).unwrap();
    std::fs::write(&gzipped, &bytes[..bytes.len() - 6]).unwrap();
    let output = fibkit(&["lookup", table.to_str().unwrap(), gzipped.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "a cut gzip file is an error");
    assert!(text(&output).1.contains("keys.txt.gz"), "{}", text(&output).1);
    let output = fibkit(&["lookup", table.to_str().unwrap(), "10.1.0.1", "--nexthops", "7", "--format", "json"]);
    assert_eq!(text(&output).0, format!("{{\"address\":\"10.1.0.1\",\"value\":{}}}\n", 64501 % 7 + 1));
}

#[test]
fn auto_measures_on_the_first_addresses_and_still_answers_every_line() {
    // Over a block of input (1 MiB): the first block is auto's sample, then
    // answered once, in its place, as every other.
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "table.txt", TABLE);
    let table = table.to_str().unwrap();
    let address = |i: u32| match i % 3 {
        0 => std::net::Ipv4Addr::from(0x0a00_0000 | i.wrapping_mul(2_654_435_761) >> 8).to_string(),
        1 => format!("10.1.{}.{}", i % 256, i / 256 % 256),
        _ => format!("2001:db8::{:x}:{:x}", i >> 16, i & 0xffff),
    };
    let lines: String = (0..150_000).map(|i| format!("{}\n", address(i))).collect();
    let rows: String = (0..150_000).map(|i| format!("{i},{}\n", address(i))).collect();
    let lines = write(dir.path(), "lines.txt", &lines);
    let csv = write(dir.path(), "flows.csv", &format!("n,ip\n{rows}"));
    for (input, column) in [(&lines, &[][..]), (&csv, &["--column", "ip"][..])] {
        let input = input.to_str().unwrap();
        let lookup = |inputs: &[&str], engine: &str| {
            let args = [&["lookup", table][..], inputs, &["--format", "csv", "--engine", engine], column].concat();
            let output = fibkit(&args);
            let (stdout, stderr) = text(&output);
            assert!(output.status.success(), "{stderr}");
            stdout
        };
        let want = lookup(&[input], "d16r,poptrie16");
        assert_eq!(want.lines().count(), 150_001);
        assert!(lookup(&[input], "auto") == want, "{input}");
        // A second source after the sampled one: its lines follow, under the one header.
        let (header, body) = want.split_once('\n').unwrap();
        assert!(lookup(&[input, input], "auto") == format!("{header}\n{body}{body}"), "{input} twice");
        let args = [&["lookup", table, "--format", "csv", "--engine", "auto"][..], column].concat();
        let output = fibkit_with_input(&args, &std::fs::read(input).unwrap());
        assert!(text(&output).0 == want, "{input} on standard input");
    }
    // The summary names the engines serving, so what auto chose.
    let summary = |engine: &str| {
        let output = fibkit(&["lookup", table, "10.1.0.1", "2001:db8::1", "--engine", engine, "--summary"]);
        text(&output).1
    };
    let fixed = summary("d16r,poptrie16");
    assert!(fixed.contains(" s (IPv4 by d16r, IPv6 by poptrie16); "), "{fixed}");
    let chosen = summary("auto");
    let ipv4 = chosen.split("(IPv4 by ").nth(1).and_then(|rest| rest.split(',').next());
    assert!(ipv4.is_some_and(|engine| engine != "auto" && !engine.is_empty()), "{chosen}");
}
