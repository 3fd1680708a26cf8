//! Update streams (text or MRT), and their replay onto a table.
#![no_main]

use std::path::Path;

use fibkit::load::{self, LoadOptions, RouteTable, Update};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let file = Path::new("fuzz.updates");
    let Ok(stream) = load::updates_from_bytes(file, data, &LoadOptions::default()) else { return };
    assert_eq!(stream.announces() + stream.withdraws(), stream.updates.len());
    let mut table = RouteTable::new("fuzz", Default::default());
    stream.apply_to(&mut table);
    // The replayed table holds exactly the prefixes last announced.
    let mut live = std::collections::HashMap::new();
    for timed in &stream.updates {
        match timed.update {
            Update::Announce { prefix, value } => live.insert(prefix, value),
            Update::Withdraw { prefix } => live.remove(&prefix),
        };
    }
    assert_eq!(table.len(), live.len());
});
