//! `fibkit convert`: a table (MRT or any other input format) written as
//! `PREFIX NEXTHOP` text, as it is or grown into the Poptrie paper's
//! synthetic tables (`--grow`); and the `--peers` listing of MRT files.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use fibkit::load::{self, Growth, LoadOptions, PeerList, RouteTable};
use fibkit::nexthop::{Label, Mapping, NextHopTable};
use fibkit::records::{write_csv_cell, RecordTable};
use fibkit::NextHop;

use crate::table::TableArgs;

/// Arguments of `fibkit convert`.
#[derive(Args, Debug)]
pub struct ConvertArgs {
    #[command(flatten)]
    pub(crate) table: TableArgs,
    /// Grow the IPv4 routes into the Poptrie paper's synthetic table
    /// (section 4.8): `syn1` splits each route shorter than /16 in 4 and
    /// of /16 to /23 in 2; `syn2` those shorter than /16 in 8, /16 to /19
    /// in 4, /20 to /23 in 2. Part i of a route to next hop n gets n + i x
    /// (largest next hop + 1); the values written are then the next-hop
    /// indexes (load the output without `--nexthops`).
    #[arg(long, value_name = "syn1|syn2", value_parser = parse_growth)]
    grow: Option<Growth>,
    /// Write N host routes (/32) instead of a loaded table, packed into
    /// --subnets parts of 10.0.0.0/8 (the Linux route-lookup article's
    /// second scenario: 500000 in 4), to --nexthops next hops in turn
    /// (default 16).
    #[arg(long, value_name = "N", conflicts_with_all = ["table", "grow"])]
    host_routes: Option<usize>,
    /// With --host-routes: how many subnets hold them.
    #[arg(long, value_name = "S", default_value_t = 4, requires = "host_routes")]
    subnets: usize,
    /// Where to write the text (standard output without it, or with `-`).
    #[arg(value_name = "OUT")]
    output: Option<PathBuf>,
}

fn parse_growth(text: &str) -> Result<Growth, String> {
    match text.to_ascii_lowercase().as_str() {
        "syn1" => Ok(Growth::Syn1),
        "syn2" => Ok(Growth::Syn2),
        _ => Err(format!("{text:?} is neither syn1 nor syn2")),
    }
}

/// Grows `table`'s IPv4 routes as `growth` says ([`load::grow`]), renames
/// it, and maps its values onto themselves (the grown next hops are
/// indexes). Returns the stride between a route's parts' next hops.
pub(crate) fn grow_table(table: &mut RouteTable, growth: Growth) -> Result<NextHop> {
    let (grown, stride) = load::grow(&table.v4, growth)?;
    let largest = grown.iter().map(|(_, next_hop)| next_hop).max().unwrap_or_default();
    table.name = format!("{} grown to {}", table.name, growth.name());
    table.v4 = grown;
    // Values as the indexes themselves (`Modulo` writes an index).
    table.next_hops = NextHopTable::new(Mapping::Modulo(largest.max(table.next_hops.max_index()).max(1)));
    Ok(stride)
}

/// Runs `fibkit convert`.
pub fn run(args: &ConvertArgs) -> Result<ExitCode> {
    if let Some(output) = &args.output {
        crate::refuse_input_as_output(args.table.table.as_deref(), output)?;
    }
    let mut table = match args.host_routes {
        Some(count) => load::host_routes(count, args.subnets, args.table.nexthops.unwrap_or(16))?,
        None => args.table.load()?,
    };
    if let Some(growth) = args.grow {
        if table.records.is_some() {
            anyhow::bail!(
                "--grow writes next-hop numbers; a table of records (--fields) keeps its fields: give one or the other"
            );
        }
        let (name, routes) = (table.name.clone(), table.v4.len());
        let stride = grow_table(&mut table, growth)?;
        eprintln!(
            "{name}: {routes} IPv4 routes grown to {} ({}: part i of a route to n goes to n + i x {stride})",
            table.v4.len(),
            growth.name()
        );
    }
    match args.output.as_deref().filter(|&path| !crate::is_stdio(path)) {
        Some(path) => {
            let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
            let mut out = BufWriter::new(file);
            write_text(&table, &mut out)
                .and_then(|()| out.flush())
                .with_context(|| format!("writing {}", path.display()))?;
            eprintln!(
                "{}: {} IPv4 and {} IPv6 routes written to {}",
                table.name,
                table.v4.len(),
                table.v6.len(),
                path.display()
            );
        }
        None => {
            let mut out = BufWriter::new(io::stdout().lock());
            let written = write_text(&table, &mut out).and_then(|()| out.flush());
            quiet_broken_pipe(written).context("writing to standard output")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes `PREFIX VALUE` lines, IPv4 then IPv6 in address order. The value
/// is the input's (next hop, ASN) with distinct values, the next-hop index
/// with `--nexthops N`; either way the text loads back to the same table.
///
/// With records, CSV: a header line `prefix,FIELD,...` after a comment
/// giving the `--fields` that load it back with the same types, then a
/// line a route with its fields' cells.
fn write_text(table: &RouteTable, out: &mut impl Write) -> io::Result<()> {
    writeln!(
        out,
        "# {} ({} IPv4, {} IPv6 routes), written by fibkit convert",
        table.name,
        table.v4.len(),
        table.v6.len()
    )?;
    if let Some(records) = &table.records {
        return write_records(table, records, out);
    }
    let value = |hop| table.next_hops.value_text(hop).unwrap_or_default();
    for (prefix, hop) in table.v4.iter() {
        writeln!(out, "{prefix} {}", value(hop))?;
    }
    for (prefix, hop) in table.v6.iter() {
        writeln!(out, "{prefix} {}", value(hop))?;
    }
    Ok(())
}

/// `write_text` of a table of records, after its first comment line.
fn write_records(table: &RouteTable, records: &RecordTable, out: &mut impl Write) -> io::Result<()> {
    let spec: Vec<String> = records.fields().iter().map(ToString::to_string).collect();
    let names: Vec<&str> = records.fields().iter().map(|field| field.name.as_str()).collect();
    writeln!(out, "# load with --fields {}", spec.join(","))?;
    writeln!(out, "prefix,{}", names.join(","))?;
    let mut line = String::new();
    let mut write = |prefix: String, hop| {
        line.clear();
        line.push_str(&prefix);
        let row = match table.next_hops.label(hop) {
            Some(Label::Record(row)) => records.get(row),
            _ => None,
        };
        for value in row.into_iter().flatten() {
            line.push(',');
            write_csv_cell(&value.as_ref().to_string(), &mut line);
        }
        writeln!(out, "{line}")
    };
    for (prefix, hop) in table.v4.iter() {
        write(prefix.to_string(), hop)?;
    }
    for (prefix, hop) in table.v6.iter() {
        write(prefix.to_string(), hop)?;
    }
    Ok(())
}

/// A reader that stopped reading (`fibkit ... | head`) is no error.
fn quiet_broken_pipe(outcome: io::Result<()>) -> io::Result<()> {
    match outcome {
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Prints the peers of an MRT file with their route counts (`--peers`).
pub fn print_peers(path: &Path, options: &LoadOptions) -> Result<()> {
    let list = load::list_peers(path, options)?;
    for warning in &list.warnings {
        eprintln!("warning: {warning}");
    }
    let mut out = BufWriter::new(io::stdout().lock());
    let written = write_peers(path, &list, &mut out).and_then(|()| out.flush());
    quiet_broken_pipe(written).context("writing to standard output")
}

fn write_peers(path: &Path, list: &PeerList, out: &mut impl Write) -> io::Result<()> {
    let stream = list.content == "update stream";
    let counted = if stream { "prefixes announced, and withdrawals" } else { "prefixes in the RIB" };
    writeln!(out, "{}: {} with {} peers (counts: {counted})", path.display(), list.content, list.peers.len())?;
    let withdrawn_title = if stream { format!(" {:>9}", "withdrawn") } else { String::new() };
    writeln!(out, "{:>5} {:>12}  {:<40} {:>9} {:>9}{withdrawn_title}", "index", "ASN", "address", "IPv4", "IPv6")?;
    for (position, peer) in list.peers.iter().enumerate() {
        let asn = peer.asn.map_or_else(|| "?".to_string(), |asn| format!("AS{asn}"));
        let address = peer.address.map_or_else(|| "?".to_string(), |address| address.to_string());
        let withdrawn = if stream { format!(" {:>9}", peer.withdrawals) } else { String::new() };
        let marker = if Some(position) == list.default { "  (default)" } else { "" };
        writeln!(
            out,
            "{:>5} {asn:>12}  {address:<40} {:>9} {:>9}{withdrawn}{marker}",
            peer.index, peer.routes_v4, peer.routes_v6
        )?;
    }
    Ok(())
}
