//! The C benchmark's keys are `fibkit bench`'s: `examples/bench_keys.h`,
//! compiled into a small C program, prints the first keys of the scalar
//! stream and of the sixteen lanes for two workers, and each must equal
//! what `fibkit::random` draws for the same worker. The two harnesses once
//! disagreed by 1.8 times because the C lanes were seeded from one
//! xorshift chain, each lane the next one's state a step behind: a batch
//! held fifteen keys of the one before it, and the C bulk figures measured
//! keys found in L1.

extern crate fibkit_core as fibkit;

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

use fibkit::random::{worker_seed, XorShift32, XorShift32x16};

const SCALAR_KEYS: usize = 100;
const BATCH_KEYS: usize = 1024;

/// What the C program prints for worker `thread`: its scalar keys, then
/// its lane keys, or `None` (having said `skipped`) without a C compiler.
fn c_keys(thread: usize) -> Option<(Vec<u32>, Vec<u32>)> {
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let scratch = tempfile::tempdir().unwrap();
    let source = scratch.path().join("print_keys.c");
    std::fs::write(
        &source,
        format!(
            r#"#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "bench_keys.h"
int main(int argc, char **argv) {{
    unsigned thread = (unsigned)atoi(argv[argc - 1]);
    uint32_t state = bench_scalar(bench_seed(thread)), lanes[LANES], keys[{BATCH_KEYS}];
    for (int i = 0; i < {SCALAR_KEYS}; i++) printf("%" PRIu32 " ", xorshift32(&state));
    printf("\n");
    lanes_seed(lanes, bench_seed(thread));
    lanes_fill(lanes, keys, {BATCH_KEYS});
    for (int i = 0; i < {BATCH_KEYS}; i++) printf("%" PRIu32 " ", keys[i]);
    printf("\n");
    return 0;
}}
"#
        ),
    )
    .unwrap();
    let program = scratch.path().join("print_keys");
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let built = match Command::new(&compiler)
        .args(["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic"])
        .arg(format!("-I{}", examples.display()))
        .arg(&source)
        .arg("-o")
        .arg(&program)
        .output()
    {
        Ok(built) => built,
        Err(error) => {
            eprintln!("skipped: no C compiler `{compiler}` ({error}; apt-get install gcc)");
            return None;
        }
    };
    assert!(built.status.success(), "cc: {}", String::from_utf8_lossy(&built.stderr));
    let printed = Command::new(&program).arg(thread.to_string()).output().unwrap();
    assert!(printed.status.success());
    let text = String::from_utf8(printed.stdout).unwrap();
    let mut lines = text.lines().map(|line| line.split_whitespace().map(|key| key.parse().unwrap()).collect());
    Some((lines.next().unwrap(), lines.next().unwrap()))
}

#[test]
fn the_c_benchmark_draws_the_keys_of_fibkit_bench() {
    for thread in [0, 1] {
        let Some((scalar, batched)) = c_keys(thread) else { return };
        let mut rng = XorShift32::new(worker_seed(thread));
        let expected: Vec<u32> = (0..SCALAR_KEYS).map(|_| rng.next()).collect();
        assert_eq!(scalar, expected, "worker {thread}'s scalar keys");
        let mut keys = vec![0u32; BATCH_KEYS];
        XorShift32x16::new(worker_seed(thread)).fill(&mut keys);
        assert_eq!(batched, keys, "worker {thread}'s lane keys");
        // No key comes back within a batch window: the lanes are not
        // copies of each other a step apart.
        let distinct: HashSet<_> = batched.iter().collect();
        assert_eq!(distinct.len(), BATCH_KEYS, "worker {thread}: keys repeat");
    }
}
