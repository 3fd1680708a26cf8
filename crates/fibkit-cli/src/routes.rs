//! `fibkit routes`: the routes inside prefixes, or covering them, from a
//! table file (the RIB answers) or a compiled FIB file with prefixes (its
//! routes answer: [`CompiledFamily::covered`]).
//!
//! | format | a line per route                                        | header |
//! |--------|---------------------------------------------------------|--------|
//! | text   | `PREFIX<TAB>VALUE` (a table fibkit reads back)          | none   |
//! | csv    | `QUERY,PREFIX,PREFIX_LEN,VALUE`                         | `query,prefix,prefix_len,value` |
//! | json   | `{"query":..,"prefix":..,"prefix_len":..,"value":..}` (JSON lines) | none |
//!
//! Routes come query by query, each query's in address order (with
//! `--covering`, from the least specific); a query inside no route and
//! covering none writes nothing. Values are written as `fibkit lookup`
//! writes them.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context as _, Result};
use clap::Args;
use fibkit::addr::IpPrefix;
use fibkit::compiled::{CompiledFamily, CompiledTable};
use fibkit::file::is_fib_file_at;
use fibkit::load::{parse_address, AnyAddr, RouteTable};
use fibkit::{Address, NextHop, Prefix};

use crate::lookup::output::{write_decimal, write_prefix, Format, Values};
use crate::table::TableArgs;

/// Arguments of `fibkit routes`.
#[derive(Args, Debug)]
pub struct RoutesArgs {
    #[command(flatten)]
    pub(crate) table: TableArgs,
    /// Prefixes (IPv4 and IPv6 mixed; an address stands for its /32 or
    /// /128): list the routes inside each [default: every route].
    #[arg(value_name = "PREFIXES")]
    prefixes: Vec<String>,
    /// List the routes covering each prefix or address instead, from the
    /// least specific to its longest match.
    #[arg(long)]
    covering: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Write to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// Where the routes come from.
enum Source {
    /// A table file (or the default table): its RIBs.
    Loaded(RouteTable),
    /// A compiled FIB file with prefixes: its routes.
    Compiled(CompiledTable),
}

/// One query: its text (the prefix as asked, an address as its /32 or
/// /128) and the prefix it asks for.
struct Query {
    text: String,
    prefix: IpPrefix,
}

/// Runs `fibkit routes`.
pub fn run(args: &RoutesArgs) -> Result<ExitCode> {
    if let Some(table) = &args.table.table {
        if !table.exists() && query(&table.to_string_lossy()).is_ok() {
            bail!("{} is a prefix, not a table: fibkit routes TABLE [PREFIXES...]", table.display());
        }
    }
    let mut queries = args.prefixes.iter().map(|text| query(text)).collect::<Result<Vec<_>>>()?;
    if queries.is_empty() {
        queries = ["0.0.0.0/0", "::/0"].map(query).into_iter().collect::<Result<_>>()?;
    }
    let (source, values) = source(args)?;
    let output: Box<dyn Write> = match args.output.as_deref().filter(|&path| !crate::is_stdio(path)) {
        Some(path) => Box::new(File::create(path).with_context(|| format!("cannot create {}", path.display()))?),
        None => Box::new(io::stdout()),
    };
    let output_name =
        args.output.as_ref().map_or_else(|| "standard output".to_string(), |path| path.display().to_string());
    let mut out = BufWriter::with_capacity(1 << 20, output);
    let mut line = Vec::with_capacity(256);
    let written = (|| -> io::Result<()> {
        if args.format == Format::Csv {
            // A record's fields are columns of their own, named as the fields.
            writeln!(out, "query,prefix,prefix_len,{}", values.names().join(","))?;
        }
        for query in &queries {
            let mut write = |line: &mut Vec<u8>| out.write_all(line);
            match query.prefix {
                IpPrefix::V4(prefix) => each_route(&source, prefix, args.covering, |route| {
                    format_route(args.format, &values, &query.text, route, &mut line);
                    write(&mut line)
                })?,
                IpPrefix::V6(prefix) => each_route(&source, prefix, args.covering, |route| {
                    format_route(args.format, &values, &query.text, route, &mut line);
                    write(&mut line)
                })?,
            }
        }
        out.flush()
    })();
    written.with_context(|| format!("cannot write to {output_name}"))?;
    Ok(ExitCode::SUCCESS)
}

/// The prefix `text` names: a prefix, or an address as its /32 or /128; an
/// IPv6 one inside `::ffff:0:0/96` (96 bits or more) as the IPv4 prefix it
/// maps, as lookups and tables take them.
fn query(text: &str) -> Result<Query> {
    let trimmed = text.trim();
    let prefix = match parse_address(trimmed.as_bytes()) {
        Ok(AnyAddr::V4(addr)) => IpPrefix::V4(Prefix::host(addr)),
        Ok(AnyAddr::V6(addr)) => IpPrefix::V6(Prefix::host(addr)),
        Err(_) => trimmed
            .parse::<IpPrefix>()
            .with_context(|| format!("{trimmed:?} is neither a prefix nor an address (nor a table file)"))?,
    };
    let text = prefix.to_string();
    let prefix = match prefix {
        IpPrefix::V6(v6) if v6.prefix_len() >= 96 && v6.addr() >> 32 == 0xffff => {
            IpPrefix::V4(Prefix::truncating(v6.addr() as u32, v6.prefix_len() - 96))
        }
        prefix => prefix,
    };
    Ok(Query { text, prefix })
}

/// The routes' source and their values' text: a compiled FIB file mapped
/// (it must have been compiled with prefixes), or a table file loaded.
fn source(args: &RoutesArgs) -> Result<(Source, Values)> {
    let table = &args.table;
    let fib_file = table.table.as_deref().filter(|path| !crate::is_stdio(path)).filter(|path| is_fib_file_at(path));
    let Some(path) = fib_file else {
        let routes = table.load()?;
        let values = match &routes.records {
            Some(records) => fibkit::compiled::Values::with_records(&routes.next_hops, records)?,
            None => fibkit::compiled::Values::new(&routes.next_hops),
        };
        let values = Values::new(&values, table.fields.as_ref())?;
        return Ok((Source::Loaded(routes), values));
    };
    table.refuse_for_compiled(path, &[])?;
    let compiled = CompiledTable::open(path)?;
    let families = [
        compiled.v4.as_ref().map(CompiledFamily::has_prefixes),
        compiled.v6.as_ref().map(CompiledFamily::has_prefixes),
    ];
    if families.contains(&Some(false)) {
        bail!(
            "{}: compiled without the routes' prefixes, which fibkit routes lists: compile it with fibkit compile \
             --prefix",
            path.display()
        );
    }
    let values = Values::new(&compiled.values, table.fields.as_ref())?;
    Ok((Source::Compiled(compiled), values))
}

/// Calls `visit` with every route inside `prefix` (covering it, with
/// `covering`), in order, until it fails.
fn each_route<A: Address>(
    source: &Source,
    prefix: Prefix<A>,
    covering: bool,
    mut visit: impl FnMut((Prefix<A>, NextHop)) -> io::Result<()>,
) -> io::Result<()> {
    let routes: Box<dyn Iterator<Item = (Prefix<A>, NextHop)> + '_> = match source {
        Source::Loaded(table) if covering => Box::new(table.rib::<A>().covering(prefix)),
        Source::Loaded(table) => Box::new(table.rib::<A>().covered(prefix)),
        Source::Compiled(table) => match table.family_fib::<A>() {
            // Families were checked to have their prefixes.
            Some(family) if covering => Box::new(family.covering(prefix).into_iter().flatten()),
            Some(family) => Box::new(family.covered(prefix).into_iter().flatten()),
            None => Box::new(std::iter::empty()),
        },
    };
    routes.into_iter().try_for_each(&mut visit)
}

/// `route`, the answer to `query`, as a line of `format` into `line`
/// (replacing what it held).
fn format_route<A: Address>(
    format: Format,
    values: &Values,
    query: &str,
    (prefix, hop): (Prefix<A>, NextHop),
    line: &mut Vec<u8>,
) {
    line.clear();
    match format {
        Format::Text => {
            write_prefix(prefix, line);
            line.push(b'\t');
            values.write_text(hop, format, b'\t', line);
        }
        Format::Csv => {
            line.extend_from_slice(query.as_bytes());
            line.push(b',');
            write_prefix(prefix, line);
            line.push(b',');
            write_decimal(u32::from(prefix.prefix_len()), line);
            line.push(b',');
            values.write_text(hop, format, b',', line);
        }
        Format::Json => {
            line.extend_from_slice(b"{\"query\":\"");
            line.extend_from_slice(query.as_bytes());
            line.extend_from_slice(b"\",\"prefix\":\"");
            write_prefix(prefix, line);
            line.extend_from_slice(b"\",\"prefix_len\":");
            write_decimal(u32::from(prefix.prefix_len()), line);
            line.extend_from_slice(b",\"value\":");
            values.write_json(hop, line);
            line.push(b'}');
        }
    }
    line.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use fibkit::nexthop::{Label, Mapping, NextHopTable};

    #[test]
    fn queries_are_prefixes_or_addresses_and_mapped_ones_ipv4() {
        let asked = |text: &str| query(text).map(|query| (query.text, query.prefix.to_string()));
        assert_eq!(asked(" 10.0.0.0/8 ").unwrap(), ("10.0.0.0/8".into(), "10.0.0.0/8".into()));
        assert_eq!(asked("8.8.8.8").unwrap(), ("8.8.8.8/32".into(), "8.8.8.8/32".into()));
        assert_eq!(asked("2001:db8::1").unwrap(), ("2001:db8::1/128".into(), "2001:db8::1/128".into()));
        assert_eq!(asked("::ffff:10.1.0.0/112").unwrap(), ("::ffff:10.1.0.0/112".into(), "10.1.0.0/16".into()));
        assert_eq!(asked("::ffff:0:0/96").unwrap().1, "0.0.0.0/0");
        assert_eq!(asked("::/64").unwrap().1, "::/64", "covering ::ffff:0:0/96, not inside it: IPv6");
        let error = asked("10.0.0.1/8").unwrap_err().to_string();
        assert!(error.contains("\"10.0.0.1/8\" is neither a prefix nor an address"), "{error}");
        assert!(format!("{:#}", asked("10.0.0.1/8").unwrap_err()).contains("did you mean 10.0.0.0/8?"));
    }

    #[test]
    fn routes_are_written_in_each_format() {
        let mut next_hops = NextHopTable::new(Mapping::Distinct);
        let asn = next_hops.intern(Label::Number(64500));
        let address = next_hops.intern(Label::Addr("2001:db8::9".parse().unwrap()));
        let values = Values::new(&fibkit::compiled::Values::new(&next_hops), None).unwrap();
        let mut line = Vec::new();
        let mut written = |format, route: (Prefix<u32>, NextHop)| {
            format_route(format, &values, "10.0.0.0/8", route, &mut line);
            String::from_utf8(line.clone()).unwrap()
        };
        let route = ("10.1.0.0/16".parse().unwrap(), asn);
        assert_eq!(written(Format::Text, route), "10.1.0.0/16\t64500\n");
        assert_eq!(written(Format::Csv, route), "10.0.0.0/8,10.1.0.0/16,16,64500\n");
        let json = "{\"query\":\"10.0.0.0/8\",\"prefix\":\"10.1.0.0/16\",\"prefix_len\":16,\"value\":64500}\n";
        assert_eq!(written(Format::Json, route), json);
        let route = ("10.1.0.0/16".parse().unwrap(), address);
        assert!(written(Format::Json, route).ends_with(",\"value\":\"2001:db8::9\"}\n"));
    }
}
