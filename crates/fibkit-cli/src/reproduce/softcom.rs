//! The SoftCOM 2017 DXR paper (Zec and Mikuc): Table I (the structure of
//! D16R and D20R for a table), the K sweep of Figures 4 and 5 (RND and SEQ
//! on one thread) and the peak aggregate rate of Figures 3 and 6.
//!
//! The 2014 RouteViews table stands in for LINX 2014 (513,644 prefixes,
//! 239 next hops), its values mapped onto as many next hops.

use anyhow::Result;
use fibkit::fib::Fib;
use fibkit::measure::workload::{Test, Workload};

use super::lab::{stat, Lab};
use super::published::{Figure, Published, Query};
use super::report::{Experiment, Row};

const PAPER: &str = "softcom";
const DATASET: &str = "LINX 2014";
/// The DXR configurations of the K sweep.
const SWEEP: [&str; 7] = ["d16r", "d17r", "d18r", "d19r", "d20r", "d21r", "d22r"];

fn find(place: &str, dataset: Option<&str>, engine: Option<&str>, metric: &str) -> Option<&'static Figure> {
    Published::get().find(Query { paper: PAPER, place: Some(place), dataset, engine, metric, ..Default::default() })
}

/// Every experiment of the paper that runs here.
pub(crate) fn run(lab: &mut Lab) -> Result<Vec<Experiment>> {
    let next_hops = find("Table I", Some(DATASET), None, "next_hops").map_or(239, |figure| figure.value as u32);
    let table = lab.ipv4(next_hops)?;
    let stand_in = format!("{} stands in for {DATASET}.", table.description);
    lab.progress("softcom: building D16R..D22R");
    let mut built = Vec::new();
    for name in SWEEP {
        let (fib, build_s) = lab.build::<u32>(name, &table.table)?;
        built.push((name, fib, build_s));
    }
    let family = fibkit::addr::Family::Ipv4;
    let mut rows = vec![
        Row::new(
            "IPv4 prefixes",
            "",
            find("Table I", Some(DATASET), None, "prefixes"),
            Some(table.table.prefixes(family) as f64),
        ),
        Row::new(
            "next hops",
            "",
            find("Table I", Some(DATASET), None, "next_hops"),
            Some(table.table.next_hops_of(family) as f64),
        ),
    ];
    for (name, fib, build_s) in built.iter().filter(|(name, _, _)| ["d16r", "d20r"].contains(name)) {
        let published = |metric: &str| find("Table I", Some(DATASET), Some(name), metric);
        let fib = fib.as_ref();
        rows.push(Row::new(
            format!("{name}: footprint"),
            "bytes",
            published("footprint_bytes"),
            Some(fib.footprint() as f64),
        ));
        rows.push(Row::new(
            format!("{name}: direct coverage"),
            "share",
            published("direct_share"),
            stat(fib, "direct_coverage"),
        ));
        rows.push(Row::new(
            format!("{name}: short fragments"),
            "",
            published("short_fragments"),
            stat(fib, "physical_fragments_short"),
        ));
        let long = stat(fib, "physical_fragments_long")
            .zip(stat(fib, "physical_fragments_wide"))
            .map(|(long, wide)| long + wide);
        rows.push(
            Row::new(format!("{name}: long fragments"), "", published("long_fragments"), long)
                .note("fibkit's long and wide (4-byte and 8-byte) fragments together"),
        );
        rows.push(Row::new(format!("{name}: build"), "s", published("build_s"), Some(*build_s)));
    }
    let table1 = Experiment {
        title: "Table I: DXR's structures for the table".into(),
        setup: format!("{stand_in} Build time is fibkit's whole build from the RIB."),
        rows,
        plots: vec![],
    };

    lab.progress("softcom: the K sweep, RND and SEQ on one thread");
    let mut sweep_rows = Vec::new();
    for (test, label) in [(Test::Rnd, "RND"), (Test::Seq, "SEQ")] {
        let slots: Vec<(&dyn Fib<u32>, Workload<u32>)> =
            built.iter().map(|(_, fib, _)| (fib.as_ref(), Workload::new(test.clone(), 0, 1))).collect();
        let rates = lab.rates(&slots, 1, None);
        for ((name, _, _), rate) in built.iter().zip(&rates) {
            sweep_rows.push(
                Row::new(format!("{name}: {label}"), "Mlps", None, Some(rate.median))
                    .note(format!("runs {}", rate.spread())),
            );
        }
        let best = rates.iter().map(|rate| rate.median).fold(0.0, f64::max);
        let published = Published::get().find(Query {
            paper: PAPER,
            test: Some(test.name()),
            metric: "peak_mlps_1_thread",
            ..Default::default()
        });
        sweep_rows.push(
            Row::new(format!("best K, {label}"), "Mlps", published, Some(best))
                .note("the best of D16R..D22R here; the paper's best of its machines"),
        );
    }
    let k_sweep = Experiment {
        title: "Figures 4 and 5: the K sweep, one thread".into(),
        setup: format!("{stand_in} RND: independent random keys; SEQ: each key XORed with the previous result."),
        rows: sweep_rows,
        plots: vec![],
    };

    lab.progress("softcom: peak aggregate rate");
    let peak_published = Published::get().find(Query { paper: PAPER, metric: "peak_mlps", ..Default::default() });
    let mut peak_rows = Vec::new();
    let threads = lab.cores();
    let slots: Vec<(&dyn Fib<u32>, Workload<u32>)> =
        built.iter().map(|(_, fib, _)| (fib.as_ref(), Workload::new(Test::Rnd, 0, 1))).collect();
    let rates = lab.rates(&slots, threads, None);
    let (best, rate) = built
        .iter()
        .zip(&rates)
        .max_by(|a, b| a.1.median.total_cmp(&b.1.median))
        .map(|((name, _, _), rate)| (*name, *rate))
        .expect("seven engines");
    let mut peak =
        Row::new(format!("peak aggregate RND ({best}, {threads} threads)"), "Mlps", peak_published, Some(rate.median))
            .note(format!("runs {}", rate.spread()));
    if let Some(figure) = peak_published {
        peak = peak.note(format!(
            "the paper's peak used {} threads",
            figure.threads.map_or("more".to_string(), |t| t.to_string())
        ));
    }
    peak_rows.push(peak);
    let scaling = Experiment {
        title: "Figures 3 and 6: peak aggregate rate (RND)".into(),
        setup: format!("{stand_in} Every configuration on all {threads} cores; the best is reported."),
        rows: peak_rows,
        plots: vec![],
    };
    Ok(vec![table1, k_sweep, scaling])
}
