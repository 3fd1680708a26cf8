//! Key files: text (dotted or decimal) or raw little-endian u32.
#![no_main]

use std::path::Path;

use fibkit::load;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(keys) = load::keys_from_bytes(Path::new("fuzz.keys"), data) {
        assert!(!keys.is_empty());
    }
});
