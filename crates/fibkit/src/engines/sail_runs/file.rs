//! SAIL-R in a compiled FIB file ([`crate::file`]).
//!
//! | section | elements | what |
//! |---|---|---|
//! | `params` | 1 `u64` | routes |
//! | `level16` | `u32` | the 2^16 level-16 entries |
//! | `lines` | 64-byte [`Line`]s | the level-24 chunks' lines |
//! | `n32` | `u16` | the level-32 chunks, 256 next hops each |
//!
//! A file holds the lines and level-32 chunks lookups reach and no others
//! (an updated structure is saved compacted, without its room or its
//! retired chunks). All three arrays are mapped in place. Opening checks every entry a
//! lookup reads: a level-16 chunk's `shift` is 4 to 8 and its lines lie
//! inside `lines`; a line's starts rise (255 only past its last run), its
//! spare bytes are zero, and each value names a level-32 chunk the file
//! has or a next hop its values know; every other next hop is known too.

use std::sync::atomic::{AtomicU16, AtomicU32, AtomicUsize};

use super::{Line, LineCell, SailRuns, CHUNK, CHUNK_ENTRIES, INDEX, LEVEL16_ENTRIES, MIN_SHIFT, SHIFT_AT, SPLIT, VALUE};
use crate::file::{largest_references_and_hops, FamilyFile, FamilyWriter, FileError, Problem};
use crate::fib::Fib;
use crate::mem::Plain;
use crate::NextHop;

// SAFETY: a `LineCell` is 20 atomic bytes and 22 atomic `u16`s with no
// padding (asserted beside its definition, as `Line`'s layout), any bytes
// are a valid line, it has no drop glue, and `write_le` writes its fields
// in order as little-endian bytes.
unsafe impl Plain for LineCell {
    fn write_le(cells: &[Self], out: &mut Vec<u8>) {
        out.reserve(size_of_val(cells));
        for line in cells.iter().map(LineCell::get) {
            out.extend_from_slice(&line.starts);
            for word in line.values.iter().chain([&line.spare]) {
                out.extend_from_slice(&word.to_le_bytes());
            }
        }
    }
}

impl SailRuns {
    /// Writes the three levels into `file`, compacted: only the lines and
    /// level-32 chunks lookups reach.
    ///
    /// # Errors
    /// None: every SAIL-R structure can be saved.
    pub fn save(&self, file: &mut FamilyWriter<'_>) -> Result<(), Problem> {
        let packed = self.compacted(0, 0);
        file.params(&[packed.prefixes.into_inner() as u64]);
        file.array("level16", &packed.level16);
        file.array("lines", &packed.lines);
        file.array("n32", &packed.n32);
        Ok(())
    }
}

/// Registry opener of `sail-runs`: the levels of `family`, whose next hops
/// go up to `max_next_hop`.
///
/// # Errors
/// [`FileError`] naming the section, the element and the problem for a
/// missing or short section, a `level16` of another size than 2^16, a
/// chunk's `shift` outside 4 to 8 or lines past the last, a line whose
/// starts fall or whose spare bytes are not zero, a level-32 chunk ID
/// past the last, an `n32` of chunks that are not whole, or a next hop
/// past `max_next_hop` (or past 2^15 - 1).
pub fn open(family: &FamilyFile<'_>, max_next_hop: NextHop) -> Result<Box<dyn Fib<u32>>, FileError> {
    let routes = family.params(1)?[0];
    let mut level16_cells = family.array::<AtomicU32>("level16")?;
    let mut line_cells = family.array::<LineCell>("lines")?;
    let mut n32_cells = family.array::<AtomicU16>("n32")?;
    let (level16, lines, n32) = (level16_cells.words(), LineCell::plain(&mut line_cells), n32_cells.words());
    let max_next_hop = max_next_hop.min(VALUE.into());
    if level16.len() != LEVEL16_ENTRIES {
        return Err(family.bad::<u32>("level16", 0, level16.len() as u64, "level16 does not have 2^16 entries"));
    }
    if n32.len() % CHUNK_ENTRIES != 0 {
        return Err(family.bad::<u16>("n32", 0, n32.len() as u64, "not whole chunks of 256 entries"));
    }
    // Past the last line a chunk reaches (plus one), and the largest next hop.
    let (lines_named, largest_hop) =
        largest_references_and_hops(level16, |entry| if entry & CHUNK != 0 { (lines_reached(entry), 0) } else { (0, entry) });
    if lines_named as usize > lines.len() || largest_hop > max_next_hop {
        let problem = |entry: u32| match entry & CHUNK != 0 {
            true if lines_reached(entry) == BAD_SHIFT => Some("a chunk's shift outside 4 to 8"),
            true if lines_reached(entry) as usize > lines.len() => Some("a chunk's lines past the last line"),
            false if entry > max_next_hop => Some("next hop beyond the file's values"),
            _ => None,
        };
        let (index, reason) = level16.iter().enumerate().find_map(|(index, &entry)| Some((index, problem(entry)?))).unwrap_or((0, "an entry out of range"));
        return Err(family.bad::<u32>("level16", index, level16[index].into(), reason));
    }
    let chunks_32 = n32.len() / CHUNK_ENTRIES;
    // Every line at once, without a branch; where a line fails, which one.
    if !lines.iter().fold(true, |ok, line| ok & line_ok(line, chunks_32, max_next_hop)) {
        let found = lines.iter().enumerate().find_map(|(index, line)| Some((index, line_problem(line, chunks_32, max_next_hop)?)));
        let (index, (value, reason)) = found.unwrap_or((0, (0, "a line out of range")));
        return Err(family.bad::<Line>("lines", index, value, reason));
    }
    if largest_references_and_hops(n32, |hop| (0, hop)).1 > max_next_hop {
        let (index, &hop) = n32.iter().enumerate().find(|&(_, &hop)| NextHop::from(hop) > max_next_hop).unwrap_or((0, &0));
        return Err(family.bad::<u16>("n32", index, hop.into(), "next hop beyond the file's values"));
    }
    let prefixes = usize::try_from(routes).map_err(|_| family.bad_param(0, routes, "too large"))?;
    Ok(Box::new(SailRuns { level16: level16_cells, lines: line_cells, n32: n32_cells, prefixes: AtomicUsize::new(prefixes) }))
}

/// What [`lines_reached`] gives for a shift outside 4 to 8 (above any
/// count of lines an entry can reach).
const BAD_SHIFT: u32 = u32::MAX;

/// One past the last line a level-16 chunk `entry` reaches, or
/// [`BAD_SHIFT`].
fn lines_reached(entry: u32) -> u32 {
    let shift = entry >> SHIFT_AT & 0xf;
    if (MIN_SHIFT..=8).contains(&shift) { (entry & INDEX) + (0x100 >> shift) } else { BAD_SHIFT }
}

/// Whether `line` passes [`line_problem`]'s checks, worked out with no
/// branch, so that the loop over every line vectorises: checked one by
/// one, stopping at the first problem, the 2014 table's 26,846 lines made
/// its open 0.49 ms, against 0.30 to 0.34 now (Zen 5).
#[inline]
fn line_ok(line: &Line, chunks_32: usize, max_next_hop: NextHop) -> bool {
    let mut ok = line.starts[0] != 0 && line.spare == 0;
    for pair in line.starts.windows(2) {
        ok &= pair[0] < pair[1] || pair[1] == u8::MAX;
    }
    for &value in &line.values {
        let limit = if value & SPLIT != 0 { chunks_32 } else { max_next_hop as usize + 1 };
        ok &= usize::from(value & VALUE) < limit;
    }
    ok
}

/// What is wrong with `line`, if anything (the word at fault and why), in
/// a file of `chunks_32` level-32 chunks and next hops up to
/// `max_next_hop`.
fn line_problem(line: &Line, chunks_32: usize, max_next_hop: NextHop) -> Option<(u64, &'static str)> {
    let rising = line.starts.windows(2).all(|pair| pair[0] < pair[1] || pair[1] == u8::MAX);
    if !rising || line.starts[0] == 0 {
        let first = u64::from_le_bytes(line.starts[..8].try_into().expect("8 of the 20 starts"));
        return Some((first, "a line whose starts do not rise from above 0"));
    }
    if line.spare != 0 {
        return Some((line.spare.into(), "a line whose spare bytes are not zero"));
    }
    line.values.iter().find_map(|&value| match value & SPLIT != 0 {
        true if usize::from(value & VALUE) >= chunks_32 => Some((value.into(), "a level-32 chunk ID past the last chunk")),
        false if NextHop::from(value) > max_next_hop => Some((value.into(), "next hop beyond the file's values")),
        _ => None,
    })
}
