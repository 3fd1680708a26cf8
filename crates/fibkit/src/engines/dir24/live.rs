//! DIR-24-8 serving readers while the router applies updates.
//!
//! [`super::Dir24Table::insert`] and [`super::Dir24Table::remove`] keep
//! their own rule table and need the table exclusively. Behind the router,
//! which holds the RIB, the updater instead rewrites the addresses whose
//! answer a batch changed ([`changed_spans`]: intervals with one next hop
//! each; for a default route under a full table, the gaps between the more
//! specific routes), block by block: a block an interval covers whole takes
//! its next hop, a block intervals cover in part keeps its other answers
//! (read back from the table) and takes theirs:
//!
//! - one next hop for the whole block: the `tbl24` entry holds it (a group
//!   the block had is retired);
//! - several: the block's group gets the 256 answers, rewritten in place
//!   slot by slot if the block already has a group (a lookup reads one slot:
//!   it sees the old or the new answer), else filled in a fresh group before
//!   the `tbl24` entry pointing to it is stored with `Release` (children
//!   before parents).
//!
//! A retired group waits, tagged with the generation being served, until no
//! reader can still hold the `tbl24` entry that pointed to it, then joins
//! the free groups. The group array has room to grow (half the groups in
//! use, at least 1,024) allocated up front, since it cannot be reallocated
//! under readers; when a batch may take more groups than are free (one for
//! each block it covers in part that has none), the updater first moves to
//! a copy with a larger group array (a relocation: 64 MiB of `tbl24`
//! copied), and the router publishes that. The batch writes into the table
//! readers are served, so the copy is made before anything is written: a
//! copy the system refuses ([`BuildError::OutOfMemory`]) fails the batch
//! with the table as it was. Entries written here carry prefix length 24 (in
//! `tbl24`) or 32 (in groups): no rule table is kept, the router's RIB is
//! the rule table (the route count, [`Dir24::routes`], is the RIB's).

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;

use super::{Dir24, Dir24Table, Entry, GROUP_ENTRIES, MAX_NEXT_HOP};
use crate::addr::Prefix4;
use crate::error::BuildError;
use crate::fib::{BuildOptions, Fib};
use crate::live::{changed_spans, Applied, ApplyContext, Limbo, Updater, WithDefault};
use crate::mem::{try_copy_cells_grown, try_reserve, try_with_capacity, AllocError};
use crate::rib::{Range, Rib4};
use crate::{NextHop, NO_ROUTE};

/// The DIR-24-8 engine's updater (module docs above).
pub struct Dir24Updater {
    fib: Arc<WithDefault<Dir24>>,
    /// Groups no reader can reach, free for reuse.
    free_groups: Vec<u32>,
    /// Retired groups, until no reader can hold a `tbl24` entry pointing
    /// to them.
    limbo: Limbo<u32>,
    /// Groups in the group array ever handed out (the rest is room to grow).
    groups_used: u32,
    /// Address intervals a batch changed, with their next hop.
    spans: Vec<Range<u32>>,
    /// The next hops of one block's 256 addresses.
    slots: Vec<NextHop>,
    /// The batch being applied moved to a larger copy of the table.
    relocated: bool,
}

/// The error of memory refused to DIR-24-8's array `array`.
fn refused(array: &'static str) -> impl Fn(AllocError) -> BuildError {
    move |error| BuildError::out_of_memory("dir24-8", array, error)
}

impl Dir24Updater {
    /// Builds the table from `rib`, with room for more groups.
    ///
    /// # Errors
    /// As [`Dir24Table::build`]: a next hop beyond 24 bits, or memory the
    /// system refuses (the table's, or its room's).
    pub fn new(rib: &Rib4) -> Result<Self, BuildError> {
        let (mut table, free_groups) = Dir24Table::build(rib)?.into_parts();
        let groups_used = (table.tbl8.len() / GROUP_ENTRIES) as u32;
        let capacity = Self::capacity_for(groups_used as usize - free_groups.len(), groups_used as usize);
        let room = capacity * GROUP_ENTRIES - table.tbl8.len();
        try_reserve(&mut table.tbl8, room).map_err(refused("tbl8 of groups"))?;
        table.tbl8.resize_with(capacity * GROUP_ENTRIES, || AtomicU32::new(0));
        Ok(Dir24Updater {
            fib: Arc::new(WithDefault::new(table)),
            free_groups,
            limbo: Limbo::default(),
            groups_used,
            spans: Vec::new(),
            slots: Vec::with_capacity(GROUP_ENTRIES),
            relocated: false,
        })
    }

    /// Groups to allocate for `in_use` groups, at least `at_least`.
    fn capacity_for(in_use: usize, at_least: usize) -> usize {
        (in_use + in_use / 2 + 1024).max(at_least).min(1 << 24)
    }

    /// The live table.
    pub fn dir24(&self) -> &Arc<WithDefault<Dir24>> {
        &self.fib
    }

    /// A group no reader can reach: a free one or a never used one; `None`
    /// if none is left (the batch made room first, [`Self::make_room`]).
    fn allocate_group(&mut self) -> Option<u32> {
        if let Some(group) = self.free_groups.pop() {
            return Some(group);
        }
        let capacity = (self.fib.tbl8.len() / GROUP_ENTRIES) as u32;
        (self.groups_used < capacity).then(|| {
            self.groups_used += 1;
            self.groups_used - 1
        })
    }

    /// Groups the changed intervals `spans` (sorted, disjoint) may take: a
    /// group for each block they cover in part whose `tbl24` entry has
    /// none yet.
    fn groups_wanted(&self, spans: &[Range<u32>]) -> usize {
        let mut wanted = 0;
        let mut counted = None;
        for span in spans {
            let (first_block, last_block) = (span.first >> 8, span.last >> 8);
            let partial = [
                (span.first & 0xff != 0 || (first_block == last_block && span.last & 0xff != 0xff))
                    .then_some(first_block),
                (span.last & 0xff != 0xff).then_some(last_block),
            ];
            for block in partial.into_iter().flatten() {
                if counted.replace(block) != Some(block)
                    && !Entry(self.fib.tbl24[block as usize].load(Ordering::Relaxed)).is_extended()
                {
                    wanted += 1;
                }
            }
        }
        wanted
    }

    /// Moves to a larger copy of the table (a relocation) if the batch may
    /// take more groups (`wanted`) than are free, before it writes
    /// anything: the batch never runs out of groups halfway, after writing
    /// into the table readers are served.
    ///
    /// # Errors
    /// [`BuildError::OutOfMemory`] when the system refuses the copy; the
    /// updater and the table are as they were then.
    fn make_room(&mut self, wanted: usize, bytes_written: &mut u64) -> Result<(), BuildError> {
        let capacity = self.fib.tbl8.len() / GROUP_ENTRIES;
        if self.free_groups.len() + (capacity - self.groups_used as usize) >= wanted {
            return Ok(());
        }
        self.relocate(wanted, bytes_written)
    }

    /// Moves to a copy of the table with a larger group array, with room
    /// for `wanted` groups more than are in use, in which every retired
    /// group is free (no reader searches the copy before it is published,
    /// and its `tbl24` never points at retired groups).
    ///
    /// # Errors
    /// [`BuildError::OutOfMemory`] when the system refuses the copy; the
    /// updater and the table are as they were then.
    fn relocate(&mut self, wanted: usize, bytes_written: &mut u64) -> Result<(), BuildError> {
        let fib = &*self.fib;
        let in_use = self.groups_used as usize - self.free_groups.len() - self.limbo.len();
        let capacity = Self::capacity_for(in_use + wanted, fib.tbl8.len() / GROUP_ENTRIES);
        let word = |cell: &AtomicU32| AtomicU32::new(cell.load(Ordering::Relaxed));
        // SAFETY: the updater is the table's only writer.
        let tbl24 = unsafe { try_copy_cells_grown(&fib.tbl24, 0, || AtomicU32::new(0)) }.map_err(refused("tbl24"))?;
        let mut tbl8 = try_with_capacity(capacity * GROUP_ENTRIES).map_err(refused("tbl8 of groups"))?;
        tbl8.extend(fib.tbl8.iter().map(word));
        tbl8.resize_with(capacity * GROUP_ENTRIES, || AtomicU32::new(0));
        let relocated = Dir24 { tbl24, tbl8, routes: AtomicUsize::new(fib.routes()) };
        let free_groups = &mut self.free_groups;
        self.limbo.drain(|group| free_groups.push(group));
        *bytes_written += relocated.footprint() as u64;
        self.fib = Arc::new(WithDefault::like(relocated, &self.fib));
        self.relocated = true;
        Ok(())
    }

    /// Makes block `block` (a /24) answer `next_hop` throughout: its
    /// `tbl24` entry holds it, and a group the block had is retired.
    fn set_block(&mut self, block: u32, next_hop: NextHop, generation: u64, bytes_written: &mut u64) {
        let old = Entry(self.fib.tbl24[block as usize].load(Ordering::Relaxed));
        let entry = answering(next_hop, 24);
        if entry != old {
            self.fib.tbl24[block as usize].store(entry.0, Ordering::Release);
            *bytes_written += 4;
            if old.is_extended() {
                self.limbo.retire(generation, old.value());
            }
        }
    }

    /// The next hops of block `block` as the table holds them, into
    /// `slots` (read as a lookup reads them: an entry's value, `NO_ROUTE`
    /// for the invalid entry).
    fn read_block(&mut self, block: u32) {
        let entry = Entry(self.fib.tbl24[block as usize].load(Ordering::Relaxed));
        self.slots.clear();
        if entry.is_extended() {
            let start = entry.value() as usize * GROUP_ENTRIES;
            let group = &self.fib.tbl8[start..start + GROUP_ENTRIES];
            self.slots.extend(group.iter().map(|cell| Entry(cell.load(Ordering::Relaxed)).value()));
        } else {
            self.slots.resize(GROUP_ENTRIES, entry.value());
        }
    }

    /// Makes block `block` answer `slots`; `false` if that needs a group
    /// and none is left.
    fn write_block(&mut self, block: u32, generation: u64, bytes_written: &mut u64) -> bool {
        if self.slots.iter().all(|&next_hop| next_hop == self.slots[0]) {
            self.set_block(block, self.slots[0], generation, bytes_written);
            return true;
        }
        let entry = |next_hop: NextHop| answering(next_hop, 32);
        let old = Entry(self.fib.tbl24[block as usize].load(Ordering::Relaxed));
        if old.is_extended() {
            // In place, slot by slot: a lookup reads one slot.
            let start = old.value() as usize * GROUP_ENTRIES;
            for (cell, &next_hop) in self.fib.tbl8[start..start + GROUP_ENTRIES].iter().zip(&self.slots) {
                if cell.load(Ordering::Relaxed) != entry(next_hop).0 {
                    cell.store(entry(next_hop).0, Ordering::Relaxed);
                    *bytes_written += 4;
                }
            }
            return true;
        }
        let Some(group) = self.allocate_group() else {
            return false;
        };
        let start = group as usize * GROUP_ENTRIES;
        for (cell, &next_hop) in self.fib.tbl8[start..start + GROUP_ENTRIES].iter().zip(&self.slots) {
            cell.store(entry(next_hop).0, Ordering::Relaxed);
        }
        self.fib.tbl24[block as usize].store(Entry::group(group).0, Ordering::Release);
        *bytes_written += 4 * (GROUP_ENTRIES as u64 + 1);
        true
    }

    /// Rewrites the blocks the changed intervals `spans` (sorted, disjoint)
    /// touch; `false` if a block needed a group and none was left.
    fn write_spans(&mut self, spans: &[Range<u32>], generation: u64, bytes_written: &mut u64) -> bool {
        // The block whose answers `slots` holds, patched by the intervals
        // that cover it in part.
        let mut partial: Option<u32> = None;
        for span in spans {
            let (first_block, last_block) = (span.first >> 8, span.last >> 8);
            for block in first_block..=last_block {
                let low = if block == first_block { span.first & 0xff } else { 0 };
                let high = if block == last_block { span.last & 0xff } else { 0xff };
                if low == 0 && high == 0xff {
                    self.set_block(block, span.next_hop, generation, bytes_written);
                    continue;
                }
                if partial != Some(block) {
                    if let Some(done) = partial.replace(block) {
                        if !self.write_block(done, generation, bytes_written) {
                            return false;
                        }
                    }
                    self.read_block(block);
                }
                self.slots[low as usize..=high as usize].fill(span.next_hop);
            }
        }
        partial.is_none_or(|block| self.write_block(block, generation, bytes_written))
    }
}

/// The entry answering `next_hop` (the invalid entry for `NO_ROUTE`),
/// written with prefix length `prefix_len` (24 in `tbl24`, 32 in groups).
fn answering(next_hop: NextHop, prefix_len: u8) -> Entry {
    if next_hop == NO_ROUTE {
        Entry::INVALID
    } else {
        Entry::route(next_hop, prefix_len)
    }
}

impl Updater<u32> for Dir24Updater {
    fn name(&self) -> &str {
        "dir24-8"
    }

    fn fib(&self) -> Arc<dyn Fib<u32>> {
        self.fib.clone()
    }

    fn set_default(&mut self, next_hop: NextHop) -> bool {
        self.fib.set_default(next_hop);
        true
    }

    fn max_next_hop(&self) -> NextHop {
        MAX_NEXT_HOP
    }

    fn copy_for_batch(&mut self) -> Result<u64, BuildError> {
        let mut bytes_written = 0;
        self.relocate(0, &mut bytes_written)?;
        Ok(bytes_written)
    }

    fn apply(&mut self, rib: &Rib4, changed: &[Prefix4], context: ApplyContext) -> Result<Applied, BuildError> {
        self.relocated = false;
        let free_groups = &mut self.free_groups;
        self.limbo.reclaim(context.oldest_held, |group| free_groups.push(group));
        changed_spans(rib, changed, &mut self.spans);
        let spans = std::mem::take(&mut self.spans);
        let mut bytes_written = 0;
        let room = self.make_room(self.groups_wanted(&spans), &mut bytes_written);
        let out_of_groups = room.is_ok() && !self.write_spans(&spans, context.published, &mut bytes_written);
        self.spans = spans;
        room?;
        if out_of_groups {
            // Not after `make_room`; a rebuild if it were.
            let fresh = Self::new(rib)?;
            let bytes_written = fresh.fib.footprint() as u64;
            *self = fresh;
            return Ok(Applied { rebuilt: true, bytes_written, ..Applied::default() });
        }
        self.fib.routes.store(rib.len(), Ordering::Relaxed);
        Ok(Applied { rebuilt: false, relocated: self.relocated, bytes_written })
    }
}

/// Registry updater for `dir24-8`: in place, groups reused once no
/// reader can reach them.
pub fn updater(rib: &Rib4, options: &BuildOptions) -> Result<Box<dyn Updater<u32>>, BuildError> {
    if options.max_next_hop > MAX_NEXT_HOP {
        return Err(super::rules::next_hop_too_large(options.max_next_hop));
    }
    Ok(Box::new(Dir24Updater::new(rib)?))
}

#[cfg(test)]
mod tests {
    use crate::addr::Prefix4;
    use crate::nexthop::{Label, Mapping, NextHopTable};
    use crate::rib::Rib4;
    use crate::router::{assert_matches_rib, Router, Update, Window};

    #[test]
    fn groups_are_reused_only_past_readers_and_relocate_when_out() {
        let mut rib = Rib4::new();
        rib.insert("10.0.0.0/8".parse().unwrap(), 1);
        let mut router =
            Router::new("dir24-8", rib, NextHopTable::new(Mapping::Modulo(100)), Window::Count(1)).unwrap();
        let label = |hop: u64| Label::Number(hop - 1);
        // /25s in 2,000 different /24s: a group each, then withdrawn.
        let prefix = |index: u32| Prefix4::new(0x0a00_0000 | index << 8, 25).unwrap();
        let held = router.reader().snapshot();
        for index in 0..2000 {
            router
                .apply(&[Update::Announce { prefix: prefix(index), value: label(2 + u64::from(index % 50)) }])
                .unwrap();
        }
        for index in 0..2000 {
            router.apply(&[Update::Withdraw { prefix: prefix(index) }]).unwrap();
        }
        // Held generation 0 kept every retired group out of reuse: 2,000
        // groups in a 1,024-group array need a relocation.
        assert!(router.stats().relocations >= 1, "{:?}", router.stats());
        assert_eq!(router.stats().full_rebuilds, 0);
        assert_matches_rib(&router);
        // The held generation's table was updated in place until the
        // relocation: per address, the old or a newer answer.
        assert!([1, 3].contains(&held.fib().lookup(0x0a00_0100)));
        assert_eq!(held.fib().lookup(0x0a00_0180), 1);
        drop(held);
        for index in 0..2000 {
            router.apply(&[Update::Announce { prefix: prefix(index), value: label(7) }]).unwrap();
        }
        assert_matches_rib(&router);
        assert_eq!(router.reader().lookup(0x0a00_0a7f), 7);
        assert_eq!(router.reader().lookup(0x0a00_0a80), 1);
    }
}
