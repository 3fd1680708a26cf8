//! `fibkit stat`: an engine's structure report.

use std::process::ExitCode;

use anyhow::{bail, Result};
use clap::Args;
use fibkit::dxr;
use fibkit::engine::Figure;
use serde_json::{json, Map, Value};

use crate::family::{build_timed_in, select_engines_in, Family, FamilyArgs};
use crate::TableArgs;

/// Arguments of `fibkit stat`.
#[derive(Args, Debug)]
pub struct StatArgs {
    /// Engine to build, a comma-separated list, or `all` [default: d16r;
    /// for IPv6 poptrie18].
    #[arg(long)]
    engine: Option<String>,
    /// Print one JSON object instead of the text report.
    #[arg(long)]
    json: bool,
    /// Print the distribution of DXR chunk lengths for K = 16..22.
    #[arg(long)]
    chunk_histogram: bool,
    #[command(flatten)]
    table: TableArgs,
    #[command(flatten)]
    family: FamilyArgs,
}

/// Runs `fibkit stat`.
pub fn run(args: &StatArgs) -> Result<ExitCode> {
    if args.chunk_histogram && args.family.explicit() == Some(Family::Ipv6) {
        bail!("--chunk-histogram is about IPv4 DXR (drop -6 / --family ipv6)");
    }
    let table = args.table.load()?;
    let family = args.family.resolve(&table)?;
    if args.chunk_histogram && family == Family::Ipv6 {
        bail!("--chunk-histogram is about IPv4 DXR, and {} has IPv6 routes only", table.name);
    }
    let default_engine = match family {
        Family::Ipv4 => "d16r",
        Family::Ipv6 => "poptrie18",
    };
    let mut objects = Vec::new();
    for name in select_engines_in(family, args.engine.as_deref().unwrap_or(default_engine))? {
        let (fib, build_ms) = build_timed_in(family, name, &table)?;
        let stats = fib.stats();
        let prefixes = family.prefixes(&table) as u64;
        let bytes = fib.footprint() as u64;
        let mut object = Map::new();
        object.insert("engine".into(), json!(name));
        object.insert("table".into(), json!(table.name));
        object.insert("family".into(), json!(family.key()));
        object.insert("mapping".into(), json!(table.next_hops.mapping().to_string()));
        object.insert("prefixes".into(), json!(prefixes));
        object.insert("nexthops".into(), json!(table.next_hops.len()));
        object.insert("bytes_total".into(), json!(bytes));
        object.insert("bytes_per_prefix".into(), json!(bytes as f64 / prefixes.max(1) as f64));
        object.insert("build_ms".into(), json!(build_ms));
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
            println!("{}", stats.report);
            println!(
                "Table: {} ({} {family} prefixes, next hops: {})",
                table.name,
                prefixes,
                table.next_hops.mapping()
            );
            println!("Build time: {build_ms:.1} ms");
            println!();
        }
    }
    if args.chunk_histogram {
        let histogram = dxr::chunk_histogram(&table.v4);
        if args.json {
            let rows: Vec<Value> = histogram
                .iter()
                .map(|row| json!({"k": row.k, "chunks": row.chunks, "shares": row.shares}))
                .collect();
            objects.push(json!({"chunk_histogram": rows, "buckets": dxr::HISTOGRAM_BUCKETS}));
        } else {
            print!("{:>3}", "K");
            for bucket in dxr::HISTOGRAM_BUCKETS {
                print!(" {bucket:>8}");
            }
            println!();
            for row in &histogram {
                print!("{:>3}", row.k);
                for share in row.shares {
                    print!(" {share:>8.5}");
                }
                println!();
            }
        }
    }
    if args.json {
        let output = if objects.len() == 1 { objects.pop().unwrap() } else { Value::Array(objects) };
        println!("{}", serde_json::to_string_pretty(&output)?);
    }
    Ok(ExitCode::SUCCESS)
}
