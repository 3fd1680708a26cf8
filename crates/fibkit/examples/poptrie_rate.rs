//! Poptrie's Table 2 and Table 6 on the real tables: structure, build time
//! and single-thread lookup rates.
//!
//! ```text
//! cargo run --release -p fibkit --example poptrie_rate [LOOKUPS]
//! ```
//!
//! IPv4: `routeviews-2014-05-13.ipasn.gz` of the data folder (`FIBKIT_DATA`,
//! else `../shared/data`), values mapped as `asn % 239 + 1`; RND/SEQ/REP
//! through `fibkit::measure::workload::run`. IPv6:
//! `linx-p69-2014-12-25.rib6.gz` there, one index per next-hop
//! address; RND keys from four xorshift32 draws, inside 2000::/3 and (as the
//! paper) inside 2000::/8. The registry section runs RND/SEQ/REP for
//! poptrie16/18 next to DXR d16r/d18r. Times are the thread's CPU time (the
//! machine is shared), which leaves out time slices lost to others but not
//! their cache pollution.

use std::time::Instant;

use fibkit::engines::poptrie::{self, Leaf, Poptrie, PoptrieOptions};
use fibkit::fib::{BuildOptions, Fib};
use fibkit::load::{self, LoadOptions, RouteTable};
use fibkit::measure::workload::{self, Test, Workload};
use fibkit::nexthop::Mapping;
use fibkit::random::XorShift32;
use fibkit::registry;
use fibkit::rib::{Rib4, Rib6};

#[path = "../tests/common/data.rs"]
mod data;

/// `NAME` of the data folder, loaded, or a note why not.
fn shared_table(name: &str, mapping: Mapping) -> Option<RouteTable> {
    let path = data::shared_data(name)?;
    Some(load::load_path(&path, &LoadOptions { mapping, ..Default::default() }).expect("table loads"))
}

const BUILDS: usize = 7;

/// A clock for one thread: the time it ran on a CPU
/// (`/proc/thread-self/schedstat`, nanoseconds), so that other processes
/// on the shared machine do not count; the wall clock where that is missing.
struct Clock {
    wall: Instant,
    cpu_ns: Option<u64>,
}

fn thread_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

impl Clock {
    fn start() -> Self {
        Clock { wall: Instant::now(), cpu_ns: thread_cpu_ns() }
    }

    /// Seconds since `start`.
    fn seconds(&self) -> f64 {
        match (self.cpu_ns, thread_cpu_ns()) {
            (Some(start), Some(now)) => (now - start) as f64 * 1e-9,
            _ => self.wall.elapsed().as_secs_f64(),
        }
    }
}

/// Median of `BUILDS` build times, in milliseconds.
fn median_ms(mut build: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..BUILDS)
        .map(|_| {
            let clock = Clock::start();
            build();
            clock.seconds() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[BUILDS / 2]
}

fn ipv4<L: Leaf, const S: u32>(rib: &Rib4, lookups: u64) {
    let options = PoptrieOptions::default();
    let build_ms = median_ms(|| drop(poptrie::build::<u32, S>(rib, &BuildOptions::new(239)).unwrap()));
    let fib = Poptrie::<u32, L, S>::build(rib, &options).unwrap();
    println!("{}", fib.stats().report);
    let plain = Poptrie::<u32, L, S>::build(rib, &PoptrieOptions { aggregate: false }).unwrap();
    println!(
        "  without route aggregation: {} inodes, {} leaves, {:.2} MiB",
        plain.nodes().len(),
        plain.leaves().len(),
        plain.footprint() as f64 / (1 << 20) as f64
    );
    print!("  build (median of {BUILDS}, registry path) {build_ms:.1} ms;");
    for test in [Test::Rnd, Test::Seq, Test::Rep] {
        let name = test.name();
        let workload = Workload::new(test, 0, 1);
        let clock = Clock::start();
        let checksum = workload::run(&fib, &workload, lookups);
        let seconds = clock.seconds();
        print!("  {name} {:.1} Mlps", lookups as f64 / seconds / 1e6);
        std::hint::black_box(checksum);
    }
    println!("\n");
}

/// The same tests through the registry (`Fib::run_workload`, compiled per
/// engine type), for Poptrie and its peers DXR D16R and D18R.
fn through_registry(rib: &Rib4, lookups: u64) {
    for name in ["poptrie16", "poptrie18", "d16r", "d18r"] {
        let fib = registry::build(name, rib, &BuildOptions::new(239)).unwrap();
        print!("  {name:<10} {:>7.2} MiB", fib.footprint() as f64 / (1 << 20) as f64);
        for test in [Test::Rnd, Test::Seq, Test::Rep] {
            let name = test.name();
            let workload = Workload::new(test, 0, 1);
            let clock = Clock::start();
            std::hint::black_box(fib.run_workload(&workload, lookups));
            print!("  {name} {:6.1} Mlps", lookups as f64 / clock.seconds() / 1e6);
        }
        println!();
    }
    println!();
}

/// RND over IPv6 keys `prefix | random` with `prefix_len` fixed top bits.
fn rnd6<F: Fib<u128> + ?Sized>(fib: &F, prefix: u128, prefix_len: u32, lookups: u64) -> f64 {
    let mut rng = XorShift32::new(1);
    let host = u128::MAX >> prefix_len;
    let clock = Clock::start();
    let mut checksum = 0u64;
    for _ in 0..lookups {
        let key = (u128::from(rng.next()) << 96)
            | (u128::from(rng.next()) << 64)
            | (u128::from(rng.next()) << 32)
            | u128::from(rng.next());
        checksum = checksum.wrapping_add(u64::from(fib.lookup(prefix | (key & host))));
    }
    let seconds = clock.seconds();
    std::hint::black_box(checksum);
    lookups as f64 / seconds / 1e6
}

fn ipv6<L: Leaf, const S: u32>(rib: &Rib6, max_next_hop: u32, lookups: u64) {
    let build_ms = median_ms(|| drop(poptrie::build::<u128, S>(rib, &BuildOptions::new(max_next_hop)).unwrap()));
    let fib = Poptrie::<u128, L, S>::build(rib, &PoptrieOptions::default()).unwrap();
    println!("{}", fib.stats().report);
    let in_2000_3 = rnd6(&fib, 0x2000 << 112, 3, lookups);
    let in_2000_8 = rnd6(&fib, 0x2000 << 112, 8, lookups);
    println!(
        "  build (median of {BUILDS}, registry path) {build_ms:.2} ms;  rnd in 2000::/3 {in_2000_3:.1} Mlps;  rnd in 2000::/8 {in_2000_8:.1} Mlps\n"
    );
}

fn main() {
    let lookups: u64 = std::env::args().nth(1).map_or(100_000_000, |text| text.parse().expect("LOOKUPS"));
    if let Some(table) = shared_table("routeviews-2014-05-13.ipasn.gz", Mapping::Modulo(239)) {
        let (rib, next_hops) = (table.v4, table.next_hops);
        println!(
            "== routeviews-2014-05-13.ipasn.gz: {} prefixes, {} next hops (asn % 239 + 1), {lookups} lookups per test\n",
            rib.len(),
            next_hops.len()
        );
        ipv4::<u16, 0>(&rib, lookups);
        ipv4::<u16, 16>(&rib, lookups);
        ipv4::<u16, 18>(&rib, lookups);
        println!("through the engine registry:");
        through_registry(&rib, lookups);
    }
    if let Some(table) = shared_table("linx-p69-2014-12-25.rib6.gz", Mapping::Distinct) {
        let (rib, next_hops) = (table.v6, table.next_hops);
        println!(
            "== linx-p69-2014-12-25.rib6.gz: {} prefixes, {} next hops, {lookups} lookups per test\n",
            rib.len(),
            next_hops.len()
        );
        ipv6::<u16, 0>(&rib, next_hops.max_index(), lookups);
        ipv6::<u16, 16>(&rib, next_hops.max_index(), lookups);
        ipv6::<u16, 18>(&rib, next_hops.max_index(), lookups);
    }
}
