//! DIR-24-8-BASIC (`dir24-8`): Gupta, Lin, McKeown's scheme as DPDK's
//! `rte_lpm` implements it, the DRAM-bound baseline of the DXR papers.
//!
//! ```text
//!  addr: |        top 24 bits         | low 8 |
//!                      |                   |
//!  tbl24[2^24] ------> entry --(extended)--+--> tbl8[group * 256 + low 8]
//!                        |                             |
//!                        +-> next hop                  +-> next hop
//! ```
//!
//! Every entry is one 32-bit word, in `tbl24` and in the 256-entry groups
//! (`tbl8`) alike:
//!
//! | bits | field | meaning |
//! |---|---|---|
//! | 31..26 | `prefix_len` | length of the prefix that wrote the entry (DPDK's "depth") |
//! | 25 | extended | `tbl24` only: the entry points to a group |
//! | 24 | valid | a route covers the entry |
//! | 23..0 | next hop / group | the next hop, or the group index if extended |
//!
//! Invalid entries are all zero, so their next-hop field reads
//! [`crate::NO_ROUTE`] and a lookup never tests the valid bit.
//!
//! Prefixes of up to 24 bits fill `tbl24` entries (and the matching entries
//! of groups already hanging there); longer prefixes get the group of their
//! /24, created on demand as a copy of the `tbl24` entry. An entry is only
//! overwritten by a prefix at least as long as the one that wrote it, so
//! insertion order does not matter. Removal writes the covering prefix's
//! answer back where the removed prefix's entries were, and a group whose
//! entries all came from prefixes of 24 bits or less (so they are all equal)
//! collapses back into its `tbl24` entry and is freed for reuse.
//!
//! What lookups read is apart from the writer's state, as DPDK keeps its
//! public `struct rte_lpm` (`tbl24`, `tbl8`) apart from the private
//! `__rte_lpm` holding the rules: [`Dir24`] is the lookup structure only,
//! [`Dir24Table`] owns one together with the rules (a [`Rib4`]) and the free
//! groups that [`Dir24Table::insert`] and [`Dir24Table::remove`] need, and
//! [`Dir24Updater`] owns one with the live-update bookkeeping instead.
//!
//! The table is 64 MiB plus 1 KiB per group, the lookup one or two memory
//! reads.
//!
//! Entries are stored as `AtomicU32`: the `tbl24` entry is loaded with
//! `Acquire`, a group entry with `Relaxed` (plain loads on x86-64), so that
//! [`Dir24Updater`] can rewrite a table readers are searching: a new group
//! is filled before the `tbl24` entry pointing to it is stored (`Release`),
//! and a group no longer pointed to is reused only once no reader can still
//! hold the old `tbl24` entry ([`crate::live`]'s reclamation).

mod build;
mod file;
mod live;
mod lookup;
mod rules;
mod stats;

pub use file::open;
pub use live::{updater, Dir24Updater};
pub use rules::Dir24Table;

use std::sync::atomic::{AtomicU32, AtomicUsize};

use crate::error::BuildError;
use crate::fib::{forward_fib, BuildOptions, Fib};
use crate::mem::LookupArray;
use crate::rib::Rib4;
use crate::NextHop;

/// Entries of `tbl24`.
pub const TBL24_ENTRIES: usize = 1 << 24;
/// Entries of a group.
pub const GROUP_ENTRIES: usize = 256;
/// The largest next hop an entry holds (24 bits).
pub const MAX_NEXT_HOP: NextHop = (1 << 24) - 1;

/// A `tbl24` or `tbl8` entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(transparent)]
pub struct Entry(pub u32);

const _: () = assert!(std::mem::size_of::<Entry>() == 4);
const _: () =
    assert!(std::mem::size_of::<AtomicU32>() == 4 && std::mem::align_of::<AtomicU32>() == std::mem::align_of::<u32>());

/// The entries of `cells` as plain entries, for a writer that holds the
/// table exclusively.
fn entries_mut(cells: &mut [AtomicU32]) -> &mut [Entry] {
    // SAFETY: `AtomicU32` has the same size, alignment and bit validity as
    // `u32` (asserted above), `Entry` is a `repr(transparent)` `u32`, and the
    // `&mut` borrow excludes every other access for its lifetime.
    unsafe { std::slice::from_raw_parts_mut(cells.as_mut_ptr().cast::<Entry>(), cells.len()) }
}

impl Entry {
    const VALID: u32 = 1 << 24;
    const EXTENDED: u32 = 1 << 25;
    const VALUE: u32 = (1 << 24) - 1;
    const LEN_SHIFT: u32 = 26;

    /// The entry of no route.
    pub const INVALID: Entry = Entry(0);

    /// An entry for `next_hop` written by a prefix of `prefix_len` bits.
    pub fn route(next_hop: NextHop, prefix_len: u8) -> Self {
        debug_assert!(next_hop <= MAX_NEXT_HOP && prefix_len <= 32);
        Entry(u32::from(prefix_len) << Self::LEN_SHIFT | Self::VALID | next_hop)
    }

    /// A `tbl24` entry pointing to group `group`.
    pub fn group(group: u32) -> Self {
        debug_assert!(group <= Self::VALUE);
        Entry(Self::VALID | Self::EXTENDED | group)
    }

    /// Whether a route covers the entry (or it points to a group).
    #[inline(always)]
    pub fn is_valid(self) -> bool {
        self.0 & Self::VALID != 0
    }

    /// Whether the entry points to a group.
    #[inline(always)]
    pub fn is_extended(self) -> bool {
        self.0 & (Self::VALID | Self::EXTENDED) == Self::VALID | Self::EXTENDED
    }

    /// The next hop, or the group index of an extended entry.
    #[inline(always)]
    pub fn value(self) -> u32 {
        self.0 & Self::VALUE
    }

    /// The length of the prefix that wrote the entry.
    #[inline(always)]
    pub fn prefix_len(self) -> u8 {
        (self.0 >> Self::LEN_SHIFT) as u8
    }

    /// Whether a prefix of `prefix_len` bits may overwrite this entry.
    #[inline(always)]
    fn yields_to(self, prefix_len: u8) -> bool {
        !self.is_valid() || self.prefix_len() <= prefix_len
    }
}

/// A DIR-24-8-BASIC lookup structure: what lookups read, nothing else.
pub struct Dir24 {
    /// One entry per /24 (2^24 of them).
    tbl24: LookupArray<AtomicU32>,
    /// The groups, 256 entries each (freed ones included).
    tbl8: Vec<AtomicU32>,
    /// Routes the table answers for: the rule table's count, or, for a
    /// table served by [`Dir24Updater`], the router's RIB's.
    routes: AtomicUsize,
}

impl Dir24 {
    /// `tbl24` for a writer holding the table exclusively.
    fn tbl24_mut(&mut self) -> &mut [Entry] {
        entries_mut(&mut self.tbl24)
    }
}

impl std::fmt::Debug for Dir24 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dir24")
            .field("prefixes", &self.routes())
            .field("groups_in_use", &self.groups_in_use())
            .field("groups_allocated", &self.groups_allocated())
            .finish()
    }
}

forward_fib!([] Dir24, u32, |_table| "dir24-8", [lookup_batch], [save]);

/// Registry builder for `dir24-8`.
pub fn build(rib: &Rib4, options: &BuildOptions) -> Result<Box<dyn Fib<u32>>, BuildError> {
    if options.max_next_hop > MAX_NEXT_HOP {
        return Err(rules::next_hop_too_large(options.max_next_hop));
    }
    Ok(Box::new(Dir24::build(rib)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_fields_round_trip() {
        let entry = Entry::route(MAX_NEXT_HOP, 32);
        assert!(entry.is_valid() && !entry.is_extended());
        assert_eq!((entry.value(), entry.prefix_len()), (MAX_NEXT_HOP, 32));
        assert_eq!(entry.0, 32 << 26 | 1 << 24 | 0xff_ffff);
        let group = Entry::group(77);
        assert!(group.is_valid() && group.is_extended());
        assert_eq!(group.value(), 77);
        assert_eq!(Entry::INVALID.value(), crate::NO_ROUTE);
        assert!(!Entry::INVALID.is_valid() && !Entry::INVALID.is_extended());
        assert!(Entry::route(3, 0).is_valid(), "a default route is a valid entry");
        assert!(Entry::route(3, 16).yields_to(16) && !Entry::route(3, 17).yields_to(16));
        assert!(Entry::INVALID.yields_to(0));
    }
}
