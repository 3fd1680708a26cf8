//! The Luleå paper (Degermark et al., SIGCOMM 1997): Table 1 (the
//! forwarding table built from a routing table) and section 5.2's lookup
//! times (every routing entry looked up twice, the second lookup timed,
//! so the data is in the primary cache).
//!
//! The paper's tables are from 1997 (Sprint's of January 1st: 21,797
//! entries, 17 next hops); the 2014 table, 24 times as large, stands in,
//! mapped onto 17 next hops: the structure's counts grow with it, and the
//! report says so rather than pretend a like-for-like comparison.

use anyhow::Result;
use fibkit::measure::cycles::Stopwatch;

use super::lab::{stat, Lab};
use super::published::{Figure, Published, Query};
use super::report::{Experiment, Row};

const PAPER: &str = "lulea";
const DATASET: &str = "Sprint Jan 1 '97";
/// The Pentium Pro figures: the paper's x86 machine.
const PENTIUM_PRO: &str = "Section 5.2 (Pentium Pro";
const PENTIUM_PRO_NS_PER_TICK: f64 = 5.0;

fn find(place: &str, engine: Option<&str>, metric: &str) -> Option<&'static Figure> {
    Published::get().find(Query {
        paper: PAPER,
        place: Some(place),
        dataset: Some(DATASET),
        engine,
        metric,
        ..Default::default()
    })
}

/// Table 1 and section 5.2.
pub(crate) fn run(lab: &mut Lab) -> Result<Vec<Experiment>> {
    let next_hops = find("Table 1", None, "next_hops").map_or(17, |figure| figure.value as u32);
    let table = lab.ipv4(next_hops)?;
    let family = fibkit::addr::Family::Ipv4;
    let prefixes = table.table.prefixes(family) as f64;
    let theirs = find("Table 1", None, "prefixes").map_or(prefixes, |figure| figure.value);
    let stand_in = format!(
        "{} stands in for {DATASET}, a table {:.0} times smaller: the counts below grow with the table; not like for like.",
        table.description,
        prefixes / theirs
    );
    lab.progress("lulea: Table 1");
    let (fib, build_s) = lab.build::<u32>("lulea", &table.table)?;
    let fib = fib.as_ref();
    let engine = Some("lulea");
    let rows = vec![
        Row::new("routing entries", "", find("Table 1", None, "prefixes"), Some(prefixes)),
        Row::new("next hops", "", find("Table 1", None, "next_hops"), Some(table.table.next_hops_of(family) as f64)),
        Row::new("leaves of the complete tree", "", find("Table 1", engine, "leaves"), stat(fib, "leaves")),
        Row::new("forwarding table", "bytes", find("Table 1", engine, "table_bytes"), Some(fib.footprint() as f64)),
        Row::new("sparse chunks", "", find("Table 1", engine, "sparse_chunks"), stat(fib, "sparse_chunks")),
        Row::new("dense chunks", "", find("Table 1", engine, "dense_chunks"), stat(fib, "dense_chunks")),
        Row::new("very dense chunks", "", find("Table 1", engine, "very_dense_chunks"), stat(fib, "very_dense_chunks")),
        Row::new("level 3 chunks", "", find("Table 1", engine, "level3_chunks"), stat(fib, "level3_chunks")),
        Row::new("build", "s", find("Table 1", engine, "build_s"), Some(build_s))
            .note("fibkit's whole build from the RIB; the paper's from an in-memory tree on a 333 MHz Alpha"),
    ];
    let table1 =
        Experiment { title: "Table 1: the forwarding table".into(), setup: stand_in.clone(), rows, plots: vec![] };

    let title = "Section 5.2: lookup times, data in the primary cache".to_string();
    let stopwatch = match Stopwatch::new() {
        Ok(stopwatch) => stopwatch,
        Err(error) => {
            let row = Row::new("slowest lookup", "ns", find(PENTIUM_PRO, engine, "ns_primary_cache_max"), None)
                .note(format!("not run: {error}"));
            return Ok(vec![table1, Experiment { title, rows: vec![row], ..Default::default() }]);
        }
    };
    lab.progress("lulea: every routing entry looked up twice, the second timed");
    let twice: Vec<u32> = table.table.v4.iter().flat_map(|(prefix, _)| [prefix.addr(); 2]).collect();
    let mut ticks = vec![0u32; twice.len()];
    stopwatch.time_each(fib, &twice, &mut ticks)?;
    let mut second: Vec<u32> = ticks.iter().skip(1).step_by(2).copied().collect();
    second.sort_unstable();
    let ns = |raw: u32| (f64::from(raw) - stopwatch.overhead()).max(0.0) / stopwatch.tsc_ghz();
    let at = |share: f64| ns(second[((second.len() as f64 * share) as usize).min(second.len() - 1)]);
    let mean = second.iter().map(|&raw| ns(raw)).sum::<f64>() / second.len() as f64;
    let fastest_there = find(PENTIUM_PRO, engine, "ticks_fastest").map_or(String::new(), |figure| {
        format!(
            "the paper's fastest: {} ticks of a 200 MHz Pentium Pro, {:.0} ns",
            figure.value,
            figure.value * PENTIUM_PRO_NS_PER_TICK
        )
    });
    let step_ns = stopwatch.resolution() as f64 / stopwatch.tsc_ghz();
    let fastest = Row::new("fastest lookup", "ns", None, Some(ns(second[0])).filter(|&fastest| fastest >= step_ns));
    let fastest = match fastest.measured {
        Some(_) => fastest.note(fastest_there),
        None => {
            fastest.note(format!("below the counter's step of {step_ns:.1} ns here: not resolved; {fastest_there}"))
        }
    };
    let rows = vec![
        fastest,
        Row::new("median lookup", "ns", None, Some(at(0.5))).note("the paper draws the distribution (Figure 12) without its median"),
        Row::new("99.9th percentile", "ns", find(PENTIUM_PRO, engine, "ns_primary_cache_max"), Some(at(0.999)))
            .note("the paper's slowest with data in the primary cache; here the 99.9th percentile, as a VM's interrupts make the slowest meaningless"),
        Row::new("lookups per second from the mean", "Mlps", find(PENTIUM_PRO, engine, "mlps_min"), Some(1e3 / mean))
            .note("the paper's is a lower bound with the table in the secondary cache"),
    ];
    let setup = format!(
        "{stand_in} Each of the {} routing entries' first addresses looked up twice, the second timed alone with the \
         time-stamp counter ({:.2} GHz, steps of {} ticks, {:.1} ticks of reads subtracted), as the paper timed the second \
         lookup on its Pentium Pro (33 ticks of reads subtracted).",
        second.len(),
        stopwatch.tsc_ghz(),
        stopwatch.resolution(),
        stopwatch.overhead()
    );
    Ok(vec![table1, Experiment { title, setup, rows, plots: vec![] }])
}
