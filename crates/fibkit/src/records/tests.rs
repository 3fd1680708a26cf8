//! Records through loading, compiling and compiled files: every field of
//! every route comes back as its line wrote it, and damaged record
//! sections are refused or stay in bounds.

use std::net::IpAddr;
use std::path::Path;

use proptest::prelude::*;

use super::*;
use crate::compiled::{CompileOptions, CompiledTable};
use crate::file::{reseal, FibFile};
use crate::load::{load_bytes, LoadOptions};
use crate::random::XorShift32;
use crate::Prefix;

/// Loads `text` with `--fields fields`.
fn load(text: &str, fields: &str) -> Result<crate::load::RouteTable, crate::load::LoadError> {
    let options = LoadOptions { fields: Some(FieldSpec::parse(fields).unwrap()), ..Default::default() };
    load_bytes(Path::new("t.csv"), text.as_bytes(), &options)
}

/// Compiles `table`, writes it and opens the file again.
fn round_trip(table: crate::load::RouteTable, prefixes: bool) -> CompiledTable {
    let options = CompileOptions { engines: vec!["d16r".into(), "poptrie18".into()], prefixes, ..Default::default() };
    let built = CompiledTable::build(table, &options).unwrap();
    let bytes = built.to_file().unwrap().to_bytes();
    CompiledTable::from_file(&FibFile::from_bytes(&bytes, "t.fib").unwrap()).unwrap()
}

/// The record of `addr` in `table`, as text cells.
fn cells(table: &CompiledTable, addr: &str) -> Option<Vec<String>> {
    let hop = match addr.parse::<IpAddr>().unwrap() {
        IpAddr::V4(v4) => table.family_fib::<u32>()?.lookup(u32::from(v4)),
        IpAddr::V6(v6) => table.family_fib::<u128>()?.lookup(u128::from(v6)),
    };
    let records = table.values.records().unwrap();
    (0..records.fields().len()).map(|field| records.get(hop, field).map(|value| value.to_string())).collect()
}

#[test]
fn a_header_names_the_fields_and_types_are_inferred_or_given() {
    let text = "prefix,asn,org,share,anycast,path,router\n\
                10.0.0.0/8,64500,\"Example, Inc.\",0.5,true,64500 3356,192.0.2.1\n\
                10.1.0.0/16,64501,,1,false,64501,2001:db8::1\n\
                2001:db8::/32,64502,Zürich AG,,,,\n";
    let table = load(text, "*,asn:text").unwrap();
    let records = table.records.as_ref().unwrap();
    let fields: Vec<String> = records.fields().iter().map(ToString::to_string).collect();
    assert_eq!(fields, ["asn:text", "org:text", "share:float", "anycast:bool", "path:ints", "router:addr"]);
    for prefixes in [false, true] {
        let compiled = round_trip(table.clone(), prefixes);
        assert_eq!(
            cells(&compiled, "10.9.9.9").unwrap(),
            ["64500", "Example, Inc.", "0.5", "true", "64500 3356", "192.0.2.1"]
        );
        assert_eq!(cells(&compiled, "10.1.0.1").unwrap(), ["64501", "", "1.0", "false", "64501", "2001:db8::1"]);
        assert_eq!(cells(&compiled, "2001:db8::5").unwrap(), ["64502", "Zürich AG", "", "", "", ""]);
        let records = compiled.values.records().unwrap();
        let hop = compiled.family_fib::<u32>().unwrap().lookup(0x0a01_0001);
        assert_eq!(records.get(hop, 4), Some(FieldRef::Ints(&[64501])));
        assert_eq!(records.get(hop, 1), Some(FieldRef::Null));
        let mut json = Vec::new();
        records.write_json(hop, &[0, 2, 3], &mut json);
        assert_eq!(String::from_utf8(json).unwrap(), r#"{"asn":"64501","share":1.0,"anycast":false}"#);
        assert_eq!(compiled.values.value_text(hop).unwrap(), "64501,,1.0,false,64501,2001:db8::1");
        assert_eq!(cells(&compiled, "11.0.0.0"), None, "no route: no record");
    }
}

#[test]
fn ranges_without_a_header_name_their_columns_in_order() {
    let text =
        "1.0.0.0,1.0.0.255,13335,Cloudflare\n1.0.1.0,1.0.3.255,0,Not routed\n1.0.4.0,1.0.7.255,13335,Cloudflare\n";
    let table = load(text, "asn,org").unwrap();
    assert_eq!(table.records.as_ref().unwrap().len(), 1, "one distinct record");
    let compiled = round_trip(table, false);
    assert_eq!(cells(&compiled, "1.0.5.5").unwrap(), ["13335", "Cloudflare"]);
    assert_eq!(cells(&compiled, "1.0.2.0"), None, "value 0: not routed");
}

#[test]
fn bad_fields_are_refused_naming_the_line_or_the_columns() {
    let text = "prefix,asn\n10.0.0.0/8,64500\n10.1.0.0/16,x\n";
    for (fields, problem) in [
        ("asn:int", "t.csv:3: field \"asn\": \"x\" is not an integer (int)"),
        ("org", "--fields names \"org\", which the header's columns after the addresses (asn) do not"),
    ] {
        assert_eq!(
            load(text, fields).unwrap_err().to_string().replace("t.csv:1: ", ""),
            problem.replace("t.csv:1: ", "")
        );
    }
    let headless = "10.0.0.0/8,64500\n";
    assert!(load(headless, "*").unwrap_err().to_string().contains("header line"));
    assert!(load(headless, "asn,org").unwrap_err().to_string().contains("t.csv:1: no column for field \"org\""));
    let options = LoadOptions {
        fields: Some(FieldSpec::parse("asn").unwrap()),
        mapping: crate::nexthop::Mapping::Modulo(8),
        ..Default::default()
    };
    let error = load_bytes(Path::new("t.csv"), headless.as_bytes(), &options).unwrap_err().to_string();
    assert!(error.contains("--nexthops"), "{error}");
    let updates = "1418774413 a 10.0.0.0/8 192.0.2.1\n";
    assert!(load(updates, "asn").unwrap_err().to_string().contains("an update stream"));
}

/// Resealed damage to the record sections: refused naming the file, or
/// opened with every field of every next hop readable (in bounds).
#[test]
fn damaged_record_sections_are_refused_or_stay_in_bounds() {
    let text = "prefix,asn,org,path,router,share\n10.0.0.0/8,1,a,1 2,192.0.2.1,0.5\n10.1.0.0/16,2,bb,3,::1,1.5\n10.2.0.0/16,3,ccc,,,\n";
    let built = CompiledTable::build(load(text, "*").unwrap(), &CompileOptions::default()).unwrap();
    let bytes = built.to_file().unwrap().to_bytes();
    let file = FibFile::from_bytes(&bytes, "t.fib").unwrap();
    let spans: Vec<(u64, u64)> = file
        .section_names()
        .filter(|name| name.starts_with("r."))
        .map(|name| (file.section_offset(name).unwrap(), file.section_length(name).unwrap()))
        .filter(|&(_, length)| length > 0)
        .collect();
    drop(file);
    let mut bits = XorShift32::new(5);
    let (mut refused, mut taken) = (0, 0);
    for round in 0..3000 {
        let mut damaged = bytes.clone();
        let (offset, length) = spans[round % spans.len()];
        let at = (offset + u64::from(bits.next()) % length) as usize;
        damaged[at] = bits.next() as u8;
        reseal(&mut damaged);
        match FibFile::from_bytes(&damaged, "t.fib").and_then(|file| CompiledTable::from_file(&file)) {
            Err(error) => {
                refused += 1;
                assert!(error.to_string().starts_with("t.fib: "), "{error}");
            }
            Ok(table) => {
                taken += 1;
                let records = table.values.records().unwrap();
                for hop in 0..=records.len() as u32 + 1 {
                    for field in 0..records.fields().len() + 1 {
                        let _ = records.get(hop, field).map(|value| value.to_string());
                    }
                    let _ = table.values.value_text(hop);
                }
            }
        }
    }
    assert!(refused > 100 && taken > 100, "refused {refused}, taken {taken}");
}

/// One field's strategy: a type and a value of it (or null) per record.
fn value_of(kind: FieldType) -> BoxedStrategy<FieldValue> {
    let value: BoxedStrategy<FieldValue> = match kind {
        FieldType::Int => any::<i64>().prop_map(FieldValue::Int).boxed(),
        FieldType::Float => (-1e9f64..1e9).prop_map(FieldValue::Float).boxed(),
        FieldType::Bool => any::<bool>().prop_map(FieldValue::Bool).boxed(),
        FieldType::Text => "[a-zA-Z0-9 ,\"é東]{1,12}".prop_map(FieldValue::Text).boxed(),
        FieldType::Addr => any::<u32>().prop_map(|addr| FieldValue::Addr(IpAddr::V4(addr.into()))).boxed(),
        FieldType::Ints => proptest::collection::vec(0i64..5_000_000_000, 1..6).prop_map(FieldValue::Ints).boxed(),
    };
    prop_oneof![1 => Just(FieldValue::Null), 4 => value].boxed()
}

/// A value as a CSV cell of a table (quoted where needed).
fn cell(value: &FieldValue) -> String {
    let text = match value {
        FieldValue::Null => String::new(),
        FieldValue::Int(number) => number.to_string(),
        FieldValue::Float(number) => format!("{number:?}"),
        FieldValue::Bool(flag) => flag.to_string(),
        FieldValue::Text(text) => text.trim().to_string(),
        FieldValue::Addr(addr) => addr.to_string(),
        FieldValue::Ints(numbers) => numbers.iter().map(ToString::to_string).collect::<Vec<_>>().join(" "),
    };
    let mut out = String::new();
    write_csv_cell(&text, &mut out);
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random typed records on random /24s: loaded from CSV with their
    /// types given, compiled, written and opened, every route answers its
    /// own record, field by field.
    #[test]
    fn random_records_come_back_from_a_compiled_file(
        kinds in proptest::collection::vec(proptest::sample::select(FieldType::ALL.to_vec()), 1..5),
        seeds in proptest::collection::vec(any::<u32>(), 1..40),
        records in proptest::collection::vec(any::<u64>(), 40),
    ) {
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let rows: Vec<Vec<FieldValue>> = records.iter().map(|_| {
            kinds.iter().map(|&kind| value_of(kind).new_tree(&mut runner).unwrap().current()).collect()
        }).collect();
        let names: Vec<String> = kinds.iter().enumerate().map(|(index, kind)| format!("f{index}:{kind}")).collect();
        let mut text = format!("prefix,{}\n", names.iter().map(|name| name.split(':').next().unwrap()).collect::<Vec<_>>().join(","));
        let mut expected = std::collections::BTreeMap::new();
        for (index, seed) in seeds.iter().enumerate() {
            let prefix = Prefix::<u32>::truncating(*seed, 24);
            let row = &rows[index % rows.len()];
            text.push_str(&format!("{prefix},{}\n", row.iter().map(cell).collect::<Vec<_>>().join(",")));
            expected.insert(prefix, row.clone());
        }
        let table = load(&text, &names.join(",")).unwrap();
        let compiled = round_trip(table, false);
        let records = compiled.values.records().unwrap();
        for (prefix, row) in expected {
            let hop = compiled.family_fib::<u32>().unwrap().lookup(prefix.addr() | 0x7f);
            for (field, value) in row.iter().enumerate() {
                let got = records.get(hop, field).unwrap();
                let want = match value {
                    FieldValue::Text(text) if text.trim().is_empty() => FieldRef::Null,
                    FieldValue::Text(text) => FieldRef::Text(text.trim()),
                    FieldValue::Null => FieldRef::Null,
                    FieldValue::Int(number) => FieldRef::Int(*number),
                    FieldValue::Float(number) => FieldRef::Float(*number),
                    FieldValue::Bool(flag) => FieldRef::Bool(*flag),
                    FieldValue::Addr(addr) => FieldRef::Addr(*addr),
                    FieldValue::Ints(numbers) => FieldRef::Ints(numbers),
                };
                prop_assert_eq!(got, want, "{} field {}", prefix, field);
            }
        }
    }
}
