//! Building: an empty table, then every route inserted (DPDK builds its
//! table the same way, one `rte_lpm_add` per route).

use super::{Dir24, Entry, TBL24_ENTRIES};
use crate::engine::BuildError;
use crate::rib::Rib4;

impl Dir24 {
    /// An empty table (64 MiB of zeroed `tbl24`, touched lazily).
    pub fn new() -> Self {
        let tbl24 = vec![Entry::INVALID; TBL24_ENTRIES].into_boxed_slice().try_into().expect("2^24 entries");
        Dir24 { tbl24, tbl8: Vec::new(), free_groups: Vec::new(), rules: Rib4::new() }
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
