//! Benchmark workloads: the key streams of the DXR and Poptrie papers, for
//! either address family.
//!
//! - **SEQ**: each key is a fresh random value XORed with the previous
//!   lookup's result, so no lookup can start before the previous one ends.
//! - **RND**: independent uniformly random keys from an inline xorshift
//!   generator (no key array: the table keeps the cache to itself).
//! - **REP**: a sliding window of 8 random keys; each step draws one new key
//!   and looks up all 8, so every key is looked up 8 times in a short window.
//! - **Sweep**: the Poptrie paper's "sequential": every address of the key
//!   space in increasing order from its first (0.0.0.0 for all of IPv4),
//!   wrapping around at its end.
//! - **Rep16**: the Poptrie paper's "repeated": each random key looked up
//!   16 times in a row.
//! - **Keys**: a given key array (real traffic), looked up in order, cycling.
//!
//! Random keys are uniform inside the workload's key space
//! ([`Workload::space`]): all of IPv4 by default, 2000::/3 for IPv6 (a
//! uniform 128-bit key almost never hits a route; the Poptrie paper draws
//! from 2000::/8, [`crate::random::POPTRIE_PAPER_SPACE`]). The family's
//! [`crate::random::KeyGen`] draws them.
//!
//! Every result is folded into a checksum that the caller prints, so the
//! compiler cannot drop the lookups. With `batch > 0` RND, REP and Keys go
//! through [`Lookups::lookup_batch`] in groups of `batch` keys drawn into a
//! small reused buffer (SEQ is inherently one by one). Batched RND draws
//! from [`KeyGen::fill`]: sixteen xorshift lanes stepped together
//! ([`crate::random::XorShift32x16`]; IPv6: [`crate::random::XorShift64x16`]),
//! as uniform as the scalar stream but not the same keys. [`run`] documents which stream each path
//! uses.
//!
//! The workloads sit below the engine trait, [`crate::fib::Fib`], whose
//! `run_workload` runs them: the loops look up through [`Lookups`], which
//! every engine implements through the trait. `fibkit::measure::workload`
//! is this module.

use std::sync::Arc;

use super::addr::{Address, Prefix};
use super::nexthop::NextHop;
use super::random::{KeyGen, Keyed};

/// What a workload looks up in: an engine's scalar and batch lookups
/// (every [`crate::fib::Fib`] is one). The loops are generic over it, so
/// that each engine gets its own loop with `lookup` inlined.
pub trait Lookups<A: Address> {
    /// Longest-prefix match for `key`.
    fn lookup(&self, key: A) -> NextHop;

    /// Looks up every key; `out[i]` gets the next hop of `keys[i]`.
    fn lookup_batch(&self, keys: &[A], out: &mut [NextHop]);
}

/// Which key stream a workload uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Test<A: Address = u32> {
    /// Dependent random keys.
    Seq,
    /// Independent random keys.
    Rnd,
    /// Each random key 8 times within a sliding window.
    Rep,
    /// Every address of the key space in increasing order.
    Sweep,
    /// Each random key 16 times in a row.
    Rep16,
    /// Keys from an array, in order.
    Keys(Arc<[A]>),
}

impl<A: Address> Test<A> {
    /// Short name as used on the command line (`seq`, `rnd`, `rep`,
    /// `sweep`, `rep16`, `keys`).
    pub fn name(&self) -> &'static str {
        match self {
            Test::Seq => "seq",
            Test::Rnd => "rnd",
            Test::Rep => "rep",
            Test::Sweep => "sweep",
            Test::Rep16 => "rep16",
            Test::Keys(_) => "keys",
        }
    }
}

/// A benchmark workload: a key stream, a batch length, a seed and the
/// prefix random keys are drawn inside.
#[derive(Clone, Debug)]
pub struct Workload<A: Address = u32> {
    /// The key stream.
    pub test: Test<A>,
    /// 0 for scalar lookups, else the batch length for `lookup_batch`.
    pub batch: usize,
    /// Seed of the key generator (each worker thread uses its own).
    pub seed: u64,
    /// Random keys (SEQ, RND, REP) are uniform inside this prefix.
    pub space: Prefix<A>,
}

impl<A: Keyed> Workload<A> {
    /// A workload drawing random keys from the family's default space
    /// ([`KeyGen::default_space`]).
    pub fn new(test: Test<A>, batch: usize, seed: u64) -> Self {
        Workload { test, batch, seed, space: A::Keys::default_space() }
    }
}

/// Window length of the REP test (each key is looked up this many times).
pub const REP_WINDOW: usize = 8;

/// How many times in a row REP16 looks up each key.
pub const REP16_RUN: usize = 16;

/// Largest batch length the batch path accepts.
pub const MAX_BATCH: usize = 4096;

/// Runs `lookups` lookups of `workload` against `fib` and returns the
/// checksum (wrapping sum of the next hops). Generic so that each engine
/// gets its own loop with `lookup` inlined.
///
/// Scalar RND, SEQ and REP draw from the family's [`KeyGen::next`] seeded
/// with `workload.seed` (for IPv4 one [`crate::random::XorShift32`], as the
/// DXR and Poptrie papers do); batched REP and REP16 too (they draw one key
/// per eight or sixteen lookups). Batched RND draws from [`KeyGen::fill`]
/// with the same seed. SWEEP draws nothing: every run starts at the first
/// address of the space, whatever the seed.
pub fn run<A: Keyed, F: Lookups<A> + ?Sized>(fib: &F, workload: &Workload<A>, lookups: u64) -> u64 {
    let mut rng = A::Keys::new(workload.space, workload.seed);
    let batch = workload.batch.min(MAX_BATCH);
    match (&workload.test, batch) {
        (Test::Seq, _) => {
            let mut checksum = 0u64;
            let mut previous: NextHop = 0;
            for _ in 0..lookups {
                previous = fib.lookup(rng.next_after(previous));
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
            let mut window = [A::ZERO; REP_WINDOW];
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
        (Test::Sweep, 0) => {
            let mut sweep = Sweep::new(workload.space);
            let mut checksum = 0u64;
            for _ in 0..lookups {
                checksum = checksum.wrapping_add(u64::from(fib.lookup(sweep.next())));
            }
            checksum
        }
        (Test::Rep16, 0) => {
            let mut checksum = 0u64;
            let mut key = A::ZERO;
            for lookup in 0..lookups {
                if lookup.is_multiple_of(REP16_RUN as u64) {
                    key = rng.next();
                }
                checksum = checksum.wrapping_add(u64::from(fib.lookup(key)));
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
        (_, batch) => run_batched(fib, workload, batch, &mut rng, lookups),
    }
}

/// SWEEP's cursor: the addresses of a prefix in increasing order, wrapping
/// from the last back to the first.
#[derive(Clone, Copy, Debug)]
pub struct Sweep<A> {
    first: A,
    last: A,
    cursor: A,
}

impl<A: Address> Sweep<A> {
    /// A sweep of `space` from its first address.
    pub fn new(space: Prefix<A>) -> Self {
        Sweep { first: space.first(), last: space.last(), cursor: space.first() }
    }

    /// The next address.
    #[inline]
    #[allow(clippy::should_implement_trait)] // endless: never `None`
    pub fn next(&mut self) -> A {
        let key = self.cursor;
        self.cursor = if key == self.last { self.first } else { key.checked_next().unwrap_or(self.first) };
        key
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
    /// Lookups of REP16 so far.
    repeated: usize,
}

impl<K: Copy> BatchKeys<K> {
    fn new(window: [K; REP_WINDOW]) -> Self {
        BatchKeys { window, step: 0, offset: 0, cursor: 0, repeated: 0 }
    }

    /// The next REP keys. The window position carries over between
    /// batches, so any batch length gives the scalar path's keys.
    ///
    /// The cursor lives in locals while the keys are written, and a round
    /// of eight steps that starts at slot 0 writes its windows whole (the
    /// slots are then constants, so the window stays in registers): key
    /// by key, through the fields, the batch paths paid about two cycles a
    /// key more for their keys than the scalar loop does. Measured and not
    /// kept, each slower in the ceiling's batched REP: each window copied
    /// from an array after its one new key (most likely the copy waits for
    /// the key's store), the round written slot by slot down its eight
    /// windows, and IPv6 keys stored from vector registers (figures in
    /// docs/measurements.md).
    #[inline]
    fn fill_rep(&mut self, mut keys: &mut [K], mut draw: impl FnMut() -> K) {
        const ROUND: usize = REP_WINDOW * REP_WINDOW;
        let (mut window, mut step, mut offset) = (self.window, self.step, self.offset);
        while offset == 0 && step.is_multiple_of(REP_WINDOW) && keys.len() >= ROUND {
            let (round, rest) = std::mem::take(&mut keys).split_at_mut(ROUND);
            // Step t replaces slot t: its window holds the fresh keys of
            // slots 0..=t and the old ones above.
            let mut fresh = window;
            fresh.iter_mut().for_each(|key| *key = draw());
            for (step, run) in round.chunks_exact_mut(REP_WINDOW).enumerate() {
                for (slot, key) in run.iter_mut().enumerate() {
                    *key = if slot <= step { fresh[slot] } else { window[slot] };
                }
            }
            window = fresh;
            step += REP_WINDOW;
            keys = rest;
        }
        for key in keys {
            if offset == 0 {
                window[step % REP_WINDOW] = draw();
                step += 1;
            }
            *key = window[offset];
            offset = (offset + 1) % REP_WINDOW;
        }
        (self.window, self.step, self.offset) = (window, step, offset);
    }

    /// The next REP16 keys: a new draw every [`REP16_RUN`] keys, carried
    /// over between batches as [`Self::fill_rep`] does. The key of the run
    /// under way is kept in the window's first slot.
    #[inline]
    fn fill_rep16(&mut self, mut keys: &mut [K], mut draw: impl FnMut() -> K) {
        while !keys.is_empty() {
            if self.repeated.is_multiple_of(REP16_RUN) {
                self.window[0] = draw();
            }
            let take = (REP16_RUN - self.repeated % REP16_RUN).min(keys.len());
            let (run, rest) = keys.split_at_mut(take);
            run.fill(self.window[0]);
            keys = rest;
            self.repeated += take;
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

fn run_batched<A: Keyed, F: Lookups<A> + ?Sized>(
    fib: &F,
    workload: &Workload<A>,
    batch: usize,
    rng: &mut A::Keys,
    lookups: u64,
) -> u64 {
    let test = &workload.test;
    if matches!(test, Test::Keys(source) if source.is_empty()) {
        return 0;
    }
    let mut streams =
        BatchKeys::new(if *test == Test::Rep { std::array::from_fn(|_| rng.next()) } else { [A::ZERO; REP_WINDOW] });
    // A loop of its own for each stream: one loop matching on the test
    // cost batched RND a tenth of its rate.
    match test {
        Test::Rnd | Test::Seq => {
            let mut lanes = rng.lanes(workload.seed);
            batches(fib, batch, lookups, |keys| rng.fill(&mut lanes, keys))
        }
        Test::Rep => batches(fib, batch, lookups, |keys| streams.fill_rep(keys, || rng.next())),
        Test::Rep16 => batches(fib, batch, lookups, |keys| streams.fill_rep16(keys, || rng.next())),
        Test::Sweep => {
            let mut sweep = Sweep::new(workload.space);
            batches(fib, batch, lookups, |keys| keys.iter_mut().for_each(|key| *key = sweep.next()))
        }
        Test::Keys(source) => batches(fib, batch, lookups, |keys| streams.fill_cycling(keys, source)),
    }
}

/// `lookups` lookups in batches of `batch` keys that `fill` writes;
/// returns the checksum.
#[inline(always)]
fn batches<A: Address, F: Lookups<A> + ?Sized>(
    fib: &F,
    batch: usize,
    lookups: u64,
    mut fill: impl FnMut(&mut [A]),
) -> u64 {
    let mut keys = [A::ZERO; MAX_BATCH];
    let mut out = [0 as NextHop; MAX_BATCH];
    let mut checksum = 0u64;
    for count in batch_lengths(batch, lookups) {
        fill(&mut keys[..count]);
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
    use crate::addr::Prefix6;
    use crate::fib::{Fib, Stats};
    use crate::random::{
        key_space, Keys128, XorShift32, XorShift32x16, XorShift64x16, GLOBAL_UNICAST, POPTRIE_PAPER_SPACE,
    };

    /// An engine of either family that records the keys it is asked for
    /// and answers with their low byte.
    struct Recorder<A> {
        keys: std::sync::Mutex<Vec<A>>,
    }

    impl<A: Address> Fib<A> for Recorder<A> {
        fn name(&self) -> &str {
            "recorder"
        }
        fn lookup(&self, addr: A) -> NextHop {
            self.keys.lock().unwrap().push(addr);
            (addr.to_u128() & 0xff) as NextHop
        }
        fn footprint(&self) -> usize {
            0
        }
        fn stats(&self) -> Stats {
            Stats::default()
        }
    }

    fn recorded_in<A: Keyed>(test: Test<A>, batch: usize, lookups: u64, space: Prefix<A>) -> (Vec<A>, u64) {
        let recorder = Recorder { keys: Default::default() };
        let workload = Workload { test, batch, seed: 42, space };
        let checksum = run(&recorder, &workload, lookups);
        (recorder.keys.into_inner().unwrap(), checksum)
    }

    fn recorded(test: Test<u32>, batch: usize, lookups: u64) -> (Vec<u32>, u64) {
        recorded_in(test, batch, lookups, Prefix::default_route())
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
        assert_every_key_eight_times(&keys);
    }

    /// 800 REP keys: every key that entered and left the window during the
    /// run was looked up exactly 8 times, none more.
    fn assert_every_key_eight_times<A: Address>(keys: &[A]) {
        assert_eq!(keys.len(), 800);
        let mut counts = std::collections::HashMap::new();
        for &key in keys {
            *counts.entry(key).or_insert(0) += 1;
        }
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
    fn sweep_counts_up_from_the_first_address_and_wraps() {
        let (keys, checksum) = recorded(Test::Sweep, 0, 300);
        assert!(keys.iter().enumerate().all(|(i, &key)| key == i as u32), "not 0, 1, 2, ...");
        assert_eq!(checksum, (0..300u64).map(|i| i & 0xff).sum::<u64>());
        let space: Prefix<u32> = "10.0.0.252/30".parse().unwrap();
        let (keys, _) = recorded_in(Test::Sweep, 0, 10, space);
        let want: Vec<u32> = [0, 1, 2, 3, 0, 1, 2, 3, 0, 1].iter().map(|i| 0x0a00_00fc + i).collect();
        assert_eq!(keys, want);
        let mut whole = Sweep::new(Prefix::<u32>::default_route());
        whole.cursor = u32::MAX;
        assert_eq!([whole.next(), whole.next()], [u32::MAX, 0]);
        let mut whole6 = Sweep::new(Prefix::<u128>::default_route());
        whole6.cursor = u128::MAX;
        assert_eq!([whole6.next(), whole6.next()], [u128::MAX, 0]);
    }

    #[test]
    fn rep16_looks_each_key_up_sixteen_times_in_a_row() {
        let (keys, _) = recorded(Test::Rep16, 0, 16 * 50 + 5);
        let mut rng = XorShift32::new(42);
        for (run, chunk) in keys.chunks(REP16_RUN).enumerate() {
            let key = rng.next();
            assert!(chunk.iter().all(|&k| k == key), "run {run} is not one key repeated");
        }
        assert_eq!(keys.len(), 16 * 50 + 5);
    }

    #[test]
    fn batched_sweep_and_rep16_give_the_scalar_keys() {
        for test in [Test::Sweep, Test::Rep16] {
            let (scalar_keys, scalar_sum) = recorded(test.clone(), 0, 1000);
            for batch in [1, 7, 16, 64, 100] {
                let (batch_keys, batch_sum) = recorded(test.clone(), batch, 1000);
                assert!(batch_keys == scalar_keys, "{} batch {batch}: keys differ", test.name());
                assert_eq!(batch_sum, scalar_sum);
            }
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

    // IPv6 keys

    #[test]
    fn seq_chains_each_key_to_the_previous_result_inside_the_space() {
        let space = key_space(POPTRIE_PAPER_SPACE);
        let (keys, checksum) = recorded_in(Test::Seq, 0, 200, space);
        let mut gen = Keys128::new(space, 42);
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
        let (keys, _) = recorded_in(Test::Seq, 0, 100, narrow);
        assert!(keys.iter().all(|&key| narrow.contains(key)));
    }

    #[test]
    fn rnd_and_rep_use_the_generator() {
        let space = key_space(GLOBAL_UNICAST);
        let (keys, _) = recorded_in(Test::Rnd, 0, 50, space);
        let mut gen = Keys128::new(space, 42);
        assert!(keys.iter().all(|&key| key == gen.next()));
        let (keys, _) = recorded_in(Test::Rep, 0, 8 * 100, space);
        assert_every_key_eight_times(&keys);
    }

    #[test]
    fn batches_give_the_same_keys_and_answers_as_scalar() {
        let space = key_space(GLOBAL_UNICAST);
        let given: Arc<[u128]> = vec![1, 2, 0x2001_0db8 << 96, u128::MAX].into();
        for test in [Test::Rep, Test::Rep16, Test::Sweep, Test::Keys(given)] {
            let (scalar_keys, scalar_sum) = recorded_in(test.clone(), 0, 800, space);
            assert_eq!(scalar_keys.len(), 800);
            for batch in [1, 7, 64, 256] {
                let (batch_keys, batch_sum) = recorded_in(test.clone(), batch, 800, space);
                assert!(batch_keys == scalar_keys, "{} batch {batch}: keys differ", test.name());
                assert_eq!(batch_sum, scalar_sum, "{} batch {batch}", test.name());
            }
        }
        let (none, sum) = recorded_in(Test::<u128>::Keys(Vec::new().into()), 16, 100, space);
        assert_eq!((none.len(), sum), (0, 0));
    }

    #[test]
    fn batched_rnd_draws_the_sixteen_lane_stream_inside_the_space() {
        let space: Prefix6 = "2001::/16".parse().unwrap();
        let gen = Keys128::new(space, 42);
        let mut stream = vec![0u128; 1000];
        gen.fill(&mut gen.lanes(42), &mut stream);
        assert!(stream.iter().all(|&key| space.contains(key)));
        let mut lanes = XorShift64x16::new(42);
        let mut raw = vec![0u128; 1000];
        lanes.fill(&mut raw);
        assert!(stream.iter().zip(&raw).all(|(&key, &raw)| key == (0x2001 << 112 | raw & (u128::MAX >> 16))));
        for batch in [8, 64, 1000] {
            let (keys, checksum) = recorded_in(Test::Rnd, batch, 1000, space);
            assert!(keys == stream, "batch {batch}: not the lane stream");
            assert_eq!(checksum, stream.iter().map(|&key| (key & 0xff) as u64).sum::<u64>());
        }
        // A batch that is not a multiple of 8 still gets fresh keys.
        let (odd, _) = recorded_in(Test::Rnd, 7, 700, space);
        let distinct: std::collections::HashSet<u128> = odd.iter().copied().collect();
        assert_eq!(distinct.len(), 700);
    }
}
