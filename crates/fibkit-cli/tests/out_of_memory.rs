//! Memory refused to an engine's build (issue 48, defect 7): `sail-wide`
//! on ten million /32s once aborted the process ("memory allocation of
//! 7715422208 bytes failed", SIGABRT) under a memory limit, and peaked at
//! twice its footprint (its level arrays were built as vectors, then copied
//! into lookup arrays). Here a table of /32s in distinct /24s, whose
//! level-32 array is most of the structure: built without a limit, the
//! child's peak resident memory (`getrusage(RUSAGE_CHILDREN)`, one test in
//! this binary) stays near the footprint `stat` reports; built under an
//! address-space limit (`RLIMIT_AS`) below that array, it fails with an
//! error naming the engine, the array and its bytes; so does DIR-24-8's
//! growing array of groups, and Luleå's list of the complete prefix tree's
//! leaves (a dozen a scattered /32). Poptrie and Tree BitMap are refused on
//! IPv6 /128s, each a chain of a dozen and more nodes in them, two in the
//! RIB: the table loads under the limit, the structure does not fit it.
//! Every one of these was SIGABRT before its builder allocated fallibly.
//! Compiled into a file, the same table peaks as its build does: the
//! file's sections are written from the structure a chunk at a time, not
//! copied whole first (twice the structure, and three times before that).
//! (LC-trie's, DXR's and SAIL-R's structures are no larger than the RIB
//! they are built from, so no limit refuses them and not the table; their
//! refusals are unit tests, `registry::out_of_memory`.)

mod common;

use std::fmt::Write as _;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::Command;

use common::text;

/// `count` /32 routes, each in a /24 of its own.
fn slash32s(count: u32) -> String {
    let mut table = String::new();
    for index in 0..count {
        // Spread over the /24s: an odd multiplier permutes them.
        let slash24 = index.wrapping_mul(0x9e37_79b1) >> 8;
        let addr = slash24 << 8 | (index & 0xff);
        let [a, b, c, d] = addr.to_be_bytes();
        writeln!(table, "{a}.{b}.{c}.{d}/32 {}", 1 + index % 7).unwrap();
    }
    table
}

/// `count` /128 routes at random addresses of 2400::/10 (64 /16s, within
/// `poptrie16x12`'s blocks).
fn slash128s(count: u32) -> String {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        // xorshift64
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut table = String::new();
    for index in 0..count {
        let random = u128::from(next()) << 64 | u128::from(next());
        let addr = std::net::Ipv6Addr::from(0x2400u128 << 112 | random & ((1 << 118) - 1));
        writeln!(table, "{addr}/128 {}", 1 + index % 7).unwrap();
    }
    table
}

fn children_peak_mib() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage), 0);
        usage
    };
    usage.ru_maxrss as f64 / 1024.0
}

/// `fibkit stat --engine ENGINE ARGS... TABLE`.
fn stat(engine: &str, args: &[&str], table: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fibkit"));
    command.args(["stat", "--engine", engine]).args(args).arg(table);
    command
}

/// Runs `stat` of `engine` on `table` under an address-space limit of
/// `limit` bytes and checks that it ends with an error (exit status 1, not
/// a signal) that prints `refused`.
fn assert_refused(engine: &str, args: &[&str], table: &Path, limit: u64, refused: &str) {
    let mut limited = stat(engine, args, table);
    // SAFETY: setrlimit is async-signal-safe; the closure touches nothing else.
    unsafe {
        limited.pre_exec(move || {
            let limit = libc::rlimit { rlim_cur: limit, rlim_max: limit };
            match libc::setrlimit(libc::RLIMIT_AS, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let output = limited.output().unwrap();
    // `stat` reports an engine that cannot build in its report.
    let (stdout, stderr) = text(&output);
    let printed = stdout + &stderr;
    assert_eq!(output.status.code(), Some(1), "{engine}: an error, not a signal: {:?}\n{printed}", output.status);
    assert!(printed.contains(refused), "{engine}: {printed}");
}

#[test]
fn sail_wide_builds_near_its_footprint_and_a_refused_array_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slash32s.txt");
    std::fs::write(&path, slash32s(300_000)).unwrap();

    let output = stat("sail-wide", &[], &path).output().unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    let total: f64 = stdout
        .lines()
        .find_map(|line| line.strip_prefix("total ")?.split(" MiB").next()?.parse().ok())
        .unwrap_or_else(|| panic!("no total in {stdout}"));
    let peak = children_peak_mib();
    eprintln!("sail-wide: {total:.1} MiB built at a peak of {peak:.1} MiB");
    // The structure, the builder's level-24 chunk map (a sixth of it here)
    // and the table: not a second copy of the structure.
    assert!(peak < total * 1.5, "sail-wide's build peaked at {peak:.1} MiB for {total:.1} MiB");

    // Compiled into a file, the structure's sections are written from it a
    // chunk at a time: no copy of it as the sections' bytes (which peaked
    // at twice the structure), nor of the whole file (three times).
    let compiled = dir.path().join("slash32s.fib");
    let output = Command::new(env!("CARGO_BIN_EXE_fibkit"))
        .args(["compile", "--engine", "sail-wide"])
        .arg(&path)
        .arg("-o")
        .arg(&compiled)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output).1);
    let file = std::fs::metadata(&compiled).unwrap().len() as f64 / f64::from(1 << 20);
    let peak = children_peak_mib();
    eprintln!("sail-wide: a {file:.1} MiB file compiled at a peak of {peak:.1} MiB");
    assert!(peak < file * 1.5, "compiling sail-wide peaked at {peak:.1} MiB for a {file:.1} MiB file");

    // 1 GiB of address space holds the table and the process, not the
    // 1 GB level-32 array of a million /24s, nor DIR-24-8's 1 GiB of groups;
    // 300 MiB holds the table (it loads in about 170), not Luleå's leaves.
    std::fs::write(&path, slash32s(1_000_000)).unwrap();
    for (engine, limit, refused) in [
        (
            "sail-wide",
            1 << 30,
            "sail-wide: out of memory: its level-32 array needs 1024000000 bytes, which the system refused",
        ),
        // A group of 256 entries for each /24: tbl8 grows past the limit.
        ("dir24-8", 1 << 30, "dir24-8: out of memory: its tbl8 of groups needs "),
        ("lulea", 300 << 20, "lulea: out of memory: its "),
    ] {
        assert_refused(engine, &[], &path, limit, refused);
    }

    // 200,000 /128s load in about 75 MiB of address space; each of these
    // structures needs 60 to 450 MiB besides.
    let path = dir.path().join("slash128s.txt");
    std::fs::write(&path, slash128s(200_000)).unwrap();
    for engine in ["poptrie16", "poptrie16-basic", "poptrie16x12", "treebitmap16", "treebitmap64"] {
        assert_refused(engine, &["-6"], &path, 128 << 20, &format!("{engine}: out of memory: its "));
    }
}
