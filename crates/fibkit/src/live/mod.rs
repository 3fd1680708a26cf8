//! Live structures: the writer side of a FIB that readers search while it
//! changes.
//!
//! An engine with incremental updates implements [`Updater`]: the router
//! ([`crate::router`]) applies a batch of route changes to its RIB, then
//! hands the updater the changed prefixes and an [`ApplyContext`]. Updaters
//! never import the router; they know this module, the engine trait and
//! the base types.
//!
//! # Updating in place
//!
//! An updater that writes into the structure readers are searching (DXR,
//! Poptrie with direct pointing, DIR-24-8) does so such that every lookup
//! sees either the old or the new state of whatever it reads: new data is
//! written into free space first ([`FreeSpace`]), then published by a
//! `Release` store of the entry pointing at it. Space that the old state
//! used is reused only when no reader can still be reading it: the updater
//! retires it into a [`Limbo`] tagged with the generation being served
//! ([`ApplyContext::published`]), and reclaims it once the router reports
//! that no reader holds that generation any more
//! ([`ApplyContext::oldest_held`]). A reader that loaded generation `g` can
//! only have found space that was live in `g`; one that loads a later
//! generation (`Acquire`, through the router's swap) sees the entries
//! written before it.
//!
//! When free space runs out while readers still hold retired space, an
//! updater copies the structure into larger arrays in which every retired
//! segment is free (a relocation, [`Applied::relocated`]): no reader sees
//! the copy before it is published whole. The copy's memory is asked for
//! fallibly: when the system refuses it, the batch fails with
//! [`BuildError::OutOfMemory`] before anything of it is published (the
//! router then rejects it, [`crate::router`], "Failed updates"), and an
//! updater whose bookkeeping the batch had begun to change rebuilds at its
//! next batch. Engines without incremental updates are rebuilt from the
//! RIB for every batch ([`FullRebuild`]).
//!
//! # What an update rewrites
//!
//! An update's cost follows what changes in the FIB, not the size of its
//! prefix: [`changed_spans`] turns a batch's changed prefixes into the
//! address intervals whose answer can have changed (those no more specific
//! route covers), each with its one next hop, and the in-place updaters
//! rewrite only their chunks, slots or blocks, keeping what the structure
//! holds elsewhere. A default route announced under a full table would
//! rewrite the gaps between the more specific routes, not the address
//! space; the router keeps it out of in-place structures altogether (see
//! below).
//!
//! For an address, a lookup answers as the RIB before or as the RIB after
//! the batch being applied; a batch is not atomic across addresses for
//! in-place engines, as in a router's FIB. A router asked for atomic
//! batches ([`crate::router::Router::set_atomic_batches`]) first moves the
//! updater to a private copy ([`Updater::copy_for_batch`]) and publishes
//! the copy whole.
//!
//! # The default route, aside
//!
//! Even only its gaps are too many under a full table (41,339 in the 2014
//! table) for a default route that flaps: the in-place updaters keep it out
//! of their structure, which
//! answers [`crate::NO_ROUTE`] there, and their lookups answer the default
//! route's next hop instead, one word beside the structure
//! ([`WithDefault`], [`Updater::set_default`]). The router hands such an
//! updater a RIB without its default route, and orders the word's stores
//! and the structure's writes so that a lookup still answers as the RIB
//! before or after a batch ([`crate::router`], "The default route").

mod default;
mod rebuild;
mod reclaim;
mod space;
pub(crate) mod sync;

use std::sync::Arc;

pub use default::WithDefault;
pub use rebuild::{replace_updater, FullRebuild};
pub use reclaim::Limbo;
pub use space::FreeSpace;

use crate::addr::{Address, Prefix};
use crate::error::BuildError;
use crate::fib::Fib;
use crate::rib::{Range, Rib};
use crate::NextHop;

/// What the router tells an updater about readers before a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApplyContext {
    /// The generation readers are being served while the batch is applied:
    /// space an in-place update retires was live in it.
    pub published: u64,
    /// No reader holds a generation older than this one: space retired
    /// while serving an older generation may be reused.
    pub oldest_held: u64,
    /// The largest next-hop index the table uses (as
    /// [`crate::fib::BuildOptions`]).
    pub max_next_hop: NextHop,
}

/// What an updater did with a batch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// It rebuilt the structure from the RIB ([`Updater::fib`] changed)
    /// instead of updating in place.
    pub rebuilt: bool,
    /// It copied the structure into larger arrays (out of free space while
    /// readers held old space) and updated the copy ([`Updater::fib`]
    /// changed): much cheaper than a rebuild.
    pub relocated: bool,
    /// Bytes of the lookup structure written (entries rewritten in place, or
    /// the whole structure after a rebuild).
    pub bytes_written: u64,
}

/// The address intervals whose answer a batch can have changed, with
/// their answer now, into `spans`: for each changed prefix, its addresses
/// that no route strictly inside it covers in `rib`, the table after the
/// batch ([`Rib::for_each_exposed`]); sorted, overlapping intervals (which
/// have the same answer) and adjacent ones with the same answer merged.
/// What an in-place updater rewrites: an update costs what it changes, not
/// the size of its prefix (a default route under a full table changes only
/// the gaps between the more specific routes).
pub fn changed_spans<A: Address>(rib: &Rib<A>, changed: &[Prefix<A>], spans: &mut Vec<Range<A>>) {
    spans.clear();
    for &prefix in changed {
        rib.for_each_exposed(prefix, |range| spans.push(range));
    }
    spans.sort_unstable_by_key(|range| range.first);
    let mut merged = 0;
    for index in 1..spans.len() {
        let (span, kept) = (spans[index], &mut spans[merged]);
        let overlaps = span.first <= kept.last;
        debug_assert!(!overlaps || span.next_hop == kept.next_hop, "an address has one answer");
        if overlaps || (kept.last.checked_next() == Some(span.first) && span.next_hop == kept.next_hop) {
            kept.last = kept.last.max(span.last);
        } else {
            merged += 1;
            spans[merged] = span;
        }
    }
    spans.truncate(merged + 1);
}

/// Hands `rewrite` each /16 that the changed intervals `spans` (sorted,
/// disjoint, [`changed_spans`]) touch, in address order, with the parts of
/// the intervals inside it (collected in `parts`, a buffer to reuse); stops
/// at the first error. How the SAIL updaters walk a batch, /16 by /16.
///
/// # Errors
/// The first error `rewrite` returns.
pub fn for_each_slash16<E>(
    spans: &[Range<u32>],
    parts: &mut Vec<Range<u32>>,
    mut rewrite: impl FnMut(u32, &[Range<u32>]) -> Result<(), E>,
) -> Result<(), E> {
    parts.clear();
    let mut current: Option<u32> = None;
    for span in spans {
        for slash16 in span.first >> 16..=span.last >> 16 {
            if current != Some(slash16) {
                if let Some(done) = current.replace(slash16) {
                    rewrite(done, parts)?;
                }
                parts.clear();
            }
            let (low, high) = (span.first.max(slash16 << 16), span.last.min(slash16 << 16 | 0xffff));
            parts.push(Range { first: low, last: high, next_hop: span.next_hop });
        }
    }
    match current {
        Some(done) => rewrite(done, parts),
        None => Ok(()),
    }
}

/// The next hop of a /16 whose changed parts ([`for_each_slash16`]) are
/// one interval over all of it: every answer in it is that next hop, and
/// its old entries need no reading (a route over many /16s, the default
/// route above all, changes each of them so).
#[inline]
pub fn whole_slash16(parts: &[Range<u32>]) -> Option<NextHop> {
    match parts {
        [part] if part.first & 0xffff == 0 && part.last & 0xffff == 0xffff => Some(part.next_hop),
        _ => None,
    }
}

/// An engine's writer side: turns RIB changes into FIB changes.
///
/// Implementations either update [`Updater::fib`] in place so that
/// concurrent lookups stay right (see the module docs), or build a new
/// structure and report [`Applied::rebuilt`].
pub trait Updater<A: Address>: Send {
    /// The engine's registry name.
    fn name(&self) -> &str;

    /// The structure readers should be served now.
    fn fib(&self) -> Arc<dyn Fib<A>>;

    /// The largest next hop the engine can hold.
    fn max_next_hop(&self) -> NextHop;

    /// Whether batches are applied in place (not by a full rebuild): what
    /// an updater is for, unless it is a [`FullRebuild`].
    fn incremental(&self) -> bool {
        true
    }

    /// Brings the FIB up to date with `rib`, in which exactly the routes of
    /// `changed` differ from the last batch.
    ///
    /// # Errors
    /// When the engine cannot hold the new table ([`BuildError::Limit`]),
    /// or the system refuses the memory of a larger copy of the structure
    /// (a relocation, [`BuildError::OutOfMemory`]); then the structure
    /// readers are served must answer as before.
    fn apply(&mut self, rib: &Rib<A>, changed: &[Prefix<A>], context: ApplyContext) -> Result<Applied, BuildError>;

    /// Makes `next_hop` ([`crate::NO_ROUTE`]: none) what the served
    /// structure answers where it holds no route ([`WithDefault`]): how the
    /// default route is kept aside from it. Returns whether the updater
    /// does that; one that does not (the default) gets the default route in
    /// [`Updater::apply`] as any other route.
    fn set_default(&mut self, next_hop: NextHop) -> bool {
        let _ = next_hop;
        false
    }

    /// Moves to a copy of the structure that no reader sees until the
    /// router publishes it ([`Updater::fib`] then changes), in which every
    /// retired segment is free: the batch that follows writes only the
    /// copy, so readers see all of it at once or none of it (an atomic
    /// batch). Returns the bytes copied; an updater that builds a new
    /// structure for every batch anyway copies nothing (the default).
    ///
    /// # Errors
    /// [`BuildError::OutOfMemory`] when the system refuses the copy's
    /// memory; then the updater and the structure readers are served are
    /// as they were.
    fn copy_for_batch(&mut self) -> Result<u64, BuildError> {
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(first: u32, last: u32, next_hop: NextHop) -> Range<u32> {
        Range { first, last, next_hop }
    }

    #[test]
    fn spans_are_handed_over_a_slash16_at_a_time_until_an_error() {
        // One interval across three /16s, then two inside a fourth.
        let spans = [
            range(0x0a00_ff00, 0x0a02_00ff, 1),
            range(0x0a05_0000, 0x0a05_00ff, 2),
            range(0x0a05_8000, 0x0a05_80ff, 3),
        ];
        let mut seen = Vec::new();
        let mut parts = vec![range(7, 7, 7)];
        let done: Result<(), ()> = for_each_slash16(&spans, &mut parts, |slash16, parts| {
            seen.push((slash16, parts.to_vec()));
            Ok(())
        });
        assert_eq!(done, Ok(()));
        assert_eq!(
            seen,
            [
                (0x0a00, vec![range(0x0a00_ff00, 0x0a00_ffff, 1)]),
                (0x0a01, vec![range(0x0a01_0000, 0x0a01_ffff, 1)]),
                (0x0a02, vec![range(0x0a02_0000, 0x0a02_00ff, 1)]),
                (0x0a05, vec![range(0x0a05_0000, 0x0a05_00ff, 2), range(0x0a05_8000, 0x0a05_80ff, 3)]),
            ]
        );
        let mut calls = 0;
        let stopped = for_each_slash16(&spans, &mut parts, |slash16, _| {
            calls += 1;
            if slash16 == 0x0a01 {
                Err(slash16)
            } else {
                Ok(())
            }
        });
        assert_eq!((stopped, calls), (Err(0x0a01), 2));
        assert_eq!(for_each_slash16(&[], &mut parts, |_, _| Err(())), Ok(()));
    }

    #[test]
    fn a_slash16_is_whole_when_one_part_covers_it() {
        assert_eq!(whole_slash16(&[range(0x0a01_0000, 0x0a01_ffff, 4)]), Some(4));
        assert_eq!(whole_slash16(&[range(0x0a01_0000, 0x0a01_fffe, 4)]), None);
        assert_eq!(whole_slash16(&[range(0x0a01_0001, 0x0a01_ffff, 4)]), None);
        assert_eq!(whole_slash16(&[range(0x0a01_0000, 0x0a01_7fff, 4), range(0x0a01_8000, 0x0a01_ffff, 5)]), None);
        assert_eq!(whole_slash16(&[]), None);
    }
}
