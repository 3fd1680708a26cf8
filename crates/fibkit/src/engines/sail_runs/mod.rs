//! SAIL-R (`sail-runs`): SAIL_L's three levels at /16, /24 and /32 with the
//! level-24 chunks packed into one cache line each, so that what a random
//! key reads stays in the CPU's caches. fibkit's own design; SAIL is in
//! [`crate::engines::sail`].
//!
//! On the 2014 RouteViews table (239 next hops) SAIL_L's level 24 is 9.9 MiB
//! of 256-entry chunks, and the 31% of random keys that reach it miss the
//! L2 cache for it (its batch path waits there). Two changes shrink it:
//!
//! 1. A /16 gets a chunk only where its answers differ (a route longer
//!    than /16 with the covering route's next hop splits nothing), and a
//!    /24 a level-32 chunk likewise: the 2014 table's 20,323 and 1,982
//!    SAIL chunks become 13,820 and 722, and 21% of random keys go below
//!    level 16.
//! 2. A chunk is stored as its runs: the /24s of a /16 fall into runs of
//!    equal answers (a level-32 chunk ID is an answer of its own), and a
//!    64-byte [`Line`] holds up to [`RUNS`] runs, each run's first /24 and
//!    answer. A chunk of more runs is split into 2, 4, 8 or 16 lines of
//!    equal spans of /24s, the fewest whose lines each hold their runs (a
//!    line of 16 /24s always does). The 2014 table's chunks take 26,846
//!    lines (1.6 MiB), 10,388 of them a line each.
//!
//! Measured and not kept: chunks of up to 11 runs in half a line (32
//! bytes: 10 starts, 11 values; 7,547 of the 2014 table's chunks), which
//! takes its lines from 1,678 to 1,442 KiB (23,073 lines), so that level
//! 16 and the lines fit a 2 MiB L2 with room to spare. On a machine with
//! 2 MiB of L2 a core, alternated runs of the same build with and without
//! halves showed no gain, scalar or batched, to pay for a second line
//! format (figures in docs/decisions.md).
//!
//! Nor a first level at /18, where 12.3% of random keys go below it (not
//! 21%): a prototype with 2^18 `u16` entries (a next hop, or a unit's
//! index above the largest next hop; 512 KiB) and 32-byte units of up to
//! 11 runs of /24s (a chunk of more runs a directory unit naming up to 11
//! units of its spans), 45,767 units and 1.90 MiB in all without level
//! 32 on the 2014 table. On a machine with 1 MiB of L2 a core, in
//! alternated rounds, its batched RND fell well below `sail-runs`' while
//! scalar RND gained a little and SEQ stayed alike; 1 MiB of `u32` entries
//! instead (no compare to find a unit) did no better (figures in
//! docs/decisions.md). Every key's first load then competes with the
//! units for the L2; level 16's 256 KiB stays there.
//!
//! ```text
//!  addr: | 16 bits (a) | 8 bits (b) | 8 bits (c) |
//!
//!  level16[a] --next hop--> answer
//!     |
//!     +--line L, shift s--> lines[L + (b >> s)]: i = the count of its starts <= b
//!                             values[i] --next hop--> answer
//!                                |
//!                                +--chunk C--> n32[C * 256 + c] = answer
//! ```
//!
//! A lookup is at most three dependent loads, as in SAIL; the count in a
//! line is one 32-byte compare (AVX2) and a population count: no search
//! and no branch but level 32's.
//!
//! # Level-16 entry (`u32`)
//!
//! | bits | field |
//! |---|---|
//! | 31 | chunk flag: the /16's answers differ |
//! | 30..27 | with the flag: `shift`, 8 to 4: the chunk is 2^(8 - shift) lines of 2^shift /24s |
//! | 26..0 | next hop (flag clear), or the index of the chunk's first line |
//!
//! # Line (64 bytes, one cache line)
//!
//! | bytes | field |
//! |---|---|
//! | 0..20 | `starts`: the first /24 (bits 15..8 of an address) of runs 1 to 20, rising; 255 past the last run |
//! | 20..62 | `values`: the answer (a value) of runs 0 to 20; past the last run, the last run's |
//! | 62..64 | zero |
//!
//! Run 0 starts at the line's first /24. The run holding /24 `b` is the
//! count of starts not above `b`: a start of 255 past the last run counts
//! only for `b = 255`, whose answer the padding values repeat.
//!
//! # Value (`u16`, a line's `values`)
//!
//! | bits | field |
//! |---|---|
//! | 15 | level-32 flag: the /24's answers differ |
//! | 14..0 | next hop (flag clear), or the level-32 chunk's ID |
//!
//! `n32` entries are next hops. So next hops go up to 2^15 - 1 and level-32
//! chunks up to 2^15, as in `sail`, and a table beyond either is a
//! [`crate::error::LimitExceeded`]. Level 24 has no limit of its own (where
//! `sail` takes 2^15 level-24 chunks): 2^16 chunks of at most 16 lines are
//! 2^20 lines, and with an updater's room (twice that) they stay within
//! the 27-bit index.
//!
//! # Updates
//!
//! In place, copy on write a /16 at a time ([`SailRunsUpdater`]): a /16 a
//! batch changes gets fresh lines (and fresh level-32 chunks for the /24s
//! it splits anew), written where no reader looks, then its level-16 entry
//! is stored with `Release`; lookups load it with `Acquire`. The arrays are
//! made of atomic cells ([`LineCell`]) so that the updater writes while
//! lookups read; a reader that loaded the old entry reads lines and chunks
//! that stay as they were until no reader holds that generation.
//!
//! # Files
//!
//! A compiled FIB file holds the three arrays with every chunk in use and
//! nothing else ([`open`] maps them in place after checking every entry a
//! lookup reads).

mod build;
mod file;
mod live;
mod lookup;
mod stats;

pub use file::open;
pub use live::{updater, SailRunsUpdater};

use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU8, AtomicUsize, Ordering};

use crate::error::BuildError;
use crate::fib::{forward_fib, BuildOptions, Fib};
use crate::mem::LookupArray;
use crate::rib::Rib4;

/// The registry name.
pub const NAME: &str = "sail-runs";

/// Runs a line holds.
pub const RUNS: usize = 21;

/// /24s of a /16, and entries of a level-32 chunk.
pub const CHUNK_ENTRIES: usize = 256;

/// Entries of level 16.
pub const LEVEL16_ENTRIES: usize = 1 << 16;

/// A level-16 entry's chunk flag.
const CHUNK: u32 = 1 << 31;
/// The lowest bit of a level-16 entry's `shift` field.
const SHIFT_AT: u32 = 27;
/// A level-16 entry's next hop or first line index.
const INDEX: u32 = (1 << SHIFT_AT) - 1;
/// The smallest `shift`: a line of 16 answers, which always fits.
const MIN_SHIFT: u32 = 4;
/// The most lines an array holds: every /16 a chunk of 16 lines, and as
/// much room again for an updater.
const MAX_LINES: usize = 2 * LEVEL16_ENTRIES * (CHUNK_ENTRIES >> MIN_SHIFT);

const _: () = assert!(MAX_LINES <= INDEX as usize + 1, "line indexes fit a level-16 entry");

/// A value's level-32 flag.
const SPLIT: u16 = 1 << 15;
/// The largest next hop or level-32 chunk ID of a value.
const VALUE: u16 = SPLIT - 1;

/// A level-24 chunk of at most [`RUNS`] runs (layout in the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct Line {
    /// First /24 of runs 1 to 20, rising; 255 past the last run.
    starts: [u8; RUNS - 1],
    /// Answers of runs 0 to 20; past the last run, the last run's.
    values: [u16; RUNS],
    /// Zero.
    spare: u16,
}

const _: () = assert!(size_of::<Line>() == 64 && align_of::<Line>() == 64);
const _: () = assert!(std::mem::offset_of!(Line, values) == RUNS - 1);

/// A [`Line`] in the structure: the same bytes in atomic cells, so that the
/// updater can write a line no reader can reach while lookups read others.
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub struct LineCell {
    starts: [AtomicU8; RUNS - 1],
    values: [AtomicU16; RUNS],
    spare: AtomicU16,
}

const _: () = assert!(size_of::<LineCell>() == size_of::<Line>() && align_of::<LineCell>() == align_of::<Line>());
const _: () = assert!(std::mem::offset_of!(LineCell, values) == std::mem::offset_of!(Line, values));

impl LineCell {
    /// A cell holding `line`.
    fn new(line: &Line) -> Self {
        let cell = LineCell::default();
        cell.set(line);
        cell
    }

    /// The line (`Relaxed` loads, for the updater and saving).
    fn get(&self) -> Line {
        Line {
            starts: self.starts.each_ref().map(|start| start.load(Ordering::Relaxed)),
            values: self.values.each_ref().map(|value| value.load(Ordering::Relaxed)),
            spare: self.spare.load(Ordering::Relaxed),
        }
    }

    /// Writes `line` (`Relaxed` stores: only into a line no reader can
    /// reach, published later by a `Release` store of a level-16 entry).
    fn set(&self, line: &Line) {
        for (cell, &start) in self.starts.iter().zip(&line.starts) {
            cell.store(start, Ordering::Relaxed);
        }
        for (cell, &value) in self.values.iter().zip(&line.values) {
            cell.store(value, Ordering::Relaxed);
        }
        self.spare.store(line.spare, Ordering::Relaxed);
    }

    /// The lines of `cells`, which the borrow holds exclusively (checking
    /// a mapped file's lines before anyone can search them): a loop over
    /// them vectorises, one of atomic loads does not.
    fn plain(cells: &mut [LineCell]) -> &[Line] {
        // SAFETY: `LineCell` has `Line`'s layout (asserted above: the same
        // size, alignment and field offsets, each atomic the size of its
        // integer), any bytes are a valid `Line`, and `&mut` excludes every
        // atomic access for the borrow's lifetime.
        unsafe { std::slice::from_raw_parts(cells.as_ptr().cast::<Line>(), cells.len()) }
    }
}

/// A SAIL-R lookup structure: what lookups read.
pub struct SailRuns {
    /// One entry per /16 (loaded `Acquire`: the lines it names were written
    /// before it).
    level16: LookupArray<AtomicU32>,
    /// The level-24 chunks: 1, 2, 4, 8 or 16 lines each, and (in a live
    /// structure) room for more.
    lines: LookupArray<LineCell>,
    /// The level-32 chunks, [`CHUNK_ENTRIES`] next hops each (and room).
    n32: LookupArray<AtomicU16>,
    /// Routes of the RIB it holds.
    prefixes: AtomicUsize,
}

impl std::fmt::Debug for SailRuns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SailRuns")
            .field("prefixes", &self.prefixes)
            .field("lines", &self.lines_in_use())
            .field("chunks_32", &self.chunks_32())
            .finish()
    }
}

forward_fib!([] SailRuns, u32, |_this| NAME, [lookup_batch], [save]);

/// Registry builder of `sail-runs`.
///
/// # Errors
/// [`BuildError::Limit`] for a next hop above 2^15 - 1, or more level-32
/// chunks than 2^15.
pub fn build(rib: &Rib4, _options: &BuildOptions) -> Result<Box<dyn Fib<u32>>, BuildError> {
    Ok(Box::new(SailRuns::build(rib)?))
}

#[cfg(test)]
mod tests;
