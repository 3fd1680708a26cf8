//! Building: an empty table, then every route inserted (DPDK builds its
//! table the same way, one `rte_lpm_add` per route).

use std::sync::atomic::{AtomicU32, AtomicUsize};

use super::{Dir24, TBL24_ENTRIES};
use crate::engine::BuildError;
use crate::rib::Rib4;

impl Dir24 {
    /// An empty table (64 MiB of zeroed `tbl24`, touched lazily).
    pub fn new() -> Self {
        // Zeroed (calloc'd, so its pages are touched lazily), then viewed as
        // atomic entries.
        let zeroed: Box<[u32]> = vec![0u32; TBL24_ENTRIES].into_boxed_slice();
        // SAFETY: `AtomicU32` has the same size, alignment and bit validity
        // as `u32` (asserted in the module), so the allocation holds a valid
        // `[AtomicU32]` of the same length and layout.
        let tbl24: Box<[AtomicU32]> = unsafe { Box::from_raw(Box::into_raw(zeroed) as *mut [AtomicU32]) };
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
