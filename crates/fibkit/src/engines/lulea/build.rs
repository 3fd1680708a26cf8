//! Building a Luleå table from the RIB in one pass over the routing entries.
//!
//! 1. The routing entries, in address order, are expanded into the leaves
//!    of the complete prefix tree (each with its first address, its
//!    `prefix_len` and the next hop inherited from the closest ancestor
//!    with a route).
//! 2. The leaves are cut at depths 16, 24 and 32: each level's heads are
//!    the leaves starting at a position of the cut (genuine heads) and the
//!    positions below which the tree continues (root heads, whose leaves
//!    are built into a chunk of the next level first).
//! 3. Heads become code words, base indices and pointers (level 1, dense
//!    and very dense chunks) or merged head lists (sparse chunks).
//!
//! Everything is first built with 32-bit draft pointers and base indices;
//! then the narrowest [`Variant`] that holds the counts is chosen and the
//! draft is packed into it.

use super::maptable::{self, SINGLE_HEAD};
use super::{
    Base16, Base24, BaseIndex, ChunkLevel, CodeWord, DenseChunk, Lulea, PointerWord, SparseChunk, Summary, Variant,
    VeryDenseChunk, DIRECT_LIMIT, KIND_DENSE, KIND_NEXT_HOP, KIND_SPARSE, KIND_VERY_DENSE,
};
use crate::addr::Prefix4;
use crate::error::{BuildError, Limit, LimitExceeded};
use crate::fib::{BuildOptions, Fib};
use crate::mem::{try_push, try_reserve, try_with_capacity, AllocError};
use crate::rib::Rib4;
use crate::NextHop;

/// The error of memory refused to Luleå's array `array`.
fn refused(array: &'static str) -> impl Fn(AllocError) -> BuildError {
    move |error| BuildError::out_of_memory("lulea", array, error)
}

/// The chunk arrays and the pointer array of levels 2 and 3, for errors.
const CHUNK_ARRAYS: [&str; 2] = ["level-2 chunk arrays", "level-3 chunk arrays"];
const POINTER_ARRAYS: [&str; 2] = ["level-2 pointer array", "level-3 pointer array"];

/// A leaf of the complete prefix tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Leaf {
    pub first: u32,
    pub prefix_len: u8,
    pub next_hop: NextHop,
}

/// A pointer before packing: kind and index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Draft {
    kind: u32,
    index: u32,
}

impl Draft {
    fn next_hop(next_hop: NextHop) -> Self {
        Draft { kind: KIND_NEXT_HOP, index: next_hop }
    }
}

/// A head of a cut: its position and its pointer.
#[derive(Clone, Copy, Debug)]
struct Head {
    pos: u32,
    target: Draft,
}

#[derive(Default)]
struct DraftLevel {
    sparse: Vec<([u8; 8], [Draft; 8])>,
    dense: Vec<([u16; 16], u32)>,
    very_dense: Vec<([u16; 16], [u32; 4])>,
    pointers: Vec<Draft>,
}

impl DraftLevel {
    fn largest_base(&self) -> u32 {
        let dense = self.dense.iter().map(|(_, base)| *base);
        let very_dense = self.very_dense.iter().flat_map(|(_, bases)| bases.iter().copied());
        dense.chain(very_dense).max().unwrap_or(0)
    }

    fn chunk_counts(&self) -> [(&'static str, usize); 3] {
        [("sparse", self.sparse.len()), ("dense", self.dense.len()), ("very dense", self.very_dense.len())]
    }
}

/// Expands the routing entries (sorted by address, covering first) inside
/// the node `first/prefix_len` into the leaves of the complete prefix tree.
///
/// # Errors
/// [`AllocError`] when the system refuses `out`'s growth.
fn expand(
    first: u32,
    prefix_len: u8,
    inherited: NextHop,
    inside: &[(Prefix4, NextHop)],
    out: &mut Vec<Leaf>,
) -> Result<(), AllocError> {
    if inside.is_empty() {
        return try_push(out, Leaf { first, prefix_len, next_hop: inherited });
    }
    debug_assert!(prefix_len < 32, "a /32 has nothing inside");
    let right_first = first | (1u32 << (31 - prefix_len));
    let split = inside.partition_point(|(prefix, _)| prefix.addr() < right_first);
    for (child_first, part) in [(first, &inside[..split]), (right_first, &inside[split..])] {
        let (next_hop, rest) = match part.first() {
            Some(&(prefix, next_hop)) if prefix.addr() == child_first && prefix.prefix_len() == prefix_len + 1 => {
                (next_hop, &part[1..])
            }
            _ => (inherited, part),
        };
        expand(child_first, prefix_len + 1, next_hop, rest, out)?;
    }
    Ok(())
}

/// The leaves of the complete prefix tree of `rib`, in address order.
///
/// # Errors
/// [`BuildError::OutOfMemory`] when the system refuses the list of routes
/// or of leaves (a dozen leaves a route for scattered /32s).
pub(crate) fn complete_tree_leaves(rib: &Rib4) -> Result<Vec<Leaf>, BuildError> {
    let mut routes: Vec<(Prefix4, NextHop)> = try_with_capacity(rib.len()).map_err(refused("route list"))?;
    routes.extend(rib.iter());
    routes.sort_unstable_by_key(|(prefix, _)| *prefix);
    let (root_hop, inside) = match routes.first() {
        Some(&(prefix, next_hop)) if prefix.prefix_len() == 0 => (next_hop, &routes[1..]),
        _ => (crate::NO_ROUTE, &routes[..]),
    };
    let mut leaves = try_with_capacity(routes.len() * 2 + 1).map_err(refused("leaf list"))?;
    expand(0, 0, root_hop, inside, &mut leaves).map_err(refused("leaf list"))?;
    Ok(leaves)
}

/// Code words, base indices (relative to the first pointer) and pointers of
/// `masks` masks of 16 positions, with one base index per `group` masks;
/// `None` if an offset within a group does not fit six bits.
fn encode_code_words(heads: &[Head], masks: u32, group: u32) -> Option<(Vec<u16>, Vec<u32>, Vec<Draft>)> {
    let mut codes = Vec::with_capacity(masks as usize);
    let mut bases = Vec::with_capacity((masks / group) as usize);
    let mut pointers: Vec<Draft> = Vec::new();
    let mut cursor = 0;
    // The next hop of the last genuine head seen (members inherit it).
    let mut last_next_hop = None;
    for mask_index in 0..masks {
        if mask_index % group == 0 {
            bases.push(pointers.len() as u32);
        }
        let six = (pointers.len() as u32) - bases.last().copied().unwrap_or(0);
        if six >= 64 {
            return None;
        }
        let start = cursor;
        while cursor < heads.len() && heads[cursor].pos < (mask_index + 1) * 16 {
            cursor += 1;
        }
        let in_mask = &heads[start..cursor];
        let direct = |next_hop: NextHop, pointers: &mut Vec<Draft>| {
            if next_hop < DIRECT_LIMIT {
                CodeWord::direct(next_hop)
            } else {
                pointers.push(Draft::next_hop(next_hop));
                CodeWord::escape(six)
            }
        };
        let code = match in_mask {
            [] => {
                let next_hop = last_next_hop.expect("a member follows a genuine head in a complete tree");
                direct(next_hop, &mut pointers)
            }
            [head] => {
                assert!(
                    head.pos == mask_index * 16 && head.target.kind == KIND_NEXT_HOP,
                    "a lone head of a complete tree is a leaf at the mask's start"
                );
                direct(head.target.index, &mut pointers)
            }
            _ => {
                let mask = in_mask.iter().fold(0u16, |mask, head| mask | SINGLE_HEAD >> (head.pos % 16));
                let row = maptable::row_of(mask)
                    .unwrap_or_else(|| panic!("mask {mask:#06x} cannot come from a complete prefix tree"));
                pointers.extend(in_mask.iter().map(|head| head.target));
                CodeWord::row(row, six)
            }
        };
        codes.push(code.0);
        if let Some(last) = in_mask.last() {
            last_next_hop = (last.target.kind == KIND_NEXT_HOP).then_some(last.target.index);
        }
    }
    debug_assert_eq!(cursor, heads.len());
    Some((codes, bases, pointers))
}

struct Builder {
    /// Levels 2 and 3.
    levels: [DraftLevel; 2],
}

impl Builder {
    /// The heads of the cut at the end of `level` (1, 2 or 3) through the
    /// part of the tree that `leaves` cover; root heads build their chunks.
    ///
    /// # Errors
    /// [`BuildError::OutOfMemory`] when the system refuses a level's
    /// arrays.
    fn heads(&mut self, leaves: &[Leaf], level: usize) -> Result<Vec<Head>, BuildError> {
        let cut = 8 + 8 * level as u32; // 16, 24, 32
        let shift = 32 - cut;
        let positions = if level == 1 { 0xffff } else { 0xff };
        let mut heads = Vec::new();
        let mut index = 0;
        while index < leaves.len() {
            let leaf = leaves[index];
            let pos = (leaf.first >> shift) & positions;
            if u32::from(leaf.prefix_len) <= cut {
                heads.push(Head { pos, target: Draft::next_hop(leaf.next_hop) });
                index += 1;
            } else {
                let end = index
                    + leaves[index..].iter().take_while(|other| (other.first >> shift) & positions == pos).count();
                let target = self.chunk(&leaves[index..end], level + 1)?;
                heads.push(Head { pos, target });
                index = end;
            }
        }
        Ok(heads)
    }

    /// Builds the chunk of `level` (2 or 3) for `leaves` (one subtree below
    /// a root head) and returns the pointer to it.
    ///
    /// # Errors
    /// As [`Builder::heads`].
    fn chunk(&mut self, leaves: &[Leaf], level: usize) -> Result<Draft, BuildError> {
        let heads = self.heads(leaves, level)?;
        let (chunks_refused, pointers_refused) = (refused(CHUNK_ARRAYS[level - 2]), refused(POINTER_ARRAYS[level - 2]));
        let draft_level = &mut self.levels[level - 2];
        // Sparse chunks merge consecutive genuine heads with equal next hops.
        let mut merged: Vec<Head> = Vec::with_capacity(9);
        for head in &heads {
            match merged.last() {
                Some(last) if last.target.kind == KIND_NEXT_HOP && last.target == head.target => {}
                _ => {
                    merged.push(*head);
                    if merged.len() > 8 {
                        break;
                    }
                }
            }
        }
        if merged.len() <= 8 {
            let mut positions = [0u8; 8];
            let mut pointers = [merged[0].target; 8];
            for (slot, head) in merged.iter().rev().enumerate() {
                positions[slot] = head.pos as u8;
                pointers[slot] = head.target;
            }
            try_push(&mut draft_level.sparse, (positions, pointers)).map_err(chunks_refused)?;
            return Ok(Draft { kind: KIND_SPARSE, index: draft_level.sparse.len() as u32 - 1 });
        }
        let first_pointer = draft_level.pointers.len() as u32;
        if heads.len() <= 64 {
            if let Some((codes, bases, pointers)) = encode_code_words(&heads, 16, 16) {
                // With escapes a chunk of 64 heads can need more pointers.
                if pointers.len() <= 64 {
                    try_reserve(&mut draft_level.pointers, pointers.len()).map_err(pointers_refused)?;
                    try_push(&mut draft_level.dense, (codes.try_into().unwrap(), first_pointer + bases[0]))
                        .map_err(chunks_refused)?;
                    draft_level.pointers.extend(pointers);
                    return Ok(Draft { kind: KIND_DENSE, index: draft_level.dense.len() as u32 - 1 });
                }
            }
        }
        // At most 16 pointers per mask: offsets in a group of 4 stay below 64.
        let (codes, bases, pointers) = encode_code_words(&heads, 16, 4).expect("offsets within 4 masks fit");
        let bases: [u32; 4] = std::array::from_fn(|group| first_pointer + bases[group]);
        try_reserve(&mut draft_level.pointers, pointers.len()).map_err(pointers_refused)?;
        try_push(&mut draft_level.very_dense, (codes.try_into().unwrap(), bases)).map_err(chunks_refused)?;
        draft_level.pointers.extend(pointers);
        Ok(Draft { kind: KIND_VERY_DENSE, index: draft_level.very_dense.len() as u32 - 1 })
    }
}

/// A built table in the variant its counts required.
#[derive(Clone, Debug)]
pub enum Built {
    /// The paper's encoding.
    Paper(Lulea<u16, Base16>),
    /// 32-bit pointers, 16-bit base indices.
    WidePointers(Lulea<u32, Base16>),
    /// 16-bit pointers, 24-bit base indices.
    WideBase(Lulea<u16, Base24>),
    /// 32-bit pointers, 24-bit base indices.
    Wide(Lulea<u32, Base24>),
}

impl Built {
    /// The table as an engine.
    pub fn as_fib(&self) -> &dyn Fib<u32> {
        match self {
            Built::Paper(table) => table,
            Built::WidePointers(table) => table,
            Built::WideBase(table) => table,
            Built::Wide(table) => table,
        }
    }

    /// The variant built.
    pub fn variant(&self) -> Variant {
        match self {
            Built::Paper(table) => table.variant,
            Built::WidePointers(table) => table.variant,
            Built::WideBase(table) => table.variant,
            Built::Wide(table) => table.variant,
        }
    }
}

fn refuse(limit: Limit, field: String, value: u64, max: u64) -> BuildError {
    LimitExceeded::new("lulea", limit, field, value, max).into()
}

/// Builds a Luleå table from `rib`, in the narrowest variant that holds it.
///
/// # Errors
/// [`BuildError::Limit`] when even the widest variant cannot hold the
/// table: a next hop of 2^30 or more, more than 2^30 chunks of a kind, or a
/// level's pointer array beyond 2^24 entries; [`BuildError::OutOfMemory`]
/// when the system refuses an array (the table's, or the builder's lists
/// as long as the table).
pub fn build_table(rib: &Rib4, options: &BuildOptions) -> Result<Built, BuildError> {
    let mut distinct: Vec<NextHop> = try_with_capacity(rib.len()).map_err(refused("next-hop list"))?;
    distinct.extend(rib.iter().map(|(_, next_hop)| next_hop));
    distinct.sort_unstable();
    distinct.dedup();
    let max_next_hop = distinct.last().copied().unwrap_or(0).max(options.max_next_hop);
    if max_next_hop >= <u32 as PointerWord>::INDEX_LIMIT {
        let field = "the widest pointer's 30-bit index".to_string();
        return Err(refuse(Limit::NextHop, field, max_next_hop.into(), (<u32 as PointerWord>::INDEX_LIMIT - 1).into()));
    }
    let leaves = complete_tree_leaves(rib)?;
    let mut builder = Builder { levels: [DraftLevel::default(), DraftLevel::default()] };
    let heads = builder.heads(&leaves, 1)?;
    let (codes, bases, level1_pointers) = encode_code_words(&heads, 4096, 4).expect("offsets within 4 masks fit");
    assert!(level1_pointers.len() <= 1 << 16, "level 1 has at most 2^16 heads");

    let mut summary = Summary {
        routing_entries: rib.len(),
        leaves: leaves.len(),
        next_hops: distinct.len(),
        max_next_hop,
        widening_reasons: Vec::new(),
    };
    drop(leaves);
    let paper_index_limit = <u16 as PointerWord>::INDEX_LIMIT;
    let wide_index_limit = <u32 as PointerWord>::INDEX_LIMIT;
    let mut pointer_bits = 16;
    if max_next_hop >= paper_index_limit {
        pointer_bits = 32;
        summary.widening_reasons.push(format!(
            "next hop {max_next_hop} exceeds the 14-bit pointer index (limit {})",
            paper_index_limit - 1
        ));
    }
    for (level, draft_level) in builder.levels.iter().enumerate() {
        for (kind, count) in draft_level.chunk_counts() {
            if count as u64 > u64::from(wide_index_limit) {
                let field = format!("the {kind} chunks of level {} that a 30-bit pointer index reaches", level + 2);
                return Err(refuse(Limit::Chunks, field, count as u64, wide_index_limit.into()));
            }
            if count as u64 > u64::from(paper_index_limit) {
                pointer_bits = 32;
                summary.widening_reasons.push(format!(
                    "level {} has {count} {kind} chunks (14-bit pointers index {paper_index_limit})",
                    level + 2
                ));
            }
        }
    }
    let mut base_bits = 16;
    for (level, draft_level) in builder.levels.iter().enumerate() {
        let largest = draft_level.largest_base();
        if largest >= 1 << 24 {
            let field = format!("the 24-bit base indices of level {}", level + 2);
            return Err(refuse(Limit::BaseIndex, field, largest as u64, (1 << 24) - 1));
        }
        if largest >= 1 << 16 {
            base_bits = 24;
            summary.widening_reasons.push(format!(
                "level {} has {} pointers (16-bit base indices reach 65535)",
                level + 2,
                draft_level.pointers.len()
            ));
        }
    }
    let variant = Variant { pointer_bits, base_bits };
    let level1 = Level1 { codes, bases, pointers: level1_pointers };
    let [level2, level3] = builder.levels;
    let parts = (level1, level2, level3, variant, summary);
    Ok(match (pointer_bits, base_bits) {
        (16, 16) => Built::Paper(pack(parts)?),
        (32, 16) => Built::WidePointers(pack(parts)?),
        (16, _) => Built::WideBase(pack(parts)?),
        _ => Built::Wide(pack(parts)?),
    })
}

struct Level1 {
    codes: Vec<u16>,
    bases: Vec<u32>,
    pointers: Vec<Draft>,
}

fn pack_pointer<P: PointerWord>(draft: Draft) -> P {
    P::pack(draft.kind, draft.index)
}

/// `draft`'s elements packed by `pack` into a vector of their own (the
/// draft's memory freed once they are).
///
/// # Errors
/// [`AllocError`] when the system refuses the vector.
fn packed<T, U>(draft: Vec<T>, pack: impl FnMut(T) -> U) -> Result<Vec<U>, AllocError> {
    let mut out = try_with_capacity(draft.len())?;
    out.extend(draft.into_iter().map(pack));
    Ok(out)
}

/// Level `level`'s (2 or 3) chunks and pointers, packed.
///
/// # Errors
/// [`BuildError::OutOfMemory`] when the system refuses an array.
fn pack_level<P: PointerWord, B: BaseIndex>(draft: DraftLevel, level: usize) -> Result<ChunkLevel<P, B>, BuildError> {
    let code_bytes = |codes: [u16; 16]| codes.map(u16::to_le_bytes);
    let (chunks_refused, pointers_refused) = (refused(CHUNK_ARRAYS[level - 2]), refused(POINTER_ARRAYS[level - 2]));
    Ok(ChunkLevel {
        sparse: packed(draft.sparse, |(heads, pointers)| SparseChunk { heads, pointers: pointers.map(pack_pointer) })
            .map_err(&chunks_refused)?,
        dense: packed(draft.dense, |(codes, base)| DenseChunk { code: code_bytes(codes), base: B::pack(base) })
            .map_err(&chunks_refused)?,
        very_dense: packed(draft.very_dense, |(codes, bases)| VeryDenseChunk {
            code: code_bytes(codes),
            base: bases.map(B::pack),
        })
        .map_err(&chunks_refused)?,
        pointers: packed(draft.pointers, pack_pointer).map_err(pointers_refused)?,
    })
}

/// The table in the variant `P`, `B`.
///
/// # Errors
/// [`BuildError::OutOfMemory`] when the system refuses an array.
fn pack<P: PointerWord, B: BaseIndex>(
    (level1, level2, level3, variant, summary): (Level1, DraftLevel, DraftLevel, Variant, Summary),
) -> Result<Lulea<P, B>, BuildError> {
    let code: Box<[u16; 4096]> = level1.codes.into_boxed_slice().try_into().expect("4096 code words");
    let bases: Vec<u16> =
        level1.bases.iter().map(|&base| u16::try_from(base).expect("level 1 base indices fit 16 bits")).collect();
    let base: Box<[u16; 1024]> = bases.into_boxed_slice().try_into().expect("1024 base indices");
    Ok(Lulea {
        code,
        base,
        pointers: packed(level1.pointers, pack_pointer).map_err(refused("level-1 pointer array"))?,
        level2: pack_level(level2, 2)?,
        level3: pack_level(level3, 3)?,
        variant,
        summary,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::addr::p;

    #[test]
    fn leaves_of_the_complete_tree() {
        let mut rib = Rib4::new();
        assert_eq!(
            complete_tree_leaves(&rib).unwrap(),
            vec![Leaf { first: 0, prefix_len: 0, next_hop: 0 }],
            "an empty table is one undefined leaf"
        );
        rib.insert(p("128.0.0.0/2"), 5);
        rib.insert(p("160.0.0.0/3"), 6);
        // Root -> 1/1 (glue) -> 10/2 (route 5) -> 101/3 (route 6), siblings
        // added at each level.
        assert_eq!(
            complete_tree_leaves(&rib).unwrap(),
            vec![
                Leaf { first: 0, prefix_len: 1, next_hop: 0 },
                Leaf { first: 0x8000_0000, prefix_len: 3, next_hop: 5 },
                Leaf { first: 0xa000_0000, prefix_len: 3, next_hop: 6 },
                Leaf { first: 0xc000_0000, prefix_len: 2, next_hop: 0 },
            ]
        );
        rib.insert(p("0.0.0.0/0"), 1);
        let leaves = complete_tree_leaves(&rib).unwrap();
        assert_eq!(leaves[0].next_hop, 1, "added leaves inherit the default route");
        assert_eq!(leaves[3].next_hop, 1);
        assert_eq!(leaves.len(), 4);
    }

    #[test]
    fn code_words_for_members_single_heads_and_maptable_rows() {
        // Positions 0..32 (two masks): a leaf covering 0..16 (one head),
        // then heads at 16, 24, 28 (row), members of 28 up to 31.
        let heads = [
            Head { pos: 0, target: Draft::next_hop(7) },
            Head { pos: 16, target: Draft::next_hop(8) },
            Head { pos: 24, target: Draft::next_hop(9) },
            Head { pos: 28, target: Draft { kind: KIND_SPARSE, index: 3 } },
            Head { pos: 29, target: Draft::next_hop(10) },
            Head { pos: 30, target: Draft::next_hop(10) },
            Head { pos: 32, target: Draft::next_hop(11) },
        ];
        let (codes, bases, pointers) = encode_code_words(&heads, 4, 4).unwrap();
        assert_eq!(bases, vec![0]);
        assert_eq!(CodeWord(codes[0]).direct_next_hop(), Some(7));
        let second = CodeWord(codes[1]);
        assert_eq!(second.six(), 0);
        assert_eq!(maptable::MASKS[usize::from(second.ten())], 0b1000_0000_1000_1110);
        assert_eq!(pointers.len(), 5);
        // The third mask holds one head (32): direct; the fourth is a member.
        assert_eq!(CodeWord(codes[2]).direct_next_hop(), Some(11));
        assert_eq!(CodeWord(codes[3]).direct_next_hop(), Some(11));
        assert_eq!(maptable::offset(second.ten(), 31 - 16), 4, "position 31 is a member of head 30");
    }

    #[test]
    fn large_next_hops_escape_into_a_pointer() {
        let heads =
            [Head { pos: 0, target: Draft::next_hop(DIRECT_LIMIT) }, Head { pos: 16, target: Draft::next_hop(3) }];
        let (codes, _, pointers) = encode_code_words(&heads, 2, 4).unwrap();
        assert_eq!(CodeWord(codes[0]).ten(), super::super::ESCAPE_ROW);
        assert_eq!(CodeWord(codes[0]).direct_next_hop(), None);
        assert_eq!(pointers, vec![Draft::next_hop(DIRECT_LIMIT)]);
        assert_eq!(CodeWord(codes[1]).direct_next_hop(), Some(3));
    }
}
