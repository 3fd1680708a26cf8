//! SAIL in a compiled FIB file ([`crate::file`]).
//!
//! | section | elements | what |
//! |---|---|---|
//! | `params` | 1 `u64` | routes |
//! | `bcn16` | `W` | the 2^16 level-16 entries |
//! | `bcn24` | `W` | the level-24 chunks, 256 entries each |
//! | `n32` | `W` | the level-32 chunks, 256 next hops each |
//!
//! `W` is the engine's entry (`u16` for `sail`, `u32` for `sail-wide`;
//! the file names the engine). All three arrays are mapped in place.
//! Opening checks every entry as a lookup reads it: a chunk ID (flagged
//! entry of `bcn16` or `bcn24`) names a chunk of the next level the file
//! has, and every next hop (an entry without the flag, every `n32` entry)
//! is one the file's values know. A saved live structure's free chunks
//! are checked too: they hold what the updater last wrote there, chunk IDs
//! and next hops of the same arrays and values.

use std::sync::atomic::AtomicUsize;

use super::{Sail, Word, CHUNK_ENTRIES, LEVEL16_ENTRIES};
use crate::fib::Fib;
use crate::file::{largest_references_and_hops, FamilyFile, FamilyWriter, FileError, Problem};
use crate::mem::LookupArray;
use crate::NextHop;

impl<W: Word> Sail<W> {
    /// Writes the three levels into `file`.
    ///
    /// # Errors
    /// None: every SAIL structure can be saved.
    pub fn save<'a>(&'a self, file: &mut FamilyWriter<'_, 'a>) -> Result<(), Problem> {
        file.params(&[self.prefixes.load(std::sync::atomic::Ordering::Relaxed) as u64]);
        file.array("bcn16", &self.bcn16);
        file.array("bcn24", &self.bcn24);
        file.array("n32", &self.n32);
        Ok(())
    }
}

/// Registry opener of `sail` (`W = u16`) and `sail-wide` (`W = u32`): the
/// levels of `family`, whose next hops go up to `max_next_hop`.
///
/// # Errors
/// [`FileError`] naming the section, the entry and the problem for a
/// missing or short section, a `bcn16` of another size than 2^16, chunks
/// that are not whole, a chunk ID past the last chunk of the next level, a
/// flagged `n32` entry, or a next hop past `max_next_hop`.
pub fn open<W: Word>(family: &FamilyFile<'_>, max_next_hop: NextHop) -> Result<Box<dyn Fib<u32>>, FileError> {
    let routes = family.params(1)?[0];
    let mut bcn16 = family.array::<W::Cell>("bcn16")?;
    let mut bcn24 = family.array::<W::Cell>("bcn24")?;
    let mut n32 = family.array::<W::Cell>("n32")?;
    if bcn16.len() != LEVEL16_ENTRIES {
        return Err(family.bad::<W>("bcn16", 0, bcn16.len() as u64, "bcn16 does not have 2^16 entries"));
    }
    for (name, level) in [("bcn24", &bcn24), ("n32", &n32)] {
        if level.len() % CHUNK_ENTRIES != 0 {
            return Err(family.bad::<W>(name, 0, level.len() as u64, "not whole chunks of 256 entries"));
        }
    }
    let chunks_24 = (bcn24.len() / CHUNK_ENTRIES) as u32;
    let chunks_32 = (n32.len() / CHUNK_ENTRIES) as u32;
    check_level::<W>(family, "bcn16", &mut bcn16, chunks_24, max_next_hop)?;
    check_level::<W>(family, "bcn24", &mut bcn24, chunks_32, max_next_hop)?;
    check_level::<W>(family, "n32", &mut n32, 0, max_next_hop)?;
    let prefixes = usize::try_from(routes).map_err(|_| family.bad_param(0, routes, "too large"))?;
    Ok(Box::new(Sail::<W> { bcn16, bcn24, n32, prefixes: AtomicUsize::new(prefixes) }))
}

/// Checks the entries of level `name`: a flagged entry names one of the
/// `chunks` chunks of the next level (`n32`, with no level below, has
/// none), any other holds a next hop up to `max_next_hop`.
fn check_level<W: Word>(
    family: &FamilyFile<'_>,
    name: &str,
    level: &mut LookupArray<W::Cell>,
    chunks: u32,
    max_next_hop: NextHop,
) -> Result<(), FileError> {
    let words = level.words();
    // The largest chunk and next hop first, positions only on failure.
    let (chunks_named, largest_hop) = largest_references_and_hops(words, |entry| {
        // All ones for a flagged entry: its chunk ID plus one, else its next hop.
        let flagged = (entry >> (W::BITS - 1)).wrapping_neg();
        (((entry & W::VALUE) + 1) & flagged, entry & !flagged)
    });
    if chunks_named <= chunks && largest_hop <= max_next_hop {
        return Ok(());
    }
    let problem = |entry: u32| match entry & W::FLAG != 0 {
        true if chunks == 0 => Some("a chunk ID where only next hops are"),
        true if entry & W::VALUE >= chunks => Some("a chunk ID past the last chunk of the next level"),
        false if entry > max_next_hop => Some("next hop beyond the file's values"),
        _ => None,
    };
    // The scan and `problem` test the same bounds, so an entry is found.
    let found = words.iter().enumerate().find_map(|(index, &word)| Some((index, problem(word.into())?)));
    let (index, reason) = found.unwrap_or((0, "an entry out of range"));
    Err(family.bad::<W>(name, index, words.get(index).map_or(0, |&word| u64::from(Into::<u32>::into(word))), reason))
}
