//! `poptrie-crate`: the third-party pure-Rust `poptrie` crate (not fibkit's
//! own Poptrie engines), looked up with `Poptrie::lookup`. It reports no
//! size of its own: its footprint is the heap its build left
//! ([`crate::heap`]).

use fibkit::rib::Rib4;
use fibkit::{NextHop, NO_ROUTE};
use poptrie::Poptrie;

use crate::Library;

/// The crate's trie from `(address, prefix_len)` to next hops.
pub(crate) type PoptrieCrate = Poptrie<(u32, u8), NextHop>;

impl Library for PoptrieCrate {
    const NAME: &'static str = "poptrie-crate";
    const SUMMARY: &'static str = "poptrie crate 0.2, Poptrie::lookup";

    fn insert_all(rib: &Rib4) -> Self {
        rib.iter().map(|(prefix, next_hop)| ((prefix.addr(), prefix.prefix_len()), next_hop)).collect()
    }

    #[inline]
    fn longest_match(&self, addr: u32) -> NextHop {
        self.lookup(addr).copied().unwrap_or(NO_ROUTE)
    }

    fn routes(&self) -> usize {
        self.len()
    }

    fn reported_bytes(&self) -> Option<usize> {
        None
    }
}
