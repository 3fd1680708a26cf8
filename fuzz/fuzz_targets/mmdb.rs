//! MaxMind DB files: any bytes as a `.mmdb` file, through fibkit's loader
//! with three `--fields` specs (types inferred from the values; types
//! given that the values may not have; a path to a map, which is refused).
//! A table loaded must have a record for every next hop, answer every
//! route's first and last address (and the space's edges) as its RIB does,
//! and give every field of that next hop's record, and none past the last
//! field, without a panic or a read out of bounds.
#![no_main]

use std::path::Path;

use fibkit::compiled::{CompileOptions, CompiledFamily, CompiledTable, Values};
use fibkit::load::{self, LoadOptions};
use fibkit::nexthop::Label;
use fibkit::records::FieldSpec;
use fibkit::{Address, Rib};
use libfuzzer_sys::fuzz_target;

const SPECS: [&str; 3] = [
    "country.iso_code,location.latitude,autonomous_system_number,subdivisions.0.names.en,asns",
    "country.iso_code:int,location.latitude:text,autonomous_system_number:float,flag:bool,asns:ints,names.1:text",
    "country",
];

fuzz_target!(|data: &[u8]| {
    for spec in SPECS {
        let options =
            LoadOptions { fields: Some(FieldSpec::parse(spec).expect("the specs parse")), ..LoadOptions::default() };
        let Ok(mut table) = load::load_bytes(Path::new("fuzz.mmdb"), data, &options) else { continue };
        let records = table.records.as_ref().expect("a MaxMind DB table has records");
        let hops = table.next_hops.len();
        for hop in table.v4.iter().map(|(_, hop)| hop).chain(table.v6.iter().map(|(_, hop)| hop)) {
            assert!(hop != 0 && hop as usize <= hops, "next hop {hop} of {hops}");
        }
        for hop in 1..=hops as u32 {
            let Some(Label::Record(row)) = table.next_hops.label(hop) else { panic!("next hop {hop} is not a record") };
            assert!(records.get(row).is_some(), "record {row} of {}", records.len());
        }
        // As compiling does: the model is the table the FIBs are built from.
        load::fold_ipv4_mapped(&mut table);
        let (v4, v6) = (table.v4.clone(), table.v6.clone());
        let options =
            CompileOptions { engines: vec!["d16r".into(), "poptrie16".into()], prefixes: false, ..Default::default() };
        let Ok(built) = CompiledTable::build(table, &options) else { continue };
        if let Some(family) = &built.v4 {
            answer_all(family, &v4, &built.values);
        }
        if let Some(family) = &built.v6 {
            answer_all(family, &v6, &built.values);
        }
    }
});

/// Looks up the first and last address of every route and the space's
/// edges: each answer a next hop the values know, with every field of its
/// record readable.
fn answer_all<A: Address>(family: &CompiledFamily<A>, rib: &Rib<A>, values: &Values) {
    let records = values.records().expect("a MaxMind DB table's values are records");
    let fields = records.fields().len();
    let mut keys = vec![A::ZERO, A::MAX];
    keys.extend(rib.iter().flat_map(|(prefix, _)| [prefix.first(), prefix.last()]));
    for key in keys {
        let hop = family.lookup(key);
        assert!(hop <= values.max_index());
        assert_eq!(hop, rib.lookup(key), "{key:?}");
        if hop == 0 {
            continue;
        }
        for field in 0..fields {
            let _ = records.get(hop, field).map(|value| value.to_string());
        }
        assert!(records.get(hop, fields).is_none());
        assert!(values.value_text(hop).is_some());
    }
}
