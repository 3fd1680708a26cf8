//! Chunk counts, footprint and the statistics report.

use std::mem::size_of;

use super::{Line, SailRuns, CHUNK, CHUNK_ENTRIES, LEVEL16_ENTRIES, NAME, RUNS, SHIFT_AT};
use crate::fib::Stats;

impl SailRuns {
    /// Bytes of the levels.
    pub fn footprint(&self) -> usize {
        self.level_bytes().iter().sum()
    }

    /// Bytes of level 16, the lines and level 32.
    fn level_bytes(&self) -> [usize; 3] {
        [self.level16.len() * size_of::<u32>(), self.lines.len() * size_of::<Line>(), self.n32.len() * size_of::<u16>()]
    }

    /// Level-24 chunks (level-16 entries naming lines), and of those the
    /// ones in a single line.
    pub fn chunks_24(&self) -> (usize, usize) {
        let chunks = self.level16.iter().filter(|&&entry| entry & CHUNK != 0);
        chunks.fold((0, 0), |(all, single), &entry| (all + 1, single + usize::from(entry >> SHIFT_AT & 0xf == 8)))
    }

    /// The statistics report: chunks, lines and bytes per level.
    pub fn report(&self) -> Stats {
        let (chunks_24, single) = self.chunks_24();
        let [level16, lines, level32] = self.level_bytes();
        let chunks_32 = self.n32.len() / CHUNK_ENTRIES;
        let bytes = self.footprint();
        let mut stats = Stats::default();
        stats
            .text("engine", NAME)
            .count("prefixes", self.prefixes as u64)
            .count("chunks_24", chunks_24 as u64)
            .count("single_line_chunks", single as u64)
            .count("lines", self.lines.len() as u64)
            .count("chunks_32", chunks_32 as u64)
            .count("bytes_level16", level16 as u64)
            .count("bytes_lines", lines as u64)
            .count("bytes_level32", level32 as u64)
            .count("bytes_total", bytes as u64);
        let kib = |bytes: usize| bytes as f64 / 1024.0;
        stats.report = format!(
            "SAIL-R ({NAME}): {} prefixes\n\
             level 16: {LEVEL16_ENTRIES} entries, {:.1} KiB\n\
             level 24: {} chunks ({} in one line), {} lines of up to {RUNS} runs, {:.1} KiB\n\
             level 32: {} chunks of {CHUNK_ENTRIES}, {:.1} KiB\n\
             total {:.2} MiB ({:.1} bytes/prefix)",
            self.prefixes,
            kib(level16),
            chunks_24,
            single,
            self.lines.len(),
            kib(lines),
            chunks_32,
            kib(level32),
            bytes as f64 / (1024.0 * 1024.0),
            bytes as f64 / self.prefixes.max(1) as f64
        );
        stats
    }
}
