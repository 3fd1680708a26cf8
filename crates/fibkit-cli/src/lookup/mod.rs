//! `fibkit lookup`: the route of every address of a file, a pipe or the
//! command line, answered in batches on every core.
//!
//! ```text
//!  sources (arguments, files, stdin), in order
//!    -> blocks of ~1 MiB of whole lines (reader: main thread)
//!    -> a batch of blocks answered in parallel (rayon; block.rs)
//!    -> output bytes, in input order (writer thread, large buffered writes)
//! ```
//!
//! Output formats (`--format`):
//!
//! | format | one line per address                              | header |
//! |--------|---------------------------------------------------|--------|
//! | text   | `ADDRESS<TAB>VALUE[<TAB>PREFIX]`                    | none   |
//! | csv    | `ADDRESS,VALUE[,PREFIX,PREFIX_LEN]`; with `--column` the input row with these columns appended | `address,value,...`, or the input's header with `value,...` appended |
//! | json   | `{"address":..,"value":..[,"prefix":..,"prefix_len":..]}` (JSON lines) | none |
//!
//! A value is the route's value as the table gave it (an ASN, a next-hop
//! address; the next-hop index with `--nexthops N`), empty (JSON: `null`)
//! for an address without a route.
//!
//! With `--all-matches`, an address gets a line per route covering it,
//! from the least specific to its longest match, each with its prefix
//! (as `--prefix` writes it), or one line without a route if none does:
//! the covering routes of the table's routes compiled with prefixes
//! ([`fibkit::compiled::CompiledFamily::covering`]), in place of the one
//! lookup. A line whose field is not an address
//! is reported on stderr with its source and line, and skipped (with
//! `--strict`, the run fails there).

mod block;
mod fields;
pub(crate) mod output;
mod source;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use clap::Args;
use fibkit::auto;
use fibkit::compiled::{CompileOptions, CompiledTable};
use fibkit::fib::Calibrations;
use fibkit::file::is_fib_file_at;
use fibkit::load::{parse_address, RouteTable};
use rayon::prelude::*;

use crate::table::TableArgs;
use block::{Answered, Context};
use fields::Layout;
use output::Format;
use output::Values;
use source::SourceReader;

/// Arguments of `fibkit lookup`.
#[derive(Args, Debug)]
pub struct LookupArgs {
    #[command(flatten)]
    pub(crate) table: TableArgs,
    /// Addresses (IPv4 and IPv6 mixed), or files of them (one a line, or a
    /// column of CSV/TSV with --column); `-` is standard input, read also
    /// when no address is given.
    #[arg(value_name = "ADDRESSES")]
    addresses: Vec<String>,
    /// Engines, comma separated: each family gets the first that serves it
    /// [default: d18r for IPv4, poptrie18 for IPv6].
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    engine: Vec<String>,
    /// The addresses are the column NAME (named in a header line) or INDEX
    /// (1-based) of CSV or TSV lines; a first line whose column holds a
    /// name, not an address (malformed or not), is a header.
    #[arg(long, value_name = "NAME|INDEX")]
    column: Option<String>,
    /// The CSV delimiter, one character [default: a tab if the first line
    /// has one, else a comma].
    #[arg(long, value_name = "CHAR")]
    delimiter: Option<char>,
    /// Also answer the matched prefix (and in CSV and JSON its length).
    #[arg(long)]
    prefix: bool,
    /// Answer every route covering each address, from the least specific
    /// to the longest match: a line per route, with its prefix as
    /// --prefix writes it (a compiled FIB file needs fibkit compile
    /// --prefix).
    #[arg(long)]
    all_matches: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Write to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Threads answering blocks [default: every core].
    #[arg(long, value_name = "N", value_parser = crate::numbers::threads)]
    threads: Option<usize>,
    /// Print what was read, answered and skipped, and how fast, on stderr.
    #[arg(long)]
    summary: bool,
}

/// The most addresses `auto` measures its candidates on: a sample of the
/// first source's first block.
const CALIBRATION_KEYS: usize = 1 << 16;

/// Blocks answered in parallel at a time, per thread.
const BLOCKS_PER_THREAD: usize = 4;
/// Malformed lines reported one by one before the rest are only counted.
const REPORTED_PROBLEMS: u64 = 10;

/// Runs `fibkit lookup`.
pub fn run(args: &LookupArgs) -> Result<ExitCode> {
    if let Some(table) = &args.table.table {
        if !table.exists() && parse_address(table.as_os_str().as_encoded_bytes()).is_ok() {
            bail!("{} is an address, not a table: fibkit lookup TABLE [ADDRESSES...]", table.display());
        }
    }
    let sources = source::sources(&args.addresses)?;
    let delimiter = args.delimiter.map(delimiter_byte).transpose()?;
    // `auto` measures its candidates on the first block of the first
    // source: that reader goes on to be answered from where it stands.
    let mut first = None;
    let mut calibration = Calibrations::default();
    if args.engine.iter().any(|name| name == auto::NAME) {
        if let Some(source) = sources.first() {
            let mut reader = SourceReader::open(source)?;
            let layout = reader.layout(args.column.as_deref(), delimiter)?;
            if let Some(block) = reader.peek_block()? {
                let (keys4, keys6) = block::addresses(block, layout, CALIBRATION_KEYS);
                calibration = Calibrations::sample(keys4, keys6);
            }
            first = Some((reader, layout));
        }
    }
    let started = Instant::now();
    let table = compiled_table(args, calibration)?;
    let values = Values::new(&table.values, args.table.fields.as_ref())?;
    let compiled = started.elapsed();
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().context("cannot start threads")?;
    let output: Box<dyn Write + Send> = match args.output.as_deref().filter(|&path| !crate::is_stdio(path)) {
        Some(path) => Box::new(File::create(path).with_context(|| format!("cannot create {}", path.display()))?),
        None => Box::new(io::stdout()),
    };
    let output_name =
        args.output.as_ref().map_or_else(|| "standard output".to_string(), |path| path.display().to_string());
    let (sender, receiver) = mpsc::sync_channel::<Vec<u8>>(threads * BLOCKS_PER_THREAD);
    let writer = std::thread::spawn(move || -> io::Result<()> {
        let mut out = BufWriter::with_capacity(1 << 20, output);
        for bytes in receiver {
            out.write_all(&bytes)?;
        }
        out.flush()
    });
    let mut totals = Totals::default();
    let answering = Instant::now();
    let outcome = (|| -> Result<()> {
        let mut header_written = false;
        for source in &sources {
            let (reader, layout) = match first.take() {
                Some(opened) => opened,
                None => {
                    let mut reader = SourceReader::open(source)?;
                    let layout = reader.layout(args.column.as_deref(), delimiter)?;
                    (reader, layout)
                }
            };
            let (format, prefix, all_matches) = (args.format, args.prefix, args.all_matches);
            let context = Context { table: &table, values: &values, layout, format, prefix, all_matches };
            if let Some(header) = output::header_line(context.style(), reader.header(), &mut header_written) {
                sender.send(header).context("writer stopped")?;
            }
            let name = reader.name().to_string();
            let answer = |block: &[u8], first_line| block::answer(block, first_line, &context);
            // Lines read whole that look like CSV get a hint at --column,
            // once, after the warnings of the first block that has them.
            let mut hinted = layout != Layout::Lines;
            answer_source(reader, &pool, threads, answer, |block| {
                let hint = (!hinted && !block.problems.is_empty()).then(|| {
                    hinted = true;
                    fields::column_hint(block.problems.iter().map(|problem| (problem.line, problem.text.as_str())))
                });
                let added = totals.add(&block, &name, args.table.strict);
                if let Some(hint) = hint.flatten() {
                    eprintln!("hint: {name}: {hint}");
                }
                added?;
                sender.send(block.output).context("writer stopped")
            })?;
        }
        Ok(())
    })();
    drop(sender);
    // A failed write stops the writer, and then the sending: its error is the cause.
    let written = writer.join().unwrap_or_else(|_| Err(io::Error::other("the writer thread panicked")));
    written.with_context(|| format!("cannot write to {output_name}"))?;
    outcome?;
    if totals.skipped > REPORTED_PROBLEMS {
        eprintln!("warning: {} lines without an address skipped in all", totals.skipped);
    }
    if args.summary {
        totals.summarise(&table, compiled.as_secs_f64(), answering.elapsed().as_secs_f64(), threads);
    }
    Ok(ExitCode::SUCCESS)
}

/// The table to answer from: a compiled FIB file mapped as it is, or a
/// table file (or the default table) compiled here, `auto` measuring the
/// keys of `calibration`.
fn compiled_table(args: &LookupArgs, calibration: Calibrations) -> Result<CompiledTable> {
    let fib_file =
        args.table.table.as_deref().filter(|path| !crate::is_stdio(path)).filter(|path| is_fib_file_at(path));
    let Some(path) = fib_file else {
        let options =
            CompileOptions { engines: args.engine.clone(), prefixes: args.prefix || args.all_matches, calibration };
        // Every engine name checked (whatever family it serves) before the table loads.
        crate::registered::compile_engine::<u32>(&options)?;
        let routes: RouteTable = args.table.load()?;
        return crate::registered::compile(routes, &options)
            .with_context(|| format!("compiling {}", args.table_name()));
    };
    let table = &args.table;
    table.refuse_for_compiled(path, &[(!args.engine.is_empty(), "--engine")])?;
    let compiled = CompiledTable::open(path)?;
    let families = [
        compiled.v4.as_ref().map(|family| family.has_prefixes()),
        compiled.v6.as_ref().map(|family| family.has_prefixes()),
    ];
    let option = if args.all_matches { "--all-matches" } else { "--prefix" };
    if (args.prefix || args.all_matches) && families.iter().flatten().any(|&prefixes| !prefixes) {
        bail!(
            "{}: compiled without the routes' prefixes; compile it with fibkit compile --prefix for {option}",
            path.display()
        );
    }
    Ok(compiled)
}

/// Answers a source's blocks with `answer`, a batch of them at a time on
/// `pool`, while a thread reads the next ones; hands each answered block
/// to `deliver`, in order.
fn answer_source(
    mut reader: SourceReader,
    pool: &rayon::ThreadPool,
    threads: usize,
    answer: impl Fn(&[u8], u64) -> Answered + Sync,
    mut deliver: impl FnMut(Answered) -> Result<()>,
) -> Result<()> {
    let batch_size = threads * BLOCKS_PER_THREAD;
    std::thread::scope(|scope| {
        let (blocks, received) = mpsc::sync_channel(batch_size);
        scope.spawn(move || loop {
            let block = reader.next_block();
            let last = !matches!(block, Ok(Some(_)));
            if blocks.send(block).is_err() || last {
                break;
            }
        });
        loop {
            let mut batch = Vec::with_capacity(batch_size);
            let mut finished = false;
            while batch.len() < batch_size && !finished {
                match received.recv() {
                    Ok(Ok(Some(block))) => batch.push(block),
                    Ok(Ok(None)) | Err(_) => finished = true,
                    Ok(Err(error)) => return Err(error),
                }
            }
            let answered: Vec<Answered> =
                pool.install(|| batch.par_iter().map(|(bytes, first_line)| answer(bytes, *first_line)).collect());
            for block in answered {
                deliver(block)?;
            }
            if finished {
                return Ok(());
            }
        }
    })
}

impl LookupArgs {
    fn table_name(&self) -> String {
        self.table.table.as_ref().map_or_else(|| "the default table".to_string(), |path| path.display().to_string())
    }
}

/// The delimiter as a byte (it must be ASCII).
fn delimiter_byte(delimiter: char) -> Result<u8> {
    match u8::try_from(delimiter) {
        Ok(byte) if byte.is_ascii() && byte != b'"' && byte != b'\n' && byte != b'\r' => Ok(byte),
        _ => bail!("--delimiter {delimiter:?}: give one ASCII character other than a quote or a line break"),
    }
}

/// What a run read and answered.
#[derive(Default)]
struct Totals {
    /// IPv4 and IPv6 addresses answered.
    counts: [u64; 2],
    unrouted: u64,
    skipped: u64,
}

impl Totals {
    /// Adds a block's counts and reports its problems (the first one fails
    /// the run under `--strict`).
    fn add(&mut self, block: &Answered, source: &str, strict: bool) -> Result<()> {
        for problem in &block.problems {
            let text = fibkit::error::shorten(&problem.text);
            if strict {
                bail!("{source}:{}: {}: {text:?} (--strict)", problem.line, problem.reason);
            }
            self.skipped += 1;
            if self.skipped <= REPORTED_PROBLEMS {
                eprintln!("warning: {source}:{}: {}: {text:?} (line skipped)", problem.line, problem.reason);
            }
        }
        self.counts[0] += block.counts[0];
        self.counts[1] += block.counts[1];
        self.unrouted += block.unrouted;
        Ok(())
    }

    fn summarise(&self, table: &CompiledTable, compile_seconds: f64, answer_seconds: f64, threads: usize) {
        let total = self.counts[0] + self.counts[1];
        // The engines serving, which says what `auto` chose.
        let engines: Vec<String> = ["IPv4", "IPv6"]
            .into_iter()
            .zip(table.engines())
            .filter_map(|(family, engine)| Some(format!("{family} by {}", engine?)))
            .collect();
        eprintln!(
            "fibkit lookup: table loaded and compiled in {compile_seconds:.3} s ({}); {total} addresses ({} IPv4, {} IPv6, \
             {} without a route, {} lines skipped) answered in {answer_seconds:.3} s on {threads} thread{}: {:.2} M/s",
            engines.join(", "),
            self.counts[0],
            self.counts[1],
            self.unrouted,
            self.skipped,
            if threads == 1 { "" } else { "s" },
            total as f64 / answer_seconds.max(1e-9) / 1e6,
        );
    }
}
