//! DXR in a compiled FIB file ([`crate::file`]).
//!
//! | section | elements | what |
//! |---|---|---|
//! | `params` | 1 `u64` | prefixes of the RIB |
//! | `direct` | `u32` | the 2^K direct entries |
//! | `range_long`, `range_short`, `range_wide` | `u32`, `u16`, `u64` | the fragments (layouts in [`super`]) |
//!
//! Opening checks every direct entry as the lookup reads it: its format is
//! one of the three, its fragments (after the header entry of a chunk of
//! more than 254) lie inside their range table and number at least one, and
//! every next hop, resolved directly or in a fragment, is one the file's
//! values know. That is what a lookup follows; the order of a chunk's
//! fragments is not checked (a check per chunk would cost more than the
//! rest of the opening): a chunk out of order, which only a file forged
//! with valid checksums can hold, answers with one of its own fragments,
//! not necessarily the same one in the scalar and the batch lookup.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::{Dxr, BASE_SHIFT, FORMAT_LONG, FORMAT_SHIFT, FORMAT_SHORT, FORMAT_WIDE, FRAGS_MASK, FRAGS_XL};
use crate::fib::Fib;
use crate::file::{FamilyFile, FamilyWriter, FileError, Problem};
use crate::NextHop;
use rayon::prelude::*;

impl<const K: u32> Dxr<K> {
    /// Writes the direct table and the range tables into `file`.
    ///
    /// # Errors
    /// None: every DXR structure can be saved.
    pub fn save<'a>(&'a self, file: &mut FamilyWriter<'_, 'a>) -> Result<(), Problem> {
        file.params(&[self.prefixes.load(Ordering::Relaxed) as u64]);
        file.array("direct", &self.direct);
        file.array("range_long", &self.range_long);
        file.array("range_short", &self.range_short);
        file.array("range_wide", &self.range_wide);
        Ok(())
    }
}

/// The arrays of a DXR structure being opened, as plain words.
struct Tables<'a> {
    direct: &'a [u32],
    long: &'a [u32],
    short: &'a [u16],
    wide: &'a [u64],
}

/// Direct entries tested at once before any is looked at one by one.
const BLOCK: usize = 1024;

/// Direct entries a thread checks at a time (D16R's table is one piece).
const PIECE: usize = 1 << 16;

impl Tables<'_> {
    /// Checks every direct entry and next hop (see the module docs).
    fn check<const K: u32>(&self, family: &FamilyFile<'_>, max_next_hop: NextHop) -> Result<(), FileError> {
        if self.direct.len() != 1 << K {
            return Err(family.bad::<u32>(
                "direct",
                0,
                self.direct.len() as u64,
                "the direct table does not have 2^K entries",
            ));
        }
        // A branch-free test (vectorised) of each block of entries; the
        // detailed check only of the entries of a block that it finds a
        // suspect in, and of the rare chunks with a header entry.
        // In `i32`: a base (22 bits) plus a count (8 bits) fits, and AVX2
        // compares signed words in one instruction.
        let length = |table: usize| i32::try_from(table).unwrap_or(i32::MAX);
        let (long, short, wide) = (length(self.long.len()), length(self.short.len()), length(self.wide.len()));
        let largest = i32::try_from(max_next_hop).unwrap_or(i32::MAX);
        let suspect = |entry: u32| {
            let (frags, format, base) =
                ((entry & FRAGS_MASK) as i32, (entry >> FORMAT_SHIFT) & 3, (entry >> BASE_SHIFT) as i32);
            // The table's length by masks (a `match` becomes a jump table,
            // which does not vectorise); format 3 has no table, length 0.
            let mask = |format_is: bool| -i32::from(format_is);
            let table = long & mask(format == FORMAT_LONG)
                | short & mask(format == FORMAT_SHORT)
                | wide & mask(format == FORMAT_WIDE);
            // A next hop (no fragments) is the base: `base + frags` tests both.
            let limit = largest & mask(frags == 0) | table & !mask(frags == 0);
            (base + frags > limit) | (frags == FRAGS_XL as i32)
        };
        // Header entries (counts, not fragments) by table, to skip in the
        // next-hop scan; a large direct table in pieces on every core.
        let check_piece = |(piece, entries): (usize, &[u32])| -> Result<[Vec<usize>; 3], FileError> {
            let mut headers: [Vec<usize>; 3] = Default::default();
            for (block, entries) in entries.chunks(BLOCK).enumerate() {
                if !entries.iter().fold(false, |any, &entry| any | suspect(entry)) {
                    continue;
                }
                for (lane, &entry) in entries.iter().enumerate().filter(|&(_, &entry)| suspect(entry)) {
                    self.check_entry(family, piece * PIECE + block * BLOCK + lane, entry, max_next_hop)?;
                    if entry & FRAGS_MASK == FRAGS_XL {
                        headers[((entry >> FORMAT_SHIFT) & 3) as usize].push((entry >> BASE_SHIFT) as usize);
                    }
                }
            }
            Ok(headers)
        };
        let pieces: Vec<_> = self.direct.par_chunks(PIECE).enumerate().map(check_piece).collect();
        let mut headers: [Vec<usize>; 3] = Default::default();
        for piece in pieces {
            for (all, found) in headers.iter_mut().zip(piece?) {
                all.extend(found);
            }
        }
        let [long_headers, short_headers, wide_headers] = &mut headers;
        check_hops(family, "range_long", self.long, long_headers, |word| word & ((1 << K) - 1), max_next_hop)?;
        check_hops(family, "range_short", self.short, short_headers, |word| NextHop::from(word & 0xff), max_next_hop)?;
        check_hops(family, "range_wide", self.wide, wide_headers, |word| word as NextHop, max_next_hop)
    }

    /// Checks the direct entry of `chunk` as the lookup reads it.
    fn check_entry(
        &self,
        family: &FamilyFile<'_>,
        chunk: usize,
        entry: u32,
        max_next_hop: NextHop,
    ) -> Result<(), FileError> {
        let (frags, format, base) = (entry & FRAGS_MASK, (entry >> FORMAT_SHIFT) & 3, (entry >> BASE_SHIFT) as usize);
        let bad = |problem| Err(family.bad::<u32>("direct", chunk, entry.into(), problem));
        let (table_len, header) = match format {
            _ if frags == 0 => {
                return if base as NextHop > max_next_hop { bad("next hop beyond the file's values") } else { Ok(()) }
            }
            FORMAT_LONG => (self.long.len(), self.long.get(base).map(|&word| word as usize)),
            FORMAT_SHORT => (self.short.len(), self.short.get(base).map(|&word| usize::from(word))),
            FORMAT_WIDE => (self.wide.len(), self.wide.get(base).map(|&word| word as usize)),
            _ => return bad("format 3 is no range table"),
        };
        let (first, count) = if frags == FRAGS_XL {
            match header {
                Some(count) => (base + 1, count),
                None => return bad("the chunk's header entry is past the end of its range table"),
            }
        } else {
            (base, frags as usize)
        };
        if count == 0 || first.checked_add(count).is_none_or(|end| end > table_len) {
            return bad("the chunk's fragments are not inside its range table");
        }
        Ok(())
    }
}

/// Checks the next hop of every fragment of `table` but the header entries
/// at `headers`.
fn check_hops<W: Copy + Into<u64>>(
    family: &FamilyFile<'_>,
    name: &str,
    table: &[W],
    headers: &mut Vec<usize>,
    hop: impl Fn(W) -> NextHop,
    max_next_hop: NextHop,
) -> Result<(), FileError> {
    headers.sort_unstable();
    headers.dedup();
    let mut start = 0;
    for &header in headers.iter().chain(std::iter::once(&table.len())) {
        let span = &table[start..header];
        // A maximum first (vectorised), the position only on failure.
        if span.iter().fold(0, |largest, &word| largest.max(hop(word))) > max_next_hop {
            let offset = span.iter().position(|&word| hop(word) > max_next_hop).unwrap_or_default();
            return Err(family.bad::<W>(
                name,
                start + offset,
                span[offset].into(),
                "next hop beyond the file's values",
            ));
        }
        start = header + 1;
    }
    Ok(())
}

/// Registry opener of `d16r` ... `d22r`: the arrays of `family`, whose next
/// hops go up to `max_next_hop`.
///
/// # Errors
/// [`FileError`] naming the section, the entry and the problem for a
/// missing or short section, a direct table of another size, a direct entry
/// whose chunk lies outside its range table, or a next hop past
/// `max_next_hop`.
pub fn open<const K: u32>(family: &FamilyFile<'_>, max_next_hop: NextHop) -> Result<Box<dyn Fib<u32>>, FileError> {
    let prefixes = family.params(1)?[0];
    let prefixes = usize::try_from(prefixes).map_err(|_| family.bad_param(0, prefixes, "too large"))?;
    let (mut direct, mut range_long) = (family.array("direct")?, family.array("range_long")?);
    let (mut range_short, mut range_wide) = (family.array("range_short")?, family.array("range_wide")?);
    let tables = Tables {
        direct: direct.words(),
        long: range_long.words(),
        short: range_short.words(),
        wide: range_wide.words(),
    };
    tables.check::<K>(family, max_next_hop)?;
    Ok(Box::new(Dxr::<K> { direct, range_long, range_short, range_wide, prefixes: AtomicUsize::new(prefixes) }))
}
