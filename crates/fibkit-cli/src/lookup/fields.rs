//! The address column of CSV and TSV lines (`fibkit lookup --column`).
//!
//! Fields are split as RFC 4180 says, one line at a time: a field that
//! starts with `"` runs to the next `"` that is not doubled, and its value
//! is what stands between the quotes. A quoted field may not span lines
//! (an address never needs to), so a line with an unterminated quote is
//! refused, not joined with the next.

use std::fmt;

/// Why a line has no field at the column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldError {
    /// The line has only this many fields.
    Missing { fields: usize, wanted: usize },
    /// A quoted field is not closed on its line.
    Unterminated,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FieldError::Missing { fields, wanted } => {
                let plural = if fields == 1 { "" } else { "s" };
                write!(f, "no column {} (the line has {fields} field{plural})", wanted + 1)
            }
            FieldError::Unterminated => write!(f, "a quoted field is not closed on its line"),
        }
    }
}

/// The bounds of field `index` (0-based) of `line`: inside the quotes of
/// a quoted field.
///
/// # Errors
/// [`FieldError`] when the line has no such field.
pub fn field_at(line: &[u8], delimiter: u8, index: usize) -> Result<(usize, usize), FieldError> {
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

/// The delimiter of a CSV/TSV source, from its first line: a tab if it has
/// one, else a comma.
pub fn detect_delimiter(first_line: &[u8]) -> u8 {
    if first_line.contains(&b'\t') {
        b'\t'
    } else {
        b','
    }
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
        assert_eq!(FieldError::Missing { fields: 1, wanted: 3 }.to_string(), "no column 4 (the line has 1 field)");
        assert_eq!(detect_delimiter(b"a\tb,c"), b'\t');
        assert_eq!(detect_delimiter(b"a,b"), b',');
    }
}
