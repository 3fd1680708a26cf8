//! Building: one pass over the RIB's runs of equal next hop, a /16 at a
//! time, each mixed /16's /24 answers packed into lines.

use std::sync::atomic::{AtomicU16, AtomicU32, AtomicUsize, Ordering};

use super::{
    Line, LineCell, SailRuns, CHUNK, CHUNK_ENTRIES, INDEX, LEVEL16_ENTRIES, MIN_SHIFT, NAME, RUNS, SHIFT_AT, SPLIT,
    VALUE,
};
use crate::error::{BuildError, Limit, LimitExceeded};
use crate::mem::{try_copy_grown, try_reserve, AllocError};
use crate::rib::{Range, Rib4};
use crate::NextHop;

/// The RIB's runs in address order, read forward a span at a time.
struct Runs {
    ranges: Vec<Range<u32>>,
    /// The run holding the last address asked for.
    current: usize,
}

impl Runs {
    /// The next hop of the span `first..=last` (at or after the spans
    /// asked for before), or `None` where runs meet inside it.
    fn uniform(&mut self, first: u32, last: u32) -> Option<NextHop> {
        let next_hop = self.at(first);
        (self.ranges[self.current].last >= last).then_some(next_hop)
    }

    /// The next hop of `addr` (at or after the spans asked for before).
    fn at(&mut self, addr: u32) -> NextHop {
        while self.ranges[self.current].last < addr {
            self.current += 1;
        }
        self.ranges[self.current].next_hop
    }
}

/// Appends the lines of a /16's 256 `answers` to `lines` and returns their
/// `shift`: 2^(8 - shift) lines of 2^shift answers each, the fewest that
/// hold every line's runs (shift 4, 16 answers a line, always does).
pub(super) fn pack(answers: &[u16], lines: &mut Vec<Line>) -> u32 {
    debug_assert_eq!(answers.len(), CHUNK_ENTRIES);
    let first = lines.len();
    for shift in (MIN_SHIFT..=8).rev() {
        let span = 1 << shift;
        lines.truncate(first);
        let mut parts = answers.chunks_exact(span).enumerate();
        if parts.all(|(part, answers)| Line::of((part * span) as u8, answers).map(|line| lines.push(line)).is_some()) {
            return shift;
        }
    }
    unreachable!("a line holds the runs of {} answers", 1 << MIN_SHIFT)
}

/// The level-16 entry of a chunk of lines `shift` (as [`pack`] gives)
/// whose first line is `first`.
pub(super) fn chunk_entry(shift: u32, first: usize) -> u32 {
    debug_assert!(first <= INDEX as usize, "MAX_LINES keeps line indexes in the field");
    CHUNK | shift << SHIFT_AT | first as u32
}

/// `sail-runs` refusing next hops up to `largest` (above 2^15 - 1); the
/// error suggests `sail-wide` when its 31-bit next hops hold `largest`.
pub(super) fn next_hop_refused(largest: NextHop) -> LimitExceeded {
    let refused =
        LimitExceeded::new(NAME, Limit::NextHop, "the 15-bit next hop of a value", largest.into(), VALUE.into());
    if largest < 1 << 31 {
        refused.instead("the sail-wide engine")
    } else {
        refused
    }
}

/// `sail-runs` refused the memory of its array `array`.
fn refused(array: &'static str) -> impl Fn(AllocError) -> BuildError {
    move |error| BuildError::out_of_memory(NAME, array, error)
}

/// Lines a level-16 chunk `entry` spans, from its first.
pub(super) fn line_count(entry: u32) -> usize {
    0x100 >> (entry >> SHIFT_AT & 0xf)
}

impl SailRuns {
    /// Builds the three levels from `rib`.
    ///
    /// # Errors
    /// [`BuildError::Limit`]: [`Limit::NextHop`] for a next hop above
    /// 2^15 - 1, [`Limit::Chunks`] for more than 2^15 level-32 chunks;
    /// [`BuildError::OutOfMemory`] when the system refuses an array.
    pub fn build(rib: &Rib4) -> Result<Self, BuildError> {
        let largest = rib.iter().map(|(_, next_hop)| next_hop).max().unwrap_or_default();
        if largest > u32::from(VALUE) {
            return Err(next_hop_refused(largest).into());
        }
        let mut runs = Runs { ranges: rib.ranges(0, u32::MAX), current: 0 };
        let mut level16 = vec![0u32; LEVEL16_ENTRIES];
        let (mut lines, mut n32) = (Vec::new(), Vec::new());
        let mut answers = [0u16; CHUNK_ENTRIES];
        for (a, entry) in level16.iter_mut().enumerate() {
            let base = (a as u32) << 16;
            if let Some(next_hop) = runs.uniform(base, base | 0xffff) {
                *entry = next_hop;
                continue;
            }
            for (b, answer) in answers.iter_mut().enumerate() {
                let base = base | (b as u32) << 8;
                *answer = match runs.uniform(base, base | 0xff) {
                    Some(next_hop) => next_hop as u16,
                    None => {
                        let id = n32.len() / CHUNK_ENTRIES;
                        if id > usize::from(VALUE) {
                            let field = "the 15-bit level-32 chunk ID of a value";
                            return Err(LimitExceeded::new(
                                NAME,
                                Limit::Chunks,
                                field,
                                id as u64 + 1,
                                u64::from(SPLIT),
                            )
                            .instead("the sail-wide engine")
                            .into());
                        }
                        try_reserve(&mut n32, CHUNK_ENTRIES).map_err(refused("level-32 array"))?;
                        for c in 0..=0xff {
                            n32.push(runs.at(base | c) as u16);
                        }
                        SPLIT | id as u16
                    }
                };
            }
            let first = lines.len();
            try_reserve(&mut lines, CHUNK_ENTRIES >> MIN_SHIFT).map_err(refused("line array"))?;
            *entry = chunk_entry(pack(&answers, &mut lines), first);
        }
        SailRuns::of_levels(&level16, &lines, &n32, rib.len(), 0, 0)
    }

    /// The structure of these levels, with room for `line_room` more lines
    /// and `chunk_room` more level-32 chunks.
    ///
    /// # Errors
    /// [`BuildError::OutOfMemory`] when the system refuses an array.
    fn of_levels(
        level16: &[u32],
        lines: &[Line],
        n32: &[u16],
        prefixes: usize,
        line_room: usize,
        chunk_room: usize,
    ) -> Result<Self, BuildError> {
        Ok(SailRuns {
            level16: try_copy_grown(level16, 0, |&word| AtomicU32::new(word), AtomicU32::default)
                .map_err(refused("level-16 array"))?,
            lines: try_copy_grown(lines, lines.len() + line_room, LineCell::new, LineCell::default)
                .map_err(refused("line array"))?,
            n32: try_copy_grown(
                n32,
                n32.len() + chunk_room * CHUNK_ENTRIES,
                |&hop| AtomicU16::new(hop),
                AtomicU16::default,
            )
            .map_err(refused("level-32 array"))?,
            prefixes: AtomicUsize::new(prefixes),
        })
    }

    /// A copy holding only what lookups can reach, packed (lines in the
    /// order of the /16s naming them, level-32 chunks in the order of the
    /// values naming them), with room for `line_room` more lines and
    /// `chunk_room` more level-32 chunks. What a file holds, and where an
    /// updater out of room moves to.
    ///
    /// # Errors
    /// [`BuildError::OutOfMemory`] when the system refuses an array.
    pub(super) fn compacted(&self, line_room: usize, chunk_room: usize) -> Result<Self, BuildError> {
        let mut level16 = Vec::with_capacity(LEVEL16_ENTRIES);
        let (mut lines, mut n32) = (Vec::new(), Vec::new());
        // The new ID of each level-32 chunk, once it is copied.
        let mut moved_to = vec![None; self.n32.len() / CHUNK_ENTRIES];
        for cell in self.level16.iter() {
            let entry = cell.load(Ordering::Relaxed);
            if entry & CHUNK == 0 {
                level16.push(entry);
                continue;
            }
            let first = (entry & INDEX) as usize;
            level16.push(entry & !INDEX | lines.len() as u32);
            try_reserve(&mut lines, line_count(entry)).map_err(refused("line array"))?;
            for cell in &self.lines[first..first + line_count(entry)] {
                let mut line = cell.get();
                for value in line.values.iter_mut().filter(|value| **value & SPLIT != 0) {
                    let id = usize::from(*value & VALUE);
                    let new_id = match moved_to[id] {
                        Some(new_id) => new_id,
                        None => {
                            let chunk = &self.n32[id * CHUNK_ENTRIES..(id + 1) * CHUNK_ENTRIES];
                            try_reserve(&mut n32, CHUNK_ENTRIES).map_err(refused("level-32 array"))?;
                            n32.extend(chunk.iter().map(|hop| hop.load(Ordering::Relaxed)));
                            *moved_to[id].insert((n32.len() / CHUNK_ENTRIES - 1) as u16)
                        }
                    };
                    *value = SPLIT | new_id;
                }
                lines.push(line);
            }
        }
        SailRuns::of_levels(&level16, &lines, &n32, self.prefixes.load(Ordering::Relaxed), line_room, chunk_room)
    }
}

impl Line {
    /// Appends the answers of the line's `span` /24s from `first` on to
    /// `answers`, run by run: how the updater reads a line back (lookups
    /// read a [`LineCell`] in one vector compare).
    ///
    /// /24 `b` answers as run "the count of starts not above `b`", so run
    /// `r` covers the /24s from `starts[r - 1]` up to before `starts[r]`
    /// (the starts rise; 255s last): each run's /24s are filled at once.
    pub(super) fn answers(&self, first: u8, span: usize, answers: &mut Vec<u16>) {
        let end = usize::from(first) + span;
        let mut from = usize::from(first);
        for (run, &value) in self.values.iter().enumerate() {
            let to = self.starts.get(run).map_or(end, |&start| usize::from(start).clamp(from, end));
            answers.extend(std::iter::repeat_n(value, to - from));
            from = to;
        }
    }

    /// The line of `answers`, those of /24 `first` on, if they form at most
    /// [`RUNS`] runs.
    ///
    /// The updater packs every /16 it rewrites through here. Finding the
    /// runs 32 answers at a time (one vector compare, then the mask's bits)
    /// instead of answer by answer made updates faster in alternated runs
    /// (figures in docs/decisions.md).
    pub(super) fn of(first: u8, answers: &[u16]) -> Option<Line> {
        let mut line = Line { starts: [u8::MAX; RUNS - 1], values: [answers[0]; RUNS], spare: 0 };
        let mut run = 0;
        // 32 answers at a time, a mask of those that differ from the one
        // before (a vector compare): runs start only at its bits.
        let (now, before) = (&answers[1..], &answers[..answers.len() - 1]);
        for (part, (now, before)) in now.chunks(32).zip(before.chunks(32)).enumerate() {
            let mut changed = now
                .iter()
                .zip(before)
                .enumerate()
                .fold(0u32, |mask, (lane, (answer, previous))| mask | (u32::from(answer != previous) << lane));
            while changed != 0 {
                let b = 1 + part * 32 + changed.trailing_zeros() as usize;
                changed &= changed - 1;
                run += 1;
                if run == RUNS {
                    return None;
                }
                line.starts[run - 1] = first + b as u8;
                line.values[run] = answers[b];
            }
        }
        // Past the last run, its answer again.
        line.values[run..].fill(answers[answers.len() - 1]);
        Some(line)
    }
}
