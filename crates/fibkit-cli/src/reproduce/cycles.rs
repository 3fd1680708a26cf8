//! The Poptrie paper's CPU-cycle analysis (section 4.6): Table 4's
//! percentiles of per-lookup cost, Figure 10's CDF, Figure 11's
//! distribution per binary radix depth, and Figure 7's heat map of matched
//! prefix length against binary radix depth.
//!
//! Every engine looks up the same random keys (one xorshift32 stream, as
//! the paper used one seed), each timed alone with the time-stamp counter
//! ([`fibkit::measure::cycles`]).

use std::path::Path;

use anyhow::Result;
use fibkit::measure::cycles::{by_depth, Percentiles, Stopwatch};
use fibkit::random::XorShift32;
use fibkit::rib::Rib4;

use super::lab::Lab;
use super::plots::{self, Candle, Curve};
use super::poptrie::{next_hops_of, COMPARED};
use super::published::{Published, Query};
use super::report::{Experiment, Row};

/// A column of Table 4: label, data file metric, value.
type Column = (&'static str, &'static str, fn(&Percentiles) -> f64);

/// The percentile columns of Table 4.
const COLUMNS: [Column; 5] = [
    ("mean", "cycles_mean", |p| p.mean),
    ("50th", "cycles_p50", |p| p.p50),
    ("75th", "cycles_p75", |p| p.p75),
    ("95th", "cycles_p95", |p| p.p95),
    ("99th", "cycles_p99", |p| p.p99),
];

/// Seed of the keys every engine looks up.
const SEED: u64 = 2015;

/// Table 4, Figures 10, 11 and 7; the plots go to `out`.
pub(crate) fn run(lab: &mut Lab, out: &Path) -> Result<Vec<Experiment>> {
    let table = lab.ipv4(next_hops_of("REAL-Tier1-A"))?;
    let title = "Table 4: per-lookup cost of random keys".to_string();
    let stopwatch = match Stopwatch::new() {
        Ok(stopwatch) => stopwatch,
        Err(error) => {
            let rows = COMPARED
                .iter()
                .map(|name| Row::new(format!("{name}: mean"), "ticks", None, None).note(format!("not run: {error}")))
                .collect();
            return Ok(vec![Experiment { title, rows, ..Default::default() }]);
        }
    };
    let mut generator = XorShift32::new(SEED);
    let keys: Vec<u32> = (0..lab.effort.cycle_keys).map(|_| generator.next()).collect();
    let rib = &table.table.v4;
    let depths: Vec<u8> = keys.iter().map(|&key| rib.radix_depth(key)).collect();
    let ghz = stopwatch.tsc_ghz();
    let paper_ghz = 3.9;
    let mut rows = Vec::new();
    let mut curves = Vec::new();
    let mut candles = Vec::new();
    // The paper's five first (and in the plots), then every other IPv4
    // engine of the registry (variants aside), on the same keys.
    let others = crate::registered::engines_of(fibkit::addr::Family::Ipv4)
        .into_iter()
        .filter(|engine| engine.variant_of.is_none() && !COMPARED.contains(&engine.name))
        .map(|engine| engine.name);
    for name in COMPARED.into_iter().chain(others) {
        lab.progress(format!("cycles: {name}, {} keys one by one", keys.len()));
        let find = |metric: &str| {
            Published::get().find(Query {
                paper: "poptrie",
                place: Some("Table 4"),
                dataset: Some("REAL-Tier1-A"),
                engine: Some(name),
                metric,
                ..Default::default()
            })
        };
        let fib = match lab.build::<u32>(name, &table.table) {
            Ok((fib, _)) => fib,
            Err(error) => {
                rows.push(
                    Row::new(format!("{name}: mean"), "ticks", find("cycles_mean"), None)
                        .note(format!("refused the table: {error:#}")),
                );
                continue;
            }
        };
        let mut ticks = vec![0u32; keys.len()];
        stopwatch.time_each(fib.as_ref(), &keys, &mut ticks)?;
        drop(fib);
        let overhead = stopwatch.overhead();
        let per_depth = by_depth(&ticks, &depths, overhead);
        let mut sorted = ticks;
        let percentiles = Percentiles::of(&mut sorted, overhead).expect("keys were timed");
        for (label, metric, value) in COLUMNS {
            let published = find(metric);
            let here = value(&percentiles);
            let note = match published {
                Some(figure) => format!("{:.1} ns here, {:.1} ns there", here / ghz, figure.value / paper_ghz),
                None => format!("{:.1} ns", here / ghz),
            };
            rows.push(Row::new(format!("{name}: {label}"), "ticks", published, Some(here)).note(note));
        }
        if COMPARED.contains(&name) {
            curves.push(Curve { label: name.to_string(), sorted, overhead });
            candles
                .push((name.to_string(), per_depth.into_iter().map(|group| group.map(Candle::of)).collect::<Vec<_>>()));
        }
    }
    let setup = format!(
        "{} stands in for REAL-Tier1-A. {} random keys (xorshift32, seed {SEED}), the same for every engine (the paper's \
         five, then every other of fibkit's and the registered peers; the plots show the five), each lookup \
         timed alone between serialised time-stamp counter reads; the reads' own {:.1} ticks (their mean around nothing) \
         are subtracted, as the paper subtracted its 83-cycle counter overhead. Ticks are the time-stamp counter's, which \
         runs at a fixed {ghz:.2} GHz here{} and advances in steps of {} ticks ({:.1} ns): single timings are that coarse, \
         their mean is not. The paper counted core cycles at 3.9 GHz with a performance counter{}; the notes give both in \
         nanoseconds.",
        table.description,
        keys.len(),
        stopwatch.overhead(),
        if stopwatch.invariant() { " (invariant: whatever the core clock does)" } else { " (the CPU does not report it invariant)" },
        stopwatch.resolution(),
        stopwatch.resolution() as f64 / ghz,
        if std::path::Path::new("/sys/bus/event_source/devices/cpu").exists() {
            ""
        } else {
            ", which this machine does not expose (no hardware performance monitoring unit)"
        },
    );
    let table4 = Experiment { title, setup, rows, plots: vec![] };
    let mut figures = Experiment {
        title: "Figures 10, 11 and 7: cost distributions and binary radix depth".into(),
        setup:
            "Figure 10: the share of lookups done within a given number of ticks. Figure 11: per binary radix depth \
                (the bits a binary trie of the table examines for the key), the 5th, 25th, 50th, 75th and 95th \
                percentiles. Figure 7: how many addresses have each matched prefix length and binary radix depth."
                .into(),
        ..Default::default()
    };
    figures.plots.push(plots::cdf(
        out,
        "poptrie-figure10-cdf.png",
        &curves,
        "Per-lookup ticks, random keys (Figure 10)",
    )?);
    figures.plots.push(plots::candles(
        out,
        "poptrie-figure11-depth.png",
        &candles,
        "Ticks per binary radix depth (Figure 11)",
    )?);
    lab.progress("cycles: heat map of depth against matched prefix length");
    let heat = heat_map(rib, lab.effort.heat_samples);
    let caption = "Binary radix depth against matched prefix length (Figure 7)";
    figures.plots.push(plots::heat_map(out, "poptrie-figure7-heat.png", &heat, caption)?);
    let deeper = |bits: usize| {
        heat.iter().map(|row| row[bits + 1..].iter().sum::<u64>()).sum::<u64>() as f64 / lab.effort.heat_samples as f64
    };
    for bits in [18, 24] {
        let published = Published::get().find(Query {
            paper: "poptrie",
            metric: &format!("share_depth_over_{bits}"),
            ..Default::default()
        });
        let row =
            Row::new(format!("addresses of binary radix depth over {bits}"), "share", published, Some(deeper(bits)));
        figures.rows.push(
            row.note("sampled; the paper's share is for REAL-RENET, whose IGP routes go deeper than a BGP table's"),
        );
    }
    Ok(vec![table4, figures])
}

/// Counts of sampled addresses by matched prefix length (outer index, 0
/// for no match as for a /0) and binary radix depth (inner index).
fn heat_map(rib: &Rib4, samples: usize) -> Vec<Vec<u64>> {
    let mut counts = vec![vec![0u64; 33]; 33];
    let mut generator = XorShift32::new(SEED + 1);
    for _ in 0..samples {
        let addr = generator.next();
        let matched = rib.lookup_prefix(addr).map_or(0, |(prefix, _)| usize::from(prefix.prefix_len()));
        counts[matched][usize::from(rib.radix_depth(addr))] += 1;
    }
    counts
}
