//! A decompression bomb (issue 48, defect 5): a small gzip file of comment
//! lines that inflates to hundreds of MiB once made `fibkit stat` hold all
//! of it (a 2.9 MB file peaked at 5 GB). The loaders now stop at a bound in
//! proportion to the lines they keep; the child's peak resident memory is
//! read from `getrusage(RUSAGE_CHILDREN)`. One test in this binary, so that
//! no other test's children count.

mod common;

use std::io::Write as _;
use std::path::Path;
use std::process::Command;

use common::text;

/// Writes `copies` gzip members, each `unit` repeated to 1 MiB, to `path`
/// (a few KiB a member on disk): `copies` MiB once inflated.
fn bomb(path: &Path, unit: &str, copies: usize) {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let mut inflated = 0;
    while inflated < 1 << 20 {
        encoder.write_all(unit.as_bytes()).unwrap();
        inflated += unit.len();
    }
    let member = encoder.finish().unwrap();
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for _ in 0..copies {
        file.write_all(&member).unwrap();
    }
    file.flush().unwrap();
}

/// The largest peak resident memory, in MiB, of this process's children waited for.
fn children_peak_mib() -> i64 {
    // SAFETY: getrusage fills the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage), 0);
        usage
    };
    usage.ru_maxrss / 1024
}

#[test]
fn a_gzip_bomb_is_refused_by_name_before_it_is_held_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let comments = dir.path().join("comments.txt.gz");
    bomb(&comments, "# a comment line, and nothing else, many times over\n\n", 512);
    assert!(std::fs::metadata(&comments).unwrap().len() < 4 << 20, "the test's file stays small");
    let output =
        Command::new(env!("CARGO_BIN_EXE_fibkit")).args(["stat", comments.to_str().unwrap()]).output().unwrap();
    let (_, stderr) = text(&output);
    assert!(!output.status.success());
    assert!(stderr.contains(&format!("{}: at byte ", comments.display())), "{stderr}");
    assert!(
        stderr.contains("gzip data inflates to") && stderr.contains("bytes of comment and blank lines"),
        "{stderr}"
    );
    let peak = children_peak_mib();
    assert!(peak < 200, "fibkit stat peaked at {peak} MiB on 512 MiB of comments");

    // Repeated routes are bounded too: by the file's inflation, or by the
    // cap set in the environment, named in the error.
    let routes = dir.path().join("routes.txt.gz");
    bomb(&routes, "10.0.0.0/8 64500\n", 300);
    let output = Command::new(env!("CARGO_BIN_EXE_fibkit"))
        .args(["stat", routes.to_str().unwrap()])
        .env("FIBKIT_MAX_DECOMPRESSED", "100000000")
        .output()
        .unwrap();
    let (_, stderr) = text(&output);
    assert!(!output.status.success());
    assert!(stderr.contains("gzip data inflates past FIBKIT_MAX_DECOMPRESSED=100000000 bytes"), "{stderr}");
    let peak = children_peak_mib();
    assert!(peak < 200, "fibkit stat peaked at {peak} MiB");

    // Lines that are routes count for what is held: a table with comments
    // between its routes loads whole.
    let table = dir.path().join("table.txt.gz");
    bomb(&table, "# a comment\n10.0.0.0/8 64500\n", 4);
    let output = Command::new(env!("CARGO_BIN_EXE_fibkit")).args(["stat", table.to_str().unwrap()]).output().unwrap();
    assert!(output.status.success(), "{}", text(&output).1);
}
