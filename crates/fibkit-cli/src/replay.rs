//! `fibkit replay`: apply an update trace to a live FIB while readers look
//! up, and measure both sides.
//!
//! The table's routes of one family (`--family`, IPv4 unless the table has
//! IPv6 routes only) are loaded and served through a [`Router`]; the
//! trace's updates of that family are applied in batches (`--batch N`
//! updates, or the updates of each `--window MS` of trace time), each
//! published as one generation. Instead of a trace, `--churn N` makes N
//! updates from the table itself ([`churn`]: random routes withdrawn and
//! announced back, or announced with another of the table's values,
//! seeded by `--seed`), for a family or a table without a trace (IPv6).
//! Figures:
//!
//! - `updates_per_s`: updates applied over the wall time of the replay loop
//!   (with `--verify`, `--realtime` or `--rate`, over the time spent
//!   applying);
//! - `publish_us_*`: the time of one `Router::apply` (RIB changes, engine
//!   update, publication); `update_us_*`: each update's share of its
//!   publish (the publish time divided by the updates in it);
//! - `bytes_per_update`: bytes of the lookup structure written per update
//!   (a relocation or rebuild counts the whole structure);
//! - `full_rebuilds`, `relocations`: publishes of a structure rebuilt from
//!   the RIB, or copied into larger arrays;
//! - `default_route_flap`: after the trace, the default route flaps
//!   `--flaps N` times (announced and withdrawn, or withdrawn and announced
//!   back if the table has one), each update published alone: its
//!   per-update time (median, p99), bytes rewritten per update, full
//!   rebuilds and relocations. Under a full table it changes the answer of
//!   the gaps between the more specific routes all over the address space:
//!   the updaters' worst case short of a rebuild, next to the real trace's
//!   figures (which leave the flaps out);
//! - with `--readers T`: `reader_mlps_idle`, the readers' lookups per second
//!   (millions, all threads) with no updates, for `--idle-seconds`, and
//!   `reader_mlps_during`, while the replay runs: flat out (the replay of
//!   the trace lasts a few tens of milliseconds, so that figure is noisy
//!   and includes the writer's share of the CPUs), or at a realistic pace
//!   with `--rate N` (N updates per second of wall time) or `--realtime`.
//!
//! The trace is read by [`load::load_updates`] (text `UNIXTIME a|w PREFIX
//! NEXTHOP` lines or MRT BGP4MP records, compressed or not); its updates of
//! the family are replayed, the other family's counted and skipped.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use clap::Args;
use fibkit::addr::{Address, Prefix};
use fibkit::load::{self, LoadOptions, PeerSelector, RouteTable, ValueChoice};
use fibkit::measure::verify::{self, Space};
use fibkit::nexthop::{Label, Mapping, NextHopTable};
use fibkit::random::XorShift32;
use fibkit::rib::Rib;
use fibkit::router::{Published, Reader, Router, Update, UpdateError, Window};
use serde_json::json;

use crate::family::{self, Family, FamilyArgs};
use crate::numbers;
use crate::table::TableArgs;

/// Arguments of `fibkit replay`.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// Engine serving the FIB [default: d16r for IPv4, poptrie18 for IPv6].
    #[arg(long)]
    engine: Option<String>,
    /// Publish every N updates as one batch.
    #[arg(long, value_name = "N", conflicts_with = "window", value_parser = numbers::count)]
    batch: Option<usize>,
    /// Publish the updates of each MS-millisecond window as one batch (trace
    /// time; with --realtime, wall-clock time).
    #[arg(long, value_name = "MS", value_parser = numbers::milliseconds)]
    window: Option<f64>,
    /// Write each batch into a copy of the FIB published whole, so that a
    /// reader's batch lookup sees it all or none of it (atomic batches).
    #[arg(long)]
    atomic: bool,
    /// Reader threads looking up random keys all along.
    #[arg(long, default_value_t = 0, value_name = "T", value_parser = numbers::readers)]
    readers: usize,
    /// After every publish, check the FIB against the RIB around what the
    /// batch changed (plus random addresses), and fully at the end.
    #[arg(long)]
    verify: bool,
    /// Print one JSON object instead of the text report.
    #[arg(long)]
    json: bool,
    /// Replay at the trace's own pace (its timestamps) instead of as fast as
    /// possible.
    #[arg(long)]
    realtime: bool,
    /// Replay at N updates per second of wall-clock time (each batch waits
    /// until its first update is due) instead of as fast as possible, to
    /// measure readers under a realistic update load (the report's
    /// `trace_updates_per_s` gives the trace's own average pace).
    #[arg(long, value_name = "N", conflicts_with = "realtime", value_parser = numbers::rate)]
    rate: Option<f64>,
    /// With --realtime, run the trace's clock this many times faster.
    #[arg(long, default_value_t = 1.0, value_name = "X", requires = "realtime", value_parser = numbers::factor)]
    speedup: f64,
    /// Seconds the readers run with no updates, for the idle figure (0:
    /// no idle figure).
    #[arg(long, default_value_t = 1.0, value_name = "S", value_parser = numbers::seconds_or_zero)]
    idle_seconds: f64,
    /// After the trace, flap the default route N times (announced and
    /// withdrawn, or withdrawn and announced back if the table has one)
    /// and report the cost per update: it changes only the gaps between
    /// the more specific routes, but all over the address space (0: no
    /// flaps).
    #[arg(long, default_value_t = 5, value_name = "N", value_parser = numbers::flaps)]
    flaps: usize,
    /// Instead of a trace, N updates made from the table: each picks one of
    /// its routes at random (`--seed`) and withdraws it (two times in
    /// three) or announces it with another of the table's values; a
    /// withdrawn route is announced back with another value. Trace time:
    /// one update a microsecond.
    #[arg(long, value_name = "N", value_parser = numbers::count, conflicts_with_all = ["updates", "realtime"])]
    churn: Option<usize>,
    /// Seed of --churn.
    #[arg(long, default_value_t = 1, value_name = "S", requires = "churn")]
    seed: u64,
    #[command(flatten)]
    family: FamilyArgs,
    /// Routing table file.
    table: PathBuf,
    /// Update trace: `UNIXTIME a|w PREFIX NEXTHOP` lines or MRT BGP4MP
    /// records, plain, gzip or bzip2 (none with --churn).
    #[arg(required_unless_present = "churn")]
    updates: Option<PathBuf>,
    /// Map route values onto N next hops as `value % N + 1`.
    #[arg(long, value_name = "N", value_parser = numbers::nexthops)]
    nexthops: Option<u32>,
    /// Turn loader warnings into errors (table and trace).
    #[arg(long)]
    strict: bool,
    /// MRT: the peer whose routes (table) and updates (trace) to take, by
    /// index, address or ASN; default: the peer with the most routes.
    #[arg(long, value_name = "INDEX|ADDRESS|ASN")]
    peer: Option<PeerSelector>,
    /// MRT: a route's value: its next hop, or the origin AS of its path.
    #[arg(long, value_name = "next-hop|origin-as", default_value = "next-hop")]
    value: ValueChoice,
}

/// One line of the trace.
#[derive(Clone, Copy, Debug)]
struct TraceUpdate<A: Address> {
    /// Trace time in microseconds.
    micros: u64,
    update: Update<Prefix<A>>,
    /// Its place in the trace file's updates (from 1, the other family's
    /// counted).
    number: usize,
}

/// `error`, one of `batch`'s, naming its update by its place in the trace
/// rather than in the batch.
fn trace_rejection<A: Address>(error: &UpdateError, batch: &[TraceUpdate<A>]) -> String {
    match batch.get(error.index()) {
        Some(traced) => error.named(format_args!("update {} of the trace", traced.number)),
        None => error.to_string(),
    }
}

/// The trace's updates of family `A` (read by [`load::load_updates`]:
/// text or MRT, compressed or not) and the number of the other family's
/// updates skipped.
fn read_trace<A: Address>(path: &Path, options: &LoadOptions) -> Result<(Vec<TraceUpdate<A>>, usize)> {
    let stream = load::load_updates(path, options)?;
    for warning in stream.warnings.iter().take(10) {
        eprintln!("warning: {warning}");
    }
    let mut updates = Vec::with_capacity(stream.updates.len());
    let mut skipped = 0;
    // Trace time never runs backwards here: an update stamped before the
    // one before it is due with it (the pacing and the windows take the
    // clock as monotonic).
    let (mut latest, mut earlier, mut first_earlier) = (0u64, 0usize, None);
    for (index, timed) in stream.updates.iter().enumerate() {
        let stamped = timed.time.seconds.saturating_mul(1_000_000).saturating_add(u64::from(timed.time.micros));
        if stamped < latest {
            earlier += 1;
            first_earlier.get_or_insert((index + 1, timed.time));
        }
        latest = latest.max(stamped);
        let Some(update) = timed.update.of() else {
            skipped += 1;
            continue;
        };
        updates.push(TraceUpdate { micros: latest, update, number: index + 1 });
    }
    if let Some((number, time)) = first_earlier {
        eprintln!(
            "warning: {}: {earlier} update(s) are stamped before the update before them (the first: update {number}, at {time}); each is taken as due with the one before it",
            path.display()
        );
    }
    if updates.is_empty() {
        bail!("{}: no {} update", path.display(), A::FAMILY);
    }
    Ok((updates, skipped))
}

/// `count` updates made from `rib`'s routes (`--churn`), seeded by `seed`:
/// each picks a route at random; an announced one is withdrawn two times in
/// three, else announced with another value; a withdrawn one is announced
/// back with another value. The values are those of other routes of the
/// table (its labels in `next_hops`), so the churn brings no new next hop.
/// Trace time: one update a microsecond.
fn churn<A: Address>(rib: &Rib<A>, next_hops: &NextHopTable, count: usize, seed: u64) -> Result<Vec<TraceUpdate<A>>> {
    let routes: Vec<(Prefix<A>, fibkit::NextHop)> = rib.iter().collect();
    if routes.is_empty() {
        bail!("--churn: the table has no {} route to make updates from", A::FAMILY);
    }
    let mut current: Vec<Option<fibkit::NextHop>> = routes.iter().map(|&(_, hop)| Some(hop)).collect();
    let mut rng = XorShift32::new(seed);
    let pick = |rng: &mut XorShift32| rng.next() as usize % routes.len();
    let mut updates = Vec::with_capacity(count);
    for index in 0..count {
        let route = pick(&mut rng);
        let prefix = routes[route].0;
        let update = match current[route] {
            Some(_) if !rng.next().is_multiple_of(3) => {
                current[route] = None;
                Update::Withdraw { prefix }
            }
            now => {
                // Another route's value, different from the route's own
                // where the table has another (a few tries).
                let mut hop = routes[pick(&mut rng)].1;
                for _ in 0..8 {
                    if Some(hop) != now {
                        break;
                    }
                    hop = routes[pick(&mut rng)].1;
                }
                current[route] = Some(hop);
                let value = next_hops.label_for(hop).expect("a route's next hop has a label");
                Update::Announce { prefix, value }
            }
        };
        updates.push(TraceUpdate { micros: index as u64, update, number: index + 1 });
    }
    Ok(updates)
}

/// Says which update of `trace` follows the one before it by the longest
/// pause, when that is over an hour of trace time: `--realtime` waits
/// through it (divided by `speedup`), which would otherwise look like a hang.
fn warn_of_long_gaps<A: Address>(path: &Path, trace: &[TraceUpdate<A>], speedup: f64) {
    let longest = trace.windows(2).map(|pair| (pair[1].micros - pair[0].micros, pair[1].number)).max();
    if let Some((gap, number)) = longest.filter(|&(gap, _)| gap > 3_600_000_000) {
        eprintln!(
            "warning: {}: update {number} is stamped {} s after the update before it: --realtime waits {:.1} s for it (x{speedup})",
            path.display(),
            gap / 1_000_000,
            gap as f64 / 1e6 / speedup
        );
    }
}

/// A lookup counter on its own cache line.
#[repr(align(128))]
#[derive(Default)]
struct Counter(AtomicU64);

/// Reader threads looking up random keys until stopped.
struct ReaderPool {
    stop: Arc<AtomicBool>,
    counters: Arc<Vec<Counter>>,
    threads: Vec<thread::JoinHandle<u64>>,
}

impl ReaderPool {
    const BATCH: usize = 256;

    fn start<A: Address>(reader: &Reader<A>, count: usize) -> ReaderPool {
        let stop = Arc::new(AtomicBool::new(false));
        let counters: Arc<Vec<Counter>> = Arc::new((0..count).map(|_| Counter::default()).collect());
        let threads = (0..count)
            .map(|index| {
                let (reader, stop, counters) = (reader.clone(), stop.clone(), counters.clone());
                thread::spawn(move || {
                    let mut rng = XorShift32::new(0x5eed + index as u64);
                    let mut keys = [A::ZERO; ReaderPool::BATCH];
                    let mut out = [0; ReaderPool::BATCH];
                    let mut checksum = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        for key in &mut keys {
                            *key = A::from_words(|| rng.next());
                        }
                        reader.lookup_batch(&keys, &mut out);
                        checksum = out.iter().fold(checksum, |sum, &hop| sum.wrapping_add(u64::from(hop)));
                        counters[index].0.fetch_add(ReaderPool::BATCH as u64, Ordering::Relaxed);
                    }
                    checksum
                })
            })
            .collect();
        ReaderPool { stop, counters, threads }
    }

    /// Lookups done so far by all threads.
    fn lookups(&self) -> u64 {
        self.counters.iter().map(|counter| counter.0.load(Ordering::Relaxed)).sum()
    }

    fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads {
            let _ = thread.join();
        }
    }
}

/// Median, 99th percentile and maximum of `values` (sorted here).
fn percentiles(values: &mut [f64]) -> (f64, f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    values.sort_by(f64::total_cmp);
    let at = |share: f64| values[((values.len() - 1) as f64 * share).round() as usize];
    (at(0.5), at(0.99), values[values.len() - 1])
}

/// Checks the serving FIB against the RIB around the prefixes of `batch`
/// and at `random` random addresses; returns the number of wrong answers.
fn verify_batch<A: Address>(router: &Router<A>, batch: &[TraceUpdate<A>], rng: &mut XorShift32, random: usize) -> u64 {
    let snapshot = router.reader().snapshot();
    let rib = router.rib();
    let mut wrong = 0;
    let mut check = |addr: A| {
        let (got, expected) = (snapshot.fib().lookup(addr), rib.lookup(addr));
        if got != expected {
            if wrong < 10 {
                eprintln!("mismatch at {}: expected {expected}, got {got}", addr.display());
            }
            wrong += 1;
        }
    };
    for traced in batch {
        let prefix = traced.update.prefix();
        rib.for_each_range(prefix.first(), prefix.last(), |range| {
            check(range.first);
            check(range.last);
        });
        if let Some(before) = prefix.first().checked_prev() {
            check(before);
        }
        if let Some(after) = prefix.last().checked_next() {
            check(after);
        }
    }
    for _ in 0..random {
        check(A::from_words(|| rng.next()));
    }
    wrong
}

/// What flapping the default route cost (module docs).
#[derive(Clone, Copy, Debug)]
struct FlapFigures {
    updates: usize,
    update_us_median: f64,
    update_us_p99: f64,
    bytes_per_update: f64,
    full_rebuilds: u64,
    relocations: u64,
}

/// Flaps the default route `count` times (module docs), after the trace,
/// with each update published alone; records wrong answers (with
/// `--verify`) and rejected updates as the replay does.
fn flap_default_route<A: Address>(
    router: &mut Router<A>,
    count: usize,
    verify: Option<&mut XorShift32>,
    mismatches: &mut u64,
    rejected: &mut Vec<String>,
) -> FlapFigures {
    let before = router.stats();
    let default = Prefix::<A>::default_route();
    let withdraw = Update::Withdraw { prefix: default };
    let (first, second) = match router.rib().get(default) {
        // The table's own default route, withdrawn and announced back.
        Some(hop) => {
            let label = router.next_hops().label_for(hop).expect("a route's next hop has a label");
            (withdraw, Update::Announce { prefix: default, value: label })
        }
        // Next hop 1: one the table uses, if it uses any (none interned for
        // the flaps).
        None => {
            let label = router.next_hops().label_for(1).unwrap_or(Label::Number(0));
            (Update::Announce { prefix: default, value: label }, withdraw)
        }
    };
    let mut update_us = Vec::with_capacity(2 * count);
    let mut verify = verify;
    for update in std::iter::repeat_n([first, second], count).flatten() {
        let start = Instant::now();
        let outcome = router.apply(&[update]);
        update_us.push(start.elapsed().as_secs_f64() * 1e6);
        match outcome {
            Ok(published) => {
                rejected.extend(published.rejected.iter().map(|error| format!("default-route flap: {error}")))
            }
            Err(error) => rejected.push(format!("default-route flap: {error}")),
        }
        if let Some(rng) = verify.as_deref_mut() {
            *mismatches += verify_batch(router, &[TraceUpdate { micros: 0, update, number: 0 }], rng, 256);
        }
    }
    let after = router.stats();
    let (update_us_median, update_us_p99, _) = percentiles(&mut update_us);
    FlapFigures {
        updates: update_us.len(),
        update_us_median,
        update_us_p99,
        bytes_per_update: (after.bytes_written - before.bytes_written) as f64 / update_us.len() as f64,
        full_rebuilds: after.full_rebuilds - before.full_rebuilds,
        relocations: after.relocations - before.relocations,
    }
}

/// Runs `fibkit replay`.
pub fn run(args: &ReplayArgs) -> Result<ExitCode> {
    if args.updates.as_ref().is_some_and(|updates| crate::is_stdio(&args.table) && crate::is_stdio(updates)) {
        bail!("the table and the update trace cannot both be read from standard input (-)");
    }
    let table = TableArgs {
        table: Some(args.table.clone()),
        nexthops: args.nexthops,
        strict: args.strict,
        peer: args.peer,
        value: args.value,
        peers: false,
        fields: None,
    };
    let (table, family) = family::load_table(&table, &args.family, None)?;
    match family {
        Family::Ipv4 => replay::<u32>(args, table),
        Family::Ipv6 => replay::<u128>(args, table),
    }
}

/// Replays the trace (or the churn) of family `A` on `table`'s routes of
/// that family (module docs).
fn replay<A: Address>(args: &ReplayArgs, table: RouteTable) -> Result<ExitCode> {
    let mapping = args.nexthops.map_or(Mapping::Distinct, Mapping::Modulo);
    let trace_options = LoadOptions {
        mapping,
        strict: args.strict,
        peer: args.peer.unwrap_or_default(),
        value: args.value,
        fields: None,
    };
    let (trace, skipped, source) = match (&args.updates, args.churn) {
        (Some(path), _) => {
            let (trace, skipped) = read_trace::<A>(path, &trace_options)?;
            (trace, skipped, path.display().to_string())
        }
        (None, Some(count)) => {
            let trace = churn(table.rib::<A>(), &table.next_hops, count, args.seed)?;
            (trace, 0, format!("a churn of {count} updates from the table (seed {})", args.seed))
        }
        (None, None) => bail!("an update trace or --churn N is needed"),
    };
    let other = A::FAMILY.other();
    let window = match args.window {
        Some(ms) => Window::Time(Duration::from_secs_f64(ms / 1e3)),
        None => Window::Count(args.batch.unwrap_or(1)),
    };
    let rib = table.rib::<A>().clone();
    let (table_name, prefixes, mapping) = (table.name.clone(), rib.len(), table.next_hops.mapping());
    let start = Instant::now();
    let engine = match (&args.engine, A::FAMILY) {
        (Some(engine), _) => engine.as_str(),
        (None, Family::Ipv4) => "d16r",
        (None, Family::Ipv6) => fibkit::registry::default_engine(Family::Ipv6),
    };
    let mut router = Router::new(engine, rib, table.next_hops, window)?;
    router.set_atomic_batches(args.atomic);
    let build_ms = start.elapsed().as_secs_f64() * 1e3;

    let pool = (args.readers > 0).then(|| ReaderPool::start(&router.reader(), args.readers));
    let mut reader_mlps_idle = None;
    if let Some(pool) = pool.as_ref().filter(|_| args.idle_seconds > 0.0) {
        thread::sleep(Duration::from_millis(50));
        let (before, start) = (pool.lookups(), Instant::now());
        thread::sleep(Duration::from_secs_f64(args.idle_seconds));
        reader_mlps_idle = Some((pool.lookups() - before) as f64 / start.elapsed().as_secs_f64() / 1e6);
    }

    let mut publish_us = Vec::new();
    let mut update_us = Vec::with_capacity(trace.len());
    let mut verify_rng = XorShift32::new(7);
    let mut mismatches = 0u64;
    let mut rejected = Vec::new();
    // Time spent verifying between batches, and the readers' lookups in it:
    // left out of the readers' figure "during updates".
    let (mut verify_time, mut verify_lookups) = (Duration::ZERO, 0u64);
    let mut record =
        |outcome: Result<Option<Published>, UpdateError>, micros: f64, router: &Router<A>, batch: &[TraceUpdate<A>]| {
            if let Ok(Some(published)) = &outcome {
                rejected.extend(published.rejected.iter().map(|error| trace_rejection(error, batch)));
            }
            match outcome {
                Ok(Some(published)) if published.changed > 0 || published.updates > 0 => {
                    publish_us.push(micros);
                    update_us.extend(std::iter::repeat_n(micros / published.updates.max(1) as f64, published.updates));
                    if args.verify && published.changed > 0 {
                        let (start, lookups) = (Instant::now(), pool.as_ref().map_or(0, ReaderPool::lookups));
                        mismatches += verify_batch(router, batch, &mut verify_rng, 256);
                        verify_time += start.elapsed();
                        verify_lookups += pool.as_ref().map_or(0, ReaderPool::lookups) - lookups;
                    }
                }
                Ok(_) => {}
                Err(error) => rejected.push(trace_rejection(&error, batch)),
            }
        };
    let lookups_before = pool.as_ref().map(ReaderPool::lookups);
    let replay_start = Instant::now();
    let mut busy = Duration::ZERO;
    if args.realtime {
        if let Some(path) = &args.updates {
            warn_of_long_gaps(path, &trace, args.speedup);
        }
        let first_micros = trace[0].micros;
        let mut pending: Vec<TraceUpdate<A>> = Vec::new();
        for traced in &trace {
            let due = Duration::from_secs_f64((traced.micros - first_micros) as f64 / 1e6 / args.speedup);
            while replay_start.elapsed() < due {
                thread::sleep((due - replay_start.elapsed()).min(Duration::from_millis(1)));
                if matches!(window, Window::Time(_)) && router.queued() > 0 {
                    let start = Instant::now();
                    let outcome = router.poll();
                    let elapsed = start.elapsed();
                    if matches!(outcome, Ok(Some(_))) {
                        busy += elapsed;
                        record(outcome, elapsed.as_secs_f64() * 1e6, &router, &pending);
                        pending.clear();
                    }
                }
            }
            pending.push(*traced);
            let start = Instant::now();
            let outcome = router.submit(traced.update);
            let elapsed = start.elapsed();
            busy += elapsed;
            if !matches!(outcome, Ok(None)) {
                record(outcome, elapsed.as_secs_f64() * 1e6, &router, &pending);
                pending.clear();
            }
        }
        let start = Instant::now();
        let outcome = router.flush();
        busy += start.elapsed();
        record(outcome, start.elapsed().as_secs_f64() * 1e6, &router, &pending);
    } else {
        let mut batch_updates: Vec<Update<Prefix<A>>> = Vec::new();
        let mut first = 0;
        while first < trace.len() {
            let end = match window {
                Window::Count(count) => (first + count).min(trace.len()),
                Window::Time(window) => {
                    let close = trace[first].micros + window.as_micros() as u64;
                    first + trace[first..].iter().take_while(|traced| traced.micros < close).count()
                }
            };
            if let Some(rate) = args.rate {
                let due = Duration::from_secs_f64(first as f64 / rate);
                let elapsed = replay_start.elapsed();
                if elapsed < due {
                    thread::sleep(due - elapsed);
                }
            }
            let batch = &trace[first..end];
            batch_updates.clear();
            batch_updates.extend(batch.iter().map(|traced| traced.update));
            let start = Instant::now();
            let outcome = router.apply(&batch_updates);
            let elapsed = start.elapsed();
            busy += elapsed;
            record(outcome.map(Some), elapsed.as_secs_f64() * 1e6, &router, batch);
            first = end;
        }
    }
    let replay_seconds = replay_start.elapsed().as_secs_f64();
    let reader_mlps_during = pool.as_ref().zip(lookups_before).map(|(pool, before)| {
        let lookups = pool.lookups() - before - verify_lookups;
        lookups as f64 / (replay_seconds - verify_time.as_secs_f64()).max(1e-9) / 1e6
    });
    if let Some(pool) = pool {
        pool.stop();
    }
    let stats = router.stats();
    let flaps = (args.flaps > 0).then(|| {
        let verify = args.verify.then_some(&mut verify_rng);
        flap_default_route(&mut router, args.flaps, verify, &mut mismatches, &mut rejected)
    });
    let mut final_report = None;
    if args.verify {
        let snapshot = router.reader().snapshot();
        let boundaries = verify::boundaries(snapshot.fib(), router.rib());
        let random = verify::random(snapshot.fib(), router.rib(), Space::Anywhere, 1_000_000, 11);
        mismatches += boundaries.mismatches + random.mismatches;
        final_report = Some((boundaries.checked + random.checked, boundaries.mismatches + random.mismatches));
    }

    let applied = stats.updates;
    // As fast as possible: wall time of the loop; at the trace's pace: the
    // time spent applying.
    let paced = args.realtime || args.rate.is_some();
    let seconds = if paced || args.verify { busy.as_secs_f64() } else { replay_seconds };
    let trace_span = trace[trace.len() - 1].micros.saturating_sub(trace[0].micros) as f64 / 1e6;
    let trace_updates_per_s = (trace_span > 0.0).then(|| trace.len() as f64 / trace_span);
    let updates_per_s = applied as f64 / seconds;
    let (update_median, update_p99, update_max) = percentiles(&mut update_us);
    let (publish_median, publish_p99, publish_max) = percentiles(&mut publish_us);
    let bytes_per_update = stats.bytes_written as f64 / applied.max(1) as f64;
    let announces = trace.iter().filter(|traced| matches!(traced.update, Update::Announce { .. })).count();
    let loss = reader_mlps_idle
        .filter(|&idle| idle > 0.0)
        .zip(reader_mlps_during)
        .map(|(idle, during)| (1.0 - during / idle) * 100.0);
    if args.json {
        let flap_json = flaps.map(|flaps| {
            json!({
                "updates": flaps.updates,
                "update_us_median": flaps.update_us_median,
                "update_us_p99": flaps.update_us_p99,
                "bytes_per_update": flaps.bytes_per_update,
                "full_rebuilds": flaps.full_rebuilds,
                "relocations": flaps.relocations,
            })
        });
        let object = json!({
            "engine": engine,
            "incremental": router.incremental(),
            "atomic_batches": router.atomic_batches(),
            "table": table_name,
            "prefixes": prefixes,
            "mapping": mapping.to_string(),
            "family": A::FAMILY.key(),
            "updates_file": args.updates.as_ref().and_then(|path| path.file_name()).map(|name| name.to_string_lossy().into_owned()),
            "churn": args.churn,
            "seed": args.churn.map(|_| args.seed),
            "updates": applied,
            "announces": announces,
            "withdraws": trace.len() - announces,
            "rejected": stats.rejected,
            "changes": stats.changes,
            "batch": args.batch.unwrap_or(if args.window.is_some() { 0 } else { 1 }),
            "window_ms": args.window,
            "realtime": args.realtime,
            "rate": args.rate,
            "trace_updates_per_s": trace_updates_per_s,
            "replay_seconds": replay_seconds,
            "build_ms": build_ms,
            "seconds": seconds,
            "updates_per_s": updates_per_s,
            "update_us_median": update_median,
            "update_us_p99": update_p99,
            "update_us_max": update_max,
            "publishes": stats.publishes,
            "publish_us_median": publish_median,
            "publish_us_p99": publish_p99,
            "publish_us_max": publish_max,
            "full_rebuilds": stats.full_rebuilds,
            "relocations": stats.relocations,
            "bytes_per_update": bytes_per_update,
            "default_route_flap": flap_json,
            "readers": args.readers,
            "reader_mlps_idle": reader_mlps_idle,
            "reader_mlps_during": reader_mlps_during,
            "reader_loss_pct": loss,
            "verified": args.verify.then_some(mismatches == 0),
            "mismatches": args.verify.then_some(mismatches),
        });
        let mut object = object;
        object[format!("{}_skipped", other.key())] = json!(skipped);
        out!("{}", serde_json::to_string_pretty(&object)?);
    } else {
        out!(
            "{}: {} of {} on {table_name} ({prefixes} prefixes, next hops: {mapping}); built in {build_ms:.1} ms",
            engine,
            match (router.incremental(), args.atomic) {
                (true, false) => "incremental updates",
                (true, true) => "incremental updates into a copy per batch (atomic batches)",
                (false, _) => "full rebuild per batch",
            },
            source
        );
        out!(
            "{applied} updates ({announces} announces, {} withdraws, {skipped} {other} skipped, {} rejected) in {seconds:.4} s: {updates_per_s:.0} updates/s",
            trace.len() - announces,
            stats.rejected
        );
        out!("per update:  median {update_median:.3} us, p99 {update_p99:.3} us, max {update_max:.1} us");
        out!(
            "per publish: median {publish_median:.3} us, p99 {publish_p99:.3} us, max {publish_max:.1} us ({} publishes, {} full rebuilds, {} relocations)",
            stats.publishes, stats.full_rebuilds, stats.relocations
        );
        out!("bytes rewritten per update: {bytes_per_update:.1}");
        if let Some(flaps) = flaps {
            out!(
                "default-route flap: median {:.3} us, p99 {:.3} us per update ({} updates, {:.1} bytes rewritten per update, {} full rebuilds, {} relocations)",
                flaps.update_us_median,
                flaps.update_us_p99,
                flaps.updates,
                flaps.bytes_per_update,
                flaps.full_rebuilds,
                flaps.relocations
            );
        }
        if let Some(during) = reader_mlps_during {
            let pace = match (args.rate, args.realtime) {
                (Some(rate), _) => format!("paced at {rate:.0} updates/s"),
                (None, true) => format!("at the trace's pace x{}", args.speedup),
                (None, false) => "flat out".to_string(),
            };
            let idle = reader_mlps_idle.map_or_else(String::new, |idle| format!("{idle:.1} Mlps idle, "));
            let change = loss.map_or_else(String::new, |loss| format!(" ({:+.1}%)", -loss));
            let verifying = if args.verify { ", not counting the checks between batches" } else { "" };
            out!(
                "readers ({}): {idle}{during:.1} Mlps during updates {pace} over {replay_seconds:.3} s{verifying}{change}",
                args.readers
            );
        }
        if let Some((checked, wrong)) = final_report {
            out!("verify: {checked} addresses at the end, {mismatches} wrong answers in all ({wrong} at the end)");
        }
    }
    for error in rejected.iter().take(10) {
        eprintln!("rejected: {error}");
    }
    if rejected.len() > 10 {
        eprintln!("rejected: ... and {} more", rejected.len() - 10);
    }
    // A rejected update is a route the FIB does not forward as the trace
    // says: a failure, even when what was applied verifies.
    Ok(if mismatches == 0 && rejected.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
