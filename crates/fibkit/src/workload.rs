//! Benchmark workloads: the key streams of the DXR and Poptrie papers.
//!
//! - **SEQ**: each key is a fresh random value XORed with the previous
//!   lookup's result, so no lookup can start before the previous one ends.
//! - **RND**: independent uniformly random keys from an inline xorshift
//!   generator (no key array: the table keeps the cache to itself).
//! - **REP**: a sliding window of 8 random keys; each step draws one new key
//!   and looks up all 8, so every key is looked up 8 times in a short window.
//! - **Keys**: a given key array (real traffic), looked up in order, cycling.
//!
//! Every result is folded into a checksum that the caller prints, so the
//! compiler cannot drop the lookups. With `batch > 0` RND, REP and Keys go
//! through [`Fib4::lookup_batch`] in groups of `batch` keys drawn into a
//! small reused buffer (SEQ is inherently one by one).
//!
//! One xorshift32 generator is a chain of six dependent operations per key,
//! which caps a core near 6 cycles a key (about 430 M keys/s at 2.6 GHz):
//! enough for scalar lookups, not for batches that aim past it. Batched RND
//! therefore draws its keys from [`XorShift32x16`], sixteen independent
//! xorshift32 lanes stepped together in vector registers, so the keys cost
//! well under a cycle each. Its keys are as uniform as the scalar stream's
//! but not the same keys; [`run`] documents which stream each path uses.

use std::sync::Arc;

use crate::engine::Fib4;
use crate::NextHop;

/// Which key stream a workload uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Test {
    /// Dependent random keys.
    Seq,
    /// Independent random keys.
    Rnd,
    /// Each random key 8 times within a sliding window.
    Rep,
    /// Keys from an array, in order.
    Keys(Arc<[u32]>),
}

impl Test {
    /// Short name as used on the command line (`seq`, `rnd`, `rep`, `keys`).
    pub fn name(&self) -> &'static str {
        match self {
            Test::Seq => "seq",
            Test::Rnd => "rnd",
            Test::Rep => "rep",
            Test::Keys(_) => "keys",
        }
    }
}

/// A benchmark workload: a key stream, a batch length and a seed.
#[derive(Clone, Debug)]
pub struct Workload {
    /// The key stream.
    pub test: Test,
    /// 0 for scalar lookups, else the batch length for `lookup_batch`.
    pub batch: usize,
    /// Seed of the key generator (each worker thread uses its own).
    pub seed: u64,
}

/// Window length of the REP test (each key is looked up this many times).
pub const REP_WINDOW: usize = 8;

/// Largest batch length the batch path accepts.
pub const MAX_BATCH: usize = 4096;

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
        let mut lanes = [0u32; Self::LANES];
        for (lane, state) in lanes.iter_mut().enumerate() {
            let mut mixed = seed.wrapping_add((lane as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            mixed ^= mixed >> 31;
            *state = XorShift32::new(mixed).0;
        }
        XorShift32x16(lanes)
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

/// Runs `lookups` lookups of `workload` against `fib` and returns the
/// checksum (wrapping sum of the next hops). Generic so that each engine
/// gets its own loop with `lookup` inlined.
///
/// Scalar RND, SEQ and REP draw from one [`XorShift32`] seeded with
/// `workload.seed`, as the DXR and Poptrie papers do; batched REP too (it
/// draws one key per eight lookups). Batched RND draws from
/// [`XorShift32x16`] with the same seed.
pub fn run<F: Fib4 + ?Sized>(fib: &F, workload: &Workload, lookups: u64) -> u64 {
    let mut rng = XorShift32::new(workload.seed);
    let batch = workload.batch.min(MAX_BATCH);
    match (&workload.test, batch) {
        (Test::Seq, _) => {
            let mut checksum = 0u64;
            let mut previous: NextHop = 0;
            for _ in 0..lookups {
                previous = fib.lookup(rng.next() ^ previous);
                checksum = checksum.wrapping_add(u64::from(previous));
            }
            checksum
        }
        (Test::Rnd, 0) => {
            let mut checksum = 0u64;
            for _ in 0..lookups {
                checksum = checksum.wrapping_add(u64::from(fib.lookup(rng.next())));
            }
            checksum
        }
        (Test::Rep, 0) => {
            let mut window = [0u32; REP_WINDOW];
            for slot in &mut window {
                *slot = rng.next();
            }
            let mut checksum = 0u64;
            let steps = lookups / REP_WINDOW as u64;
            for step in 0..steps {
                window[step as usize % REP_WINDOW] = rng.next();
                for &key in &window {
                    checksum = checksum.wrapping_add(u64::from(fib.lookup(key)));
                }
            }
            checksum
        }
        (Test::Keys(keys), 0) => {
            let mut checksum = 0u64;
            if keys.is_empty() {
                return 0;
            }
            let mut remaining = lookups;
            while remaining > 0 {
                let take = remaining.min(keys.len() as u64) as usize;
                for &key in &keys[..take] {
                    checksum = checksum.wrapping_add(u64::from(fib.lookup(key)));
                }
                remaining -= take as u64;
            }
            checksum
        }
        (test, batch) => run_batched(fib, test, batch, &mut rng, workload.seed, lookups),
    }
}

/// Where the batch paths' REP window and key-file cursor stand between
/// batches (for either key width).
struct BatchKeys<K> {
    /// The REP window, as the scalar path holds it.
    window: [K; REP_WINDOW],
    /// REP steps taken (each draws one key into the window).
    step: usize,
    /// Position in the window of the next REP key.
    offset: usize,
    /// Position in the key file of the next key.
    cursor: usize,
}

impl<K: Copy> BatchKeys<K> {
    fn new(window: [K; REP_WINDOW]) -> Self {
        BatchKeys { window, step: 0, offset: 0, cursor: 0 }
    }

    /// The next REP keys. The window position carries over between
    /// batches, so any batch length gives the scalar path's keys.
    #[inline]
    fn fill_rep(&mut self, keys: &mut [K], mut draw: impl FnMut() -> K) {
        for key in keys {
            if self.offset == 0 {
                self.window[self.step % REP_WINDOW] = draw();
                self.step += 1;
            }
            *key = self.window[self.offset];
            self.offset = (self.offset + 1) % REP_WINDOW;
        }
    }

    /// The next keys of `source` (not empty), in order, cycling.
    #[inline]
    fn fill_cycling(&mut self, keys: &mut [K], source: &[K]) {
        for key in keys {
            *key = source[self.cursor];
            self.cursor = if self.cursor + 1 == source.len() { 0 } else { self.cursor + 1 };
        }
    }
}

fn run_batched<F: Fib4 + ?Sized>(
    fib: &F,
    test: &Test,
    batch: usize,
    rng: &mut XorShift32,
    seed: u64,
    lookups: u64,
) -> u64 {
    let mut keys = [0u32; MAX_BATCH];
    let mut out = [0 as NextHop; MAX_BATCH];
    let mut checksum = 0u64;
    let mut streams = BatchKeys::new(if *test == Test::Rep { std::array::from_fn(|_| rng.next()) } else { [0; REP_WINDOW] });
    let mut lanes = XorShift32x16::new(seed);
    if matches!(test, Test::Keys(source) if source.is_empty()) {
        return 0;
    }
    for count in batch_lengths(batch, lookups) {
        match test {
            Test::Rnd | Test::Seq => lanes.fill(&mut keys[..count]),
            Test::Rep => streams.fill_rep(&mut keys[..count], || rng.next()),
            Test::Keys(source) => streams.fill_cycling(&mut keys[..count], source),
        }
        fib.lookup_batch(&keys[..count], &mut out[..count]);
        for &hop in &out[..count] {
            checksum = checksum.wrapping_add(u64::from(hop));
        }
    }
    checksum
}

/// The lengths of the batches that make up `lookups` lookups: `batch`
/// each, then the rest.
fn batch_lengths(batch: usize, lookups: u64) -> impl Iterator<Item = usize> {
    let full = lookups / batch as u64;
    let rest = (lookups % batch as u64) as usize;
    (0..full).map(move |_| batch).chain((rest > 0).then_some(rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Stats;

    /// An engine that records the keys it is asked for.
    struct Recorder {
        keys: std::sync::Mutex<Vec<u32>>,
    }

    impl Fib4 for Recorder {
        fn name(&self) -> &str {
            "recorder"
        }
        fn lookup(&self, addr: u32) -> NextHop {
            self.keys.lock().unwrap().push(addr);
            addr & 0xff
        }
        fn footprint(&self) -> usize {
            0
        }
        fn stats(&self) -> Stats {
            Stats::default()
        }
    }

    fn recorded(test: Test, batch: usize, lookups: u64) -> (Vec<u32>, u64) {
        let recorder = Recorder { keys: Default::default() };
        let workload = Workload { test, batch, seed: 42 };
        let checksum = run(&recorder, &workload, lookups);
        (recorder.keys.into_inner().unwrap(), checksum)
    }

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
    fn seq_chains_each_key_to_the_previous_result() {
        let (keys, checksum) = recorded(Test::Seq, 0, 50);
        let mut rng = XorShift32::new(42);
        let mut previous = 0;
        let mut expected_sum = 0u64;
        for &key in &keys {
            assert_eq!(key, rng.next() ^ previous);
            previous = key & 0xff;
            expected_sum += u64::from(previous);
        }
        assert_eq!(checksum, expected_sum);
    }

    #[test]
    fn rnd_uses_the_generator_directly() {
        let (keys, _) = recorded(Test::Rnd, 0, 20);
        let mut rng = XorShift32::new(42);
        assert!(keys.iter().all(|&key| key == rng.next()));
    }

    #[test]
    fn rep_looks_every_key_up_eight_times() {
        let (keys, _) = recorded(Test::Rep, 0, 8 * 100);
        assert_eq!(keys.len(), 800);
        let mut counts = std::collections::HashMap::new();
        for &key in &keys {
            *counts.entry(key).or_insert(0) += 1;
        }
        // Keys that entered and left the window during the run: exactly 8.
        let full = counts.values().filter(|&&count| count == REP_WINDOW).count();
        assert!(full >= 90, "only {full} keys looked up 8 times");
        assert!(counts.values().all(|&count| count <= REP_WINDOW));
    }

    #[test]
    fn batches_give_the_same_answers_as_scalar() {
        let keys = Test::Keys(vec![1, 2, 3, 0x1ff].into());
        let (scalar_keys, scalar_sum) = recorded(keys.clone(), 0, 1000);
        for batch in [1, 7, 64, 256] {
            let (batch_keys, batch_sum) = recorded(keys.clone(), batch, 1000);
            assert!(batch_keys == scalar_keys, "keys batch {batch}: keys differ");
            assert_eq!(batch_sum, scalar_sum);
        }
        let (rep_scalar, rep_sum) = recorded(Test::Rep, 0, 800);
        for batch in [1, 7, 13, 64, 100] {
            let (rep_batched, batched_sum) = recorded(Test::Rep, batch, 800);
            assert!(rep_batched == rep_scalar, "rep batch {batch}: batched keys differ from scalar");
            assert_eq!(batched_sum, rep_sum);
        }
    }

    #[test]
    fn batched_rnd_draws_the_sixteen_lane_stream() {
        let mut lanes = XorShift32x16::new(42);
        let mut stream = vec![0u32; 1024];
        lanes.fill(&mut stream);
        for batch in [16, 64, 256] {
            let (keys, checksum) = recorded(Test::Rnd, batch, 1024);
            assert!(keys == stream, "batch {batch}: not the lane stream");
            assert_eq!(checksum, stream.iter().map(|&key| u64::from(key & 0xff)).sum::<u64>());
        }
        // A batch that is not a multiple of 16 still gets fresh keys.
        let (odd, _) = recorded(Test::Rnd, 7, 700);
        let distinct: std::collections::HashSet<u32> = odd.iter().copied().collect();
        assert_eq!(distinct.len(), 700);
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
}

// ------------------------------------------------------------------ IPv6
//
// The IPv6 twins of the above, kept in their own functions: SEQ, RND, REP
// and Keys over `u128` keys through [`Fib6`]. A uniform 128-bit key almost
// never hits a route (announced space is a sliver of 2^128), so random keys
// are drawn inside a key space: 2000::/3 (global unicast) by default, or
// 2000::/8 as the Poptrie paper does, or any other prefix.

use crate::addr::{Address, Prefix6};
use crate::engine::Fib6;

/// The global unicast space 2000::/3, where IPv6 random keys are drawn by
/// default.
pub const GLOBAL_UNICAST: (u128, u8) = (0x2000 << 112, 3);

/// The Poptrie paper's IPv6 key space, 2000::/8.
pub const POPTRIE_PAPER_SPACE: (u128, u8) = (0x2000 << 112, 8);

/// A key space given as `(network, prefix_len)` as a [`Prefix6`].
pub fn key_space((network, prefix_len): (u128, u8)) -> Prefix6 {
    Prefix6::new(network, prefix_len).expect("the key space constants have no host bits")
}

/// Which key stream an IPv6 workload uses (the twin of [`Test`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Test6 {
    /// Dependent random keys.
    Seq,
    /// Independent random keys.
    Rnd,
    /// Each random key 8 times within a sliding window.
    Rep,
    /// Keys from an array, in order.
    Keys(Arc<[u128]>),
}

impl Test6 {
    /// Short name as used on the command line (`seq`, `rnd`, `rep`, `keys`).
    pub fn name(&self) -> &'static str {
        match self {
            Test6::Seq => "seq",
            Test6::Rnd => "rnd",
            Test6::Rep => "rep",
            Test6::Keys(_) => "keys",
        }
    }
}

/// An IPv6 benchmark workload: a key stream, a batch length, a seed and
/// the prefix random keys are drawn inside.
#[derive(Clone, Debug)]
pub struct Workload6 {
    /// The key stream.
    pub test: Test6,
    /// 0 for scalar lookups, else the batch length for `lookup_batch`.
    pub batch: usize,
    /// Seed of the key generator (each worker thread uses its own).
    pub seed: u64,
    /// Random keys (SEQ, RND, REP) are uniform inside this prefix.
    pub space: Prefix6,
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
        // SplitMix64's finaliser spreads nearby seeds over the state space.
        fn mix(mut z: u64) -> u64 {
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        let nonzero = |state: u64| if state == 0 { 0x9e37_79b9_7f4a_7c15 } else { state };
        XorShift64Pair {
            high: nonzero(mix(seed)),
            low: nonzero(mix(seed.wrapping_add(0x9e37_79b9_7f4a_7c15))),
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

/// Uniform random IPv6 keys inside a prefix: the network bits fixed, the
/// host bits from an [`XorShift64Pair`].
#[derive(Clone, Copy, Debug)]
pub struct KeyGen6 {
    rng: XorShift64Pair,
    network: u128,
    host_mask: u128,
}

impl KeyGen6 {
    /// Keys inside `space`, drawn from `seed`.
    pub fn new(space: Prefix6, seed: u64) -> Self {
        KeyGen6 { rng: XorShift64Pair::new(seed), network: space.addr(), host_mask: !u128::mask(space.prefix_len()) }
    }

    /// The next key.
    #[inline(always)]
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u128 {
        self.network | (self.rng.next() & self.host_mask)
    }

    /// The next key XORed with `previous` (SEQ's dependency), still inside
    /// the space.
    #[inline(always)]
    pub fn next_after(&mut self, previous: NextHop) -> u128 {
        self.network | ((self.rng.next() ^ u128::from(previous)) & self.host_mask)
    }
}

/// Runs `lookups` IPv6 lookups of `workload` against `fib` and returns the
/// checksum (wrapping sum of the next hops), as [`run`] does for IPv4.
pub fn run6<F: Fib6 + ?Sized>(fib: &F, workload: &Workload6, lookups: u64) -> u64 {
    let mut keys = KeyGen6::new(workload.space, workload.seed);
    let batch = workload.batch.min(MAX_BATCH);
    let mut checksum = 0u64;
    match (&workload.test, batch) {
        (Test6::Seq, _) => {
            let mut previous: NextHop = 0;
            for _ in 0..lookups {
                previous = fib.lookup(keys.next_after(previous));
                checksum = checksum.wrapping_add(u64::from(previous));
            }
        }
        (Test6::Rnd, 0) => {
            for _ in 0..lookups {
                checksum = checksum.wrapping_add(u64::from(fib.lookup(keys.next())));
            }
        }
        (Test6::Rep, 0) => {
            let mut window = [0u128; REP_WINDOW];
            for slot in &mut window {
                *slot = keys.next();
            }
            for step in 0..lookups / REP_WINDOW as u64 {
                window[step as usize % REP_WINDOW] = keys.next();
                for &key in &window {
                    checksum = checksum.wrapping_add(u64::from(fib.lookup(key)));
                }
            }
        }
        (Test6::Keys(source), 0) => {
            if source.is_empty() {
                return 0;
            }
            let mut remaining = lookups;
            while remaining > 0 {
                let take = remaining.min(source.len() as u64) as usize;
                for &key in &source[..take] {
                    checksum = checksum.wrapping_add(u64::from(fib.lookup(key)));
                }
                remaining -= take as u64;
            }
        }
        (test, batch) => return run_batched6(fib, test, batch, &mut keys, lookups),
    }
    checksum
}

/// [`run6`]'s batch path: RND, REP and Keys through [`Fib6::lookup_batch`],
/// with the same keys in the same order as the scalar path.
fn run_batched6<F: Fib6 + ?Sized>(fib: &F, test: &Test6, batch: usize, gen: &mut KeyGen6, lookups: u64) -> u64 {
    if matches!(test, Test6::Keys(source) if source.is_empty()) {
        return 0;
    }
    let mut keys = vec![0u128; batch];
    let mut out = vec![0 as NextHop; batch];
    let mut streams = BatchKeys::new(if *test == Test6::Rep { std::array::from_fn(|_| gen.next()) } else { [0; REP_WINDOW] });
    let mut checksum = 0u64;
    for count in batch_lengths(batch, lookups) {
        match test {
            Test6::Rnd | Test6::Seq => keys[..count].iter_mut().for_each(|key| *key = gen.next()),
            Test6::Rep => streams.fill_rep(&mut keys[..count], || gen.next()),
            Test6::Keys(source) => streams.fill_cycling(&mut keys[..count], source),
        }
        fib.lookup_batch(&keys[..count], &mut out[..count]);
        checksum = out[..count].iter().fold(checksum, |sum, &hop| sum.wrapping_add(u64::from(hop)));
    }
    checksum
}

#[cfg(test)]
mod tests6 {
    use super::*;
    use crate::engine::Stats;

    /// An IPv6 engine that records the keys it is asked for.
    struct Recorder6 {
        keys: std::sync::Mutex<Vec<u128>>,
    }

    impl Fib6 for Recorder6 {
        fn name(&self) -> &str {
            "recorder6"
        }
        fn lookup(&self, addr: u128) -> NextHop {
            self.keys.lock().unwrap().push(addr);
            (addr & 0xff) as NextHop
        }
        fn footprint(&self) -> usize {
            0
        }
        fn stats(&self) -> Stats {
            Stats::default()
        }
    }

    fn recorded(test: Test6, batch: usize, lookups: u64, space: Prefix6) -> (Vec<u128>, u64) {
        let recorder = Recorder6 { keys: Default::default() };
        let workload = Workload6 { test, batch, seed: 42, space };
        let checksum = run6(&recorder, &workload, lookups);
        (recorder.keys.into_inner().unwrap(), checksum)
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
    fn keys_stay_inside_their_space() {
        for (space, top_bits) in [(GLOBAL_UNICAST, 3), (POPTRIE_PAPER_SPACE, 8)] {
            let prefix = key_space(space);
            let mut gen = KeyGen6::new(prefix, 3);
            let keys: Vec<u128> = (0..10_000).map(|_| gen.next()).collect();
            assert!(keys.iter().all(|&key| prefix.contains(key)), "{prefix}: a key outside");
            // The host bits vary: the first bit below the prefix takes both values.
            let below = 127 - top_bits;
            assert!(keys.iter().any(|&key| key >> below & 1 == 1));
            assert!(keys.iter().any(|&key| key >> below & 1 == 0));
            let mut again = KeyGen6::new(prefix, 3);
            assert!(keys.iter().all(|&key| key == again.next()), "{prefix}: not deterministic");
        }
        assert_eq!(key_space(GLOBAL_UNICAST).to_string(), "2000::/3");
        assert_eq!(key_space(POPTRIE_PAPER_SPACE).to_string(), "2000::/8");
    }

    #[test]
    fn seq_chains_each_key_to_the_previous_result_inside_the_space() {
        let space = key_space(POPTRIE_PAPER_SPACE);
        let (keys, checksum) = recorded(Test6::Seq, 0, 200, space);
        let mut gen = KeyGen6::new(space, 42);
        let mut previous = 0;
        let mut expected_sum = 0u64;
        for &key in &keys {
            assert!(space.contains(key));
            assert_eq!(key, gen.next_after(previous));
            previous = (key & 0xff) as NextHop;
            expected_sum += u64::from(previous);
        }
        assert_eq!(keys.len(), 200);
        assert_eq!(checksum, expected_sum);
        // A space as narrow as a /126 keeps SEQ's keys inside it too.
        let narrow: Prefix6 = "2001:db8::/126".parse().unwrap();
        let (keys, _) = recorded(Test6::Seq, 0, 100, narrow);
        assert!(keys.iter().all(|&key| narrow.contains(key)));
    }

    #[test]
    fn rnd_and_rep_use_the_generator() {
        let space = key_space(GLOBAL_UNICAST);
        let (keys, _) = recorded(Test6::Rnd, 0, 50, space);
        let mut gen = KeyGen6::new(space, 42);
        assert!(keys.iter().all(|&key| key == gen.next()));
        let (keys, _) = recorded(Test6::Rep, 0, 8 * 100, space);
        assert_eq!(keys.len(), 800);
        let mut counts = std::collections::HashMap::new();
        for &key in &keys {
            *counts.entry(key).or_insert(0) += 1;
        }
        let full = counts.values().filter(|&&count| count == REP_WINDOW).count();
        assert!(full >= 90, "only {full} keys looked up 8 times");
        assert!(counts.values().all(|&count| count <= REP_WINDOW));
    }

    #[test]
    fn batches_give_the_same_keys_and_answers_as_scalar() {
        let space = key_space(GLOBAL_UNICAST);
        let given: Arc<[u128]> = vec![1, 2, 0x2001_0db8 << 96, u128::MAX].into();
        for test in [Test6::Rnd, Test6::Rep, Test6::Keys(given)] {
            let (scalar_keys, scalar_sum) = recorded(test.clone(), 0, 800, space);
            assert_eq!(scalar_keys.len(), 800);
            for batch in [1, 7, 64, 256] {
                let (batch_keys, batch_sum) = recorded(test.clone(), batch, 800, space);
                assert!(batch_keys == scalar_keys, "{} batch {batch}: keys differ", test.name());
                assert_eq!(batch_sum, scalar_sum, "{} batch {batch}", test.name());
            }
        }
        let (none, sum) = recorded(Test6::Keys(Vec::new().into()), 16, 100, space);
        assert_eq!((none.len(), sum), (0, 0));
    }
}
