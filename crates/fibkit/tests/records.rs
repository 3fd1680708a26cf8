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
use fibkit::nexthop::Label;
use fibkit::records::{FieldRef, FieldSpec, FieldValue};

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

/// An MRT RIB dump's routes as records: on a real dump, every route's
/// `next_hop` and `origin_as` fields are the values `--value next-hop` and
/// `--value origin-as` give it, and a path ending in a sequence ends with
/// its origin.
#[test]
fn mrt_fields_agree_with_the_values_of_the_same_routes() {
    for name in ["mrt/rib.20140523.0600_firstMB.bz2", "mrt/rib6.20151101.0600_firstMB.bz2"] {
        let Some(path) = common::shared_data(name) else { continue };
        let spec = FieldSpec::parse("next_hop,origin_as,as_path,communities,peer_as").unwrap();
        let records = load::load_path(&path, &LoadOptions { fields: Some(spec), ..Default::default() }).unwrap();
        // A record is no number to map onto N next hops: refused, not
        // interned as one (every route answered nothing).
        let mapped = LoadOptions {
            fields: Some(FieldSpec::parse("origin_as").unwrap()),
            mapping: fibkit::nexthop::Mapping::Modulo(8),
            ..Default::default()
        };
        let refused = load::load_path(&path, &mapped).unwrap_err().to_string();
        assert!(refused.contains("--nexthops cannot map"), "{refused}");
        let next_hops = load::load_path(&path, &LoadOptions::default()).unwrap();
        let origins =
            load::load_path(&path, &LoadOptions { value: load::ValueChoice::OriginAs, ..Default::default() }).unwrap();
        let record_table = records.records.as_ref().unwrap();
        let mut checked = 0;
        let v4 = next_hops.v4.iter().zip(origins.v4.iter());
        for ((prefix, hop), ((_, by_hop), (_, by_origin))) in records.v4.iter().zip(v4) {
            let Some(fibkit::nexthop::Label::Record(row)) = records.next_hops.label(hop) else {
                panic!("{prefix}: not a record")
            };
            let values = record_table.get(row).unwrap();
            let label = |value: &FieldValue| match value {
                FieldValue::Addr(addr) => Some(Label::Addr(*addr)),
                FieldValue::Int(number) => Some(Label::Number(*number as u64)),
                _ => None,
            };
            assert_eq!(label(&values[0]), next_hops.next_hops.label(by_hop), "{prefix} next hop");
            assert_eq!(label(&values[1]), origins.next_hops.label(by_origin), "{prefix} origin");
            checked += 1;
        }
        for (prefix, hop) in records.v6.iter() {
            let Some(fibkit::nexthop::Label::Record(row)) = records.next_hops.label(hop) else { panic!("{prefix}") };
            let values = record_table.get(row).unwrap();
            if let (FieldValue::Ints(path), FieldValue::Int(origin)) = (&values[2], &values[1]) {
                assert!(path.contains(origin), "{prefix}: origin {origin} in {path:?}");
            }
            checked += 1;
        }
        assert!(checked > 1000, "{name}: {checked} routes");
    }
}
