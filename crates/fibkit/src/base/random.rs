//! Random keys: the generators behind the benchmarks' key streams and the
//! random sweeps, and one [`KeyGen`] per address width.
//!
//! - [`XorShift32`]: Marsaglia's xorshift32, the DXR and Poptrie papers'
//!   key generator. One chain is six dependent operations a key, which caps
//!   a core near 6 cycles a key (about 430 M keys/s at 2.6 GHz): enough
//!   for scalar lookups.
//! - [`XorShift32x16`]: sixteen xorshift32 lanes stepped together in
//!   vector registers, a fraction of a cycle a key: the source of batched
//!   IPv4 keys, which aim past that cap.
//! - [`XorShift64Pair`]: two xorshift64 chains side by side, one per half
//!   of a 128-bit key: scalar IPv6 keys.
//! - [`XorShift64x16`]: sixteen xorshift64 lanes stepped together, eight
//!   128-bit keys a step: the source of batched IPv6 keys (one pair's
//!   chain of dependent steps capped the batch paths below their own rate).
//!
//! [`Keys32`] and [`Keys128`] draw uniform keys inside a prefix (the key
//! space) from them; [`Keyed::Keys`] names the one of each family, so a
//! benchmark loop is written once for both.

use crate::addr::{Address, Prefix, Prefix6};
use crate::NextHop;

/// The global unicast space 2000::/3, where IPv6 random keys are drawn by
/// default.
pub const GLOBAL_UNICAST: (u128, u8) = (0x2000 << 112, 3);

/// The Poptrie paper's IPv6 key space, 2000::/8.
pub const POPTRIE_PAPER_SPACE: (u128, u8) = (0x2000 << 112, 8);

/// A key space given as `(network, prefix_len)` as a [`Prefix6`].
pub fn key_space((network, prefix_len): (u128, u8)) -> Prefix6 {
    Prefix6::new(network, prefix_len).expect("the key space constants have no host bits")
}

/// Uniform random keys of one family inside a prefix.
///
/// Two streams: [`KeyGen::next`], one key at a time, and the batched stream
/// ([`KeyGen::fill`]) whose state, [`KeyGen::Lanes`], is kept apart so that
/// the one-at-a-time loop keeps its generator in a register.
pub trait KeyGen<A: Address>: Clone + Send {
    /// The state of the batched stream.
    type Lanes: Clone + Send;

    /// The space random keys of this family are drawn from by default:
    /// all of IPv4, and the global unicast 2000::/3 for IPv6 (a uniform
    /// 128-bit key almost never hits a route).
    fn default_space() -> Prefix<A>;

    /// Keys inside `space`, drawn from `seed`.
    fn new(space: Prefix<A>, seed: u64) -> Self;

    /// The next key.
    #[allow(clippy::should_implement_trait)]
    fn next(&mut self) -> A;

    /// The next key XORed with `previous` (SEQ's dependency on the last
    /// answer), still inside the space.
    fn next_after(&mut self, previous: NextHop) -> A;

    /// The batched stream's state, seeded from `seed`.
    fn lanes(&self, seed: u64) -> Self::Lanes;

    /// Fills `keys` with the next keys of the batched stream, inside the
    /// space, as fast as the generator allows (for IPv4 not the keys
    /// [`KeyGen::next`] gives).
    fn fill(&self, lanes: &mut Self::Lanes, keys: &mut [A]);
}

/// An address type with its generator of uniform random keys (benchmarks
/// and random sweeps): `u32` draws with [`Keys32`], `u128` with
/// [`Keys128`]. Kept apart from [`Address`], so that the addresses do not
/// depend on the generators that draw them.
pub trait Keyed: Address {
    /// The generator of uniform random keys of this family.
    type Keys: KeyGen<Self>;
}

impl Keyed for u32 {
    type Keys = Keys32;
}

impl Keyed for u128 {
    type Keys = Keys128;
}

/// Marsaglia's xorshift32: the key generator of every random test.
#[derive(Clone, Copy, Debug)]
pub struct XorShift32(u32);

impl XorShift32 {
    /// A generator from `seed` (any seed; zero is remapped).
    pub fn new(seed: u64) -> Self {
        let folded = (seed ^ (seed >> 32)) as u32;
        XorShift32(if folded == 0 { 0x9e37_79b9 } else { folded })
    }

    /// The next key.
    #[inline(always)]
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }
}

/// Sixteen independent [`XorShift32`] lanes stepped together: the key
/// source of batched RND. The compiler turns a step into a few vector
/// shifts and XORs, so a key costs a fraction of a cycle.
#[derive(Clone, Copy, Debug)]
pub struct XorShift32x16([u32; XorShift32x16::LANES]);

impl XorShift32x16 {
    /// Lanes stepped at once.
    pub const LANES: usize = 16;

    /// Sixteen generators, each seeded from `seed` and its lane number
    /// (SplitMix64 finaliser), none zero.
    pub fn new(seed: u64) -> Self {
        XorShift32x16(std::array::from_fn(|lane| XorShift32::new(lane_seed(seed, lane)).0))
    }

    /// Fills `keys` with the next keys: lane `i` gives every key at an
    /// index `i` modulo 16 (a final partial step uses the first lanes).
    ///
    /// Never inlined: compiled on its own, the steps are vector shifts and
    /// XORs; inlined into a large benchmark loop, the compiler has been
    /// seen to step the lanes one by one, which cost the batch paths a
    /// fifth of their rate.
    #[inline(never)]
    pub fn fill(&mut self, keys: &mut [u32]) {
        let (blocks, rest) = keys.as_chunks_mut::<{ Self::LANES }>();
        for block in blocks {
            self.step();
            *block = self.0;
        }
        if !rest.is_empty() {
            self.step();
            rest.copy_from_slice(&self.0[..rest.len()]);
        }
    }

    /// Steps every lane once.
    #[inline(always)]
    fn step(&mut self) {
        for state in &mut self.0 {
            *state ^= *state << 13;
            *state ^= *state >> 17;
            *state ^= *state << 5;
        }
    }
}

/// The seed of benchmark worker `thread`'s generators (the same in every
/// run): `fibkit bench`'s and, bit for bit, the C benchmark's
/// (`crates/fibkit-c/examples/bench_keys.h`), so that both draw one stream.
pub fn worker_seed(thread: usize) -> u64 {
    (thread as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// The seed of lane `lane` of a multi-lane generator seeded with `seed`.
fn lane_seed(seed: u64, lane: usize) -> u64 {
    split_mix(seed.wrapping_add((lane as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)))
}

/// SplitMix64's finaliser: spreads nearby seeds over the state space.
fn split_mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Two Marsaglia xorshift64 generators side by side, one per half of a
/// 128-bit key. The halves are independent chains, so the CPU steps both
/// at once: a key costs about as much as one xorshift64 step.
#[derive(Clone, Copy, Debug)]
pub struct XorShift64Pair {
    high: u64,
    low: u64,
}

impl XorShift64Pair {
    /// A generator from `seed` (any seed; the two halves get distinct,
    /// non-zero states).
    pub fn new(seed: u64) -> Self {
        let nonzero = |state: u64| if state == 0 { 0x9e37_79b9_7f4a_7c15 } else { state };
        XorShift64Pair {
            high: nonzero(split_mix(seed)),
            low: nonzero(split_mix(seed.wrapping_add(0x9e37_79b9_7f4a_7c15))),
        }
    }

    #[inline(always)]
    fn step(mut x: u64) -> u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }

    /// The next 128 random bits.
    #[inline(always)]
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u128 {
        self.high = Self::step(self.high);
        self.low = Self::step(self.low);
        (u128::from(self.high) << 64) | u128::from(self.low)
    }
}

/// Sixteen independent xorshift64 lanes stepped together: the key source
/// of batched IPv6 RND. A step gives eight 128-bit keys, lane `i` the high
/// half of key `i` and lane `i + 8` its low half; as for
/// [`XorShift32x16`], the compiler turns a step into vector shifts and
/// XORs.
#[derive(Clone, Copy, Debug)]
pub struct XorShift64x16([u64; XorShift64x16::LANES]);

impl XorShift64x16 {
    /// Lanes stepped at once.
    pub const LANES: usize = 16;

    /// Keys a step.
    pub const KEYS: usize = Self::LANES / 2;

    /// Sixteen generators, each seeded from `seed` and its lane number
    /// (SplitMix64 finaliser), none zero.
    pub fn new(seed: u64) -> Self {
        XorShift64x16(std::array::from_fn(|lane| match lane_seed(seed, lane) {
            0 => 0x9e37_79b9_7f4a_7c15,
            state => state,
        }))
    }

    /// Fills `keys` with the next keys, eight a step (a final partial
    /// step uses the first lanes). Never inlined, as [`XorShift32x16::fill`].
    ///
    /// The lanes are stepped in a local copy, which stays in registers:
    /// keys assembled from the lanes as stored after each step read
    /// across two stores, which the CPU cannot forward (a quarter of the
    /// rate).
    pub fn fill(&mut self, keys: &mut [u128]) {
        self.fill_inside(keys, 0, u128::MAX);
    }

    /// [`XorShift64x16::fill`], each key then `network | key & host_mask`
    /// (in the same pass: a second pass over the keys cost a third of the
    /// rate).
    #[inline(never)]
    pub fn fill_inside(&mut self, keys: &mut [u128], network: u128, host_mask: u128) {
        let mut lanes = self.0;
        let (network_high, network_low) = ((network >> 64) as u64, network as u64);
        let (mask_high, mask_low) = ((host_mask >> 64) as u64, host_mask as u64);
        let key = |lanes: &[u64; Self::LANES], lane: usize| {
            let high = network_high | lanes[lane] & mask_high;
            let low = network_low | lanes[lane + Self::KEYS] & mask_low;
            u128::from(high) << 64 | u128::from(low)
        };
        // Whole steps, then the last partial one.
        let (blocks, rest) = keys.as_chunks_mut::<{ Self::KEYS }>();
        #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
        Self::fill_steps_avx2(&mut lanes, blocks, [network_high, network_low], [mask_high, mask_low]);
        #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
        for block in blocks {
            for state in &mut lanes {
                *state = XorShift64Pair::step(*state);
            }
            *block = std::array::from_fn(|lane| key(&lanes, lane));
        }
        if !rest.is_empty() {
            for state in &mut lanes {
                *state = XorShift64Pair::step(*state);
            }
            for (lane, slot) in rest.iter_mut().enumerate() {
                *slot = key(&lanes, lane);
            }
        }
        self.0 = lanes;
    }

    /// Whole steps of [`Self::fill_inside`] in AVX2 registers (which this
    /// build targets): the sixteen lanes in four, each step's eight keys
    /// masked, interleaved from their halves and stored two a store. LLVM
    /// assembles each 128-bit key from scalar halves otherwise, which cost
    /// the IPv6 batch benchmarks about a third of their time.
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    #[inline(always)]
    fn fill_steps_avx2(
        lanes: &mut [u64; Self::LANES],
        blocks: &mut [[u128; Self::KEYS]],
        network: [u64; 2],
        host_mask: [u64; 2],
    ) {
        // SAFETY: AVX2 is enabled for the whole build (the `cfg`); the
        // loads and stores are unaligned, each of 4 of the 16 lanes or 2
        // of a block's 8 keys.
        unsafe {
            use std::arch::x86_64::*;
            let mut state: [__m256i; 4] =
                std::array::from_fn(|quarter| _mm256_loadu_si256(lanes.as_ptr().add(4 * quarter).cast()));
            let [network_high, network_low] = network.map(|half| _mm256_set1_epi64x(half as i64));
            let [mask_high, mask_low] = host_mask.map(|half| _mm256_set1_epi64x(half as i64));
            for block in blocks {
                for x in &mut state {
                    *x = _mm256_xor_si256(*x, _mm256_slli_epi64::<13>(*x));
                    *x = _mm256_xor_si256(*x, _mm256_srli_epi64::<7>(*x));
                    *x = _mm256_xor_si256(*x, _mm256_slli_epi64::<17>(*x));
                }
                // Keys 4h..4h+3: high halves from lanes 4h.., low ones from 8 + 4h..
                for half in 0..2 {
                    let high = _mm256_or_si256(network_high, _mm256_and_si256(state[half], mask_high));
                    let low = _mm256_or_si256(network_low, _mm256_and_si256(state[2 + half], mask_low));
                    // (low0, high0 | low2, high2) and (low1, high1 | low3, high3).
                    let even = _mm256_unpacklo_epi64(low, high);
                    let odd = _mm256_unpackhi_epi64(low, high);
                    let keys = block.as_mut_ptr().add(4 * half).cast::<__m256i>();
                    _mm256_storeu_si256(keys, _mm256_permute2x128_si256::<0x20>(even, odd));
                    _mm256_storeu_si256(keys.add(1), _mm256_permute2x128_si256::<0x31>(even, odd));
                }
            }
            for (quarter, x) in state.iter().enumerate() {
                _mm256_storeu_si256(lanes.as_mut_ptr().add(4 * quarter).cast(), *x);
            }
        }
    }
}

/// Uniform IPv4 keys inside a prefix: scalar keys from one [`XorShift32`]
/// (the papers' stream: with the default space, exactly its values),
/// batches from an [`XorShift32x16`] seeded alike.
#[derive(Clone, Copy, Debug)]
pub struct Keys32 {
    rng: XorShift32,
    network: u32,
    host_mask: u32,
}

impl KeyGen<u32> for Keys32 {
    type Lanes = XorShift32x16;

    fn default_space() -> Prefix<u32> {
        Prefix::default_route()
    }

    fn new(space: Prefix<u32>, seed: u64) -> Self {
        Keys32 { rng: XorShift32::new(seed), network: space.addr(), host_mask: !u32::mask(space.prefix_len()) }
    }

    #[inline(always)]
    fn next(&mut self) -> u32 {
        self.network | (self.rng.next() & self.host_mask)
    }

    #[inline(always)]
    fn next_after(&mut self, previous: NextHop) -> u32 {
        self.network | ((self.rng.next() ^ previous) & self.host_mask)
    }

    fn lanes(&self, seed: u64) -> XorShift32x16 {
        XorShift32x16::new(seed)
    }

    #[inline]
    fn fill(&self, lanes: &mut XorShift32x16, keys: &mut [u32]) {
        lanes.fill(keys);
        if self.host_mask != u32::MAX {
            for key in keys {
                *key = self.network | (*key & self.host_mask);
            }
        }
    }
}

/// Uniform IPv6 keys inside a prefix: the network bits fixed, the host bits
/// from an [`XorShift64Pair`] (batches: an [`XorShift64x16`]).
#[derive(Clone, Copy, Debug)]
pub struct Keys128 {
    rng: XorShift64Pair,
    network: u128,
    host_mask: u128,
}

impl KeyGen<u128> for Keys128 {
    type Lanes = XorShift64x16;

    fn default_space() -> Prefix<u128> {
        key_space(GLOBAL_UNICAST)
    }

    fn new(space: Prefix<u128>, seed: u64) -> Self {
        Keys128 { rng: XorShift64Pair::new(seed), network: space.addr(), host_mask: !u128::mask(space.prefix_len()) }
    }

    #[inline(always)]
    fn next(&mut self) -> u128 {
        self.network | (self.rng.next() & self.host_mask)
    }

    #[inline(always)]
    fn next_after(&mut self, previous: NextHop) -> u128 {
        self.network | ((self.rng.next() ^ u128::from(previous)) & self.host_mask)
    }

    fn lanes(&self, seed: u64) -> XorShift64x16 {
        XorShift64x16::new(seed)
    }

    #[inline]
    fn fill(&self, lanes: &mut XorShift64x16, keys: &mut [u128]) {
        lanes.fill_inside(keys, self.network, self.host_mask);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xorshift_is_deterministic_and_never_zero() {
        let mut a = XorShift32::new(7);
        let mut b = XorShift32::new(7);
        let first: Vec<u32> = (0..100).map(|_| a.next()).collect();
        assert_eq!(first, (0..100).map(|_| b.next()).collect::<Vec<_>>());
        assert!(first.iter().all(|&key| key != 0));
        let mut zero = XorShift32::new(0);
        assert_ne!(zero.next(), 0);
    }

    #[test]
    fn sixteen_lanes_are_independent_and_uniform() {
        let mut lanes = XorShift32x16::new(7);
        let mut keys = vec![0u32; 1 << 16];
        lanes.fill(&mut keys);
        let mut again = XorShift32x16::new(7);
        let mut first = [0u32; 16];
        again.fill(&mut first);
        assert_eq!(first[..], keys[..16]);
        let distinct: std::collections::HashSet<u32> = first.iter().copied().collect();
        assert_eq!(distinct.len(), 16, "lanes seeded alike");
        for bit in 0..32 {
            let ones = keys.iter().filter(|&&key| key >> bit & 1 == 1).count() as f64;
            let share = ones / keys.len() as f64;
            assert!((share - 0.5).abs() < 0.01, "bit {bit} set in {share:.3} of keys");
        }
        let mut top_bytes = [0u32; 256];
        for &key in &keys {
            top_bytes[(key >> 24) as usize] += 1;
        }
        // 256 keys expected per bucket; a skewed stream leaves some far off.
        assert!(top_bytes.iter().all(|&count| (160..=352).contains(&count)), "{top_bytes:?}");
    }

    #[test]
    fn generator_is_deterministic_and_fills_both_halves() {
        let draw = |seed| {
            let mut rng = XorShift64Pair::new(seed);
            (0..1000).map(|_| rng.next()).collect::<Vec<u128>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
        let keys = draw(0);
        assert!(keys.iter().all(|&key| key >> 64 != 0 && key as u64 != 0), "a half stuck at zero");
        // Every bit position is set in some key and clear in another.
        let ones = keys.iter().fold(0u128, |bits, &key| bits | key);
        let zeros = keys.iter().fold(0u128, |bits, &key| bits | !key);
        assert_eq!((ones, zeros), (u128::MAX, u128::MAX));
        assert!(keys.iter().all(|&key| (key >> 64) as u64 != key as u64), "halves in lockstep");
    }

    #[test]
    fn sixty_four_bit_lanes_are_independent_and_uniform() {
        let mut lanes = XorShift64x16::new(7);
        let mut keys = vec![0u128; 1 << 14];
        lanes.fill(&mut keys);
        let mut again = XorShift64x16::new(7);
        let mut first = [0u128; 3];
        again.fill(&mut first);
        assert_eq!(first[..], keys[..3], "a partial step gives the first lanes");
        let distinct: std::collections::HashSet<u128> = keys.iter().copied().collect();
        assert_eq!(distinct.len(), keys.len());
        assert!(keys.iter().all(|&key| (key >> 64) as u64 != key as u64), "halves in lockstep");
        for bit in 0..128 {
            let ones = keys.iter().filter(|&&key| key >> bit & 1 == 1).count() as f64;
            let share = ones / keys.len() as f64;
            assert!((share - 0.5).abs() < 0.02, "bit {bit} set in {share:.3} of keys");
        }
        assert_ne!(XorShift64x16::new(8).0, XorShift64x16::new(7).0);
    }

    #[test]
    fn keys_stay_inside_their_space() {
        for (prefix, top_bits) in [(Keys128::default_space(), 3), ("2000::/8".parse().unwrap(), 8)] {
            let prefix: Prefix<u128> = prefix;
            let mut gen = Keys128::new(prefix, 3);
            let keys: Vec<u128> = (0..10_000).map(|_| gen.next()).collect();
            assert!(keys.iter().all(|&key| prefix.contains(key)), "{prefix}: a key outside");
            // The host bits vary: the first bit below the prefix takes both values.
            let below = 127 - top_bits;
            assert!(keys.iter().any(|&key| key >> below & 1 == 1));
            assert!(keys.iter().any(|&key| key >> below & 1 == 0));
            let mut again = Keys128::new(prefix, 3);
            assert!(keys.iter().all(|&key| key == again.next()), "{prefix}: not deterministic");
        }
        assert_eq!(Keys128::default_space().to_string(), "2000::/3");
        // IPv4 keys in a space: the scalar and the batch stream stay inside.
        let prefix: Prefix<u32> = "10.128.0.0/9".parse().unwrap();
        let mut gen = Keys32::new(prefix, 5);
        let mut batch = [0u32; 100];
        gen.fill(&mut gen.lanes(5), &mut batch);
        assert!(batch.iter().chain(&[gen.next(), gen.next_after(0xffff)]).all(|&key| prefix.contains(key)));
        // The default space gives the papers' stream itself.
        let (mut keys, mut rng) = (Keys32::new(Keys32::default_space(), 9), XorShift32::new(9));
        assert!((0..100).all(|_| keys.next() == rng.next()));
    }
}
