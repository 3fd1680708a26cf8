//! What a bench run found ([`Report`], with each engine's build figures)
//! and its two forms: the text tables (`render`) and the JSON
//! ([`to_json`]).

use std::collections::BTreeSet;

use fibkit::addr::Prefix6;
use fibkit::fib::{Figure, Stats};
use fibkit::random::worker_seed;
use serde_json::{json, Map, Value};

use super::args::TestName;
use super::machine::Machine;
use super::run::Measurement;
use crate::family::Family;
#[cfg(test)]
use clap::ValueEnum;

/// An engine's build figures.
#[derive(Clone, Debug)]
pub(super) struct EngineFigures {
    pub(super) engine: String,
    pub(super) summary: String,
    /// `None` when the engine refused the table (see `error`).
    pub(super) bytes_total: Option<u64>,
    pub(super) build_ms: Option<f64>,
    pub(super) parameters: Map<String, Value>,
    pub(super) error: Option<String>,
}

/// The name of the ceiling's row and results
/// ([`fibkit::measure::ceiling`]), measured beside the engines.
pub(super) const CEILING: &str = fibkit::measure::ceiling::NAME;

/// Everything a bench run found, for the tables, the JSON and the plots.
#[derive(Clone, Debug)]
pub(super) struct Report {
    pub(super) machine: Machine,
    pub(super) table_name: String,
    pub(super) prefixes: usize,
    pub(super) next_hops: usize,
    pub(super) mapping: String,
    pub(super) engines: Vec<EngineFigures>,
    pub(super) measurements: Vec<Measurement>,
    /// The selection (tables and the threads plot show these first).
    pub(super) selected: Vec<String>,
    pub(super) tests: Vec<TestName>,
    pub(super) threads: Vec<usize>,
    pub(super) batches: Vec<usize>,
    pub(super) seconds: f64,
    pub(super) runs: usize,
    pub(super) keys_file: Option<String>,
    pub(super) keys: usize,
    pub(super) pinned: bool,
    pub(super) family: Family,
    /// IPv6: the prefix random keys were drawn inside.
    pub(super) key_space: Option<Prefix6>,
    /// IPv6: the share of those keys that hit a route.
    pub(super) key_space_routed: Option<f64>,
}

/// An engine's statistics figures as JSON (its parameters and structure).
pub(super) fn parameters(stats: Stats) -> Map<String, Value> {
    stats
        .figures
        .into_iter()
        .map(|(key, figure)| {
            let value = match figure {
                Figure::Count(value) => json!(value),
                Figure::Real(value) => json!(value),
                Figure::Text(value) => json!(value),
            };
            (key, value)
        })
        .collect()
}

/// The tables' rows: the engines in report order (the selection first,
/// then the DXR sweep's), then the ceiling.
fn engine_order(report: &Report) -> Vec<&str> {
    report.engines.iter().map(|engine| engine.engine.as_str()).chain([CEILING]).collect()
}

/// The whole text report: [`render_preamble`] (build figures), each test's
/// table ([`render_test`]: rows engines and batch lengths, columns thread
/// counts, as on the DXR page) and [`render_footer`], which `fibkit bench`
/// prints one by one while it measures.
#[cfg(test)]
pub(super) fn render(report: &Report) -> String {
    let mut out = render_preamble(report);
    for &test in TestName::value_variants() {
        out += &render_test(report, test);
    }
    out + &render_footer(report)
}

/// What is known before the measurements: the table, the machine, the
/// parameters, and each engine's size and build time.
pub(super) fn render_preamble(report: &Report) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Table: {} ({} {} prefixes, {} next hops, mapping: {})",
        report.table_name, report.prefixes, report.family, report.next_hops, report.mapping
    );
    if let Some(space) = report.key_space {
        let _ = writeln!(
            out,
            "Random IPv6 keys: inside {space}{}",
            report
                .key_space_routed
                .map_or(String::new(), |share| format!(" ({:.2}% of them hit a route)", share * 100.0))
        );
    }
    let _ = writeln!(
        out,
        "Machine: {}, {} cores{}, huge pages {}; {} run(s) of {} s per configuration",
        report.machine.cpu_model,
        report.machine.cores,
        report.machine.busy_cores.map_or(String::new(), |busy| format!(" ({busy:.1} busy with other work at start)")),
        report.machine.huge_pages,
        report.runs,
        report.seconds,
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "{:<14} {:>12} {:>12} {:>10}", "engine", "bytes", "bytes/prefix", "build ms");
    for engine in &report.engines {
        match (engine.bytes_total, engine.build_ms, &engine.error) {
            (Some(bytes), Some(build_ms), _) => {
                let _ = writeln!(
                    out,
                    "{:<14} {:>12} {:>12.2} {:>10.1}",
                    engine.engine,
                    bytes,
                    bytes as f64 / report.prefixes.max(1) as f64,
                    build_ms
                );
            }
            (_, _, error) => {
                let _ = writeln!(out, "{:<14} refused: {}", engine.engine, error.as_deref().unwrap_or("?"));
            }
        }
    }
    out
}

/// The table of `test`: engines as rows, thread counts as columns (empty
/// if `test` was not measured).
pub(super) fn render_test(report: &Report, test: TestName) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let order = engine_order(report);
    let show_batch = report.batches.iter().any(|&batch| batch != 0);
    let of_test: Vec<&Measurement> = report.measurements.iter().filter(|m| m.config.test == test).collect();
    if of_test.is_empty() {
        return out;
    }
    let threads: BTreeSet<usize> = of_test.iter().map(|m| m.config.threads).collect();
    let _ = writeln!(out);
    let _ = writeln!(out, "{} test, Mlps: median (min-max) of {} run(s)", test.title(), report.runs);
    let _ = write!(out, "{:<14}", "engine");
    if show_batch {
        let _ = write!(out, " {:>5}", "batch");
    }
    for &count in &threads {
        let heading = if count == 1 { "1 thread".to_string() } else { format!("{count} threads") };
        let _ = write!(out, " {heading:>24}");
    }
    let _ = writeln!(out);
    let mut rows: Vec<(usize, usize)> = of_test
        .iter()
        .map(|m| (order.iter().position(|name| *name == m.engine).unwrap_or(usize::MAX), m.config.batch))
        .collect();
    rows.sort_unstable();
    rows.dedup();
    for (position, batch) in rows {
        let engine = order.get(position).copied().unwrap_or("?");
        let _ = write!(out, "{engine:<14}");
        if show_batch {
            let _ = write!(out, " {batch:>5}");
        }
        for &count in &threads {
            let cell = of_test
                .iter()
                .find(|m| m.engine == engine && m.config.batch == batch && m.config.threads == count)
                .map_or_else(|| "-".to_string(), |m| format!("{:.1} ({:.1}-{:.1})", m.median(), m.min(), m.max()));
            let _ = write!(out, " {cell:>24}");
        }
        let _ = writeln!(out);
    }
    out
}

/// What is known after the measurements: how the workers ran.
pub(super) fn render_footer(report: &Report) -> String {
    let pinned = if report.pinned { "pinned each to a core" } else { "not pinned to cores (the OS refused)" };
    format!("\nWorkers were {pinned}.\n")
}

/// The JSON report: `machine`, `table`, `parameters`, `engines`, `results`.
pub(super) fn to_json(report: &Report) -> Value {
    let engines: Vec<Value> = report
        .engines
        .iter()
        .map(|engine| {
            let mut object = Map::new();
            object.insert("engine".into(), json!(engine.engine));
            object.insert("summary".into(), json!(engine.summary));
            object.insert("selected".into(), json!(report.selected.contains(&engine.engine)));
            object.insert("bytes_total".into(), json!(engine.bytes_total));
            object.insert(
                "bytes_per_prefix".into(),
                json!(engine.bytes_total.map(|bytes| bytes as f64 / report.prefixes.max(1) as f64)),
            );
            object.insert("build_ms".into(), json!(engine.build_ms));
            object.insert("parameters".into(), Value::Object(engine.parameters.clone()));
            if let Some(error) = &engine.error {
                object.insert("error".into(), json!(error));
            }
            Value::Object(object)
        })
        .collect();
    let results: Vec<Value> = report
        .measurements
        .iter()
        .map(|m| {
            json!({
                "engine": m.engine,
                "test": m.config.test.as_str(),
                "threads": m.config.threads,
                "batch": m.config.batch,
                "mlps_median": m.median(),
                "mlps_min": m.min(),
                "mlps_max": m.max(),
                "mlps_runs": m.mlps_runs,
                "runs": m.mlps_runs.len(),
                "lookups_per_thread": m.lookups_per_thread,
                "checksum": m.checksum,
            })
        })
        .collect();
    json!({
        "fibkit_version": env!("CARGO_PKG_VERSION"),
        "machine": {
            "cpu_model": report.machine.cpu_model,
            "cores": report.machine.cores,
            "cache_size": report.machine.cache_size,
            "busy_cores": report.machine.busy_cores,
            "huge_pages": report.machine.huge_pages,
            "os": std::env::consts::OS,
            "arch": std::env::consts::ARCH,
        },
        "table": {
            "name": report.table_name,
            "prefixes": report.prefixes,
            "family": report.family.key(),
            "next_hops": report.next_hops,
            "mapping": report.mapping,
        },
        "parameters": {
            "engines": report.selected,
            "tests": report.tests.iter().map(|test| test.as_str()).collect::<Vec<_>>(),
            "threads": report.threads,
            "batch": report.batches,
            "seconds": report.seconds,
            "runs": report.runs,
            "keys_file": report.keys_file,
            "keys": report.keys,
            "key_space": report.key_space.map(|space| space.to_string()),
            "key_space_routed_share": report.key_space_routed,
            "pinned": report.pinned,
            "seeds": (0..report.threads.iter().copied().max().unwrap_or(1)).map(worker_seed).collect::<Vec<_>>(),
        },
        "engines": engines,
        "results": results,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::plan::Config;

    fn sample_report() -> Report {
        let measurement = |engine: &str, test, threads, runs: Vec<f64>| Measurement {
            engine: engine.to_string(),
            config: Config { test, batch: 0, threads },
            mlps_runs: runs,
            lookups_per_thread: 800,
            checksum: 12345,
        };
        Report {
            machine: Machine {
                cpu_model: "Test CPU".into(),
                cores: 2,
                cache_size: None,
                busy_cores: Some(0.5),
                huge_pages: "advised (THP madvise)".into(),
            },
            table_name: "tiny".into(),
            prefixes: 4,
            next_hops: 2,
            mapping: "distinct values".into(),
            engines: vec![
                EngineFigures {
                    engine: "radix".into(),
                    summary: "trie".into(),
                    bytes_total: Some(400),
                    build_ms: Some(0.5),
                    parameters: Map::from_iter([("nodes".to_string(), json!(7))]),
                    error: None,
                },
                EngineFigures {
                    engine: "d16r".into(),
                    summary: "DXR".into(),
                    bytes_total: None,
                    build_ms: None,
                    parameters: Map::new(),
                    error: Some("too many next hops".into()),
                },
            ],
            measurements: vec![
                measurement("radix", TestName::Rnd, 1, vec![3.0, 1.0, 2.0]),
                measurement("radix", TestName::Rnd, 2, vec![4.0, 6.0]),
            ],
            selected: vec!["radix".into(), "d16r".into()],
            tests: vec![TestName::Rnd],
            threads: vec![1, 2],
            batches: vec![0],
            seconds: 0.05,
            runs: 3,
            keys_file: None,
            keys: 0,
            pinned: true,
            family: Family::Ipv4,
            key_space: None,
            key_space_routed: None,
        }
    }

    #[test]
    fn json_has_the_documented_schema() {
        let value = to_json(&sample_report());
        for key in ["machine", "table", "parameters", "engines", "results"] {
            assert!(value.get(key).is_some(), "no {key}");
        }
        assert_eq!(value["machine"]["cpu_model"], "Test CPU");
        assert_eq!(value["machine"]["cores"], 2);
        assert_eq!(value["machine"]["busy_cores"], 0.5);
        for key in ["name", "prefixes", "next_hops", "mapping"] {
            assert!(value["table"].get(key).is_some(), "table has no {key}");
        }
        let results = value["results"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        let first = &results[0];
        for key in ["engine", "test", "threads", "batch", "mlps_median", "mlps_min", "mlps_max", "runs", "checksum"] {
            assert!(first.get(key).is_some(), "result has no {key}");
        }
        assert_eq!(first["test"], "rnd");
        assert_eq!(first["mlps_median"], 2.0);
        assert_eq!(first["mlps_min"], 1.0);
        assert_eq!(first["mlps_max"], 3.0);
        assert_eq!(first["runs"], 3);
        assert_eq!(results[1]["mlps_median"], 5.0, "median of an even count is the middle mean");
        let engines = value["engines"].as_array().unwrap();
        assert_eq!(engines[0]["bytes_total"], 400);
        assert_eq!(engines[0]["bytes_per_prefix"], 100.0);
        assert_eq!(engines[0]["build_ms"], 0.5);
        assert_eq!(engines[0]["parameters"]["nodes"], 7);
        assert!(engines[1]["bytes_total"].is_null());
        assert_eq!(engines[1]["error"], "too many next hops");
    }

    #[test]
    fn ipv6_reports_name_the_family_and_the_key_space() {
        let mut report = sample_report();
        report.family = Family::Ipv6;
        report.key_space = Some("2000::/8".parse().unwrap());
        report.key_space_routed = Some(0.25);
        let text = render(&report);
        assert!(text.contains("(4 IPv6 prefixes,"), "{text}");
        assert!(text.contains("Random IPv6 keys: inside 2000::/8 (25.00% of them hit a route)"), "{text}");
        let value = to_json(&report);
        assert_eq!(value["table"]["family"], "ipv6");
        assert_eq!(value["parameters"]["key_space"], "2000::/8");
        assert_eq!(value["parameters"]["key_space_routed_share"], 0.25);
        let ipv4 = to_json(&sample_report());
        assert_eq!(ipv4["table"]["family"], "ipv4");
        assert!(ipv4["parameters"]["key_space"].is_null());
    }

    #[test]
    fn text_tables_have_engines_as_rows_and_threads_as_columns() {
        let text = render(&sample_report());
        assert!(text.contains("RND test"), "{text}");
        assert!(!text.contains("SEQ test"), "{text}");
        let header = text.lines().find(|line| line.starts_with("engine") && line.contains("thread")).unwrap();
        assert!(header.contains("1 thread") && header.contains("2 threads"), "{header}");
        let row = text.lines().filter(|line| line.starts_with("radix")).nth(1).unwrap();
        assert!(row.contains("2.0 (1.0-3.0)") && row.contains("5.0 (4.0-6.0)"), "{row}");
        assert!(text.contains("d16r           refused: too many next hops"), "{text}");
    }
}
