//! Where the shared data is: the folder `FIBKIT_DATA` names (a relative
//! path is taken from the repository root), else `../shared/data` beside
//! the repository root. Every test and benchmark of this crate that reads
//! the data finds it here, so that `FIBKIT_DATA=/an/empty/dir` runs them
//! all without it.
#![allow(dead_code)]

#[path = "../../../fibkit/tests/common/data.rs"]
mod data;

// Not every test binary uses both.
#[allow(unused_imports)]
pub use data::{data_dir, shared_data};
