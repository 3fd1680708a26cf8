//! SAIL (`sail`, `sail-wide`): Yang et al., "Guarantee IP Lookup Performance
//! with FIB Explosion" (SIGCOMM 2014), in its lookup-oriented form SAIL_L,
//! as the Poptrie paper (sections 4.3-4.8) measured it against Poptrie.
//!
//! Three levels at prefix lengths 16, 24 and 32. Every route is pushed to
//! the next of the three levels ("pivot pushing", the longest covering
//! prefix filling the gaps), and each level is one array whose entries hold
//! either a next hop or the ID of a 256-entry chunk of the next level
//! (SAIL's "splitting lookup": next-hop and chunk-ID arrays in one):
//!
//! ```text
//!  addr: | 16 bits (a) | 8 bits (b) | 8 bits (c) |
//!
//!  BCN16[a] --next hop--> answer
//!     |
//!     +--chunk C16--> BCN24[C16 * 256 + b] --next hop--> answer
//!                        |
//!                        +--chunk C24--> N32[C24 * 256 + c] = answer
//! ```
//!
//! A level-16 entry holds a chunk ID exactly when a route longer than /16
//! lies in its /16, and a level-24 entry exactly when a route longer than
//! /24 lies in its /24: which chunks exist depends on the routes, not on
//! their next hops, as in the paper. Chunk IDs are given in address order.
//! A lookup is at most three dependent loads, with no search.
//!
//! # Entries
//!
//! `BCN16` and `BCN24` entries are one word `W`: 16 bits in `sail` (the
//! paper's layout), 32 in `sail-wide`. `N32` entries are next hops of the
//! same width.
//!
//! | bits (`sail`) | bits (`sail-wide`) | field |
//! |---|---|---|
//! | 15 | 31 | chunk flag: the rest is a chunk ID, not a next hop |
//! | 14..0 | 30..0 | next hop, or the chunk's ID (`C16`, `C24`) |
//!
//! So `sail` takes at most 2^15 chunks at level 24 (the Poptrie paper's
//! section 4.8: `C16[i]` is encoded in the 15 bits of `BCN[i]`, which its
//! SYN2 tables exceed), 2^15 at level 32 and next hops up to 2^15 - 1;
//! a table beyond any of these is a [`crate::error::LimitExceeded`] naming
//! the count and the limit. `sail-wide` lifts them to 2^31, at twice the
//! bytes. The 2014 RouteViews table (512,621 routes) needs 20,323 level-24
//! and 1,982 level-32 chunks (11.0 MiB with 16-bit entries), inside
//! `sail`'s limits with the DXR paper's 239 next hops; with its 46,823
//! origin ASNs as next hops only `sail-wide` (22.0 MiB) takes it.
//!
//! # Updates
//!
//! In place, a /16 at a time, copy on write ([`SailUpdater`]): the updater builds
//! a changed /16's new level-24 chunk (and a new level-32 chunk for each
//! /24 whose answers changed and are not all one) in free chunks no reader
//! can reach, then publishes it with one `Release` store of the level-16
//! entry. A lookup, which loads that entry with `Acquire`, sees the /16
//! wholly before or wholly after the batch. Replaced chunks wait until no
//! reader can hold them ([`crate::live::Limbo`]). So a live structure gives
//! a /16 a chunk when its answers differ (not when a route longer than /16
//! lies in it, as a build does), and its arrays have room for more chunks.
//!
//! # Files
//!
//! A compiled FIB file holds the three arrays as they are (sections
//! `bcn16`, `bcn24`, `n32` of `W` entries, and `params` with the route
//! count); [`open`] maps them in place after checking every chunk ID
//! against the next level's chunk count and every next hop against the
//! file's values.
//!
//! What lookups read is all there is: [`Sail`] holds the three arrays and
//! the route count; the builder's chunk maps are dropped after the build,
//! and the updater's free chunks live in the updater.

mod build;
mod file;
mod live;
mod lookup;
mod stats;

pub use file::open;
pub use live::{updater, SailUpdater};

use std::sync::atomic::{AtomicU16, AtomicU32, AtomicUsize, Ordering};

use crate::error::BuildError;
use crate::fib::{forward_fib, BuildOptions, Fib};
use crate::mem::{AtomicCell, LookupArray};
use crate::rib::Rib4;

/// An entry word of SAIL's arrays: `u16` (`sail`) or `u32` (`sail-wide`),
/// kept in an atomic cell ([`Word::Cell`]) that lookups read while the
/// updater writes.
pub trait Word: Copy + Default + Send + Sync + Into<u32> + 'static {
    /// The engine's registry name.
    const NAME: &'static str;
    /// Bits of the word.
    const BITS: u32;
    /// The chunk flag (the top bit).
    const FLAG: u32 = 1 << (Self::BITS - 1);
    /// The largest next hop or chunk ID an entry holds.
    const VALUE: u32 = Self::FLAG - 1;
    /// The atomic integer of the word's width.
    type Cell: AtomicCell<Word = Self>;
    /// The word holding `value` (at most [`Word::FLAG`] `| VALUE`).
    fn of(value: u32) -> Self;
    /// A cell holding `value` (as [`Word::of`]).
    fn cell(value: u32) -> Self::Cell;
    /// The cell's value.
    fn load(cell: &Self::Cell, order: Ordering) -> u32;
    /// Writes `value` (as [`Word::of`]) into the cell.
    fn store(cell: &Self::Cell, value: u32, order: Ordering);
}

macro_rules! word {
    ($word:ty, $atomic:ty, $name:literal) => {
        impl Word for $word {
            const NAME: &'static str = $name;
            const BITS: u32 = <$word>::BITS;
            type Cell = $atomic;

            fn of(value: u32) -> Self {
                debug_assert!(value <= u32::from(<$word>::MAX));
                value as $word
            }

            fn cell(value: u32) -> $atomic {
                <$atomic>::new(Self::of(value))
            }

            #[inline(always)]
            fn load(cell: &$atomic, order: Ordering) -> u32 {
                cell.load(order).into()
            }

            #[inline(always)]
            fn store(cell: &$atomic, value: u32, order: Ordering) {
                cell.store(Self::of(value), order)
            }
        }
    };
}

word!(u16, AtomicU16, "sail");
word!(u32, AtomicU32, "sail-wide");

const _: () = assert!(<u16 as Word>::FLAG == 0x8000 && <u16 as Word>::VALUE == 0x7fff);
const _: () = assert!(<u32 as Word>::FLAG == 0x8000_0000);

/// Entries of a chunk (levels 24 and 32).
pub const CHUNK_ENTRIES: usize = 256;
/// Entries of level 16.
pub const LEVEL16_ENTRIES: usize = 1 << 16;

/// A SAIL_L lookup structure of `W` entries: what lookups read.
pub struct Sail<W: Word> {
    /// `BCN16`: one entry per /16 (loaded `Acquire`: a chunk it names was
    /// written before it).
    bcn16: LookupArray<W::Cell>,
    /// `BCN24`: the level-24 chunks, 256 entries each.
    bcn24: LookupArray<W::Cell>,
    /// `N32`: the level-32 chunks, 256 next hops each.
    n32: LookupArray<W::Cell>,
    /// Routes of the RIB it holds.
    prefixes: AtomicUsize,
}

impl<W: Word> std::fmt::Debug for Sail<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sail")
            .field("name", &W::NAME)
            .field("prefixes", &self.prefixes)
            .field("chunks_24", &self.chunks_24())
            .field("chunks_32", &self.chunks_32())
            .finish()
    }
}

forward_fib!([W: Word] Sail<W>, u32, |_sail| W::NAME, [lookup_batch], [save]);

/// Registry builder of `sail` (`W = u16`) and `sail-wide` (`W = u32`).
///
/// # Errors
/// [`BuildError::Limit`] for a table needing more chunks at level 24 or
/// 32, or a larger next hop, than an entry of `W` holds.
pub fn build<W: Word>(rib: &Rib4, _options: &BuildOptions) -> Result<Box<dyn Fib<u32>>, BuildError> {
    Ok(Box::new(Sail::<W>::build(rib)?))
}

#[cfg(test)]
mod tests;
