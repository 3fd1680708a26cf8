//! The shell examples of the README and of every page in `docs/` run as
//! written: every `$ ...` line of their `sh` and `console` blocks runs
//! through `sh` with the built `fibkit` first on the `PATH`, in a scratch
//! folder holding links to the repository's `data/` (the small tables
//! that ship with it) and `docs/` (the files the pages use), and where `../shared/data` links to the data folder
//! (`FIBKIT_DATA`, else `../shared/data` beside the repository), and must
//! succeed; the output a page shows under a command must be what it prints
//! (times aside). The README runs first, then the pages in name order, all
//! in one scratch folder. A command that names a file the data folder
//! lacks is skipped, and so are the commands after it in its block (they
//! may read what those wrote); so is one whose program (`bird`, say) is
//! not installed. Here the long ones
//! run shorter (`bench` for 0.01 s once, `verify` on 100,000 random
//! addresses, `--exhaustive` and `reproduce` left out: `tests/reproduce.rs` runs
//! that); `readme_examples_run_exactly_as_written`
//! runs them all verbatim (ignored: minutes; `make test-exhaustive`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// One `$` line of a page and the output lines shown under it.
#[derive(Debug)]
struct Example {
    /// Its page, from the repository's root (`README.md`, `docs/cli.md`).
    page: String,
    /// Its line in the page (1-based).
    line: usize,
    /// Its code block (numbered over every page's fences in turn).
    block: usize,
    command: String,
    shown: Vec<String>,
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The pages whose examples run: the README, then every `docs/*.md` in
/// name order.
fn pages() -> Vec<String> {
    let mut docs: Vec<String> = std::fs::read_dir(repository().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    docs.sort();
    std::iter::once("README.md".to_string()).chain(docs).collect()
}

fn examples() -> Vec<Example> {
    let mut examples = Vec::new();
    let mut block = 0;
    for page in pages() {
        let text = std::fs::read_to_string(repository().join(&page)).unwrap();
        page_examples(&page, &text, &mut block, &mut examples);
    }
    examples
}

/// Appends the examples of `page` (its text) to `examples`, numbering its
/// code blocks on from `block`.
fn page_examples(page: &str, text: &str, block: &mut usize, examples: &mut Vec<Example>) {
    let lines: Vec<&str> = text.lines().collect();
    let (mut in_shell_block, mut index) = (false, 0);
    // Output lines belong to the example above them in the same block.
    let mut block_start = examples.len();
    while index < lines.len() {
        let line = lines[index];
        index += 1;
        if let Some(fence) = line.strip_prefix("```") {
            in_shell_block = !in_shell_block && matches!(fence, "sh" | "console");
            block_start = examples.len();
            *block += 1;
            continue;
        }
        if !in_shell_block {
            continue;
        }
        if let Some(first) = line.strip_prefix("$ ") {
            let number = index;
            let mut command = first.to_string();
            while command.ends_with('\\') && index < lines.len() {
                command.pop();
                command += lines[index].trim_start();
                index += 1;
            }
            let command = command.split(" #").next().unwrap().trim_end().to_string();
            examples.push(Example { page: page.to_string(), line: number, block: *block, command, shown: Vec::new() });
        } else if examples.len() > block_start {
            examples.last_mut().unwrap().shown.push(line.to_string());
        }
    }
}

/// `command` made short for a test run; `None` to leave it out.
fn shortened(command: &str) -> Option<String> {
    // `tests/reproduce.rs` runs `reproduce all --quick` (and checks it).
    if command.contains("--exhaustive") || command.starts_with("fibkit reproduce") {
        return None;
    }
    // Only `bench` and `verify` run shorter (`follow --seconds` is how
    // long it follows, already short).
    if !command.starts_with("fibkit bench") && !command.starts_with("fibkit verify") {
        return Some(command.to_string());
    }
    let words: Vec<&str> = command.split(' ').collect();
    let mut kept = Vec::new();
    let mut index = 0;
    while index < words.len() {
        if matches!(words[index], "--seconds" | "--runs" | "--random") {
            index += 2;
            continue;
        }
        kept.push(words[index]);
        index += 1;
    }
    let mut command = kept.join(" ");
    if command.starts_with("fibkit bench") {
        command += " --seconds 0.01 --runs 1";
    } else if command.starts_with("fibkit verify") {
        command += " --random 100000";
    }
    Some(command)
}

/// Whether a page's line `shown` shows `printed`: equal, but for a time
/// (which differs run to run: only its label must match) and for what
/// `...` leaves out.
fn shows(shown: &str, printed: &str) -> bool {
    if shown.to_lowercase().contains("time:") {
        return shown.split(':').next() == printed.split(':').next();
    }
    let mut rest = printed;
    for (index, piece) in shown.split("...").enumerate() {
        match rest.find(piece) {
            Some(at) if index > 0 || at == 0 => rest = &rest[at + piece.len()..],
            _ => return false,
        }
    }
    shown.ends_with("...") || rest.is_empty()
}

/// Whether the shell finds `program` (a plain name: anything else, an
/// assignment or a path, counts as found).
fn installed(program: &str) -> bool {
    if !program.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return true;
    }
    Command::new("sh").args(["-c", "command -v \"$0\" >/dev/null", program]).status().is_ok_and(|s| s.success())
}

/// Runs every example (each through `adapt`) in one scratch folder;
/// returns the failures.
fn run_examples(adapt: impl Fn(&str) -> Option<String>) -> Vec<String> {
    let scratch = tempfile::tempdir().unwrap();
    let work = scratch.path().join("work");
    std::fs::create_dir(&work).unwrap();
    for shipped in ["data", "docs"] {
        std::os::unix::fs::symlink(repository().join(shipped).canonicalize().unwrap(), work.join(shipped)).unwrap();
    }
    // `../shared/data` of the examples, seen from `work`: the data folder.
    let data = common::data_dir();
    if data.is_dir() {
        std::fs::create_dir(scratch.path().join("shared")).unwrap();
        std::os::unix::fs::symlink(data.canonicalize().unwrap(), scratch.path().join("shared/data")).unwrap();
    }
    let bin = Path::new(env!("CARGO_BIN_EXE_fibkit")).parent().unwrap().to_path_buf();
    let path =
        std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())))
            .unwrap();
    let mut failures = Vec::new();
    // The block a command was skipped from: the commands after it there
    // may need what it would have written.
    let mut cut_block = None;
    for example in examples() {
        if cut_block == Some(example.block) {
            eprintln!("skipped (after one skipped): {} line {}: {}", example.page, example.line, example.command);
            continue;
        }
        let words = example.command.split(|c: char| c.is_whitespace() || c == '"' || c == '\'');
        let mut named =
            words.filter_map(|word| word.strip_prefix("../shared/data")).map(|rest| rest.trim_start_matches('/'));
        if let Some(name) = named.find(|name| !data.join(name).exists()) {
            eprintln!(
                "skipped (no {name:?} in the data folder): {} line {}: {}",
                example.page, example.line, example.command
            );
            cut_block = Some(example.block);
            continue;
        }
        let program = example.command.split_whitespace().next().unwrap_or_default();
        if program != "fibkit" && !installed(program) {
            eprintln!(
                "skipped ({program} is not installed): {} line {}: {}",
                example.page, example.line, example.command
            );
            cut_block = Some(example.block);
            continue;
        }
        let Some(command) = adapt(&example.command) else {
            eprintln!("left out here: {} line {}: {}", example.page, example.line, example.command);
            continue;
        };
        let output = Command::new("sh").arg("-c").arg(&command).current_dir(&work).env("PATH", &path).output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() {
            failures.push(format!("{} line {}: `{command}` failed:\n{stdout}{stderr}", example.page, example.line));
            continue;
        }
        // What a terminal shows: standard output, then (warnings, and
        // summaries kept off a piped output) standard error.
        let printed: Vec<&str> = stdout.lines().chain(stderr.lines()).collect();
        for (offset, shown) in example.shown.iter().enumerate() {
            if !printed.get(offset).is_some_and(|&printed| shows(shown, printed)) {
                failures.push(format!(
                    "{} line {}: `{command}` printed {:?} where the page shows {shown:?}",
                    example.page,
                    example.line + 1 + offset,
                    printed.get(offset)
                ));
            }
        }
    }
    failures
}

#[test]
fn readme_examples_run() {
    let examples = examples();
    assert!(examples.iter().any(|example| example.command.starts_with("fibkit stat")), "{examples:?}");
    // The README's own examples run on the tables that ship in `data/`, and
    // every page of `docs/` with shell examples is read.
    assert!(
        examples.iter().any(|example| example.page == "README.md" && example.command.contains(" data/")),
        "{examples:?}"
    );
    for page in ["docs/cli.md", "docs/formats.md"] {
        assert!(examples.iter().any(|example| example.page == page), "no examples read from {page}");
    }
    // Blocks are told apart: the convert block's `head` follows its convert.
    let head = examples.iter().find(|example| example.command.starts_with("head -3")).unwrap();
    let convert = examples.iter().find(|example| example.command.ends_with(" l3.txt")).unwrap();
    assert_eq!(head.block, convert.block);
    let failures = run_examples(shortened);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
#[ignore = "every README and docs/ example verbatim, exhaustive sweep and full benchmarks included: run with `make test-exhaustive`"]
fn readme_examples_run_exactly_as_written() {
    let failures = run_examples(|command| Some(command.to_string()));
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_docs_page_runs_its_rust_examples_as_doc_tests() {
    // `fibkit`'s lib.rs includes each page of `docs/` in a doc-test-only
    // module, so that a Rust example added to any page is compiled and run;
    // a page whose examples use `fibkit-sources` is included by that
    // crate's lib.rs instead.
    let libs = ["crates/fibkit/src/lib.rs", "crates/fibkit-sources/src/lib.rs"]
        .map(|lib| std::fs::read_to_string(repository().join(lib)).unwrap());
    for page in pages() {
        assert!(
            libs.iter().any(|lib| lib.contains(&format!("include_str!(\"../../../{page}\")"))),
            "neither crates/fibkit/src/lib.rs nor crates/fibkit-sources/src/lib.rs includes {page} as doc tests"
        );
    }
}
