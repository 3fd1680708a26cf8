//! # fibkit-peers: other longest-prefix-match crates behind fibkit's engine trait
//!
//! `fibkit bench` measures fibkit's engines against the libraries a user
//! would otherwise pick, in one process, on the same table and the same
//! keys. Each library is wrapped as a [`fibkit::Fib`]`<u32>` and listed in
//! [`PEERS`], which [`register`] adds to fibkit's registry:
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

use fibkit::fib::{BuildOptions, Fib, Stats};
use fibkit::registry::{self, AlreadyRegistered, Engine};
use fibkit::rib::Rib4;
use fibkit::{BuildError, NextHop};

use poptrie_crate::PoptrieCrate;
use prefix_map::PrefixTrie;
use tree_bitmap::TreeBitmap;

pub mod heap;
mod poptrie_crate;
mod prefix_map;
mod tree_bitmap;

/// The third-party engines, in the order reports list them; [`register`]
/// adds them to fibkit's registry.
pub static PEERS: &[Engine] = &[
    Engine::new("prefix-trie", "prefix-trie crate 0.10: PrefixMap longest-prefix match")
        .peer_of("fibkit-peers")
        .ipv4(build::<PrefixTrie>, None),
    Engine::new("treebitmap", "ip_network_table-deps-treebitmap crate 0.5: Tree Bitmap")
        .peer_of("fibkit-peers")
        .ipv4(build::<TreeBitmap>, None),
    Engine::new("poptrie-crate", "poptrie crate 0.2: a third-party pure-Rust Poptrie")
        .peer_of("fibkit-peers")
        .ipv4(build::<PoptrieCrate>, None),
];

/// Peers known to disagree with the RIB, each with the reason. The
/// differential tests accept a mismatch only from a peer listed here.
pub const KNOWN_WRONG: &[(&str, &str)] = &[];

/// Adds [`PEERS`] to fibkit's registry ([`fibkit::registry::register`]),
/// so that every name resolves there; calling it again does nothing.
///
/// # Errors
/// [`AlreadyRegistered`] if another crate registered one of their names.
pub fn register() -> Result<(), AlreadyRegistered> {
    registry::register(PEERS)
}

/// What a peer needs of a third-party library: its names, how to insert
/// a RIB, its longest-prefix match, and its own size report if it has one.
trait Library: Send + Sync + 'static {
    /// The peer's registry name.
    const NAME: &'static str;
    /// The crate, version and call a lookup makes.
    const SUMMARY: &'static str;

    /// The library's structure with every route of `rib` inserted.
    fn insert_all(rib: &Rib4) -> Self;

    /// The next hop of the longest prefix covering `addr`, or
    /// [`fibkit::NO_ROUTE`].
    fn longest_match(&self, addr: u32) -> NextHop;

    /// Routes the structure holds.
    fn routes(&self) -> usize;

    /// The size the library reports of itself, if it does.
    fn reported_bytes(&self) -> Option<usize>;
}

/// A third-party library behind fibkit's engine trait.
struct Peer<L> {
    library: L,
    footprint: Footprint,
}

/// Registry builder of the peer around library `L`: every route of `rib`
/// inserted, the heap it took measured.
fn build<L: Library>(rib: &Rib4, _options: &BuildOptions) -> Result<Box<dyn Fib<u32>>, BuildError> {
    let (library, heap_bytes) = heap::measure(|| L::insert_all(rib));
    let footprint = Footprint { reported: library.reported_bytes(), heap: heap_bytes };
    Ok(Box::new(Peer { library, footprint }))
}

impl<L: Library> Fib<u32> for Peer<L> {
    fn name(&self) -> &str {
        L::NAME
    }

    #[inline]
    fn lookup(&self, addr: u32) -> NextHop {
        self.library.longest_match(addr)
    }

    fn footprint(&self) -> usize {
        self.footprint.bytes()
    }

    fn stats(&self) -> Stats {
        self.footprint.stats(L::NAME, L::SUMMARY, self.library.routes())
    }
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
    /// The figure `Fib::footprint` gives: the crate's, else the heap's, else 0.
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
            0x0000_0000,
            0x0a00_0000,
            0x0a01_0000,
            0x0a01_0203,
            0x0a01_0204,
            0x0a01_0280,
            0x0a01_02ff,
            0x0a02_0000,
            0xc0a8_ffff,
            0xc0a9_0000,
            0xffff_fffe,
            0xffff_ffff,
        ];
        for spec in PEERS {
            let fib = spec.build::<u32>(&rib, &BuildOptions::new(9)).unwrap();
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
            let fib = spec.build::<u32>(&rib, &BuildOptions::default()).unwrap();
            assert_eq!(fib.lookup(0x0b00_0000), NO_ROUTE, "{}", spec.name);
            assert_eq!(fib.lookup(0x0a00_0001), 1, "{}", spec.name);
            let empty = spec.build::<u32>(&Rib4::new(), &BuildOptions::default()).unwrap();
            assert_eq!(empty.lookup(0x0a00_0001), NO_ROUTE, "{} (empty table)", spec.name);
        }
    }

    #[test]
    fn registry_finds_own_engines_and_peers() {
        register().unwrap();
        assert_eq!(registry::find("radix").unwrap().name, "radix");
        assert_eq!(registry::find("treebitmap").unwrap().name, "treebitmap");
        assert!(registry::find("nonesuch").is_none());
        let names = registry::engines().iter().map(|engine| engine.name).collect::<Vec<_>>().join(", ");
        assert!(names.contains("d16r") && names.contains("poptrie-crate"), "{names}");
        let error = registry::build::<u32>("nonesuch", &Rib4::new(), &BuildOptions::default()).err().unwrap();
        assert!(error.to_string().contains("unknown engine"), "{error}");
        for (name, _) in KNOWN_WRONG {
            assert!(PEERS.iter().any(|spec| spec.name == *name), "{name} is not a peer");
        }
    }

    #[test]
    fn stats_name_the_size_source() {
        let rib = nested_rib();
        for spec in PEERS {
            let fib = spec.build::<u32>(&rib, &BuildOptions::default()).unwrap();
            let stats = fib.stats();
            assert_eq!(stats.get("prefixes"), Some(&fibkit::fib::Figure::Count(8)), "{}", spec.name);
            assert!(stats.report.starts_with(spec.name), "{}", stats.report);
            assert_eq!(
                stats.get("bytes_total"),
                Some(&fibkit::fib::Figure::Count(fib.footprint() as u64)),
                "{}",
                spec.name
            );
        }
    }
}
