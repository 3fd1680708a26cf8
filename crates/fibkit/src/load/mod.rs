//! Loading routing tables: text formats, compressed files, the synthetic
//! default table, and key files for replaying traffic.
//!
//! # Formats
//!
//! [`load_path`] reads a file, decompresses it when it starts with the gzip
//! (`1f 8b`) or bzip2 (`BZh1`..`BZh9`) magic bytes, and detects the format
//! from the content, never from the file name:
//!
//! | format | example line | notes |
//! |---|---|---|
//! | `.ipasn` (pyasn) | `1.0.64.0/18<TAB>18144` | `;` comment lines |
//! | plain prefix text | `2600:2004::/32 2001:7f8:4::1a0b:1` | whitespace separated |
//! | prefix CSV | `10.0.0.0/8,64500` | quoted fields allowed |
//! | range CSV (ip-location-db) | `"1.0.0.0","1.0.0.255","13335","Cloudflare"` | quoted fields allowed |
//! | range TSV (iptoasn) | `16777216<TAB>16777471<TAB>13335<TAB>US<TAB>CLOUDFLARENET` | fields split on tabs only |
//! | MRT (RFC 6396) | binary: RIB dumps, `BGP4MP` update files | see [`mrt`]: peers, values |
//! | update stream | `1418774413 a 202.70.88.0/21 195.66.226.74` | see [`updates`]; replayed from an empty table |
//! | MaxMind DB (`.mmdb`) | binary: GeoLite2, DB-IP, IPinfo | records of the paths [`LoadOptions::fields`] names (`mmdb` module) |
//!
//! An MRT file is recognised by its first record header ([`mrt`]); a text
//! file whose first data line is `UNIXTIME a|w PREFIX ...` is an update
//! stream ([`updates`]). The rest of this section is about the other text
//! formats.
//!
//! Lines that are blank or whose first non-blank character is `;` or `#`
//! are comments everywhere. The first other line decides the format:
//!
//! - its first field ends at the first `,` (or the line starts with `"`):
//!   comma separated values, parsed as CSV (quotes, `""` escapes and quoted
//!   line breaks as RFC 4180 allows); otherwise, when the first field ends at
//!   a tab and the line is a range line, tab separated; otherwise fields are
//!   separated by any run of blanks;
//! - a first field with a `/` makes a *prefix* file (`PREFIX VALUE`);
//!   anything else a *range* file (`START END VALUE`). A CSV or TSV file may
//!   start with one header line of words (such as `start,end,asn`); it is
//!   skipped.
//!
//! Columns after the value are ignored in every format (an `.ipasn` file has
//! none; range files carry country codes and AS names there), unless
//! [`LoadOptions::fields`] makes them a record's fields ([`crate::records`];
//! the `fields` module: by a header's names, or in order).
//!
//! Prefixes are parsed strictly ([`crate::addr::Prefix`]): host bits set, a
//! length above 32 (128), a malformed address are errors. IPv4 and IPv6 lines
//! may be mixed; they go to [`RouteTable::v4`] and [`RouteTable::v6`].
//!
//! A value is a decimal number (an ASN, a next-hop index) or an IPv4/IPv6
//! next-hop address ([`parse_value`]); it is interned through [`RouteTable::next_hops`], so a
//! [`Mapping::Modulo`] (`--nexthops N`) applies to every format.
//!
//! Range addresses are dotted/colon notation or decimal numbers. A file's
//! decimal ranges are IPv6 when they exceed `u32::MAX` (ip-location-db's
//! `*-ipv6-num` files), IPv4 when they fit it; a file with both is an error
//! naming the line that mixed them, never a guess. Ranges are inclusive
//! and turned into the fewest prefixes that cover them exactly, after
//! adjacent ranges with the same value are merged. The value `0` in a range
//! file means "not routed" (iptoasn marks unannounced space with AS 0): it
//! covers its addresses with no route.
//!
//! IPv6 routes inside `::ffff:0:0/96` (IPv4-mapped) are IPv4 routes: they
//! are moved to [`RouteTable::v4`] with a warning, since a mapped address
//! is looked up as IPv4 (the rule: [`fold_ipv4_mapped`]).
//!
//! # Conflicts: the later line wins
//!
//! Real files repeat prefixes and overlap ranges. The rule is the same for
//! every format: **a later line replaces an earlier one for the addresses
//! they share.** A prefix given twice keeps the value of its last line (the
//! earlier line is dropped entirely, so its value does not count as a next
//! hop); where a range overlaps earlier ranges, it takes over exactly the
//! shared addresses and the earlier ranges keep the rest. Ranges that are
//! merely out of order but disjoint are no conflict. Each conflict is
//! recorded in [`RouteTable::warnings`] naming both line numbers; with
//! [`LoadOptions::strict`] the first conflict is an error instead.
//!
//! # Truncated files
//!
//! A compressed stream that ends early (a cut-off download) keeps what was
//! decompressed: text formats keep every complete line and drop the partial
//! last one, MRT keeps every complete record; a warning names the byte
//! offset where the complete data ends, and with [`LoadOptions::strict`] it
//! is an error. A *corrupt* stream (bad checksum, invalid data) is an error:
//! what came out of it cannot be trusted. What a compressed file may
//! inflate to is bounded in proportion to the lines kept and to its size
//! (a decompression bomb is an error naming the file): see the
//! `compressed` module.
//!
//! # Errors
//!
//! Every [`LoadError`] names the file, the line (or, for binary data and
//! compression errors, the byte offset or the whole file) and the problem. A
//! file with no route at all is an error too. No loader panics on any input,
//! sizes an allocation by a length field it read, or loops without consuming
//! input; the fuzz targets in `fuzz/` and the property tests check this.
//!
//! # Key files
//!
//! [`load_keys`] and [`load_keys6`] read lookup keys for replaying traffic; see their docs.

use std::any::Any;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::addr::{Address, Family};
use crate::nexthop::{Mapping, NextHopTable};
use crate::records::RecordTable;
use crate::rib::{Rib, Rib4, Rib6};
use crate::NextHop;
pub(crate) use compressed::{decompress, Decompressed};

mod capture;
mod compressed;
mod fields;
mod grow;
mod host_routes;
mod keys;
mod mapped;
mod mmdb;
pub mod mrt;
/// BGP UPDATE messages, as a live session and an MRT file carry them.
pub use mrt::message as bgp;
mod peer;
mod prefixes;
mod ranges;
mod stream;
pub mod synthetic;
mod text;
pub mod updates;

/// The address-text parser lives beside the other address code
/// ([`crate::address_text`]); re-exported here for the callers that parse
/// keys beside tables.
pub use crate::address_text::{parse_address, parse_address_in, AddressError, AnyAddr};
pub use capture::CaptureSummary;
pub use compressed::decompressing_reader;
pub use grow::{grow, Growth, GrowthError};
pub use host_routes::{host_routes, HostRoutesError};
pub use keys::{keys6_from_bytes, keys_from_bytes, load_keys, load_keys6, load_keys_for, KeyFile};
pub use mapped::fold_ipv4_mapped;
pub use mrt::{list_peers, list_peers_bytes, Peer, PeerList, PeerSelector, ValueChoice};
pub use stream::{TimedUpdate, Timestamp, UpdateStream};
pub use text::parse_value;
pub use updates::{load_updates, updates_from_bytes, IpPrefix, Update};

/// A routing table as loaded: IPv4 and IPv6 RIBs sharing one next-hop table.
#[derive(Clone, Debug)]
pub struct RouteTable {
    /// Where the table came from (file name or generator description).
    pub name: String,
    /// IPv4 routes.
    pub v4: Rib4,
    /// IPv6 routes.
    pub v6: Rib6,
    /// The interned route values.
    pub next_hops: NextHopTable,
    /// The records routes carry, when their values are records (labels
    /// [`crate::nexthop::Label::Record`]); see [`crate::records`].
    pub records: Option<RecordTable>,
    /// Non-fatal findings (duplicates, overlaps), each naming its line.
    pub warnings: Vec<String>,
}

impl RouteTable {
    /// An empty table.
    pub fn new(name: impl Into<String>, mapping: Mapping) -> Self {
        RouteTable {
            name: name.into(),
            v4: Rib4::new(),
            v6: Rib6::new(),
            next_hops: NextHopTable::new(mapping),
            records: None,
            warnings: Vec::new(),
        }
    }

    /// The routes of family `A` ([`RouteTable::v4`] or [`RouteTable::v6`]).
    pub fn rib<A: Address>(&self) -> &Rib<A> {
        let rib: &dyn Any = match A::FAMILY {
            Family::Ipv4 => &self.v4,
            Family::Ipv6 => &self.v6,
        };
        rib.downcast_ref().expect("each family's RIB has its address type")
    }

    /// How many routes of `family` the table has.
    pub fn prefixes(&self, family: Family) -> usize {
        match family {
            Family::Ipv4 => self.v4.len(),
            Family::Ipv6 => self.v6.len(),
        }
    }

    /// How many distinct next hops the routes of `family` use (the
    /// [`RouteTable::next_hops`] table counts both families').
    pub fn next_hops_of(&self, family: Family) -> usize {
        let used: std::collections::HashSet<NextHop> = match family {
            Family::Ipv4 => self.v4.iter().map(|(_, hop)| hop).collect(),
            Family::Ipv6 => self.v6.iter().map(|(_, hop)| hop).collect(),
        };
        used.len()
    }

    /// Number of routes, IPv4 and IPv6 together.
    pub fn len(&self) -> usize {
        self.v4.len() + self.v6.len()
    }

    /// Whether the table holds no route at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Where in a file a problem is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Position {
    /// The file as a whole.
    File,
    /// A line (1-based).
    Line(usize),
    /// A byte offset (0-based) in the decompressed data.
    Offset(u64),
}

/// A loading error: the file, the position and the problem.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct LoadError {
    /// The file's path as given.
    pub file: PathBuf,
    /// Where in the file.
    pub position: Position,
    /// What is wrong.
    pub message: String,
}

impl LoadError {
    /// An error about `file` at `position`.
    pub fn new(file: &Path, position: Position, message: impl Into<String>) -> Self {
        LoadError { file: file.to_path_buf(), position, message: message.into() }
    }

    /// The line the error is on, if it is about a line.
    pub fn line(&self) -> Option<usize> {
        match self.position {
            Position::Line(line) => Some(line),
            _ => None,
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Position::File => write!(f, "{}: {}", self.file.display(), self.message),
            Position::Line(line) => write!(f, "{}:{}: {}", self.file.display(), line, self.message),
            Position::Offset(offset) => {
                write!(f, "{}: at byte {}: {}", self.file.display(), offset, self.message)
            }
        }
    }
}

/// How to load a table.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// How route values become next-hop indexes.
    pub mapping: Mapping,
    /// Whether warnings (duplicates, overlaps, truncated data) are errors.
    pub strict: bool,
    /// Which peer's routes an MRT file gives (`--peer`); see [`mrt`].
    pub peer: PeerSelector,
    /// What an MRT route's value is (`--value`); see [`mrt`].
    pub value: ValueChoice,
    /// The fields of records to load (`--fields`), for text files with
    /// columns after the value; `None`: one value per route. See
    /// [`crate::records`] and the module docs.
    pub fields: Option<crate::records::FieldSpec>,
}

/// The name a table loaded from `path` goes by: the file's name.
pub fn table_name(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |name| name.to_string_lossy().into_owned())
}

/// Loads a routing table file: format detected by content, `.gz` and `.bz2`
/// detected by their magic bytes (see the [module docs](self)). The path
/// `-` reads standard input (so do [`load_updates`] and [`load_keys`]).
pub fn load_path(path: &Path, options: &LoadOptions) -> Result<RouteTable, LoadError> {
    let raw = read_file(path)?;
    load_bytes(path, &raw, options)
}

/// Loads a routing table from bytes already in memory; `file` names them in
/// errors and becomes the table's name. Compressed bytes are decompressed.
pub fn load_bytes(file: &Path, bytes: &[u8], options: &LoadOptions) -> Result<RouteTable, LoadError> {
    fields::check_mapping(file, options)?;
    let data = decompress(file, bytes)?;
    let mut table = RouteTable::new(table_name(file), options.mapping);
    if mrt::is_mrt(&data.bytes) {
        mrt::load_table(file, &data, options, &mut table)?;
    } else if mmdb::is_mmdb(&data.bytes) {
        reject_mrt_options(file, options, "a MaxMind DB file")?;
        mmdb::load_table(file, &data.bytes, options, &mut table)?;
    } else {
        let text = complete_lines(file, &data, options, &mut table.warnings)?;
        let text = text::as_text(file, text)?;
        reject_mrt_options(file, options, "a text table")?;
        if updates::is_text_updates(text) {
            reject_fields(file, options, "an update stream")?;
            let mut stream = updates::parse_text(file, text, options)?;
            table.warnings.append(&mut stream.warnings);
            stream.apply_to(&mut table);
        } else {
            match text::detect(file, text)? {
                (text::Layout::Prefix(separator), header) => {
                    prefixes::load(file, text, separator, header, options, &mut table)?;
                }
                (text::Layout::Range(separator), header) => {
                    ranges::load(file, text, separator, header, options, &mut table)?;
                }
            }
        }
    }
    if let Some(folded) = fold_ipv4_mapped(&mut table) {
        table.warnings.push(LoadError::new(file, Position::File, folded).to_string());
    }
    if table.is_empty() {
        let why = match table.warnings.last() {
            Some(last) => format!(" ({} warning(s), the last: {last})", table.warnings.len()),
            None => String::new(),
        };
        return Err(LoadError::new(file, Position::File, format!("no routes in the file{why}")));
    }
    Ok(table)
}

/// Fails when `--fields` was given for a format whose values are not
/// records.
fn reject_fields(file: &Path, options: &LoadOptions, what: &str) -> Result<(), LoadError> {
    match &options.fields {
        Some(fields) => Err(LoadError::new(
            file,
            Position::File,
            format!("--fields {fields} reads the columns of a text table or the paths of a MaxMind DB file, but this is {what}"),
        )),
        None => Ok(()),
    }
}

/// Fails when MRT-only options (`--peer`, `--value`) were given for a file
/// that is not MRT, rather than ignoring them silently.
pub(crate) fn reject_mrt_options(file: &Path, options: &LoadOptions, what: &str) -> Result<(), LoadError> {
    if options.peer != PeerSelector::MostRoutes {
        return Err(LoadError::new(
            file,
            Position::File,
            format!("--peer {} selects a peer of an MRT file, but this is {what}", options.peer),
        ));
    }
    if options.value != ValueChoice::NextHop {
        return Err(LoadError::new(
            file,
            Position::File,
            format!(
                "--value {} applies to MRT files, but this is {what} (its values are taken as written)",
                options.value
            ),
        ));
    }
    Ok(())
}

/// Records a warning, or with `strict` returns it as an error.
pub(crate) fn warn(
    file: &Path,
    position: Position,
    message: String,
    options: &LoadOptions,
    warnings: &mut Vec<String>,
) -> Result<(), LoadError> {
    if options.strict {
        return Err(LoadError::new(file, position, format!("{message}; an error in strict mode")));
    }
    warnings.push(LoadError::new(file, position, message).to_string());
    Ok(())
}

/// For line-based formats: when the compressed stream was cut off, the
/// bytes up to the last complete line (the rest is a partial line), and a
/// warning (an error with `strict`) naming where the data ended; an error
/// when not even one line is complete. Bytes after the compressed stream
/// are a warning too.
pub(crate) fn complete_lines<'a>(
    file: &Path,
    data: &'a Decompressed<'_>,
    options: &LoadOptions,
    warnings: &mut Vec<String>,
) -> Result<&'a [u8], LoadError> {
    let bytes = &data.bytes[..];
    if let Some(trailing) = &data.trailing {
        warn(file, trailing.position(), trailing.message(), options, warnings)?;
    }
    let Some(cut) = &data.cut else { return Ok(bytes) };
    let kept = bytes.iter().rposition(|&b| b == b'\n' || b == b'\r').map_or(0, |end| end + 1);
    if kept == 0 {
        return Err(LoadError::new(file, Position::Offset(0), format!("{cut}, before the end of the first line")));
    }
    // Line ends as `numbered_lines` counts them: LF, CRLF, or a bare CR.
    let complete = &bytes[..kept];
    let lines = complete
        .iter()
        .enumerate()
        .filter(|&(at, &b)| b == b'\n' || (b == b'\r' && complete.get(at + 1) != Some(&b'\n')))
        .count();
    let dropped = if kept < bytes.len() {
        format!("; the partial line {} after it ({} bytes) is dropped", lines + 1, bytes.len() - kept)
    } else {
        String::new()
    };
    warn(
        file,
        Position::Offset(bytes.len() as u64),
        format!("{cut}: the data ends here; kept the {lines} complete lines before it{dropped}"),
        options,
        warnings,
    )?;
    Ok(&bytes[..kept])
}

/// A later line that replaced (part of) an earlier one.
pub(crate) struct Conflict {
    /// The later line.
    line: usize,
    /// What happened, naming the earlier line.
    message: String,
}

/// Records conflicts as warnings in line order, or with `strict` fails on
/// the first one.
pub(crate) fn report_conflicts(
    file: &Path,
    mut conflicts: Vec<Conflict>,
    options: &LoadOptions,
    table: &mut RouteTable,
) -> Result<(), LoadError> {
    conflicts.sort_by_key(|conflict| conflict.line);
    if options.strict {
        if let Some(first) = conflicts.into_iter().next() {
            return Err(LoadError::new(
                file,
                Position::Line(first.line),
                format!("{}; an error in strict mode", first.message),
            ));
        }
        return Ok(());
    }
    table.warnings.extend(
        conflicts.into_iter().map(|conflict| format!("{}:{}: {}", file.display(), conflict.line, conflict.message)),
    );
    Ok(())
}

/// Reads `path` whole, as stored (compressed or not); the path `-` is
/// standard input, as in Unix tools.
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>, LoadError> {
    let cannot_read = |error: std::io::Error| LoadError::new(path, Position::File, format!("cannot read: {error}"));
    if path == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut bytes).map_err(cannot_read)?;
        return Ok(bytes);
    }
    // A device has no end to read to (`/dev/zero`); a FIFO is a stream
    // like standard input, and read as one.
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let file_type = std::fs::metadata(path).map_err(cannot_read)?.file_type();
        if file_type.is_char_device() || file_type.is_block_device() || file_type.is_dir() {
            let kind = crate::file::kind::kind(&file_type);
            return Err(LoadError::new(path, Position::File, format!("{kind}, not a table file or a stream")));
        }
    }
    std::fs::read(path).map_err(cannot_read)
}

#[cfg(test)]
mod tests;
