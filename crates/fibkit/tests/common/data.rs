//! Where the shared data is: the folder `FIBKIT_DATA` names (a relative
//! path is taken from the repository root), else `../shared/data` beside
//! the repository root. Every test, example and benchmark of this crate
//! that reads the data finds it here, so that `FIBKIT_DATA=/an/empty/dir`
//! runs them all without it. Examples include this file alone, and so do
//! the other crates' tests (`#[path]`): one finder for every crate.

use std::path::{Path, PathBuf};

/// The data folder (it may not exist).
pub fn data_dir() -> PathBuf {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    match std::env::var_os("FIBKIT_DATA") {
        Some(dir) if !dir.is_empty() => repository.join(dir),
        _ => repository.join("../shared/data"),
    }
}

/// `NAME` in the data folder, if present; otherwise says so on stderr, so
/// a skipped test is visible.
pub fn shared_data(name: &str) -> Option<PathBuf> {
    let path = data_dir().join(name);
    if path.exists() {
        Some(path)
    } else {
        eprintln!("skipped: {name} not found in the data folder {} (FIBKIT_DATA)", data_dir().display());
        None
    }
}
