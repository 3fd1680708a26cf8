//! The DXR web page (Zec, 2014): the `rt.stat` report of D20R on the LINX
//! snapshot, the chunk-length table for K = 16..22, and the single-thread
//! SEQ, RND and REP tables of BSD's radix tree, DIR-24-8 and DXR.
//!
//! The 2014 RouteViews table stands in for `linx.click` (513,644 prefixes,
//! 239 next hops), its values mapped onto as many next hops. Of the page's
//! four machines the report compares with the i7-4771, whose 8 MB L3 is
//! this machine's.

use anyhow::Result;
use fibkit::engines::dxr;
use fibkit::fib::Fib;
use fibkit::measure::workload::{Test, Workload};

use super::lab::{stat, Lab};
use super::published::{Figure, Published, Query};
use super::report::{Experiment, Row};

const PAPER: &str = "dxr";
const DATASET: &str = "linx.click";
const MACHINE: &str = "i7-4771";
/// The engines of the SEQ/RND/REP tables, with the page's name where
/// fibkit's differs.
const TABLES: [(&str, Option<&str>); 7] = [
    ("radix", Some("bsd")),
    ("dir24-8", None),
    ("d16r", None),
    ("d18r", None),
    ("d20r", None),
    ("d21r", None),
    ("d22r", None),
];

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

/// Every experiment of the page.
pub(crate) fn run(lab: &mut Lab) -> Result<Vec<Experiment>> {
    let next_hops = find("Test vectors", None, "next_hops").map_or(239, |figure| figure.value as u32);
    let table = lab.ipv4(next_hops)?;
    let stand_in = format!("{} stands in for {DATASET}.", table.description);
    lab.progress("dxr: rt.stat of D20R");
    let (d20r, build_s) = lab.build::<u32>("d20r", &table.table)?;
    let fib = d20r.as_ref();
    let stats = |key: &str| stat(fib, key);
    let sum = |a: &str, b: &str| stats(a).zip(stats(b)).map(|(a, b)| a + b);
    let place = "rt.stat output";
    let engine = Some("d20r");
    let family = fibkit::addr::Family::Ipv4;
    let long_note = "fibkit's long and wide fragments together";
    let rows = vec![
        Row::new("prefixes", "", find(place, None, "prefixes"), Some(table.table.prefixes(family) as f64)),
        Row::new("next hops", "", find(place, None, "next_hops"), Some(table.table.next_hops_of(family) as f64)),
        Row::new("direct table", "bytes", find(place, engine, "direct_bytes"), stats("bytes_direct")),
        Row::new("range table", "bytes", find(place, engine, "range_bytes"), stats("bytes_range")),
        Row::new("footprint", "bytes", find(place, engine, "footprint_bytes"), Some(fib.footprint() as f64)),
        Row::new("bytes per prefix", "", find(place, engine, "bytes_per_prefix"), stats("bytes_per_prefix")),
        Row::new("direct coverage", "share", find(place, engine, "direct_share"), stats("direct_coverage")),
        Row::new("longest chunk", "fragments", find(place, engine, "longest_chunk_fragments"), stats("longest_chunk")),
        Row::new("physical chunks, short", "", find(place, engine, "short_chunks"), stats("physical_chunks_short")),
        Row::new(
            "physical chunks, long",
            "",
            find(place, engine, "long_chunks"),
            sum("physical_chunks_long", "physical_chunks_wide"),
        )
        .note(long_note),
        Row::new(
            "physical fragments, short",
            "",
            find(place, engine, "short_fragments"),
            stats("physical_fragments_short"),
        ),
        Row::new(
            "physical fragments, long",
            "",
            find(place, engine, "long_fragments"),
            sum("physical_fragments_long", "physical_fragments_wide"),
        )
        .note(long_note),
        Row::new(
            "aggregated chunks, short",
            "",
            find(place, engine, "aggregated_short_chunks"),
            stats("aggregated_chunks_short"),
        ),
        Row::new(
            "aggregated chunks, long",
            "",
            find(place, engine, "aggregated_long_chunks"),
            sum("aggregated_chunks_long", "aggregated_chunks_wide"),
        )
        .note(long_note),
        Row::new(
            "aggregated fragments, short",
            "",
            find(place, engine, "aggregated_short_fragments"),
            stats("aggregated_fragments_short"),
        ),
        Row::new(
            "aggregated fragments, long",
            "",
            find(place, engine, "aggregated_long_fragments"),
            sum("aggregated_fragments_long", "aggregated_fragments_wide"),
        )
        .note(long_note),
        Row::new("build", "s", find(place, engine, "build_s"), Some(build_s)).note("fibkit's whole build from the RIB"),
    ];
    drop(d20r);
    let rt_stat =
        Experiment { title: "rt.stat: D20R's structures".into(), setup: stand_in.clone(), rows, plots: vec![] };

    lab.progress("dxr: chunk lengths for K = 16..22");
    let mut rows = Vec::new();
    for row in dxr::chunk_histogram(&table.table.v4) {
        let engine = format!("d{}r", row.k);
        for (bucket, share) in dxr::HISTOGRAM_BUCKETS.iter().zip(row.shares) {
            let label = format!("D{}R: {bucket}", row.k);
            let Some(range) = bucket.strip_prefix('>') else {
                let published =
                    find("Chunk-length table", Some(&engine), &format!("chunk_share_len_{}", bucket.replace('-', "_")));
                rows.push(Row::new(label, "share", published, Some(share)));
                continue;
            };
            if share > 0.0 {
                rows.push(
                    Row::new(label, "share", None, Some(share)).note(format!("the page has no column past {range}")),
                );
            }
        }
    }
    let chunks = Experiment {
        title: "Chunk-length table: the share of chunks by range count".into(),
        setup: format!("{stand_in} Counted from the RIB as `fibkit stat --chunk-histogram` counts them: the fragments of each of the 2^K chunks before chunks are shared."),
        rows,
        plots: vec![],
    };

    lab.progress("dxr: SEQ, RND and REP on one thread");
    let mut built = Vec::new();
    for (name, _) in TABLES {
        built.push(lab.build::<u32>(name, &table.table)?.0);
    }
    let mut rows = Vec::new();
    for (test, label) in [(Test::Seq, "SEQ"), (Test::Rnd, "RND"), (Test::Rep, "REP")] {
        let slots: Vec<(&dyn Fib<u32>, Workload<u32>)> =
            built.iter().map(|fib| (fib.as_ref(), Workload::new(test.clone(), 0, 1))).collect();
        let rates = lab.rates(&slots, 1, None);
        let place = format!("{label} results table ({MACHINE})");
        for ((name, page_name), rate) in TABLES.iter().zip(rates) {
            let published = match page_name {
                Some(page_name) => Published::get().by_id(&format!(
                    "dxr-{}-{}-linx-click-{page_name}-mlps-t1",
                    test.name(),
                    MACHINE.to_lowercase()
                )),
                None => find(&place, Some(name), "mlps"),
            };
            let mut row = Row::new(format!("{name}: {label}"), "Mlps", published, Some(rate.median))
                .note(format!("runs {}", rate.spread()));
            if page_name.is_some() {
                row = row.note("fibkit's radix (a path-compressed binary trie) for BSD's radix tree");
            }
            rows.push(row);
        }
    }
    let rates = Experiment {
        title: format!("SEQ, RND and REP tables, one thread (the page's {MACHINE} figures)"),
        setup: format!("{stand_in} SEQ: each key XORed with the previous result; RND: independent keys; REP: each key 8 times in a window."),
        rows,
        plots: vec![],
    };
    Ok(vec![rt_stat, chunks, rates])
}
