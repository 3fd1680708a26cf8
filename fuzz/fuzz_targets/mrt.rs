//! MRT bytes (RIB dumps, update streams) read every way: as a table with
//! each peer selector and value, as an update stream, as a peer list.
#![no_main]

use std::path::Path;

use fibkit::load::{self, LoadOptions, PeerSelector, ValueChoice};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let file = Path::new("fuzz.mrt");
    let Some((&selector, bytes)) = data.split_first() else { return };
    let peer = match selector % 4 {
        0 => PeerSelector::MostRoutes,
        1 => PeerSelector::Index(usize::from(selector / 4)),
        2 => PeerSelector::Asn(u32::from(selector)),
        _ => PeerSelector::Address([192, 0, 2, selector].into()),
    };
    let value = if selector & 0x80 != 0 { ValueChoice::OriginAs } else { ValueChoice::NextHop };
    let options = LoadOptions { peer, value, strict: selector & 0x40 != 0, ..LoadOptions::default() };
    if let Ok(table) = load::load_bytes(file, bytes, &options) {
        assert!(!table.is_empty());
    }
    if let Ok(stream) = load::updates_from_bytes(file, bytes, &options) {
        assert!(!stream.updates.is_empty());
    }
    if let Ok(list) = load::list_peers_bytes(file, bytes, &options) {
        // The default peer, when there is one, has routes.
        if let Some(default) = list.default {
            assert!(list.peers[default].routes() > 0);
        }
    }
});
