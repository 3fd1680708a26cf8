//! Building: one pass over the RIB's runs of equal next hop, a /16 at a
//! time, each mixed /16's /24 answers packed into lines.

use super::{Line, SailRuns, CHUNK, CHUNK_ENTRIES, INDEX, LEVEL16_ENTRIES, MIN_SHIFT, NAME, RUNS, SHIFT_AT, SPLIT, VALUE};
use crate::error::{Limit, LimitExceeded};
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

/// Appends the lines of a /16's 256 `answers` to `lines` and returns its
/// level-16 entry: 2^k lines of 256 / 2^k answers each, the fewest that
/// hold every line's runs (k = 4, 16 answers a line, always does).
fn chunk_entry(answers: &[u16; CHUNK_ENTRIES], lines: &mut Vec<Line>) -> Result<u32, LimitExceeded> {
    let first = lines.len();
    if first > INDEX as usize {
        return Err(LimitExceeded::new(NAME, Limit::Chunks, "the 27-bit line index of a level-16 entry", first as u64 + 1, u64::from(INDEX) + 1));
    }
    for shift in (MIN_SHIFT..=8).rev() {
        let span = 1 << shift;
        let packed: Option<Vec<Line>> = answers.chunks_exact(span).enumerate().map(|(part, answers)| Line::of((part * span) as u8, answers)).collect();
        if let Some(packed) = packed {
            lines.extend(packed);
            return Ok(CHUNK | shift << SHIFT_AT | first as u32);
        }
    }
    unreachable!("a line holds the runs of {} answers", 1 << MIN_SHIFT)
}

impl SailRuns {
    /// Builds the three levels from `rib`.
    ///
    /// # Errors
    /// [`LimitExceeded`]: [`Limit::NextHop`] for a next hop above 2^15 - 1,
    /// [`Limit::Chunks`] for more than 2^15 level-32 chunks or 2^27
    /// lines.
    pub fn build(rib: &Rib4) -> Result<Self, LimitExceeded> {
        let largest = rib.iter().map(|(_, next_hop)| next_hop).max().unwrap_or_default();
        if largest > u32::from(VALUE) {
            let field = "the 15-bit next hop of a value";
            let refused = LimitExceeded::new(NAME, Limit::NextHop, field, largest.into(), VALUE.into());
            // sail-wide's 31-bit next hops.
            return Err(if largest < 1 << 31 { refused.instead("the sail-wide engine") } else { refused });
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
                            return Err(LimitExceeded::new(NAME, Limit::Chunks, field, id as u64 + 1, u64::from(SPLIT)).instead("the sail-wide engine"));
                        }
                        for c in 0..=0xff {
                            n32.push(runs.at(base | c) as u16);
                        }
                        SPLIT | id as u16
                    }
                };
            }
            *entry = chunk_entry(&answers, &mut lines)?;
        }
        Ok(SailRuns {
            level16: level16.into(),
            lines: lines.into(),
            n32: n32.into(),
            prefixes: rib.len(),
        })
    }
}

impl Line {
    /// The line of `answers`, those of /24 `first` on, if they form at most
    /// [`RUNS`] runs.
    pub(super) fn of(first: u8, answers: &[u16]) -> Option<Line> {
        let mut line = Line { starts: [u8::MAX; RUNS - 1], values: [answers[0]; RUNS], spare: 0 };
        let mut run = 0;
        for b in 1..answers.len() {
            if answers[b] != answers[b - 1] {
                run += 1;
                if run == RUNS {
                    return None;
                }
                line.starts[run - 1] = first + b as u8;
                line.values[run..].fill(answers[b]);
            }
        }
        Some(line)
    }
}
