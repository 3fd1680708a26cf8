//! Records: a text table's columns and a MaxMind DB file's paths as
//! fields. The first byte chooses how the rest is read: CSV after a header
//! line with every column a field (`*`), headless CSV with typed fields,
//! or any bytes as a MaxMind DB file with paths. A table loaded must
//! compile, write and open again, and answer every field of every next
//! hop without a panic, as it was built.
#![no_main]

use std::path::Path;

use fibkit::compiled::{CompileOptions, CompiledTable};
use fibkit::file::FibFile;
use fibkit::load::{self, LoadOptions};
use fibkit::records::FieldSpec;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let (bytes, fields) = match selector % 3 {
        0 => ([b"prefix,a,b,c\n".as_slice(), rest].concat(), "*"),
        1 => ([b"10.0.0.0/8,1,x,1.5\n".as_slice(), rest].concat(), "a:int,b,c"),
        _ => (rest.to_vec(), "country.iso_code,location.latitude,autonomous_system_number,subdivisions.0.names.en"),
    };
    let options = LoadOptions { fields: Some(FieldSpec::parse(fields).unwrap()), ..LoadOptions::default() };
    let Ok(table) = load::load_bytes(Path::new("fuzz.table"), &bytes, &options) else { return };
    let options =
        CompileOptions { engines: vec!["d16r".into(), "poptrie16".into()], prefixes: false, ..Default::default() };
    let Ok(built) = CompiledTable::build(table, &options) else { return };
    let written = built.to_file().expect("d16r and poptrie16 are savable").to_bytes();
    let file = FibFile::from_bytes(&written, "fuzz.fib").expect("a file just written opens");
    let opened = CompiledTable::from_file(&file).expect("a table just written opens");
    let (Some(before), Some(after)) = (built.values.records(), opened.values.records()) else {
        panic!("records lost in the file")
    };
    assert_eq!(before.len(), after.len());
    for hop in 0..=before.len() as u32 + 1 {
        for field in 0..before.fields().len() + 1 {
            let (was, is) = (before.get(hop, field), after.get(hop, field));
            assert_eq!(was.map(|value| value.to_string()), is.map(|value| value.to_string()), "{hop} {field}");
        }
        assert_eq!(built.values.value_text(hop), opened.values.value_text(hop));
    }
});
