//! The Linux route-lookup article (Bernat, 2017): its two scenarios, a
//! full table of 500,000 Internet routes and 500,000 host routes in 4
//! subnets, each lookup timed alone and the median kept, as its kernel
//! module did with `fib_lookup()` over 100,000 iterations.
//!
//! The article's per-kernel times are only in its graph, which the text
//! does not keep: the rows give the scenarios' shape beside the article's
//! and fibkit's medians with nothing to divide them by. `lctrie` is the
//! shape of Linux's fib_trie; Poptrie and DXR stand beside it.

use anyhow::Result;
use fibkit::addr::Family;
use fibkit::load::{host_routes, RouteTable};
use fibkit::measure::cycles::{Percentiles, Stopwatch};
use fibkit::random::XorShift32;

use super::lab::Lab;
use super::published::{Published, Query};
use super::report::{Experiment, Row};

const PAPER: &str = "linux";
const FULL_TABLE: &str = "500,000 routes from an Internet router";
const HOST_ROUTES: &str = "500,000 /32 host routes in 4 subnets";
/// Timed lookups per engine and scenario, as in the article.
const ITERATIONS: usize = 100_000;
const ENGINES: [&str; 3] = ["lctrie", "poptrie18", "d18r"];
const GRAPH_ONLY: &str = "the article's times are in its graph only";

fn find(dataset: &str, metric: &str) -> Option<&'static super::published::Figure> {
    Published::get().find(Query { paper: PAPER, dataset: Some(dataset), metric, ..Default::default() })
}

/// Both scenarios.
pub(crate) fn run(lab: &mut Lab) -> Result<Vec<Experiment>> {
    let stopwatch = Stopwatch::new();
    let table = lab.ipv4(16)?;
    let v4 = &table.table.v4;
    let slash24 = v4.iter().filter(|(prefix, _)| prefix.prefix_len() == 24).count() as f64 / v4.len().max(1) as f64;
    let mut generator = XorShift32::new(2017);
    let random: Vec<u32> = (0..ITERATIONS).map(|_| generator.next()).collect();
    let mut rows = vec![
        Row::new("routes", "", find(FULL_TABLE, "prefixes"), Some(table.table.prefixes(Family::Ipv4) as f64)),
        Row::new("share of /24 routes", "share", find(FULL_TABLE, "len24_share"), Some(slash24)),
    ];
    lab.progress("linux: full table, lookups timed one by one");
    rows.extend(medians(lab, &stopwatch, &table.table, &random));
    let full = Experiment {
        title: "Scenario 1: a full Internet table".into(),
        setup: format!(
            "{} stands in for the article's 500,000 routes; {ITERATIONS} random destinations, each lookup timed alone, the median kept.",
            table.description
        ),
        rows,
        plots: vec![],
    };

    let hosts = host_routes(500_000, 4, 16)?;
    let routes: Vec<u32> = hosts.v4.iter().map(|(prefix, _)| prefix.addr()).collect();
    let destinations: Vec<u32> = (0..ITERATIONS).map(|_| routes[generator.next() as usize % routes.len()]).collect();
    let mut rows = vec![
        Row::new("routes", "", find(HOST_ROUTES, "prefixes"), Some(hosts.v4.len() as f64)),
        Row::new("subnets", "", find(HOST_ROUTES, "subnets"), Some(4.0)),
    ];
    lab.progress("linux: host routes, lookups timed one by one");
    rows.extend(medians(lab, &stopwatch, &hosts, &destinations));
    let host = Experiment {
        title: "Scenario 2: 500,000 host routes in 4 subnets".into(),
        setup: format!(
            "`fibkit convert --host-routes 500000 --subnets 4`: consecutive /32s from the start of each quarter of 10.0.0.0/8, \
             16 next hops in turn; {ITERATIONS} destinations drawn among the routes, each lookup timed alone, the median kept."
        ),
        rows,
        plots: vec![],
    };
    Ok(vec![full, host])
}

/// A row per engine: the median nanoseconds of its lookups of `keys`.
fn medians(
    lab: &Lab,
    stopwatch: &Result<Stopwatch, fibkit::measure::cycles::CyclesError>,
    table: &RouteTable,
    keys: &[u32],
) -> Vec<Row> {
    ENGINES
        .iter()
        .map(|&name| {
            let label = format!("{name}: median lookup");
            let stopwatch = match stopwatch {
                Ok(stopwatch) => stopwatch,
                Err(error) => return Row::new(label, "ns", None, None).note(format!("not run: {error}")),
            };
            let fib = match lab.build::<u32>(name, table) {
                Ok((fib, _)) => fib,
                Err(error) => return Row::new(label, "ns", None, None).note(format!("refused the table: {error:#}")),
            };
            let mut ticks = vec![0u32; keys.len()];
            if let Err(error) = stopwatch.time_each(fib.as_ref(), keys, &mut ticks) {
                return Row::new(label, "ns", None, None).note(format!("not run: {error}"));
            }
            let percentiles = Percentiles::of(&mut ticks, stopwatch.overhead()).expect("keys were timed");
            Row::new(label, "ns", None, Some(percentiles.p50 / stopwatch.tsc_ghz())).note(format!(
                "{GRAPH_ONLY}; here counter steps of {:.1} ns, mean {:.1} ns",
                stopwatch.resolution() as f64 / stopwatch.tsc_ghz(),
                percentiles.mean / stopwatch.tsc_ghz()
            ))
        })
        .collect()
}
