//! Building a DXR structure from the RIB.
//!
//! One in-order walk of the RIB yields the change points of the whole
//! address space (where the effective next hop changes). They are cut at
//! chunk boundaries ([`cut_chunks`]); each chunk becomes a direct next hop (one
//! range) or a short, long or wide fragment array ([`Encoder`]), looked up
//! first among the chunks already stored so that identical chunks are
//! shared.

use std::collections::HashMap;
use std::hash::Hash;

use super::{
    into_cells, DirectEntry, Dxr, LongEntry, ShortEntry, WideEntry, BASE_MAX, BASE_SHIFT, FORMAT_LONG, FORMAT_SHIFT,
    FORMAT_SHORT, FORMAT_WIDE, FRAGS_XL,
};
use crate::error::{BuildError, Limit, LimitExceeded};
use crate::mem::{try_reserve, try_reserve_map, AllocError};
use crate::rib::Rib4;
use crate::{NextHop, NO_ROUTE};

/// A chunk stored in a range table and how many direct entries refer to it.
#[derive(Clone, Copy, Debug)]
pub(super) struct StoredChunk {
    pub base: u32,
    pub references: u32,
}

/// One range table being filled, with the index of the chunks it already
/// holds (for sharing, reference-counted so that an incremental update can
/// tell when a chunk's last user is gone).
pub(super) struct RangeStore<T> {
    pub table: Vec<T>,
    pub stored: HashMap<Box<[T]>, StoredChunk>,
    /// The engine (`d16r` ...) and the table (`short`, `long`, `wide`), for errors.
    engine: &'static str,
    name: &'static str,
}

/// The array of an error of memory refused to range table `name` (`short`,
/// `long`, `wide`).
pub(super) fn range_table(name: &str) -> &'static str {
    match name {
        "short" => "short range table",
        "long" => "long range table",
        _ => "wide range table",
    }
}

impl<T: Copy + Eq + Hash + TryFrom<usize>> RangeStore<T> {
    fn new(engine: &'static str, name: &'static str) -> Self {
        RangeStore { table: Vec::new(), stored: HashMap::new(), engine, name }
    }

    /// Stores `fragments` (or finds an identical chunk) and returns its
    /// `base`; chunks of more than 254 fragments get a header entry holding
    /// the count.
    ///
    /// # Errors
    /// [`BuildError::Limit`] when the table would outgrow the base field or
    /// the header; [`BuildError::OutOfMemory`] when the system refuses the
    /// table's growth or its index of stored chunks'.
    fn store(&mut self, fragments: &[T]) -> Result<u32, BuildError> {
        if let Some(chunk) = self.stored.get_mut(fragments) {
            chunk.references += 1;
            return Ok(chunk.base);
        }
        let base = self.table.len();
        let header = fragments.len() >= FRAGS_XL as usize;
        if base + usize::from(header) + fragments.len() > BASE_MAX as usize + 1 {
            return Err(LimitExceeded::new(
                self.engine,
                Limit::RangeEntries,
                format!(
                    "the entries of the {} range table that the 22-bit base field of a direct entry indexes",
                    self.name
                ),
                (base + usize::from(header) + fragments.len()) as u64,
                u64::from(BASE_MAX) + 1,
            )
            .into());
        }
        let engine = self.engine;
        let refused = |array| move |error| BuildError::out_of_memory(engine, array, error);
        try_reserve(&mut self.table, usize::from(header) + fragments.len()).map_err(refused(range_table(self.name)))?;
        try_reserve_map(&mut self.stored, 1).map_err(refused("index of stored chunks"))?;
        if header {
            self.table.push(header_word(fragments.len(), self.engine, self.name)?);
        }
        self.table.extend_from_slice(fragments);
        self.stored.insert(fragments.into(), StoredChunk { base: base as u32, references: 1 });
        Ok(base as u32)
    }
}

/// The header entry holding the fragment count of a chunk of `count`
/// fragments.
pub(super) fn header_word<T: TryFrom<usize>>(count: usize, engine: &str, table: &str) -> Result<T, LimitExceeded> {
    T::try_from(count).map_err(|_| {
        let bits = 8 * std::mem::size_of::<T>() as u32;
        let field = format!("what the {bits}-bit header entry of a {table} chunk counts");
        LimitExceeded::new(engine, Limit::ChunkFragments, field, count as u64, (1u64 << bits) - 1)
    })
}

/// The direct entry of a chunk of `count` fragments at `base` of the range
/// table `format`.
#[inline]
pub(super) fn range_entry(format: u32, base: u32, count: usize) -> DirectEntry {
    base << BASE_SHIFT | format << FORMAT_SHIFT | (count as u32).min(FRAGS_XL)
}

/// How a chunk is encoded; the fragments are in the [`Encoder`]'s buffer of
/// that format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Encoding {
    /// One range: the direct entry holds the next hop.
    Direct(NextHop),
    /// Fragments in `Encoder::short`.
    Short,
    /// Fragments in `Encoder::long`.
    Long,
    /// Fragments in `Encoder::wide`.
    Wide,
}

/// Encodes a chunk's fragments in the narrowest format that holds them.
pub(super) struct Encoder<const K: u32> {
    pub short: Vec<ShortEntry>,
    pub long: Vec<LongEntry>,
    pub wide: Vec<WideEntry>,
}

impl<const K: u32> Encoder<K> {
    pub fn new() -> Self {
        Encoder { short: Vec::with_capacity(256), long: Vec::with_capacity(256), wide: Vec::new() }
    }

    /// Encodes `fragments` (offset in chunk, next hop), the first at
    /// offset 0, adjacent ones with different next hops.
    pub fn encode(&mut self, fragments: &[(u32, NextHop)]) -> Result<Encoding, LimitExceeded> {
        debug_assert!(!fragments.is_empty() && fragments[0].0 == 0);
        if let [(_, next_hop)] = fragments[..] {
            if next_hop > BASE_MAX {
                let field = "the 22-bit next-hop field of a direct entry";
                return Err(LimitExceeded::new(
                    Dxr::<K>::engine_name(),
                    Limit::NextHop,
                    field,
                    next_hop.into(),
                    BASE_MAX.into(),
                ));
            }
            return Ok(Encoding::Direct(next_hop));
        }
        let mut widest_hop = NO_ROUTE;
        let mut all_on_24 = true;
        for &(offset, next_hop) in fragments {
            widest_hop = widest_hop.max(next_hop);
            all_on_24 &= offset & 0xff == 0;
        }
        Ok(if all_on_24 && widest_hop <= 0xff {
            self.short.clear();
            self.short
                .extend(fragments.iter().map(|&(offset, next_hop)| ((offset >> 8) << 8 | next_hop) as ShortEntry));
            Encoding::Short
        } else if widest_hop <= Dxr::<K>::LONG_HOP_MASK {
            self.long.clear();
            self.long.extend(fragments.iter().map(|&(offset, next_hop)| offset << K | next_hop));
            Encoding::Long
        } else {
            self.wide.clear();
            self.wide.extend(
                fragments.iter().map(|&(offset, next_hop)| WideEntry::from(offset) << 32 | WideEntry::from(next_hop)),
            );
            Encoding::Wide
        })
    }
}

/// Cuts the RIB's runs over the whole address space into each chunk's
/// fragments and calls `visit(fragments)` for every chunk in order; stops
/// at the first error `visit` returns.
fn cut_chunks<const K: u32, E>(
    rib: &Rib4,
    fragments: &mut Vec<(u32, NextHop)>,
    mut visit: impl FnMut(&[(u32, NextHop)]) -> Result<(), E>,
) -> Result<(), E> {
    let shift = Dxr::<K>::SHIFT;
    let offset_mask = Dxr::<K>::OFFSET_MASK;
    fragments.clear();
    let mut chunk = 0;
    let mut last_hop = NO_ROUTE;
    let mut failure = None;
    rib.for_each_run(0, u32::MAX, |start, next_hop| {
        if failure.is_some() {
            return;
        }
        let start_chunk = start >> shift;
        if start_chunk != chunk {
            // Finish the chunk being cut, then those inside the previous run.
            let mut finished = visit(fragments);
            for _ in chunk + 1..start_chunk {
                if finished.is_err() {
                    break;
                }
                finished = visit(&[(0, last_hop)]);
            }
            if let Err(error) = finished {
                failure = Some(error);
                return;
            }
            fragments.clear();
            chunk = start_chunk;
            if start & offset_mask != 0 {
                fragments.push((0, last_hop));
            }
        }
        fragments.push((start & offset_mask, next_hop));
        last_hop = next_hop;
    });
    if let Some(error) = failure {
        return Err(error);
    }
    visit(fragments)?;
    for _ in chunk + 1..1 << K {
        visit(&[(0, last_hop)])?;
    }
    Ok(())
}

/// The sharing bookkeeping a build leaves for the updater, one map per
/// range table.
pub(super) struct Bookkeeping {
    pub long: HashMap<Box<[LongEntry]>, StoredChunk>,
    pub short: HashMap<Box<[ShortEntry]>, StoredChunk>,
    pub wide: HashMap<Box<[WideEntry]>, StoredChunk>,
    /// Entries in use at the start of each range table: long, short, wide.
    pub used: [usize; 3],
}

/// Build bookkeeping: the arrays being filled and the chunks already
/// stored. Never touched by lookups.
pub(super) struct Builder<const K: u32> {
    direct: Vec<DirectEntry>,
    long: RangeStore<LongEntry>,
    short: RangeStore<ShortEntry>,
    wide: RangeStore<WideEntry>,
    encoder: Encoder<K>,
}

impl<const K: u32> Builder<K> {
    pub(super) fn new() -> Self {
        Builder {
            direct: Vec::new(),
            long: RangeStore::new(Dxr::<K>::engine_name(), "long"),
            short: RangeStore::new(Dxr::<K>::engine_name(), "short"),
            wide: RangeStore::new(Dxr::<K>::engine_name(), "wide"),
            encoder: Encoder::new(),
        }
    }

    /// Builds the structure; with `slack`, each range table gets a quarter
    /// (at least 4,096 entries) of free space for updates. Each lookup
    /// array is filled from the builder's table, which is dropped before
    /// the next one is allocated.
    ///
    /// # Errors
    /// [`BuildError::Limit`] when a table or a next hop does not fit the
    /// fields; [`BuildError::OutOfMemory`] when the system refuses an array.
    pub(super) fn build(mut self, rib: &Rib4, slack: bool) -> Result<(Dxr<K>, Bookkeeping), BuildError> {
        let engine = Dxr::<K>::engine_name();
        let refused = |array| move |error: AllocError| BuildError::out_of_memory(engine, array, error);
        try_reserve(&mut self.direct, 1 << K).map_err(refused("direct table"))?;
        let mut fragments = Vec::with_capacity(256);
        cut_chunks::<K, _>(rib, &mut fragments, |fragments| self.finish_chunk(fragments))?;
        debug_assert_eq!(self.direct.len(), 1 << K);
        let slack_for = |used: usize| {
            if slack {
                (used / 4 + 4096).min(BASE_MAX as usize + 1 - used)
            } else {
                0
            }
        };
        let used = [self.long.table.len(), self.short.table.len(), self.wide.table.len()];
        let dxr = Dxr {
            direct: into_cells(self.direct, 0, 0).map_err(refused("direct table"))?,
            range_long: into_cells(self.long.table, slack_for(used[0]), 0).map_err(refused("long range table"))?,
            range_short: into_cells(self.short.table, slack_for(used[1]), 0).map_err(refused("short range table"))?,
            range_wide: into_cells(self.wide.table, slack_for(used[2]), 0).map_err(refused("wide range table"))?,
            prefixes: rib.len().into(),
        };
        let bookkeeping =
            Bookkeeping { long: self.long.stored, short: self.short.stored, wide: self.wide.stored, used };
        Ok((dxr, bookkeeping))
    }

    /// Encodes the next chunk's fragments into a direct entry, storing (or
    /// sharing) its fragment array in the narrowest format that holds it.
    ///
    /// # Errors
    /// As [`RangeStore::store`], and a next hop beyond the fields.
    fn finish_chunk(&mut self, fragments: &[(u32, NextHop)]) -> Result<(), BuildError> {
        let entry = match self.encoder.encode(fragments)? {
            Encoding::Direct(next_hop) => next_hop << BASE_SHIFT,
            Encoding::Short => range_entry(FORMAT_SHORT, self.short.store(&self.encoder.short)?, fragments.len()),
            Encoding::Long => range_entry(FORMAT_LONG, self.long.store(&self.encoder.long)?, fragments.len()),
            Encoding::Wide => range_entry(FORMAT_WIDE, self.wide.store(&self.encoder.wide)?, fragments.len()),
        };
        self.direct.push(entry);
        Ok(())
    }
}
