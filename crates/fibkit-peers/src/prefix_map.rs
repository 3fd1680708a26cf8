//! `prefix-trie`: the `prefix-trie` crate's `PrefixMap`, looked up with
//! `get_lpm` on the address as a /32.

use fibkit::rib::Rib4;
use fibkit::{NextHop, NO_ROUTE};
use prefix_trie::PrefixMap;

use crate::Library;

/// A `PrefixMap` from `(address, prefix_len)` to next hops.
pub(crate) type PrefixTrie = PrefixMap<(u32, u8), NextHop>;

impl Library for PrefixTrie {
    const NAME: &'static str = "prefix-trie";
    const SUMMARY: &'static str = "prefix-trie crate 0.10, PrefixMap::get_lpm";

    fn insert_all(rib: &Rib4) -> Self {
        let mut map = PrefixMap::new();
        for (prefix, next_hop) in rib.iter() {
            map.insert((prefix.addr(), prefix.prefix_len()), next_hop);
        }
        map
    }

    #[inline]
    fn longest_match(&self, addr: u32) -> NextHop {
        self.get_lpm(&(addr, 32)).map_or(NO_ROUTE, |(_, &next_hop)| next_hop)
    }

    fn routes(&self) -> usize {
        self.len()
    }

    fn reported_bytes(&self) -> Option<usize> {
        Some(self.mem_size())
    }
}
