//! What `fibkit lookup` writes: each answered address as a line of text,
//! CSV or JSON (formats: the [module docs](super)), the CSV header line,
//! and the values' text, prepared once per table. The other lookup
//! modules call this one; it calls none of them but the input layout's
//! ([`Layout`]).

use std::io::Write;
use std::ops::Range;

use anyhow::{bail, Result};
use clap::ValueEnum;
use fibkit::compiled::CompiledFamily;
use fibkit::nexthop::{Label, Mapping};
use fibkit::records::{write_csv_cell, FieldSpec, Records};
use fibkit::{Address, NextHop, Prefix, NO_ROUTE};

use super::fields::Layout;

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

/// The value text of every next hop, for text and for JSON.
pub enum Values {
    /// With distinct values: the input's labels (JSON: numbers as numbers,
    /// addresses as strings), by next hop (0: no route).
    Labels { text: Strings, json: Strings },
    /// With `--nexthops N`: the next-hop index itself.
    Indexes,
    /// With records: each chosen field's cells (text: control characters
    /// as spaces; CSV: quoted where needed), and the JSON object of them.
    Records { names: Vec<String>, text: Vec<Strings>, csv: Vec<Strings>, json: Strings },
}

/// Strings by index, back to back in one buffer with 16 bytes to spare at
/// its end (so [`append`] copies any of them in one move). String `i` is
/// `bytes[ends[i - 1] .. ends[i]]` (the first from 0): four bytes an
/// entry, so that those of the 46,823 ASNs of a full table stay in L2
/// cache.
pub struct Strings {
    bytes: Vec<u8>,
    ends: Vec<u32>,
}

impl Strings {
    fn new(strings: impl Iterator<Item = String>) -> Result<Self> {
        let mut packed = Strings { bytes: Vec::new(), ends: Vec::new() };
        for string in strings {
            packed.bytes.extend_from_slice(string.as_bytes());
            let Ok(end) = u32::try_from(packed.bytes.len()) else {
                bail!("the table's values take more than 4 GiB as text");
            };
            packed.ends.push(end);
        }
        packed.bytes.extend_from_slice(&[0; 16]);
        Ok(packed)
    }

    /// Appends string `index` (nothing past the last).
    #[inline]
    fn write(&self, index: usize, out: &mut Vec<u8>) {
        if let Some(&end) = self.ends.get(index) {
            let start = index.checked_sub(1).map_or(0, |before| self.ends[before] as usize);
            append(out, &self.bytes, start..end as usize);
        }
    }
}

impl Values {
    /// The values of the table's next hops (`value_text`: the input's
    /// label, or the index with `--nexthops`).
    ///
    /// With records, `fields` chooses the fields to write (`None`: all);
    /// without, it must be `None`.
    pub fn new(values: &fibkit::compiled::Values, fields: Option<&FieldSpec>) -> Result<Self> {
        if let Some(records) = values.records() {
            return Self::records(records, fields);
        }
        if let Some(fields) = fields {
            bail!("--fields {fields}: the table's values are not records (a compiled file keeps the fields it was compiled with --fields)");
        }
        if values.mapping() != Mapping::Distinct {
            return Ok(Values::Indexes);
        }
        let text = |hop| values.text(hop).unwrap_or_default().to_string();
        let json = |hop| match values.label(hop) {
            Some(Label::Addr(addr)) => format!("\"{addr}\""),
            Some(Label::Number(number)) => number.to_string(),
            Some(Label::Record(_)) | None => "null".to_string(),
        };
        let hops = 0..=values.max_index();
        Ok(Values::Labels { text: Strings::new(hops.clone().map(text))?, json: Strings::new(hops.map(json))? })
    }

    /// The chosen fields of `records` (`None` or `*`: all).
    fn records(records: &Records, fields: Option<&FieldSpec>) -> Result<Self> {
        let chosen: Vec<usize> = match fields {
            None => (0..records.fields().len()).collect(),
            Some(spec) => {
                let mut chosen = Vec::new();
                for (name, _) in &spec.fields {
                    let Some(index) = records.field_index(name) else {
                        let names: Vec<&str> = records.fields().map(|field| field.name.as_str()).collect();
                        bail!("--fields: the table has no field {name:?} (its fields: {})", names.join(", "));
                    };
                    chosen.push(index);
                }
                if spec.all {
                    let rest: Vec<usize> =
                        (0..records.fields().len()).filter(|index| !chosen.contains(index)).collect();
                    chosen.extend(rest);
                }
                chosen
            }
        };
        let hops = 0..=records.len() as NextHop;
        let cell = |hop, field, csv: bool| {
            let text = records.get(hop, field).map(|value| value.to_string()).unwrap_or_default();
            if csv {
                let mut quoted = String::new();
                write_csv_cell(&text, &mut quoted);
                quoted
            } else {
                text.replace(|c: char| c.is_control(), " ")
            }
        };
        let strings = |csv| -> Result<Vec<Strings>> {
            chosen.iter().map(|&field| Strings::new(hops.clone().map(|hop| cell(hop, field, csv)))).collect()
        };
        let json = |hop| {
            let mut out = Vec::new();
            records.write_json(hop, &chosen, &mut out);
            String::from_utf8(out).unwrap_or_default()
        };
        let names =
            chosen.iter().filter_map(|&field| records.fields().nth(field).map(|field| field.name.clone())).collect();
        Ok(Values::Records {
            names,
            text: strings(false)?,
            csv: strings(true)?,
            json: Strings::new(hops.clone().map(json))?,
        })
    }

    /// Appends the value of `hop` (nothing for [`NO_ROUTE`]): a record's
    /// fields as cells separated by `separator`, quoted for CSV.
    #[inline]
    pub fn write_text(&self, hop: NextHop, format: Format, separator: u8, out: &mut Vec<u8>) {
        match self {
            Values::Labels { text, .. } => text.write(hop as usize, out),
            Values::Indexes if hop != NO_ROUTE => write_decimal(hop, out),
            Values::Indexes => {}
            Values::Records { text, csv, .. } => {
                let cells = if format == Format::Csv { csv } else { text };
                for (index, cells) in cells.iter().enumerate() {
                    if index > 0 {
                        out.push(separator);
                    }
                    cells.write(hop as usize, out);
                }
            }
        }
    }

    /// The names of the value's columns in a CSV header.
    pub fn names(&self) -> Vec<&str> {
        match self {
            Values::Records { names, .. } => names.iter().map(String::as_str).collect(),
            _ => vec!["value"],
        }
    }

    /// Appends the value of `hop` as JSON (`null` for [`NO_ROUTE`]).
    #[inline]
    pub fn write_json(&self, hop: NextHop, out: &mut Vec<u8>) {
        match self {
            Values::Labels { json, .. } | Values::Records { json, .. } => json.write(hop as usize, out),
            Values::Indexes if hop != NO_ROUTE => write_decimal(hop, out),
            Values::Indexes => out.extend_from_slice(b"null"),
        }
    }
}

/// Appends `value` in decimal.
pub fn write_decimal(mut value: u32, out: &mut Vec<u8>) {
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

/// How answers are written: the values' text, where the address stands in
/// the input line (CSV output keeps the line), the format and `--prefix`.
#[derive(Clone, Copy)]
pub struct Style<'a> {
    pub values: &'a Values,
    pub layout: Layout,
    pub format: Format,
    /// Whether to write the matched prefix and its length.
    pub prefix: bool,
}

/// The CSV header line to write before a source's rows: the first one only
/// (later sources' headers are the same columns).
/// `header`: the source's own header line, if it has one.
pub fn header_line(style: Style<'_>, header: Option<&[u8]>, written: &mut bool) -> Option<Vec<u8>> {
    if style.format != Format::Csv || *written {
        return None;
    }
    let (mut line, separator) = match (style.layout, header) {
        (Layout::Lines, _) => (b"address".to_vec(), b','),
        (Layout::Column { delimiter, .. }, Some(header)) => (header.to_vec(), delimiter),
        (Layout::Column { .. }, None) => return None,
    };
    *written = true;
    let prefix: &[&str] = if style.prefix { &["prefix", "prefix_len"] } else { &[] };
    for name in style.values.names().into_iter().chain(prefix.iter().copied()) {
        line.push(separator);
        line.extend_from_slice(name.as_bytes());
    }
    line.push(b'\n');
    Some(line)
}

/// Appends `source[range]` to `out`; a short piece with 16 bytes readable
/// in `source` and 16 free in `out` goes as one 16-byte copy, not a call.
#[inline(always)]
pub fn append(out: &mut Vec<u8>, source: &[u8], range: Range<usize>) {
    let len = range.len();
    if len <= 16 && range.start + 16 <= source.len() && out.capacity() - out.len() >= 16 {
        // SAFETY: source[range.start..range.start + 16] is in bounds (checked),
        // and out has 16 bytes of spare capacity (checked); only the first
        // `len` of them become part of `out`.
        unsafe {
            std::ptr::copy_nonoverlapping(source.as_ptr().add(range.start), out.as_mut_ptr().add(out.len()), 16);
            out.set_len(out.len() + len);
        }
    } else {
        out.extend_from_slice(&source[range]);
    }
}

/// Appends `prefix` as `ADDRESS/LENGTH`: an IPv4 prefix octet by octet
/// (no allocation: `--prefix` writes one a line), IPv6 as the standard
/// library writes it.
pub fn write_prefix<A: Address>(prefix: Prefix<A>, out: &mut Vec<u8>) {
    if A::BITS == 32 {
        let addr = prefix.addr().to_u128() as u32;
        for (index, octet) in addr.to_be_bytes().into_iter().enumerate() {
            if index > 0 {
                out.push(b'.');
            }
            write_decimal(u32::from(octet), out);
        }
    } else {
        let _ = write!(out, "{}", std::net::Ipv6Addr::from(prefix.addr().to_u128()));
    }
    out.push(b'/');
    write_decimal(u32::from(prefix.prefix_len()), out);
}

/// Formats answered rows into a block's output, as `style` says.
pub struct Writer<'a, 'b> {
    pub style: Style<'a>,
    pub out: &'b mut Vec<u8>,
    /// Rows written without a route.
    pub unrouted: u64,
}

impl Writer<'_, '_> {
    /// The row of the address at `field` of the line at `line` of `block`,
    /// answered `answer` by `family`.
    pub fn row<A: Address>(
        &mut self,
        block: &[u8],
        line: Range<usize>,
        field: Range<usize>,
        family: Option<&CompiledFamily<A>>,
        answer: u32,
    ) {
        let hop = family.map_or(NO_ROUTE, |family| family.next_hop(answer));
        self.unrouted += u64::from(hop == NO_ROUTE);
        let route = if self.style.prefix { family.and_then(|family| family.route(answer)) } else { None };
        self.write_row(block, line, field, hop, route);
    }

    /// A row for each route covering `addr`, least specific first (one
    /// without a route if none does), for the address at `field` of the
    /// line at `line` of `block`: `--all-matches`.
    pub fn covering_rows<A: Address>(
        &mut self,
        block: &[u8],
        line: Range<usize>,
        field: Range<usize>,
        family: Option<&CompiledFamily<A>>,
        addr: A,
    ) {
        let mut routes = family.and_then(|family| family.covering(Prefix::host(addr)).ok()).into_iter().flatten();
        let Some(first) = routes.next() else {
            self.unrouted += 1;
            return self.write_row::<A>(block, line, field, NO_ROUTE, None);
        };
        for (prefix, hop) in std::iter::once(first).chain(routes) {
            self.write_row(block, line.clone(), field.clone(), hop, Some((prefix, hop)));
        }
    }

    /// One row: the address at `field` of the line at `line`, its next hop
    /// `hop` and its route.
    fn write_row<A: Address>(
        &mut self,
        block: &[u8],
        line: Range<usize>,
        field: Range<usize>,
        hop: NextHop,
        route: Option<(Prefix<A>, NextHop)>,
    ) {
        self.out.reserve(128);
        let separator = match (self.style.format, self.style.layout) {
            (Format::Text, _) => b'\t',
            (Format::Csv, Layout::Column { delimiter, .. }) => delimiter,
            (Format::Csv, Layout::Lines) => b',',
            (Format::Json, _) => return self.json(&block[field], hop, route),
        };
        match (self.style.format, self.style.layout) {
            (Format::Csv, Layout::Column { .. }) => append(self.out, block, line),
            _ => append(self.out, block, field),
        }
        self.out.push(separator);
        self.style.values.write_text(hop, self.style.format, separator, self.out);
        if self.style.prefix {
            self.out.push(separator);
            if let Some((prefix, _)) = route {
                write_prefix(prefix, self.out);
            }
            if self.style.format == Format::Csv {
                self.out.push(separator);
                if let Some((prefix, _)) = route {
                    write_decimal(u32::from(prefix.prefix_len()), self.out);
                }
            }
        }
        self.out.push(b'\n');
    }

    /// One JSON object: a valid address needs no escaping.
    fn json<A: Address>(&mut self, field: &[u8], hop: NextHop, route: Option<(Prefix<A>, NextHop)>) {
        self.out.extend_from_slice(b"{\"address\":\"");
        self.out.extend_from_slice(field);
        self.out.extend_from_slice(b"\",\"value\":");
        self.style.values.write_json(hop, self.out);
        if self.style.prefix {
            match route {
                Some((prefix, _)) => {
                    self.out.extend_from_slice(b",\"prefix\":\"");
                    write_prefix(prefix, self.out);
                    self.out.extend_from_slice(b"\",\"prefix_len\":");
                    write_decimal(u32::from(prefix.prefix_len()), self.out);
                }
                None => self.out.extend_from_slice(b",\"prefix\":null,\"prefix_len\":null"),
            }
        }
        self.out.extend_from_slice(b"}\n");
    }
}
