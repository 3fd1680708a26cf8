//! `fibkit stat`: an engine's structure report.

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use fibkit::addr::IpPrefix;
use fibkit::auto;
use fibkit::engines::dxr;
use fibkit::fib::{BuildOptions, Calibration, Fib, Figure};
use fibkit::load::RouteTable;
use fibkit::random::Keyed;
use fibkit::registry;
use serde_json::{json, Map, Value};

use crate::family::{build_timed, check_names, load_table, select_engines, Family, FamilyArgs};
use crate::table::TableArgs;

/// Arguments of `fibkit stat`.
#[derive(Args, Debug)]
pub struct StatArgs {
    /// Engine to build, a comma-separated list, or `all` [default: d18r;
    /// for IPv6 poptrie18]; `auto` measures its candidates on this table
    /// and machine and reports which it chose and why.
    #[arg(long)]
    engine: Option<String>,
    /// Print one JSON object instead of the text report.
    #[arg(long)]
    json: bool,
    /// Print the distribution of DXR chunk lengths for K = 16..22.
    #[arg(long)]
    chunk_histogram: bool,
    /// With `auto`: measure the candidates on keys uniform inside this
    /// prefix (the traffic the FIB will see) [default: all of IPv4,
    /// 2000::/3 for IPv6].
    #[arg(long, value_name = "PREFIX", value_parser = parse_space, conflicts_with = "keys")]
    space: Option<IpPrefix>,
    /// With `auto`: measure the candidates on these addresses, in order
    /// (a sample of the traffic; as `bench --keys` reads them: text, raw
    /// addresses or a pcap capture).
    #[arg(long, value_name = "FILE")]
    keys: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub(crate) table: TableArgs,
    #[command(flatten)]
    family: FamilyArgs,
}

fn parse_space(text: &str) -> Result<IpPrefix, String> {
    text.trim()
        .parse::<IpPrefix>()
        .map_err(|error| format!("{:?} is not a prefix: {error}", fibkit::error::shorten(text)))
}

/// Runs `fibkit stat`.
pub fn run(args: &StatArgs) -> Result<ExitCode> {
    if let Some(spec) = &args.engine {
        check_names(spec)?;
    }
    let calibrated = [(args.space.is_some(), "--space"), (args.keys.is_some(), "--keys")];
    if let Some((_, option)) = calibrated.iter().find(|(given, _)| *given) {
        if !args.engine.as_deref().is_some_and(|spec| spec.split(',').any(|name| name.trim() == auto::NAME)) {
            anyhow::bail!("{option} is what `auto` measures its candidates on: give --engine auto");
        }
    }
    let ipv4_only = args.chunk_histogram.then_some("--chunk-histogram is about IPv4 DXR");
    let (table, family) = load_table(&args.table, &args.family, ipv4_only)?;
    let (mut objects, all_built) = match family {
        Family::Ipv4 => report::<u32>(args, &table, registry::DEFAULT_IPV4)?,
        Family::Ipv6 => report::<u128>(args, &table, registry::DEFAULT_IPV6)?,
    };
    if args.chunk_histogram {
        let histogram = dxr::chunk_histogram(&table.v4);
        if args.json {
            let rows: Vec<Value> =
                histogram.iter().map(|row| json!({"k": row.k, "chunks": row.chunks, "shares": row.shares})).collect();
            objects.push(json!({"chunk_histogram": rows, "buckets": dxr::HISTOGRAM_BUCKETS}));
        } else {
            let mut text =
                "DXR chunk lengths: the share of the 2^K chunks holding each number of fragments\n".to_string();
            text += &format!("{:>3}", "K");
            for bucket in dxr::HISTOGRAM_BUCKETS {
                text += &format!(" {bucket:>8}");
            }
            for row in &histogram {
                text += &format!("\n{:>3}", row.k);
                for share in row.shares {
                    text += &format!(" {share:>8.5}");
                }
            }
            out!("{text}");
        }
    }
    if args.json {
        let output = if objects.len() == 1 { objects.pop().unwrap() } else { Value::Array(objects) };
        out!("{}", serde_json::to_string_pretty(&output)?);
    }
    Ok(if all_built { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Builds the engines of family `A` that `--engine` names (or
/// `default_engine`) and prints their reports, or returns them as JSON
/// objects with `--json`; and whether every engine could build the table
/// (one that cannot is reported, and the others still are).
fn report<A: Keyed>(args: &StatArgs, table: &RouteTable, default_engine: &str) -> Result<(Vec<Value>, bool)> {
    let family = A::FAMILY;
    let calibration = match (args.space, &args.keys) {
        (Some(space), _) => Calibration::Space(
            space
                .of::<A>()
                .with_context(|| format!("--space {space} is not a prefix of the table's family ({family})"))?,
        ),
        (None, Some(path)) => Calibration::Keys(fibkit::load::load_keys_for::<A>(path)?.keys.into()),
        (None, None) => Calibration::Default,
    };
    let mut objects = Vec::new();
    let mut all_built = true;
    for engine in select_engines::<A>(args.engine.as_deref().unwrap_or(default_engine))? {
        let built = if engine.name == auto::NAME {
            build_auto::<A>(table, &calibration)
        } else {
            build_timed::<A>(engine, table, &Calibration::Default).map(|(fib, ms)| (fib, ms, None))
        };
        let (fib, build_ms, choice) = match built {
            Ok(built) => built,
            Err(error) => {
                all_built = false;
                if args.json {
                    objects.push(json!({"engine": engine.name, "table": table.name, "error": format!("{error:#}")}));
                } else {
                    out!("{}: cannot build the table: {error:#}\n", engine.name);
                }
                continue;
            }
        };
        let stats = fib.stats();
        let prefixes = table.prefixes(family) as u64;
        let bytes = fib.footprint() as u64;
        let mut object = Map::new();
        object.insert("engine".into(), json!(engine.name));
        object.insert("table".into(), json!(table.name));
        object.insert("family".into(), json!(family.key()));
        object.insert("mapping".into(), json!(table.next_hops.mapping().to_string()));
        object.insert("prefixes".into(), json!(prefixes));
        object.insert("nexthops".into(), json!(table.next_hops_of(family)));
        object.insert("bytes_total".into(), json!(bytes));
        object.insert("bytes_per_prefix".into(), json!(bytes as f64 / prefixes.max(1) as f64));
        object.insert("build_ms".into(), json!(build_ms));
        if let Some(choice) = &choice {
            object.insert("chosen".into(), json!(fib.name()));
            object.insert("auto".into(), json!(choice));
        }
        for (key, figure) in &stats.figures {
            object.entry(key.clone()).or_insert_with(|| match figure {
                Figure::Count(value) => json!(value),
                Figure::Real(value) => json!(value),
                Figure::Text(value) => json!(value),
            });
        }
        if args.json {
            objects.push(Value::Object(object));
        } else {
            if let Some(choice) = &choice {
                out!("{choice}");
            }
            out!("{}", stats.report);
            out!("Table: {} ({} {family} prefixes, next hops: {})", table.name, prefixes, table.next_hops.mapping());
            out!("Build time: {build_ms:.1} ms");
            out!("");
        }
    }
    Ok((objects, all_built))
}

/// A built FIB, its build time (ms), and for `auto` its choice as text.
type Built<A> = (Box<dyn Fib<A>>, f64, Option<String>);

/// Builds `auto` over the table, measuring the keys of `calibration`: the
/// chosen engine's FIB, the time choosing and building took (ms), and the
/// choice as text (the keys measured, the candidates, what each measured,
/// and why the others were not chosen).
fn build_auto<A: Keyed>(table: &RouteTable, calibration: &Calibration<A>) -> Result<Built<A>> {
    let mut options = BuildOptions::new(table.next_hops.max_index());
    *options.calibration.of_mut::<A>() = calibration.clone();
    let choice = auto::choose::<A>(table.rib::<A>(), &options)?;
    let (ms, text) = (choice.elapsed.as_secs_f64() * 1e3, choice.to_string().trim_end().to_string());
    Ok((choice.fib, ms, Some(text)))
}
