//! Chunk counts, footprint and the statistics report.

use std::mem::size_of;
use std::sync::atomic::Ordering;

use super::build::line_count;
use super::{LineCell, SailRuns, CHUNK, CHUNK_ENTRIES, INDEX, LEVEL16_ENTRIES, NAME, RUNS, SPLIT, VALUE};
use crate::fib::Stats;

impl SailRuns {
    /// Bytes of the levels, room to grow included.
    pub fn footprint(&self) -> usize {
        self.level_bytes().iter().sum()
    }

    /// Bytes of level 16, the lines and level 32 (room included).
    fn level_bytes(&self) -> [usize; 3] {
        [
            self.level16.len() * size_of::<u32>(),
            self.lines.len() * size_of::<LineCell>(),
            self.n32.len() * size_of::<u16>(),
        ]
    }

    /// The level-16 entries naming lines.
    fn chunk_entries(&self) -> impl Iterator<Item = u32> + '_ {
        self.level16.iter().map(|cell| cell.load(Ordering::Relaxed)).filter(|entry| entry & CHUNK != 0)
    }

    /// Level-24 chunks (level-16 entries naming lines), and of those the
    /// ones in a single line.
    pub fn chunks_24(&self) -> (usize, usize) {
        self.chunk_entries()
            .fold((0, 0), |(all, single), entry| (all + 1, single + usize::from(line_count(entry) == 1)))
    }

    /// Lines the level-16 entries name.
    pub fn lines_in_use(&self) -> usize {
        self.chunk_entries().map(line_count).sum()
    }

    /// Level-32 chunks the lines in use name.
    pub fn chunks_32(&self) -> usize {
        let mut named = vec![false; self.n32.len() / CHUNK_ENTRIES];
        for entry in self.chunk_entries() {
            let first = (entry & INDEX) as usize;
            for line in &self.lines[first..first + line_count(entry)] {
                for value in
                    line.values.iter().map(|value| value.load(Ordering::Relaxed)).filter(|value| value & SPLIT != 0)
                {
                    named[usize::from(value & VALUE)] = true;
                }
            }
        }
        named.iter().filter(|&&named| named).count()
    }

    /// The statistics report: chunks, lines and bytes per level.
    pub fn report(&self) -> Stats {
        let (chunks_24, single) = self.chunks_24();
        let (lines, chunks_32) = (self.lines_in_use(), self.chunks_32());
        let [level16_bytes, lines_bytes, level32_bytes] = self.level_bytes();
        let bytes = self.footprint();
        let prefixes = self.prefixes.load(Ordering::Relaxed);
        let mut stats = Stats::default();
        stats
            .text("engine", NAME)
            .count("prefixes", prefixes as u64)
            .count("chunks_24", chunks_24 as u64)
            .count("single_line_chunks", single as u64)
            .count("lines", lines as u64)
            .count("chunks_32", chunks_32 as u64)
            .count("lines_allocated", self.lines.len() as u64)
            .count("chunks_32_allocated", (self.n32.len() / CHUNK_ENTRIES) as u64)
            .count("bytes_level16", level16_bytes as u64)
            .count("bytes_lines", lines_bytes as u64)
            .count("bytes_level32", level32_bytes as u64)
            .count("bytes_total", bytes as u64);
        let kib = |bytes: usize| bytes as f64 / 1024.0;
        let room = |in_use: usize, allocated: usize| match allocated > in_use {
            true => format!(" (room for {} more)", allocated - in_use),
            false => String::new(),
        };
        stats.report = format!(
            "SAIL-R ({NAME}): {prefixes} prefixes\n\
             level 16: {LEVEL16_ENTRIES} entries, {:.1} KiB\n\
             level 24: {chunks_24} chunks ({single} in one line), {lines} lines of up to {RUNS} runs{}, {:.1} KiB\n\
             level 32: {chunks_32} chunks of {CHUNK_ENTRIES}{}, {:.1} KiB\n\
             total {:.2} MiB ({:.1} bytes/prefix)",
            kib(level16_bytes),
            room(lines, self.lines.len()),
            kib(lines_bytes),
            room(chunks_32, self.n32.len() / CHUNK_ENTRIES),
            kib(level32_bytes),
            bytes as f64 / (1024.0 * 1024.0),
            bytes as f64 / prefixes.max(1) as f64
        );
        stats
    }
}
