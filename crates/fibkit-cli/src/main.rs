//! `fibkit`: build, inspect, verify and benchmark IP routing lookup engines.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use fibkit::load::{self, LoadOptions, PeerSelector, RouteTable, ValueChoice};
use fibkit::nexthop::Mapping;

/// `println!` for the commands: a failed write to standard output (a full
/// disk, a closed file) returns an error from the enclosing function, where
/// `println!` would panic.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::write_stdout(&format!("{}\n", format_args!($($arg)*)))?
    };
}

mod bench;
mod compile;
mod convert;
mod family;
mod lookup;
mod numbers;
mod replay;
mod reproduce;
mod stat;
mod verify;

/// fibkit: longest-prefix-match lookups compiled into cache-sized FIBs.
#[derive(Parser)]
#[command(name = "fibkit", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build an engine and print its structure report (like DXR's rt.stat).
    Stat(stat::StatArgs),
    /// Compare an engine's answers with the RIB's.
    Verify(verify::VerifyArgs),
    /// Measure lookup throughput (SEQ/RND/REP, threads, peers side by side).
    Bench(bench::BenchArgs),
    /// Apply an update trace to a live FIB while readers look up.
    Replay(replay::ReplayArgs),
    /// Write a table (MRT, any input format) as `PREFIX NEXTHOP` text.
    Convert(convert::ConvertArgs),
    /// The route of each address (arguments, files, CSV columns, stdin).
    Lookup(lookup::LookupArgs),
    /// Compile a table into a FIB file that `lookup` maps instead of
    /// building.
    Compile(compile::CompileArgs),
    /// Rerun the papers' experiments here; report them beside the
    /// published figures.
    Reproduce(reproduce::ReproduceArgs),
}

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
}

impl TableArgs {
    /// Loads the table (or generates the default one).
    pub fn load(&self) -> Result<RouteTable> {
        let mapping = self.nexthops.map_or(Mapping::Distinct, Mapping::Modulo);
        let options =
            LoadOptions { mapping, strict: self.strict, peer: self.peer.unwrap_or_default(), value: self.value };
        if self.peers {
            let path = self.table.as_ref().context("--peers lists the peers of an MRT TABLE file: give one")?;
            convert::print_peers(path, &options)?;
            std::process::exit(0);
        }
        let table = match &self.table {
            Some(path) => load::load_path(path, &options)?,
            None => load::synthetic::default_table(mapping),
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

/// Whether `path` is `-`: standard input where a file is read, standard
/// output where one is written.
pub fn is_stdio(path: &std::path::Path) -> bool {
    path.as_os_str() == "-"
}

/// Refuses to write `output` when it is the file `input` names (through
/// any link): the table being read would be destroyed.
///
/// # Errors
/// Naming both paths when they are one file.
pub fn refuse_input_as_output(input: Option<&std::path::Path>, output: &std::path::Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let identity = |path: &std::path::Path| std::fs::metadata(path).ok().map(|meta| (meta.dev(), meta.ino()));
        if let Some(input) = input.filter(|&input| !is_stdio(input)) {
            if identity(output).is_some() && identity(output) == identity(input) {
                anyhow::bail!(
                    "{} is the input table {}: write the output to another file",
                    output.display(),
                    input.display()
                );
            }
        }
    }
    Ok(())
}

/// Writes `text` to standard output and flushes it; the error names
/// standard output.
pub fn write_stdout(text: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()).context("cannot write to standard output")
}

fn main() -> ExitCode {
    // Die quietly on a closed pipe (`fibkit stat | head`), as Unix tools do.
    #[cfg(unix)]
    // SAFETY: setting SIGPIPE's disposition to the default before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    if let Err(error) = fibkit_peers::register() {
        eprintln!("fibkit: error: {error}");
        return ExitCode::from(2);
    }
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Stat(args) => stat::run(&args),
        Command::Verify(args) => verify::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Replay(args) => replay::run(&args),
        Command::Convert(args) => convert::run(&args),
        Command::Lookup(args) => lookup::run(&args),
        Command::Compile(args) => compile::run(&args),
        Command::Reproduce(args) => reproduce::run(&args),
    };
    match outcome {
        Ok(code) => code,
        Err(error) => {
            eprintln!("fibkit: error: {error:#}");
            ExitCode::from(2)
        }
    }
}
