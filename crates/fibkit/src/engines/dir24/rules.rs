//! The rule table: [`Dir24Table`], DIR-24-8 with the routes it was given
//! (its rules) and its free groups, for insertion and removal in place as
//! `rte_lpm_add` / `rte_lpm_delete` do.

use std::sync::atomic::AtomicU32;

use super::{entries_mut, Dir24, Entry, GROUP_ENTRIES, MAX_NEXT_HOP};
use crate::addr::Prefix4;
use crate::error::{BuildError, Limit, LimitExceeded};
use crate::mem::try_reserve;
use crate::rib::Rib4;
use crate::{NextHop, NO_ROUTE};

pub(super) fn next_hop_too_large(next_hop: NextHop) -> BuildError {
    let field = "the 24-bit next-hop field of DIR-24-8 entries";
    LimitExceeded::new("dir24-8", Limit::NextHop, field, next_hop.into(), MAX_NEXT_HOP.into()).into()
}

/// A DIR-24-8 table with the writer's state DPDK keeps in its private
/// `__rte_lpm`: the rules (to find covering routes on removal) and the free
/// groups. Lookups go to [`Dir24Table::fib`].
pub struct Dir24Table {
    pub(super) fib: Dir24,
    /// The routes, to find covering prefixes on removal.
    rules: Rib4,
    /// Groups free for reuse.
    free_groups: Vec<u32>,
}

impl Default for Dir24Table {
    fn default() -> Self {
        Self::new()
    }
}

impl Dir24Table {
    /// An empty table (64 MiB of invalid `tbl24` entries).
    pub fn new() -> Self {
        Dir24Table { fib: Dir24::empty(), rules: Rib4::new(), free_groups: Vec::new() }
    }

    /// The lookup structure.
    pub fn fib(&self) -> &Dir24 {
        &self.fib
    }

    /// The routes the table holds.
    pub fn rules(&self) -> &Rib4 {
        &self.rules
    }

    /// The lookup structure and the free groups (the rules are dropped).
    pub(super) fn into_parts(self) -> (Dir24, Vec<u32>) {
        (self.fib, self.free_groups)
    }

    /// Sets the route for `prefix`; returns the next hop it replaced.
    ///
    /// Entries written by a longer prefix keep their answer.
    ///
    /// # Errors
    /// If `next_hop` is [`NO_ROUTE`] or does not fit 24 bits; if the
    /// system refuses the memory of a new group
    /// ([`BuildError::OutOfMemory`]). The table is unchanged then.
    pub fn insert(&mut self, prefix: Prefix4, next_hop: NextHop) -> Result<Option<NextHop>, BuildError> {
        if next_hop == NO_ROUTE {
            return Err(BuildError::Route {
                engine: "dir24-8".to_string(),
                route: prefix.to_string(),
                problem: "next hop 0 means no route; use remove",
            });
        }
        if next_hop > MAX_NEXT_HOP {
            return Err(next_hop_too_large(next_hop));
        }
        let prefix_len = prefix.prefix_len();
        // A group first (filled with the block's answer, so the table
        // answers as before): nothing else changes if it cannot be had.
        let group = if prefix_len > 24 {
            let first = (prefix.addr() >> 8) as usize;
            let current = self.fib.tbl24_mut()[first];
            if current.is_extended() {
                Some(current.value())
            } else {
                let group = self.allocate_group(current)?;
                self.fib.tbl24_mut()[first] = Entry::group(group);
                Some(group)
            }
        } else {
            None
        };
        let previous = self.rules.insert(prefix, next_hop);
        *self.fib.routes.get_mut() = self.rules.len();
        let entry = Entry::route(next_hop, prefix_len);
        let overwrite = |old: Entry| old.yields_to(prefix_len).then_some(entry);
        match group {
            None => self.rewrite_tbl24_span(prefix, overwrite),
            Some(group) => self.rewrite_group_span(group, prefix, overwrite),
        }
        Ok(previous)
    }

    /// Withdraws the route for exactly `prefix`; returns its next hop.
    ///
    /// The entries it wrote get the answer of the longest prefix covering
    /// it (or none); a group left without entries of prefixes longer than
    /// 24 bits is folded back into `tbl24` and freed.
    pub fn remove(&mut self, prefix: Prefix4) -> Option<NextHop> {
        let removed = self.rules.remove(prefix)?;
        *self.fib.routes.get_mut() = self.rules.len();
        let prefix_len = prefix.prefix_len();
        let replacement = match self.covering_rule(prefix) {
            Some((covering_len, next_hop)) => Entry::route(next_hop, covering_len),
            None => Entry::INVALID,
        };
        let restore = |old: Entry| (old.is_valid() && old.prefix_len() == prefix_len).then_some(replacement);
        if prefix_len <= 24 {
            self.rewrite_tbl24_span(prefix, restore);
        } else {
            let first = (prefix.addr() >> 8) as usize;
            let current = self.fib.tbl24_mut()[first];
            assert!(current.is_extended(), "a route longer than /24 has a group");
            let group = current.value();
            self.rewrite_group_span(group, prefix, restore);
            let slots = self.group_mut(group);
            let uniform = slots[0];
            if uniform.prefix_len() <= 24 && slots.iter().all(|&slot| slot == uniform) {
                slots.fill(Entry::INVALID);
                self.free_groups.push(group);
                self.fib.tbl24_mut()[first] = uniform;
            }
        }
        Some(removed)
    }

    /// Gives every entry a route of 24 bits or fewer covers (its `tbl24`
    /// entries, or every slot of the groups they point to) `rewrite(old)`,
    /// where that is `Some`.
    fn rewrite_tbl24_span(&mut self, prefix: Prefix4, rewrite: impl Fn(Entry) -> Option<Entry>) {
        let first = (prefix.addr() >> 8) as usize;
        for index in first..first + (1 << (24 - prefix.prefix_len())) {
            let current = self.fib.tbl24_mut()[index];
            if current.is_extended() {
                self.rewrite_slots(current.value(), 0..GROUP_ENTRIES, &rewrite);
            } else if let Some(entry) = rewrite(current) {
                self.fib.tbl24_mut()[index] = entry;
            }
        }
    }

    /// Gives the slots of `group` a route longer than 24 bits covers
    /// `rewrite(old)`, where that is `Some`.
    fn rewrite_group_span(&mut self, group: u32, prefix: Prefix4, rewrite: impl Fn(Entry) -> Option<Entry>) {
        let start = (prefix.addr() & 0xff) as usize;
        self.rewrite_slots(group, start..start + (1 << (32 - prefix.prefix_len())), &rewrite);
    }

    fn rewrite_slots(&mut self, group: u32, slots: std::ops::Range<usize>, rewrite: &impl Fn(Entry) -> Option<Entry>) {
        for slot in &mut self.group_mut(group)[slots] {
            if let Some(entry) = rewrite(*slot) {
                *slot = entry;
            }
        }
    }

    /// The longest route strictly covering `prefix`: (prefix_len, next hop).
    fn covering_rule(&self, prefix: Prefix4) -> Option<(u8, NextHop)> {
        (0..prefix.prefix_len())
            .rev()
            .find_map(|len| self.rules.get(Prefix4::truncating(prefix.addr(), len)).map(|next_hop| (len, next_hop)))
    }

    fn group_mut(&mut self, group: u32) -> &mut [Entry] {
        let start = group as usize * GROUP_ENTRIES;
        &mut entries_mut(&mut self.fib.tbl8)[start..start + GROUP_ENTRIES]
    }

    /// A group whose entries all start as `fill` (a non-extended entry).
    ///
    /// # Errors
    /// [`BuildError::OutOfMemory`] when `tbl8` cannot grow.
    fn allocate_group(&mut self, fill: Entry) -> Result<u32, BuildError> {
        debug_assert!(!fill.is_extended());
        match self.free_groups.pop() {
            Some(group) => {
                self.group_mut(group).fill(fill);
                Ok(group)
            }
            None => {
                let tbl8 = &mut self.fib.tbl8;
                let needed = tbl8.len() + GROUP_ENTRIES;
                try_reserve(tbl8, GROUP_ENTRIES)
                    .map_err(|error| BuildError::out_of_memory("dir24-8", "tbl8 of groups", error))?;
                let group = (tbl8.len() / GROUP_ENTRIES) as u32;
                tbl8.resize_with(needed, || AtomicU32::new(fill.0));
                Ok(group)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::addr::p;

    #[test]
    fn longer_prefixes_survive_shorter_inserts_in_any_order() {
        let mut table = Dir24Table::new();
        table.insert(p("10.1.2.128/25"), 3).unwrap();
        table.insert(p("10.1.2.0/24"), 2).unwrap();
        table.insert(p("10.0.0.0/8"), 1).unwrap();
        assert_eq!(table.fib().lookup(0x0a01_0281), 3);
        assert_eq!(table.fib().lookup(0x0a01_0201), 2);
        assert_eq!(table.fib().lookup(0x0a01_0301), 1);
        assert_eq!(table.fib().lookup(0x0b00_0000), NO_ROUTE);
        assert_eq!(table.fib().groups_in_use(), 1);
        assert_eq!(table.insert(p("10.0.0.0/8"), 4).unwrap(), Some(1), "replacement");
        assert_eq!(table.fib().lookup(0x0a01_0301), 4);
        assert_eq!(table.fib().lookup(0x0a01_0201), 2);
    }

    #[test]
    fn removal_restores_the_covering_route_and_frees_uniform_groups() {
        let mut table = Dir24Table::new();
        table.insert(p("10.0.0.0/8"), 1).unwrap();
        table.insert(p("10.1.2.0/24"), 2).unwrap();
        table.insert(p("10.1.2.0/26"), 3).unwrap();
        table.insert(p("10.1.2.0/28"), 4).unwrap();
        assert_eq!(table.remove(p("10.1.2.0/26")), Some(3));
        assert_eq!(table.fib().lookup(0x0a01_0201), 4);
        assert_eq!(table.fib().lookup(0x0a01_0211), 2, "the /24 answers again");
        assert_eq!(table.fib().groups_in_use(), 1);
        assert_eq!(table.remove(p("10.1.2.0/28")), Some(4));
        assert_eq!(table.fib().groups_in_use(), 0, "the group held only /24 entries");
        assert!(!table.fib.tbl24_mut()[0x0a_0102].is_extended());
        assert_eq!(table.fib().lookup(0x0a01_0201), 2);
        assert_eq!(table.remove(p("10.1.2.0/24")), Some(2));
        assert_eq!(table.fib().lookup(0x0a01_0201), 1);
        assert_eq!(table.remove(p("10.1.2.0/24")), None);
        // A freed group is reused.
        table.insert(p("10.9.9.9/32"), 5).unwrap();
        assert_eq!((table.fib().groups_in_use(), table.fib().groups_allocated()), (1, 1));
        assert_eq!(table.fib().lookup(0x0a09_0909), 5);
        assert_eq!(table.fib().lookup(0x0a09_0908), 1);
        assert_eq!(table.remove(p("10.0.0.0/8")), Some(1));
        assert_eq!(table.fib().lookup(0x0a09_0908), NO_ROUTE);
        assert_eq!(table.remove(p("10.9.9.9/32")), Some(5));
        assert_eq!(table.fib().groups_in_use(), 0, "an all-invalid group is freed");
        assert_eq!(table.fib().lookup(0x0a09_0909), NO_ROUTE);
    }

    #[test]
    fn next_hops_beyond_24_bits_are_refused() {
        let mut table = Dir24Table::new();
        let error = table.insert(p("10.0.0.0/8"), MAX_NEXT_HOP + 1).unwrap_err();
        assert!(error.to_string().contains("24-bit"), "{}", error);
        assert!(table.insert(p("10.0.0.0/8"), NO_ROUTE).is_err());
        assert_eq!(table.insert(p("10.0.0.0/8"), MAX_NEXT_HOP).unwrap(), None);
        assert_eq!(table.fib().lookup(0x0a00_0000), MAX_NEXT_HOP);
    }
}
