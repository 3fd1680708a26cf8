//! Runs the built `fibkit bench` on a small table for every engine, and
//! checks its JSON, its tables and its argument errors.

mod common;

use std::process::Output;

use common::{text, write};

use serde_json::Value;

/// A small table with nested prefixes, a default route and host routes.
const TABLE: &str = "\
0.0.0.0/0 192.0.2.1
10.0.0.0/8 192.0.2.2
10.1.0.0/16 192.0.2.3
10.1.2.0/24 192.0.2.4
10.1.2.128/25 192.0.2.5
10.1.2.3/32 192.0.2.6
172.16.0.0/12 192.0.2.7
192.168.0.0/16 192.0.2.8
192.168.1.0/24 192.0.2.2
198.51.100.0/24 192.0.2.3
203.0.113.0/24 192.0.2.4
224.0.0.0/4 192.0.2.5
255.255.255.255/32 192.0.2.6
";

const KEYS: &str = "10.1.2.3\n10.1.2.200\n192.168.1.1\n8.8.8.8\n255.255.255.255\n";

/// Runs `fibkit bench ARGS...`.
fn fibkit(args: &[&str]) -> Output {
    common::fibkit(&[&["bench"], args].concat())
}

#[test]
fn every_engine_runs_and_the_json_has_every_figure() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "small.txt", TABLE);
    let json = dir.path().join("out.json");
    let output = fibkit(&[
        table.to_str().unwrap(),
        "--engines",
        "all",
        "--seconds",
        "0.05",
        "--runs",
        "1",
        "--threads",
        "1,2",
        "--json",
        json.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "fibkit bench failed:\n{stdout}\n{stderr}");
    for heading in ["SEQ test", "RND test", "REP test", "1 thread", "2 threads", "bytes/prefix"] {
        assert!(stdout.contains(heading), "no {heading:?} in:\n{stdout}");
    }
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for key in ["machine", "table", "parameters", "engines", "results"] {
        assert!(report.get(key).is_some(), "JSON has no {key}");
    }
    assert!(report["machine"]["cpu_model"].is_string());
    assert!(report["machine"]["cores"].as_u64().unwrap() >= 1);
    assert_eq!(report["table"]["prefixes"], 13);
    for key in ["name", "next_hops", "mapping"] {
        assert!(report["table"].get(key).is_some(), "table has no {key}");
    }
    let engines = report["engines"].as_array().unwrap();
    let names: Vec<&str> = engines.iter().map(|engine| engine["engine"].as_str().unwrap()).collect();
    for name in ["d16r", "d22r", "radix", "prefix-trie", "treebitmap", "poptrie-crate"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    for engine in engines {
        assert!(engine["error"].is_null(), "{} refused the table: {}", engine["engine"], engine["error"]);
        assert!(engine["bytes_total"].as_u64().unwrap() > 0, "{}: no footprint", engine["engine"]);
        assert!(engine["build_ms"].as_f64().unwrap() >= 0.0);
    }
    let results = report["results"].as_array().unwrap();
    for name in &names {
        for test in ["seq", "rnd", "rep"] {
            for threads in [1, 2] {
                let result = results
                    .iter()
                    .find(|r| r["engine"] == *name && r["test"] == test && r["threads"] == threads)
                    .unwrap_or_else(|| panic!("no {test} result for {name} at {threads} threads"));
                for key in ["batch", "mlps_median", "mlps_min", "mlps_max", "runs", "checksum"] {
                    assert!(result.get(key).is_some(), "result has no {key}: {result}");
                }
                let (min, median, max) = (
                    result["mlps_min"].as_f64().unwrap(),
                    result["mlps_median"].as_f64().unwrap(),
                    result["mlps_max"].as_f64().unwrap(),
                );
                assert!(0.0 < min && min <= median && median <= max, "{result}");
                assert_eq!(result["runs"], 1);
            }
        }
    }
}

#[test]
fn keys_and_batches_replay_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "small.txt", TABLE);
    let keys = write(dir.path(), "keys.txt", KEYS);
    let json = dir.path().join("keys.json");
    let output = fibkit(&[
        table.to_str().unwrap(),
        "--engines",
        "radix,treebitmap",
        "--tests",
        "rnd",
        "--keys",
        keys.to_str().unwrap(),
        "--batch",
        "0,16",
        "--threads",
        "1",
        "--seconds",
        "0.05",
        "--runs",
        "2",
        "--json",
        json.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("KEYS test") && stdout.contains("batch"), "{stdout}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["parameters"]["keys"], 5);
    let results = report["results"].as_array().unwrap();
    // rnd and keys, batch 0 and 16, two engines and the ceiling.
    assert_eq!(results.len(), 12, "{results:#?}");
    assert_eq!(results.iter().filter(|r| r["engine"] == "ceiling").count(), 4, "{results:#?}");
    for engine in ["radix", "treebitmap"] {
        let checksums: Vec<u64> = results
            .iter()
            .filter(|r| r["engine"] == engine && r["test"] == "keys")
            .map(|r| r["checksum"].as_u64().unwrap())
            .collect();
        assert_eq!(checksums.len(), 2);
        assert!(checksums.iter().all(|&sum| sum > 0), "{engine}: {checksums:?}");
    }
}

#[test]
fn plots_are_written_as_png() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "small.txt", TABLE);
    let plot = dir.path().join("chart.png");
    let output = fibkit(&[
        table.to_str().unwrap(),
        "--engines",
        "radix,d18r",
        "--tests",
        "rnd",
        "--threads",
        "1,2",
        "--seconds",
        "0.02",
        "--runs",
        "1",
        "--plot",
        plot.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&output);
    if stderr.contains("--plot needs a TrueType font") {
        eprintln!("skipped: no TrueType font for --plot (install fonts-dejavu-core or set FIBKIT_FONT)");
        return;
    }
    assert!(output.status.success(), "{stdout}\n{stderr}");
    for path in [plot.clone(), dir.path().join("chart-dxr-k.png")] {
        let bytes = std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "{} is not a PNG", path.display());
        assert!(bytes.len() > 10_000, "{}: only {} bytes", path.display(), bytes.len());
    }
    // --plot ran the DXR family single-threaded for the K chart.
    assert!(stdout.contains("d22r"), "{stdout}");
}

fn fails_with(args: &[&str], expected: &str) {
    let output = fibkit(args);
    let (stdout, stderr) = text(&output);
    assert!(!output.status.success(), "{args:?} succeeded:\n{stdout}");
    assert!(stderr.contains(expected), "{args:?}: expected {expected:?} in:\n{stderr}");
}

#[test]
fn argument_errors_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "small.txt", TABLE);
    let table = table.to_str().unwrap();
    fails_with(&[table, "--engines", "d18r,warp-drive"], "unknown engine \"warp-drive\"");
    fails_with(&[table, "--threads", "0"], "a thread count must be from 1 to 4096, not 0");
    fails_with(&["no/such/table.txt", "--engines", "radix"], "no/such/table.txt");
    // Names are checked before the table loads (the missing table is not
    // what is reported).
    fails_with(&["no/such/table.txt", "--engines", "warp-drive"], "unknown engine \"warp-drive\"");
    fails_with(&[table, "--keys", "no/such/keys.txt"], "no/such/keys.txt");
    fails_with(&[table, "--json", "no/such/dir/out.json"], "does not exist");
}

#[test]
fn progress_is_logged_a_line_at_a_time_even_off_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "small.txt", TABLE);
    let args =
        [table.to_str().unwrap(), "--engines", "radix,d16r", "--seconds", "0.01", "--runs", "2", "--threads", "1,2"];
    let output = fibkit(&args);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}{stderr}");
    // A line per engine built, then one per configuration measured: three
    // tests at two thread counts for each engine and for the ceiling.
    assert!(stderr.contains("built radix in ") && stderr.contains("built d16r in "), "{stderr}");
    let measured: Vec<&str> = stderr.lines().filter(|line| line.starts_with('[')).collect();
    assert_eq!(measured.len(), 3 * 3 * 2, "{stderr}");
    assert!(measured[0].starts_with("[1/18 ") && measured[17].starts_with("[18/18 "), "{stderr}");
    assert!(measured.iter().all(|line| line.contains(" Mlps (")), "{stderr}");
    assert_eq!(measured.iter().filter(|line| line.contains("] ceiling rnd batch 0 x")).count(), 2, "{stderr}");
    assert_eq!(stdout.lines().filter(|line| line.starts_with("ceiling ")).count(), 3, "{stdout}");
    // The tables come in the order they were measured, the engines first.
    let at = |heading: &str| stdout.find(heading).unwrap_or_else(|| panic!("no {heading:?} in {stdout}"));
    assert!(at("build ms") < at("SEQ test") && at("SEQ test") < at("RND test") && at("RND test") < at("REP test"));
    assert!(at("REP test") < at("Workers were"), "{stdout}");
}
