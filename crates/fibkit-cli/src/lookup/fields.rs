//! Where the address stands in a line ([`Layout`]), and the address column
//! of CSV and TSV lines (`fibkit lookup --column`).
//!
//! Fields are split as RFC 4180 says, one line at a time: a field that
//! starts with `"` runs to the next `"` that is not doubled, and its value
//! is what stands between the quotes. A quoted field may not span lines
//! (an address never needs to): a line with an odd number of quotes, in
//! any column, holds a quote left open (or closes one opened on an earlier
//! line), and is refused by its line number, never echoed as a row whose
//! quote would swallow the rows after it in the output.

use std::fmt;

use fibkit::load::parse_address;

/// Where the address stands in a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// The whole line (white space around it ignored).
    Lines,
    /// Field `index` (0-based) of delimited lines.
    Column { index: usize, delimiter: u8 },
}

/// Why a line has no field at the column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldError {
    /// The line has only this many fields.
    Missing { fields: usize, wanted: usize },
    /// A quoted field is not closed on its line (in any column: a quoted
    /// line break).
    Unterminated,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FieldError::Missing { fields, wanted } => {
                let plural = if fields == 1 { "" } else { "s" };
                write!(f, "no column {} (the line has {fields} field{plural})", wanted + 1)
            }
            FieldError::Unterminated => write!(
                f,
                "a quoted field is not closed on its line (a quoted line break? fibkit lookup reads a record a line)"
            ),
        }
    }
}

/// The bounds of field `index` (0-based) of `line`: inside the quotes of
/// a quoted field.
///
/// # Errors
/// [`FieldError`] when the line has no such field, or a quote left open
/// anywhere in it (an odd number of quotes: a quoted field's quotes,
/// doubled ones included, come in pairs).
pub fn field_at(line: &[u8], delimiter: u8, index: usize) -> Result<(usize, usize), FieldError> {
    if memchr::memchr_iter(b'"', line).count() % 2 == 1 {
        return Err(FieldError::Unterminated);
    }
    let mut start = 0;
    let mut fields = 0;
    loop {
        let (value, next) = if line.get(start) == Some(&b'"') {
            let close = closing_quote(line, start + 1).ok_or(FieldError::Unterminated)?;
            ((start + 1, close), close + 1 + memchr::memchr(delimiter, &line[close + 1..]).unwrap_or(line.len()))
        } else {
            let end = memchr::memchr(delimiter, &line[start..]).map_or(line.len(), |offset| start + offset);
            ((start, end), end)
        };
        fields += 1;
        if fields == index + 1 {
            return Ok(value);
        }
        if next >= line.len() {
            return Err(FieldError::Missing { fields, wanted: index });
        }
        start = next + 1;
    }
}

/// The index of the `"` closing a quoted field whose text starts at `from`.
fn closing_quote(line: &[u8], mut from: usize) -> Option<usize> {
    loop {
        let quote = from + memchr::memchr(b'"', &line[from..])?;
        if line.get(quote + 1) != Some(&b'"') {
            return Some(quote);
        }
        from = quote + 2;
    }
}

/// Every field of `line`, unquoted (a header line's names).
pub fn all_fields(line: &[u8], delimiter: u8) -> Vec<String> {
    let mut names = Vec::new();
    while let Ok((from, to)) = field_at(line, delimiter, names.len()) {
        names.push(String::from_utf8_lossy(&line[from..to]).trim().replace("\"\"", "\""));
    }
    names
}

/// Whether a first line's field looks like an address, well formed or
/// not (`10.1.2.300`, `2001:db8::zz`): it starts with a colon or with one
/// to four hex digits and a dot or a colon, and holds a decimal digit.
/// Such a field makes its line a row (named by its line if it is
/// malformed), never a header; a header's names are words.
pub fn address_like(field: &[u8]) -> bool {
    let field = field.trim_ascii();
    let hex = field.iter().take_while(|byte| byte.is_ascii_hexdigit()).count();
    let starts =
        field.first() == Some(&b':') || ((1..=4).contains(&hex) && matches!(field.get(hex), Some(b'.' | b':')));
    starts && field.iter().any(u8::is_ascii_digit)
}

/// The delimiter of a CSV/TSV source, from its first line: a tab if it has
/// one, else a comma.
pub fn detect_delimiter(first_line: &[u8]) -> u8 {
    if first_line.contains(&b'\t') {
        b'\t'
    } else {
        b','
    }
}

/// Columns a hint lists at most.
const HINT_COLUMNS: usize = 12;

/// For lines read whole (no `--column`) that hold no address: if they look
/// like CSV or TSV rows, a hint naming the `--column` that reads their
/// addresses (or, when no column holds one, the first line's columns).
/// `lines`: the first lines without an address, with their line numbers;
/// no hint unless they start at the source's first or second line.
pub fn column_hint<'a>(lines: impl IntoIterator<Item = (u64, &'a str)>) -> Option<String> {
    let lines: Vec<(u64, &str)> = lines.into_iter().take(10).collect();
    let &(number, first) = lines.first()?;
    let delimiter = detect_delimiter(first.as_bytes());
    let names = all_fields(first.as_bytes(), delimiter);
    if number > 2 || names.len() < 2 {
        return None;
    }
    let is_address = |field: &str| parse_address(field.as_bytes()).is_ok();
    let column = lines
        .iter()
        .find_map(|(_, line)| all_fields(line.as_bytes(), delimiter).iter().position(|field| is_address(field)));
    let kind = if delimiter == b'\t' { "TSV" } else { "CSV" };
    let mut listed = names.iter().take(HINT_COLUMNS).map(String::as_str).collect::<Vec<_>>().join(", ");
    if names.len() > HINT_COLUMNS {
        listed.push_str(", ...");
    }
    let header = column.and_then(|index| names.get(index)).filter(|name| !name.is_empty() && !is_address(name));
    Some(match (column, header) {
        (Some(_), Some(name)) => {
            let plain = name.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"_-.".contains(&byte));
            let name = if plain { name.clone() } else { format!("{name:?}") };
            format!("the lines look like {kind} with a header (columns: {listed}): --column {name} reads the addresses")
        }
        (Some(index), None) => format!("the lines look like {kind}: --column {} reads the addresses", index + 1),
        (None, _) => {
            format!(
                "the lines look like {kind} (first line: {listed}): --column NAME|INDEX picks the addresses' column"
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(line: &str, index: usize) -> Result<&str, FieldError> {
        field_at(line.as_bytes(), b',', index).map(|(from, to)| &line[from..to])
    }

    #[test]
    fn plain_and_quoted_fields_are_found() {
        assert_eq!(field("a,b,c", 0), Ok("a"));
        assert_eq!(field("a,b,c", 2), Ok("c"));
        assert_eq!(field("a,,c", 1), Ok(""));
        assert_eq!(field("a,b,", 2), Ok(""));
        assert_eq!(field("\"x,y\",192.0.2.1", 1), Ok("192.0.2.1"));
        assert_eq!(field("1,\"192.0.2.1\",z", 1), Ok("192.0.2.1"));
        assert_eq!(field("\"say \"\"hi\"\", ok\",2001:db8::1", 1), Ok("2001:db8::1"));
        assert_eq!(all_fields(b"ts,\"src ip\",\"a \"\"b\"\"\"", b','), ["ts", "src ip", "a \"b\""]);
    }

    #[test]
    fn missing_columns_and_open_quotes_are_errors() {
        assert_eq!(field("a,b", 2), Err(FieldError::Missing { fields: 2, wanted: 2 }));
        assert_eq!(field("", 1), Err(FieldError::Missing { fields: 1, wanted: 1 }));
        assert_eq!(field("\"a,b", 1), Err(FieldError::Unterminated));
        assert_eq!(field("1,10.0.0.1,\"two", 1), Err(FieldError::Unterminated), "an open quote after the column");
        assert_eq!(field("lines\",10.0.0.1", 1), Err(FieldError::Unterminated), "a quote closed from a line before");
        assert_eq!(field("\"a\"\"b\",10.0.0.1", 1), Ok("10.0.0.1"));
        assert_eq!(FieldError::Missing { fields: 1, wanted: 3 }.to_string(), "no column 4 (the line has 1 field)");
        assert_eq!(detect_delimiter(b"a\tb,c"), b'\t');
        assert_eq!(detect_delimiter(b"a,b"), b',');
    }

    #[test]
    fn address_like_fields_are_told_from_names() {
        for field in ["10.1.2.300", "1.2.3", "2001:db8::zz", "::ffff:1.2.3.400", " 10.0.0.1 ", "fe80::1%eth0"] {
            assert!(address_like(field.as_bytes()), "{field}");
        }
        for field in ["src", "src ip", "ip.v4", "Addr:Port", "", "beef", "2024", "a.b", "ip4", "v6:addr"] {
            assert!(!address_like(field.as_bytes()), "{field}");
        }
    }

    #[test]
    fn csv_lines_read_whole_get_a_column_hint() {
        let hint = |lines: &[&str]| column_hint((1..).zip(lines.iter().copied()));
        let with_header = hint(&["time,src ip,bytes", "1,192.0.2.1,40", "2,2001:db8::1,80"]).unwrap();
        assert!(with_header.contains("CSV with a header (columns: time, src ip, bytes)"), "{with_header}");
        assert!(with_header.ends_with("--column \"src ip\" reads the addresses"), "{with_header}");
        let headless = hint(&["1\t192.0.2.1\t40"]).unwrap();
        assert_eq!(headless, "the lines look like TSV: --column 2 reads the addresses");
        let no_address = hint(&["a,b", "c,d"]).unwrap();
        assert!(
            no_address.contains("(first line: a, b)") && no_address.contains("--column NAME|INDEX"),
            "{no_address}"
        );
        assert_eq!(hint(&["not an address"]), None);
        assert_eq!(column_hint([(7, "x,192.0.2.1")]), None, "a stray line deep in the file");
    }
}
