//! Records on a real table: the IP-to-ASN ranges of the data folder
//! (`ipdb-asn-2026-06/asn-ipv6.csv.gz`, `START,END,ASN,ORGANISATION`)
//! loaded with `--fields asn,org`, compiled and written to a file: both
//! ends of every range, and the addresses just outside it, answer the
//! fields of the line that covers them, read from the CSV here.

mod common;

use std::io::Read;
use std::net::Ipv6Addr;

use fibkit::compiled::{CompileOptions, CompiledTable};
use fibkit::file::FibFile;
use fibkit::load::{self, LoadOptions};
use fibkit::records::{FieldRef, FieldSpec};

#[test]
fn every_range_of_the_asn_table_answers_its_line_s_fields() {
    let Some(path) = common::shared_data("ipdb-asn-2026-06/asn-ipv6.csv.gz") else { return };
    let options = LoadOptions { fields: Some(FieldSpec::parse("asn,org").unwrap()), ..Default::default() };
    let table = load::load_path(&path, &options).unwrap();
    assert!(table.warnings.is_empty(), "the ranges are disjoint: {:?}", table.warnings.first());
    let built = CompiledTable::build(table, &CompileOptions::default()).unwrap();
    let bytes = built.to_file().unwrap().to_bytes();
    let compiled = CompiledTable::from_file(&FibFile::from_bytes(&bytes, "asn.fib").unwrap()).unwrap();
    let records = compiled.values.records().unwrap();
    let (asn, org) = (records.field_index("asn").unwrap(), records.field_index("org").unwrap());
    let v6 = compiled.family_fib::<u128>().unwrap();

    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap()).read_to_string(&mut text).unwrap();
    let mut reader = csv::ReaderBuilder::new().has_headers(false).from_reader(text.as_bytes());
    let mut ranges: Vec<(u128, u128, i64, String)> = Vec::new();
    for line in reader.records() {
        let line = line.unwrap();
        let first = u128::from(line[0].parse::<Ipv6Addr>().unwrap());
        let last = u128::from(line[1].parse::<Ipv6Addr>().unwrap());
        ranges.push((first, last, line[2].parse().unwrap(), line[3].trim().to_string()));
    }
    ranges.sort();
    let answer = |addr: u128| {
        let hop = v6.lookup(addr);
        (records.get(hop, asn), records.get(hop, org))
    };
    let mut checked = 0;
    for (index, (first, last, number, name)) in ranges.iter().enumerate() {
        let expected = if *number == 0 {
            (None, None)
        } else {
            let name = if name.is_empty() { FieldRef::Null } else { FieldRef::Text(name) };
            (Some(FieldRef::Int(*number)), Some(name))
        };
        for addr in [*first, *last] {
            assert_eq!(answer(addr), expected, "{} in line range {index}", Ipv6Addr::from(addr));
            checked += 1;
        }
        // Just past the range: the next range's, or no route.
        if let Some(after) = last.checked_add(1) {
            if ranges.get(index + 1).is_none_or(|next| next.0 > after) {
                assert_eq!(answer(after), (None, None), "{} after a range", Ipv6Addr::from(after));
            }
        }
    }
    assert!(checked > 100_000, "{checked} addresses");
}
