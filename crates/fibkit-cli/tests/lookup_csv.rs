//! `fibkit lookup --column` on hostile CSV (issue 48): a malformed address
//! in the first row, quoted line breaks, a byte-order mark. The output must
//! parse as CSV (checked by a parser of the test's own) and every row the
//! input had is either answered or named on stderr.

mod common;

use std::path::Path;

use common::{fibkit_with_input, text};

const TABLE: &str = "10.0.0.0/8 64500\n10.1.0.0/16 64501\n2001:db8::/32 64502\n";

/// `fibkit lookup TABLE ARGS...` with `input` on standard input.
fn lookup(args: &[&str], input: &str) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let table = common::write(dir.path(), "table.txt", TABLE);
    let mut all = vec!["lookup", table.to_str().unwrap()];
    all.extend(args);
    fibkit_with_input(Path::new("."), &all, input.as_bytes())
}

/// The records of `text` as RFC 4180 reads them (a quoted field may hold
/// delimiters, doubled quotes and line breaks); an error for a quote left
/// open or a quote inside an unquoted field.
fn parse_csv(text: &str) -> Result<Vec<Vec<String>>, String> {
    let (mut records, mut record, mut field) = (Vec::new(), Vec::new(), String::new());
    let mut chars = text.chars().peekable();
    let mut quoted_field = false;
    while let Some(c) = chars.next() {
        match c {
            '"' if field.is_empty() && !quoted_field => {
                quoted_field = true;
                loop {
                    match chars.next() {
                        None => return Err(format!("a quote left open in record {}", records.len() + 1)),
                        Some('"') if chars.peek() == Some(&'"') => {
                            chars.next();
                            field.push('"');
                        }
                        Some('"') => break,
                        Some(other) => field.push(other),
                    }
                }
            }
            '"' => return Err(format!("a stray quote in record {}", records.len() + 1)),
            ',' => {
                record.push(std::mem::take(&mut field));
                quoted_field = false;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
                quoted_field = false;
            }
            other if quoted_field => return Err(format!("{other:?} after a closing quote")),
            other => field.push(other),
        }
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push(record);
    }
    Ok(records)
}

#[test]
fn the_test_parser_reads_rfc_4180() {
    let records = parse_csv("a,\"b,\"\"c\"\"\r\nd\"\n1,2\n").unwrap();
    assert_eq!(records, [vec!["a", "b,\"c\"\r\nd"], vec!["1", "2"]]);
    assert!(parse_csv("a,\"b\n").is_err());
    assert!(parse_csv("a,b\"c\n").is_err());
}

#[test]
fn a_malformed_address_in_the_first_row_is_a_row_named_by_its_line_not_a_header() {
    let csv = "1,10.1.2.300,x\n2,10.1.2.3,y\n";
    let output = lookup(&["--column", "2", "--format", "csv"], csv);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "2,10.1.2.3,y,64501\n", "{stderr}");
    assert!(stderr.contains("standard input:1: not an IPv4 or IPv6 address: \"1,10.1.2.300,x\""), "{stderr}");
    for bad in ["10.1.2.300", "2001:db8::zz", "010.1.2.3", "1.2.3", "::ffff:1.2.3.400"] {
        let output = lookup(&["--column", "2", "--format", "csv", "--strict"], &format!("1,{bad},x\n2,10.1.2.3,y\n"));
        let (stdout, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(2), "{bad}: {stdout}");
        assert!(stdout.is_empty(), "{bad}: {stdout}");
        assert!(stderr.contains("standard input:1: "), "{bad}: {stderr}");
    }
    // Words are still a header, whatever the column.
    for header in ["src", "src ip", "ip.v4", "\"address\"", "Addr:Port", "", "beef"] {
        let output = lookup(&["--column", "2", "--format", "csv", "--strict"], &format!("n,{header}\n2,10.1.2.3\n"));
        let (stdout, stderr) = text(&output);
        assert!(output.status.success(), "{header}: {stderr}");
        assert_eq!(stdout, format!("n,{header},value\n2,10.1.2.3,64501\n"), "{header}");
    }
}

#[test]
fn a_quoted_line_break_never_leaves_the_output_unparsable() {
    let csv =
        "id,src,note\r\n1,10.1.2.3,\"two\r\nlines\"\r\n2,10.2.0.1,\"a \"\"b\"\", c\"\r\n3,\"10.0.0.9\",\"x\ny\nz\"\r\n";
    let output = lookup(&["--column", "src", "--format", "csv"], csv);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    let records = parse_csv(&stdout).unwrap_or_else(|error| panic!("{error}: {stdout:?}"));
    assert!(records.iter().all(|record| record.len() == 4), "{records:?}");
    assert_eq!(records[0], ["id", "src", "note", "value"]);
    assert!(records.iter().any(|record| record[..2] == ["2", "10.2.0.1"] && record[2] == "a \"b\", c"), "{records:?}");
    // Every input line is answered or named.
    let answered: Vec<&str> = records[1..].iter().map(|record| record[0].as_str()).collect();
    for line in 2..=7 {
        let named = stderr.contains(&format!("standard input:{line}: "));
        let row = match line {
            4 => "2",
            _ => "",
        };
        assert!(named || answered.contains(&row), "line {line} neither answered nor named: {stderr}");
    }
    assert!(stderr.contains("standard input:2: a quoted field is not closed on its line"), "{stderr}");
    let output = lookup(&["--column", "src", "--format", "csv", "--strict"], csv);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output).1.contains("standard input:2: a quoted field is not closed on its line"));
}

#[test]
fn a_byte_order_mark_is_not_part_of_the_first_line() {
    let output = lookup(&["--column", "src", "--format", "csv"], "\u{feff}src,n\n10.1.2.3,1\n");
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "src,n,value\n10.1.2.3,1,64501\n");
    let output = lookup(&["--column", "1", "--format", "csv", "--strict"], "\u{feff}10.1.2.3,1\n");
    assert_eq!(text(&output).0, "10.1.2.3,1,64501\n", "{}", text(&output).1);
    let output = lookup(&["--strict"], "\u{feff}10.1.2.3\n2001:db8::1\n");
    assert_eq!(text(&output).0, "10.1.2.3\t64501\n2001:db8::1\t64502\n", "{}", text(&output).1);
    // Only at the start: elsewhere it is a malformed line.
    let output = lookup(&["--strict"], "10.1.2.3\n\u{feff}10.1.2.4\n");
    assert!(text(&output).1.contains("standard input:2: "), "{}", text(&output).1);
}
