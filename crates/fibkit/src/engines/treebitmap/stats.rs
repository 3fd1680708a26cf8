//! Footprint and the statistics report.

use super::{Layout, Node, TreeBitmap};
use crate::addr::Address;
use crate::fib::Stats;
use crate::simd::HARDWARE_POPCNT;
use crate::NextHop;

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

impl<A: Address, L: Layout> TreeBitmap<A, L> {
    /// Bytes of one node.
    pub const NODE_BYTES: usize = std::mem::size_of::<Node<L::Bitmap>>();

    /// Bytes of the nodes.
    pub fn bytes_nodes(&self) -> usize {
        self.nodes.len() * Self::NODE_BYTES
    }

    /// Bytes of the results.
    pub fn bytes_results(&self) -> usize {
        self.results.len() * std::mem::size_of::<NextHop>()
    }

    /// Bytes of the lookup structure: nodes and results.
    pub fn footprint(&self) -> usize {
        self.bytes_nodes() + self.bytes_results()
    }

    /// The statistics report: nodes, results, levels and bytes.
    pub fn report(&self) -> Stats {
        let family = if A::BITS == 32 { "IPv4" } else { "IPv6" };
        let popcnt = if HARDWARE_POPCNT { "hardware" } else { "software" };
        let (nodes, results) = (self.nodes.len(), self.results.len());
        let bytes = self.footprint();
        let mut stats = Stats::default();
        stats
            .text("engine", L::NAME)
            .text("family", family)
            .count("stride", u64::from(L::STRIDE))
            .count("prefixes", self.prefixes as u64)
            .count("nodes", nodes as u64)
            .count("results", results as u64)
            .count("levels", self.levels() as u64)
            .count("node_bytes", Self::NODE_BYTES as u64)
            .count("bytes_nodes", self.bytes_nodes() as u64)
            .count("bytes_results", self.bytes_results() as u64)
            .count("bytes_total", bytes as u64)
            .text("popcnt", popcnt);
        let per_level: Vec<String> = self.nodes_per_level.iter().map(usize::to_string).collect();
        stats.report = format!(
            "Tree BitMap ({}, {}-ary, stride {}), {family}: {} prefixes, {} levels\n\
             Nodes: {nodes} x {} bytes = {} bytes ({:.2} MiB); per level: {}\n\
             Results: {results} x 4 bytes = {} bytes ({:.2} MiB; entry 0: no route)\n\
             Total: {bytes} bytes ({:.2} MiB, {:.1} bytes/prefix); popcnt: {popcnt}",
            L::NAME,
            1u32 << L::STRIDE,
            L::STRIDE,
            self.prefixes,
            self.levels(),
            Self::NODE_BYTES,
            self.bytes_nodes(),
            mib(self.bytes_nodes()),
            per_level.join(" "),
            self.bytes_results(),
            mib(self.bytes_results()),
            mib(bytes),
            bytes as f64 / self.prefixes.max(1) as f64,
        );
        stats
    }
}
