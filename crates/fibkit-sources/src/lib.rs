//! Live route sources for fibkit: where routes really live, fed into a
//! live [`fibkit::Router`] through the engines' in-place updaters.
//!
//! - [`bgp`]: a receive-only BGP-4 speaker peering with configured
//!   neighbours.
//!
//! This crate sits above the core: `fibkit` itself holds no networking.

pub mod bgp;
