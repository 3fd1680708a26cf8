//! `fibkit reproduce all --quick`: every section and experiment is in the
//! report, every row has a figure or a reason, and the plots are PNG files.

mod common;

use std::path::PathBuf;

use common::text;
use serde_json::Value;

/// The data folder ([`common::data_dir`]), if it is there.
fn shared_data() -> Option<PathBuf> {
    Some(common::data_dir()).filter(|dir| dir.is_dir())
}

#[test]
fn quick_reproduce_fills_every_section() {
    let out = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let data = shared_data().unwrap_or_else(|| empty.path().to_path_buf());
    let output = common::fibkit(&[
        "reproduce",
        "all",
        "--quick",
        "--out",
        out.path().to_str().unwrap(),
        "--data",
        data.to_str().unwrap(),
    ]);
    let (_, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("no figure and no reason"), "{stderr}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("report.json")).unwrap()).unwrap();
    let sections = report["sections"].as_array().unwrap();
    let papers: Vec<&str> = sections.iter().map(|section| section["paper"].as_str().unwrap()).collect();
    assert_eq!(papers, ["poptrie", "dxr", "softcom", "lulea", "linux"]);
    let mut compared = 0;
    for section in sections {
        let experiments = section["experiments"].as_array().unwrap();
        assert!(experiments.len() >= 2, "{}", section["paper"]);
        for experiment in experiments {
            let title = experiment["title"].as_str().unwrap();
            let rows = experiment["rows"].as_array().unwrap();
            assert!(!rows.is_empty(), "{title}: no rows");
            for row in rows {
                let measured = row["measured"].as_f64();
                assert!(measured.is_some() || !row["note"].as_str().unwrap().is_empty(), "{title}: {row}");
                if let Some(value) = measured {
                    assert!(value.is_finite() && value >= 0.0, "{title}: {row}");
                    compared += usize::from(!row["published"].is_null());
                }
            }
            for plot in experiment["plots"].as_array().unwrap() {
                let bytes = std::fs::read(out.path().join(plot[0].as_str().unwrap())).unwrap();
                assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000, "{plot}");
            }
        }
    }
    // Most rows stand beside a published figure.
    assert!(compared >= 150, "only {compared} rows compared with a published figure");
    let markdown = std::fs::read_to_string(out.path().join("report.md")).unwrap();
    let headings = [
        "Table 2",
        "Table 4",
        "Table 5",
        "Table 6",
        "Figure 8",
        "Table I",
        "Figures 4 and 5",
        "rt.stat",
        "Chunk-length",
        "Scenario 2",
    ];
    for heading in headings {
        assert!(markdown.contains(heading), "{heading} missing from the report");
    }
}

#[test]
fn any_table_gets_the_softcom_table_i() {
    let dir = tempfile::tempdir().unwrap();
    let table = common::write(dir.path(), "small.txt", "10.0.0.0/8 1\n10.1.0.0/16 2\n10.1.2.0/24 3\n192.0.2.0/24 4\n");
    let out = dir.path().join("out");
    let output = common::fibkit(&[
        "reproduce",
        "softcom",
        "--quick",
        "--table",
        table.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let (_, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    let markdown = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        markdown.contains("small.txt (4 IPv4 prefixes, 4 next hops, values mapped onto 239) stands in for LINX 2014"),
        "{markdown}"
    );
    assert!(markdown.contains("| IPv4 prefixes | 513644 count | Table I, LINX 2014 | 4  |"), "{markdown}");
    assert!(markdown.contains("| d20r: direct coverage |"), "{markdown}");
}

#[test]
fn bad_arguments_are_refused_before_measuring() {
    let output = common::fibkit(&["reproduce", "all", "--quick", "--data", "/no/such/dir"]);
    let (_, stderr) = text(&output);
    assert!(!output.status.success());
    assert!(stderr.contains("--data /no/such/dir: no such directory"), "{stderr}");
    let output = common::fibkit(&["reproduce", "softcom", "--quick", "--table", "/no/such/table"]);
    assert!(!output.status.success() && text(&output).1.contains("--table /no/such/table: no such file"));
    let output = common::fibkit(&["reproduce", "nonesuch"]);
    assert!(!output.status.success());
}
