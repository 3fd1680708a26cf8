//! Luleå (`lulea`): Degermark, Brodnik, Carlsson, Pink, "Small Forwarding
//! Tables for Fast Routing Lookups" (SIGCOMM 1997).
//!
//! The table represents the *complete prefix tree* (every node has zero or
//! two children; added leaves inherit the closest ancestor's next hop) in
//! three levels covering 16, 8 and 8 address bits. Each level is a cut
//! through the tree: a position is a *genuine head* where a leaf starts, a
//! *root head* where the tree continues below the cut, or a *member* of the
//! last head before it.
//!
//! ```text
//!  addr: | ix (12) | bit (4) | level-2 key (8) | level-3 key (8) |
//!        | bix(10)|
//!
//!  level 1                            maptable (676 rows x 16 nibbles)
//!  code[4096] --ten--------------->  offset = MAPTABLE[ten][bit]
//!     |  \--six--+                          |
//!  base[1024] ---+--> pix = base[bix] + six + offset
//!                                     |
//!  pointers[pix]: | kind (2) | index (14 or 30) |
//!        kind 0: next hop            kind 1: sparse chunk of level 2
//!        kind 2: dense chunk         kind 3: very dense chunk
//!
//!  level 2 / level 3 chunks (256 positions each):
//!   sparse      heads[8] (u8, decreasing) + pointers[8]          1-8 merged heads
//!   dense       code[16] + 1 base index -> level's pointer array  9-64 heads
//!   very dense  code[16] + 4 base indices -> level's pointers      65-256 heads
//! ```
//!
//! Packed words:
//!
//! | word | bits | meaning |
//! |---|---|---|
//! | code word (u16) | 15..6 `ten` | maptable row (0..=675), or `>= 676`: direct |
//! | | 5..0 `six` | pointer offset within the base index's group |
//! | direct code word | `ten`, `six` | next hop `(ten - 676) << 6 \| six` if below 22208 |
//! | escape code word | `ten` = 1023 | next hop >= 22208: one pointer at `base + six` |
//! | pointer, 16-bit | 15..14 | kind; 13..0 index (next hop or chunk) |
//! | pointer, 32-bit | 31..30 | kind; 29..0 index (widened variant) |
//! | base index | 16 or 24 bits | first pointer of a group (little-endian bytes) |
//!
//! The paper's limits (2^14 chunks of a kind per level, 16-bit base indices
//! in levels 2 and 3, 2^14 next hops) are far exceeded by today's tables.
//! The builder picks the narrowest variant the table fits, following the
//! paper's section 4.4: 32-bit pointers when a chunk count or a next hop
//! does not fit 14 bits, 3-byte base indices when a level's pointer array
//! outgrows 16 bits. Next hops above 22207 no longer fit a direct code word;
//! such zero or single-head masks store one pointer (the paper's limit 3).
//! What was built is reported in [`Fib::stats`] under `variant`; a table
//! no variant can hold is refused with a [`BuildError`].
//!
//! Lookup follows the paper's Figure 10 at each level.

mod build;
mod lookup;
pub mod maptable;
mod stats;

use std::fmt;

use crate::error::BuildError;
use crate::fib::{forward_fib, BuildOptions, Fib};
use crate::rib::Rib4;
use crate::NextHop;

pub use build::{build_table, Built};

/// Pointer kind: the index is a next hop.
pub const KIND_NEXT_HOP: u32 = 0;
/// Pointer kind: the index is a sparse chunk of the next level.
pub const KIND_SPARSE: u32 = 1;
/// Pointer kind: the index is a dense chunk of the next level.
pub const KIND_DENSE: u32 = 2;
/// Pointer kind: the index is a very dense chunk of the next level.
pub const KIND_VERY_DENSE: u32 = 3;

/// First next hop that a direct code word cannot hold: `ten` 676..=1022
/// gives `347 * 64` values; `ten` = 1023 is the escape.
pub const DIRECT_LIMIT: u32 = (ESCAPE_ROW as u32 - maptable::DIRECT_ROW as u32) << 6;
/// The `ten` value of an escape code word.
pub const ESCAPE_ROW: u16 = 1023;

/// A code word: 10-bit `ten` (maptable row or direct marker) and 6-bit `six`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeWord(pub u16);

impl CodeWord {
    /// A code word pointing at maptable row `row` with pointer offset `six`.
    pub fn row(row: u16, six: u32) -> Self {
        debug_assert!(row < maptable::DIRECT_ROW && six < 64);
        CodeWord(row << 6 | six as u16)
    }

    /// A code word holding next hop `next_hop` (below [`DIRECT_LIMIT`]).
    pub fn direct(next_hop: NextHop) -> Self {
        debug_assert!(next_hop < DIRECT_LIMIT);
        CodeWord((maptable::DIRECT_ROW + (next_hop >> 6) as u16) << 6 | (next_hop & 63) as u16)
    }

    /// A code word whose next hop sits in one pointer at offset `six`.
    pub fn escape(six: u32) -> Self {
        debug_assert!(six < 64);
        CodeWord(ESCAPE_ROW << 6 | six as u16)
    }

    /// The ten-bit value.
    #[inline(always)]
    pub fn ten(self) -> u16 {
        self.0 >> 6
    }

    /// The six-bit value.
    #[inline(always)]
    pub fn six(self) -> usize {
        usize::from(self.0 & 63)
    }

    /// The next hop of a direct code word (`ten() >= 676`), or `None` for an
    /// escape code word.
    #[inline(always)]
    pub fn direct_next_hop(self) -> Option<NextHop> {
        let value = (u32::from(self.ten()) - u32::from(maptable::DIRECT_ROW)) << 6 | self.six() as u32;
        (value < DIRECT_LIMIT).then_some(value)
    }
}

/// A pointer word of one width: 2-bit kind on top, index below.
pub trait PointerWord: Copy + Default + Send + Sync + fmt::Debug + 'static {
    /// Width in bits.
    const BITS: u32;
    /// Indexes must stay below this.
    const INDEX_LIMIT: u32 = 1 << (Self::BITS - 2);

    /// Packs `kind` and `index` (`index < INDEX_LIMIT`, checked by the builder).
    fn pack(kind: u32, index: u32) -> Self;
    /// The 2-bit kind.
    fn kind(self) -> u32;
    /// The index.
    fn index(self) -> u32;
}

impl PointerWord for u16 {
    const BITS: u32 = 16;
    #[inline(always)]
    fn pack(kind: u32, index: u32) -> Self {
        debug_assert!(kind < 4 && index < Self::INDEX_LIMIT);
        (kind << 14 | index) as u16
    }
    #[inline(always)]
    fn kind(self) -> u32 {
        u32::from(self >> 14)
    }
    #[inline(always)]
    fn index(self) -> u32 {
        u32::from(self & 0x3fff)
    }
}

impl PointerWord for u32 {
    const BITS: u32 = 32;
    #[inline(always)]
    fn pack(kind: u32, index: u32) -> Self {
        debug_assert!(kind < 4 && index < Self::INDEX_LIMIT);
        kind << 30 | index
    }
    #[inline(always)]
    fn kind(self) -> u32 {
        self >> 30
    }
    #[inline(always)]
    fn index(self) -> u32 {
        self & 0x3fff_ffff
    }
}

/// A base index of one width, stored as little-endian bytes (alignment 1,
/// so chunks are exactly as large as the paper counts).
pub trait BaseIndex: Copy + Default + Send + Sync + fmt::Debug + 'static {
    /// Width in bits.
    const BITS: u32;
    /// Packs `value` (`value < 2^BITS`, checked by the builder).
    fn pack(value: u32) -> Self;
    /// The value.
    fn get(self) -> usize;
}

/// A 16-bit base index (the paper's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(transparent)]
pub struct Base16([u8; 2]);

/// A 24-bit base index (the paper's suggested widening).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(transparent)]
pub struct Base24([u8; 3]);

impl BaseIndex for Base16 {
    const BITS: u32 = 16;
    fn pack(value: u32) -> Self {
        debug_assert!(value < 1 << 16);
        Base16((value as u16).to_le_bytes())
    }
    #[inline(always)]
    fn get(self) -> usize {
        usize::from(u16::from_le_bytes(self.0))
    }
}

impl BaseIndex for Base24 {
    const BITS: u32 = 24;
    fn pack(value: u32) -> Self {
        debug_assert!(value < 1 << 24);
        let [b0, b1, b2, _] = value.to_le_bytes();
        Base24([b0, b1, b2])
    }
    #[inline(always)]
    fn get(self) -> usize {
        let [b0, b1, b2] = self.0;
        u32::from_le_bytes([b0, b1, b2, 0]) as usize
    }
}

/// A sparse chunk: up to 8 merged heads in decreasing order (unused slots
/// repeat head 0) and their pointers.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct SparseChunk<P> {
    /// Head positions (0..=255), decreasing.
    pub heads: [u8; 8],
    /// The pointer of each head.
    pub pointers: [P; 8],
}

/// A dense chunk: 16 code words and one base index into the level's
/// pointer array (6-bit offsets reach all of its at most 64 pointers).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct DenseChunk<B> {
    /// Code words as little-endian bytes.
    pub code: [[u8; 2]; 16],
    /// First pointer of the chunk in the level's pointer array.
    pub base: B,
}

/// A very dense chunk: 16 code words and one base index per 4 of them.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct VeryDenseChunk<B> {
    /// Code words as little-endian bytes.
    pub code: [[u8; 2]; 16],
    /// First pointer of each group of four code words.
    pub base: [B; 4],
}

const _: () = assert!(std::mem::size_of::<CodeWord>() == 2);
const _: () = assert!(std::mem::size_of::<SparseChunk<u16>>() == 24);
const _: () = assert!(std::mem::size_of::<SparseChunk<u32>>() == 40);
const _: () = assert!(std::mem::size_of::<DenseChunk<Base16>>() == 34);
const _: () = assert!(std::mem::size_of::<DenseChunk<Base24>>() == 35);
const _: () = assert!(std::mem::size_of::<VeryDenseChunk<Base16>>() == 40);
const _: () = assert!(std::mem::size_of::<VeryDenseChunk<Base24>>() == 44);

/// The chunks of level 2 or 3.
#[derive(Clone, Debug, Default)]
pub struct ChunkLevel<P, B> {
    /// Sparse chunks.
    pub sparse: Vec<SparseChunk<P>>,
    /// Dense chunks.
    pub dense: Vec<DenseChunk<B>>,
    /// Very dense chunks.
    pub very_dense: Vec<VeryDenseChunk<B>>,
    /// The pointers of the dense and very dense chunks.
    pub pointers: Vec<P>,
}

/// Which encoding a table was built with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variant {
    /// Pointer width: 16 (the paper's) or 32.
    pub pointer_bits: u32,
    /// Width of the level-2/3 base indices: 16 (the paper's) or 24.
    pub base_bits: u32,
}

impl Variant {
    /// The paper's encoding.
    pub const PAPER: Variant = Variant { pointer_bits: 16, base_bits: 16 };

    /// Short name for reports (`paper`, `wide-pointers`, `wide-base`,
    /// `wide-pointers+wide-base`).
    pub fn name(&self) -> &'static str {
        match (self.pointer_bits, self.base_bits) {
            (16, 16) => "paper",
            (32, 16) => "wide-pointers",
            (16, 24) => "wide-base",
            _ => "wide-pointers+wide-base",
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}-bit pointers, {}-bit base indices in levels 2-3)",
            self.name(),
            self.pointer_bits,
            self.base_bits
        )
    }
}

/// What the build found, for the statistics report (Table 1's columns).
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Routing entries in the RIB.
    pub routing_entries: usize,
    /// Leaves of the complete prefix tree.
    pub leaves: usize,
    /// Distinct next hops among the routing entries.
    pub next_hops: usize,
    /// The largest next hop stored.
    pub max_next_hop: NextHop,
    /// Why the paper's encoding was not enough (empty if it was).
    pub widening_reasons: Vec<String>,
}

/// A Luleå forwarding table with `P` pointers and `B` base indices in
/// levels 2 and 3.
#[derive(Clone, Debug)]
pub struct Lulea<P, B> {
    /// Level 1 code words, one per 16 positions of the depth-16 cut.
    pub(crate) code: Box<[u16; 4096]>,
    /// Level 1 base indices, one per four code words.
    pub(crate) base: Box<[u16; 1024]>,
    /// Level 1 pointers.
    pub(crate) pointers: Vec<P>,
    /// Level 2 chunks (depths 17..24).
    pub(crate) level2: ChunkLevel<P, B>,
    /// Level 3 chunks (depths 25..32).
    pub(crate) level3: ChunkLevel<P, B>,
    /// The encoding built.
    pub(crate) variant: Variant,
    /// Build figures.
    pub(crate) summary: Summary,
}

forward_fib!([P: PointerWord, B: BaseIndex] Lulea<P, B>, u32, |_table| "lulea", [lookup_batch]);

/// Registry builder for `lulea`: builds the narrowest variant that holds
/// the table.
pub fn build(rib: &Rib4, options: &BuildOptions) -> Result<Box<dyn Fib<u32>>, BuildError> {
    Ok(match build_table(rib, options)? {
        Built::Paper(table) => Box::new(table),
        Built::WidePointers(table) => Box::new(table),
        Built::WideBase(table) => Box::new(table),
        Built::Wide(table) => Box::new(table),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_words_pack_ten_and_six() {
        let code = CodeWord::row(675, 63);
        assert_eq!((code.ten(), code.six(), code.0), (675, 63, 675 << 6 | 63));
        assert_eq!(CodeWord::direct(0).0, 676 << 6, "next hop 0 (no route) is direct too");
        for next_hop in [0, 1, 63, 64, 16_383, DIRECT_LIMIT - 1] {
            let code = CodeWord::direct(next_hop);
            assert!(code.ten() >= maptable::DIRECT_ROW && code.ten() < ESCAPE_ROW);
            assert_eq!(code.direct_next_hop(), Some(next_hop));
        }
        assert_eq!(DIRECT_LIMIT, (1023 - 676) * 64);
        let escape = CodeWord::escape(17);
        assert_eq!((escape.ten(), escape.six(), escape.direct_next_hop()), (ESCAPE_ROW, 17, None));
    }

    #[test]
    fn pointers_keep_two_kind_bits_on_top() {
        let narrow = <u16 as PointerWord>::pack(KIND_VERY_DENSE, 0x3fff);
        assert_eq!(narrow, 0xffff);
        assert_eq!((narrow.kind(), narrow.index()), (KIND_VERY_DENSE, 0x3fff));
        assert_eq!(<u16 as PointerWord>::pack(KIND_SPARSE, 5), 0x4005);
        assert_eq!(<u16 as PointerWord>::INDEX_LIMIT, 1 << 14);
        let wide = <u32 as PointerWord>::pack(KIND_DENSE, (1 << 30) - 1);
        assert_eq!((wide.kind(), wide.index()), (KIND_DENSE, (1 << 30) - 1));
        assert_eq!(<u32 as PointerWord>::pack(KIND_NEXT_HOP, 7), 7);
    }

    #[test]
    fn base_indices_round_trip_in_two_and_three_bytes() {
        for value in [0, 1, 0xff, 0x1234, 0xffff] {
            assert_eq!(Base16::pack(value).get(), value as usize);
        }
        for value in [0, 0x1_0000, 0xab_cdef, 0xff_ffff] {
            assert_eq!(Base24::pack(value).get(), value as usize);
        }
        assert_eq!(Base24::pack(0x12_3456).0, [0x56, 0x34, 0x12]);
    }

    #[test]
    fn sparse_chunks_find_the_last_head_at_or_before_the_key() {
        // Three heads (0, 50, 200): slots beyond repeat head 0.
        let few = SparseChunk { heads: [200, 50, 0, 0, 0, 0, 0, 0], pointers: [3u16, 2, 1, 1, 1, 1, 1, 1] };
        let found: Vec<u16> = [0u8, 49, 50, 199, 200, 255].iter().map(|&key| few.search(key)).collect();
        assert_eq!(found, vec![1, 1, 2, 2, 3, 3]);
        // Eight heads, every key.
        let full = SparseChunk { heads: [240, 200, 160, 120, 80, 40, 20, 0], pointers: [8u32, 7, 6, 5, 4, 3, 2, 1] };
        for key in 0..=255u8 {
            let expected = full.heads.iter().position(|&head| head <= key).unwrap();
            assert_eq!(full.search(key), full.pointers[expected], "key {key}");
        }
    }
}
