//! `fibkit compile` and `fibkit lookup` on its FIB files: the same answers
//! as from the table, the options a compiled file fixes, and damaged files
//! refused with the file, the offset and the problem.

mod common;

use std::path::{Path, PathBuf};

use common::{fibkit, text, write};

/// `10.0.0.0/8` is AS 64500, `10.1.0.0/16` AS 64501, `2001:db8::/32` AS
/// 64502, `192.0.2.0/24` the next hop 198.51.100.1.
const TABLE: &str = "10.0.0.0/8 64500\n10.1.0.0/16 64501\n2001:db8::/32 64502\n192.0.2.0/24 198.51.100.1\n";

const ADDRESSES: &str = "10.1.2.3\n10.2.3.4\n2001:db8::1\n192.0.2.9\n11.0.0.1\n::ffff:10.1.0.1\n2001:db9::1\n";

/// `fibkit compile` of [`TABLE`] with `args`, its stderr on failure.
fn compile(dir: &Path, args: &[&str]) -> Result<PathBuf, String> {
    let table = write(dir, "table.txt", TABLE);
    let compiled = dir.join("table.fib");
    let mut all = vec!["compile", table.to_str().unwrap(), "-o", compiled.to_str().unwrap()];
    all.extend(args);
    let output = fibkit(&all);
    if output.status.success() {
        Ok(compiled)
    } else {
        Err(text(&output).1)
    }
}

/// `fibkit lookup TABLE ADDRESSES ARGS...`: (success, stdout, stderr).
fn lookup(dir: &Path, table: &Path, args: &[&str]) -> (bool, String, String) {
    let addresses = write(dir, "addresses.txt", ADDRESSES);
    let mut all = vec!["lookup", table.to_str().unwrap(), addresses.to_str().unwrap()];
    all.extend(args);
    let output = fibkit(&all);
    let (stdout, stderr) = text(&output);
    (output.status.success(), stdout, stderr)
}

#[test]
fn a_compiled_file_answers_as_its_table_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "table.txt", TABLE);
    for (compile_args, lookup_args) in [
        (&[][..], &[][..]),
        (&["--prefix"][..], &["--prefix", "--format", "csv"][..]),
        (&["--prefix", "--engine", "poptrie0"][..], &["--prefix", "--format", "json"][..]),
        (&["--engine", "dir24-8,poptrie16"][..], &["--format", "json"][..]),
    ] {
        let compiled = compile(dir.path(), compile_args).unwrap();
        let from_table = lookup(dir.path(), &table, lookup_args);
        let from_file = lookup(dir.path(), &compiled, lookup_args);
        assert!(from_table.0 && from_file.0, "{}", from_file.2);
        assert_eq!(from_file.1, from_table.1, "{compile_args:?}");
    }
    let compiled = compile(dir.path(), &[]).unwrap();
    let (_, stdout, _) = lookup(dir.path(), &compiled, &[]);
    let expected = "10.1.2.3\t64501\n10.2.3.4\t64500\n2001:db8::1\t64502\n192.0.2.9\t198.51.100.1\n11.0.0.1\t\n\
                    ::ffff:10.1.0.1\t64501\n2001:db9::1\t\n";
    assert_eq!(stdout, expected);
}

#[test]
fn one_family_can_be_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let compiled = compile(dir.path(), &["-4"]).unwrap();
    let (ok, stdout, stderr) = lookup(dir.path(), &compiled, &[]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("10.1.2.3\t64501\n") && stdout.contains("2001:db8::1\t\n"), "{stdout}");
    let compiled = compile(dir.path(), &["-6"]).unwrap();
    let (_, stdout, _) = lookup(dir.path(), &compiled, &[]);
    assert!(stdout.contains("10.1.2.3\t\n") && stdout.contains("2001:db8::1\t64502\n"), "{stdout}");
    let error = compile(dir.path(), &["-4", "-6"]).unwrap_err();
    assert!(error.contains("cannot be used with"), "{error}");
}

#[test]
fn what_a_compiled_file_fixes_cannot_be_asked_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let error = compile(dir.path(), &["--engine", "lulea"]).unwrap_err();
    assert!(error.contains("engine lulea cannot be saved to a FIB file (engines that can: d16r, d17r,"), "{error}");
    let error = compile(dir.path(), &["--engine", "nonesuch"]).unwrap_err();
    assert!(error.contains("unknown engine \"nonesuch\""), "{error}");
    let compiled = compile(dir.path(), &[]).unwrap();
    for (args, message) in [
        (&["--engine", "d16r"][..], "--engine cannot change a compiled FIB file"),
        (&["--nexthops", "8"][..], "--nexthops cannot change a compiled FIB file"),
        (&["--prefix"][..], "compiled without the routes' prefixes"),
    ] {
        let (ok, _, stderr) = lookup(dir.path(), &compiled, args);
        assert!(!ok && stderr.contains(message), "{args:?}: {stderr}");
    }
    let output = fibkit(&["stat", compiled.to_str().unwrap()]);
    let stderr = text(&output).1;
    assert!(!output.status.success() && stderr.contains("a compiled FIB file, not a table"), "{stderr}");
}

#[test]
fn a_damaged_file_is_refused_with_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let compiled = compile(dir.path(), &[]).unwrap();
    let mut bytes = std::fs::read(&compiled).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&compiled, &bytes).unwrap();
    let (ok, _, stderr) = lookup(dir.path(), &compiled, &[]);
    assert!(!ok, "a damaged file was taken");
    assert!(
        stderr.contains("table.fib: offset 32: payload checksum") && stderr.contains("the file is damaged"),
        "{stderr}"
    );
    bytes.truncate(100);
    std::fs::write(&compiled, &bytes).unwrap();
    let (ok, _, stderr) = lookup(dir.path(), &compiled, &[]);
    assert!(!ok && stderr.contains("table.fib: offset 16: the header says"), "{stderr}");
}

/// `fibkit compile TABLE -o OUTPUT` run in `dir`: (success, stdout bytes, stderr).
fn compile_to(dir: &Path, output: &str) -> (bool, Vec<u8>, String) {
    let table = write(dir, "table.txt", TABLE);
    let run = common::fibkit_with_input(dir, &["compile", table.to_str().unwrap(), "-o", output], b"");
    (run.status.success(), run.stdout.clone(), text(&run).1)
}

#[test]
fn compile_refuses_devices_fifos_and_its_input_and_writes_dash_to_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    // A device stays a device: once it was replaced by a regular file. The
    // test makes a null device of its own (root only), so that a regression
    // replaces nothing of the machine's.
    let device = dir.path().join("null");
    if std::process::Command::new("mknod")
        .arg(&device)
        .args(["c", "1", "3"])
        .status()
        .is_ok_and(|status| status.success())
    {
        let (ok, _, stderr) = compile_to(dir.path(), device.to_str().unwrap());
        assert!(!ok && stderr.contains("a character device, not a regular file"), "{stderr}");
        assert!(std::os::unix::fs::FileTypeExt::is_char_device(&std::fs::metadata(&device).unwrap().file_type()));
    } else {
        eprintln!("skipped the device case: mknod needs root");
    }
    let fifo = dir.path().join("fifo");
    if std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|status| status.success()) {
        let (ok, _, stderr) = compile_to(dir.path(), fifo.to_str().unwrap());
        assert!(!ok && stderr.contains("a FIFO, not a regular file"), "{stderr}");
        assert!(std::os::unix::fs::FileTypeExt::is_fifo(&std::fs::symlink_metadata(&fifo).unwrap().file_type()));
    }
    // The input named as the output: refused, the table left as it was.
    let (ok, _, stderr) = compile_to(dir.path(), "table.txt");
    assert!(!ok && stderr.contains("is the input table"), "{stderr}");
    assert_eq!(std::fs::read_to_string(dir.path().join("table.txt")).unwrap(), TABLE);
    // `-` is standard output, not a file named `-`.
    let (ok, stdout, stderr) = compile_to(dir.path(), "-");
    assert!(ok, "{stderr}");
    assert!(stderr.starts_with("standard output: "), "{stderr}");
    assert!(!dir.path().join("-").exists());
    let piped = write(dir.path(), "piped.fib", "");
    std::fs::write(&piped, &stdout).unwrap();
    assert_eq!(lookup(dir.path(), &piped, &[]).1, lookup(dir.path(), &dir.path().join("table.txt"), &[]).1);
}

#[test]
fn compile_through_a_symbolic_link_replaces_the_file_it_names_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let real = write(dir.path(), "real.fib", "old bytes");
    let link = dir.path().join("current.fib");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let (ok, _, stderr) = compile_to(dir.path(), link.to_str().unwrap());
    assert!(ok, "{stderr}");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    let (answered, stdout, _) = lookup(dir.path(), &real, &[]);
    assert!(answered && stdout.starts_with("10.1.2.3\t64501\n"), "{stdout}");
}
