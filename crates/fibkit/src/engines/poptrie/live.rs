//! Incremental updates of a live Poptrie with direct pointing (section 3.5
//! of the paper), IPv4 and IPv6, while readers search it.
//!
//! For every direct slot that an interval whose answer changed overlaps
//! ([`changed_spans`]: for a default route under a full table, the gaps
//! between the more specific routes, not every slot), the updater rewrites
//! the slot's subtree where the intervals touch it
//! ([`SubtreeWriter::rewrite_entry`], `live_subtree.rs`: new blocks in
//! free space, records that keep their shape given new bases in place,
//! untouched subtrees kept). Each interval carries its one next hop, so the
//! RIB is not walked, and the old answers are read from the structure.
//! Once every touched slot of the batch is written, the queued bases are
//! stored, then the slots' changed `direct` entries, each with `Release`: a
//! reader that loads an entry or a base (`Acquire`) finds written whatever
//! it points to.
//!
//! When a slot finds no free segment large enough, the updater undoes the
//! slot, copies the structure into larger arrays (a relocation, once per
//! batch: no reader sees the copy before it is published, and every retired
//! block is free in it) and rewrites the slot there; if that is not enough,
//! it rebuilds the whole structure (counted as a full rebuild). A copy
//! whose memory the system refuses fails the batch
//! ([`BuildError::OutOfMemory`]) with no entry stored, and the next batch
//! rebuilds. Poptrie
//! without direct pointing (`s = 0`) would rewrite below its root on every
//! update with no entry to publish it: the router rebuilds it instead
//! ([`crate::live::FullRebuild`]).
//!
//! `poptrie16x12`'s updater, which rewrites the subtrees below its blocks
//! with the same [`SubtreeWriter`], is in `live_expanded.rs`; the
//! [`Widening`] of both (16-bit leaves, then 32-bit ones) is here.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use super::build::Prepared;
use super::live_subtree::{group_by_slot, slot_first, Failure, SubtreeWriter};
use super::{Leaf, NodeCell, Poptrie, PoptrieOptions, DIRECT_MAX};
use crate::addr::{Address, Prefix};
use crate::error::BuildError;
use crate::fib::{BuildOptions, Fib};
use crate::live::{changed_spans, replace_updater, Applied, ApplyContext, Updater, WithDefault};
use crate::mem::try_copy_cells_grown;
use crate::rib::{Range, Rib};
use crate::NextHop;

impl<A: Address, L: Leaf, const S: u32> Poptrie<A, L, S> {
    /// A copy with node and leaf arrays of `capacity` entries (at least
    /// the current ones), the entries past the current ones free.
    ///
    /// # Errors
    /// [`BuildError::OutOfMemory`] when the system refuses an array of the
    /// copy.
    ///
    /// # Safety
    /// No thread but the caller's may write the structure meanwhile: the
    /// updater, its only writer, calls this
    /// ([`crate::mem::try_copy_cells_grown`]).
    pub(super) unsafe fn copy_grown(&self, capacity: [usize; 2]) -> Result<Self, BuildError> {
        let refused = |array| move |error| BuildError::out_of_memory(&self.summary.name, array, error);
        // SAFETY: this function's caller excludes other writers (so for the
        // two copies below).
        let direct = unsafe { try_copy_cells_grown(&self.direct, 0, || AtomicU32::new(0)) };
        let direct = direct.map_err(refused("direct array"))?;
        // SAFETY: as above.
        let nodes = unsafe { try_copy_cells_grown(&self.nodes, capacity[0], NodeCell::default) };
        let nodes = nodes.map_err(refused("node array"))?;
        // SAFETY: as above.
        let leaves = unsafe { try_copy_cells_grown(&self.leaves, capacity[1], || L::cell(L::default())) };
        let leaves = leaves.map_err(refused("leaf array"))?;
        Ok(Poptrie {
            direct,
            nodes,
            leaves,
            summary: self.summary.clone(),
            routes: AtomicUsize::new(self.routes.load(Ordering::Relaxed)),
            batches: AtomicU64::new(self.batches.load(Ordering::Relaxed)),
            family: std::marker::PhantomData,
        })
    }

    /// The sizes of the node and leaf arrays.
    pub(super) fn capacity(&self) -> [usize; 2] {
        [self.nodes.len(), self.leaves.len()]
    }
}

/// The size of a relocated array: half again what is in use, and 8,192
/// entries, at least the current size.
pub(super) fn grown(live: [usize; 2], capacity: [usize; 2]) -> [usize; 2] {
    let grow = |live: usize, capacity: usize| (live + live / 2 + 8192).max(capacity);
    [grow(live[0], capacity[0]), grow(live[1], capacity[1])]
}

/// The Poptrie engine's updater for addresses `A` (IPv4 or IPv6) with
/// `S > 0` bits of direct pointing (module docs above).
pub struct PoptrieUpdater<A: Address, L: Leaf, const S: u32> {
    fib: Arc<WithDefault<Poptrie<A, L, S>>>,
    writer: SubtreeWriter<A, L>,
    /// The address intervals a batch changed, with their next hop
    /// ([`changed_spans`]).
    spans: Vec<Range<A>>,
    /// The direct slots they touch, with their intervals
    /// ([`group_by_slot`]).
    slots: Vec<(u32, usize, usize)>,
    /// Direct entries to store once the batch's subtrees are all written.
    pending: Vec<(u32, u32)>,
    /// The bookkeeping no longer matches the structure: rebuild first.
    stale: bool,
    /// The batch being applied moved to a larger copy of the structure.
    relocated: bool,
}

impl<A: Address, L: Leaf, const S: u32> PoptrieUpdater<A, L, S> {
    /// Builds the structure from `rib` with free space for updates.
    ///
    /// # Errors
    /// The build's ([`BuildError`]).
    pub fn new(rib: &Rib<A>) -> Result<Self, BuildError> {
        const { assert!(S > 0, "incremental updates need direct pointing (s > 0)") };
        let prepared = Prepared::new(rib, &PoptrieOptions::default());
        let (fib, used) = Poptrie::<A, L, S>::assemble_with_slack(prepared, true)?;
        Ok(PoptrieUpdater {
            writer: SubtreeWriter::new(used, fib.capacity()),
            fib: Arc::new(WithDefault::new(fib)),
            spans: Vec::new(),
            slots: Vec::new(),
            pending: Vec::new(),
            stale: false,
            relocated: false,
        })
    }

    /// The live structure.
    pub fn poptrie(&self) -> &Arc<WithDefault<Poptrie<A, L, S>>> {
        &self.fib
    }

    fn rebuild(&mut self, rib: &Rib<A>) -> Result<Applied, BuildError> {
        replace_updater(self, Self::new(rib), |updater| updater.fib.footprint(), |updater| updater.stale = true)
    }

    /// Moves to a copy of the structure with larger node and leaf arrays in
    /// which every replaced block is free (no reader searches the copy
    /// before it is published, and its direct entries never point at
    /// replaced subtrees once the batch's are stored).
    ///
    /// # Errors
    /// [`BuildError::OutOfMemory`] when the system refuses the copy; the
    /// updater and its structure are as they were then.
    fn relocate(&mut self, bytes_written: &mut u64) -> Result<(), BuildError> {
        let from = self.fib.capacity();
        let to = grown(self.writer.live, from);
        // SAFETY: the updater is the structure's only writer.
        let relocated = unsafe { self.fib.copy_grown(to) }?;
        self.writer.relocated(from, to);
        *bytes_written += relocated.footprint() as u64;
        self.fib = Arc::new(WithDefault::like(relocated, &self.fib));
        self.relocated = true;
        Ok(())
    }
}

impl<A: Address, L: Leaf, const S: u32> Updater<A> for PoptrieUpdater<A, L, S> {
    fn name(&self) -> &str {
        &self.fib.summary().name
    }

    fn fib(&self) -> Arc<dyn Fib<A>> {
        self.fib.clone()
    }

    fn set_default(&mut self, next_hop: NextHop) -> bool {
        self.fib.set_default(next_hop);
        true
    }

    fn max_next_hop(&self) -> NextHop {
        leaf_max::<L>()
    }

    fn copy_for_batch(&mut self) -> Result<u64, BuildError> {
        let mut bytes_written = 0;
        if !self.stale {
            self.relocate(&mut bytes_written)?;
        }
        Ok(bytes_written)
    }

    fn apply(&mut self, rib: &Rib<A>, changed: &[Prefix<A>], context: ApplyContext) -> Result<Applied, BuildError> {
        if self.stale {
            return self.rebuild(rib);
        }
        self.writer.reclaim(context.oldest_held);
        self.writer.bytes_written = 0;
        self.relocated = false;
        let mut bytes_written = 0;
        changed_spans(rib, changed, &mut self.spans);
        group_by_slot(&self.spans, A::ZERO, 0, S, &mut self.slots);
        self.pending.clear();
        let slots = std::mem::take(&mut self.slots);
        // One batch can pass over every slot: the direct array is read
        // through one slice, taken again after a relocation.
        let mut fib = Arc::clone(&self.fib);
        let mut direct: &[AtomicU32] = &fib.direct;
        for &(slot, from, to) in &slots {
            let first = slot_first(A::ZERO, 0, S, slot);
            loop {
                self.writer.begin();
                let entry = direct[slot as usize].load(Ordering::Relaxed);
                match self.writer.rewrite_entry(&fib, entry, first, S, &self.spans[from..to]) {
                    Ok(rewritten) => {
                        self.writer.commit(context.published);
                        self.pending.extend(rewritten.map(|entry| (slot, entry)));
                        break;
                    }
                    Err(Failure::Full) if !self.relocated => {
                        // Out of space while readers hold replaced blocks:
                        // move to a larger copy once per batch, and retry.
                        self.writer.undo();
                        if let Err(refused) = self.relocate(&mut bytes_written) {
                            // Nothing of the batch is published yet.
                            self.stale = true;
                            return Err(refused);
                        }
                        fib = Arc::clone(&self.fib);
                        direct = &fib.direct;
                    }
                    Err(Failure::Full) => return self.rebuild(rib),
                    Err(Failure::Refused(stop)) => {
                        self.stale = true;
                        return Err(stop.named(self.name()));
                    }
                }
            }
        }
        self.slots = slots;
        bytes_written += self.writer.store_bases(&fib);
        for &(slot, entry) in &self.pending {
            direct[slot as usize].store(entry, Ordering::Release);
        }
        bytes_written += self.writer.bytes_written + 4 * self.pending.len() as u64;
        self.fib.routes.store(rib.len(), Ordering::Relaxed);
        self.fib.batches.fetch_add(1, Ordering::Relaxed);
        Ok(Applied { rebuilt: false, relocated: self.relocated, bytes_written })
    }
}

/// The largest next hop a 16-bit leaf holds.
const NARROW_MAX: NextHop = u16::MAX as NextHop;

/// The largest next hop leaves of type `L` hold (a direct entry holds 31
/// bits).
pub(super) fn leaf_max<L: Leaf>() -> NextHop {
    if L::BITS == 16 {
        NARROW_MAX
    } else {
        DIRECT_MAX
    }
}

/// An in-place updater of one leaf width ([`Widening`]'s halves).
pub trait LeafWidth<A: Address>: Updater<A> + Sized {
    /// Built from `rib`, with free space for updates.
    ///
    /// # Errors
    /// The build's ([`BuildError`]).
    fn build(rib: &Rib<A>) -> Result<Self, BuildError>;

    /// Bytes of the lookup structure.
    fn footprint(&self) -> usize;
}

impl<A: Address, L: Leaf, const S: u32> LeafWidth<A> for PoptrieUpdater<A, L, S> {
    fn build(rib: &Rib<A>) -> Result<Self, BuildError> {
        Self::new(rib)
    }

    fn footprint(&self) -> usize {
        self.fib.footprint()
    }
}

/// The updater of an engine whose builder chooses its leaves (`poptrie16`,
/// `poptrie18`, `poptrie16x12`): in place, with 16-bit leaves (`N`) while
/// every next hop fits in them, and widened to 32-bit leaves (`W`, a
/// rebuild, counted as one) by the batch that brings a larger next hop, as
/// the builder chooses its leaves; it never narrows again.
pub enum Widening<N, W> {
    /// 16-bit leaves.
    Narrow(N),
    /// 32-bit leaves.
    Wide(W),
}

/// The updater of `poptrie16` and `poptrie18` (IPv4 and IPv6).
pub type WideningUpdater<A, const S: u32> = Widening<PoptrieUpdater<A, u16, S>, PoptrieUpdater<A, u32, S>>;

impl<N, W> Widening<N, W> {
    /// Built from `rib`, narrow if `max_next_hop` and every next hop of
    /// `rib` fit in 16 bits.
    ///
    /// # Errors
    /// The build's ([`BuildError`]).
    pub fn new<A: Address>(rib: &Rib<A>, max_next_hop: NextHop) -> Result<Self, BuildError>
    where
        N: LeafWidth<A>,
        W: LeafWidth<A>,
    {
        if max_next_hop > NARROW_MAX || rib.iter().any(|(_, next_hop)| next_hop > NARROW_MAX) {
            Ok(Widening::Wide(W::build(rib)?))
        } else {
            Ok(Widening::Narrow(N::build(rib)?))
        }
    }

    fn updater<A: Address>(&self) -> &dyn Updater<A>
    where
        N: LeafWidth<A>,
        W: LeafWidth<A>,
    {
        match self {
            Widening::Narrow(narrow) => narrow,
            Widening::Wide(wide) => wide,
        }
    }
}

impl<A: Address, N: LeafWidth<A>, W: LeafWidth<A>> Updater<A> for Widening<N, W> {
    fn name(&self) -> &str {
        self.updater::<A>().name()
    }

    fn fib(&self) -> Arc<dyn Fib<A>> {
        self.updater::<A>().fib()
    }

    fn max_next_hop(&self) -> NextHop {
        DIRECT_MAX
    }

    fn apply(&mut self, rib: &Rib<A>, changed: &[Prefix<A>], context: ApplyContext) -> Result<Applied, BuildError> {
        match self {
            Widening::Narrow(_) if context.max_next_hop > NARROW_MAX => {
                // The old structure stays with the readers that hold it:
                // the router frees it with their generation.
                let wide = W::build(rib)?;
                let bytes_written = wide.footprint() as u64;
                *self = Widening::Wide(wide);
                Ok(Applied { rebuilt: true, relocated: false, bytes_written })
            }
            Widening::Narrow(narrow) => narrow.apply(rib, changed, context),
            Widening::Wide(wide) => wide.apply(rib, changed, context),
        }
    }

    fn set_default(&mut self, next_hop: NextHop) -> bool {
        match self {
            Widening::Narrow(narrow) => narrow.set_default(next_hop),
            Widening::Wide(wide) => wide.set_default(next_hop),
        }
    }

    fn copy_for_batch(&mut self) -> Result<u64, BuildError> {
        match self {
            Widening::Narrow(narrow) => narrow.copy_for_batch(),
            Widening::Wide(wide) => wide.copy_for_batch(),
        }
    }
}

/// Registry updater for `poptrie16` and `poptrie18` of either family
/// (`WideningUpdater`).
///
/// # Errors
/// The build's ([`BuildError`]).
pub fn updater<A: Address, const S: u32>(
    rib: &Rib<A>,
    options: &BuildOptions,
) -> Result<Box<dyn Updater<A>>, BuildError> {
    Ok(Box::new(WideningUpdater::<A, S>::new(rib, options.max_next_hop)?))
}
