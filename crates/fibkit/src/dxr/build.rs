//! Building a DXR structure from the RIB.
//!
//! One in-order walk of the RIB yields the change points of the whole
//! address space (where the effective next hop changes). They are cut at
//! chunk boundaries; each chunk becomes a direct next hop (one range) or a
//! short, long or wide fragment array, looked up first among the chunks
//! already stored so that identical chunks are shared.

use std::collections::{HashMap, HashSet};
use std::hash::Hash;

use super::stats::{FormatCounts, Summary};
use super::{
    Dxr, LongEntry, ShortEntry, WideEntry, BASE_MAX, BASE_SHIFT, FORMAT_LONG, FORMAT_SHIFT, FORMAT_SHORT,
    FORMAT_WIDE, FRAGS_XL,
};
use crate::engine::BuildError;
use crate::rib::Rib4;
use crate::{NextHop, NO_ROUTE};

/// A chunk stored in a range table and how many direct entries refer to it.
#[derive(Clone, Copy, Debug)]
struct StoredChunk {
    base: u32,
    references: u32,
}

/// One range table being filled, with the index of the chunks it already
/// holds (for sharing, reference-counted so that an incremental update can
/// tell when a chunk's last user is gone) and its counts.
struct RangeStore<T> {
    table: Vec<T>,
    stored: HashMap<Box<[T]>, StoredChunk>,
    counts: FormatCounts,
}

impl<T: Copy + Eq + Hash + TryFrom<usize>> RangeStore<T> {
    fn new() -> Self {
        RangeStore { table: Vec::new(), stored: HashMap::new(), counts: FormatCounts::default() }
    }

    /// Stores `fragments` (or finds an identical chunk) and returns its
    /// `base`; chunks of more than 254 fragments get a header entry holding
    /// the count.
    fn store(&mut self, fragments: &[T], name: &str) -> Result<u32, String> {
        self.counts.aggregated_chunks += 1;
        self.counts.aggregated_fragments += fragments.len();
        if let Some(chunk) = self.stored.get_mut(fragments) {
            chunk.references += 1;
            return Ok(chunk.base);
        }
        let base = self.table.len();
        let header = fragments.len() >= FRAGS_XL as usize;
        if base + usize::from(header) + fragments.len() > BASE_MAX as usize + 1 {
            return Err(format!(
                "the {name} range table would exceed {} entries, the most the 22-bit base field of a direct \
                 entry indexes; the radix engine has no such limit",
                BASE_MAX as usize + 1
            ));
        }
        if header {
            let count = T::try_from(fragments.len())
                .map_err(|_| {
                    format!(
                        "a {name} chunk of {} fragments is more than its header entry counts; the radix engine \
                         has no such limit",
                        fragments.len()
                    )
                })?;
            self.table.push(count);
        }
        self.table.extend_from_slice(fragments);
        self.stored.insert(fragments.into(), StoredChunk { base: base as u32, references: 1 });
        self.counts.physical_chunks += 1;
        self.counts.physical_fragments += fragments.len();
        Ok(base as u32)
    }
}

/// Build bookkeeping: the arrays being filled and the chunks already
/// stored. Never touched by lookups.
pub(super) struct Builder<const K: u32> {
    direct: Vec<u32>,
    long: RangeStore<LongEntry>,
    short: RangeStore<ShortEntry>,
    wide: RangeStore<WideEntry>,
    summary: Summary,
    /// Fragments of the chunk being cut: (offset in chunk, next hop).
    fragments: Vec<(u32, NextHop)>,
    /// Encoding scratch space, one per format.
    long_scratch: Vec<LongEntry>,
    short_scratch: Vec<ShortEntry>,
    wide_scratch: Vec<WideEntry>,
    /// Next hops seen, for the unique next-hop count: below
    /// `DENSE_SEEN_HOPS` in a flag vector, above it in a set (a vector
    /// indexed by any `u32` could grow to 4 GiB on one large next hop).
    seen_hops: Vec<bool>,
    seen_large_hops: HashSet<NextHop>,
}

/// Next hops below this are counted in `Builder::seen_hops`.
const DENSE_SEEN_HOPS: usize = 1 << 20;

impl<const K: u32> Builder<K> {
    pub(super) fn new() -> Self {
        Builder {
            direct: Vec::with_capacity(1 << K),
            long: RangeStore::new(),
            short: RangeStore::new(),
            wide: RangeStore::new(),
            summary: Summary::default(),
            fragments: Vec::with_capacity(256),
            long_scratch: Vec::with_capacity(256),
            short_scratch: Vec::with_capacity(256),
            wide_scratch: Vec::new(),
            seen_hops: Vec::new(),
            seen_large_hops: HashSet::new(),
        }
    }

    pub(super) fn build(mut self, rib: &Rib4) -> Result<Dxr<K>, BuildError> {
        let shift = Dxr::<K>::SHIFT;
        let mut chunk = 0u32;
        let mut last_hop = NO_ROUTE;
        let mut failure = None;
        rib.for_each_run(0, u32::MAX, |start, next_hop| {
            if failure.is_some() {
                return;
            }
            let start_chunk = start >> shift;
            if start_chunk != chunk {
                // Finish the chunk being cut, then those inside the previous run.
                let mut finished = self.finish_chunk();
                for _ in chunk + 1..start_chunk {
                    if finished.is_err() {
                        break;
                    }
                    self.fragments.push((0, last_hop));
                    finished = self.finish_chunk();
                }
                if let Err(error) = finished {
                    failure = Some(error);
                    return;
                }
                chunk = start_chunk;
                if start & Dxr::<K>::OFFSET_MASK != 0 {
                    self.fragments.push((0, last_hop));
                }
            }
            self.fragments.push((start & Dxr::<K>::OFFSET_MASK, next_hop));
            last_hop = next_hop;
        });
        if let Some(error) = failure {
            return Err(error);
        }
        self.finish_chunk()?;
        while self.direct.len() < 1 << K {
            self.fragments.push((0, last_hop));
            self.finish_chunk()?;
        }
        self.summary.prefixes = rib.len();
        self.summary.next_hops =
            self.seen_hops.iter().filter(|&&seen| seen).count() + self.seen_large_hops.len();
        self.summary.long = self.long.counts;
        self.summary.short = self.short.counts;
        self.summary.wide = self.wide.counts;
        Ok(Dxr {
            direct: self.direct.into_boxed_slice(),
            range_long: self.long.table.into_boxed_slice(),
            range_short: self.short.table.into_boxed_slice(),
            range_wide: self.wide.table.into_boxed_slice(),
            summary: self.summary,
        })
    }

    fn error(message: String) -> BuildError {
        BuildError { engine: Dxr::<K>::engine_name().to_string(), message }
    }

    /// Encodes the fragments gathered for the next chunk into a direct
    /// entry, storing (or sharing) its fragment array in the narrowest
    /// format that holds it.
    fn finish_chunk(&mut self) -> Result<(), BuildError> {
        debug_assert!(!self.fragments.is_empty() && self.fragments[0].0 == 0);
        let mut widest_hop = NO_ROUTE;
        let mut all_on_24 = true;
        for &(offset, next_hop) in &self.fragments {
            let index = next_hop as usize;
            if index >= DENSE_SEEN_HOPS {
                self.seen_large_hops.insert(next_hop);
            } else {
                if self.seen_hops.len() <= index {
                    self.seen_hops.resize(index + 1, false);
                }
                self.seen_hops[index] |= next_hop != NO_ROUTE;
            }
            widest_hop = widest_hop.max(next_hop);
            all_on_24 &= offset & 0xff == 0;
        }
        let entry = if let [(_, next_hop)] = self.fragments[..] {
            if next_hop > BASE_MAX {
                return Err(Self::error(format!(
                    "next hop {next_hop} exceeds {BASE_MAX}, the largest the 22-bit base field of a direct entry \
                     holds; map the values onto fewer next hops (--nexthops N), or use the radix engine, which has \
                     no such limit"
                )));
            }
            self.summary.direct_chunks += 1;
            next_hop << BASE_SHIFT
        } else {
            let count = self.fragments.len();
            self.summary.longest_chunk = self.summary.longest_chunk.max(count);
            let (format, stored) = if all_on_24 && widest_hop <= 0xff {
                self.short_scratch.clear();
                self.short_scratch.extend(
                    self.fragments.iter().map(|&(offset, next_hop)| ((offset >> 8) << 8 | next_hop) as ShortEntry),
                );
                (FORMAT_SHORT, self.short.store(&self.short_scratch, "short"))
            } else if widest_hop <= Dxr::<K>::LONG_HOP_MASK {
                self.long_scratch.clear();
                self.long_scratch.extend(self.fragments.iter().map(|&(offset, next_hop)| offset << K | next_hop));
                (FORMAT_LONG, self.long.store(&self.long_scratch, "long"))
            } else {
                self.wide_scratch.clear();
                self.wide_scratch.extend(
                    self.fragments.iter().map(|&(offset, next_hop)| WideEntry::from(offset) << 32 | WideEntry::from(next_hop)),
                );
                (FORMAT_WIDE, self.wide.store(&self.wide_scratch, "wide"))
            };
            let base = stored.map_err(Self::error)?;
            base << BASE_SHIFT | format << FORMAT_SHIFT | (count as u32).min(FRAGS_XL)
        };
        self.direct.push(entry);
        self.fragments.clear();
        Ok(())
    }
}
