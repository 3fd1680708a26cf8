//! DIR-24-8 in a compiled FIB file ([`crate::file`]).
//!
//! | section | elements | what |
//! |---|---|---|
//! | `params` | 1 `u64` | routes |
//! | `tbl24` | `u32` | the 2^24 [`Entry`]s, mapped in place |
//! | `tbl8` | `u32` | the groups, 256 entries each (copied at opening: the table's writer grows them) |
//!
//! Opening checks that every extended `tbl24` entry names a group the file
//! has, and that every next hop is one the file's values know.

use std::sync::atomic::{AtomicU32, AtomicUsize};

use super::{Dir24, Entry, GROUP_ENTRIES, TBL24_ENTRIES};
use crate::fib::Fib;
use crate::file::{largest_references_and_hops, FamilyFile, FamilyWriter, FileError, Problem};
use crate::NextHop;

impl Dir24 {
    /// Writes `tbl24` and the groups into `file`.
    ///
    /// # Errors
    /// None: every table can be saved.
    pub fn save<'a>(&'a self, file: &mut FamilyWriter<'_, 'a>) -> Result<(), Problem> {
        file.params(&[self.routes() as u64]);
        file.array("tbl24", &self.tbl24);
        file.array("tbl8", &self.tbl8);
        Ok(())
    }
}

/// Registry opener of `dir24-8`: the tables of `family`, whose next hops go
/// up to `max_next_hop`.
///
/// # Errors
/// [`FileError`] naming the section, the entry and the problem for a
/// missing or short section, a `tbl24` of another size, groups that are not
/// whole, an extended entry naming a group past the last, or a next hop past
/// `max_next_hop`.
pub fn open(family: &FamilyFile<'_>, max_next_hop: NextHop) -> Result<Box<dyn Fib<u32>>, FileError> {
    let routes = family.params(1)?[0];
    let mut tbl24 = family.array::<AtomicU32>("tbl24")?;
    let mut mapped_tbl8 = family.array::<AtomicU32>("tbl8")?;
    if tbl24.len() != TBL24_ENTRIES {
        return Err(family.bad::<u32>("tbl24", 0, tbl24.len() as u64, "tbl24 does not have 2^24 entries"));
    }
    if mapped_tbl8.len() % GROUP_ENTRIES != 0 {
        return Err(family.bad::<u32>("tbl8", 0, mapped_tbl8.len() as u64, "tbl8 is not whole groups of 256 entries"));
    }
    let groups = (mapped_tbl8.len() / GROUP_ENTRIES) as u32;
    let problem = |word: u32| {
        let entry = Entry(word);
        match entry.is_extended() {
            true if entry.value() >= groups => Some("group past the last of tbl8"),
            false if entry.value() > max_next_hop => Some("next hop beyond the file's values"),
            _ => None,
        }
    };
    let words = tbl24.words();
    // The largest group and next hop first, positions only on failure.
    let (groups_used, largest_hop) = largest_references_and_hops(words, |word| {
        let entry = Entry(word);
        // All ones for an extended entry: its group plus one, else its next hop.
        let extended = u32::from(entry.is_extended()).wrapping_neg();
        ((entry.value() + 1) & extended, entry.value() & !extended)
    });
    if groups_used > groups || largest_hop > max_next_hop {
        if let Some((index, reason)) = words.iter().enumerate().find_map(|(index, &word)| Some((index, problem(word)?)))
        {
            return Err(family.bad::<u32>("tbl24", index, words[index].into(), reason));
        }
    }
    let words = mapped_tbl8.words();
    if let Some(index) = words.iter().position(|&word| Entry(word).value() > max_next_hop) {
        return Err(family.bad::<u32>("tbl8", index, words[index].into(), "next hop beyond the file's values"));
    }
    let tbl8: Vec<AtomicU32> = words.iter().map(|&word| AtomicU32::new(word)).collect();
    let routes = usize::try_from(routes).map_err(|_| family.bad_param(0, routes, "too large"))?;
    Ok(Box::new(Dir24 { tbl24, tbl8, routes: AtomicUsize::new(routes) }))
}
