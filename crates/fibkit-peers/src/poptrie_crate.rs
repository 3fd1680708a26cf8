//! `poptrie-crate`: the third-party pure-Rust `poptrie` crate (not fibkit's
//! own Poptrie engines), looked up with `Poptrie::lookup`.

use fibkit::engine::{BuildError, BuildOptions, Fib4, Stats};
use fibkit::rib::Rib4;
use fibkit::{NextHop, NO_ROUTE};
use poptrie::Poptrie;

use crate::{heap, Footprint};

const NAME: &str = "poptrie-crate";
const SUMMARY: &str = "poptrie crate 0.2, Poptrie::lookup";

/// The crate's `Poptrie` from `(address, prefix_len)` to next hops.
pub struct PoptrieCratePeer {
    trie: Poptrie<(u32, u8), NextHop>,
    footprint: Footprint,
}

/// Registry builder for `poptrie-crate`.
pub fn build_boxed(rib: &Rib4, _options: &BuildOptions) -> Result<Box<dyn Fib4>, BuildError> {
    // The crate's bulk construction (`FromIterator`) builds level by level;
    // inserting one prefix at a time would take minutes on a full table.
    let (trie, heap_bytes) = heap::measure(|| {
        rib.iter()
            .map(|(prefix, next_hop)| ((prefix.addr(), prefix.prefix_len()), next_hop))
            .collect::<Poptrie<(u32, u8), NextHop>>()
    });
    // The crate has no size report; the heap count includes its update
    // bookkeeping (a map of entries per node) besides the lookup arrays.
    let footprint = Footprint { reported: None, heap: heap_bytes };
    Ok(Box::new(PoptrieCratePeer { trie, footprint }))
}

impl Fib4 for PoptrieCratePeer {
    fn name(&self) -> &str {
        NAME
    }

    #[inline]
    fn lookup(&self, addr: u32) -> NextHop {
        self.trie.lookup(addr).copied().unwrap_or(NO_ROUTE)
    }

    fn footprint(&self) -> usize {
        self.footprint.bytes()
    }

    fn stats(&self) -> Stats {
        self.footprint.stats(NAME, SUMMARY, self.trie.len())
    }
}
