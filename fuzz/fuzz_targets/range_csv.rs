//! Range files: the input follows a valid range line, so the range parser
//! (CSV, TSV or blank separated, by the first byte) reads all of it.
#![no_main]

use std::path::Path;

use fibkit::load::{self, LoadOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let first_line: &[u8] = match selector % 3 {
        0 => b"\"1.0.0.0\",\"1.0.0.255\",\"13335\"\n",
        1 => b"16777216\t16777471\t13335\tUS\tX\n",
        _ => b"1.0.0.0 1.0.0.255 13335\n",
    };
    let mut bytes = first_line.to_vec();
    bytes.extend_from_slice(rest);
    let file = Path::new("fuzz.csv");
    for strict in [false, true] {
        if let Ok(table) = load::load_bytes(file, &bytes, &LoadOptions { strict, ..LoadOptions::default() }) {
            assert!(!table.is_empty());
        }
    }
});
