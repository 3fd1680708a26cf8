//! `fibkit`: build, inspect, verify and benchmark IP routing lookup engines.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

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
mod follow;
mod lookup;
mod numbers;
mod registered;
mod replay;
mod reproduce;
mod routes;
mod serve;
mod stat;
mod table;
mod verify;

use table::TableArgs;

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
    /// Peer with BGP neighbours (receive-only) and print every change of
    /// the live FIB.
    Follow(follow::FollowArgs),
    /// Answer lookups over HTTP from a live table (a table file, BGP
    /// neighbours), with metrics and snapshots.
    Serve(serve::ServeArgs),
    /// Write a table (MRT, any input format) as `PREFIX NEXTHOP` text.
    Convert(convert::ConvertArgs),
    /// The route of each address (arguments, files, CSV columns, stdin).
    Lookup(lookup::LookupArgs),
    /// The routes inside prefixes, or covering prefixes and addresses.
    Routes(routes::RoutesArgs),
    /// Compile a table into a FIB file that `lookup` maps instead of
    /// building.
    Compile(compile::CompileArgs),
    /// Rerun the papers' experiments here; report them beside the
    /// published figures.
    Reproduce(reproduce::ReproduceArgs),
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
    if let Err(error) = registered::register_peers() {
        eprintln!("fibkit: error: {error}");
        return ExitCode::from(2);
    }
    let cli = Cli::parse();
    let outcome = match cli.command.table().filter(|table| table.peers) {
        Some(table) => list_peers(table),
        None => run(cli.command),
    };
    match outcome {
        Ok(code) => code,
        Err(error) => {
            eprintln!("fibkit: error: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// `--peers`: the peers of the command's MRT file listed, in place of the
/// command.
fn list_peers(table: &TableArgs) -> Result<ExitCode> {
    let path = table.table.as_ref().context("--peers lists the peers of an MRT TABLE file: give one")?;
    convert::print_peers(path, &table.options())?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `command`.
fn run(command: Command) -> Result<ExitCode> {
    match command {
        Command::Stat(args) => stat::run(&args),
        Command::Verify(args) => verify::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Replay(args) => replay::run(&args),
        Command::Follow(args) => follow::run(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Convert(args) => convert::run(&args),
        Command::Lookup(args) => lookup::run(&args),
        Command::Routes(args) => routes::run(&args),
        Command::Compile(args) => compile::run(&args),
        Command::Reproduce(args) => reproduce::run(&args),
    }
}

impl Command {
    /// The table arguments of the command, if it takes them.
    fn table(&self) -> Option<&TableArgs> {
        match self {
            Command::Stat(args) => Some(&args.table),
            Command::Verify(args) => Some(&args.table),
            Command::Bench(args) => Some(&args.table),
            Command::Convert(args) => Some(&args.table),
            Command::Lookup(args) => Some(&args.table),
            Command::Routes(args) => Some(&args.table),
            Command::Compile(args) => Some(&args.table),
            Command::Replay(_) | Command::Follow(_) | Command::Serve(_) | Command::Reproduce(_) => None,
        }
    }
}
