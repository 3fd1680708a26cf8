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
//! for an address without a route. A line whose field is not an address
//! is reported on stderr with its source and line, and skipped (with
//! `--strict`, the run fails there).

mod block;
mod fields;
mod source;

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use clap::{Args, ValueEnum};
use fibkit::compiled::{CompileOptions, CompiledTable};
use fibkit::file::is_fib_file;
use fibkit::load::{parse_address, RouteTable, ValueChoice};
use fibkit::nexthop::{Label, Mapping};
use fibkit::{NextHop, NO_ROUTE};
use rayon::prelude::*;

use crate::TableArgs;
use block::{Answered, Context};
use source::SourceReader;

/// Arguments of `fibkit lookup`.
#[derive(Args, Debug)]
pub struct LookupArgs {
    #[command(flatten)]
    table: TableArgs,
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
    /// (1-based) of CSV or TSV lines; a first line whose column is no
    /// address is a header.
    #[arg(long, value_name = "NAME|INDEX")]
    column: Option<String>,
    /// The CSV delimiter, one character [default: a tab if the first line
    /// has one, else a comma].
    #[arg(long, value_name = "CHAR")]
    delimiter: Option<char>,
    /// Also answer the matched prefix (and in CSV and JSON its length).
    #[arg(long)]
    prefix: bool,
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

/// Output formats (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Tab separated: address, value, prefix.
    Text,
    /// Comma separated (the input's delimiter with --column), with a header.
    Csv,
    /// One JSON object a line.
    Json,
}

/// Where the address stands in a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// The whole line (white space around it ignored).
    Lines,
    /// Field `index` (0-based) of delimited lines.
    Column { index: usize, delimiter: u8 },
}

/// The value text of every next hop, for text and for JSON.
pub enum Values {
    /// With distinct values: the input's labels (JSON: numbers as numbers,
    /// addresses as strings), by next hop (0: no route).
    Labels { text: Strings, json: Strings },
    /// With `--nexthops N`: the next-hop index itself.
    Indexes,
}

/// Strings by index, back to back in one buffer with 16 bytes to spare at
/// its end (so [`block::append`] copies any of them in one move). A span
/// is `start << 8 | length`: four bytes an entry, so that the spans of the
/// 46,823 ASNs of a full table stay in L2 cache.
pub struct Strings {
    bytes: Vec<u8>,
    spans: Vec<u32>,
}

impl Strings {
    fn new(strings: impl Iterator<Item = String>) -> Result<Self> {
        let mut packed = Strings { bytes: Vec::new(), spans: Vec::new() };
        for string in strings {
            let start = u32::try_from(packed.bytes.len()).ok().filter(|&start| start < 1 << 24);
            let (Some(start), Ok(len)) = (start, u8::try_from(string.len())) else {
                bail!("the table's values take more than 16 MiB, or one more than 255 bytes, as text");
            };
            packed.bytes.extend_from_slice(string.as_bytes());
            packed.spans.push(start << 8 | u32::from(len));
        }
        packed.bytes.extend_from_slice(&[0; 16]);
        Ok(packed)
    }

    /// Appends string `index` (nothing past the last).
    #[inline]
    fn write(&self, index: usize, out: &mut Vec<u8>) {
        if let Some(&span) = self.spans.get(index) {
            let start = (span >> 8) as usize;
            block::append(out, &self.bytes, start..start + (span & 0xff) as usize);
        }
    }
}

impl Values {
    /// The values of the table's next hops (`value_text`: the input's
    /// label, or the index with `--nexthops`).
    fn new(table: &CompiledTable) -> Result<Self> {
        let values = &table.values;
        if values.mapping() != Mapping::Distinct {
            return Ok(Values::Indexes);
        }
        let text = |hop| values.text(hop).unwrap_or_default().to_string();
        let json = |hop| match values.label(hop) {
            Some(Label::Addr(addr)) => format!("\"{addr}\""),
            Some(Label::Number(number)) => number.to_string(),
            None => "null".to_string(),
        };
        let hops = 0..=values.max_index();
        Ok(Values::Labels { text: Strings::new(hops.clone().map(text))?, json: Strings::new(hops.map(json))? })
    }

    /// Appends the value of `hop` (nothing for [`NO_ROUTE`]).
    #[inline]
    fn write_text(&self, hop: NextHop, out: &mut Vec<u8>) {
        match self {
            Values::Labels { text, .. } => text.write(hop as usize, out),
            Values::Indexes if hop != NO_ROUTE => write_decimal(hop, out),
            Values::Indexes => {}
        }
    }

    /// Appends the value of `hop` as JSON (`null` for [`NO_ROUTE`]).
    #[inline]
    fn write_json(&self, hop: NextHop, out: &mut Vec<u8>) {
        match self {
            Values::Labels { json, .. } => json.write(hop as usize, out),
            Values::Indexes if hop != NO_ROUTE => write_decimal(hop, out),
            Values::Indexes => out.extend_from_slice(b"null"),
        }
    }
}

/// Appends `value` in decimal.
fn write_decimal(mut value: u32, out: &mut Vec<u8>) {
    let mut digits = [0u8; 10];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[start..]);
}

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
    let started = Instant::now();
    let table = compiled_table(args)?;
    let values = Values::new(&table)?;
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
            let mut reader = SourceReader::open(source)?;
            let layout = reader.layout(args.column.as_deref(), delimiter)?;
            let context = Context { table: &table, values: &values, layout, format: args.format, prefix: args.prefix };
            if let Some(header) = header_line(&reader, &context, &mut header_written) {
                sender.send(header).context("writer stopped")?;
            }
            let name = reader.name().to_string();
            let answer = |block: &[u8], first_line| block::answer(block, first_line, &context);
            answer_source(reader, &pool, threads, answer, |block| {
                totals.add(&block, &name, args.table.strict)?;
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
        totals.summarise(compiled.as_secs_f64(), answering.elapsed().as_secs_f64(), threads);
    }
    Ok(ExitCode::SUCCESS)
}

/// The table to answer from: a compiled FIB file mapped as it is, or a
/// table file (or the default table) compiled here.
fn compiled_table(args: &LookupArgs) -> Result<CompiledTable> {
    let fib_file = args.table.table.as_deref().filter(|path| !crate::is_stdio(path)).filter(|path| {
        let mut magic = [0u8; 8];
        File::open(path).and_then(|mut file| file.read_exact(&mut magic)).is_ok_and(|()| is_fib_file(&magic))
    });
    let Some(path) = fib_file else {
        let options = CompileOptions { engines: args.engine.clone(), prefixes: args.prefix };
        // Every engine name checked (whatever family it serves) before the table loads.
        options.engine::<u32>()?;
        let routes: RouteTable = args.table.load()?;
        return CompiledTable::build(routes, &options).with_context(|| format!("compiling {}", args.table_name()));
    };
    let table = &args.table;
    let fixed = [
        (!args.engine.is_empty(), "--engine"),
        (table.nexthops.is_some(), "--nexthops"),
        (table.peer.is_some() || table.value != ValueChoice::NextHop || table.peers, "--peer, --value and --peers"),
    ];
    if let Some((_, option)) = fixed.iter().find(|(given, _)| *given) {
        bail!("{}: {option} cannot change a compiled FIB file; give them to fibkit compile", path.display());
    }
    let compiled = CompiledTable::open(path)?;
    let families = [
        compiled.v4.as_ref().map(|family| family.has_prefixes()),
        compiled.v6.as_ref().map(|family| family.has_prefixes()),
    ];
    if args.prefix && families.iter().flatten().any(|&prefixes| !prefixes) {
        bail!(
            "{}: compiled without the routes' prefixes; compile it with fibkit compile --prefix for --prefix",
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

/// The CSV header line to write before a source's rows: the first one only
/// (later sources' headers are the same columns).
fn header_line(reader: &SourceReader, context: &Context<'_>, written: &mut bool) -> Option<Vec<u8>> {
    if context.format != Format::Csv || *written {
        return None;
    }
    let (mut line, separator) = match (context.layout, reader.header()) {
        (Layout::Lines, _) => (b"address".to_vec(), b','),
        (Layout::Column { delimiter, .. }, Some(header)) => (header.to_vec(), delimiter),
        (Layout::Column { .. }, None) => return None,
    };
    *written = true;
    for name in ["value", "prefix", "prefix_len"].into_iter().take(if context.prefix { 3 } else { 1 }) {
        line.push(separator);
        line.extend_from_slice(name.as_bytes());
    }
    line.push(b'\n');
    Some(line)
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

    fn summarise(&self, compile_seconds: f64, answer_seconds: f64, threads: usize) {
        let total = self.counts[0] + self.counts[1];
        eprintln!(
            "fibkit lookup: table loaded and compiled in {compile_seconds:.3} s; {total} addresses ({} IPv4, {} IPv6, \
             {} without a route, {} lines skipped) answered in {answer_seconds:.3} s on {threads} thread{}: {:.2} M/s",
            self.counts[0],
            self.counts[1],
            self.unrouted,
            self.skipped,
            if threads == 1 { "" } else { "s" },
            total as f64 / answer_seconds.max(1e-9) / 1e6,
        );
    }
}
