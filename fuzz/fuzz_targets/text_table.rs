//! Any bytes as a routing table file: format detection, compression, the
//! prefix and range text parsers, text update streams replayed as a table.
#![no_main]

use std::path::Path;

use fibkit::load::{self, LoadOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let file = Path::new("fuzz.txt");
    for strict in [false, true] {
        if let Ok(table) = load::load_bytes(file, data, &LoadOptions { strict, ..LoadOptions::default() }) {
            assert!(!table.is_empty());
            assert!(!strict || table.warnings.is_empty(), "{:?}", table.warnings);
        }
    }
});
