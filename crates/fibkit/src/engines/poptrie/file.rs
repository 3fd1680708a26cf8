//! Poptrie in a compiled FIB file ([`crate::file`]).
//!
//! | section | elements | what |
//! |---|---|---|
//! | `params` | 7 `u64` | leaf width in bits (16 or 32), routes, aggregated (0/1), prefixes after aggregation, boundary points, direct leaves, levels |
//! | `direct` | `u32` | 2^s direct entries (none for s = 0) |
//! | `nodes` | 24 bytes | [`Node`]s: `vector`, `leafvec` (`u64`), `base0`, `base1` (`u32`) |
//! | `leaves` | `u16` or `u32` | next hops |
//!
//! Opening checks what the build asserts ([`Poptrie::bad_index`]) of every
//! node, so every index a lookup computes lies inside its array and every
//! walk ends, and that every next hop is one the file's values know.
//!
//! `poptrie16x12` ([`Expanded`]) writes the same `params` (its `first`
//! leaves in place of the direct leaves), `first` (2^s `u32`) and `blocks`
//! (2^x `u32` a block) instead of `direct`, then `nodes` and `leaves`;
//! opening also checks that every block number and node index they hold
//! is inside its array.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

use super::{BuildSummary, Expanded, Leaf, Node, NodeLayout, Poptrie, DIRECT_LEAF};
use crate::addr::Address;
use crate::fib::Fib;
use crate::file::{FamilyFile, FamilyWriter, FileError, Problem};
use crate::mem::LookupArray;
use crate::NextHop;

/// Parameters a Poptrie writes.
const PARAMS: usize = 7;

impl<A: Address, L: Leaf, const S: u32, N: NodeLayout> Poptrie<A, L, S, N> {
    /// Writes the arrays and the build's figures into `file`.
    ///
    /// # Errors
    /// [`Problem::NotSavable`] for the variants of the paper's Table 2
    /// (`poptrieS-leafvec`, `poptrieS-basic`): only the full engines have
    /// a file format.
    pub fn save<'a>(&'a self, file: &mut FamilyWriter<'_, 'a>) -> Result<(), Problem> {
        let summary = &self.summary;
        if summary.name != Self::engine_name() {
            return Err(Problem::not_savable(&summary.name));
        }
        file.params(&[
            L::BITS.into(),
            self.routes.load(Ordering::Relaxed) as u64,
            summary.aggregated.into(),
            summary.prefixes_aggregated as u64,
            summary.boundaries as u64,
            summary.direct_leaves as u64,
            summary.levels.into(),
        ]);
        file.array("direct", &self.direct);
        file.array("nodes", &self.nodes);
        file.array("leaves", &self.leaves);
        Ok(())
    }
}

impl<A: Address, L: Leaf, const S: u32> Poptrie<A, L, S> {
    /// Maps the arrays of `family`, checking every index and next hop.
    fn open_arrays(family: &FamilyFile<'_>, params: &[u64], max_next_hop: NextHop) -> Result<Self, FileError> {
        let mut poptrie = Self::open_trie(family, params, max_next_hop, Self::engine_name(), family.array("direct")?)?;
        if let Some(bad) = poptrie.bad_index(poptrie.nodes.len(), max_next_hop) {
            let size = if bad.array == "direct" { 4 } else { size_of::<Node>() };
            return Err(family.file().element_error(&family.name(bad.array), size, bad.index, bad.value, bad.problem));
        }
        Ok(poptrie)
    }

    /// The Poptrie of `family`'s `params`, `nodes` and `leaves` (every next
    /// hop checked, the nodes not yet) with `direct`, named `name`.
    fn open_trie(
        family: &FamilyFile<'_>,
        params: &[u64],
        max_next_hop: NextHop,
        name: String,
        direct: LookupArray<std::sync::atomic::AtomicU32>,
    ) -> Result<Self, FileError> {
        let param = |index: usize| params.get(index).copied().unwrap_or_default();
        let count = |index: usize| {
            usize::try_from(param(index)).map_err(|_| family.bad_param(index, param(index), "too large"))
        };
        let summary = BuildSummary {
            name,
            aggregated: param(2) != 0,
            prefixes: count(1)?,
            prefixes_aggregated: count(3)?,
            boundaries: count(4)?,
            direct_leaves: count(5)?,
            levels: u32::try_from(param(6)).map_err(|_| family.bad_param(6, param(6), "too large"))?,
            build_seconds: None,
        };
        let mut leaves = family.array::<L::Cell>("leaves")?;
        let words = leaves.words();
        // The largest first (vectorised), the position only on failure.
        if words.iter().fold(0, |largest, leaf| largest.max(leaf.next_hop())) > max_next_hop {
            let index = words.iter().position(|leaf| leaf.next_hop() > max_next_hop).unwrap_or_default();
            return Err(family.bad::<L>(
                "leaves",
                index,
                words[index].next_hop().into(),
                "next hop beyond the file's values",
            ));
        }
        Ok(Poptrie {
            direct,
            nodes: family.array("nodes")?,
            leaves,
            routes: AtomicUsize::new(summary.prefixes),
            batches: AtomicU64::new(0),
            summary,
            family: PhantomData,
        })
    }
}

impl<A: Address, L: Leaf, const S: u32, const X: u32> Expanded<A, L, S, X> {
    /// Writes the arrays and the build's figures into `file`.
    ///
    /// # Errors
    /// None: every `poptrieSxX` has a file format.
    pub fn save<'a>(&'a self, file: &mut FamilyWriter<'_, 'a>) -> Result<(), Problem> {
        let summary = self.trie.summary();
        file.params(&[
            L::BITS.into(),
            summary.prefixes as u64,
            summary.aggregated.into(),
            summary.prefixes_aggregated as u64,
            summary.boundaries as u64,
            self.first_leaves() as u64,
            summary.levels.into(),
        ]);
        file.array("first", &self.first);
        file.array("blocks", &self.blocks);
        file.array("nodes", &self.trie.nodes);
        file.array("leaves", &self.trie.leaves);
        Ok(())
    }

    /// Maps the arrays of `family`, checking every index and next hop.
    fn open_arrays(family: &FamilyFile<'_>, params: &[u64], max_next_hop: NextHop) -> Result<Self, FileError> {
        let name = Self::engine_name();
        let trie = Poptrie::open_trie(family, params, max_next_hop, name.clone(), LookupArray::from(Vec::new()))?;
        if let Some(bad) = trie.bad_node(trie.nodes.len()) {
            return Err(family.file().element_error(
                &family.name(bad.array),
                size_of::<Node>(),
                bad.index,
                bad.value,
                bad.problem,
            ));
        }
        let mut first = family.array::<AtomicU32>("first")?;
        if first.len() != 1 << S {
            return Err(family.bad::<u32>("first", 0, first.len() as u64, "the first array does not have 2^s entries"));
        }
        let mut blocks = family.array::<AtomicU32>("blocks")?;
        if !blocks.len().is_multiple_of(1 << X) {
            return Err(family.bad::<u32>("blocks", 0, blocks.len() as u64, "not whole blocks of 2^x entries"));
        }
        let block_count = blocks.len() >> X;
        for (section, entries, bound, problem) in [
            ("first", first.words(), block_count, "block number out of range"),
            ("blocks", blocks.words(), trie.nodes.len(), "node index out of range"),
        ] {
            // A branch-free pass first (vectorised), the position on failure.
            let wrong = |entry: u32| {
                let (leaf, value) = (entry & DIRECT_LEAF != 0, entry & !DIRECT_LEAF);
                leaf & (value > max_next_hop) | !leaf & (value as usize >= bound)
            };
            if entries.iter().fold(false, |any, &entry| any | wrong(entry)) {
                let index = entries.iter().position(|&entry| wrong(entry)).unwrap_or_default();
                let problem =
                    if entries[index] & DIRECT_LEAF != 0 { "next hop beyond the file's values" } else { problem };
                return Err(family.bad::<u32>(section, index, entries[index].into(), problem));
            }
        }
        Ok(Expanded { trie, first, blocks, name })
    }
}

/// Registry opener of `poptrieSxX`: the arrays of `family`, whose next
/// hops go up to `max_next_hop`.
///
/// # Errors
/// As [`open`], and for a `first` array of other than 2^s entries, blocks
/// not of 2^x entries each, or a block number or node index out of its
/// array.
pub fn open_expanded<A: Address, const S: u32, const X: u32>(
    family: &FamilyFile<'_>,
    max_next_hop: NextHop,
) -> Result<Box<dyn Fib<A>>, FileError> {
    let params = family.params(PARAMS)?;
    Ok(match params[0] {
        16 => Box::new(Expanded::<A, u16, S, X>::open_arrays(family, &params, max_next_hop)?),
        32 => Box::new(Expanded::<A, u32, S, X>::open_arrays(family, &params, max_next_hop)?),
        width => return Err(family.bad_param(0, width, "leaves are 16 or 32 bits wide")),
    })
}

/// Registry opener of `poptrieS` of either family: the arrays of
/// `family`, whose next hops go up to `max_next_hop`.
///
/// # Errors
/// [`FileError`] naming the section, the element and the problem for a
/// leaf width other than 16 or 32 bits, a missing or short section, an
/// index out of its array, children before their parent, or a next hop
/// past `max_next_hop`.
pub fn open<A: Address, const S: u32>(
    family: &FamilyFile<'_>,
    max_next_hop: NextHop,
) -> Result<Box<dyn Fib<A>>, FileError> {
    let params = family.params(PARAMS)?;
    Ok(match params[0] {
        16 => Box::new(Poptrie::<A, u16, S>::open_arrays(family, &params, max_next_hop)?),
        32 => Box::new(Poptrie::<A, u32, S>::open_arrays(family, &params, max_next_hop)?),
        width => return Err(family.bad_param(0, width, "leaves are 16 or 32 bits wide")),
    })
}
