//! Unit tests of the loaders on in-memory bytes.

use std::io::Write;
use std::net::IpAddr;
use std::path::Path;

use super::*;
use crate::addr::{Prefix4, Prefix6};
use crate::nexthop::Label;
use crate::NO_ROUTE;

fn load_text(text: &str) -> Result<RouteTable, LoadError> {
    load_bytes(Path::new("test.txt"), text.as_bytes(), &LoadOptions::default())
}

fn load_strict(text: &str) -> Result<RouteTable, LoadError> {
    load_bytes(Path::new("test.txt"), text.as_bytes(), &LoadOptions { strict: true, ..Default::default() })
}

fn v4(text: &str) -> u32 {
    u32::from(text.parse::<std::net::Ipv4Addr>().unwrap())
}

fn v6(text: &str) -> u128 {
    u128::from(text.parse::<std::net::Ipv6Addr>().unwrap())
}

/// The value the table gives `addr` (`"none"` without a route).
fn value_at(table: &RouteTable, addr: &str) -> String {
    let hop = if addr.contains(':') { table.v6.lookup(v6(addr)) } else { table.v4.lookup(v4(addr)) };
    table.next_hops.describe(hop)
}

/// The table's IPv4 routes as `prefix value` lines, in address order.
fn v4_routes(table: &RouteTable) -> Vec<String> {
    table.v4.iter().map(|(prefix, hop)| format!("{prefix} {}", table.next_hops.describe(hop))).collect()
}

fn expect_error(text: &str, line: usize, needle: &str) {
    let error = load_text(text).expect_err(&format!("{text:?} loaded"));
    assert_eq!(error.position, Position::Line(line), "{error}");
    assert!(error.message.contains(needle), "{error} lacks {needle:?}");
    assert!(error.to_string().starts_with(&format!("test.txt:{line}: ")), "{error}");
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn bzip2(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

const IPASN: &str = "; IP-ASN32-DAT file\n; Prefixes : 4\n; \n\
                     1.0.0.0/24\t15169\n1.0.4.0/22\t56203\n1.0.0.0/8\t1\n0.0.0.0/0\t7\n";

#[test]
fn ipasn_lines_load_with_their_values() {
    let table = load_text(IPASN).unwrap();
    assert_eq!(table.v4.len(), 4);
    assert_eq!(table.name, "test.txt");
    assert!(table.warnings.is_empty());
    assert_eq!(value_at(&table, "1.0.0.200"), "15169");
    assert_eq!(value_at(&table, "1.0.5.1"), "56203");
    assert_eq!(value_at(&table, "1.2.3.4"), "1");
    assert_eq!(value_at(&table, "200.0.0.1"), "7");
    // Interned in order of appearance.
    assert_eq!(table.next_hops.describe(1), "15169");
    assert_eq!(table.next_hops.len(), 4);
}

#[test]
fn prefix_text_round_trips() {
    let original = load_text(IPASN).unwrap();
    let written: String = v4_routes(&original).iter().map(|line| format!("{line}\n")).collect();
    let reloaded = load_text(&written).unwrap();
    assert_eq!(v4_routes(&reloaded), v4_routes(&original));
    let tabbed = written.replace(' ', "\t");
    assert_eq!(v4_routes(&load_text(&tabbed).unwrap()), v4_routes(&original));
    let csv = written.replace(' ', ",");
    assert_eq!(v4_routes(&load_text(&csv).unwrap()), v4_routes(&original));
    let with_header = format!("prefix,asn\n{csv}");
    assert_eq!(v4_routes(&load_text(&with_header).unwrap()), v4_routes(&original));
}

#[test]
fn plain_text_mixes_families_and_next_hop_kinds() {
    let text = "# LINX style\r\n2600:2004::/32 2001:7f8:4::1a0b:1\r\n\r\n10.0.0.0/8   195.66.226.74\r\n\
                192.168.0.0/16 42\r\n::/0 2001:7f8:4::1\r\n";
    let table = load_text(text).unwrap();
    assert_eq!((table.v4.len(), table.v6.len()), (2, 2));
    assert!(table.warnings.is_empty(), "{:?}", table.warnings);
    assert_eq!(value_at(&table, "2600:2004:1::1"), "2001:7f8:4::1a0b:1");
    assert_eq!(value_at(&table, "2a00::1"), "2001:7f8:4::1");
    assert_eq!(value_at(&table, "10.1.2.3"), "195.66.226.74");
    assert_eq!(value_at(&table, "192.168.1.1"), "42");
    assert_eq!(value_at(&table, "11.0.0.0"), "none");
    let addr: IpAddr = "195.66.226.74".parse().unwrap();
    assert!((1..=table.next_hops.max_index()).any(|hop| table.next_hops.describe(hop) == addr.to_string()));
}

#[test]
fn nexthops_mapping_applies_to_every_format() {
    let options = LoadOptions { mapping: Mapping::Modulo(239), ..Default::default() };
    let table = load_bytes(Path::new("t"), b"10.0.0.0/8 478\n11.0.0.0/8 240\n", &options).unwrap();
    assert_eq!(table.v4.lookup(v4("10.0.0.1")), 1);
    assert_eq!(table.v4.lookup(v4("11.0.0.1")), 2);
    let ranges = load_bytes(Path::new("t"), b"10.0.0.0,10.0.0.255,478\n", &options).unwrap();
    assert_eq!(ranges.v4.lookup(v4("10.0.0.1")), 1);
}

/// Comment lines before a CSV header and between rows count as lines:
/// the header is skipped, and messages name the line as an editor shows it
/// (the csv reader's own count leaves comment lines out).
#[test]
fn csv_lines_after_comments_are_numbered_as_in_the_file() {
    let text = "# written by a tool\n# two comment lines\nprefix,asn\n10.0.0.0/8,64500\n# between\n10.0.0.0/8,64501\n";
    let table = load_text(text).unwrap();
    assert_eq!(v4_routes(&table), ["10.0.0.0/8 64501"]);
    assert!(table.warnings[0].contains("test.txt:6: 10.0.0.0/8 repeats line 4"), "{}", table.warnings[0]);
    let bad = load_text("# one\r# two\r\n10.0.0.0/8,1\n10.0.0.300/8,2\n").unwrap_err();
    assert_eq!(bad.line(), Some(4), "{bad}");
}

#[test]
fn range_csv_with_quotes_header_and_extra_columns() {
    let text = "start_ip,end_ip,asn,name\n\
                \"1.0.0.0\",\"1.0.0.255\",\"13335\",\"Cloudflare, Inc.\"\n\
                1.0.1.0,1.0.3.255,38803,\"Gtelecom \"\"Pty\"\" Ltd\"\n\
                \"1.0.4.0\",\"1.0.4.6\",\"56203\"\n";
    let table = load_text(text).unwrap();
    assert_eq!(
        v4_routes(&table),
        [
            "1.0.0.0/24 13335",
            "1.0.1.0/24 38803",
            "1.0.2.0/23 38803",
            "1.0.4.0/30 56203",
            "1.0.4.4/31 56203",
            "1.0.4.6/32 56203"
        ]
    );
}

#[test]
fn iptoasn_tsv_dotted_and_numeric() {
    let dotted = "1.0.0.0\t1.0.0.255\t13335\tUS\tCLOUDFLARENET - Cloudflare, Inc.\n\
                  1.0.1.0\t1.0.3.255\t0\tNone\tNot routed\n\
                  1.0.4.0\t1.0.7.255\t38803\tAU\tGTELECOM-AUSTRALIA Gtelecom Pty Ltd\n";
    let table = load_text(dotted).unwrap();
    assert_eq!(v4_routes(&table), ["1.0.0.0/24 13335", "1.0.4.0/22 38803"]);
    assert_eq!(value_at(&table, "1.0.2.1"), "none");
    let numeric = "16777216\t16777471\t13335\tUS\tCLOUDFLARENET\n16778240\t16779263\t38803\tAU\tGTELECOM\n";
    assert_eq!(v4_routes(&load_text(numeric).unwrap()), ["1.0.0.0/24 13335", "1.0.4.0/22 38803"]);
}

#[test]
fn ipv6_ranges_dotted_and_numeric() {
    let text = "2001:db8::,2001:db8::ffff,64500\n2001:db8:1::,2001:db8:1:ffff:ffff:ffff:ffff:ffff,64501\n";
    let table = load_text(text).unwrap();
    assert!(table.v4.is_empty());
    let routes: Vec<String> = table.v6.iter().map(|(p, h)| format!("{p} {}", table.next_hops.describe(h))).collect();
    assert_eq!(routes, ["2001:db8::/112 64500", "2001:db8:1::/48 64501"]);
    // Decimal addresses beyond 32 bits make a file IPv6.
    let numeric = format!("{},{},1\n{},{},2\n", v6("::1:0:0"), v6("::1:0:ff"), v6("2001:db8::"), v6("2001:db8::ff"));
    let table = load_text(&numeric).unwrap();
    assert!(table.v4.is_empty());
    assert_eq!(
        table.v6.get("::1:0:0/120".parse::<Prefix6>().unwrap()).map(|h| table.next_hops.describe(h)),
        Some("1".into())
    );
    assert_eq!(value_at(&table, "2001:db8::80"), "2");
}

#[test]
fn decimal_ranges_of_both_families_in_one_file_are_an_error_naming_the_line() {
    // One IPv6-sized number among decimal IPv4 ranges once turned every
    // range of the file into IPv6 without a word.
    let v4 = "16777216\t16777471\t13335\n16778240\t16779263\t38803\n";
    expect_error(&format!("{v4}16779264\t4294967296\t1\n"), 3, "is beyond IPv4 (2^32 - 1), but line 1's");
    // Either order: small numbers after IPv6-sized ones.
    let v6_first = format!("{},{},2\n0,255,1\n", v6("2001:db8::"), v6("2001:db8::ff"));
    expect_error(&v6_first, 2, "fits IPv4, but line 1's decimal range is beyond IPv4");
    // Dotted IPv4 beside decimal IPv6 stays fine: its notation says its family.
    let dotted_and_decimal = format!("1.0.0.0,1.0.0.255,1\n{},{},2\n", v6("2001:db8::"), v6("2001:db8::ff"));
    let table = load_text(&dotted_and_decimal).unwrap();
    assert_eq!(value_at(&table, "1.0.0.1"), "1");
    assert_eq!(value_at(&table, "2001:db8::80"), "2");
}

#[test]
fn range_file_round_trips_through_the_rib() {
    let text = "1.0.0.0,1.0.0.0,1\n1.0.0.1,1.0.0.6,2\n1.0.0.7,1.255.255.255,3\n5.0.0.0,5.0.0.0,2\n";
    let table = load_text(text).unwrap();
    let written: String = table
        .v4
        .ranges(0, u32::MAX)
        .into_iter()
        .filter(|range| range.next_hop != NO_ROUTE)
        .map(|range| format!("{},{},{}\n", range.first, range.last, table.next_hops.describe(range.next_hop)))
        .collect();
    let reloaded = load_text(&written).unwrap();
    assert_eq!(v4_routes(&reloaded), v4_routes(&table));
    assert_eq!(reloaded.v4.ranges(0, u32::MAX), table.v4.ranges(0, u32::MAX));
}

#[test]
fn adjacent_equal_ranges_merge_into_fewer_prefixes() {
    let table = load_text("10.0.0.0,10.0.0.127,5\n10.0.0.128,10.0.0.255,5\n").unwrap();
    assert_eq!(v4_routes(&table), ["10.0.0.0/24 5"]);
    assert!(table.warnings.is_empty());
}

#[test]
fn bad_prefix_lines_name_line_and_problem() {
    expect_error("1.0.0.0/24 1\n1.0.0.1/24 2\n", 2, "host bits set in 1.0.0.1/24 (did you mean 1.0.0.0/24?)");
    expect_error("; c\n1.0.0.0/33\t1\n", 2, "prefix length 33 exceeds 32");
    expect_error("2001:db8::/129 1\n", 1, "prefix length 129 exceeds 128");
    expect_error("1.0.0.0/24 1\n1.0.1.0/024 2\n", 2, "prefix length \"024\" has a leading zero");
    expect_error("2001:db8::/032 1\n", 1, "prefix length \"032\" has a leading zero");
    expect_error("1.0.0.0/24 1\n\n1.0.0/24 1\n", 3, "malformed address \"1.0.0\"");
    expect_error("1.0.0.0/24 1\n1.0.1.0/24\n", 2, "missing value column");
    expect_error("1.0.0.0/24 1\n1.0.1.0/24 AS15169\n", 2, "non-numeric value \"AS15169\"");
    expect_error("1.0.0.0/24 1\n1.0.1.0/24 99999999999999999999999\n", 2, "too large");
    expect_error("1.0.0.0/24 1\n1.0.1.0 5\n", 2, "missing '/prefix_len'");
    expect_error("1.0.0.0/24 1\n1.0.1.0/x 5\n", 2, "malformed prefix length");
}

#[test]
fn bad_range_lines_name_line_and_problem() {
    expect_error("1.0.0.0,1.0.0.255,1\n1.0.1.0,1.0.0.255,2\n", 2, "END 1.0.0.255 is before its START 1.0.1.0");
    expect_error("1.0.0.0,1.0.0.255,1\n1.0.1.0,1.0.1.255\n", 2, "missing VALUE column");
    expect_error("1.0.0.0\t1.0.0.255\t1\n1.0.1.0\n", 2, "missing END column");
    expect_error("1.0.0.0,1.0.0.255,1\n1.0.1.0,1.0.1.256,2\n", 2, "END: malformed address \"1.0.1.256\"");
    expect_error("1.0.0.0,1.0.0.255,1\n1.0.1.0,::1,2\n", 2, "not of the same kind");
    expect_error("1.0.0.0,1.0.0.255,1\n1.0.1.0,1.0.1.255,US\n", 2, "non-numeric value \"US\"");
    expect_error("1,2,3\n4,400000000000000000000000000000000000000000,5\n", 2, "out of range");
}

#[test]
fn garbage_empty_and_binary_input_are_errors() {
    let empty = load_text("").unwrap_err();
    assert_eq!(empty.position, Position::File);
    assert!(empty.message.contains("no routes"), "{empty}");
    assert!(load_text("; only\n# comments\n\n").unwrap_err().message.contains("no routes"));
    assert!(load_text("start,end,asn\n").unwrap_err().message.contains("no routes"));
    let all_unrouted = load_text("1.0.0.0,1.0.0.255,0\n").unwrap_err();
    assert!(all_unrouted.message.contains("no routes"), "{all_unrouted}");
    expect_error("\n\nhello world\n", 3, "not a routing table line");
    let binary = load_bytes(Path::new("b"), b"1.0.0.0/8 1\n\x00\x01\x02", &LoadOptions::default()).unwrap_err();
    assert_eq!(binary.position, Position::Offset(12));
    assert!(binary.message.contains("binary data"), "{binary}");
    let latin1 = load_bytes(Path::new("b"), b"1.0.0.0/8 1 caf\xe9\n", &LoadOptions::default()).unwrap_err();
    assert_eq!(latin1.position, Position::Offset(15));
    let xz = load_bytes(Path::new("b"), b"\xfd7zXZ\x00rest", &LoadOptions::default()).unwrap_err();
    assert!(xz.message.contains("xz-compressed data is not supported"), "{xz}");
}

#[test]
fn duplicate_prefixes_warn_and_the_later_line_wins() {
    let text = "10.0.0.0/8 1\n11.0.0.0/8 2\n10.0.0.0/8 3\n2001:db8::/32 4\n10.0.0.0/8 3\n2001:db8::/32 5\n";
    let table = load_text(text).unwrap();
    assert_eq!(value_at(&table, "10.1.1.1"), "3");
    assert_eq!(value_at(&table, "2001:db8::1"), "5");
    assert_eq!(
        table.warnings,
        [
            "test.txt:3: 10.0.0.0/8 repeats line 1: value 3 replaces 1 (the later line wins)",
            "test.txt:5: 10.0.0.0/8 repeats line 3 with the same value 3",
            "test.txt:6: 2001:db8::/32 repeats line 4: value 5 replaces 4 (the later line wins)",
        ]
    );
    // Values only on replaced lines are not next hops.
    assert_eq!(table.next_hops.len(), 3);
    let strict = load_strict(text).unwrap_err();
    assert_eq!(strict.position, Position::Line(3));
    assert!(strict.message.contains("repeats line 1") && strict.message.contains("strict"), "{strict}");
    assert!(load_strict("10.0.0.0/8 1\n11.0.0.0/8 1\n").is_ok());
}

#[test]
fn overlapping_ranges_warn_and_the_later_line_wins() {
    // Line 2 punches a hole into line 1; line 3 covers line 2's end and beyond.
    let text = "10.0.0.0,10.0.0.255,1\n10.0.0.64,10.0.0.127,2\n10.0.0.100,10.0.1.255,3\n";
    let table = load_text(text).unwrap();
    assert_eq!(value_at(&table, "10.0.0.63"), "1");
    assert_eq!(value_at(&table, "10.0.0.64"), "2");
    assert_eq!(value_at(&table, "10.0.0.99"), "2");
    assert_eq!(value_at(&table, "10.0.0.100"), "3");
    assert_eq!(value_at(&table, "10.0.0.255"), "3");
    assert_eq!(value_at(&table, "10.0.1.255"), "3");
    assert_eq!(value_at(&table, "10.0.2.0"), "none");
    assert_eq!(
        table.warnings,
        [
            "test.txt:2: range 10.0.0.64-10.0.0.127 overlaps line 1 (10.0.0.0-10.0.0.255) on \
             10.0.0.64-10.0.0.127: value 2 replaces 1 (the later line wins)",
            "test.txt:3: range 10.0.0.100-10.0.1.255 overlaps line 2 (10.0.0.64-10.0.0.127) on \
             10.0.0.100-10.0.0.127: value 3 replaces 2 (the later line wins)",
            "test.txt:3: range 10.0.0.100-10.0.1.255 overlaps line 1 (10.0.0.128-10.0.0.255) on \
             10.0.0.128-10.0.0.255: value 3 replaces 1 (the later line wins)",
        ]
    );
    let strict = load_strict(text).unwrap_err();
    assert_eq!(strict.position, Position::Line(2));
    // A later "not routed" range withdraws the shared addresses.
    let withdrawn = load_text("10.0.0.0,10.0.0.255,1\n10.0.0.0,10.0.0.127,0\n").unwrap();
    assert_eq!(v4_routes(&withdrawn), ["10.0.0.128/25 1"]);
    assert_eq!(withdrawn.warnings.len(), 1);
    assert!(withdrawn.warnings[0].contains("not routed replaces 1"), "{}", withdrawn.warnings[0]);
}

#[test]
fn out_of_order_disjoint_ranges_are_no_conflict() {
    let table = load_strict("10.0.1.0,10.0.1.255,2\n10.0.0.0,10.0.0.255,1\n").unwrap();
    assert_eq!(v4_routes(&table), ["10.0.0.0/24 1", "10.0.1.0/24 2"]);
    assert!(table.warnings.is_empty());
}

#[test]
fn compressed_bytes_are_detected_by_magic() {
    let plain = IPASN.as_bytes();
    let expected = v4_routes(&load_text(IPASN).unwrap());
    for compressed in [gzip(plain), bzip2(plain)] {
        let table = load_bytes(Path::new("table.txt"), &compressed, &LoadOptions::default()).unwrap();
        assert_eq!(v4_routes(&table), expected);
    }
    // Two gzip members in a row are one stream (as `cat a.gz b.gz`).
    let mut two = gzip(b"10.0.0.0/8 1\n");
    two.extend(gzip(b"11.0.0.0/8 2\n"));
    assert_eq!(load_bytes(Path::new("t"), &two, &LoadOptions::default()).unwrap().v4.len(), 2);
    // A truncated stream keeps its complete lines and warns where the data
    // ends (an error in strict mode); a corrupt one is an error.
    for compressed in [gzip(plain), bzip2(plain)] {
        let truncated = &compressed[..compressed.len() - 10];
        let table = load_bytes(Path::new("t.gz"), truncated, &LoadOptions::default()).unwrap();
        let complete = load_text(&IPASN[..=IPASN[..IPASN.len() - 1].rfind('\n').unwrap()]).unwrap();
        let kept = v4_routes(&table);
        assert!(kept.len() >= v4_routes(&complete).len() - 1 && kept.iter().all(|route| expected.contains(route)));
        assert_eq!(table.warnings.len(), 1);
        assert!(table.warnings[0].starts_with("t.gz: at byte "), "{}", table.warnings[0]);
        assert!(table.warnings[0].contains("stream is truncated after"), "{}", table.warnings[0]);
        let error =
            load_bytes(Path::new("t.gz"), truncated, &LoadOptions { strict: true, ..Default::default() }).unwrap_err();
        assert!(matches!(error.position, Position::Offset(_)), "{error}");
        assert!(error.message.ends_with("an error in strict mode"), "{error}");
    }
    let mut corrupt = gzip(plain);
    let middle = corrupt.len() - 6;
    corrupt[middle] ^= 0xff;
    let error = load_bytes(Path::new("t.gz"), &corrupt, &LoadOptions::default()).unwrap_err();
    assert!(error.message.contains("gzip data is corrupt"), "{error}");
    // Where in the compressed file the decoder stopped: here, at its end.
    assert_eq!(error.position, Position::Offset(corrupt.len() as u64));
}

#[test]
fn a_truncated_stream_drops_the_partial_last_line() {
    let text = "10.0.0.0/8 1\n10.1.0.0/16 2\n10.2.0.0/16 3\n".repeat(2000);
    let compressed = gzip(text.as_bytes());
    let table = load_bytes(Path::new("t"), &compressed[..compressed.len() / 2], &LoadOptions::default()).unwrap();
    let warning = &table.warnings[0];
    assert!(warning.contains("complete lines before it; the partial line"), "{warning}");
    assert_eq!(table.v4.len(), 3);
}

#[test]
fn keys_as_text_raw_and_compressed() {
    let file = Path::new("keys");
    let text = b"# keys\n1.2.3.4\n\n16909060 # decimal\n255.255.255.255\r\n0\n";
    let expected = vec![0x0102_0304, 0x0102_0304, u32::MAX, 0];
    assert_eq!(keys_from_bytes(file, text).unwrap(), expected);
    let raw: Vec<u8> = expected.iter().flat_map(|key| key.to_le_bytes()).collect();
    assert_eq!(keys_from_bytes(file, &raw).unwrap(), expected);
    assert_eq!(keys_from_bytes(file, &gzip(text)).unwrap(), expected);
    assert_eq!(keys_from_bytes(file, &bzip2(&raw)).unwrap(), expected);
}

#[test]
fn bad_key_files_name_the_problem() {
    let file = Path::new("keys");
    // A text file with a bad line stays a text file even at a length of 4k.
    let typo = b"1.2.3.4\n1.2.3.x\n";
    assert_eq!(typo.len() % 4, 0);
    let error = keys_from_bytes(file, typo).unwrap_err();
    assert_eq!(error.position, Position::Line(2));
    assert!(error.message.contains("malformed address \"1.2.3.x\" in an IPv4 key file"), "{error}");
    let error = keys_from_bytes(file, b"1.2.3.4\n4294967296\n").unwrap_err();
    assert!(error.message.contains("exceeds 32 bits"), "{error}");
    let error = keys_from_bytes(file, b"\x00\x01\x02\xff\xfe").unwrap_err();
    assert!(error.message.contains("not a multiple of 4"), "{error}");
    for empty in [&b""[..], b"# nothing\n\n"] {
        let error = keys_from_bytes(file, empty).unwrap_err();
        assert!(error.message.contains("no keys"), "{error}");
    }
}

#[test]
fn table_name_is_the_file_name() {
    assert_eq!(table_name(Path::new("some/dir/rib.ipasn.gz")), "rib.ipasn.gz");
    assert_eq!(table_name(Path::new("x")), "x");
}

#[test]
fn ranges_become_exact_prefixes_for_ipv4_edges() {
    let table = load_text("0.0.0.0,255.255.255.255,1\n").unwrap();
    assert_eq!(v4_routes(&table), ["0.0.0.0/0 1"]);
    let table = load_text("0,0,1\n4294967295,4294967295,2\n").unwrap();
    assert_eq!(v4_routes(&table), ["0.0.0.0/32 1", "255.255.255.255/32 2"]);
    let table = load_text("255.255.255.0,255.255.255.255,1\n255.255.255.128,255.255.255.255,2\n").unwrap();
    assert_eq!(v4_routes(&table), ["255.255.255.0/25 1", "255.255.255.128/25 2"]);
    assert!(table.v4.get("255.255.255.0/25".parse::<Prefix4>().unwrap()).is_some());
    assert_eq!(Label::Number(2).to_string(), value_at(&table, "255.255.255.255"));
}

#[test]
fn ipv6_keys_as_text_raw_and_compressed() {
    let file = Path::new("keys6");
    let text = b"# keys\n2001:db8::1\n\n::ffff:1.2.3.4 # mapped\nffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff\r\n42\n";
    let expected = vec![(0x2001_0db8 << 96) | 1, 0xffff_0102_0304, u128::MAX, 42];
    assert_eq!(keys6_from_bytes(file, text).unwrap(), expected);
    let raw: Vec<u8> = expected.iter().flat_map(|key| key.to_be_bytes()).collect();
    assert_eq!(raw[..4], [0x20, 0x01, 0x0d, 0xb8], "raw keys are in network byte order");
    assert_eq!(keys6_from_bytes(file, &raw).unwrap(), expected);
    assert_eq!(keys6_from_bytes(file, &gzip(text)).unwrap(), expected);
    assert_eq!(keys6_from_bytes(file, &bzip2(&raw)).unwrap(), expected);
}

#[test]
fn bad_ipv6_key_files_name_the_problem() {
    let file = Path::new("keys6");
    let error = keys6_from_bytes(file, b"2001:db8::1\n2001:db8::g\n").unwrap_err();
    assert_eq!(error.position, Position::Line(2));
    assert!(error.message.contains("malformed address \"2001:db8::g\" in an IPv6 key file"), "{error}");
    let error = keys6_from_bytes(file, b"2001:db8::1\n1.2.3.4\n").unwrap_err();
    assert!(error.message.contains("IPv4 address \"1.2.3.4\" in an IPv6 key file"), "{error}");
    let too_big = format!("::1\n{}0\n", u128::MAX);
    let error = keys6_from_bytes(file, too_big.as_bytes()).unwrap_err();
    assert!(error.message.contains("exceeds 128 bits"), "{error}");
    let error = keys6_from_bytes(file, b"\x00\x01\x02\xff\xfe").unwrap_err();
    assert!(error.message.contains("nor raw 16-byte keys"), "{error}");
    let error = keys6_from_bytes(file, b"# nothing\n").unwrap_err();
    assert!(error.message.contains("no keys"), "{error}");
}

#[test]
fn a_utf8_byte_order_mark_starts_no_route() {
    // Spreadsheet exports start with one; it used to be refused as a
    // malformed address on line 1.
    for text in ["\u{feff}10.0.0.0/8,64500\n11.0.0.0/8,64501\n", "\u{feff}\"1.0.0.0\",\"1.0.0.255\",\"13335\"\n"] {
        let table = load_strict(text).unwrap_or_else(|error| panic!("{text:?}: {error}"));
        assert!(table.warnings.is_empty(), "{:?}", table.warnings);
    }
    let table = load_text("\u{feff}10.0.0.0/8 7\n").unwrap();
    assert_eq!(value_at(&table, "10.1.2.3"), "7");
    let stream =
        updates_from_bytes(Path::new("u.txt"), "\u{feff}1418774413 w 10.0.0.0/8\n".as_bytes(), &LoadOptions::default());
    assert_eq!(stream.unwrap().updates.len(), 1);
    // Only at the start: inside the text it is still refused.
    assert!(load_text("10.0.0.0/8 7\n\u{feff}11.0.0.0/8 8\n").is_err());
}

#[test]
fn printable_key_files_are_never_read_as_raw_keys() {
    // 48 bytes of IPv6 text, a multiple of 4: it used to become 12 raw u32 keys.
    let text = b"2001:db8::1\n2001:db8::2\n2001:db8::3\n2001:db8::4\n";
    assert_eq!(text.len() % 4, 0);
    let error = keys_from_bytes(Path::new("keys"), text).unwrap_err();
    assert_eq!(error.position, Position::Line(1));
    assert!(error.message.contains("IPv6 address \"2001:db8::1\" in an IPv4 key file"), "{error}");
    // Text whose first line is bad (a header) is still text.
    let error = keys_from_bytes(Path::new("keys"), b"addr\n1.2.3.4\n").unwrap_err();
    assert!(error.message.contains("malformed address \"addr\""), "{error}");
    // Raw keys that happen to be partly printable still read as raw.
    let raw: Vec<u8> = [0x4142_4344u32, 0x0102_0304].iter().flat_map(|key| key.to_le_bytes()).collect();
    assert_eq!(keys_from_bytes(Path::new("keys"), &raw).unwrap(), [0x4142_4344, 0x0102_0304]);
}

#[test]
fn a_bare_cr_ends_a_line_in_every_text_format() {
    // Old Mac exports end lines with CR alone; the whole file used to be
    // one line, of which the first route was kept (even with --strict).
    let table = load_strict("10.0.0.0/8 1\r11.0.0.0/8 2\r12.0.0.0/8 3\r").unwrap();
    assert_eq!(table.v4.len(), 3);
    let table = load_strict("; ipasn\r1.0.64.0/18\t18144\r1.0.128.0/17\t9737\r").unwrap();
    assert_eq!(table.v4.len(), 2);
    let table = load_strict("1.0.0.0,1.0.0.255,13335\r1.0.1.0,1.0.1.255,38803\r").unwrap();
    assert_eq!(table.v4.len(), 2);
    let stream = updates_from_bytes(
        Path::new("u.txt"),
        b"1418774413 a 10.0.0.0/8 1\r1418774414 w 10.0.0.0/8 0.0.0.0\r1418774415 a 11.0.0.0/8 2\r",
        &LoadOptions { strict: true, ..Default::default() },
    );
    assert_eq!(stream.unwrap().updates.len(), 3);
    assert_eq!(keys_from_bytes(Path::new("keys"), b"1.2.3.4\r5.6.7.8\r").unwrap(), [0x0102_0304, 0x0506_0708]);
    // Line numbers count CR, LF and CRLF alike.
    let error = load_text("10.0.0.0/8 1\r11.0.0.0/8 2\r\n12.0.0.0/88 3\n").unwrap_err();
    assert_eq!(error.position, Position::Line(3));
}

#[test]
fn columns_a_format_does_not_have_are_reported() {
    let table = load_text("10.0.0.0/8 1\n11.0.0.0/8 2 3 4\n12.0.0.0/8 5 6\n").unwrap();
    assert_eq!(table.v4.len(), 3);
    assert_eq!(table.warnings.len(), 1, "{:?}", table.warnings);
    assert!(
        table.warnings[0]
            .contains(":2: 2 line(s) have columns after PREFIX VALUE, which are ignored (the first: \"3 4\")"),
        "{:?}",
        table.warnings
    );
    let error = load_strict("10.0.0.0/8 1 x\n").unwrap_err();
    assert!(error.message.contains("an error in strict mode"), "{error}");
    let options = LoadOptions { strict: true, ..Default::default() };
    let error = updates_from_bytes(Path::new("u"), b"1418774413 a 10.0.0.0/8 1 2\n", &options).unwrap_err();
    assert!(error.message.contains("columns after UNIXTIME a|w PREFIX NEXTHOP"), "{error}");
    // A withdrawal may name a next hop; range files have extra columns (names).
    assert!(updates_from_bytes(Path::new("u"), b"1418774413 w 10.0.0.0/8 0.0.0.0\n", &options).is_ok());
    assert!(load_strict("1.0.0.0,1.0.0.255,13335,Cloudflare\n").is_ok());
}

#[test]
fn messages_quote_a_bounded_part_of_the_input() {
    // A megabyte-long field used to be echoed whole into the message.
    let long = "9".repeat(1 << 20);
    let texts = [
        format!("10.0.0.0/8 {long}\n"),
        format!("10.0.0.0/8 {long}x\n"),
        format!("{long}.0/8 1\n"),
        format!("10.0.0.0/{long} 1\n"),
        format!("1.0.0.0,{long},1\n"),
        format!("1.0.0.0,::{long},1\n"),
        format!("{long}\n"),
    ];
    for text in &texts {
        let error = load_text(text).unwrap_err().to_string();
        assert!(error.len() < 300, "{} bytes: {}", error.len(), &error[..300]);
    }
    let options = LoadOptions::default();
    let error = updates_from_bytes(Path::new("u"), format!("1418774413 a 10.0.0.0/8 {long}\n").as_bytes(), &options);
    assert!(error.unwrap_err().to_string().len() < 300);
    let error = keys_from_bytes(Path::new("keys"), format!("1.2.3.4\n{long}\n").as_bytes()).unwrap_err();
    assert!(error.to_string().len() < 300);
}

#[test]
fn bytes_after_a_complete_stream_are_not_a_truncation() {
    let text = b"10.0.0.0/8 1\n11.0.0.0/8 2\n";
    let strict = LoadOptions { strict: true, ..Default::default() };
    for (name, compress) in [("gzip", gzip as fn(&[u8]) -> Vec<u8>), ("bzip2", bzip2)] {
        let compressed = compress(text);
        // Members back to back (`cat a.gz b.gz`) are one stream.
        let mut members = compressed.clone();
        members.extend(compress(b"12.0.0.0/8 3\n"));
        assert_eq!(load_bytes(Path::new("t"), &members, &strict).unwrap().v4.len(), 3);
        // Zero padding after the stream is ignored, as gzip(1) does.
        let mut padded = compressed.clone();
        padded.extend([0; 512]);
        let table = load_bytes(Path::new("t"), &padded, &strict).unwrap();
        assert_eq!((table.v4.len(), table.warnings.len()), (2, 0), "{name}: {:?}", table.warnings);
        // Other bytes are reported for what they are, where they are; they
        // used to be "truncation", in strict mode an error on a complete file.
        let mut garbage = compressed.clone();
        garbage.extend(b"garbage");
        let table = load_bytes(Path::new("t"), &garbage, &LoadOptions::default()).unwrap();
        assert_eq!(table.v4.len(), 2);
        let expected =
            format!("t: at byte {}: 7 bytes after the end of the {name} stream are not {name} data", compressed.len());
        assert!(table.warnings.len() == 1 && table.warnings[0].starts_with(&expected), "{:?}", table.warnings);
        let error = load_bytes(Path::new("t"), &garbage, &strict).unwrap_err();
        assert!(error.message.contains("are not") && !error.message.contains("truncated"), "{error}");
        let error = keys_from_bytes(Path::new("k"), &{
            let mut keys = compress(b"1.2.3.4\n");
            keys.extend(b"x");
            keys
        });
        assert!(error.unwrap_err().message.contains("1 bytes after the end"));
    }
}

#[test]
fn a_stream_cut_in_its_first_line_says_so() {
    // It used to say "no routes in the file (empty, or only comments)".
    let text = "10.0.0.0/8 1\n".repeat(20_000);
    let (gzipped, bzipped) = (gzip(text.as_bytes()), bzip2(text.as_bytes()));
    // gzip is cut in its header; bzip2 in its one 900 kB block.
    for (name, cut) in [("gzip", &gzipped[..12]), ("bzip2", &bzipped[..bzipped.len() / 2])] {
        let error = load_bytes(Path::new("t"), cut, &LoadOptions::default()).unwrap_err();
        assert!(error.message.contains(&format!("the {name} stream is truncated")), "{error}");
        assert!(error.message.contains("before the end of the first line"), "{error}");
        let stream = updates_from_bytes(Path::new("u"), cut, &LoadOptions::default());
        assert!(stream.unwrap_err().message.contains("truncated"));
    }
}

#[test]
fn devices_and_folders_are_refused_before_any_read() {
    // `/dev/zero` once read until memory ran out.
    let error = load_path(Path::new("/dev/zero"), &LoadOptions::default()).unwrap_err();
    assert_eq!(error.to_string(), "/dev/zero: a character device, not a table file or a stream");
    let folder = tempfile::tempdir().unwrap();
    let error = load_path(folder.path(), &LoadOptions::default()).unwrap_err();
    assert!(error.to_string().ends_with(": a folder, not a table file or a stream"), "{error}");
}
