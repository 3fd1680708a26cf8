//! # fibkit: IP routing lookups compiled into cache-sized forwarding structures
//!
//! A routing table (the RIB, [`rib::Rib`]) maps prefixes to next hops; a
//! lookup finds the longest prefix covering an address. fibkit compiles the
//! RIB into compact forwarding structures (FIBs) that live in CPU caches:
//!
//! - [`dxr`]: DXR (Zec, Rizzo, Mikuc), D16R..D22R: a direct table on the top
//!   K bits and binary search over sorted ranges;
//! - [`dxr6`]: DXR for IPv6 as the Poptrie paper built it for its
//!   comparison, D16R6 and D18R6 (long range entries of 128 bits);
//! - [`poptrie`]: Poptrie (Asai, Ohara), a 64-ary trie indexed by population
//!   count, with direct pointing on the top s bits, for IPv4 and IPv6;
//! - [`lulea`]: Luleå (Degermark, Brodnik, Carlsson, Pink): a three-level
//!   cut of the complete prefix tree in code words, base indices and chunks;
//! - [`dir24`]: DIR-24-8-BASIC as DPDK's `rte_lpm`, the DRAM-bound baseline;
//! - [`lctrie`]: the level- and path-compressed trie of Linux's `fib_trie`;
//! - [`radix`]: the RIB's own path-compressed trie, the reference.
//!
//! Every engine implements [`engine::Fib4`] and is listed in
//! [`engine::ENGINES`], so the `fibkit` tool, the benchmarks and the tests
//! treat them alike.
//!
//! ```
//! use fibkit::{engine, rib::Rib4, addr::Prefix4};
//!
//! let mut rib = Rib4::new();
//! rib.insert("10.0.0.0/8".parse::<Prefix4>().unwrap(), 1);
//! rib.insert("10.1.0.0/16".parse::<Prefix4>().unwrap(), 2);
//! let fib = engine::build4("d16r", &rib, &Default::default()).unwrap();
//! assert_eq!(fib.lookup(0x0a01_0203), 2);
//! assert_eq!(fib.lookup(0x0a02_0000), 1);
//! assert_eq!(fib.lookup(0x0b00_0000), fibkit::NO_ROUTE);
//! ```

#![deny(missing_docs)]

pub mod addr;
pub mod dir24;
pub mod dxr;
pub mod dxr6;
pub mod engine;
pub mod lctrie;
pub mod load;
pub mod lulea;
pub mod mem;
pub mod nexthop;
pub mod poptrie;
pub mod radix;
pub mod rib;
pub mod router;
pub mod simd;
pub mod verify;
pub mod workload;

/// A next-hop index as engines store it; [`NO_ROUTE`] (0) means no route.
/// [`nexthop::NextHopTable`] maps indexes back to the input's values.
pub type NextHop = u32;

/// The next hop of an address no prefix covers.
pub const NO_ROUTE: NextHop = 0;
