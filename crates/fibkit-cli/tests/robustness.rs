//! The command line under hostile use: failed writes, options out of range,
//! traces whose clock runs backwards, `-` for standard input and output,
//! engines that cannot build a table, mixed-family tables. Each case was a
//! panic, a hang or a silent loss before its fix.

mod common;

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::{fibkit, fibkit_with_input, text, write};

const TABLE: &str = "10.0.0.0/8 1\n10.1.0.0/16 2\n10.1.2.0/24 3\n192.168.0.0/16 4\n";

/// Asserts that `output` is a failure without a panic, its stderr holding
/// `expected`.
fn refused(output: &Output, expected: &str) {
    let (stdout, stderr) = text(output);
    assert!(!output.status.success(), "succeeded:\n{stdout}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains(expected), "expected {expected:?} in:\n{stderr}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_failed_write_to_standard_output_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "t.txt", TABLE);
    for args in [
        vec!["stat", table.to_str().unwrap()],
        vec!["verify", table.to_str().unwrap(), "--engine", "radix", "--random", "10"],
        vec!["convert", table.to_str().unwrap()],
    ] {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_fibkit")).args(&args).stdout(full).output().unwrap();
        refused(&output, "standard output");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn numeric_options_out_of_range_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "t.txt", TABLE);
    let trace = write(dir.path(), "u.txt", "1418774413 a 10.2.0.0/16 5\n");
    let (table, trace) = (table.to_str().unwrap(), trace.to_str().unwrap());
    let cases: &[(&str, &[&str])] = &[
        ("--speedup", &["0", "nan", "-1", "1e-300", "inf"]),
        ("--idle-seconds", &["nan", "-1", "inf", "1e30"]),
        ("--window", &["inf", "1e30", "0", "nan"]),
        ("--rate", &["1e-300", "0", "-5", "inf"]),
        ("--batch", &["0", "-1"]),
        ("--nexthops", &["0", "x"]),
    ];
    for &(option, values) in cases {
        for value in values {
            let given = format!("{option}={value}");
            let mut args = vec!["replay", table, trace, &given];
            if option == "--speedup" {
                args.push("--realtime");
            }
            let output = fibkit(&args);
            refused(&output, option);
            assert_eq!(output.status.code(), Some(2), "{option} {value}");
        }
    }
    refused(&fibkit(&["bench", table, "--seconds", "inf"]), "must be from");
    refused(&fibkit(&["bench", table, "--runs", "0"]), "must be from");
}

#[test]
fn options_that_size_an_allocation_are_bounded_naming_option_and_range() {
    // `bench --runs 1000000000` was accepted, then aborted allocating 8 GB
    // for the runs' figures; `replay --flaps` sized its timings alike, and
    // `lookup --threads` the blocks in flight (4 MiB a thread). The table
    // named does not exist: a value accepted fails on it, not on the range.
    let cases: &[(&[&str], &str)] = &[
        (&["bench", "missing.txt", "--runs", "1000000000"], "a run count must be from 1 to 1000"),
        (&["bench", "missing.txt", "--runs", "1001"], "a run count must be from 1 to 1000"),
        (&["replay", "missing.txt", "missing.u", "--flaps", "1000000000000"], "a flap count must be from 0 to 1000000"),
        (&["replay", "missing.txt", "missing.u", "--flaps", "1000001"], "a flap count must be from 0 to 1000000"),
        (&["lookup", "missing.fib", "--threads", "4096"], "a thread count must be from 1 to 256"),
        (&["bench", "missing.txt", "--threads", "4097"], "a thread count must be from 1 to 4096"),
    ];
    for &(args, range) in cases {
        let output = fibkit(args);
        let option = args[args.len() - 2];
        refused(&output, option);
        refused(&output, range);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn a_trace_whose_clock_runs_backwards_replays_in_real_time() {
    // The pacing subtracted the first timestamp from each: a later update
    // stamped earlier underflowed and waited forever.
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "t.txt", TABLE);
    let trace = write(
        dir.path(),
        "u.txt",
        "1418774413 a 10.2.0.0/16 5\n1418774400 a 10.3.0.0/16 6\n1418774414 w 10.2.0.0/16 0.0.0.0\n",
    );
    let start = Instant::now();
    let args = [table.to_str().unwrap(), trace.to_str().unwrap(), "--realtime", "--speedup", "10", "--verify"];
    let output = Command::new(env!("CARGO_BIN_EXE_fibkit")).arg("replay").args(args).output().unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(start.elapsed() < Duration::from_secs(30));
    assert!(stderr.contains("1 update(s) are stamped before the update before them (the first: update 2"), "{stderr}");
    assert!(stdout.contains("3 updates"), "{stdout}");
}

#[test]
fn a_dash_is_standard_input_and_output() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "t.txt", TABLE);
    let output = fibkit_with_input(dir.path(), &["convert", table.to_str().unwrap(), "-"], b"");
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("10.1.2.0/24 3"), "{stdout}");
    assert!(!dir.path().join("-").exists(), "a file named - was written");
    // The table from standard input.
    let output = fibkit_with_input(dir.path(), &["convert", "-"], TABLE.as_bytes());
    assert!(text(&output).0.contains("192.168.0.0/16 4"), "{:?}", text(&output));
    let output =
        fibkit_with_input(dir.path(), &["verify", "-", "--engine", "d16r", "--random", "100"], TABLE.as_bytes());
    assert!(output.status.success(), "{:?}", text(&output));
    // `bench --json -` writes the JSON, in place of the text tables.
    let args =
        ["bench", "-", "--engines", "radix", "--threads", "1", "--seconds", "0.01", "--runs", "1", "--json", "-"];
    let output = fibkit_with_input(dir.path(), &args, TABLE.as_bytes());
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(serde_json::from_str::<serde_json::Value>(&stdout).is_ok(), "{stdout}");
    assert!(!dir.path().join("-").exists());
    refused(&fibkit_with_input(dir.path(), &["replay", "-", "-"], b""), "cannot both be read from standard input");
}

#[test]
fn engines_that_cannot_build_the_table_do_not_stop_the_others() {
    // `--nexthops 4294967295` exceeds Luleå's and DIR-24-8's next-hop
    // fields; verify used to stop at Luleå, so DIR-24-8, the LC-trie and
    // the radix tree were never checked.
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "t.txt", TABLE);
    let args = ["verify", table.to_str().unwrap(), "--random", "100", "--nexthops", "4294967295"];
    let output = fibkit(&args);
    let (stdout, _) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("lulea cannot build the table") && stdout.contains("dir24-8 cannot build the table"),
        "{stdout}"
    );
    assert!(stdout.contains("lctrie boundaries") && stdout.contains("radix random"), "{stdout}");
    let output = fibkit(&["stat", table.to_str().unwrap(), "--engine", "lulea,radix", "--nexthops", "4294967295"]);
    let (stdout, _) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("lulea: cannot build the table") && stdout.contains("Table: t.txt"), "{stdout}");
}

#[test]
fn a_mixed_family_table_says_what_it_leaves_out() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "mixed.txt", "10.0.0.0/8 1\n2001:db8::/32 2\n2001:db8:1::/48 3\n");
    let output = fibkit(&["verify", table.to_str().unwrap(), "--engine", "radix", "--random", "100"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    // One IPv4 next hop, not the three of both families.
    assert!(stdout.contains("mixed.txt: 1 IPv4 prefixes, 1 next hops"), "{stdout}");
    assert!(stderr.contains("mixed.txt also has 2 IPv6 routes, left out here (--family ipv6"), "{stderr}");
}

#[test]
fn reader_figures_measure_what_their_label_says() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "t.txt", TABLE);
    let trace = write(dir.path(), "u.txt", "1418774413 a 10.2.0.0/16 5\n1418774414 w 10.2.0.0/16 0.0.0.0\n");
    let args = ["replay", table.to_str().unwrap(), trace.to_str().unwrap(), "--readers", "1", "--idle-seconds", "0"];
    let output = fibkit(&args);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(!stdout.contains("inf") && !stdout.contains("NaN"), "{stdout}");
    assert!(stdout.contains("Mlps during updates") && !stdout.contains("idle"), "{stdout}");
    let mut with_verify = args.to_vec();
    with_verify.extend(["--verify", "--json"]);
    let output = fibkit(&with_verify);
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(json["reader_mlps_idle"].is_null() && json["reader_loss_pct"].is_null(), "{json}");
    assert!(json["reader_mlps_during"].as_f64().is_some_and(f64::is_finite), "{json}");
}

#[test]
fn a_rejected_update_fails_the_replay_and_takes_no_other_with_it() {
    // Next hop 5000001 exceeds d16r's 22-bit direct entries; the batch's
    // other update still lands, and the run fails (it used to exit 0).
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "t.txt", TABLE);
    let trace = write(dir.path(), "u.txt", "1418774413 a 10.2.0.0/16 5000000\n1418774413 w 192.168.0.0/16 0.0.0.0\n");
    let args = ["replay", table.to_str().unwrap(), trace.to_str().unwrap(), "--nexthops", "4294967295"];
    let mut with_batch = args.to_vec();
    with_batch.extend(["--batch", "2", "--verify"]);
    let output = fibkit(&with_batch);
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 rejected") && stdout.contains(" 0 wrong answers"), "{stdout}");
    // Named by its place in the trace (from 1), not in its batch.
    assert!(stderr.contains("rejected: update 1 of the trace (announce 10.2.0.0/16 via 5000000)"), "{stderr}");
    with_batch.push("--json");
    let json: serde_json::Value = serde_json::from_slice(&fibkit(&with_batch).stdout).unwrap();
    assert_eq!((json["rejected"].as_u64(), json["changes"].as_u64()), (Some(1), Some(1)), "{json}");
}
