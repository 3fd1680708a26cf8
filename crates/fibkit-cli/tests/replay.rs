//! `fibkit replay` through the binary: a small table and trace, verified
//! after every publish, the JSON keys the issue lists, and bad input.

use std::path::PathBuf;
use std::process::Command;

/// A file in a fresh temporary directory of this test process.
fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fibkit-replay-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn replay(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fibkit")).arg("replay").args(args).output().unwrap()
}

const TABLE: &str = "10.0.0.0/8\t1\n10.1.0.0/16\t2\n10.1.2.0/24\t3\n192.168.0.0/16\t4\n";

const TRACE: &str = "\
1418774413 a 10.1.3.0/24 195.66.226.74
1418774413 w 10.1.2.0/24 0.0.0.0
1418774414 a 10.1.2.128/25 195.66.225.88
1418774414 a 10.0.0.0/8 195.66.224.21
1418774415 w 192.168.0.0/16 0.0.0.0
1418774415 w 172.16.0.0/12 0.0.0.0
1418774416 a 0.0.0.0/0 195.66.226.74
";

#[test]
fn replays_verifies_and_reports_json_for_every_updater_kind() {
    let table = temp_file("table.ipasn", TABLE);
    let trace = temp_file("trace.updates", TRACE);
    for engine in ["d16r", "d22r", "poptrie18", "dir24-8", "lulea", "radix"] {
        for batching in [["--batch", "1"], ["--batch", "3"], ["--window", "1500"]] {
            let output = replay(&[
                "--engine",
                engine,
                batching[0],
                batching[1],
                "--verify",
                "--json",
                "--readers",
                "1",
                "--idle-seconds",
                "0.05",
                "--nexthops",
                "239",
                table.to_str().unwrap(),
                trace.to_str().unwrap(),
            ]);
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert!(
                output.status.success(),
                "{engine} {batching:?}: {stdout}{}",
                String::from_utf8_lossy(&output.stderr)
            );
            for key in [
                "\"engine\"",
                "\"updates\": 7",
                "\"updates_per_s\"",
                "\"update_us_median\"",
                "\"update_us_p99\"",
                "\"publishes\"",
                "\"full_rebuilds\"",
                "\"reader_mlps_idle\"",
                "\"reader_mlps_during\"",
                "\"verified\": true",
                "\"mismatches\": 0",
                "\"announces\": 4",
                "\"withdraws\": 3",
            ] {
                assert!(stdout.contains(key), "{engine} {batching:?}: no {key} in {stdout}");
            }
        }
    }
}

#[test]
fn a_default_route_flap_is_measured_after_the_trace() {
    let table = temp_file("table3.ipasn", TABLE);
    // Without the trace's last line, the table ends with no default route:
    // the flaps announce one and withdraw it; with it, they withdraw the
    // table's own and announce it back.
    let without =
        temp_file("trace3.updates", &TRACE.lines().take(6).map(|line| format!("{line}\n")).collect::<String>());
    let with = temp_file("trace4.updates", TRACE);
    for engine in ["d16r", "poptrie18", "dir24-8", "lctrie"] {
        for trace in [&without, &with] {
            let args = ["--engine", engine, "--flaps", "3", "--verify", "--nexthops", "239"];
            let output = replay(&[&args[..], &["--json", table.to_str().unwrap(), trace.to_str().unwrap()]].concat());
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert!(output.status.success(), "{engine}: {stdout}{}", String::from_utf8_lossy(&output.stderr));
            let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            let flap = &report["default_route_flap"];
            assert_eq!(flap["updates"], 6, "{engine}: {stdout}");
            assert!(flap["update_us_median"].as_f64().unwrap() > 0.0, "{engine}: {stdout}");
            assert!(flap["bytes_per_update"].as_f64().unwrap() > 0.0, "{engine}: {stdout}");
            // The trace's figures leave the flaps out.
            assert_eq!(report["updates"], if trace == &with { 7 } else { 6 }, "{engine}: {stdout}");
            assert_eq!(report["verified"], true, "{engine}: {stdout}");

            let output = replay(&[&args[..], &[table.to_str().unwrap(), trace.to_str().unwrap()]].concat());
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert!(stdout.contains("default-route flap: median "), "{engine}: {stdout}");
        }
    }
    let output = replay(&["--flaps", "0", "--json", table.to_str().unwrap(), with.to_str().unwrap()]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(report["default_route_flap"].is_null(), "{report}");
}

#[test]
fn bad_trace_lines_are_errors_naming_file_and_line() {
    let table = temp_file("table2.ipasn", TABLE);
    for (text, problem) in [
        ("1 a 10.0.0.1/8 1.2.3.4\n", "host bits set"),
        ("1 a 10.0.0.0/8 1.2.3.4\n1 x 10.0.0.0/8 1.2.3.4\n", "neither a (announce) nor w (withdraw)"),
        ("1 a 10.0.0.0/8 1.2.3.4\nnot-a-line\n", "not an update line"),
        ("1 a 10.0.0.0/8 1.2.3.4\nsoon a 10.0.0.0/8 1.2.3.4\n", "malformed time \"soon\""),
        ("1 a 10.0.0.0/8 1.2.3.4\n1 a 10.0.0.0/8\n", "has no NEXTHOP column"),
    ] {
        let trace = temp_file("bad.updates", text);
        let output = replay(&[table.to_str().unwrap(), trace.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success());
        let line = text.lines().count();
        assert!(stderr.contains(&format!("bad.updates:{line}: ")), "{stderr}");
        assert!(stderr.contains(problem), "{stderr}");
    }
}

#[test]
fn a_rejected_update_is_named_by_its_place_in_the_trace_at_any_batch() {
    // sail holds next hops up to 32,767: the table's four values, then one
    // new next-hop address an update; the 32,764th update is the first
    // whose next hop does not fit.
    let table = temp_file("table5.ipasn", TABLE);
    let trace: String = (1..=32_770u32)
        .map(|k| {
            format!(
                "1418774413 a 10.{}.{}.0/24 100.{}.{}.{}\n",
                k >> 8,
                k & 255,
                64 + (k >> 16),
                (k >> 8) & 255,
                k & 255
            )
        })
        .collect();
    let trace = temp_file("overflow.updates", &trace);
    for batch in ["1", "100"] {
        let output = replay(&[
            "--engine",
            "sail",
            "--batch",
            batch,
            "--flaps",
            "0",
            table.to_str().unwrap(),
            trace.to_str().unwrap(),
        ]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "batch {batch}: {stderr}");
        assert!(
            stderr.contains("rejected: update 32764 of the trace (announce 10.127.252.0/24"),
            "batch {batch}: {stderr}"
        );
    }
}

#[test]
fn realtime_warns_of_a_long_forward_gap() {
    let table = temp_file("table6.ipasn", TABLE);
    // The second update is 10^9 s after the first: at 10^12 times the
    // trace's pace, 1 ms of waiting, but still said.
    let trace = temp_file("gap.updates", "1 a 10.1.3.0/24 1.2.3.4\n1000000001 w 10.1.3.0/24 0.0.0.0\n");
    let output = replay(&[
        "--realtime",
        "--speedup",
        "1000000000",
        "--flaps",
        "0",
        table.to_str().unwrap(),
        trace.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: ") && stderr.contains("update 2 is stamped 1000000000 s after the update before it"),
        "{stderr}"
    );
}

#[test]
fn an_ipv6_churn_of_the_table_replays_in_place_and_verifies() {
    // IPv6 routes only: replay picks IPv6 by itself; -6 says so outright.
    let table = temp_file(
        "table6.txt",
        "2001:db8::/32\t1\n2001:db8:1::/48\t2\n2001:db8:1:2::/64\t3\n2a00:1450::/29\t4\n::/0\t5\n2001:db8::1/128\t6\n",
    );
    for engine in ["poptrie16", "poptrie18", "poptrie16x12", "radix"] {
        for family in [&["-6"][..], &[]] {
            let args = ["--engine", engine, "--churn", "300", "--seed", "3", "--batch", "2", "--verify", "--json"];
            let output = replay(&[&args[..], family, &[table.to_str().unwrap()]].concat());
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert!(output.status.success(), "{engine}: {stdout}{}", String::from_utf8_lossy(&output.stderr));
            let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(report["family"], "ipv6", "{engine}: {stdout}");
            assert_eq!(report["updates"], 300, "{engine}: {stdout}");
            assert_eq!(report["churn"], 300, "{engine}: {stdout}");
            assert_eq!(report["verified"], true, "{engine}: {stdout}");
            assert_eq!(report["incremental"], engine != "radix", "{engine}: {stdout}");
            assert_eq!(report["full_rebuilds"], if engine == "radix" { report["publishes"].clone() } else { 0.into() });
        }
    }
    // The same seed makes the same churn; a trace or --churn is needed.
    let run = |seed: &str| {
        let output = replay(&["--churn", "50", "--seed", seed, "--flaps", "0", "--json", table.to_str().unwrap()]);
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        (report["announces"].clone(), report["changes"].clone())
    };
    assert_eq!(run("9"), run("9"));
    let output = replay(&[table.to_str().unwrap()]);
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("<UPDATES>"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
