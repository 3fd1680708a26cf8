//! Footprint and the statistics report.

use super::{Alias, LcTrie, Node};
use crate::fib::Stats;

impl LcTrie {
    /// Bytes of the nodes and aliases.
    pub fn footprint(&self) -> usize {
        self.nodes.len() * std::mem::size_of::<Node>() + self.aliases.len() * std::mem::size_of::<Alias>()
    }

    /// Leaves of the trie.
    pub fn leaves(&self) -> usize {
        self.nodes.iter().filter(|node| node.is_leaf() && !node.is_empty()).count()
    }

    /// The statistics report, in the manner of `/proc/net/fib_triestat`.
    pub fn report(&self) -> Stats {
        let leaves = self.leaves();
        let null_pointers = self.nodes.iter().filter(|node| node.is_empty()).count();
        let internal = self.nodes.len() - leaves - null_pointers;
        // Every node but the root fills a child slot.
        let pointers = self.nodes.len().saturating_sub(1);
        let average_depth = self.shape.depth_sum as f64 / leaves.max(1) as f64;
        let bytes = self.footprint();
        let mut stats = Stats::default();
        stats
            .text("engine", "lctrie")
            .count("prefixes", self.shape.prefixes as u64)
            .count("leaves", leaves as u64)
            .count("internal_nodes", internal as u64)
            .count("pointers", pointers as u64)
            .count("null_pointers", null_pointers as u64)
            .real("average_depth", average_depth)
            .count("max_depth", u64::from(self.shape.max_depth))
            .count("root_bits", u64::from(self.nodes.first().map_or(0, |root| root.bits)))
            .count("bytes_total", bytes as u64);
        let mut report = format!(
            "LC-trie (Nilsson-Karlsson, fib_trie shape)\n\
             \tAver depth:     {average_depth:.2}\n\
             \tMax depth:      {}\n\
             \tLeaves:         {leaves}\n\
             \tPrefixes:       {}\n\
             \tInternal nodes: {internal}\n\t  ",
            self.shape.max_depth, self.shape.prefixes
        );
        let by_bits: Vec<String> = self
            .shape
            .internal_by_bits
            .iter()
            .enumerate()
            .filter(|(_, &count)| count > 0)
            .map(|(bits, count)| format!("{bits}: {count}"))
            .collect();
        report.push_str(&by_bits.join("  "));
        report.push_str(&format!(
            "\n\tPointers: {pointers}\nNull ptrs: {null_pointers}\nTotal size: {} kB ({:.2} bytes/prefix)",
            bytes / 1024,
            bytes as f64 / self.shape.prefixes.max(1) as f64
        ));
        stats.report = report;
        stats
    }
}
