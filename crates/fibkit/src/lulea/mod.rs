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
//! What was built is reported in [`Fib4::stats`] under `variant`; a table
//! no variant can hold is refused with a [`BuildError`].
//!
//! Lookup follows the paper's Figure 10 at each level.

mod build;
pub mod maptable;

use std::fmt;

use crate::engine::{BuildError, BuildOptions, Fib4, Stats};
use crate::rib::Rib4;
use crate::NextHop;

pub use build::{build, Built};

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

impl<P: PointerWord, B: BaseIndex> ChunkLevel<P, B> {
    /// Bytes of the level.
    pub fn footprint(&self) -> usize {
        use std::mem::size_of;
        self.sparse.len() * size_of::<SparseChunk<P>>()
            + self.dense.len() * size_of::<DenseChunk<B>>()
            + self.very_dense.len() * size_of::<VeryDenseChunk<B>>()
            + self.pointers.len() * size_of::<P>()
    }

    /// Searches the chunk `pointer` designates for position `key`; returns
    /// the pointer found there (a next hop or a chunk of the next level).
    #[inline(always)]
    fn search(&self, pointer: P, key: u8) -> P {
        let index = pointer.index() as usize;
        match pointer.kind() {
            KIND_SPARSE => self.sparse[index].search(key),
            KIND_DENSE => {
                let chunk = &self.dense[index];
                let code = CodeWord(u16::from_le_bytes(chunk.code[usize::from(key >> 4)]));
                self.resolve(code, chunk.base.get(), u32::from(key & 15))
            }
            _ => {
                let chunk = &self.very_dense[index];
                let code = CodeWord(u16::from_le_bytes(chunk.code[usize::from(key >> 4)]));
                self.resolve(code, chunk.base[usize::from(key >> 6)].get(), u32::from(key & 15))
            }
        }
    }

    /// Figure 10 inside a chunk: code word, base index, maptable, pointer.
    #[inline(always)]
    fn resolve(&self, code: CodeWord, base: usize, bit: u32) -> P {
        let ten = code.ten();
        if ten >= maptable::DIRECT_ROW {
            return match code.direct_next_hop() {
                Some(next_hop) => P::pack(KIND_NEXT_HOP, next_hop),
                None => self.pointers[base + code.six()],
            };
        }
        self.pointers[base + code.six() + maptable::offset(ten, bit)]
    }
}

impl<P: PointerWord> SparseChunk<P> {
    /// The pointer of the last head at or before `key`: the fourth head
    /// decides between the first and the last four, then a linear scan.
    #[inline(always)]
    fn search(&self, key: u8) -> P {
        let mut slot = if key >= self.heads[3] { 0 } else { 4 };
        while self.heads[slot] > key {
            slot += 1;
        }
        self.pointers[slot]
    }
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
    pub code: Box<[u16; 4096]>,
    /// Level 1 base indices, one per four code words.
    pub base: Box<[u16; 1024]>,
    /// Level 1 pointers.
    pub pointers: Vec<P>,
    /// Level 2 chunks (depths 17..24).
    pub level2: ChunkLevel<P, B>,
    /// Level 3 chunks (depths 25..32).
    pub level3: ChunkLevel<P, B>,
    /// The encoding built.
    pub variant: Variant,
    /// Build figures.
    pub summary: Summary,
}

impl<P: PointerWord, B: BaseIndex> Lulea<P, B> {
    /// Longest-prefix match, as in the paper's Figure 10 on each level.
    #[inline]
    pub fn lookup(&self, addr: u32) -> NextHop {
        let code = CodeWord(self.code[(addr >> 20) as usize]);
        let ten = code.ten();
        let pointer = if ten >= maptable::DIRECT_ROW {
            match code.direct_next_hop() {
                Some(next_hop) => return next_hop,
                None => self.level1_escape(addr, code),
            }
        } else {
            let pix = usize::from(self.base[(addr >> 22) as usize])
                + code.six()
                + maptable::offset(ten, (addr >> 16) & 15);
            self.pointers[pix]
        };
        if pointer.kind() == KIND_NEXT_HOP {
            return pointer.index();
        }
        let pointer = self.level2.search(pointer, (addr >> 8) as u8);
        if pointer.kind() == KIND_NEXT_HOP {
            return pointer.index();
        }
        self.level3.search(pointer, addr as u8).index()
    }

    #[cold]
    fn level1_escape(&self, addr: u32, code: CodeWord) -> P {
        self.pointers[usize::from(self.base[(addr >> 22) as usize]) + code.six()]
    }

    /// Bytes of the maptable and level 1 without its pointers (the paper's
    /// fixed 15.3 KB).
    pub fn fixed_footprint(&self) -> usize {
        std::mem::size_of_val(&maptable::MAPTABLE) + 4096 * 2 + 1024 * 2
    }

    /// Bytes of the whole table.
    pub fn footprint(&self) -> usize {
        self.fixed_footprint()
            + self.pointers.len() * std::mem::size_of::<P>()
            + self.level2.footprint()
            + self.level3.footprint()
    }

    /// The statistics report with the paper's Table 1 columns.
    pub fn report(&self) -> Stats {
        let summary = &self.summary;
        let (l2, l3) = (&self.level2, &self.level3);
        let sparse = l2.sparse.len() + l3.sparse.len();
        let dense = l2.dense.len() + l3.dense.len();
        let very_dense = l2.very_dense.len() + l3.very_dense.len();
        let level3_chunks = l3.sparse.len() + l3.dense.len() + l3.very_dense.len();
        let bytes = self.footprint();
        let mut stats = Stats::default();
        stats
            .text("engine", "lulea")
            .text("variant", self.variant.name())
            .count("pointer_bits", u64::from(self.variant.pointer_bits))
            .count("base_bits", u64::from(self.variant.base_bits))
            .count("routing_entries", summary.routing_entries as u64)
            .count("leaves", summary.leaves as u64)
            .count("next_hops", summary.next_hops as u64)
            .count("bytes_total", bytes as u64)
            .count("sparse_chunks", sparse as u64)
            .count("dense_chunks", dense as u64)
            .count("very_dense_chunks", very_dense as u64)
            .count("level3_chunks", level3_chunks as u64)
            .count("level2_sparse", l2.sparse.len() as u64)
            .count("level2_dense", l2.dense.len() as u64)
            .count("level2_very_dense", l2.very_dense.len() as u64)
            .count("level3_sparse", l3.sparse.len() as u64)
            .count("level3_dense", l3.dense.len() as u64)
            .count("level3_very_dense", l3.very_dense.len() as u64)
            .count("level1_pointers", self.pointers.len() as u64)
            .count("level2_pointers", l2.pointers.len() as u64)
            .count("level3_pointers", l3.pointers.len() as u64)
            .count("bytes_fixed", self.fixed_footprint() as u64)
            .count("bytes_level1_pointers", (self.pointers.len() * std::mem::size_of::<P>()) as u64)
            .count("bytes_level2", l2.footprint() as u64)
            .count("bytes_level3", l3.footprint() as u64);
        let per_prefix = bytes as f64 / summary.routing_entries.max(1) as f64;
        let mut report = String::new();
        report.push_str(&format!("Lulea: {}\n", self.variant));
        for reason in &summary.widening_reasons {
            report.push_str(&format!("  widened because {reason}\n"));
        }
        report.push_str(&format!(
            "{:>8} {:>8} {:>9} {:>9} {:>7} {:>7} {:>7} {:>8}\n",
            "entries", "leaves", "next-hops", "size(KB)", "sparse", "dense", "dense+", "level-3"
        ));
        report.push_str(&format!(
            "{:>8} {:>8} {:>9} {:>9.1} {:>7} {:>7} {:>7} {:>8}\n",
            summary.routing_entries,
            summary.leaves,
            summary.next_hops,
            bytes as f64 / 1024.0,
            sparse,
            dense,
            very_dense,
            level3_chunks
        ));
        report.push_str(&format!(
            "level 1: {} pointers; level 2: {}/{}/{} sparse/dense/dense+ chunks, {} pointers; \
             level 3: {}/{}/{} chunks, {} pointers\n",
            self.pointers.len(),
            l2.sparse.len(),
            l2.dense.len(),
            l2.very_dense.len(),
            l2.pointers.len(),
            l3.sparse.len(),
            l3.dense.len(),
            l3.very_dense.len(),
            l3.pointers.len()
        ));
        report.push_str(&format!(
            "{bytes} bytes ({per_prefix:.2} bytes/prefix; fixed {} bytes: maptable, code words, base indices)",
            self.fixed_footprint()
        ));
        stats.report = report;
        stats
    }
}

impl<P: PointerWord, B: BaseIndex> Fib4 for Lulea<P, B> {
    fn name(&self) -> &str {
        "lulea"
    }

    #[inline]
    fn lookup(&self, addr: u32) -> NextHop {
        Lulea::lookup(self, addr)
    }

    fn footprint(&self) -> usize {
        Lulea::footprint(self)
    }

    fn stats(&self) -> Stats {
        self.report()
    }
}

/// Registry builder for `lulea`: builds the narrowest variant that holds
/// the table.
pub fn build_boxed(rib: &Rib4, options: &BuildOptions) -> Result<Box<dyn Fib4>, BuildError> {
    Ok(match build(rib, options)? {
        Built::Paper(table) => Box::new(table),
        Built::WidePointers(table) => Box::new(table),
        Built::WideBase(table) => Box::new(table),
        Built::Wide(table) => Box::new(table),
    })
}
