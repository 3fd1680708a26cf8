//! Reading the real tables of `../shared/data/` for the tests and the
//! `poptrie_rate` example (until the library's loaders take over).

use std::io::{BufRead, BufReader};
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use fibkit::addr::{Prefix4, Prefix6};
use fibkit::nexthop::{Label, Mapping, NextHopTable};
use fibkit::rib::{Rib4, Rib6};

/// `../shared/data/NAME` relative to the repository root, or a visible skip.
pub fn data_file(name: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data").join(name);
    if path.exists() {
        Some(path)
    } else {
        eprintln!("skipped: ../shared/data/{name} not found");
        None
    }
}

/// The lines of a gzip text file, numbered from 1.
pub fn gz_lines(path: &Path) -> impl Iterator<Item = (usize, String)> {
    let file = std::fs::File::open(path).expect("open table");
    BufReader::new(flate2::read::GzDecoder::new(file))
        .lines()
        .map(|line| line.expect("read table"))
        .enumerate()
        .map(|(index, line)| (index + 1, line))
}

/// An `.ipasn` table (`PREFIX<TAB>ASN`, `;` comments), values mapped with
/// `mapping`.
pub fn load_ipasn(path: &Path, mapping: Mapping) -> (Rib4, NextHopTable) {
    let mut rib = Rib4::new();
    let mut next_hops = NextHopTable::new(mapping);
    for (line_number, line) in gz_lines(path) {
        let line = line.trim();
        if line.is_empty() || line.starts_with(';') {
            continue;
        }
        let (prefix, asn) = line.split_once('\t').unwrap_or_else(|| panic!("line {line_number}: {line:?}"));
        let prefix: Prefix4 = prefix.parse().unwrap_or_else(|error| panic!("line {line_number}: {error}"));
        let asn: u64 = asn.trim().parse().unwrap_or_else(|error| panic!("line {line_number}: {error}"));
        rib.insert(prefix, next_hops.intern(Label::Number(asn)));
    }
    (rib, next_hops)
}

/// A `PREFIX NEXTHOP` IPv6 table, each next-hop address its own index.
pub fn load_rib6(path: &Path) -> (Rib6, NextHopTable) {
    let mut rib = Rib6::new();
    let mut next_hops = NextHopTable::new(Mapping::Distinct);
    for (line_number, line) in gz_lines(path) {
        let mut fields = line.split_whitespace();
        let (Some(prefix), Some(next_hop)) = (fields.next(), fields.next()) else { continue };
        let prefix: Prefix6 = prefix.parse().unwrap_or_else(|error| panic!("line {line_number}: {error}"));
        let next_hop: IpAddr = next_hop.parse().unwrap_or_else(|error| panic!("line {line_number}: {error}"));
        rib.insert(prefix, next_hops.intern(Label::Addr(next_hop)));
    }
    (rib, next_hops)
}
