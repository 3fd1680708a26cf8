//! Groups, footprint and the statistics report.

use std::sync::atomic::Ordering;

use super::{Dir24, Entry, GROUP_ENTRIES, TBL24_ENTRIES};
use crate::fib::Stats;

impl Dir24 {
    /// Groups holding entries now: the `tbl24` entries pointing to one
    /// (counted in the live table, so that it is right for a table served
    /// by [`super::Dir24Updater`] too, whose free groups the updater keeps).
    pub fn groups_in_use(&self) -> usize {
        self.tbl24.iter().filter(|entry| Entry(entry.load(Ordering::Relaxed)).is_extended()).count()
    }

    /// Routes the table answers for.
    pub fn routes(&self) -> usize {
        self.routes.load(Ordering::Relaxed)
    }

    /// Groups allocated (in use or free for reuse).
    pub fn groups_allocated(&self) -> usize {
        self.tbl8.len() / GROUP_ENTRIES
    }

    /// Bytes of `tbl24` and the allocated groups.
    pub fn footprint(&self) -> usize {
        std::mem::size_of::<[Entry; TBL24_ENTRIES]>() + self.tbl8.len() * std::mem::size_of::<Entry>()
    }

    /// The statistics report: groups and footprint.
    pub fn report(&self) -> Stats {
        let bytes = self.footprint();
        let prefixes = self.routes();
        let groups_in_use = self.groups_in_use();
        let mut stats = Stats::default();
        stats
            .text("engine", "dir24-8")
            .count("prefixes", prefixes as u64)
            .count("groups_used", groups_in_use as u64)
            .count("groups_allocated", self.groups_allocated() as u64)
            .count("bytes_tbl24", std::mem::size_of::<[Entry; TBL24_ENTRIES]>() as u64)
            .count("bytes_tbl8", (self.tbl8.len() * 4) as u64)
            .count("bytes_total", bytes as u64);
        stats.report = format!(
            "DIR-24-8-BASIC: {prefixes} prefixes, {} tbl8 groups in use ({} allocated)\n\
             tbl24 {} KiB + tbl8 {} KiB = {:.1} MiB ({:.1} bytes/prefix)",
            groups_in_use,
            self.groups_allocated(),
            TBL24_ENTRIES * 4 / 1024,
            self.tbl8.len() * 4 / 1024,
            bytes as f64 / (1024.0 * 1024.0),
            bytes as f64 / prefixes.max(1) as f64
        );
        stats
    }
}
