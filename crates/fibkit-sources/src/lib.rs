//! Live route sources for fibkit: where routes really live, fed into a
//! live [`fibkit::Router`] through the engines' in-place updaters.
//!
//! - [`bgp`]: a receive-only BGP-4 speaker peering with configured
//!   neighbours.
//! - [`netlink`] (Linux): a mirror of a kernel routing table, followed
//!   over rtnetlink.
//!
//! This crate sits above the core: `fibkit` itself holds no networking.
//! The guide is `docs/sources.md`.

pub mod bgp;
#[cfg(target_os = "linux")]
pub mod netlink;
mod published;

pub use published::Changes;

/// The Rust examples of `docs/sources.md`, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/sources.md")]
struct SourcesExamples;
