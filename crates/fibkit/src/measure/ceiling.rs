//! The ceiling an engine's throughput is quoted against: one random load
//! from a 1 MiB table per lookup, through the same workloads as the engines
//! (`fibkit bench` measures it beside them, as the row `ceiling`).
//!
//! ```text
//!   key ──(top 18 bits)──▶ table[2^18] of u32 (1 MiB) ──▶ answer
//! ```
//!
//! An IPv6 key indexes with the top 18 bits of its low 64: benchmarks draw
//! IPv6 keys inside a prefix (2000::/3, or one as narrow as 2001::/16)
//! whose top bits are fixed, which would leave the table four entries.
//!
//! On a shared machine the ratio of an engine's figure to the ceiling
//! measured in the same minute is steadier than either figure: no engine
//! that reads memory at least once per key beats it by much.
//!
//! `Ceiling<BITS>` indexes with `BITS` bits instead (a table of 2^BITS
//! words): the same single load from a table the size of an engine's
//! structure tells how much of the gap to the 1 MiB ceiling is the size
//! alone (`examples/ceiling --bits 18,19,20,21`).

use crate::addr::Address;
use crate::fib::{Fib, Stats};
use crate::mem::LookupArray;
use crate::NextHop;

/// The ceiling's name, as reports list it beside the engines.
pub const NAME: &str = "ceiling";

/// Bits of a key that index the ceiling's table: 2^18 words of 4 bytes, 1 MiB.
pub const INDEX_BITS: u8 = 18;

/// One load per lookup from a table of 2^`BITS` words: 1 MiB by default
/// (module docs).
pub struct Ceiling<const BITS: u8 = INDEX_BITS> {
    table: LookupArray<u32>,
}

impl Default for Ceiling {
    fn default() -> Self {
        Self::new()
    }
}

impl Ceiling {
    /// The 1 MiB ceiling.
    pub fn new() -> Self {
        Self::sized()
    }
}

impl<const BITS: u8> Ceiling<BITS> {
    /// The table of 2^`BITS` words, filled with scrambled small values (so
    /// that answers, and the workloads' checksums, depend on the key).
    ///
    /// # Panics
    /// When `BITS` is not in 1..=30 (a table of at most 4 GiB), at compile
    /// time.
    pub fn sized() -> Self {
        const { assert!(BITS >= 1 && BITS <= 30, "a ceiling indexes with 1 to 30 bits") };
        Ceiling { table: LookupArray::from_fn(1 << BITS, |index| (index as u32).wrapping_mul(0x9e37_79b9) >> 24) }
    }
}

impl<A: Address, const BITS: u8> Fib<A> for Ceiling<BITS> {
    fn name(&self) -> &str {
        NAME
    }

    #[inline]
    fn lookup(&self, addr: A) -> NextHop {
        let index = (addr.to_u128() as u64 >> (A::BITS.min(64) - BITS)) as usize;
        debug_assert!(index < self.table.len());
        // SAFETY: the top BITS bits of the key's low min(A::BITS, 64) bits
        // are below 2^BITS, the table's length (BITS <= 30 < 32, new's
        // assertion).
        unsafe { *self.table.get_unchecked(index) }
    }

    fn footprint(&self) -> usize {
        self.table.len() * 4
    }

    fn stats(&self) -> Stats {
        Stats::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_reads_the_word_of_its_top_bits() {
        let ceiling = Ceiling::new();
        let expected = |index: u32| index.wrapping_mul(0x9e37_79b9) >> 24;
        assert_eq!(Fib::<u32>::lookup(&ceiling, 0x0000_3fff), expected(0));
        assert_eq!(Fib::<u32>::lookup(&ceiling, 0xffff_ffff), expected((1 << 18) - 1));
        assert_eq!(Fib::<u128>::lookup(&ceiling, 0x2001 << 112 | 5 << 46), expected(5));
        assert_eq!(Fib::<u128>::lookup(&ceiling, 0x2001 << 112 | 5 << 110 | 0x3fff_ffff_ffff), expected(0));
        assert_eq!(Fib::<u32>::footprint(&ceiling), 1 << 20);
    }

    #[test]
    fn a_wider_ceiling_indexes_with_more_bits() {
        let ceiling = Ceiling::<20>::sized();
        let expected = |index: u32| index.wrapping_mul(0x9e37_79b9) >> 24;
        assert_eq!(Fib::<u32>::lookup(&ceiling, 0x0000_0fff), expected(0));
        assert_eq!(Fib::<u32>::lookup(&ceiling, 0xffff_ffff), expected((1 << 20) - 1));
        assert_eq!(Fib::<u32>::lookup(&ceiling, 0x0000_1000), expected(1));
        assert_eq!(Fib::<u32>::footprint(&ceiling), 4 << 20);
    }
}
