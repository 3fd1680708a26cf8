//! Text handling shared by the table formats: the binary-data check, format
//! detection, splitting lines into fields, and parsing values.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::Path;

use super::{warn, LoadError, LoadOptions, Position};
use crate::error::shorten;
use crate::nexthop::Label;

/// How the fields of a line are separated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Separator {
    /// Any run of blanks (spaces and tabs).
    Blank,
    /// Tabs only (fields may contain spaces).
    Tab,
    /// Commas, with CSV quoting.
    Comma,
}

/// What a file holds, as detected from its first data line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// `PREFIX VALUE` lines.
    Prefix(Separator),
    /// `START END VALUE` lines.
    Range(Separator),
}

/// Checks that `bytes` are text (no control bytes but tab, CR, LF; UTF-8);
/// a UTF-8 byte order mark at the start (spreadsheet exports write one) is
/// not part of the text.
pub(crate) fn as_text<'a>(file: &Path, bytes: &'a [u8]) -> Result<&'a str, LoadError> {
    if crate::file::is_fib_file(bytes) {
        let problem = "a compiled FIB file, not a table: fibkit lookup and Python's fibkit.open read it; other commands need the table it was compiled from";
        return Err(LoadError::new(file, Position::Offset(0), problem.to_string()));
    }
    if let Some(kind) = known_binary_format(bytes) {
        return Err(LoadError::new(
            file,
            Position::Offset(0),
            format!("{kind} data is not supported (tables are text, optionally gzip or bzip2 compressed)"),
        ));
    }
    if let Some(offset) = first_control_byte(bytes) {
        return Err(LoadError::new(
            file,
            Position::Offset(offset as u64),
            format!("binary data (byte 0x{:02x}), not a text routing table", bytes[offset]),
        ));
    }
    let text = std::str::from_utf8(bytes).map_err(|error| {
        LoadError::new(
            file,
            Position::Offset(error.valid_up_to() as u64),
            "invalid UTF-8 (binary data?), not a text routing table",
        )
    })?;
    Ok(text.strip_prefix('\u{feff}').unwrap_or(text))
}

/// Where the first byte that has no place in text is: a control byte other
/// than tab, CR and LF.
pub(crate) fn first_control_byte(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')) || b == 0x7f)
}

/// Names a compressed or binary format we recognise but do not read.
fn known_binary_format(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0xfd, b'7', b'z', b'X', b'Z', 0x00, ..] => Some("xz-compressed"),
        [0x28, 0xb5, 0x2f, 0xfd, ..] => Some("zstd-compressed"),
        [b'P', b'K', 0x03, 0x04, ..] => Some("zip-archived"),
        _ => None,
    }
}

/// Whether `line` is blank or a comment (`;` or `#` first).
#[inline]
pub(crate) fn is_comment_or_blank(line: &str) -> bool {
    match line.trim_start().as_bytes().first() {
        None => true,
        Some(b';' | b'#') => true,
        Some(_) => false,
    }
}

/// The lines of `text` with their 1-based numbers, without line ends: LF,
/// CRLF and a bare CR (old Mac exports) each end a line.
pub(crate) fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let current = rest?;
        match current.bytes().position(|b| b == b'\n' || b == b'\r') {
            None => {
                rest = None;
                Some(current)
            }
            Some(end) => {
                let next = if current[end..].starts_with("\r\n") { end + 2 } else { end + 1 };
                rest = Some(&current[next..]);
                Some(&current[..end])
            }
        }
    })
    .enumerate()
    .map(|(index, line)| (index + 1, line))
}

/// The first field of a data line and the separator that ends it.
fn first_field(line: &str) -> (&str, Separator) {
    let trimmed = line.trim_start();
    if let Some(quoted) = trimmed.strip_prefix('"') {
        let end = quoted.find('"').unwrap_or(quoted.len());
        return (&quoted[..end], Separator::Comma);
    }
    match trimmed.find([',', '\t', ' ']) {
        None => (trimmed, Separator::Blank),
        Some(end) => {
            let separator = match trimmed.as_bytes()[end] {
                b',' => Separator::Comma,
                b'\t' => Separator::Tab,
                _ => Separator::Blank,
            };
            (&trimmed[..end], separator)
        }
    }
}

/// Whether `text` reads as a range address (dotted, colon or decimal).
fn looks_like_address(text: &str) -> bool {
    parse_range_addr(text).is_ok()
}

/// Whether a line is a CSV or TSV header of column names (`start,end,asn`).
fn is_header(line: &str) -> bool {
    let (first, separator) = first_field(line);
    separator != Separator::Blank
        && first.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && !looks_like_address(first)
        && line.bytes().all(|b| b.is_ascii_alphanumeric() || b" _-\"\t,.".contains(&b))
}

/// Detects the layout from the first data line; returns it and, for a
/// CSV or TSV file with a header, the header's line number.
pub(crate) fn detect(file: &Path, text: &str) -> Result<(Layout, Option<usize>), LoadError> {
    let mut header = None;
    for (number, line) in numbered_lines(text) {
        if is_comment_or_blank(line) {
            continue;
        }
        let (first, separator) = first_field(line);
        if first.contains('/') {
            let separator = if separator == Separator::Comma { Separator::Comma } else { Separator::Blank };
            return Ok((Layout::Prefix(separator), header));
        }
        if looks_like_address(first) {
            return Ok((Layout::Range(separator), header));
        }
        if header.is_none() && is_header(line) {
            header = Some(number);
            continue;
        }
        return Err(LoadError::new(
            file,
            Position::Line(number),
            format!("not a routing table line: {:?} (expected PREFIX VALUE, or START END VALUE ranges)", shorten(line)),
        ));
    }
    Err(LoadError::new(file, Position::File, "no routes in the file (empty, or only comments)"))
}

/// Lines with columns after the last one their format has (`PREFIX VALUE
/// more`): counted while parsing, then reported once, as a warning naming the
/// first such line (an error with `strict`), so that a misread file (a
/// separator the loader did not expect) does not pass silently.
#[derive(Default)]
pub(crate) struct ExtraColumns {
    /// The first such line and its extra columns, shortened.
    first: Option<(usize, String)>,
    count: usize,
}

impl ExtraColumns {
    /// Notes that line `line` has the columns `extra` past the format's last.
    pub(crate) fn note(&mut self, line: usize, extra: &[&str]) {
        if extra.is_empty() {
            return;
        }
        self.count += 1;
        if self.first.is_none() {
            self.first = Some((line, shorten(&extra.join(" "))));
        }
    }

    /// The warning (or, with `strict`, the error) for the lines noted;
    /// `columns` names the format's columns (`PREFIX VALUE`).
    pub(crate) fn report(
        self,
        file: &Path,
        columns: &str,
        options: &LoadOptions,
        warnings: &mut Vec<String>,
    ) -> Result<(), LoadError> {
        let Some((line, extra)) = self.first else { return Ok(()) };
        let message =
            format!("{} line(s) have columns after {columns}, which are ignored (the first: {extra:?})", self.count);
        warn(file, Position::Line(line), message, options, warnings)
    }
}

/// Calls `visit(line, fields)` for every data line (comments, blank lines
/// and the `skip` line left out). Stops at the first error.
pub(crate) fn for_each_record<'a>(
    file: &Path,
    text: &'a str,
    separator: Separator,
    skip: Option<usize>,
    mut visit: impl FnMut(usize, &[&str]) -> Result<(), LoadError>,
) -> Result<(), LoadError> {
    let mut fields: Vec<&'a str> = Vec::with_capacity(8);
    match separator {
        Separator::Blank | Separator::Tab => {
            for (number, line) in numbered_lines(text) {
                if is_comment_or_blank(line) || Some(number) == skip {
                    continue;
                }
                fields.clear();
                if separator == Separator::Blank {
                    fields.extend(line.split_ascii_whitespace());
                } else {
                    fields.extend(line.split('\t').map(str::trim));
                }
                visit(number, &fields)?;
            }
            Ok(())
        }
        Separator::Comma => {
            let mut reader = csv::ReaderBuilder::new()
                .has_headers(false)
                .flexible(true)
                .trim(csv::Trim::All)
                .comment(Some(b'#'))
                .from_reader(text.as_bytes());
            let mut record = csv::StringRecord::new();
            // The csv reader places a record after comment lines at the
            // first comment: its line is counted here past them.
            let mut lines = LineCounter::new(text);
            loop {
                let more = reader.read_record(&mut record).map_err(|error| {
                    let line = error.position().map_or(0, |position| lines.line_at(position.byte()));
                    LoadError::new(file, Position::Line(line), format!("malformed CSV: {error}"))
                })?;
                if !more {
                    return Ok(());
                }
                let number = record.position().map_or(0, |position| lines.record_line(position.byte()));
                let first = record.get(0).unwrap_or("");
                if Some(number) == skip || first.starts_with([';', '#']) {
                    continue;
                }
                if record.len() == 1 && first.is_empty() {
                    continue;
                }
                let fields: Vec<&str> = record.iter().collect();
                visit(number, &fields)?;
            }
        }
    }
}

/// Line numbers of byte offsets met in increasing order: LF, CRLF and a
/// bare CR each end a line, as [`numbered_lines`] counts them.
struct LineCounter<'a> {
    text: &'a [u8],
    /// Where counting stopped, and the 1-based line there.
    at: usize,
    line: usize,
}

impl<'a> LineCounter<'a> {
    fn new(text: &'a str) -> Self {
        LineCounter { text: text.as_bytes(), at: 0, line: 1 }
    }

    /// The line of the record the csv reader places at byte `offset`:
    /// past the comment lines (`#` first) that start there.
    fn record_line(&mut self, offset: u64) -> usize {
        let mut at = (offset as usize).min(self.text.len());
        while self.text.get(at) == Some(&b'#') {
            let end =
                self.text[at..].iter().position(|&b| b == b'\n' || b == b'\r').map_or(self.text.len(), |end| at + end);
            at = if self.text[end..].starts_with(b"\r\n") { end + 2 } else { end + 1 };
        }
        self.line_at(at as u64)
    }

    /// The line of byte `offset` (not before the last one asked).
    fn line_at(&mut self, offset: u64) -> usize {
        let end = (offset as usize).min(self.text.len());
        for index in self.at..end.max(self.at) {
            match self.text[index] {
                b'\n' => self.line += 1,
                b'\r' if self.text.get(index + 1) != Some(&b'\n') => self.line += 1,
                _ => {}
            }
        }
        self.at = end.max(self.at);
        self.line
    }
}

/// Parses a route value as every text format's value column reads it: a
/// string of decimal digits is a [`Label::Number`] (leading zeros allowed,
/// at most `u64::MAX`), anything else must be an IPv4 or IPv6 address, a
/// [`Label::Addr`]. The error is a message without the file and line (an
/// empty `text` is a missing value column).
///
/// ```
/// use fibkit::load::parse_value;
/// use fibkit::nexthop::Label;
///
/// assert_eq!(parse_value("0064500"), Ok(Label::Number(64500)));
/// assert_eq!(parse_value("192.0.2.1"), Ok(Label::Addr("192.0.2.1".parse().unwrap())));
/// assert!(parse_value("AS64500").is_err());
/// ```
pub fn parse_value(text: &str) -> Result<Label, String> {
    if text.is_empty() {
        return Err("missing value column".to_string());
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse::<u64>().map(Label::Number).map_err(|_| format!("value {} is too large", shorten(text)));
    }
    text.parse::<IpAddr>()
        .map(Label::Addr)
        .map_err(|_| format!("non-numeric value {:?} (expected a number or an IP address)", shorten(text)))
}

/// An address in a range file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RangeAddr {
    /// Dotted IPv4.
    V4(u32),
    /// IPv6 notation.
    V6(u128),
    /// A decimal number (family decided per file).
    Number(u128),
}

/// Parses a range address: dotted IPv4, IPv6 notation, or decimal.
pub(crate) fn parse_range_addr(text: &str) -> Result<RangeAddr, String> {
    if text.is_empty() {
        return Err("missing address".to_string());
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return text
            .parse::<u128>()
            .map(RangeAddr::Number)
            .map_err(|_| format!("numeric address {} is out of range", shorten(text)));
    }
    let parsed = if text.contains(':') {
        text.parse::<Ipv6Addr>().map(|addr| RangeAddr::V6(u128::from(addr))).ok()
    } else {
        text.parse::<Ipv4Addr>().map(|addr| RangeAddr::V4(u32::from(addr))).ok()
    };
    parsed.ok_or_else(|| format!("malformed address {:?}", shorten(text)))
}
