//! `fibkit convert` and `--peers` run as a user would.

mod common;

use std::path::PathBuf;

use common::shared_data;

/// Runs `fibkit ARGS...`: whether it succeeded, its stdout and stderr.
fn fibkit(args: &[&str]) -> (bool, String, String) {
    let output = common::fibkit(args);
    let (stdout, stderr) = common::text(&output);
    (output.status.success(), stdout, stderr)
}

/// A fresh directory under the system's temporary directory.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fibkit-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn convert_writes_text_that_loads_back() {
    let dir = scratch("convert");
    let input = dir.join("in.txt");
    std::fs::write(&input, "10.0.0.0/8 64500\n10.1.0.0/16 64501\n2001:db8::/32 2001:db8::1\n").unwrap();
    let output = dir.join("out.txt");
    let (ok, _, stderr) = fibkit(&["convert", input.to_str().unwrap(), output.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    let text = std::fs::read_to_string(&output).unwrap();
    assert_eq!(
        text.lines().skip(1).collect::<Vec<_>>(),
        ["10.0.0.0/8 64500", "10.1.0.0/16 64501", "2001:db8::/32 2001:db8::1"]
    );
    // The input named as the output (here through a link): refused, the
    // table left as it was.
    let link = dir.join("link.txt");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&input, &link).unwrap();
    let before = std::fs::read(&input).unwrap();
    let (ok, _, stderr) = fibkit(&["convert", input.to_str().unwrap(), link.to_str().unwrap()]);
    assert!(!ok && stderr.contains("is the input table"), "{stderr}");
    assert_eq!(std::fs::read(&input).unwrap(), before);
    // To standard output, with the values mapped onto 2 next hops.
    let (ok, stdout, _) = fibkit(&["convert", "--nexthops", "2", input.to_str().unwrap()]);
    assert!(ok);
    assert!(stdout.contains("10.0.0.0/8 1\n10.1.0.0/16 2\n"), "{stdout}");
    // --peers on a text file is an error that says why.
    let (ok, _, stderr) = fibkit(&["stat", "--peers", input.to_str().unwrap()]);
    assert!(!ok && stderr.contains("not an MRT file"), "{stderr}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn host_routes_are_written_in_their_subnets() {
    let (ok, stdout, stderr) = fibkit(&["convert", "--host-routes", "6", "--subnets", "2", "--nexthops", "4"]);
    assert!(ok, "{stderr}");
    let want =
        ["10.0.0.0/32 1", "10.0.0.1/32 3", "10.0.0.2/32 1", "10.128.0.0/32 2", "10.128.0.1/32 4", "10.128.0.2/32 2"];
    assert_eq!(stdout.lines().skip(1).collect::<Vec<_>>(), want, "{stdout}");
    let (ok, _, stderr) = fibkit(&["convert", "--host-routes", "20000000", "--subnets", "4"]);
    assert!(!ok && stderr.contains("20000000 host routes do not fit 4 subnets of 10.0.0.0/8"), "{stderr}");
    let (ok, _, stderr) = fibkit(&["convert", "--subnets", "4"]);
    assert!(!ok && stderr.contains("--host-routes"), "{stderr}");
}

#[test]
fn grow_writes_the_papers_synthetic_tables() {
    let dir = scratch("grow");
    let input = dir.join("in.txt");
    std::fs::write(&input, "10.0.0.0/8 64500\n10.0.0.0/16 64501\n192.168.1.0/24 64502\n").unwrap();
    let input = input.to_str().unwrap();
    // Values are next-hop indexes: 64500 -> 1, 64501 -> 2, 64502 -> 3;
    // part i of a route to n goes to n + 4i.
    let (ok, stdout, stderr) = fibkit(&["convert", "--grow", "syn1", input]);
    assert!(ok, "{stderr}");
    let want = [
        "10.0.0.0/10 1",
        "10.0.0.0/17 2",
        "10.0.128.0/17 6",
        "10.64.0.0/10 5",
        "10.128.0.0/10 9",
        "10.192.0.0/10 13",
        "192.168.1.0/24 3",
    ];
    assert_eq!(stdout.lines().skip(1).collect::<Vec<_>>(), want, "{stdout}");
    assert!(stderr.contains("3 IPv4 routes grown to 7 (SYN1: part i of a route to n goes to n + i x 4)"), "{stderr}");
    let (ok, stdout, _) = fibkit(&["convert", "--grow", "SYN2", input]);
    assert!(ok && stdout.lines().count() == 1 + 8 + 4 + 1, "{stdout}");
    let (ok, _, stderr) = fibkit(&["convert", "--grow", "syn3", input]);
    assert!(!ok && stderr.contains("\"syn3\" is neither syn1 nor syn2"), "{stderr}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_2014_table_grows_as_the_papers_tables_did() {
    let Some(table) = shared_data("routeviews-2014-05-13.ipasn.gz") else { return };
    // The paper: 531,489 routes to 764,847 (SYN1) and 885,645 (SYN2).
    for (growth, routes) in [("syn1", 748_074), ("syn2", 867_596)] {
        let (ok, stdout, stderr) = fibkit(&["convert", "--nexthops", "239", "--grow", growth, table.to_str().unwrap()]);
        assert!(ok, "{stderr}");
        assert_eq!(stdout.lines().count(), 1 + routes, "{growth}");
        assert!(stderr.contains(&format!("512621 IPv4 routes grown to {routes}")), "{stderr}");
    }
}

#[test]
fn mrt_sample_converts_and_lists_its_peers() {
    let Some(bview) = shared_data("mrt/bview.20140112.1600_3samples.bz2") else { return };
    let bview = bview.to_str().unwrap();
    let (ok, stdout, stderr) = fibkit(&["convert", bview]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("\n1.0.0.0/24 202.249.2.189\n"), "{stdout}");
    assert!(stderr.contains("warning: ") && stderr.contains("without a PEER_INDEX_TABLE"), "{stderr}");
    let (ok, stdout, _) = fibkit(&["convert", "--peer", "6", "--value", "origin-as", bview]);
    assert!(ok);
    assert_eq!(stdout.lines().skip(1).collect::<Vec<_>>(), ["1.0.0.0/24 15169", "1.0.20.0/23 2519"]);
    // Peer 0's one route has an empty AS path, and the peer's ASN is unknown.
    let (ok, _, stderr) = fibkit(&["convert", "--peer", "0", "--value", "origin-as", bview]);
    assert!(!ok && stderr.contains("no routes in the file") && stderr.contains("an empty AS_PATH"), "{stderr}");
    let (ok, stdout, _) = fibkit(&["verify", "--peers", bview]);
    assert!(ok);
    assert!(stdout.contains("RIB dump with 2 peers"), "{stdout}");
    assert!(stdout.lines().any(|line| line.trim_start().starts_with('6') && line.ends_with("(default)")), "{stdout}");
    let (ok, _, stderr) = fibkit(&["convert", "--strict", bview]);
    assert!(!ok && stderr.contains("an error in strict mode"), "{stderr}");
    let (ok, _, stderr) = fibkit(&["convert", "--peer", "x", bview]);
    assert!(!ok && stderr.contains("expected an index"), "{stderr}");
}
