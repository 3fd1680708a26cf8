//! Helpers shared by the tests that run the built `fibkit` binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

#[path = "../../../fibkit/tests/common/data.rs"]
mod data;

// Not every test binary uses both.
#[allow(unused_imports)]
pub use data::{data_dir, shared_data};
use std::process::{Command, Output, Stdio};

/// Runs `fibkit ARGS...` and waits for it.
pub fn fibkit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fibkit")).args(args).output().expect("running fibkit")
}

/// Runs `fibkit ARGS...` in directory `dir` with `input` on standard
/// input (fed from a thread, so that any size of input and output goes).
pub fn fibkit_with_input(dir: &Path, args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fibkit"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running fibkit");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // A command that stops reading early (an error) closes the pipe: no failure here.
    let feeder = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &input));
    let output = child.wait_with_output().expect("waiting for fibkit");
    let _ = feeder.join();
    output
}

/// Its stdout and stderr as text.
pub fn text(output: &Output) -> (String, String) {
    (String::from_utf8_lossy(&output.stdout).into_owned(), String::from_utf8_lossy(&output.stderr).into_owned())
}

/// Writes `text` to `dir/name`.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}
pub mod server;
