//! Chunk counts, footprint and the statistics report.

use std::sync::atomic::Ordering;

use super::{Sail, Word, CHUNK_ENTRIES, LEVEL16_ENTRIES};
use crate::fib::Stats;

impl<W: Word> Sail<W> {
    /// Chunks of level 24 in use (level-16 entries holding a chunk ID).
    pub fn chunks_24(&self) -> usize {
        self.level24_chunks().count()
    }

    /// Chunks of level 32 in use (entries of the level-24 chunks in use
    /// holding a chunk ID).
    pub fn chunks_32(&self) -> usize {
        self.level24_chunks()
            .map(|id| {
                let start = id as usize * CHUNK_ENTRIES;
                let chunk = &self.bcn24[start..start + CHUNK_ENTRIES];
                chunk.iter().filter(|cell| W::load(cell, Ordering::Relaxed) & W::FLAG != 0).count()
            })
            .sum()
    }

    /// The IDs of the level-24 chunks that level-16 entries name.
    fn level24_chunks(&self) -> impl Iterator<Item = u32> + '_ {
        let entries = self.bcn16.iter().map(|cell| W::load(cell, Ordering::Relaxed));
        entries.filter(|entry| entry & W::FLAG != 0).map(|entry| entry & W::VALUE)
    }

    /// Bytes of the three levels.
    pub fn footprint(&self) -> usize {
        (self.bcn16.len() + self.bcn24.len() + self.n32.len()) * std::mem::size_of::<W>()
    }

    /// The statistics report: levels, chunks and bytes.
    pub fn report(&self) -> Stats {
        let word = std::mem::size_of::<W>();
        let (level16, level24, level32) = (self.bcn16.len() * word, self.bcn24.len() * word, self.n32.len() * word);
        let bytes = self.footprint();
        let prefixes = self.prefixes.load(Ordering::Relaxed);
        let (chunks_24, chunks_32) = (self.chunks_24(), self.chunks_32());
        let mut stats = Stats::default();
        stats
            .text("engine", W::NAME)
            .count("prefixes", prefixes as u64)
            .count("entry_bits", u64::from(W::BITS))
            .count("max_next_hop", u64::from(W::VALUE))
            .count("max_chunks", u64::from(W::FLAG))
            .count("chunks_24", chunks_24 as u64)
            .count("chunks_32", chunks_32 as u64)
            .count("chunks_24_allocated", (self.bcn24.len() / CHUNK_ENTRIES) as u64)
            .count("chunks_32_allocated", (self.n32.len() / CHUNK_ENTRIES) as u64)
            .count("bytes_level16", level16 as u64)
            .count("bytes_level24", level24 as u64)
            .count("bytes_level32", level32 as u64)
            .count("bytes_total", bytes as u64);
        let kib = |bytes: usize| bytes as f64 / 1024.0;
        stats.report = format!(
            "SAIL_L ({}): {} prefixes, {}-bit entries ({}-bit next hops and chunk IDs)\n\
             level 16: {LEVEL16_ENTRIES} entries, {:.1} KiB\n\
             level 24: {} chunks of {CHUNK_ENTRIES}, {:.1} KiB\n\
             level 32: {} chunks of {CHUNK_ENTRIES}, {:.1} KiB\n\
             total {:.2} MiB ({:.1} bytes/prefix)",
            W::NAME,
            prefixes,
            W::BITS,
            W::BITS - 1,
            kib(level16),
            chunks_24,
            kib(level24),
            chunks_32,
            kib(level32),
            bytes as f64 / (1024.0 * 1024.0),
            bytes as f64 / prefixes.max(1) as f64
        );
        stats
    }
}
