//! SAIL-R's lines and levels on small tables, and its limits.

use std::sync::atomic::Ordering;

use super::*;
use crate::addr::Prefix4;
use crate::error::{BuildError, Limit};
use crate::rib::rib_of;

fn ip(text: &str) -> u32 {
    text.parse::<std::net::Ipv4Addr>().unwrap().into()
}

/// Every address of the table's ranges' edges and middles, and every /24's
/// first and last address of the /16s given, answers as the RIB does,
/// scalar and batched.
fn assert_matches(fib: &SailRuns, rib: &Rib4, slash16s: &[u32]) {
    let mut keys = Vec::new();
    for range in rib.ranges(0, u32::MAX) {
        keys.extend([range.first, range.last, range.first + (range.last - range.first) / 2]);
    }
    for &a in slash16s {
        keys.extend((0..256).flat_map(|b| [a << 16 | b << 8, a << 16 | b << 8 | 0xff]));
    }
    for &key in &keys {
        assert_eq!(fib.lookup(key), rib.lookup(key), "at {key:#010x}");
    }
    let mut out = vec![0; keys.len()];
    fib.lookup_batch(&keys, &mut out);
    for (&key, &got) in keys.iter().zip(&out) {
        assert_eq!(got, rib.lookup(key), "batch at {key:#010x}");
    }
}

/// The level-16 entry of /16 `a`.
fn entry(fib: &SailRuns, a: u32) -> u32 {
    fib.level16[a as usize].load(Ordering::Relaxed)
}

/// `line`'s answers of the /24s from `first` on, as lookups read them (in
/// one vector compare) and as the updater does (run by run), are
/// `answers`.
fn assert_line_answers(line: &Line, first: u8, answers: &[u16]) {
    let cell = LineCell::new(line);
    let mut read_back = Vec::new();
    line.answers(first, answers.len(), &mut read_back);
    assert_eq!(read_back, answers, "{line:?}");
    for (b, &answer) in (first..=u8::MAX).zip(answers) {
        assert_eq!(cell.value(b), answer, "/24 {b} of {line:?}");
    }
}

#[test]
fn a_line_holds_each_runs_start_and_answer() {
    let mut answers = [7u16; CHUNK_ENTRIES];
    answers[3..10].fill(8);
    answers[255] = SPLIT | 2;
    let line = Line::of(0, &answers).unwrap();
    assert_eq!(line.starts[..4], [3, 10, 255, 255]);
    assert_eq!(line.values[..4], [7, 8, 7, SPLIT | 2]);
    assert!(line.values[4..].iter().all(|&value| value == SPLIT | 2), "padding repeats the last run");
    assert_line_answers(&line, 0, &answers);
    assert_eq!(LineCell::new(&line).get(), line);
}

#[test]
fn twenty_one_runs_fit_a_line_and_twenty_two_do_not() {
    let runs =
        |count: usize| -> [u16; CHUNK_ENTRIES] { std::array::from_fn(|b| (b * count / CHUNK_ENTRIES) as u16 + 1) };
    let line = Line::of(0, &runs(RUNS)).unwrap();
    assert!(line.starts.iter().all(|&start| start != u8::MAX), "{line:?}");
    assert_line_answers(&line, 0, &runs(RUNS));
    assert_eq!(Line::of(0, &runs(RUNS + 1)), None);
    // A line of the upper half: its starts are /24 numbers of the /16.
    let upper = Line::of(128, &runs(RUNS)[128..]).unwrap();
    assert!(upper.starts.iter().all(|&start| start > 128), "{upper:?}");
    assert_line_answers(&upper, 128, &runs(RUNS)[128..]);
}

/// Lines of random runs, in every span a chunk's lines take and at every
/// place in the /16, read back as they were written: runs up to the
/// span's end, a last run of one /24, runs that start at /24 255, and
/// spans of more than `RUNS` runs, which no line takes.
#[test]
fn random_runs_read_back_from_their_lines() {
    let mut rng = crate::random::XorShift32::new(7);
    for round in 0..4_000 {
        let span = CHUNK_ENTRIES >> (round % 5);
        let first = (rng.next() as usize % (CHUNK_ENTRIES / span)) * span;
        let change_every = [2, 5, 12, 40, 1000][round / 5 % 5];
        let mut answers = Vec::with_capacity(span);
        let mut value = (rng.next() % 4) as u16;
        for b in 0..span {
            if b == 0 || rng.next().is_multiple_of(change_every) || (round % 7 == 0 && b == span - 1) {
                let split = if rng.next().is_multiple_of(9) { SPLIT } else { 0 };
                value = ((value + 1 + (rng.next() % 3) as u16) % 6) | split;
            }
            answers.push(value);
        }
        let runs = 1 + answers.windows(2).filter(|pair| pair[0] != pair[1]).count();
        match Line::of(first as u8, &answers) {
            Some(line) => {
                assert!(runs <= RUNS, "{runs} runs in one line");
                assert_line_answers(&line, first as u8, &answers);
            }
            None => assert!(runs > RUNS, "{runs} runs refused"),
        }
    }
}

#[test]
fn chunks_only_where_answers_differ() {
    let table = rib_of(&[
        ("0.0.0.0/0", 1),
        ("10.0.0.0/8", 2),
        ("10.1.0.0/16", 3),
        ("10.1.5.0/24", 3),
        ("10.2.0.0/20", 4),
        ("10.2.3.0/24", 5),
        ("10.2.3.128/25", 6),
        ("10.2.3.7/32", 7),
        ("10.2.4.0/25", 4),
        ("255.255.255.255/32", 8),
    ]);
    let fib = SailRuns::build(&table).unwrap();
    // 10.1/16 answers 3 throughout (its /24 has the /16's next hop), as do
    // 10.2.4/24 (4); 10.2/16 and 255.255/16 get a line each, 10.2.3/24 and
    // 255.255.255/24 a level-32 chunk each.
    assert_eq!((fib.lines.len(), fib.n32.len() / CHUNK_ENTRIES), (2, 2));
    assert_eq!(entry(&fib, 0x0a01), 3);
    assert_eq!(entry(&fib, 0x0a03), 2);
    assert_eq!(entry(&fib, 0x0a02), CHUNK | 8 << SHIFT_AT, "the first line, one for the /16");
    assert_eq!(entry(&fib, 0xffff), CHUNK | 8 << SHIFT_AT | 1);
    let line = fib.lines[0].get();
    assert_eq!(line.starts[..4], [3, 4, 16, 255]);
    assert_eq!(line.values[..4], [4, SPLIT, 4, 2]);
    assert_eq!(fib.lookup(ip("10.2.3.7")), 7);
    assert_eq!(fib.lookup(ip("10.2.3.8")), 5);
    assert_eq!(fib.lookup(ip("10.2.3.200")), 6);
    assert_eq!(fib.lookup(ip("255.255.255.254")), 1);
    assert_eq!(fib.lookup(u32::MAX), 8);
    assert_matches(&fib, &table, &[0x0a01, 0x0a02, 0xffff]);
    assert_eq!(fib.footprint(), 65_536 * 4 + 2 * 64 + 2 * 256 * 2);
}

#[test]
fn a_chunk_of_many_runs_takes_as_many_lines_as_it_needs() {
    // 10.0/16: a different next hop in every other /24 of its first 64, so
    // that its first 32 /24s are 32 runs: 16 lines of 16 /24s. 10.1/16:
    // 20 runs in each half, 40 in all: 2 lines.
    let mut table = rib_of(&[("10.0.0.0/8", 1)]);
    for b in (0..64u32).step_by(2) {
        table.insert(Prefix4::new(ip("10.0.0.0") | b << 8, 24).unwrap(), 2 + b % 3);
    }
    for b in (0..20u32).step_by(2).chain((128..148).step_by(2)) {
        table.insert(Prefix4::new(ip("10.1.0.0") | b << 8, 24).unwrap(), 5);
    }
    let fib = SailRuns::build(&table).unwrap();
    assert_eq!(entry(&fib, 0x0a00), CHUNK | 4 << SHIFT_AT);
    assert_eq!(entry(&fib, 0x0a01), CHUNK | 7 << SHIFT_AT | 16);
    assert_eq!(fib.lines.len(), 18);
    assert_matches(&fib, &table, &[0x0a00, 0x0a01]);
}

#[test]
fn empty_table_and_default_route() {
    let fib = SailRuns::build(&Rib4::new()).unwrap();
    assert_eq!(fib.lookup(0x0102_0304), crate::NO_ROUTE);
    assert_eq!(fib.footprint(), 65_536 * 4);
    let table = rib_of(&[("0.0.0.0/0", 9)]);
    assert_matches(&SailRuns::build(&table).unwrap(), &table, &[]);
}

#[test]
fn the_15_bit_limits_are_refused_and_named() {
    let table = rib_of(&[("10.0.0.0/8", 0x7fff), ("10.1.2.3/32", 3)]);
    assert_matches(&SailRuns::build(&table).unwrap(), &table, &[0x0a01]);
    let Err(BuildError::Limit(error)) = SailRuns::build(&rib_of(&[("10.0.0.0/8", 0x8000)])) else {
        panic!("sail-runs took the table")
    };
    assert_eq!((error.limit, error.value, error.max), (Limit::NextHop, 0x8000, 0x7fff));
    assert!(error.to_string().contains("the 15-bit next hop of a value"), "{error}");
    // A /25 in each of 2^15 + 1 /24s: one level-32 chunk too many.
    let mut table = Rib4::new();
    for slash24 in 0..=0x8000u32 {
        table.insert(Prefix4::new(0x0a00_0000 + (slash24 << 8), 25).unwrap(), 2);
    }
    let Err(BuildError::Limit(error)) = SailRuns::build(&table) else { panic!("sail-runs took the table") };
    assert_eq!((error.limit, error.value, error.max), (Limit::Chunks, 32_769, 32_768));
    assert!(error.to_string().contains("the 15-bit level-32 chunk ID of a value"), "{error}");
    table.remove(Prefix4::new(0x0a00_0000 + (0x8000 << 8), 25).unwrap());
    assert_eq!(SailRuns::build(&table).unwrap().n32.len(), 32_768 * CHUNK_ENTRIES);
}

#[test]
fn batches_of_every_length() {
    let table = rib_of(&[("10.0.0.0/8", 2), ("10.2.0.0/24", 4), ("10.2.0.0/30", 5)]);
    let fib = SailRuns::build(&table).unwrap();
    let keys: Vec<u32> = (0..100u32).map(|i| ip("10.2.0.0") + i % 7 + (i / 7) * 0x100).collect();
    for length in 0..keys.len() {
        let mut out = vec![u32::MAX; length];
        fib.lookup_batch(&keys[..length], &mut out);
        assert!(keys[..length].iter().zip(&out).all(|(&key, &got)| got == table.lookup(key)), "length {length}");
    }
}
