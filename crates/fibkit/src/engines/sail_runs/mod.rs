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
//! chunks up to 2^15, as in `sail`; lines up to 2^27 (where `sail` takes
//! 2^15 level-24 chunks).
//! A table beyond any of these is a [`crate::error::LimitExceeded`].
//!
//! # Updates
//!
//! None in place: a router serving `sail-runs` rebuilds it for each batch of
//! updates (about 30 ms for a full IPv4 table).
//!
//! # Files
//!
//! A compiled FIB file holds the three arrays as they are ([`open`] maps
//! them in place after checking every entry a lookup reads).

mod build;
mod file;
mod lookup;
mod stats;

pub use file::open;

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

/// A SAIL-R lookup structure: what lookups read.
pub struct SailRuns {
    /// One entry per /16.
    level16: LookupArray<u32>,
    /// The level-24 chunks: 1, 2, 4, 8 or 16 lines each.
    lines: LookupArray<Line>,
    /// The level-32 chunks, [`CHUNK_ENTRIES`] next hops each.
    n32: LookupArray<u16>,
    /// Routes of the RIB it was built from.
    prefixes: usize,
}

impl std::fmt::Debug for SailRuns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SailRuns")
            .field("prefixes", &self.prefixes)
            .field("lines", &self.lines.len())
            .field("chunks_32", &(self.n32.len() / CHUNK_ENTRIES))
            .finish()
    }
}

forward_fib!([] SailRuns, u32, |_this| NAME, [lookup_batch], [save]);

/// Registry builder of `sail-runs`.
///
/// # Errors
/// [`BuildError::Limit`] for a next hop above 2^15 - 1, or more level-32
/// chunks than 2^15 (or lines than 2^27).
pub fn build(rib: &Rib4, _options: &BuildOptions) -> Result<Box<dyn Fib<u32>>, BuildError> {
    Ok(Box::new(SailRuns::build(rib)?))
}

#[cfg(test)]
mod tests;
