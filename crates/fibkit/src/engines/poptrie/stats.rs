//! Statistics in the manner of the paper's Table 2: internal nodes, leaves,
//! memory, compilation time, and route aggregation's prefix counts.

use std::fmt::Write;

use std::sync::atomic::Ordering;

use crate::addr::Address;
use crate::fib::Stats;
use crate::simd::HARDWARE_POPCNT;

use super::build::Boundaries;
use super::{ones_through, Leaf, NodeLayout, Poptrie, DIRECT_LEAF, DIRECT_MAX, K};

/// What a walk of the live structure finds below the `direct` entries (or
/// the root): the nodes and leaves readers can reach (free space and
/// replaced subtrees not counted) and the deepest level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Census {
    pub(crate) nodes: usize,
    pub(crate) leaves: usize,
    pub(crate) levels: u32,
}

/// `value` (below 2^32) as an address.
pub(super) fn small<A: Address>(value: u32) -> A {
    let mut out = A::ZERO;
    let mut bits = value;
    while bits != 0 {
        out = out | (A::ONE << bits.trailing_zeros());
        bits &= bits - 1;
    }
    out
}

fn kib(bytes: usize) -> f64 {
    bytes as f64 / 1024.0
}

/// `1234567` as `1,234,567`.
fn grouped(value: usize) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (position, digit) in digits.chars().enumerate() {
        if position > 0 && (digits.len() - position).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

impl<A: Address, L: Leaf, const S: u32, N: NodeLayout> Poptrie<A, L, S, N> {
    /// Appends the maximal runs of the subtree rooted at `nodes[index]`,
    /// whose slots start at `first`, `offset` key bits down, at depth
    /// `level`, to `points`, and counts its nodes and leaves: one point per
    /// leaf run (the set bits of `leafvec`), the child's runs for an
    /// internal slot, and the run that resumes after an internal slot (a
    /// leaf slot following it that starts no run of its own).
    pub(crate) fn append_runs(
        &self,
        index: usize,
        first: A,
        offset: u32,
        level: u32,
        points: &mut Boundaries<A>,
        census: &mut Census,
    ) {
        let node = self.nodes[index].get();
        census.nodes += 1;
        census.leaves += node.leaves();
        census.levels = census.levels.max(level);
        let remaining = u32::from(A::BITS) - offset;
        // Past the key's end slots come in groups of 2^pad sharing an address.
        let (pad, span) = if remaining >= K { (0, remaining - K) } else { (K - remaining, 0) };
        let slot_first = |v: u32| first | (small::<A>(v >> pad) << span);
        let mut leaf = node.base0 as usize;
        let mut run_hop = None;
        let marked_all = node.vector | node.leafvec;
        let mut marked = marked_all;
        while marked != 0 {
            let v = marked.trailing_zeros();
            marked &= marked - 1;
            if node.vector & (1u64 << v) != 0 {
                let child = node.base1 as usize + ones_through(node.vector, v) as usize - 1;
                self.append_runs(child, slot_first(v), offset + K, level + 1, points, census);
                let after = v + 1;
                if after < 64 && marked_all & (1u64 << after) == 0 {
                    let next_hop = run_hop.expect("a leaf slot after a hole continues an earlier run");
                    points.push_run(slot_first(after), next_hop);
                }
            } else {
                let next_hop = L::load(&self.leaves[leaf]).next_hop();
                leaf += 1;
                points.push_run(slot_first(v), next_hop);
                run_hop = Some(next_hop);
            }
        }
    }

    /// The structure as readers see it now: its maximal runs over the
    /// whole address space, what [`Census`] counts, and the `direct`
    /// entries that are leaves.
    pub(crate) fn live_census(&self) -> (Boundaries<A>, Census, usize) {
        let mut points = Boundaries::default();
        let mut census = Census::default();
        let mut direct_leaves = 0;
        if S == 0 {
            self.append_runs(0, A::ZERO, 0, 1, &mut points, &mut census);
        }
        let shift = u32::from(A::BITS) - S;
        for (slot, entry) in self.direct.iter().enumerate() {
            let entry = entry.load(Ordering::Acquire);
            let first = small::<A>(slot as u32) << shift;
            if entry & DIRECT_LEAF != 0 {
                points.push_run(first, entry & DIRECT_MAX);
                direct_leaves += 1;
            } else {
                self.append_runs(entry as usize, first, S, 1, &mut points, &mut census);
            }
        }
        (points, census, direct_leaves)
    }

    /// The engine's figures and its Table-2-style report.
    ///
    /// Counts come from a walk of the live structure (after incremental
    /// updates they describe the updated trie): `direct_leaves`,
    /// `internal_nodes` and `leaves` (in use; `*_allocated` and the byte
    /// figures include the updater's free space), `levels`, `boundaries`
    /// (the runs, with route aggregation) and `prefixes` (kept by the
    /// updater). `prefixes_aggregated` and `build_ms` are the build's: the
    /// report says how many batches were applied since.
    pub fn report(&self) -> Stats {
        let summary = &self.summary;
        let (points, census, direct_leaves) = self.live_census();
        let boundaries = if summary.aggregated { points.len() } else { summary.boundaries };
        let prefixes = self.routes.load(Ordering::Relaxed);
        let batches = self.batches.load(Ordering::Relaxed);
        let family = if A::BITS == 32 { "IPv4" } else { "IPv6" };
        let bytes_direct = self.direct.len() * std::mem::size_of::<u32>();
        let bytes_nodes = self.nodes.len() * std::mem::size_of::<N>();
        let bytes_leaves = self.leaves.len() * std::mem::size_of::<L>();
        let bytes_total = self.footprint();
        let direct_nodes = self.direct.len() - direct_leaves;
        let popcnt = if HARDWARE_POPCNT { "hardware" } else { "software" };
        let aggregation = if summary.aggregated { "on" } else { "off" };
        let leaf_scheme = if N::LEAFVEC { "leafvec" } else { "basic (a leaf per leaf slot)" };
        let mut stats = Stats::default();
        stats
            .text("engine", summary.name.as_str())
            .text("family", family)
            .count("k", u64::from(K))
            .count("direct_bits", u64::from(S))
            .count("leaf_bits", u64::from(L::BITS))
            .text("route_aggregation", aggregation)
            .text("leafvec", if N::LEAFVEC { "on" } else { "off" })
            .count("prefixes", prefixes as u64)
            .count("prefixes_aggregated", summary.prefixes_aggregated as u64)
            .count("boundaries", boundaries as u64)
            .count("direct_entries", self.direct.len() as u64)
            .count("direct_leaves", direct_leaves as u64)
            .count("direct_nodes", direct_nodes as u64)
            .count("internal_nodes", census.nodes as u64)
            .count("internal_nodes_allocated", self.nodes.len() as u64)
            .count("leaves", census.leaves as u64)
            .count("leaves_allocated", self.leaves.len() as u64)
            .count("levels", u64::from(census.levels))
            .count("update_batches", batches)
            .count("bytes_direct", bytes_direct as u64)
            .count("bytes_nodes", bytes_nodes as u64)
            .count("bytes_leaves", bytes_leaves as u64)
            .count("bytes_total", bytes_total as u64)
            .text("popcnt", popcnt);
        if let Some(seconds) = summary.build_seconds {
            stats.real("build_ms", seconds * 1e3);
        }

        let mut report = String::new();
        let _ = writeln!(
            report,
            "{}: Poptrie ({family}), k = {K}, s = {S}, {leaf_scheme}, {}-bit leaves, route aggregation {aggregation}",
            summary.name,
            L::BITS,
        );
        let _ = writeln!(
            report,
            "  prefixes        {:>11} -> {} after route aggregation ({} boundaries)",
            grouped(prefixes),
            grouped(summary.prefixes_aggregated),
            grouped(boundaries),
        );
        if S > 0 {
            let _ = writeln!(
                report,
                "  direct          {:>11} entries x 4 B = {:>9.2} KiB ({} leaves, {} to inodes)",
                grouped(self.direct.len()),
                kib(bytes_direct),
                grouped(direct_leaves),
                grouped(direct_nodes),
            );
        }
        let free = |allocated: usize, used: usize| {
            if allocated > used {
                format!(" ({} in use)", grouped(used))
            } else {
                String::new()
            }
        };
        let _ = writeln!(
            report,
            "  # of inodes     {:>11} x {} B = {:>9.2} KiB (up to {} levels){}",
            grouped(self.nodes.len()),
            std::mem::size_of::<N>(),
            kib(bytes_nodes),
            census.levels,
            free(self.nodes.len(), census.nodes),
        );
        let _ = writeln!(
            report,
            "  # of leaves     {:>11} x {} B  = {:>9.2} KiB{}",
            grouped(self.leaves.len()),
            std::mem::size_of::<L>(),
            kib(bytes_leaves),
            free(self.leaves.len(), census.leaves),
        );
        let _ = writeln!(
            report,
            "  Mem.            {:>11} B     = {:>9.2} KiB = {:.2} MiB",
            grouped(bytes_total),
            kib(bytes_total),
            kib(bytes_total) / 1024.0,
        );
        match summary.build_seconds {
            Some(seconds) => writeln!(report, "  compilation     {:>11.2} ms", seconds * 1e3),
            None => writeln!(report, "  compilation     {:>11}", "(opened from a compiled FIB file)"),
        }
        .ok();
        let _ = write!(report, "  popcnt          {:>11}", popcnt);
        if batches > 0 {
            let _ = write!(
                report,
                "\n  updated in place by {} batches since the build (route aggregation's count and compilation time are the build's)",
                grouped(batches as usize),
            );
        }
        stats.report = report;
        stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::poptrie::PoptrieOptions;
    use crate::fib::Figure;
    use crate::rib::Rib4;

    #[test]
    fn groups_digits() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(1_234_567), "1,234,567");
    }

    #[test]
    fn figures_add_up() {
        let mut rib = Rib4::new();
        rib.insert("10.0.0.0/9".parse().unwrap(), 1);
        rib.insert("10.128.0.0/9".parse().unwrap(), 1);
        rib.insert("10.1.2.0/24".parse().unwrap(), 2);
        let trie = Poptrie::<u32, u16, 16>::build(&rib, &PoptrieOptions::default()).unwrap();
        let stats = trie.report();
        let count = |key: &str| match stats.get(key) {
            Some(Figure::Count(value)) => *value,
            other => panic!("{key}: {other:?}"),
        };
        assert_eq!(count("prefixes"), 3);
        assert_eq!(count("prefixes_aggregated"), 2, "the /9s merge into 10.0.0.0/8");
        assert_eq!(count("direct_entries"), 1 << 16);
        assert_eq!(count("direct_nodes"), 1, "only 10.1.0.0/16 is not uniform");
        assert_eq!(count("internal_nodes"), 2, "the /16's node and its child at bits 22..27");
        assert_eq!(count("leaf_bits"), 16);
        assert_eq!(count("bytes_total"), count("bytes_direct") + count("bytes_nodes") + count("bytes_leaves"));
        assert_eq!(count("bytes_total"), (4 << 16) + 2 * 24 + 2 * count("leaves"));
        assert!(stats.report.contains("3 -> 2 after route aggregation"), "{}", stats.report);
    }
}
