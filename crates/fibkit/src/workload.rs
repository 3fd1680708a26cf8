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

/// Runs `lookups` lookups of `workload` against `fib` and returns the
/// checksum (wrapping sum of the next hops). Generic so that each engine
/// gets its own loop with `lookup` inlined.
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
        (test, batch) => run_batched(fib, test, batch, &mut rng, lookups),
    }
}

fn run_batched<F: Fib4 + ?Sized>(
    fib: &F,
    test: &Test,
    batch: usize,
    rng: &mut XorShift32,
    lookups: u64,
) -> u64 {
    let mut keys = [0u32; MAX_BATCH];
    let mut out = [0 as NextHop; MAX_BATCH];
    let mut checksum = 0u64;
    let mut done = 0u64;
    let mut window = [0u32; REP_WINDOW];
    if *test == Test::Rep {
        for slot in &mut window {
            *slot = rng.next();
        }
    }
    let mut step = 0usize;
    let mut cursor = 0usize;
    while done < lookups {
        let count = batch.min((lookups - done) as usize);
        match test {
            Test::Rnd | Test::Seq => {
                for key in &mut keys[..count] {
                    *key = rng.next();
                }
            }
            Test::Rep => {
                for chunk in keys[..count].chunks_mut(REP_WINDOW) {
                    window[step % REP_WINDOW] = rng.next();
                    step += 1;
                    chunk.copy_from_slice(&window[..chunk.len()]);
                }
            }
            Test::Keys(source) => {
                if source.is_empty() {
                    return 0;
                }
                for key in &mut keys[..count] {
                    *key = source[cursor];
                    cursor = if cursor + 1 == source.len() { 0 } else { cursor + 1 };
                }
            }
        }
        fib.lookup_batch(&keys[..count], &mut out[..count]);
        for &hop in &out[..count] {
            checksum = checksum.wrapping_add(u64::from(hop));
        }
        done += count as u64;
    }
    checksum
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
        for test in [Test::Rnd, Test::Keys(vec![1, 2, 3, 0x1ff].into())] {
            let (scalar_keys, scalar_sum) = recorded(test.clone(), 0, 1000);
            for batch in [1, 7, 64, 256] {
                let (batch_keys, batch_sum) = recorded(test.clone(), batch, 1000);
                assert!(batch_keys == scalar_keys, "{} batch {batch}: keys differ", test.name());
                assert_eq!(batch_sum, scalar_sum);
            }
        }
        let (rep_batched, _) = recorded(Test::Rep, 64, 800);
        let (rep_scalar, _) = recorded(Test::Rep, 0, 800);
        assert!(rep_batched == rep_scalar, "rep: batched keys differ from scalar");
    }
}
