//! DXR for IPv6 as the Poptrie paper built it for its comparison (Asai and
//! Ohara, SIGCOMM 2015, section 4.10): D16R6 and D18R6.
//!
//! DXR's two stages carry over to 128-bit keys: the top K bits of a key
//! index the `direct` table; a chunk that one next hop covers entirely is
//! resolved there, any other chunk's entry points to its ranges in the
//! `range` table, sorted by start and searched by binary search. As in the
//! paper's extension, only the "long" range format exists (the IPv4 short
//! format's /24 alignment means nothing for IPv6), and the `size` field of
//! a direct entry is one bit wider than DXR's 12, so a chunk holds up to
//! 2^13 - 2 ranges in the direct entry itself; larger chunks (2001::/16
//! holds most of a table at K = 16) keep their count in a header entry.
//! A range entry widens to 128 bits: the start's offset in the chunk
//! (128 - K bits) above a K-bit next hop. Adjacent ranges with equal next
//! hops are merged and identical chunks are stored once.
//!
//! ```text
//!  key:  | K bits: chunk | 128-K bits: offset |
//!              |
//!              v
//!  direct[2^K] ---- size == 0 ------------------------> next hop (base)
//!        |
//!        +-- size = n ------> range[base .. base+n]          (16 bytes each)
//!        |                     | offset of start << K | next hop |  sorted by start
//!        +-- size = 8191 ---> range[base] = n, range[base+1 .. base+1+n]
//! ```
//!
//! # Direct entry (`u32`)
//!
//! | bits    | field  | meaning                                                    |
//! |---------|--------|------------------------------------------------------------|
//! | 0..=12  | `size` | 0: resolved here; 1..=8190: ranges of the chunk; 8191: the count is in a header entry at `base`, the ranges follow it |
//! | 13..=31 | `base` | the next hop (`size == 0`) or the chunk's first index in `range` |
//!
//! # Range entry (`u128`)
//!
//! | bits      | field      | meaning                                          |
//! |-----------|------------|--------------------------------------------------|
//! | 0..K      | `next_hop` | next hop of the range (16 bits for D16R6, 18 for D18R6) |
//! | K..=127   | `start`    | first address of the range, as offset in the chunk |
//!
//! Because the next hop sits below the start, the binary search compares
//! whole entries with `offset << K | (2^K - 1)`: the last entry not above
//! that probe is the range holding the offset (every chunk's first range
//! starts at offset 0).
//!
//! # Structural limits
//!
//! | what                        | limit        | when exceeded                 |
//! |-----------------------------|--------------|-------------------------------|
//! | next hop in a range         | 2^K - 1      | build error naming the next hop |
//! | next hop resolved directly  | 2^19 - 1     | build error naming the next hop |
//! | entries in `range`          | 2^19         | build error                   |
//! | ranges in one chunk         | none (header entry past 8190) | -            |
//!
//! The engine is built once from the RIB (no incremental update yet).

mod build;
mod lookup;
mod stats;

use crate::error::BuildError;
use crate::fib::{BuildOptions, Fib};
use crate::mem::LookupArray;
use crate::rib::Rib6;

/// Bits of the `size` field of a direct entry.
const SIZE_BITS: u32 = 13;
/// Mask of the `size` field.
const SIZE_MASK: u32 = (1 << SIZE_BITS) - 1;
/// `size` of a chunk whose range count is in a header entry.
const SIZE_XL: u32 = SIZE_MASK;
/// Where `base` starts in a direct entry.
const BASE_SHIFT: u32 = SIZE_BITS;
/// Largest `base` (next hop or range index) a direct entry holds.
const BASE_MAX: u32 = u32::MAX >> BASE_SHIFT;

const _: () = assert!(SIZE_XL == 8191 && BASE_MAX == (1 << 19) - 1);
const _: () = assert!(std::mem::size_of::<DirectEntry>() == 4);
const _: () = assert!(std::mem::size_of::<RangeEntry>() == 16);

/// A direct-table entry: `base << 13 | size`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(transparent)]
pub struct DirectEntry(u32);

impl DirectEntry {
    /// The entry of a chunk resolved to `next_hop`.
    fn resolved(next_hop: u32) -> Self {
        debug_assert!(next_hop <= BASE_MAX);
        DirectEntry(next_hop << BASE_SHIFT)
    }

    /// The entry of a chunk whose `count` ranges start at `base` (with a
    /// header entry when the count does not fit `size`).
    fn ranges(base: u32, count: usize) -> Self {
        debug_assert!(base <= BASE_MAX && count > 0);
        let size = if count < SIZE_XL as usize { count as u32 } else { SIZE_XL };
        DirectEntry(base << BASE_SHIFT | size)
    }

    /// The `size` field.
    #[inline(always)]
    pub fn size(self) -> u32 {
        self.0 & SIZE_MASK
    }

    /// The `base` field.
    #[inline(always)]
    pub fn base(self) -> u32 {
        self.0 >> BASE_SHIFT
    }
}

/// A range entry: `start_offset << K | next_hop`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct RangeEntry(u128);

impl RangeEntry {
    /// The entry of a range starting at `offset` in its chunk (the low
    /// 128 - K bits of the start) with `next_hop` (below 2^K).
    fn new<const K: u32>(offset: u128, next_hop: u32) -> Self {
        debug_assert!(u128::from(next_hop) < 1 << K);
        RangeEntry(offset << K | u128::from(next_hop))
    }

    /// The `next_hop` field of a D`K`R6 entry.
    #[inline(always)]
    pub fn next_hop<const K: u32>(self) -> u32 {
        (self.0 & ((1 << K) - 1)) as u32
    }
}

/// DXR for IPv6 with a direct table on the top `K` bits.
pub struct Dxr6<const K: u32> {
    /// One entry per chunk of 2^(128-K) addresses.
    direct: LookupArray<DirectEntry>,
    /// The chunks' ranges, chunk after chunk.
    range: LookupArray<RangeEntry>,
    /// Figures of the build (for the stats report).
    summary: build::Summary,
}

impl<const K: u32> Dxr6<K> {
    /// The direct table.
    pub fn direct(&self) -> &[DirectEntry] {
        &self.direct
    }

    /// The range table.
    pub fn range(&self) -> &[RangeEntry] {
        &self.range
    }

    /// Bytes of the lookup structure.
    pub fn footprint(&self) -> usize {
        std::mem::size_of_val(&*self.direct) + std::mem::size_of_val(&*self.range)
    }
}

/// Builds D`K`R6 as a boxed [`Fib<u128>`](crate::fib::Fib) (the registry's builder).
pub fn build<const K: u32>(rib: &Rib6, _options: &BuildOptions) -> Result<Box<dyn Fib<u128>>, BuildError> {
    Ok(Box::new(Dxr6::<K>::build(rib)?))
}

#[cfg(test)]
mod tests;
