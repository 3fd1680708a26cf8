//! The Poptrie paper (Asai and Ohara, SIGCOMM 2015), section 4: Tables 1,
//! 2, 3, 5 and 6, the sequential and repeated rates of section 4.5, the
//! thread scaling of Figure 8 and the update figures of section 4.9. The
//! cycle analysis of section 4.6 is [`super::cycles`].
//!
//! The paper's REAL-Tier1-A (531,489 prefixes, 13 next hops) is private;
//! the 2014 RouteViews table of the shared data stands in for it, its
//! values mapped onto as many next hops as the paper's table has.

use std::time::Instant;

use anyhow::Result;
use fibkit::fib::Fib;
use fibkit::load::{Growth, RouteTable};
use fibkit::measure::workload::{Test, Workload};
use fibkit::random::POPTRIE_PAPER_SPACE;
use fibkit::router::{Router, Window};

use super::lab::{stat, Lab, UPDATE_TRACE};
use super::published::{Published, Query};
use super::report::{Experiment, Row};
use crate::bench::run::Rate;

/// The paper's key, and its main table.
const PAPER: &str = "poptrie";
const TIER1_A: &str = "REAL-Tier1-A";
const TIER1_B: &str = "REAL-Tier1-B";

/// The rows of Table 2, as fibkit names them.
const TABLE2: [&str; 9] = [
    "poptrie0-basic",
    "poptrie16-basic",
    "poptrie18-basic",
    "poptrie0-leafvec",
    "poptrie16-leafvec",
    "poptrie18-leafvec",
    "poptrie0",
    "poptrie16",
    "poptrie18",
];
/// The rows of Table 3 beyond Table 2's.
const TABLE3: [&str; 6] = ["radix", "treebitmap16", "treebitmap64", "sail", "d16r", "d18r"];
/// The algorithms of section 4.5's sequential and repeated figures, of
/// Table 4 and of Table 5.
pub(crate) const COMPARED: [&str; 5] = ["sail", "d16r", "d18r", "poptrie16", "poptrie18"];

/// A figure of this paper.
fn figure(
    place: &str,
    dataset: &str,
    engine: Option<&str>,
    test: Option<&str>,
    metric: &str,
) -> Option<&'static super::published::Figure> {
    Published::get().find(Query {
        paper: PAPER,
        place: Some(place),
        dataset: Some(dataset),
        engine,
        test,
        metric,
        ..Default::default()
    })
}

/// Next hops of the paper's table `dataset` (Table 1), for the mapping of
/// the stand-in.
pub(crate) fn next_hops_of(dataset: &str) -> u32 {
    figure("Table 1", dataset, None, None, "next_hops").map_or(13, |figure| figure.value as u32)
}

/// One engine built on the stand-in (or its error) and its build time.
struct Measured {
    name: &'static str,
    fib: Option<Box<dyn Fib<u32>>>,
    build_s: f64,
    error: Option<String>,
}

/// Builds `names` on `table`; an engine that refuses keeps its error.
fn build_all(lab: &Lab, names: &[&'static str], table: &RouteTable) -> Vec<Measured> {
    names
        .iter()
        .map(|&name| match lab.build::<u32>(name, table) {
            Ok((fib, build_s)) => Measured { name, fib: Some(fib), build_s, error: None },
            Err(error) => Measured { name, fib: None, build_s: 0.0, error: Some(format!("{error:#}")) },
        })
        .collect()
}

/// The rate of each built engine under `test` on one thread (`None` for
/// those that did not build).
fn rates_of(lab: &Lab, built: &[Measured], test: Test<u32>, lookups: Option<u64>) -> Vec<Option<Rate>> {
    let slots: Vec<(&dyn Fib<u32>, Workload<u32>)> = built
        .iter()
        .filter_map(|measured| measured.fib.as_deref())
        .map(|fib| (fib, Workload::new(test.clone(), 0, 1)))
        .collect();
    let mut rates = lab.rates(&slots, 1, lookups).into_iter();
    built.iter().map(|measured| measured.fib.as_ref().and_then(|_| rates.next())).collect()
}

/// The rows of the experiments on the stand-in for REAL-Tier1-A.
pub(crate) fn run(lab: &mut Lab) -> Result<Vec<Experiment>> {
    let table = lab.ipv4(next_hops_of(TIER1_A))?;
    let stand_in = format!("{} stands in for {TIER1_A}.", table.description);
    let mut experiments = vec![table1(&table.table, &stand_in)];

    lab.progress("poptrie: building the Table 2 and Table 3 engines");
    let names: Vec<&'static str> = TABLE2.iter().chain(&TABLE3).copied().collect();
    let built = build_all(lab, &names, &table.table);
    lab.progress("poptrie: random keys, one thread");
    let random = rates_of(lab, &built, Test::Rnd, None);
    experiments.push(table2(&built, &random, &stand_in));
    experiments.push(table3(&built, &random, &stand_in));

    let compared: Vec<Measured> = built.into_iter().filter(|measured| COMPARED.contains(&measured.name)).collect();
    lab.progress("poptrie: sequential (sweep) and repeated (rep16) keys");
    experiments.push(locality(lab, &compared, &stand_in));
    lab.progress("poptrie: threads");
    experiments.push(threads(lab, &compared, &stand_in));
    drop(compared);
    lab.progress("poptrie: SYN1 and SYN2");
    experiments.push(synthetic(lab, &table.table, &stand_in));
    lab.progress("poptrie: IPv6");
    experiments.push(ipv6(lab)?);
    lab.progress("poptrie: updates");
    experiments.push(updates(lab, &table.table, &stand_in)?);
    Ok(experiments)
}

fn table1(table: &RouteTable, stand_in: &str) -> Experiment {
    let family = fibkit::addr::Family::Ipv4;
    let rows = vec![
        Row::new(
            "prefixes",
            "",
            figure("Table 1", TIER1_A, None, None, "prefixes"),
            Some(table.prefixes(family) as f64),
        ),
        Row::new(
            "next hops",
            "",
            figure("Table 1", TIER1_A, None, None, "next_hops"),
            Some(table.next_hops_of(family) as f64),
        ),
    ];
    Experiment { title: "Table 1: the routing table".into(), setup: stand_in.into(), rows, plots: vec![] }
}

/// A row per figure of an engine that did not build: its error.
fn refused(measured: &Measured, rows: &mut Vec<Row>, published: Option<&super::published::Figure>) -> bool {
    match &measured.error {
        Some(error) => {
            rows.push(Row::new(measured.name, "", published, None).note(format!("refused the table: {error}")));
            true
        }
        None => false,
    }
}

fn table2(built: &[Measured], random: &[Option<Rate>], stand_in: &str) -> Experiment {
    let mut rows = Vec::new();
    for (measured, rate) in
        built.iter().zip(random).filter(|(measured, _)| TABLE2.contains(&measured.name) || measured.name == "radix")
    {
        let find = |metric: &str| figure("Table 2", TIER1_A, Some(measured.name), None, metric);
        if refused(measured, &mut rows, find("mlps")) {
            continue;
        }
        let fib = measured.fib.as_deref().expect("built");
        let name = measured.name;
        if name != "radix" {
            rows.push(Row::new(
                format!("{name}: internal nodes"),
                "",
                find("internal_nodes"),
                stat(fib, "internal_nodes"),
            ));
            rows.push(Row::new(format!("{name}: leaves"), "", find("leaf_nodes"), stat(fib, "leaves")));
            rows.push(Row::new(format!("{name}: build"), "s", find("build_s"), Some(measured.build_s)));
        }
        rows.push(Row::new(
            format!("{name}: footprint"),
            "bytes",
            find("footprint_bytes"),
            Some(fib.footprint() as f64),
        ));
        if let Some(rate) = rate {
            rows.push(
                Row::new(format!("{name}: random"), "Mlps", find("mlps"), Some(rate.median))
                    .note(format!("runs {}", rate.spread())),
            );
        }
    }
    Experiment {
        title: "Table 2: Poptrie's variants and direct pointing (random keys, one thread)".into(),
        setup: format!("{stand_in} Build time is fibkit's whole build from the RIB."),
        rows,
        plots: vec![],
    }
}

fn table3(built: &[Measured], random: &[Option<Rate>], stand_in: &str) -> Experiment {
    let mut rows = Vec::new();
    for (measured, rate) in built.iter().zip(random) {
        if !(TABLE3.contains(&measured.name) || ["poptrie0", "poptrie16", "poptrie18"].contains(&measured.name)) {
            continue;
        }
        let find = |metric: &str| figure("Table 3", TIER1_A, Some(measured.name), None, metric);
        if refused(measured, &mut rows, find("mlps")) {
            continue;
        }
        let fib = measured.fib.as_deref().expect("built");
        rows.push(Row::new(
            format!("{}: footprint", measured.name),
            "bytes",
            find("footprint_bytes"),
            Some(fib.footprint() as f64),
        ));
        if let Some(rate) = rate {
            rows.push(
                Row::new(format!("{}: random", measured.name), "Mlps", find("mlps"), Some(rate.median))
                    .note(format!("runs {}", rate.spread())),
            );
        }
    }
    // The text's ratios beside Table 3: Poptrie18 against SAIL and D18R.
    let rate_of =
        |name: &str| built.iter().zip(random).find(|(measured, _)| measured.name == name).and_then(|(_, rate)| *rate);
    for other in ["sail", "d18r"] {
        let id = format!("poptrie-sec4-5-real-tier1-a-poptrie18-vs-{other}-speedup-t1");
        let speedup = rate_of("poptrie18").zip(rate_of(other)).map(|(poptrie, other)| poptrie.median / other.median);
        let row = Row::new(format!("poptrie18 / {other}, random"), "x", Published::get().by_id(&id), speedup);
        rows.push(if speedup.is_some() { row } else { row.note(format!("{other} did not build")) });
    }
    Experiment {
        title: "Table 3: footprint and random-key rate of each algorithm (one thread)".into(),
        setup: stand_in.into(),
        rows,
        plots: vec![],
    }
}

/// Section 4.5: sequential (every address in order) and repeated (each
/// random key 16 times) on REAL-Tier1-B.
fn locality(lab: &Lab, compared: &[Measured], stand_in: &str) -> Experiment {
    // The paper sweeps all 2^32 addresses; the quick run the first ones.
    let full = lab.effort.seconds >= 1.0;
    let sweep = rates_of(lab, compared, Test::Sweep, full.then_some(1 << 32));
    let repeated = rates_of(lab, compared, Test::Rep16, None);
    let mut rows = Vec::new();
    for ((measured, sweep), repeated) in compared.iter().zip(&sweep).zip(&repeated) {
        let find = |test: &str| figure("Section 4.5", TIER1_B, Some(measured.name), Some(test), "mlps");
        if refused(measured, &mut rows, find("sweep")) {
            continue;
        }
        for (test, label, rate) in [("sweep", "sequential", sweep), ("rep16", "repeated", repeated)] {
            let rate = rate.expect("built engines have rates");
            let mut row = Row::new(format!("{}: {label}", measured.name), "Mlps", find(test), Some(rate.median))
                .note(format!("runs {}", rate.spread()));
            if test == "sweep" && !full {
                row = row.note("quick: the first addresses from 0.0.0.0, not all 2^32");
            }
            rows.push(row);
        }
    }
    Experiment {
        title: "Section 4.5: sequential and repeated keys (one thread)".into(),
        setup: format!(
            "{stand_in} The paper's figures are for {TIER1_B}; fibkit's stand-in is the same table as for {TIER1_A}."
        ),
        rows,
        plots: vec![],
    }
}

/// Figure 8: Poptrie18's random-key rate against threads.
fn threads(lab: &Lab, compared: &[Measured], stand_in: &str) -> Experiment {
    let mut rows = Vec::new();
    let published = Published::get().all(Query {
        paper: PAPER,
        place: Some("Figure 8"),
        engine: Some("poptrie18"),
        metric: "mlps",
        ..Default::default()
    });
    let Some(fib) =
        compared.iter().find(|measured| measured.name == "poptrie18").and_then(|measured| measured.fib.as_deref())
    else {
        return Experiment { title: "Figure 8: threads".into(), ..Default::default() };
    };
    let mut counts: Vec<usize> = (1..=lab.cores()).collect();
    counts.extend(published.iter().filter_map(|figure| figure.threads).map(|threads| threads as usize));
    counts.sort_unstable();
    counts.dedup();
    for threads in counts {
        let matching = published
            .iter()
            .find(|figure| figure.threads == Some(threads as u32) && figure.dataset.as_deref() == Some(TIER1_A));
        let label = format!("poptrie18, {threads} thread{}", if threads == 1 { "" } else { "s" });
        if threads > lab.cores() {
            rows.push(
                Row::new(label, "Mlps", matching.copied(), None).note(format!("not run: {} cores here", lab.cores())),
            );
            continue;
        }
        let rate = lab.rates(&[(fib, Workload::new(Test::Rnd, 0, 1))], threads, None)[0];
        rows.push(
            Row::new(label, "Mlps", matching.copied(), Some(rate.median)).note(format!("runs {}", rate.spread())),
        );
    }
    Experiment {
        title: "Figure 8: aggregate random-key rate against threads".into(),
        setup: format!("{stand_in} All threads' lookups over the wall-clock time of the run."),
        rows,
        plots: vec![],
    }
}

/// Table 5: random keys on SYN1 and SYN2 grown from the stand-in.
fn synthetic(lab: &Lab, table: &RouteTable, stand_in: &str) -> Experiment {
    let mut rows = Vec::new();
    for (growth, name) in [(Growth::Syn1, "SYN1-Tier1-A"), (Growth::Syn2, "SYN2-Tier1-A")] {
        let mut grown = table.clone();
        if let Err(error) = crate::convert::grow_table(&mut grown, growth) {
            rows.push(Row::new(format!("{name}: routes"), "", None, None).note(format!("not grown: {error:#}")));
            continue;
        }
        let find = |engine: Option<&str>, metric: &str| figure("Table 5", name, engine, None, metric);
        rows.push(Row::new(format!("{name}: routes"), "", find(None, "prefixes"), Some(grown.v4.len() as f64)));
        let engines: Vec<&'static str> = ["sail", "d18r", "poptrie18"].into();
        let built = build_all(lab, &engines, &grown);
        let rates = rates_of(lab, &built, Test::Rnd, None);
        for (measured, rate) in built.iter().zip(rates) {
            if refused(measured, &mut rows, find(Some(measured.name), "mlps")) {
                continue;
            }
            let rate = rate.expect("built engines have rates");
            let published = find(Some(measured.name), "mlps");
            let mut row = Row::new(format!("{name}: {}", measured.name), "Mlps", published, Some(rate.median))
                .note(format!("runs {}", rate.spread()));
            if published.is_none() && measured.name == "sail" {
                let chunks = measured.fib.as_deref().and_then(|fib| stat(fib, "chunks_24")).unwrap_or_default();
                row = row.note(format!(
                    "N/A in the paper: its table needed more than SAIL's 2^15 level-16 chunk IDs; this one needs {chunks}"
                ));
            }
            rows.push(row);
        }
    }
    Experiment {
        title: "Table 5: random keys on the grown tables SYN1 and SYN2 (one thread)".into(),
        setup: format!("{stand_in} SYN1 and SYN2 are grown from it as the paper grows them (`fibkit convert --grow`)."),
        rows,
        plots: vec![],
    }
}

/// Table 6: Poptrie on the IPv6 table, random keys inside 2000::/8.
fn ipv6(lab: &mut Lab) -> Result<Experiment> {
    let title = "Table 6: Poptrie on IPv6 (random keys in 2000::/8, one thread)".to_string();
    let Some(table) = lab.ipv6()? else {
        let rows = ["poptrie0", "poptrie16", "poptrie18"]
            .iter()
            .map(|name| {
                Row::new(format!("{name}: random"), "Mlps", figure("Table 6", "", Some(name), None, "mlps"), None)
                    .note(format!("not run: no IPv6 table ({} not in the data directory)", super::lab::IPV6_TABLE))
            })
            .collect();
        return Ok(Experiment { title, rows, ..Default::default() });
    };
    let dataset = Published::get()
        .find(Query { paper: PAPER, place: Some("Table 6"), metric: "mlps", ..Default::default() })
        .and_then(|figure| figure.dataset.clone())
        .unwrap_or_default();
    let find = |engine: &str, metric: &str| figure("Table 6", &dataset, Some(engine), None, metric);
    let find_text = |engine: &str| {
        Published::get().find(Query {
            paper: PAPER,
            place: Some("Section 4.10"),
            engine: Some(engine),
            metric: "mlps",
            ..Default::default()
        })
    };
    let names = ["poptrie0", "poptrie16", "poptrie18", "d16r6", "d18r6"];
    let mut built = Vec::new();
    let mut rows = Vec::new();
    for name in names {
        let (fib, build_s) = lab.build::<u128>(name, &table.table)?;
        built.push((name, fib, build_s));
    }
    let space = fibkit::random::key_space(POPTRIE_PAPER_SPACE);
    let slots: Vec<(&dyn Fib<u128>, Workload<u128>)> =
        built.iter().map(|(_, fib, _)| (fib.as_ref(), Workload { space, ..Workload::new(Test::Rnd, 0, 1) })).collect();
    let rates = lab.rates(&slots, 1, None);
    for ((name, fib, build_s), rate) in built.iter().zip(rates) {
        if name.starts_with("poptrie") {
            rows.push(Row::new(
                format!("{name}: internal nodes"),
                "",
                find(name, "internal_nodes"),
                stat(fib.as_ref(), "internal_nodes"),
            ));
            rows.push(Row::new(format!("{name}: leaves"), "", find(name, "leaf_nodes"), stat(fib.as_ref(), "leaves")));
            rows.push(Row::new(
                format!("{name}: footprint"),
                "bytes",
                find(name, "footprint_bytes"),
                Some(fib.footprint() as f64),
            ));
            rows.push(Row::new(format!("{name}: build"), "s", find(name, "build_s"), Some(*build_s)));
        }
        let published = find(name, "mlps").or_else(|| find_text(name));
        rows.push(
            Row::new(format!("{name}: random"), "Mlps", published, Some(rate.median))
                .note(format!("runs {}", rate.spread())),
        );
    }
    Ok(Experiment {
        title,
        setup: format!("{} stands in for the paper's IPv6 table ({dataset}).", table.description),
        rows,
        plots: vec![],
    })
}

/// Section 4.9: the 23,446-update trace applied one update at a time to
/// Poptrie18, and the insertion of the whole table in random order.
fn updates(lab: &mut Lab, table: &RouteTable, stand_in: &str) -> Result<Experiment> {
    let title = "Section 4.9: updates to Poptrie18".to_string();
    let find = |metric: &str| {
        Published::get().find(Query {
            paper: PAPER,
            place: Some("Section 4.9"),
            engine: Some("poptrie18"),
            metric,
            ..Default::default()
        })
    };
    let Some(path) = lab.data_file(UPDATE_TRACE) else {
        let row = Row::new("trace: time per update", "us", find("us_per_update"), None)
            .note(format!("not run: the update trace ({UPDATE_TRACE}) is not in the data directory"));
        return Ok(Experiment { title, rows: vec![row], ..Default::default() });
    };
    let options = fibkit::load::LoadOptions { mapping: table.next_hops.mapping(), ..Default::default() };
    let stream = fibkit::load::load_updates(&path, &options)?;
    let trace: Vec<_> = stream.updates.iter().filter_map(|timed| timed.update.of::<u32>()).collect();
    let mut router = Router::new("poptrie18", table.v4.clone(), table.next_hops.clone(), Window::Count(1))?;
    let start = Instant::now();
    let mut rejected = 0usize;
    for update in &trace {
        rejected += router.apply(std::slice::from_ref(update)).map_or(1, |published| published.rejected.len());
    }
    let total = start.elapsed().as_secs_f64();
    let mut rows = vec![
        Row::new("trace: updates", "", find("updates"), Some(trace.len() as f64)),
        Row::new("trace: all updates", "s", find("trace_s"), Some(total)),
        Row::new("trace: time per update", "us", find("us_per_update"), Some(total * 1e6 / trace.len() as f64))
            .note("each update published alone (RIB, engine update and publication)"),
    ];
    if rejected > 0 {
        rows.push(
            Row::new("trace: updates rejected", "", None, Some(rejected as f64))
                .note("not applied: see `fibkit replay`"),
        );
    }
    // The whole table inserted route by route, in random order.
    let mut routes: Vec<_> = table.v4.iter().collect();
    let mut generator = fibkit::random::XorShift32::new(4_9);
    for index in (1..routes.len()).rev() {
        routes.swap(index, generator.next() as usize % (index + 1));
    }
    let mut empty = Router::new("poptrie18", fibkit::rib::Rib4::new(), table.next_hops.clone(), Window::Count(1))?;
    let start = Instant::now();
    for &(prefix, next_hop) in &routes {
        let value = table.next_hops.label_for(next_hop).unwrap_or(fibkit::nexthop::Label::Number(u64::from(next_hop)));
        empty.apply(&[fibkit::update::Update::Announce { prefix, value }])?;
    }
    let inserted = start.elapsed().as_secs_f64();
    let find_insert = |metric: &str| {
        Published::get().find(Query {
            paper: PAPER,
            place: Some("Section 4.9"),
            dataset: Some(TIER1_A),
            metric,
            ..Default::default()
        })
    };
    rows.push(Row::new("whole table: insertion", "s", find_insert("insert_total_s"), Some(inserted)));
    rows.push(
        Row::new(
            "whole table: time per route",
            "us",
            find_insert("us_per_insert"),
            Some(inserted * 1e6 / routes.len() as f64),
        )
        .note("routes in random order into an empty Poptrie18, each published alone"),
    );
    Ok(Experiment {
        title,
        setup: format!(
            "{stand_in} The trace is {UPDATE_TRACE}, the paper's own; applied to the stand-in table, not the peer's."
        ),
        rows,
        plots: vec![],
    })
}
