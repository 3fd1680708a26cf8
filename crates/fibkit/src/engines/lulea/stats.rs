//! Sizes and the statistics report with the paper's Table 1 columns.

use super::{maptable, BaseIndex, ChunkLevel, DenseChunk, Lulea, PointerWord, SparseChunk, VeryDenseChunk};
use crate::fib::Stats;

impl<P: PointerWord, B: BaseIndex> ChunkLevel<P, B> {
    /// Bytes of the level.
    pub fn footprint(&self) -> usize {
        use std::mem::size_of;
        self.sparse.len() * size_of::<SparseChunk<P>>()
            + self.dense.len() * size_of::<DenseChunk<B>>()
            + self.very_dense.len() * size_of::<VeryDenseChunk<B>>()
            + self.pointers.len() * size_of::<P>()
    }
}

impl<P: PointerWord, B: BaseIndex> Lulea<P, B> {
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
