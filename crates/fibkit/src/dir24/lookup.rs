//! The lookup: one `tbl24` read, one group read for extended entries.

use super::Dir24;
use crate::NextHop;

impl Dir24 {
    /// Longest-prefix match: one `tbl24` read, one group read if extended.
    #[inline]
    pub fn lookup(&self, addr: u32) -> NextHop {
        let mut entry = self.tbl24[(addr >> 8) as usize];
        if entry.is_extended() {
            entry = self.tbl8[(entry.value() as usize) << 8 | (addr & 0xff) as usize];
        }
        entry.value()
    }
}
