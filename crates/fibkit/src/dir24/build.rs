//! Building: an empty table, then every route inserted (DPDK builds its
//! table the same way, one `rte_lpm_add` per route).

use std::sync::atomic::{AtomicU32, AtomicUsize};

use super::{Dir24, TBL24_ENTRIES};
use crate::engine::BuildError;
use crate::mem::LookupArray;
use crate::rib::Rib4;

impl Dir24 {
    /// An empty table: 64 MiB of invalid `tbl24` entries, on huge pages
    /// (see [`crate::mem`]).
    pub fn new() -> Self {
        let tbl24 = LookupArray::from_fn(TBL24_ENTRIES, |_| AtomicU32::new(0));
        Dir24 { tbl24, tbl8: Vec::new(), free_groups: Vec::new(), rules: Rib4::new(), routes: AtomicUsize::new(0) }
    }

    /// Builds the table by inserting every route of `rib`.
    ///
    /// # Errors
    /// If a next hop exceeds 24 bits.
    pub fn build(rib: &Rib4) -> Result<Self, BuildError> {
        let mut table = Dir24::new();
        for (prefix, next_hop) in rib.iter() {
            table.insert(prefix, next_hop)?;
        }
        table.tbl8.shrink_to_fit();
        Ok(table)
    }
}
