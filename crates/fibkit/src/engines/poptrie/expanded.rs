//! Poptrie with two-stage direct pointing (`poptrie16x12`): the direct
//! array on the top S bits, and for each of its entries that points into
//! the trie a block of 2^X entries on the next X bits, pointing S + X bits
//! down. IPv6 only.
//!
//! Direct pointing (the paper's section 3.3) skips the trie's top S bits,
//! but IPv6 routes sit far below them: in 2026, 167,903 prefixes, most /32
//! to /48, under 60 of the 65,536 /16s. A key in 2001::/16 found a node at
//! depth 16 in the direct array and walked it and two more (22, 28) before
//! reaching the nodes where routes end. The block of its /16 holds, for each
//! of the 4,096 /28s below, what those two levels lead to: a next hop (no
//! route is longer inside the /28), or the node at depth 28, where the walk
//! goes on.
//!
//! ```text
//!  key: | S = 16 bits (a) | X = 12 bits (b) | rest, 6 bits a level ...
//!
//!  first[a] --leaf--> next hop
//!     |
//!     +--block B--> blocks[B << X | b] --leaf--> next hop
//!                       |
//!                       +--node n (depth S + X)--> the Poptrie walk from n
//! ```
//!
//! | word | bits | meaning |
//! |---|---|---|
//! | `first` and `blocks` entries (u32) | 31 | [`DIRECT_LEAF`]: the rest is a next hop |
//! | | 30..0 | next hop; or (`first`) a block number, (`blocks`) a node index |
//!
//! The nodes and leaves are a Poptrie with direct pointing on S bits, built
//! as `poptrieS` builds it; its own direct array is dropped, since `first`
//! replaces it (same leaves, block numbers instead of node indexes), and
//! the nodes above depth S + X under a block stay in the node array,
//! unreached (on the 2026 table the 60 nodes at depth 16 and their
//! children at depth 22). Blocks
//! cost 2^X × 4 bytes each (16 KiB), so an IPv4 table (a block for almost
//! every /16) would need hundreds of MiB: the engine serves IPv6, and a
//! table needing more than [`MAX_BLOCK_ENTRIES`] block entries is refused.
//! The `first` and block entries are atomic words, loaded with `Acquire`
//! (plain loads on x86-64): the updater (`live_expanded.rs`) rewrites the
//! subtrees below block entries, and blocks themselves, while readers
//! search, and publishes each with one `Release` store of its entry. Its
//! file format is in [`super::file`].

use crate::addr::Address;
use crate::error::{BuildError, Limit, LimitExceeded};
use crate::fib::{forward_fib, BuildOptions, Fib, Stats};
use crate::mem::{try_copy_grown, LookupArray};
use crate::rib::Rib;
use crate::simd::{self, GROUP};
use crate::NextHop;

use std::sync::atomic::{AtomicU32, Ordering};

use super::build::Prepared;
use super::lookup::take_leaf_flags;
use super::{Leaf, NodeCell, NodeLayout, Poptrie, PoptrieOptions, DIRECT_LEAF, K};

/// Most block entries a table may take (64 MiB of blocks).
pub const MAX_BLOCK_ENTRIES: usize = 1 << 24;

/// Poptrie with direct pointing on `S` bits and blocks on `X` more (a
/// multiple of 6, the trie's stride).
pub struct Expanded<A: Address, L: Leaf, const S: u32, const X: u32> {
    /// The nodes and leaves (its direct array empty).
    pub(super) trie: Poptrie<A, L, S>,
    /// 2^S entries: a next hop or a block number.
    pub(super) first: LookupArray<AtomicU32>,
    /// Blocks of 2^X entries: a next hop or a node index (for the
    /// updater's structure, free blocks past those in use too).
    pub(super) blocks: LookupArray<AtomicU32>,
    /// Registry name.
    pub(super) name: String,
}

impl<A: Address, L: Leaf, const S: u32, const X: u32> Expanded<A, L, S, X> {
    /// The registry name of these parameters: `poptrieSxX`.
    pub fn engine_name() -> String {
        format!("poptrie{S}x{X}")
    }

    /// Builds the structure from `prepared`.
    ///
    /// # Errors
    /// The Poptrie's limits ([`BuildError`]), and [`Limit::Chunks`] when the
    /// blocks would exceed [`MAX_BLOCK_ENTRIES`] entries;
    /// [`BuildError::OutOfMemory`] when the system refuses an array.
    fn assemble(prepared: Prepared<A>, name: String) -> Result<Self, BuildError> {
        Self::assemble_with_slack(prepared, name, false).map(|(expanded, _, _)| expanded)
    }

    /// Builds the structure from `prepared`; with `slack`, with free space
    /// for the updater: a quarter more nodes and leaves (at least 4,096 of
    /// each, [`Poptrie::assemble_with_slack`]) and a quarter more blocks
    /// (at least 4, within [`MAX_BLOCK_ENTRIES`]). Also returns the nodes
    /// and leaves in use and the blocks in use (the first ones).
    ///
    /// # Errors
    /// As [`Expanded::assemble`], and [`BuildError::OutOfMemory`] when the
    /// system refuses an array.
    pub(super) fn assemble_with_slack(
        prepared: Prepared<A>,
        name: String,
        slack: bool,
    ) -> Result<(Self, [usize; 2], usize), BuildError> {
        const { assert!(X.is_multiple_of(K) && X > 0 && S > 0 && S + X < 64, "X is whole levels below S") };
        let (mut trie, used) =
            Poptrie::<A, L, S>::assemble_with_slack(prepared, slack).map_err(|error| error.of(&name))?;
        let direct: Vec<u32> = trie.direct.iter().map(|entry| entry.load(Ordering::Relaxed)).collect();
        let pointing = direct.iter().filter(|&&entry| entry & DIRECT_LEAF == 0).count();
        if pointing << X > MAX_BLOCK_ENTRIES {
            let field = format!("the block entries ({} per direct entry that points into the trie)", 1u64 << X);
            let refused =
                LimitExceeded::new(name, Limit::Chunks, field, (pointing as u64) << X, MAX_BLOCK_ENTRIES as u64);
            return Err(refused.into());
        }
        let capacity = if slack { (pointing + pointing / 4 + 4).min(MAX_BLOCK_ENTRIES >> X) } else { pointing };
        // Block b for the b-th entry that points into the trie, in order.
        let roots: Vec<u32> = direct.iter().copied().filter(|&entry| entry & DIRECT_LEAF == 0).collect();
        let engine = &name;
        let refused = |array| move |error| BuildError::out_of_memory(engine, array, error);
        let blocks = LookupArray::try_from_fn(capacity << X, |index| {
            let bits = index as u32 & ((1 << X) - 1);
            AtomicU32::new(roots.get(index >> X).map_or(DIRECT_LEAF, |&root| trie.descend::<X>(root as usize, bits)))
        })
        .map_err(refused("block array"))?;
        let mut block = 0;
        let first = try_copy_grown(
            &direct,
            0,
            |&entry| {
                if entry & DIRECT_LEAF != 0 {
                    return AtomicU32::new(entry);
                }
                block += 1;
                AtomicU32::new(block - 1)
            },
            AtomicU32::default,
        )
        .map_err(refused("first array"))?;
        trie.direct = LookupArray::from(Vec::new());
        Ok((Expanded { trie, first, blocks, name }, used, pointing))
    }

    /// Longest-prefix match for `addr`.
    #[inline]
    pub fn lookup(&self, addr: A) -> NextHop {
        let entry = self.first_entry(addr);
        if entry & DIRECT_LEAF != 0 {
            return entry & !DIRECT_LEAF;
        }
        let entry = self.block_entry(Self::block_index(entry, addr));
        if entry & DIRECT_LEAF != 0 {
            return entry & !DIRECT_LEAF;
        }
        self.trie.walk(entry as usize, addr << (S + X))
    }

    /// `first[addr's top S bits]`.
    #[inline(always)]
    fn first_entry(&self, addr: A) -> u32 {
        let index = (addr >> (u32::from(A::BITS) - S)).to_u128() as usize;
        debug_assert!(index < self.first.len());
        // SAFETY: `first` has 2^S entries and `index < 2^S`.
        // `Acquire`: the block an updater stored before this entry is seen.
        unsafe { self.first.get_unchecked(index) }.load(Ordering::Acquire)
    }

    /// Where block `block`'s entry for `addr` is.
    #[inline(always)]
    fn block_index(block: u32, addr: A) -> usize {
        (block as usize) << X | ((addr << S) >> (u32::from(A::BITS) - X)).to_u128() as usize
    }

    #[inline(always)]
    fn block_entry(&self, index: usize) -> u32 {
        debug_assert!(index < self.blocks.len());
        // SAFETY: `index` is a block number (below the blocks built, each
        // of 2^X entries) times 2^X plus X bits.
        // `Acquire`: the subtree an updater stored before this entry is seen.
        unsafe { self.blocks.get_unchecked(index) }.load(Ordering::Acquire)
    }

    /// Looks up every key; `out[i]` gets the next hop of `keys[i]`.
    ///
    /// Keys go in groups of 32 through [`simd::pipeline`]'s two stages:
    /// the first reads each key's `first` entry and, where that names a
    /// block, its block entry, and writes the next hop of the keys they
    /// resolve and for the others the node index; the second, one group
    /// later, walks those from their nodes. (Prefetching the nodes in the
    /// first stage made both stages slower; see docs/decisions.md.)
    /// Nothing is allocated.
    ///
    /// # Panics
    /// If `out` is shorter than `keys`.
    pub fn lookup_batch(&self, keys: &[A], out: &mut [NextHop]) {
        assert!(out.len() >= keys.len(), "output shorter than keys");
        let out = &mut out[..keys.len()];
        simd::pipeline(
            keys,
            out,
            |keys, out| self.direct_group(keys, out),
            |key, out| *out = self.trie.walk(*out as usize, key << (S + X)),
        );
    }

    /// The first stage for up to 32 keys; returns the mask of the keys
    /// left to walk.
    #[inline(always)]
    fn direct_group(&self, keys: &[A], out: &mut [NextHop]) -> u32 {
        debug_assert!(keys.len() <= GROUP && out.len() == keys.len());
        for (&key, answer) in keys.iter().zip(out.iter_mut()) {
            let first = self.first_entry(key);
            *answer = if first & DIRECT_LEAF != 0 { first } else { self.block_entry(Self::block_index(first, key)) };
        }
        take_leaf_flags(out)
    }

    /// The `first` entries that hold a next hop (the rest name a block).
    pub(super) fn first_leaves(&self) -> usize {
        self.first.iter().filter(|entry| entry.load(Ordering::Relaxed) & DIRECT_LEAF != 0).count()
    }

    /// The entries of the blocks in use (those `first` names) that hold a
    /// next hop.
    fn block_leaves(&self) -> usize {
        let blocks =
            self.first.iter().map(|entry| entry.load(Ordering::Acquire)).filter(|entry| entry & DIRECT_LEAF == 0);
        blocks
            .map(|block| {
                let entries = &self.blocks[(block as usize) << X..(block as usize + 1) << X];
                entries.iter().filter(|entry| entry.load(Ordering::Relaxed) & DIRECT_LEAF != 0).count()
            })
            .sum()
    }

    /// Bytes of the lookup structure: `first`, blocks, nodes and leaves.
    pub fn footprint(&self) -> usize {
        (self.first.len() + self.blocks.len()) * std::mem::size_of::<u32>()
            + self.trie.nodes.len() * std::mem::size_of::<NodeCell>()
            + self.trie.leaves.len() * std::mem::size_of::<L::Cell>()
    }

    /// The statistics report.
    pub fn report(&self) -> Stats {
        let trie = self.trie.summary();
        let first_leaves = self.first_leaves();
        let block_count = self.first.len() - first_leaves;
        let block_leaves = self.block_leaves();
        let bytes = |count: usize, size: usize| (count * size) as u64;
        let (first, blocks) = (bytes(self.first.len(), 4), bytes(self.blocks.len(), 4));
        let nodes = bytes(self.trie.nodes.len(), std::mem::size_of::<NodeCell>());
        let leaves = bytes(self.trie.leaves.len(), std::mem::size_of::<L::Cell>());
        let mut stats = Stats::default();
        stats
            .text("engine", self.name.as_str())
            .count("prefixes", self.trie.routes.load(Ordering::Relaxed) as u64)
            .count("s", u64::from(S))
            .count("x", u64::from(X))
            .count("first_leaves", first_leaves as u64)
            .count("blocks", block_count as u64)
            .count("block_leaves", block_leaves as u64)
            .count("nodes", self.trie.nodes.len() as u64)
            .count("leaves", self.trie.leaves.len() as u64)
            .count("leaf_bits", u64::from(L::BITS))
            .count("bytes_total", self.footprint() as u64);
        let kib = |bytes: u64| bytes as f64 / 1024.0;
        stats.report = format!(
            "{}: Poptrie (IPv6) with two-stage direct pointing, s = {S} then {X} more bits, k = 6, {}-bit leaves\n\
             \x20 prefixes     {:>10} -> {} after route aggregation\n\
             \x20 first        {:>10} entries x 4 B  = {:>10.2} KiB ({first_leaves} leaves, {} to blocks)\n\
             \x20 blocks       {:>10} entries x 4 B  = {:>10.2} KiB ({block_leaves} leaves, the rest to inodes at depth {})\n\
             \x20 # of inodes  {:>10} x {} B        = {:>10.2} KiB\n\
             \x20 # of leaves  {:>10} x {} B         = {:>10.2} KiB\n\
             \x20 Mem.         {:>10} B = {:.2} MiB",
            self.name,
            L::BITS,
            self.trie.routes.load(Ordering::Relaxed),
            trie.prefixes_aggregated,
            self.first.len(),
            kib(first),
            block_count,
            self.blocks.len(),
            kib(blocks),
            S + X,
            self.trie.nodes.len(),
            std::mem::size_of::<NodeCell>(),
            kib(nodes),
            self.trie.leaves.len(),
            std::mem::size_of::<L::Cell>(),
            kib(leaves),
            self.footprint(),
            self.footprint() as f64 / (1024.0 * 1024.0),
        );
        stats
    }
}

impl<A: Address, L: Leaf, const S: u32, N: NodeLayout> Poptrie<A, L, S, N> {
    /// What the `X` key bits `bits` below the node at `index` lead to, at
    /// most `X / 6` levels down: the next hop of the leaf reached (with
    /// [`DIRECT_LEAF`]), or the node reached at the last level.
    fn descend<const X: u32>(&self, mut index: usize, bits: u32) -> u32 {
        for level in 1..=X / K {
            let node = self.node(index);
            let v = bits >> (X - level * K) & ((1 << K) - 1);
            if !node.is_internal(v) {
                return DIRECT_LEAF | self.leaf(node.leaf_index(v)).next_hop();
            }
            index = node.child_index(v);
        }
        index as u32
    }
}

forward_fib!([A: Address, L: Leaf, const S: u32, const X: u32] Expanded<A, L, S, X>, A, |expanded| &expanded.name, [lookup_batch], [save]);

/// Registry builder for `poptrieSxX` (route aggregation on; 16-bit leaves
/// while every next hop fits, 32-bit otherwise).
///
/// # Errors
/// The Poptrie's limits ([`BuildError`]), and [`Limit::Chunks`] when the
/// blocks would exceed [`MAX_BLOCK_ENTRIES`] entries.
pub fn build_expanded<A: Address, const S: u32, const X: u32>(
    rib: &Rib<A>,
    options: &BuildOptions,
) -> Result<Box<dyn Fib<A>>, BuildError> {
    let prepared = Prepared::new(rib, &PoptrieOptions { aggregate: true });
    let name = Expanded::<A, u16, S, X>::engine_name();
    Ok(if prepared.needs_wide_leaves(options) {
        Box::new(Expanded::<A, u32, S, X>::assemble(prepared, name)?)
    } else {
        Box::new(Expanded::<A, u16, S, X>::assemble(prepared, name)?)
    })
}
