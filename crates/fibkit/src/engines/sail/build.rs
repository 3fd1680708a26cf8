//! Building: chunks where longer routes lie, then one walk over the RIB's
//! address ranges filling every entry that holds a next hop.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::{Sail, Word, CHUNK_ENTRIES, LEVEL16_ENTRIES};
use crate::error::{BuildError, Limit, LimitExceeded};
use crate::mem::{try_copy_cells_grown, try_copy_grown, try_filled, LookupArray};
use crate::rib::Rib4;
use crate::NextHop;

/// No chunk (in the builder's chunk maps).
const NONE: u32 = u32::MAX;

impl<W: Word> Sail<W> {
    /// Builds the three levels from `rib`.
    ///
    /// Pivot pushing without pushing prefixes one by one: a level-16 entry
    /// without a chunk lies inside one address range of the RIB (no route
    /// longer than /16 splits its /16), and so does a level-24 entry
    /// without a chunk; so one walk over the ranges writes each of them
    /// once with its range's next hop, the longest covering prefix's, and
    /// every `N32` entry likewise.
    ///
    /// # Errors
    /// [`LimitExceeded`] ([`Limit::Chunks`]) when a level needs more chunks
    /// than an entry's chunk ID holds, or ([`Limit::NextHop`]) when a next
    /// hop is larger than an entry holds; [`BuildError::OutOfMemory`] when
    /// the system refuses an array.
    pub fn build(rib: &Rib4) -> Result<Self, BuildError> {
        Self::build_with_room(rib, |chunks| chunks)
    }

    /// [`Sail::build`] with room for `room(chunks)` chunks at levels 24 and
    /// 32 where the table needs `chunks` (the updater's spare chunks,
    /// zeroed), allocated once: the build's peak is the structure and the
    /// builder's chunk maps.
    ///
    /// # Errors
    /// As [`Sail::build`].
    pub(super) fn build_with_room(rib: &Rib4, room: impl Fn(usize) -> usize) -> Result<Self, BuildError> {
        let out_of_memory = |array| move |error| BuildError::out_of_memory(W::NAME, array, error);
        // The /16s and /24s holding longer routes, in address order.
        let mut split16 = vec![false; LEVEL16_ENTRIES];
        let mut split24 = Vec::new();
        for (prefix, _) in rib.iter() {
            if prefix.prefix_len() > 16 {
                split16[(prefix.addr() >> 16) as usize] = true;
            }
            if prefix.prefix_len() > 24 {
                split24.push(prefix.addr() >> 8);
            }
        }
        split24.sort_unstable();
        split24.dedup();

        // Chunk IDs in address order, checked against the entry width.
        let mut chunk16 = vec![NONE; LEVEL16_ENTRIES];
        let mut chunks_24 = 0u32;
        for (slot, _) in chunk16.iter_mut().zip(&split16).filter(|(_, &split)| split) {
            *slot = chunks_24;
            chunks_24 += 1;
        }
        let too_many = |level, count: usize| -> BuildError {
            let field = format!("the {}-bit chunk ID of a level-{level} entry", W::BITS - 1);
            refuse::<W>(Limit::Chunks, field, count as u64, u64::from(W::FLAG)).into()
        };
        if chunks_24 > W::FLAG {
            return Err(too_many(16, chunks_24 as usize));
        }
        if split24.len() > W::FLAG as usize {
            return Err(too_many(24, split24.len()));
        }
        // For each level-24 entry, its level-32 chunk (or NONE).
        let mut chunk24 =
            try_filled(chunks_24 as usize * CHUNK_ENTRIES, NONE).map_err(out_of_memory("level-24 chunk map"))?;
        for (id, &slash24) in split24.iter().enumerate() {
            // A /24 holding longer routes lies in a /16 that does.
            let id16 = chunk16[(slash24 >> 8) as usize] as usize;
            chunk24[id16 * CHUNK_ENTRIES + (slash24 & 0xff) as usize] = id as u32;
        }

        // The levels' cells, chunk entries first; the walk below stores the
        // next hops (no reader sees them before the build returns).
        let chunk_entry = |id: u32| if id == NONE { 0 } else { W::FLAG | id };
        let bcn16 = try_copy_grown(&chunk16, 0, |&id| W::cell(chunk_entry(id)), || W::cell(0))
            .map_err(out_of_memory("level-16 array"))?;
        let bcn24_len = room(chunks_24 as usize).max(chunks_24 as usize) * CHUNK_ENTRIES;
        let bcn24 = try_copy_grown(&chunk24, bcn24_len, |&id| W::cell(chunk_entry(id)), || W::cell(0))
            .map_err(out_of_memory("level-24 array"))?;
        let n32_len = room(split24.len()).max(split24.len()) * CHUNK_ENTRIES;
        let n32 =
            LookupArray::<W::Cell>::try_from_fn(n32_len, |_| W::cell(0)).map_err(out_of_memory("level-32 array"))?;
        let store = |cell: &W::Cell, hop: u32| W::store(cell, hop, Ordering::Relaxed);
        let mut largest: NextHop = 0;
        rib.for_each_range(0, u32::MAX, |range| {
            largest = largest.max(range.next_hop);
            let hop = range.next_hop & W::VALUE;
            for slash16 in range.first >> 16..=range.last >> 16 {
                let id = chunk16[slash16 as usize];
                if id == NONE {
                    store(&bcn16[slash16 as usize], hop);
                    continue;
                }
                // The range's /24s inside this /16.
                let first24 = (range.first >> 8).max(slash16 << 8);
                let last24 = (range.last >> 8).min(slash16 << 8 | 0xff);
                for slash24 in first24..=last24 {
                    let index = (id as usize) * CHUNK_ENTRIES + (slash24 & 0xff) as usize;
                    let id32 = chunk24[index];
                    if id32 == NONE {
                        store(&bcn24[index], hop);
                        continue;
                    }
                    let first = range.first.max(slash24 << 8);
                    let last = range.last.min(slash24 << 8 | 0xff);
                    let base = id32 as usize * CHUNK_ENTRIES;
                    for cell in &n32[base + (first & 0xff) as usize..=base + (last & 0xff) as usize] {
                        store(cell, hop);
                    }
                }
            }
        });
        if largest > W::VALUE {
            return Err(next_hop_refused::<W>(largest).into());
        }
        Ok(Sail { bcn16, bcn24, n32, prefixes: AtomicUsize::new(rib.len()) })
    }

    /// A copy with room for `chunks_24` level-24 and `chunks_32` level-32
    /// chunks (at least those it has; the new ones zeroed): the updater's
    /// structure, which no reader sees before it is published.
    ///
    /// # Errors
    /// [`BuildError::OutOfMemory`] when the system refuses a level's array.
    ///
    /// # Safety
    /// No thread but the caller's may write the structure meanwhile: the
    /// updater, its only writer, calls this
    /// ([`crate::mem::try_copy_cells_grown`]).
    pub(super) unsafe fn with_room(&self, chunks_24: usize, chunks_32: usize) -> Result<Self, BuildError> {
        let copy = |cells: &LookupArray<W::Cell>, len: usize, array| {
            // SAFETY: this function's caller excludes other writers.
            unsafe { try_copy_cells_grown(cells, len, || W::cell(0)) }
                .map_err(|error| BuildError::out_of_memory(W::NAME, array, error))
        };
        Ok(Sail {
            bcn16: copy(&self.bcn16, LEVEL16_ENTRIES, "level-16 array")?,
            bcn24: copy(&self.bcn24, chunks_24 * CHUNK_ENTRIES, "level-24 array")?,
            n32: copy(&self.n32, chunks_32 * CHUNK_ENTRIES, "level-32 array")?,
            prefixes: AtomicUsize::new(self.prefixes.load(Ordering::Relaxed)),
        })
    }
}

/// `W`'s engine refusing next hops up to `largest` (above [`Word::VALUE`]).
pub(super) fn next_hop_refused<W: Word>(largest: u32) -> LimitExceeded {
    let field = format!("the {}-bit next hop of an entry", W::BITS - 1);
    refuse::<W>(Limit::NextHop, field, largest.into(), W::VALUE.into())
}

/// `W`'s engine refusing a table: `value` is beyond `max`; `sail-wide`
/// takes what `sail` cannot if its wider field holds `value`.
pub(super) fn refuse<W: Word>(limit: Limit, field: String, value: u64, max: u64) -> LimitExceeded {
    let refused = LimitExceeded::new(W::NAME, limit, field, value, max);
    let wide_max = if limit == Limit::NextHop { <u32 as Word>::VALUE } else { <u32 as Word>::FLAG };
    if W::BITS < 32 && value <= u64::from(wide_max) {
        refused.instead("the sail-wide engine")
    } else {
        refused
    }
}
