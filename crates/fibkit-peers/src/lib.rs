//! # fibkit-peers: other longest-prefix-match crates behind fibkit's engine trait
//!
//! `fibkit bench` measures fibkit's engines against the libraries a user
//! would otherwise pick, in one process, on the same table and the same
//! keys. Each library is wrapped as a [`fibkit::engine::Fib4`] and listed in
//! [`PEERS`]:
//!
//! | name            | crate                                 | structure                     |
//! |-----------------|---------------------------------------|-------------------------------|
//! | `prefix-trie`   | `prefix-trie` (`PrefixMap::get_lpm`)  | multibit prefix trie          |
//! | `treebitmap`    | `ip_network_table-deps-treebitmap`    | Tree Bitmap (Eatherton et al.)|
//! | `poptrie-crate` | `poptrie` (pure Rust, third party)    | Poptrie (Asai, Ohara)         |
//!
//! The RIB's own trie, the radix-tree baseline, is fibkit's `radix` engine.
//! Each peer is built by inserting every prefix of the RIB; lookups map the
//! crate's "no match" to [`fibkit::NO_ROUTE`]. Footprints are the figure
//! the crate reports itself where it has one; `poptrie` has none, so its
//! footprint is the heap it holds after the build, measured by
//! [`heap::CountingAllocator`] when the program installs it (the `fibkit`
//! tool does), else 0 with the stats saying it is unknown.
//!
//! Every peer is checked against the RIB on the real 2014 table in this
//! crate's tests; [`KNOWN_WRONG`] lists peers known to answer wrongly, with
//! the reason (none today).

#![deny(missing_docs)]

use fibkit::engine::{self, BuildError, BuildOptions, EngineSpec, Fib4, Stats};
use fibkit::rib::Rib4;

pub mod heap;
mod poptrie_crate;
mod prefix_map;
mod tree_bitmap;

/// The third-party engines, in the order reports list them.
pub const PEERS: &[EngineSpec] = &[
    EngineSpec {
        name: "prefix-trie",
        summary: "prefix-trie crate 0.10: PrefixMap longest-prefix match",
        build: prefix_map::build_boxed,
    },
    EngineSpec {
        name: "treebitmap",
        summary: "ip_network_table-deps-treebitmap crate 0.5: Tree Bitmap",
        build: tree_bitmap::build_boxed,
    },
    EngineSpec {
        name: "poptrie-crate",
        summary: "poptrie crate 0.2: a third-party pure-Rust Poptrie",
        build: poptrie_crate::build_boxed,
    },
];

/// Peers known to disagree with the RIB, each with the reason. The
/// differential tests accept a mismatch only from a peer listed here.
pub const KNOWN_WRONG: &[(&str, &str)] = &[];

/// Every engine: fibkit's own ([`engine::ENGINES`]) followed by [`PEERS`].
pub fn all_engines() -> impl Iterator<Item = &'static EngineSpec> {
    engine::ENGINES.iter().chain(PEERS)
}

/// The engine (fibkit's own or a peer) called `name`.
pub fn find(name: &str) -> Option<&'static EngineSpec> {
    all_engines().find(|spec| spec.name == name)
}

/// Names of every engine, own and peers, comma-separated (for messages).
pub fn engine_names() -> String {
    all_engines().map(|spec| spec.name).collect::<Vec<_>>().join(", ")
}

/// Builds the engine (fibkit's own or a peer) called `name` from `rib`.
pub fn build4(name: &str, rib: &Rib4, options: &BuildOptions) -> Result<Box<dyn Fib4>, BuildError> {
    let spec = find(name).ok_or_else(|| BuildError {
        engine: name.to_string(),
        message: format!("unknown engine (known: {})", engine_names()),
    })?;
    (spec.build)(rib, options)
}

/// Size figures of a peer: what the crate says and what the heap says.
#[derive(Clone, Copy, Debug)]
struct Footprint {
    /// The crate's own report of its size, if it has one.
    reported: Option<usize>,
    /// Heap bytes held after the build, if the counting allocator is on.
    heap: Option<usize>,
}

impl Footprint {
    /// The figure `Fib4::footprint` gives: the crate's, else the heap's, else 0.
    fn bytes(&self) -> usize {
        self.reported.or(self.heap).unwrap_or(0)
    }

    /// The statistics every peer reports.
    fn stats(&self, name: &str, summary: &str, prefixes: usize) -> Stats {
        let mut stats = Stats::default();
        stats.text("engine", name).text("library", summary).count("prefixes", prefixes as u64);
        stats.count("bytes_total", self.bytes() as u64);
        if let Some(reported) = self.reported {
            stats.count("bytes_reported_by_crate", reported as u64);
        }
        match self.heap {
            Some(heap) => stats.count("heap_bytes", heap as u64),
            None => stats.text("heap_bytes", "unknown (counting allocator not installed)"),
        };
        let size = match (self.reported, self.heap) {
            (Some(reported), Some(heap)) => format!("{reported} bytes by its own count, {heap} heap bytes"),
            (Some(reported), None) => format!("{reported} bytes by its own count"),
            (None, Some(heap)) => format!("{heap} heap bytes"),
            (None, None) => "size unknown".to_string(),
        };
        stats.report = format!("{name}: {summary}; {prefixes} prefixes, {size}");
        stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fibkit::addr::Prefix4;
    use fibkit::NO_ROUTE;

    fn nested_rib() -> Rib4 {
        let mut rib = Rib4::new();
        for (prefix, hop) in [
            ("0.0.0.0/0", 9),
            ("10.0.0.0/8", 1),
            ("10.1.0.0/16", 2),
            ("10.1.2.0/24", 3),
            ("10.1.2.128/25", 4),
            ("10.1.2.3/32", 5),
            ("192.168.0.0/16", 6),
            ("255.255.255.255/32", 7),
        ] {
            rib.insert(prefix.parse::<Prefix4>().unwrap(), hop);
        }
        rib
    }

    #[test]
    fn every_peer_matches_the_rib_on_nested_prefixes() {
        let rib = nested_rib();
        let probes = [
            0x0000_0000, 0x0a00_0000, 0x0a01_0000, 0x0a01_0203, 0x0a01_0204, 0x0a01_0280, 0x0a01_02ff,
            0x0a02_0000, 0xc0a8_ffff, 0xc0a9_0000, 0xffff_fffe, 0xffff_ffff,
        ];
        for spec in PEERS {
            let fib = (spec.build)(&rib, &BuildOptions { max_next_hop: 9 }).unwrap();
            assert_eq!(fib.name(), spec.name);
            for addr in probes {
                assert_eq!(fib.lookup(addr), rib.lookup(addr), "{} at {addr:#010x}", spec.name);
            }
        }
    }

    #[test]
    fn no_route_where_nothing_covers() {
        let mut rib = Rib4::new();
        rib.insert("10.0.0.0/8".parse::<Prefix4>().unwrap(), 1);
        for spec in PEERS {
            let fib = (spec.build)(&rib, &BuildOptions::default()).unwrap();
            assert_eq!(fib.lookup(0x0b00_0000), NO_ROUTE, "{}", spec.name);
            assert_eq!(fib.lookup(0x0a00_0001), 1, "{}", spec.name);
            let empty = (spec.build)(&Rib4::new(), &BuildOptions::default()).unwrap();
            assert_eq!(empty.lookup(0x0a00_0001), NO_ROUTE, "{} (empty table)", spec.name);
        }
    }

    #[test]
    fn registry_finds_own_engines_and_peers() {
        assert_eq!(find("radix").unwrap().name, "radix");
        assert_eq!(find("treebitmap").unwrap().name, "treebitmap");
        assert!(find("nonesuch").is_none());
        let names = engine_names();
        assert!(names.contains("d16r") && names.contains("poptrie-crate"), "{names}");
        let error = build4("nonesuch", &Rib4::new(), &BuildOptions::default()).err().unwrap();
        assert!(error.to_string().contains("unknown engine"), "{error}");
        for (name, _) in KNOWN_WRONG {
            assert!(PEERS.iter().any(|spec| spec.name == *name), "{name} is not a peer");
        }
    }

    #[test]
    fn stats_name_the_size_source() {
        let rib = nested_rib();
        for spec in PEERS {
            let fib = (spec.build)(&rib, &BuildOptions::default()).unwrap();
            let stats = fib.stats();
            assert_eq!(stats.get("prefixes"), Some(&fibkit::engine::Figure::Count(8)), "{}", spec.name);
            assert!(stats.report.starts_with(spec.name), "{}", stats.report);
            assert_eq!(
                stats.get("bytes_total"),
                Some(&fibkit::engine::Figure::Count(fib.footprint() as u64)),
                "{}",
                spec.name
            );
        }
    }
}
