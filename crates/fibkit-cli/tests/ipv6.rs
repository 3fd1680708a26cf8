//! `fibkit stat`, `verify` and `bench` on IPv6 tables: a small mixed
//! IPv4/IPv6 table written here, and the LINX IPv6 table from the shared
//! data when present.

mod common;

use std::path::PathBuf;

use common::{fibkit, shared_data, text, write};

use serde_json::Value;

/// A mixed table: nested IPv6 prefixes with ::/0 and a /128, and two IPv4
/// routes (which `-6` leaves aside).
const MIXED: &str = "\
::/0 2001:db8:ffff::1
2001:db8::/32 2001:db8:ffff::2
2001:db8:1::/48 2001:db8:ffff::3
2001:db8:1:2::/64 2001:db8:ffff::4
2001:db8:1:2::7/128 2001:db8:ffff::5
2a00::/12 2001:db8:ffff::6
2a00:1450::/32 2001:db8:ffff::2
fe80::/10 2001:db8:ffff::3
ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128 2001:db8:ffff::4
10.0.0.0/8 192.0.2.1
10.1.0.0/16 192.0.2.2
";

const IPV6_ROUTES: u64 = 9;

const KEYS6: &str = "2001:db8:1:2::7\n2001:db8::1\n2a00:1450::5\n::1\n# a comment\nfe80::1\n";

fn linx() -> Option<PathBuf> {
    shared_data("linx-p69-2014-12-25.rib6.gz")
}

#[test]
fn stat_reports_the_ipv6_poptrie() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "mixed.txt", MIXED);
    let output = fibkit(&["stat", "-6", "--engine", "poptrie18", table.to_str().unwrap()]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    for needle in ["Poptrie (IPv6)", "after route aggregation", "inodes", "leaves", "compilation", "9 IPv6 prefixes"] {
        assert!(stdout.contains(needle), "no {needle:?} in:\n{stdout}");
    }
    let output =
        fibkit(&["stat", "--family", "ipv6", "--engine", "poptrie16,radix", "--json", table.to_str().unwrap()]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let objects: Value = serde_json::from_str(&stdout).unwrap();
    let poptrie = &objects[0];
    assert_eq!(poptrie["engine"], "poptrie16");
    assert_eq!(poptrie["family"], "ipv6");
    assert_eq!(poptrie["prefixes"], IPV6_ROUTES);
    assert!(poptrie["bytes_total"].as_u64().unwrap() > 0);
    assert!(poptrie["internal_nodes"].as_u64().unwrap() > 0);
    assert!(poptrie["prefixes_aggregated"].as_u64().unwrap() <= IPV6_ROUTES);
    assert!(poptrie["build_ms"].as_f64().unwrap() >= 0.0);
    assert_eq!(objects[1]["engine"], "radix");
    // Without a flag the mixed table is IPv4.
    let output = fibkit(&["stat", "--engine", "d16r", "--json", table.to_str().unwrap()]);
    let object: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!((object["family"].as_str(), object["prefixes"].as_u64()), (Some("ipv4"), Some(2)));
}

#[test]
fn verify_checks_ipv6_boundaries_and_three_random_sweeps() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "mixed.txt", MIXED);
    let output = fibkit(&["verify", "-6", "--random", "20000", table.to_str().unwrap()]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("9 IPv6 prefixes"), "{stdout}");
    for engine in ["poptrie0", "poptrie16", "poptrie18", "d16r6", "d18r6", "radix"] {
        for sweep in ["boundaries", "anywhere", "2000::/3", "announced"] {
            let line = stdout
                .lines()
                .find(|line| line.split_whitespace().take(2).eq([engine, sweep]))
                .unwrap_or_else(|| panic!("no {engine} {sweep} line in:\n{stdout}"));
            assert!(line.ends_with(" ok"), "{line}");
        }
    }
    assert!(!stdout.contains("MISMATCH"), "{stdout}");
    // Announced keys all hit a route: 20000 routed of 20000.
    let announced = stdout.lines().find(|line| line.contains("announced")).unwrap();
    assert!(announced.contains("20000 addresses") && announced.contains("20000 routed"), "{announced}");
}

#[test]
fn bench_runs_ipv6_with_keys_batches_and_the_paper_space() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "mixed.txt", MIXED);
    let keys = write(dir.path(), "keys6.txt", KEYS6);
    let json = dir.path().join("bench6.json");
    let output = fibkit(&[
        "bench",
        "-6",
        table.to_str().unwrap(),
        "--engines",
        "poptrie16,radix",
        "--space",
        "2000::/8",
        "--keys",
        keys.to_str().unwrap(),
        "--batch",
        "0,16",
        "--threads",
        "1",
        "--seconds",
        "0.05",
        "--runs",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("(9 IPv6 prefixes,"), "{stdout}");
    assert!(stdout.contains("Random IPv6 keys: inside 2000::/8"), "{stdout}");
    for heading in ["SEQ test", "RND test", "REP test", "KEYS test"] {
        assert!(stdout.contains(heading), "no {heading:?} in:\n{stdout}");
    }
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["table"]["family"], "ipv6");
    assert_eq!(report["table"]["prefixes"], IPV6_ROUTES);
    assert_eq!(report["parameters"]["key_space"], "2000::/8");
    assert_eq!(report["parameters"]["keys"], 5);
    // 2000::/8 holds 2001:db8::/32 and the ::/0 route covers the rest: every key hits.
    assert_eq!(report["parameters"]["key_space_routed_share"], 1.0);
    let all = report["results"].as_array().unwrap();
    let results: Vec<&Value> = all.iter().filter(|result| result["engine"] != "ceiling").collect();
    // Per engine, and for the ceiling: seq (scalar), rnd, rep and keys at
    // batch 0 and 16.
    assert_eq!((results.len(), all.len()), (2 * 7, 3 * 7), "{all:#?}");
    for result in results {
        assert!(result["mlps_median"].as_f64().unwrap() > 0.0, "{result}");
        // Every IPv6 next hop of the table is nonzero, and ::/0 catches every key.
        assert!(result["checksum"].as_u64().unwrap() > 0, "{result}");
    }
    for engine in report["engines"].as_array().unwrap() {
        assert!(engine["error"].is_null() && engine["bytes_total"].as_u64().unwrap() > 0, "{engine}");
    }
}

#[test]
fn ipv4_only_things_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "mixed.txt", MIXED);
    let only4 = write(dir.path(), "only4.txt", "10.0.0.0/8 192.0.2.1\n");
    let path = table.to_str().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (&["stat", "-6", "--engine", "d18r", path], "\"d18r\" is IPv4 only"),
        (&["bench", "-6", "--engines", "treebitmap", path], "fibkit-peers is IPv4 only"),
        (&["verify", "-6", "--exhaustive", path], "--exhaustive walks the 2^32 IPv4 addresses"),
        (&["bench", "--space", "2000::/8", path], "this run is IPv4"),
        (&["stat", "-6", only4.to_str().unwrap()], "only4.txt: no IPv6 routes"),
        (&["stat", "-6", "--chunk-histogram", path], "--chunk-histogram is about IPv4 DXR"),
    ];
    for (args, needle) in cases {
        let output = fibkit(args);
        let (stdout, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stdout}\n{stderr}");
        assert!(stderr.contains(needle), "{args:?}: no {needle:?} in {stderr}");
    }
}

#[test]
fn engine_names_are_checked_before_the_table_loads() {
    // A misspelt engine is reported as such, not the table (here missing,
    // elsewhere a large file that would load for nothing).
    for command in ["stat", "verify"] {
        let args = [command, "--engine", "d18r,warp-drive", "no/such/table.txt"];
        let output = fibkit(&args);
        let (_, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("unknown engine \"warp-drive\" (known: d16r"), "{args:?}: {stderr}");
        assert!(!stderr.contains("no/such/table.txt"), "{args:?}: {stderr}");
    }
}

#[test]
fn linx_ipv6_table_through_stat_verify_and_bench() {
    let Some(linx) = linx() else { return };
    let path = linx.to_str().unwrap();
    // IPv6 routes only: IPv6 is picked without a flag, poptrie18 by default.
    let output = fibkit(&["stat", "--json", path]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("IPv6 routes only"), "{stderr}");
    let object: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!((object["engine"].as_str(), object["prefixes"].as_u64()), (Some("poptrie18"), Some(20_440)));
    let aggregated = object["prefixes_aggregated"].as_u64().unwrap();
    assert!(aggregated > 0 && aggregated < 20_440, "{aggregated}");

    let output = fibkit(&["verify", "--engine", "poptrie16", "--random", "100000", path]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert_eq!(stdout.lines().filter(|line| line.ends_with(" ok")).count(), 4, "{stdout}");

    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("linx.json");
    let output = fibkit(&[
        "bench",
        path,
        "--engines",
        "poptrie18",
        "--threads",
        "1",
        "--seconds",
        "0.05",
        "--runs",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("Random IPv6 keys: inside 2000::/3"), "{stdout}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    // SEQ, RND and REP, for poptrie18 and the ceiling.
    assert_eq!(report["results"].as_array().unwrap().len(), 2 * 3);
    let share = report["parameters"]["key_space_routed_share"].as_f64().unwrap();
    assert!(share < 0.5, "2000::/3 is mostly unannounced: {share}");
}

/// Issue 48, defect 4: IPv6 routes inside ::ffff:0:0/96 once never
/// answered (a mapped address went to the IPv4 routes only). They are IPv4
/// routes now, whether the table is read or compiled first; ::/0 stays an
/// IPv6 route.
#[test]
fn ipv4_mapped_routes_answer_for_ipv4_and_mapped_addresses() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "mapped.txt", "::/0 64600\n::ffff:1.2.3.0/120 64601\n10.0.0.0/8 64500\n");
    let compiled = dir.path().join("mapped.fib");
    let output = fibkit(&["compile", table.to_str().unwrap(), "-o", compiled.to_str().unwrap()]);
    assert!(output.status.success(), "{}", text(&output).1);
    for path in [&table, &compiled] {
        let args = ["lookup", path.to_str().unwrap(), "::ffff:1.2.3.4", "1.2.3.4", "::ffff:10.1.1.1", "2001:db8::1"];
        let output = fibkit(&[&args[..], &["9.9.9.9"]].concat());
        let (stdout, stderr) = text(&output);
        assert!(output.status.success(), "{stderr}");
        let expected = "::ffff:1.2.3.4\t64601\n1.2.3.4\t64601\n::ffff:10.1.1.1\t64500\n2001:db8::1\t64600\n9.9.9.9\t\n";
        assert_eq!(stdout, expected, "{}", path.display());
        if path == &table {
            assert!(stderr.contains("1 IPv6 route(s) inside ::ffff:0:0/96 (IPv4-mapped, the first ::ffff:1.2.3.0/120)"));
        }
    }
}
