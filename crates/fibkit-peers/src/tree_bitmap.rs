//! `treebitmap`: the Tree Bitmap of the `ip_network_table-deps-treebitmap`
//! crate (a maintained fork of `treebitmap`, which is no longer on the
//! registry), looked up with `longest_match`.

use std::net::Ipv4Addr;

use fibkit::engine::{BuildError, BuildOptions, Fib4, Stats};
use fibkit::rib::Rib4;
use fibkit::{NextHop, NO_ROUTE};
use ip_network_table_deps_treebitmap::IpLookupTable;

use crate::{heap, Footprint};

const NAME: &str = "treebitmap";
const SUMMARY: &str = "ip_network_table-deps-treebitmap crate 0.5, IpLookupTable::longest_match";

/// An `IpLookupTable` from IPv4 prefixes to next hops.
pub struct TreeBitmapPeer {
    table: IpLookupTable<Ipv4Addr, NextHop>,
    footprint: Footprint,
}

/// Registry builder for `treebitmap`.
pub fn build_boxed(rib: &Rib4, _options: &BuildOptions) -> Result<Box<dyn Fib4>, BuildError> {
    let (table, heap_bytes) = heap::measure(|| {
        let mut table = IpLookupTable::new();
        for (prefix, next_hop) in rib.iter() {
            table.insert(Ipv4Addr::from(prefix.addr()), u32::from(prefix.prefix_len()), next_hop);
        }
        table
    });
    let (node_bytes, result_bytes) = table.mem_usage();
    let footprint = Footprint { reported: Some(node_bytes + result_bytes), heap: heap_bytes };
    Ok(Box::new(TreeBitmapPeer { table, footprint }))
}

impl Fib4 for TreeBitmapPeer {
    fn name(&self) -> &str {
        NAME
    }

    #[inline]
    fn lookup(&self, addr: u32) -> NextHop {
        self.table.longest_match(Ipv4Addr::from(addr)).map_or(NO_ROUTE, |(_, _, &next_hop)| next_hop)
    }

    fn footprint(&self) -> usize {
        self.footprint.bytes()
    }

    fn stats(&self) -> Stats {
        self.footprint.stats(NAME, SUMMARY, self.table.len())
    }
}
