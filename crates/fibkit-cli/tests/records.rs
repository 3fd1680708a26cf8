//! Records through the `fibkit` command: `lookup --fields` in every
//! format, a compiled file keeping its fields, `convert` writing a table
//! that loads back with the same records, and the refusals.

mod common;

use common::{fibkit, text, write};

const TABLE: &str = "# a comment before the header\n\
                     prefix,asn,org,share,path\n\
                     10.0.0.0/8,64500,\"Example, Inc.\",0.5,64500 3356\n\
                     10.1.0.0/16,64501,\"Tab\there\",,64501\n\
                     2001:db8::/32,64502,Zürich AG,1e300,\n";

fn run(args: &[&str]) -> String {
    let output = fibkit(args);
    let (out, err) = text(&output);
    assert!(output.status.success(), "fibkit {args:?}: {err}");
    out
}

#[test]
fn lookup_writes_the_fields_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "t.csv", TABLE);
    let table = table.to_str().unwrap();
    let addresses = ["10.9.9.9", "10.1.0.1", "2001:db8::1", "11.0.0.1"];
    let lookup = |format: &str, fields: &str| {
        let mut args = vec!["lookup", table, "--fields", fields, "--format", format];
        args.extend(addresses);
        run(&args)
    };
    assert_eq!(
        lookup("text", "org,asn"),
        "10.9.9.9\tExample, Inc.\t64500\n10.1.0.1\tTab here\t64501\n2001:db8::1\tZürich AG\t64502\n11.0.0.1\t\t\n"
    );
    assert_eq!(
        lookup("csv", "*"),
        "address,asn,org,share,path\n10.9.9.9,64500,\"Example, Inc.\",0.5,64500 3356\n\
         10.1.0.1,64501,Tab\there,,64501\n2001:db8::1,64502,Zürich AG,1e300,\n11.0.0.1,,,,\n"
    );
    let json = lookup("json", "path,share");
    let lines: Vec<serde_json::Value> = json.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(lines[0]["value"], serde_json::json!({"path": [64500, 3356], "share": 0.5}));
    assert_eq!(lines[1]["value"], serde_json::json!({"path": [64501], "share": null}));
    assert_eq!(lines[3]["value"], serde_json::Value::Null);
}

#[test]
fn a_compiled_file_keeps_its_fields_and_convert_writes_them_back() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "t.csv", TABLE);
    let (table, fib) = (table.to_str().unwrap(), dir.path().join("t.fib"));
    let fib = fib.to_str().unwrap();
    run(&["compile", table, "--fields", "*", "-o", fib]);
    assert_eq!(run(&["lookup", fib, "--fields", "org", "10.1.0.1"]), "10.1.0.1\tTab here\n");
    let refused = fibkit(&["lookup", fib, "--fields", "city", "10.1.0.1"]);
    assert!(text(&refused).1.contains("the table has no field \"city\" (its fields: asn, org, share, path)"));

    let back = dir.path().join("back.csv");
    let back = back.to_str().unwrap();
    run(&["convert", table, back, "--fields", "*"]);
    let written = std::fs::read_to_string(back).unwrap();
    let spec = written.lines().find_map(|line| line.strip_prefix("# load with --fields ")).unwrap();
    assert_eq!(spec, "asn:int,org:text,share:float,path:ints");
    let everything = |table: &str, fields: &str| {
        run(&[
            "lookup",
            table,
            "--fields",
            fields,
            "--format",
            "json",
            "10.9.9.9",
            "10.1.0.1",
            "2001:db8::1",
            "11.0.0.1",
        ])
    };
    assert_eq!(everything(back, spec), everything(table, "*"));
}

#[test]
fn fields_are_refused_where_values_cannot_be_records() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "t.csv", TABLE);
    let table = table.to_str().unwrap();
    let updates = write(dir.path(), "u.txt", "1418774413 a 10.0.0.0/8 192.0.2.1\n");
    for (args, problem) in [
        (vec!["lookup", table, "--fields", "asn", "--nexthops", "8", "10.0.0.1"], "--nexthops"),
        (vec!["lookup", table, "--fields", "asn:integer", "10.0.0.1"], "unknown type \"integer\""),
        (
            vec!["lookup", table, "--fields", "org:int", "10.0.0.1"],
            "t.csv:3: field \"org\": \"Example, Inc.\" is not an integer",
        ),
        (vec!["lookup", updates.to_str().unwrap(), "--fields", "asn", "10.0.0.1"], "an update stream"),
        (vec!["convert", table, "--fields", "*", "--grow", "syn1"], "--grow"),
    ] {
        let output = fibkit(&args);
        let (_, err) = text(&output);
        assert!(!output.status.success() && err.contains(problem), "{args:?}: {err}");
    }
}
