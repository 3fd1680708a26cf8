//! Compiled FIB files: any bytes to the opener. An input whose first byte
//! is odd has its checksums recomputed first (`file::reseal`), so that
//! damage reaches the engines' own checks instead of stopping at the
//! checksum. An opened table must answer every key, through the scalar
//! and the batch path, without a panic or a read out of bounds, with an
//! answer the file's values (or routes) know. The two paths may differ on
//! a hostile file only: opening does not check the order of a DXR chunk's
//! fragments, which only a file forged with valid checksums can break.
#![no_main]

use fibkit::compiled::{CompiledFamily, CompiledTable, Values};
use fibkit::file::{self, FibFile};
use fibkit::Address;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.to_vec();
    if data.first().is_some_and(|first| first & 1 == 1) {
        file::reseal(&mut bytes);
    }
    let Ok(opened) = FibFile::from_bytes(&bytes, "fuzz.fib") else { return };
    let Ok(table) = CompiledTable::from_file(&opened) else { return };
    // Keys: the edges of the space and words taken from the input.
    let words: Vec<u32> =
        data.chunks(4).map(|chunk| chunk.iter().fold(0, |word, &byte| word << 8 | u32::from(byte))).collect();
    let mut keys4: Vec<u32> = vec![0, u32::MAX, 0x0a00_0000];
    keys4.extend(words.iter().take(4096));
    let mut keys6: Vec<u128> = vec![0, u128::MAX];
    keys6.extend(words.iter().take(4096).map(|&word| u128::from(word) << 96 | u128::from(word)));
    if let Some(v4) = &table.v4 {
        answer_all(v4, &keys4, &table.values);
    }
    if let Some(v6) = &table.v6 {
        answer_all(v6, &keys6, &table.values);
    }
    let _ = (table.v4.as_ref().map(|v4| v4.fib().stats()), table.v6.as_ref().map(|v6| v6.fib().stats()));
});

/// Answers `keys` through the batch and the scalar path: every answer a
/// next hop the values know, a route number of a route the file has.
fn answer_all<A: Address>(family: &CompiledFamily<A>, keys: &[A], values: &Values) {
    let mut answers = vec![0; keys.len()];
    family.lookup_batch(keys, &mut answers);
    for (&key, &batch) in keys.iter().zip(&answers) {
        for answer in [batch, family.fib().lookup(key)] {
            assert!(family.next_hop(answer) <= values.max_index());
            assert_eq!(family.has_prefixes() && answer != 0, family.route(answer).is_some());
            let _ = (values.value_text(family.next_hop(answer)), values.label(family.next_hop(answer)));
        }
    }
}
