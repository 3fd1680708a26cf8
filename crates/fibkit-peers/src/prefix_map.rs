//! `prefix-trie`: the `prefix-trie` crate's `PrefixMap`, looked up with
//! `get_lpm` on the address as a /32.

use fibkit::engine::{BuildError, BuildOptions, Fib4, Stats};
use fibkit::rib::Rib4;
use fibkit::{NextHop, NO_ROUTE};
use prefix_trie::PrefixMap;

use crate::{heap, Footprint};

const NAME: &str = "prefix-trie";
const SUMMARY: &str = "prefix-trie crate 0.10, PrefixMap::get_lpm";

/// A `PrefixMap` from `(address, prefix_len)` to next hops.
pub struct PrefixTriePeer {
    map: PrefixMap<(u32, u8), NextHop>,
    footprint: Footprint,
}

/// Registry builder for `prefix-trie`.
pub fn build_boxed(rib: &Rib4, _options: &BuildOptions) -> Result<Box<dyn Fib4>, BuildError> {
    let (map, heap_bytes) = heap::measure(|| {
        let mut map = PrefixMap::new();
        for (prefix, next_hop) in rib.iter() {
            map.insert((prefix.addr(), prefix.prefix_len()), next_hop);
        }
        map
    });
    let footprint = Footprint { reported: Some(map.mem_size()), heap: heap_bytes };
    Ok(Box::new(PrefixTriePeer { map, footprint }))
}

impl Fib4 for PrefixTriePeer {
    fn name(&self) -> &str {
        NAME
    }

    #[inline]
    fn lookup(&self, addr: u32) -> NextHop {
        self.map.get_lpm(&(addr, 32)).map_or(NO_ROUTE, |(_, &next_hop)| next_hop)
    }

    fn footprint(&self) -> usize {
        self.footprint.bytes()
    }

    fn stats(&self) -> Stats {
        self.footprint.stats(NAME, SUMMARY, self.map.len())
    }
}
