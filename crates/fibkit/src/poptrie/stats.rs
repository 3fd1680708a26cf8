//! Statistics in the manner of the paper's Table 2: internal nodes, leaves,
//! memory, compilation time, and route aggregation's prefix counts.

use std::fmt::Write;

use crate::addr::Address;
use crate::engine::Stats;

use super::{Leaf, Node, Poptrie, K};

/// Whether `count_ones` compiles to the CPU's population count instruction
/// in this build.
pub const HARDWARE_POPCNT: bool = cfg!(any(
    all(any(target_arch = "x86", target_arch = "x86_64"), target_feature = "popcnt"),
    target_arch = "aarch64",
    target_arch = "powerpc64",
    all(target_arch = "riscv64", target_feature = "zbb"),
));

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

impl<A: Address, L: Leaf, const S: u32> Poptrie<A, L, S> {
    /// The engine's figures and its Table-2-style report.
    pub fn report(&self) -> Stats {
        let summary = &self.summary;
        let family = if A::BITS == 32 { "IPv4" } else { "IPv6" };
        let bytes_direct = self.direct.len() * std::mem::size_of::<u32>();
        let bytes_nodes = self.nodes.len() * std::mem::size_of::<Node>();
        let bytes_leaves = self.leaves.len() * std::mem::size_of::<L>();
        let bytes_total = self.footprint();
        let direct_nodes = self.direct.len() - summary.direct_leaves;
        let popcnt = if HARDWARE_POPCNT { "hardware" } else { "software" };
        let aggregation = if summary.aggregated { "on" } else { "off" };
        let mut stats = Stats::default();
        stats
            .text("engine", summary.name.as_str())
            .text("family", family)
            .count("k", u64::from(K))
            .count("direct_bits", u64::from(S))
            .count("leaf_bits", u64::from(L::BITS))
            .text("route_aggregation", aggregation)
            .count("prefixes", summary.prefixes as u64)
            .count("prefixes_aggregated", summary.prefixes_aggregated as u64)
            .count("boundaries", summary.boundaries as u64)
            .count("direct_entries", self.direct.len() as u64)
            .count("direct_leaves", summary.direct_leaves as u64)
            .count("direct_nodes", direct_nodes as u64)
            .count("internal_nodes", self.nodes.len() as u64)
            .count("leaves", self.leaves.len() as u64)
            .count("levels", u64::from(summary.levels))
            .count("bytes_direct", bytes_direct as u64)
            .count("bytes_nodes", bytes_nodes as u64)
            .count("bytes_leaves", bytes_leaves as u64)
            .count("bytes_total", bytes_total as u64)
            .real("build_ms", summary.build_seconds * 1e3)
            .text("popcnt", popcnt);

        let mut report = String::new();
        let _ = writeln!(
            report,
            "{}: Poptrie ({family}), k = {K}, s = {S}, leafvec, {}-bit leaves, route aggregation {aggregation}",
            summary.name,
            L::BITS,
        );
        let _ = writeln!(
            report,
            "  prefixes        {:>11} -> {} after route aggregation ({} boundaries)",
            grouped(summary.prefixes),
            grouped(summary.prefixes_aggregated),
            grouped(summary.boundaries),
        );
        if S > 0 {
            let _ = writeln!(
                report,
                "  direct          {:>11} entries x 4 B = {:>9.2} KiB ({} leaves, {} to inodes)",
                grouped(self.direct.len()),
                kib(bytes_direct),
                grouped(summary.direct_leaves),
                grouped(direct_nodes),
            );
        }
        let _ = writeln!(
            report,
            "  # of inodes     {:>11} x {} B = {:>9.2} KiB (up to {} levels)",
            grouped(self.nodes.len()),
            std::mem::size_of::<Node>(),
            kib(bytes_nodes),
            summary.levels,
        );
        let _ = writeln!(
            report,
            "  # of leaves     {:>11} x {} B  = {:>9.2} KiB",
            grouped(self.leaves.len()),
            std::mem::size_of::<L>(),
            kib(bytes_leaves),
        );
        let _ = writeln!(
            report,
            "  Mem.            {:>11} B     = {:>9.2} KiB = {:.2} MiB",
            grouped(bytes_total),
            kib(bytes_total),
            kib(bytes_total) / 1024.0,
        );
        let _ = writeln!(report, "  compilation     {:>11.2} ms", summary.build_seconds * 1e3);
        let _ = write!(report, "  popcnt          {:>11}", popcnt);
        stats.report = report;
        stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Figure;
    use crate::poptrie::PoptrieOptions;
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
        assert_eq!(
            count("bytes_total"),
            count("bytes_direct") + count("bytes_nodes") + count("bytes_leaves")
        );
        assert_eq!(count("bytes_total"), (4 << 16) + 2 * 24 + 2 * count("leaves"));
        assert!(stats.report.contains("3 -> 2 after route aggregation"), "{}", stats.report);
    }
}
