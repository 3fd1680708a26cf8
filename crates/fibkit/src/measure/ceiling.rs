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

use crate::addr::Address;
use crate::fib::{Fib, Stats};
use crate::mem::LookupArray;
use crate::NextHop;

/// The ceiling's name, as reports list it beside the engines.
pub const NAME: &str = "ceiling";

/// Bits of a key that index the table: 2^18 words of 4 bytes, 1 MiB.
const INDEX_BITS: u8 = 18;

/// One load from a 1 MiB table per lookup (module docs).
pub struct Ceiling {
    table: LookupArray<u32>,
}

impl Default for Ceiling {
    fn default() -> Self {
        Self::new()
    }
}

impl Ceiling {
    /// The table, filled with scrambled small values (so that answers, and
    /// the workloads' checksums, depend on the key).
    pub fn new() -> Self {
        Ceiling { table: LookupArray::from_fn(1 << INDEX_BITS, |index| (index as u32).wrapping_mul(0x9e37_79b9) >> 24) }
    }
}

impl<A: Address> Fib<A> for Ceiling {
    fn name(&self) -> &str {
        NAME
    }

    #[inline]
    fn lookup(&self, addr: A) -> NextHop {
        let index = (addr.to_u128() as u64 >> (A::BITS.min(64) - INDEX_BITS)) as usize;
        debug_assert!(index < self.table.len());
        // SAFETY: the top INDEX_BITS bits of the key's low min(BITS, 64) bits
        // are below 2^INDEX_BITS, the table's length.
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
}
