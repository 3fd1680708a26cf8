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
//! growing array of groups.

mod common;

use std::fmt::Write as _;
use std::os::unix::process::CommandExt as _;
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

fn children_peak_mib() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage), 0);
        usage
    };
    usage.ru_maxrss as f64 / 1024.0
}

#[test]
fn sail_wide_builds_near_its_footprint_and_a_refused_array_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slash32s.txt");
    std::fs::write(&path, slash32s(300_000)).unwrap();
    let fibkit = |engine: &str| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_fibkit"));
        command.args(["stat", "--engine", engine, path.to_str().unwrap()]);
        command
    };

    let output = fibkit("sail-wide").output().unwrap();
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

    // 1 GiB of address space holds the table and the process, not the
    // 1 GB level-32 array of a million /24s, nor DIR-24-8's 1 GiB of groups.
    std::fs::write(&path, slash32s(1_000_000)).unwrap();
    for (engine, refused) in [
        ("sail-wide", "sail-wide: out of memory: its level-32 array needs 1024000000 bytes, which the system refused"),
        // A group of 256 entries for each /24: tbl8 grows past the limit.
        ("dir24-8", "dir24-8: out of memory: its tbl8 of groups needs "),
    ] {
        let mut limited = fibkit(engine);
        // SAFETY: setrlimit is async-signal-safe; the closure touches nothing else.
        unsafe {
            limited.pre_exec(|| {
                let limit = libc::rlimit { rlim_cur: 1 << 30, rlim_max: 1 << 30 };
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
        assert!(
            !output.status.success() && output.status.code().is_some(),
            "{engine}: an error, not a signal: {:?}\n{printed}",
            output.status
        );
        assert!(printed.contains(refused), "{engine}: {printed}");
    }
}
