//! The lookup: one `tbl24` read, one group read for extended entries.

use std::sync::atomic::Ordering;

use super::{Dir24, Entry};
use crate::NextHop;

impl Dir24 {
    /// Longest-prefix match: one `tbl24` read, one group read if extended.
    #[inline]
    pub fn lookup(&self, addr: u32) -> NextHop {
        // `Acquire`: a group the updater filled before storing this entry is
        // seen filled.
        let mut entry = Entry(self.tbl24[(addr >> 8) as usize].load(Ordering::Acquire));
        if entry.is_extended() {
            entry = Entry(self.tbl8[(entry.value() as usize) << 8 | (addr & 0xff) as usize].load(Ordering::Relaxed));
        }
        entry.value()
    }
}
