//! Fast seeded hashing for the writer's tables (the RIB's index, the
//! next-hop table): foldhash's folded multiply, a 64 x 64 -> 128-bit
//! product whose halves are XORed, keyed by a seed drawn from the standard
//! library's random state. A few instructions a word where SipHash, the
//! standard `HashMap`'s, takes about a hundred; the seed keeps a neighbour
//! that chooses its prefixes or next hops from aiming them at one bucket.

use std::hash::{BuildHasher, Hasher, RandomState};

/// The 64 bits of `a * b` folded onto each other.
#[inline(always)]
pub(crate) fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

/// Odd constants of the mixing (the fractional parts of pi and of the
/// golden ratio).
pub(crate) const MIX: [u64; 2] = [0x243f_6a88_85a3_08d3, 0x9e37_79b9_7f4a_7c15];

/// Two fresh seeds.
pub(crate) fn seeds() -> [u64; 2] {
    let state = RandomState::new();
    [state.hash_one(0u8), state.hash_one(1u8)]
}

/// A [`BuildHasher`] of [`FoldHasher`]s sharing one seed.
#[derive(Clone, Debug)]
pub(crate) struct FoldState {
    seed: u64,
}

impl Default for FoldState {
    fn default() -> Self {
        FoldState { seed: seeds()[0] }
    }
}

impl BuildHasher for FoldState {
    type Hasher = FoldHasher;

    #[inline]
    fn build_hasher(&self) -> FoldHasher {
        FoldHasher { state: self.seed }
    }
}

/// A hasher folding each word into its state by one multiply.
#[derive(Clone, Debug)]
pub(crate) struct FoldHasher {
    state: u64,
}

impl Hasher for FoldHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u8(&mut self, value: u8) {
        self.write_u64(u64::from(value));
    }

    #[inline]
    fn write_u16(&mut self, value: u16) {
        self.write_u64(u64::from(value));
    }

    #[inline]
    fn write_u32(&mut self, value: u32) {
        self.write_u64(u64::from(value));
    }

    #[inline]
    fn write_u64(&mut self, value: u64) {
        self.state = fold(self.state ^ value, MIX[0]);
    }

    #[inline]
    fn write_usize(&mut self, value: usize) {
        self.write_u64(value as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        fold(self.state, MIX[1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_keys_hash_alike_and_near_keys_apart() {
        let state = FoldState::default();
        assert_eq!(state.hash_one(12_345u64), state.hash_one(12_345u64));
        // Keys one bit apart spread over the buckets a table takes from
        // the low bits and the control bytes from the top 7.
        let mut low = std::collections::HashSet::new();
        let mut top = std::collections::HashSet::new();
        for key in 0..4096u64 {
            let hash = state.hash_one(key);
            low.insert(hash & 0xfff);
            top.insert(hash >> 57);
        }
        assert!(low.len() > 2400, "{} of 4096 low 12-bit values", low.len());
        assert_eq!(top.len(), 128);
        // Bytes hash as their words would.
        let (mut bytes, mut words) = (state.build_hasher(), state.build_hasher());
        bytes.write(&[1, 0, 0, 0, 0, 0, 0, 0, 2]);
        words.write_u64(1);
        words.write_u64(2);
        assert_eq!(bytes.finish(), words.finish());
        assert_ne!(FoldState::default().hash_one(7u64), FoldState::default().hash_one(7u64), "seeded");
    }
}
