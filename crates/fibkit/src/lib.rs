//! # fibkit: IP routing lookups compiled into cache-sized forwarding structures
//!
//! A routing table (the RIB, [`Rib`]) maps prefixes to next hops; a lookup
//! finds the longest prefix covering an address. fibkit compiles the RIB
//! into compact forwarding structures (FIBs) that live in CPU caches, for
//! IPv4 (`u32` addresses) and IPv6 (`u128`), behind one trait, [`Fib`].
//!
//! ## The map
//!
//! ```text
//!  base/      addr (Address, Prefix, Family)  address_text  rib (the reference trie)  nexthop
//!             random  workload (the benchmark key streams)  mem (huge-page arrays)  simd
//!  error.rs   typed BuildError, UnknownEngine
//!  file/      the compiled FIB file format: header, sections, Problem
//!  fib.rs     trait Fib<A>: lookup, lookup_batch, stats, save, run_workload
//!  live/      trait Updater<A>, Limbo (reclamation), FreeSpace, FullRebuild
//!  engines/   dxr dxr6 poptrie lulea dir24 lctrie sail sail_runs treebitmap radix
//!  registry/catalogue.rs  Engine: name, summary, families, builders, updater; the list
//!  auto       the `auto` engine: the fastest candidate of the catalogue, measured
//!  registry/  names to engines (`auto` among them): resolve, build, updater
//!  router     Router<A> / Reader<A>: one writer, lock-free readers
//!  load/      text, range CSV, MRT, update streams, key files, the synthetic table
//!  compiled/  a loaded table compiled into FIBs, saved to and opened from files
//!  measure/   verify (sweeps against the RIB), cycles, ceiling
//! ```
//!
//! The layers, lowest first: each module imports only from its own layer
//! and the layers before it, never from a later one (the test
//! `tests/layering.rs` checks every path into the crate):
//!
//! base < error < file < fib < live < engines < registry's catalogue <
//! auto < registry < router < load < compiled < measure
//!
//! So `base/` and `fib.rs` import nothing above them; an engine imports
//! only base types, the trait, errors, `live/` and the file format; the
//! registry's catalogue is the only file naming engines, and `auto` chooses
//! among them below the registry's name lookup, which resolves `auto` too.
//! Loaders and compiled tables sit on top of the router; the CLI, the C
//! library and the Python package on top of all.
//!
//! The path of a lookup: [`registry::build`] finds the engine by name and
//! runs its builder over the RIB (e.g. [`engines::dxr`]: the direct table
//! on the top K bits and the range tables); the caller holds a `Box<dyn
//! Fib<A>>` and calls [`Fib::lookup`] (one address) or [`Fib::lookup_batch`]
//! (many, software-pipelined with the [`simd`] kernels). A live FIB is a
//! [`router::Router`]: its [`router::Reader`]s look up in the published
//! version while the writer applies updates through the engine's
//! [`live::Updater`].
//!
//! The engines:
//! - [`engines::dxr`]: DXR (Zec, Rizzo, Mikuc), D16R..D22R: a direct table
//!   on the top K bits and binary search over sorted ranges;
//! - [`engines::dxr6`]: DXR for IPv6 as the Poptrie paper built it for its
//!   comparison, D16R6 and D18R6 (long range entries of 128 bits);
//! - [`engines::poptrie`]: Poptrie (Asai, Ohara), a 64-ary trie indexed by
//!   population count, with direct pointing on the top s bits, for IPv4
//!   and IPv6;
//! - [`engines::lulea`]: Luleå (Degermark, Brodnik, Carlsson, Pink): a
//!   three-level cut of the complete prefix tree in code words, base
//!   indices and chunks;
//! - [`engines::dir24`]: DIR-24-8-BASIC as DPDK's `rte_lpm`, the
//!   DRAM-bound baseline;
//! - [`engines::lctrie`]: the level- and path-compressed trie of Linux's
//!   `fib_trie`;
//! - [`engines::sail`]: SAIL_L (Yang et al.), three levels at /16, /24
//!   and /32, at most three loads and no search;
//! - [`engines::treebitmap`]: Tree BitMap (Eatherton, Varghese, Dittia),
//!   16-ary and 64-ary nodes of internal and external bitmaps, for IPv4 and
//!   IPv6;
//! - [`engines::radix`]: the RIB's own path-compressed trie, the reference.
//!
//! ```
//! use fibkit::{registry, Prefix4, Rib4};
//!
//! let mut rib = Rib4::new();
//! rib.insert("10.0.0.0/8".parse::<Prefix4>().unwrap(), 1);
//! rib.insert("10.1.0.0/16".parse::<Prefix4>().unwrap(), 2);
//! let fib = registry::build("d16r", &rib, &Default::default()).unwrap();
//! assert_eq!(fib.lookup(0x0a01_0203), 2);
//! assert_eq!(fib.lookup(0x0a02_0000), 1);
//! assert_eq!(fib.lookup(0x0b00_0000), fibkit::NO_ROUTE);
//! ```

#![deny(missing_docs)]

pub mod auto;
mod base;
pub mod compiled;
pub mod engines;
pub mod error;
pub mod fib;
pub mod file;
pub mod live;
pub mod load;
pub mod measure;
pub mod records;
pub mod registry;
pub mod router;

pub use base::{addr, address_text, mem, nexthop, random, rib, simd, update, workload};

pub use addr::{Address, Family, Prefix, Prefix4, Prefix6};
pub use error::BuildError;
pub use fib::{BuildOptions, Fib, Stats};
pub use nexthop::{NextHop, NO_ROUTE};
pub use rib::{Rib, Rib4, Rib6};
pub use router::Router;

/// The README's Rust examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExamples;

/// The Rust examples of the pages in `docs/` (any there are), compiled and
/// run as doc tests like the README's.
#[cfg(doctest)]
mod docs_examples {
    #[doc = include_str!("../../../docs/c.md")]
    struct C;
    #[doc = include_str!("../../../docs/cli.md")]
    struct Cli;
    #[doc = include_str!("../../../docs/data.md")]
    struct Data;
    #[doc = include_str!("../../../docs/decisions.md")]
    struct Decisions;
    #[doc = include_str!("../../../docs/engines.md")]
    struct Engines;
    #[doc = include_str!("../../../docs/formats.md")]
    struct Formats;
    #[doc = include_str!("../../../docs/hardening.md")]
    struct Hardening;
    #[doc = include_str!("../../../docs/layout.md")]
    struct Layout;
    #[doc = include_str!("../../../docs/measurements.md")]
    struct Measurements;
    #[doc = include_str!("../../../docs/python.md")]
    struct Python;
    #[doc = include_str!("../../../docs/records.md")]
    struct Records;
    #[doc = include_str!("../../../docs/serve.md")]
    struct Serve;
}
