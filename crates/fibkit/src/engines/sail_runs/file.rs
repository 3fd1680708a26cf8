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
//! retired chunks). All three arrays are mapped in place. Opening checks
//! every entry a lookup reads: a level-16 chunk's `shift` is 4 to 8 and its
//! lines lie inside `lines`; a line's starts rise (255 only past its last
//! run), its spare bytes are zero, and each value names a level-32 chunk
//! the file has or a next hop its values know; every other next hop is
//! known too.

use std::sync::atomic::{AtomicU16, AtomicU32, AtomicUsize};

use super::{
    Line, LineCell, SailRuns, CHUNK, CHUNK_ENTRIES, INDEX, LEVEL16_ENTRIES, MIN_SHIFT, RUNS, SHIFT_AT, SPLIT, VALUE,
};
use crate::fib::Fib;
use crate::file::{largest_references_and_hops, FamilyFile, FamilyWriter, FileError, Problem};
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
    /// [`Problem::Io`] when the system refuses the memory of the compacted
    /// copy written (any other SAIL-R structure can be saved).
    pub fn save<'a>(&'a self, file: &mut FamilyWriter<'_, 'a>) -> Result<(), Problem> {
        let packed = self.compacted(0, 0).map_err(|error| Problem::Io(error.to_string()))?;
        file.params(&[packed.prefixes.into_inner() as u64]);
        file.owned_array("level16", packed.level16);
        file.owned_array("lines", packed.lines);
        file.owned_array("n32", packed.n32);
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
        largest_references_and_hops(
            level16,
            |entry| if entry & CHUNK != 0 { (lines_reached(entry), 0) } else { (0, entry) },
        );
    if lines_named as usize > lines.len() || largest_hop > max_next_hop {
        let problem = |entry: u32| match entry & CHUNK != 0 {
            true if lines_reached(entry) == BAD_SHIFT => Some("a chunk's shift outside 4 to 8"),
            true if lines_reached(entry) as usize > lines.len() => Some("a chunk's lines past the last line"),
            false if entry > max_next_hop => Some("next hop beyond the file's values"),
            _ => None,
        };
        let (index, reason) = level16
            .iter()
            .enumerate()
            .find_map(|(index, &entry)| Some((index, problem(entry)?)))
            .unwrap_or((0, "an entry out of range"));
        return Err(family.bad::<u32>("level16", index, level16[index].into(), reason));
    }
    let chunks_32 = n32.len() / CHUNK_ENTRIES;
    // Every line at once, without a branch; where a line fails, which one.
    let limits = Limits::new(chunks_32, max_next_hop);
    if !lines.iter().fold(true, |ok, line| ok & limits.line_ok(line)) {
        let found = lines
            .iter()
            .enumerate()
            .find_map(|(index, line)| Some((index, line_problem(line, chunks_32, max_next_hop)?)));
        let (index, (value, reason)) = found.unwrap_or((0, (0, "a line out of range")));
        return Err(family.bad::<Line>("lines", index, value, reason));
    }
    if largest_references_and_hops(n32, |hop| (0, hop)).1 > max_next_hop {
        let (index, &hop) =
            n32.iter().enumerate().find(|&(_, &hop)| NextHop::from(hop) > max_next_hop).unwrap_or((0, &0));
        return Err(family.bad::<u16>("n32", index, hop.into(), "next hop beyond the file's values"));
    }
    let prefixes = usize::try_from(routes).map_err(|_| family.bad_param(0, routes, "too large"))?;
    Ok(Box::new(SailRuns {
        level16: level16_cells,
        lines: line_cells,
        n32: n32_cells,
        prefixes: AtomicUsize::new(prefixes),
    }))
}

/// What [`lines_reached`] gives for a shift outside 4 to 8 (above any
/// count of lines an entry can reach).
const BAD_SHIFT: u32 = u32::MAX;

/// One past the last line a level-16 chunk `entry` reaches, or
/// [`BAD_SHIFT`].
fn lines_reached(entry: u32) -> u32 {
    let shift = entry >> SHIFT_AT & 0xf;
    if (MIN_SHIFT..=8).contains(&shift) {
        (entry & INDEX) + (0x100 >> shift)
    } else {
        BAD_SHIFT
    }
}

/// The bounds of a line's values in a file of `chunks_32` level-32 chunks
/// and next hops up to `max_next_hop` (at most 2^15 - 1), each one past the
/// largest a value may hold, in 16 bits like the values.
#[derive(Clone, Copy, Debug)]
struct Limits {
    chunks: u16,
    hops: u16,
}

impl Limits {
    fn new(chunks_32: usize, max_next_hop: NextHop) -> Self {
        debug_assert!(max_next_hop <= VALUE.into());
        Limits { chunks: chunks_32.min(usize::from(SPLIT)) as u16, hops: max_next_hop as u16 + 1 }
    }

    /// Whether `line` passes [`line_problem`]'s checks, worked out with no
    /// branch: with AVX2, a few vector compares of the line's bytes. On
    /// the 2014 table's 26,846 lines, checking them one by one (stopping at
    /// the first problem) was slowest, branch-free and portable faster, and
    /// with AVX2 an open took as long as with no line checked (figures in
    /// docs/decisions.md).
    #[inline]
    fn line_ok(self, line: &Line) -> bool {
        #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
        {
            self.line_ok_avx2(line)
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
        {
            self.line_ok_portable(line)
        }
    }

    /// [`Self::line_ok`] in AVX2: the starts against the starts one byte
    /// on, and the 21 values as 16 and 16 overlapping lanes.
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    #[inline(always)]
    fn line_ok_avx2(self, line: &Line) -> bool {
        use std::arch::x86_64::*;
        let base = std::ptr::from_ref(line).cast::<u8>();
        // SAFETY: the build enables AVX2, so every CPU running it has it; a
        // line is 64 bytes aligned to 64, and each load lies inside it
        // (bytes 0..32, 1..33, 20..52 and 30..62).
        unsafe {
            let starts = _mm256_load_si256(base.cast());
            let next = _mm256_loadu_si256(base.add(1).cast());
            // Start i at or above start i + 1, which is not padding (255).
            let at_or_above = _mm256_cmpeq_epi8(_mm256_max_epu8(starts, next), starts);
            let falling = _mm256_andnot_si256(_mm256_cmpeq_epi8(next, _mm256_set1_epi8(-1)), at_or_above);
            let first_zero = _mm256_cmpeq_epi8(starts, _mm256_setzero_si256());
            let pairs = (1u32 << (RUNS - 2)) - 1;
            let mut bad =
                (_mm256_movemask_epi8(falling) as u32 & pairs) | (_mm256_movemask_epi8(first_zero) as u32 & 1);
            for at in [RUNS - 1, RUNS - 1 + 10] {
                let values = _mm256_loadu_si256(base.add(at).cast());
                let split = _mm256_srai_epi16(values, 15);
                let limit = _mm256_blendv_epi8(
                    _mm256_set1_epi16(self.hops as i16),
                    _mm256_set1_epi16(self.chunks as i16),
                    split,
                );
                let field = _mm256_and_si256(values, _mm256_set1_epi16(VALUE as i16));
                // field < limit exactly when limit - field, saturating, is not 0.
                let beyond = _mm256_cmpeq_epi16(_mm256_subs_epu16(limit, field), _mm256_setzero_si256());
                bad |= _mm256_movemask_epi8(beyond) as u32;
            }
            bad == 0 && line.spare == 0
        }
    }

    /// [`Self::line_ok`] without SIMD.
    #[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "avx2"))))]
    fn line_ok_portable(self, line: &Line) -> bool {
        let starts = &line.starts;
        let mut bad = u8::from(starts[0] == 0) | u8::from(line.spare != 0);
        for i in 0..RUNS - 2 {
            bad |= u8::from(starts[i] >= starts[i + 1]) & u8::from(starts[i + 1] != u8::MAX);
        }
        for &value in &line.values {
            let limit = if value & SPLIT != 0 { self.chunks } else { self.hops };
            bad |= u8::from(value & VALUE >= limit);
        }
        bad == 0
    }
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
        true if usize::from(value & VALUE) >= chunks_32 => {
            Some((value.into(), "a level-32 chunk ID past the last chunk"))
        }
        false if NextHop::from(value) > max_next_hop => Some((value.into(), "next hop beyond the file's values")),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::XorShift32;

    /// Both checks, and [`line_problem`], agree on lines packed from
    /// random answers and on those lines with random fields changed.
    #[test]
    fn the_line_checks_agree() {
        let mut rng = XorShift32::new(11);
        let (mut taken, mut refused) = (0, 0);
        for round in 0..20_000 {
            // 16 answers of a few next hops and level-32 chunks: up to 16 runs.
            let answers: Vec<u16> = (0..16)
                .map(|_| (rng.next() % 24) as u16 | if rng.next().is_multiple_of(8) { SPLIT } else { 0 })
                .collect();
            let mut line = Line::of(16 * (rng.next() % 16) as u8, &answers).expect("16 answers fit a line");
            for _ in 0..round % 3 {
                let (at, byte) = (rng.next() as usize, rng.next() as u8);
                match at % 3 {
                    0 => line.starts[at / 3 % (RUNS - 1)] = byte,
                    1 => line.values[at / 3 % RUNS] = rng.next() as u16,
                    _ => line.spare = u16::from(byte % 2),
                }
            }
            let (chunks_32, max_next_hop) = ([0, 20, 30, 40_000][round % 4], [10, 20, 30, 0x7fff][round / 4 % 4]);
            let limits = Limits::new(chunks_32, max_next_hop);
            let portable = limits.line_ok_portable(&line);
            assert_eq!(portable, line_problem(&line, chunks_32, max_next_hop).is_none(), "{line:?}");
            #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
            assert_eq!(limits.line_ok_avx2(&line), portable, "{line:?} {limits:?}");
            if portable {
                taken += 1
            } else {
                refused += 1
            }
        }
        assert!(taken > 2_000 && refused > 2_000, "{taken} taken, {refused} refused");
    }
}
