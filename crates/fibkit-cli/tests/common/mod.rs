//! Helpers shared by the tests that run the built `fibkit` binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `fibkit ARGS...` and waits for it.
pub fn fibkit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fibkit")).args(args).output().expect("running fibkit")
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

/// `../shared/data/NAME` beside the repository, if present; otherwise says
/// so on stderr, so a skipped test is visible.
pub fn shared_data(name: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data").join(name);
    if path.exists() {
        Some(path)
    } else {
        eprintln!("skipped: ../shared/data/{name} not found");
        None
    }
}
