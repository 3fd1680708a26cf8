//! Building: an empty table, then every route inserted (DPDK builds its
//! table the same way, one `rte_lpm_add` per route).

use std::sync::atomic::{AtomicU32, AtomicUsize};

use super::{Dir24, Dir24Table, TBL24_ENTRIES};
use crate::error::BuildError;
use crate::mem::LookupArray;
use crate::rib::Rib4;

impl Dir24 {
    /// An empty table: 64 MiB of invalid `tbl24` entries, on huge pages
    /// (see [`crate::mem`]).
    pub(super) fn empty() -> Self {
        let tbl24 = LookupArray::from_fn(TBL24_ENTRIES, |_| AtomicU32::new(0));
        Dir24 { tbl24, tbl8: Vec::new(), routes: AtomicUsize::new(0) }
    }

    /// Builds the table by inserting every route of `rib`
    /// ([`Dir24Table::build`]), and keeps only what lookups read.
    ///
    /// # Errors
    /// As [`Dir24Table::insert`]: a next hop beyond 24 bits, or 0.
    pub fn build(rib: &Rib4) -> Result<Self, BuildError> {
        Ok(Dir24Table::build(rib)?.into_parts().0)
    }
}

impl Dir24Table {
    /// Builds the table by inserting every route of `rib`, as DPDK builds
    /// one with an `rte_lpm_add` per route.
    ///
    /// # Errors
    /// As [`Dir24Table::insert`].
    pub fn build(rib: &Rib4) -> Result<Self, BuildError> {
        let mut table = Dir24Table::new();
        for (prefix, next_hop) in rib.iter() {
            table.insert(prefix, next_hop)?;
        }
        table.fib.tbl8.shrink_to_fit();
        Ok(table)
    }
}
