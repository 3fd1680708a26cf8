//! The text reports read as tables: aligned columns whatever the engine
//! names, and a header saying what figures are.

mod common;

use common::{fibkit, text, write};

#[test]
fn verify_aligns_every_engine_name() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "t.txt", "10.0.0.0/8 1\n10.1.0.0/16 2\n192.168.0.0/16 3\n");
    let output = fibkit(&["verify", "--engine", "all", "--random", "1000", table.to_str().unwrap()]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}{stderr}");
    let lines: Vec<&str> = stdout.lines().filter(|line| line.contains(" addresses ")).collect();
    // Every engine, poptrie-crate (13 characters) among them, twice.
    assert!(lines.len() >= 2 * 17 && stdout.contains("poptrie-crate boundaries"), "{stdout}");
    let column = |line: &str| line.find(" addresses ").unwrap();
    assert!(lines.iter().all(|line| column(line) == column(lines[0])), "{stdout}");
    // The names end in one column: the sweep starts after it.
    let sweep = |line: &str| line.find(" boundaries ").or_else(|| line.find(" random ")).unwrap();
    assert!(lines.iter().all(|line| sweep(line) == sweep(lines[0])), "{stdout}");
}

#[test]
fn the_chunk_histogram_says_what_its_figures_are() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "t.txt", "10.0.0.0/8 1\n10.1.0.0/16 2\n10.1.2.0/24 3\n10.1.2.128/25 4\n");
    let output = fibkit(&["stat", "--engine", "d16r", "--chunk-histogram", table.to_str().unwrap()]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}{stderr}");
    let header = stdout.lines().position(|line| line.starts_with("DXR chunk lengths:")).expect(&stdout);
    let columns: Vec<&str> = stdout.lines().nth(header + 1).unwrap().split_whitespace().collect();
    assert_eq!(columns[..3], ["K", "1", "2"], "{stdout}");
    let rows: Vec<&str> = stdout.lines().skip(header + 2).take(7).collect();
    for (row, k) in rows.iter().zip(16..=22) {
        let figures: Vec<f64> = row.split_whitespace().map(|figure| figure.parse().unwrap()).collect();
        assert_eq!(figures[0], f64::from(k), "{stdout}");
        // Shares of all 2^K chunks: they sum to one.
        assert!((figures[1..].iter().sum::<f64>() - 1.0).abs() < 1e-3, "{row}");
    }
}

#[test]
fn auto_says_which_engine_it_chose_and_why() {
    let dir = tempfile::tempdir().unwrap();
    // Next hops up to 20,000,000: past DXR's 22-bit fields and sail's 15,
    // within Poptrie's and sail-wide's.
    let table = write(dir.path(), "t.txt", "10.0.0.0/8 19999999\n10.1.0.0/16 5\n10.1.2.0/24 7\n");
    let path = table.to_str().unwrap();
    let output = fibkit(&["stat", "--engine", "auto", "--nexthops", "20000000", path]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}{stderr}");
    let first = stdout.lines().next().unwrap();
    assert!(first.starts_with("auto chose poptrie1") || first.starts_with("auto chose sail-wide"), "{stdout}");
    for refused in ["d18r ", "sail "] {
        assert!(
            stdout.lines().any(|line| line.trim_start().starts_with(refused) && line.contains("cannot hold the table")),
            "{stdout}"
        );
    }
    assert!(
        stdout.lines().any(|line| line.trim_start().starts_with("poptrie18") && line.ends_with("Mlps")),
        "{stdout}"
    );
    let output = fibkit(&["stat", "--engine", "auto", "--json", path]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let object = if report.is_array() { &report[0] } else { &report };
    let chosen = object["chosen"].as_str().unwrap_or_else(|| panic!("{stdout}"));
    assert!(fibkit::registry::AUTO_CANDIDATES.contains(&chosen), "{stdout}");
    assert!(object["auto"].as_str().unwrap().starts_with(&format!("auto chose {chosen}")), "{stdout}");
    // --space: the keys auto measures on, of the table's family, with auto only.
    let output = fibkit(&["stat", "--engine", "auto", "--space", "10.1.0.0/16", path]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success() && stdout.contains("(uniform random keys in 10.1.0.0/16)"), "{stdout}{stderr}");
    let output = fibkit(&["stat", "--engine", "auto", "--space", "2001:db8::/32", path]);
    let (stdout, stderr) = text(&output);
    assert!(
        !output.status.success() && stderr.contains("--space 2001:db8::/32 is not a prefix of the table's family"),
        "{stdout}{stderr}"
    );
    let output = fibkit(&["stat", "--engine", "d16r", "--space", "10.0.0.0/8", path]);
    assert!(!output.status.success() && text(&output).1.contains("give --engine auto"));
    // --keys: the caller's addresses, said as such.
    let scratch = tempfile::tempdir().unwrap();
    let keys = scratch.path().join("keys.txt");
    std::fs::write(
        &keys,
        (0..3000u32)
            .map(|i| format!("{}\n", std::net::Ipv4Addr::from(i.wrapping_mul(0x9e37_79b9))))
            .collect::<String>(),
    )
    .unwrap();
    let output = fibkit(&["stat", "--engine", "auto", "--keys", keys.to_str().unwrap(), path]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success() && stdout.contains("(3000 of the caller's keys)"), "{stdout}{stderr}");
    let output = fibkit(&["stat", "--engine", "d16r", "--keys", keys.to_str().unwrap(), path]);
    assert!(!output.status.success() && text(&output).1.contains("--keys is what `auto` measures"));
}
