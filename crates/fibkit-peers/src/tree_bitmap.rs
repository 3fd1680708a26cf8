//! `treebitmap`: the Tree Bitmap of the `ip_network_table-deps-treebitmap`
//! crate (a maintained fork of `treebitmap`, which is no longer on the
//! registry), looked up with `longest_match`.

use std::net::Ipv4Addr;

use fibkit::rib::Rib4;
use fibkit::{NextHop, NO_ROUTE};
use ip_network_table_deps_treebitmap::IpLookupTable;

use crate::Library;

/// The crate's IPv4 lookup table of next hops.
pub(crate) type TreeBitmap = IpLookupTable<Ipv4Addr, NextHop>;

impl Library for TreeBitmap {
    const NAME: &'static str = "treebitmap";
    const SUMMARY: &'static str = "ip_network_table-deps-treebitmap crate 0.5, IpLookupTable::longest_match";

    fn insert_all(rib: &Rib4) -> Self {
        let mut table = IpLookupTable::new();
        for (prefix, next_hop) in rib.iter() {
            table.insert(Ipv4Addr::from(prefix.addr()), u32::from(prefix.prefix_len()), next_hop);
        }
        table
    }

    #[inline]
    fn longest_match(&self, addr: u32) -> NextHop {
        IpLookupTable::longest_match(self, Ipv4Addr::from(addr)).map_or(NO_ROUTE, |(_, _, &next_hop)| next_hop)
    }

    fn routes(&self) -> usize {
        self.len()
    }

    fn reported_bytes(&self) -> Option<usize> {
        let (node_bytes, result_bytes) = self.mem_usage();
        Some(node_bytes + result_bytes)
    }
}
