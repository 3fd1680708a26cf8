//! `fibkit compile`: a table compiled once into a FIB file that `fibkit
//! lookup` and Python's `fibkit.open` map in place of loading and building
//! it (the format: `fibkit::file`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Instant, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use clap::Args;
use fibkit::compiled::CompileOptions;
use fibkit::{Address, Family, Rib};

use crate::registered;
use crate::table::TableArgs;

/// Arguments of `fibkit compile`.
#[derive(Args, Debug)]
pub struct CompileArgs {
    #[command(flatten)]
    pub(crate) table: TableArgs,
    /// The FIB file to write (replaced whole: a process that has the old
    /// one open keeps reading the old one; a symbolic link is followed);
    /// `-` for standard output. Devices, FIFOs and the input table itself
    /// are refused.
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// Engines, comma separated: each family gets the first that serves it
    /// [default: d18r for IPv4, poptrie18 for IPv6]; DXR (d16r..d22r),
    /// Poptrie (poptrie0/16/18, both families; poptrie16x12, IPv6),
    /// dir24-8 and SAIL (sail, sail-wide, sail-runs) can be saved.
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    engine: Vec<String>,
    /// Also store the routes, so that lookups answer the matched prefix
    /// (`fibkit lookup --prefix`).
    #[arg(long)]
    prefix: bool,
    /// Only the table's IPv4 routes [default: both families].
    #[arg(short = '4', conflicts_with = "ipv6")]
    ipv4: bool,
    /// Only the table's IPv6 routes.
    #[arg(short = '6')]
    ipv6: bool,
}

/// Runs `fibkit compile`.
pub fn run(args: &CompileArgs) -> Result<ExitCode> {
    crate::refuse_input_as_output(args.table.table.as_deref(), &args.output)?;
    let options = CompileOptions { engines: args.engine.clone(), prefixes: args.prefix, ..Default::default() };
    // Every engine name (`registered::compile_engine` checks them all), and
    // that the chosen ones can be saved, checked before the table loads;
    // `-4` and `-6` exclude each other, so one check at least runs.
    if !args.ipv6 {
        check_savable::<u32>(&options)?;
    }
    if !args.ipv4 {
        check_savable::<u128>(&options)?;
    }
    let started = Instant::now();
    let mut routes = args.table.load()?;
    let loaded = started.elapsed();
    if args.ipv4 {
        routes.v6 = Rib::new();
    }
    if args.ipv6 {
        routes.v4 = Rib::new();
    }
    if routes.v4.is_empty() && routes.v6.is_empty() {
        let family = if args.ipv4 { Family::Ipv4 } else { Family::Ipv6 };
        bail!("{} has no {family} route to compile", routes.name);
    }
    let counts = [routes.v4.len(), routes.v6.len()];
    let building = Instant::now();
    let table = registered::compile(routes, &options).context("compiling")?;
    let built = building.elapsed();
    let mut file = table.to_file()?;
    if let Some(modified) = args.table.table.as_ref().and_then(|path| path.metadata().ok()?.modified().ok()) {
        file.source_modified = modified.duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_secs());
    }
    let written_to = if crate::is_stdio(&args.output) {
        let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
        file.write_to(&mut stdout).and_then(|()| stdout.flush()).context("cannot write to standard output")?;
        "standard output".to_string()
    } else {
        file.write(&args.output)?;
        args.output.display().to_string()
    };
    let size = file.len();
    let families: Vec<String> = table
        .engines()
        .into_iter()
        .zip(counts)
        .zip([Family::Ipv4, Family::Ipv6])
        .filter_map(|((engine, routes), family)| Some(format!("{family} {} ({routes} routes)", engine?)))
        .collect();
    eprintln!(
        "{written_to}: {} written, {size} bytes; loaded in {:.3} s, built in {:.3} s",
        families.join(", "),
        loaded.as_secs_f64(),
        built.as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// Fails if the engine family `A` gets cannot be saved.
fn check_savable<A: Address>(options: &CompileOptions) -> Result<()> {
    let engine = registered::compile_engine::<A>(options)?;
    if !engine.savable::<A>() {
        bail!("{} ({})", fibkit::registry::not_savable(engine.name), A::FAMILY);
    }
    Ok(())
}
