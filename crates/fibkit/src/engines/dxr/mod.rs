//! DXR (Zec, Rizzo, Mikuc): a direct table on the top K bits and binary
//! search over sorted address ranges, D16R..D22R.
//!
//! The address space is cut into 2^K chunks of 2^(32-K) addresses. The top
//! K bits of a key index the `direct` table. A chunk that one next hop
//! covers entirely is resolved right there; any other chunk's entry points
//! into a `range` table holding the chunk's ranges ("fragments") as a sorted
//! array of (start, next hop) pairs, searched by binary search. Adjacent
//! ranges with equal next hops are merged; identical chunks are stored once
//! and shared by every direct entry that needs them.
//!
//! ```text
//!  key:  | K bits: chunk | 32-K bits: offset |
//!              |
//!              v
//!  direct[2^K] ---- frags == 0 ----------------------> next hop (base)
//!        |
//!        +-- frags = n, long  --> range_long[base .. base+n]   (4 bytes each)
//!        |                         | start << K | next hop |    sorted by start
//!        +-- frags = n, short --> range_short[base .. base+n]  (2 bytes each)
//!                                  | start >> 8 | next hop |   starts /24-aligned
//! ```
//!
//! # Direct entry (`u32`)
//!
//! | bits   | field    | meaning                                                        |
//! |--------|----------|----------------------------------------------------------------|
//! | 0..=7  | `frags`  | 0: resolved here; 2..=254: fragments in the chunk; 255: more, the count is in a header entry at `base` and the fragments follow it |
//! | 8..=9  | `format` | 0: long, 1: short, 2: wide (which range table holds the chunk)  |
//! | 10..=31| `base`   | the next hop (`frags == 0`) or the chunk's first index in its range table |
//!
//! # Long range entry (`u32`), any chunk whose next hops fit in K bits
//!
//! | bits        | field      | meaning                                            |
//! |-------------|------------|----------------------------------------------------|
//! | 0..K        | `next_hop` | next hop of the range (K bits: 16 bits for D16R, 22 for D22R) |
//! | K..=31      | `start`    | first address of the range, as offset in the chunk  |
//!
//! # Short range entry (`u16`), chunks whose ranges all start on /24
//! boundaries and whose next hops all fit in 8 bits
//!
//! | bits  | field      | meaning                                      |
//! |-------|------------|----------------------------------------------|
//! | 0..=7 | `next_hop` | next hop of the range                        |
//! | 8..=15| `start`    | first address of the range in the chunk, in /24 units |
//!
//! # Wide range entry (`u64`), chunks with a next hop wider than K bits
//!
//! | bits    | field      | meaning                                      |
//! |---------|------------|----------------------------------------------|
//! | 0..=31  | `next_hop` | next hop of the range                        |
//! | 32..=63 | `start`    | first address of the range, as offset in the chunk |
//!
//! The wide format lifts the next-hop limit of long fragments (65,535 for
//! D16R) for tables with many distinct route values, such as origin ASNs
//! kept apart (about 75,000 in a current table); router FIBs never need it.
//!
//! Because the next-hop field sits below the start, the binary search
//! compares whole entries with `offset << K | (2^K - 1)`: the last entry not
//! above that probe is the range holding the offset.
//!
//! # Structural limits
//!
//! | what                          | limit            | when exceeded        |
//! |-------------------------------|------------------|----------------------|
//! | next hop in a fragment        | 2^32 - 1 (long: 2^K - 1, else the chunk goes wide) | - |
//! | next hop resolved directly    | 2^22 - 1         | build error naming the next hop |
//! | entries per range table       | 2^22 (each)      | build error naming the table |
//! | fragments in one chunk        | none: past 254 the count moves into a header entry (`frags = 255`) | - |
//!
//! # Storage and concurrent updates
//!
//! The four arrays are arrays of atomic words (`AtomicU32` direct entries,
//! `AtomicU16`/`AtomicU32`/`AtomicU64` fragments). Lookups read fragments
//! with `Ordering::Relaxed` and the direct entry with `Ordering::Acquire`;
//! on x86-64 both compile to the same plain loads as a `&[u32]` would (the
//! lookup-speed check is in the `dxr_lookup_rate` example). This lets
//! [`DxrUpdater`] change a structure that readers are searching, one chunk
//! at a time, so that every reader sees either a chunk's old or its new
//! fragments:
//!
//! 1. the chunk's new fragments are written into free space of its range
//!    table, where no direct entry points (never over a chunk a reader may be
//!    searching);
//! 2. then its direct entry is stored with `Release`: a reader that loads
//!    the new entry (`Acquire`) also sees the fragments written before it;
//! 3. the old fragments are retired, and their space is reused only once no
//!    reader can still hold a direct entry pointing at them (the router's
//!    reclamation, [`crate::router`]).
//!
//! A structure built by [`Dxr::build`] has no free space; one built for
//! updates ([`DxrUpdater::new`]) keeps a quarter of each range table (at
//! least 4,096 entries) free. When a chunk finds no free segment big
//! enough (readers holding old generations keep retired space from reuse),
//! the updater copies the structure into larger range tables in which all
//! retired space is free, and the router publishes the copy (a
//! "relocation", counted); if even that fails, it rebuilds the whole
//! structure from the RIB (a "full rebuild", counted). When the chunks in
//! use fill less than half of a range table, it rebuilds to compact.
//!
//! The build bookkeeping (sharing of identical chunks with reference counts,
//! free space) lives in the builder and the updater, never in [`Dxr`].

mod build;
mod file;
mod live;
mod lookup;
mod stats;

pub use file::open;
pub use live::{updater, DxrUpdater};
pub use stats::{chunk_histogram, HistogramRow, HISTOGRAM_BUCKETS};

use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crate::error::BuildError;
use crate::fib::{BuildOptions, Fib};
use crate::mem::{try_copy_grown, AllocError, LookupArray};
use crate::rib::Rib4;

/// Bits of the `frags` field of a direct entry.
const FRAGS_BITS: u32 = 8;
/// Mask of the `frags` field.
const FRAGS_MASK: u32 = (1 << FRAGS_BITS) - 1;
/// `frags` value of a chunk whose fragment count is stored in a header.
const FRAGS_XL: u32 = FRAGS_MASK;
/// Where the `format` field starts in a direct entry.
const FORMAT_SHIFT: u32 = FRAGS_BITS;
/// `format` of a chunk in `range_long`.
const FORMAT_LONG: u32 = 0;
/// `format` of a chunk in `range_short`.
const FORMAT_SHORT: u32 = 1;
/// `format` of a chunk in `range_wide`.
const FORMAT_WIDE: u32 = 2;
/// Where `base` starts in a direct entry.
const BASE_SHIFT: u32 = FRAGS_BITS + 2;
/// Largest `base` (next hop or range-table index) a direct entry holds.
const BASE_MAX: u32 = u32::MAX >> BASE_SHIFT;

const _: () = assert!(BASE_SHIFT == 10 && BASE_MAX == (1 << 22) - 1);
const _: () = assert!(std::mem::size_of::<DirectEntry>() == 4);
const _: () = assert!(std::mem::size_of::<LongEntry>() == 4);
const _: () = assert!(std::mem::size_of::<ShortEntry>() == 2);
const _: () = assert!(std::mem::size_of::<WideEntry>() == 8);
const _: () = assert!(std::mem::size_of::<AtomicU16>() == 2 && std::mem::size_of::<AtomicU64>() == 8);

/// A direct-table entry (bits in the module docs).
type DirectEntry = u32;
/// A long fragment: `start << K | next_hop`.
type LongEntry = u32;
/// A short fragment: `start / 256 << 8 | next_hop`.
type ShortEntry = u16;
/// A wide fragment: `start << 32 | next_hop`.
type WideEntry = u64;

/// A range-table word stored in an atomic cell: what lookups read
/// (`Relaxed`) and the updater writes.
trait Cell: crate::mem::Plain {
    /// The plain word.
    type Word: Copy + Ord + std::hash::Hash + TryFrom<usize> + Into<u64>;
    /// A cell holding `word`.
    fn new(word: Self::Word) -> Self;
    /// A cell holding zero (free space).
    fn empty() -> Self;
    /// Reads the word (`Relaxed`: the direct entry's `Acquire` orders it).
    fn get(&self) -> Self::Word;
    /// Writes the word (`Relaxed`: the direct entry's `Release` publishes it).
    fn set(&self, word: Self::Word);
}

macro_rules! cell {
    ($atomic:ty, $word:ty) => {
        impl Cell for $atomic {
            type Word = $word;
            #[inline(always)]
            fn new(word: $word) -> Self {
                <$atomic>::new(word)
            }
            fn empty() -> Self {
                <$atomic>::new(0)
            }
            #[inline(always)]
            fn get(&self) -> $word {
                self.load(Ordering::Relaxed)
            }
            #[inline(always)]
            fn set(&self, word: $word) {
                self.store(word, Ordering::Relaxed)
            }
        }
    };
}
cell!(AtomicU16, ShortEntry);
cell!(AtomicU32, LongEntry);
cell!(AtomicU64, WideEntry);

/// Moves plain words into atomic cells, adding `slack` free cells (the
/// words are dropped once copied).
///
/// # Errors
/// [`AllocError`] when the system refuses the cells' memory.
fn into_cells<C: Cell>(words: Vec<C::Word>, slack: usize, filler: C::Word) -> Result<LookupArray<C>, AllocError> {
    try_copy_grown(&words, words.len() + slack, |&word| C::new(word), || C::new(filler))
}

/// A DXR forwarding structure with `K` direct bits (16..=22).
#[derive(Debug)]
pub struct Dxr<const K: u32> {
    /// 2^K direct entries (layout in the module docs).
    direct: LookupArray<AtomicU32>,
    /// Long-format fragments of all chunks, chunk after chunk.
    range_long: LookupArray<AtomicU32>,
    /// Short-format fragments of all chunks, chunk after chunk.
    range_short: LookupArray<AtomicU16>,
    /// Wide-format fragments of all chunks, chunk after chunk.
    range_wide: LookupArray<AtomicU64>,
    /// Prefixes of the RIB the structure answers for (for [`Fib4::stats`]).
    prefixes: AtomicUsize,
}

impl<const K: u32> Dxr<K> {
    /// Rejects K outside 16..=22 at compile time.
    const VALID_K: () = assert!(K >= 16 && K <= 22, "DXR supports K = 16..=22");
    /// Bits of a key below the chunk index.
    const SHIFT: u32 = 32 - K;
    /// Mask of a key's offset inside its chunk.
    const OFFSET_MASK: u32 = (1 << (32 - K)) - 1;
    /// Mask of the next-hop field of a long fragment.
    const LONG_HOP_MASK: u32 = (1 << K) - 1;

    /// Compiles `rib` into a DXR structure (with no room for updates).
    ///
    /// # Errors
    /// [`BuildError::Limit`] when a next hop, a chunk's fragments or a
    /// range table exceed the fields of the entries;
    /// [`BuildError::OutOfMemory`] when the system refuses an array.
    pub fn build(rib: &Rib4) -> Result<Self, BuildError> {
        #[allow(clippy::let_unit_value)]
        let () = Self::VALID_K;
        Ok(build::Builder::<K>::new().build(rib, false)?.0)
    }

    /// The registry name of this configuration (`d16r` ... `d22r`).
    pub fn engine_name() -> &'static str {
        ["d16r", "d17r", "d18r", "d19r", "d20r", "d21r", "d22r"][(K - 16) as usize]
    }

    /// Bytes of the direct table and the range tables.
    pub fn footprint(&self) -> usize {
        self.direct.len() * 4 + self.range_bytes()
    }

    /// Bytes of the range tables (free space included).
    pub fn range_bytes(&self) -> usize {
        self.range_long.len() * 4 + self.range_short.len() * 2 + self.range_wide.len() * 8
    }

    /// The direct entry of `chunk`, as a lookup reads it.
    #[cfg(test)]
    fn direct_entry(&self, chunk: usize) -> DirectEntry {
        self.direct[chunk].load(Ordering::Acquire)
    }
}

/// Registry builder for `d16r` ... `d22r`.
pub fn build<const K: u32>(rib: &Rib4, _options: &BuildOptions) -> Result<Box<dyn Fib<u32>>, BuildError> {
    Ok(Box::new(Dxr::<K>::build(rib)?))
}

#[cfg(test)]
mod tests;
