//! The table a command works on: the arguments every table command takes
//! (`TABLE`, `--nexthops`, `--strict`, and for MRT files `--peer`,
//! `--value` and `--peers`), and its loading, warnings reported.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use fibkit::load::{self, LoadOptions, PeerSelector, RouteTable, ValueChoice};
use fibkit::nexthop::Mapping;
use fibkit::records::FieldSpec;

use crate::numbers;

/// Which table to load and how to map its values onto next hops.
#[derive(Args, Clone, Debug)]
pub struct TableArgs {
    /// Routing table file (.ipasn, PREFIX NEXTHOP text, range CSV/TSV, MRT
    /// RIB dump or update stream; .gz or .bz2; for `lookup` also a FIB file
    /// of `fibkit compile`). Without it, the embedded synthetic default
    /// table is used.
    pub table: Option<PathBuf>,
    /// Map route values onto N next hops as `value % N + 1`.
    #[arg(long, value_name = "N", value_parser = numbers::nexthops)]
    pub nexthops: Option<u32>,
    /// Turn warnings into errors: the loader's (duplicates, overlaps,
    /// truncation) and lookup's (a line without an address).
    #[arg(long)]
    pub strict: bool,
    /// MRT: the peer whose routes to load, by index, address or ASN (AS3356);
    /// default: the peer with the most routes.
    #[arg(long, value_name = "INDEX|ADDRESS|ASN")]
    pub peer: Option<PeerSelector>,
    /// MRT: a route's value: its next hop, or the origin AS of its path.
    #[arg(long, value_name = "next-hop|origin-as", default_value = "next-hop")]
    pub value: ValueChoice,
    /// MRT: list the file's peers with their route counts, then exit.
    #[arg(long)]
    pub peers: bool,
    /// Route values are records of these fields, `name[:type],...`: a text
    /// table's columns after the addresses (by its header's names, `*` for
    /// all; without a header, in order), a MaxMind DB file's paths
    /// (`country.iso_code`). Types: int, float, bool, text, addr, ints;
    /// inferred when not given. `lookup` on a compiled file: the fields to
    /// write.
    #[arg(long, value_name = "FIELDS", value_parser = parse_fields)]
    pub fields: Option<FieldSpec>,
}

/// Parses `--fields`.
fn parse_fields(list: &str) -> Result<FieldSpec, String> {
    FieldSpec::parse(list).map_err(|error| error.problem)
}

impl TableArgs {
    /// How the loader reads the table.
    pub fn options(&self) -> LoadOptions {
        let mapping = self.nexthops.map_or(Mapping::Distinct, Mapping::Modulo);
        LoadOptions {
            mapping,
            strict: self.strict,
            peer: self.peer.unwrap_or_default(),
            value: self.value,
            fields: self.fields.clone(),
        }
    }

    /// Refuses the loading options a compiled FIB file at `path` has fixed
    /// (`--nexthops`, the MRT options, and `more` given by the command),
    /// naming the first given.
    pub fn refuse_for_compiled(&self, path: &std::path::Path, more: &[(bool, &str)]) -> Result<()> {
        let fixed = [
            (self.nexthops.is_some(), "--nexthops"),
            (self.peer.is_some() || self.value != ValueChoice::NextHop || self.peers, "--peer, --value and --peers"),
        ];
        if let Some((_, option)) = more.iter().chain(&fixed).find(|(given, _)| *given) {
            anyhow::bail!(
                "{}: {option} cannot change a compiled FIB file; give them to fibkit compile",
                path.display()
            );
        }
        Ok(())
    }

    /// Loads the table (or generates the default one). `--peers` is
    /// `main`'s: it lists the peers in place of the command.
    pub fn load(&self) -> Result<RouteTable> {
        let options = self.options();
        let table = match &self.table {
            Some(path) => load::load_path(path, &options)?,
            None => load::synthetic::default_table(options.mapping),
        };
        for warning in table.warnings.iter().take(10) {
            eprintln!("warning: {warning}");
        }
        if table.warnings.len() > 10 {
            eprintln!("warning: ... and {} more", table.warnings.len() - 10);
        }
        Ok(table)
    }
}
