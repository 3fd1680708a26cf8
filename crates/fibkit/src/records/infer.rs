//! Field values from text (a CSV cell), and the type a column of texts
//! reads as.
//!
//! An empty text is a missing value, whatever the type. A column's type,
//! when not given, is the first of these that reads every non-empty text:
//! `int` (decimal, optionally signed), `float` (a decimal number with a
//! point or an exponent), `bool` (`true`/`false`, any case), `addr` (IPv4 or
//! IPv6), `ints` (integers separated by spaces, at least one text with two),
//! and `text` otherwise (and for a column with no value at all).
//!
//! ```
//! use fibkit::records::infer::{infer, parse};
//! use fibkit::records::{FieldType, FieldValue};
//!
//! assert_eq!(infer(["13335", "", "-1"].into_iter()), FieldType::Int);
//! assert_eq!(infer(["1.5", "2"].into_iter()), FieldType::Float);
//! assert_eq!(infer(["3356 1299", "174"].into_iter()), FieldType::Ints);
//! assert_eq!(infer(["US", "13335"].into_iter()), FieldType::Text);
//! assert_eq!(parse(FieldType::Ints, "3356 1299"), Ok(FieldValue::Ints(vec![3356, 1299])));
//! assert_eq!(parse(FieldType::Int, ""), Ok(FieldValue::Null));
//! assert!(parse(FieldType::Int, "AS13335").is_err());
//! ```

use std::net::IpAddr;

use super::{FieldType, FieldValue};
use crate::error::shorten;

/// The type that reads every non-empty text of a column (see the module
/// docs).
pub fn infer<'a>(texts: impl Iterator<Item = &'a str>) -> FieldType {
    let (mut int, mut float, mut bool, mut addr, mut ints, mut lists, mut any) =
        (true, true, true, true, true, false, false);
    for text in texts.filter(|text| !text.is_empty()) {
        any = true;
        let is_int = text.parse::<i64>().is_ok();
        int &= is_int;
        float &= is_int || parse_float(text).is_some();
        bool &= parse_bool(text).is_some();
        addr &= text.parse::<IpAddr>().is_ok();
        if ints && !is_int {
            ints = parse_ints(text).is_some();
            lists |= ints;
        }
        if !(int || float || bool || addr || ints) {
            return FieldType::Text;
        }
    }
    match () {
        _ if !any => FieldType::Text,
        _ if int => FieldType::Int,
        _ if float => FieldType::Float,
        _ if bool => FieldType::Bool,
        _ if addr => FieldType::Addr,
        _ if ints && lists => FieldType::Ints,
        _ => FieldType::Text,
    }
}

/// The value `text` holds as a field of type `kind` ([`FieldValue::Null`]
/// for an empty text).
///
/// # Errors
/// A message (without file or line) naming the text and the type.
pub fn parse(kind: FieldType, text: &str) -> Result<FieldValue, String> {
    if text.is_empty() {
        return Ok(FieldValue::Null);
    }
    let bad = || format!("{:?} is not {}", shorten(text), describe(kind));
    Ok(match kind {
        FieldType::Int => FieldValue::Int(text.parse().map_err(|_| bad())?),
        FieldType::Float => FieldValue::Float(
            text.parse::<i64>().map(|int| int as f64).ok().or_else(|| parse_float(text)).ok_or_else(bad)?,
        ),
        FieldType::Bool => FieldValue::Bool(parse_bool(text).ok_or_else(bad)?),
        FieldType::Addr => FieldValue::Addr(text.parse().map_err(|_| bad())?),
        FieldType::Text => FieldValue::Text(text.to_string()),
        FieldType::Ints => FieldValue::Ints(parse_ints(text).ok_or_else(bad)?),
    })
}

/// A type's name for messages.
fn describe(kind: FieldType) -> &'static str {
    match kind {
        FieldType::Int => "an integer (int)",
        FieldType::Float => "a number (float)",
        FieldType::Bool => "true or false (bool)",
        FieldType::Addr => "an IP address (addr)",
        FieldType::Text => "text",
        FieldType::Ints => "integers separated by spaces (ints)",
    }
}

/// A finite decimal number with a point or an exponent (not `inf`, `nan`:
/// those are text; nor an integer too large for `int`, an identifier
/// rather than a quantity).
fn parse_float(text: &str) -> Option<f64> {
    let numeric = text.bytes().all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b)) && text.contains(['.', 'e', 'E']);
    text.parse::<f64>().ok().filter(|value| numeric && value.is_finite())
}

fn parse_bool(text: &str) -> Option<bool> {
    if text.eq_ignore_ascii_case("true") {
        Some(true)
    } else if text.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        None
    }
}

/// Integers separated by runs of spaces.
fn parse_ints(text: &str) -> Option<Vec<i64>> {
    text.split_ascii_whitespace()
        .map(|item| item.parse().ok())
        .collect::<Option<Vec<i64>>>()
        .filter(|items| !items.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_read_as_the_narrowest_type() {
        let cases: [(&[&str], FieldType); 9] = [
            (&["1", "2"], FieldType::Int),
            (&["1", "2.5e3"], FieldType::Float),
            (&["True", "false", ""], FieldType::Bool),
            (&["192.0.2.1", "2001:db8::1"], FieldType::Addr),
            (&["1 2", "3"], FieldType::Ints),
            (&["", ""], FieldType::Text),
            (&["inf"], FieldType::Text),
            (&["1", "x"], FieldType::Text),
            (&["99999999999999999999"], FieldType::Text),
        ];
        for (texts, kind) in cases {
            assert_eq!(infer(texts.iter().copied()), kind, "{texts:?}");
            for text in texts {
                assert!(parse(kind, text).is_ok(), "{text:?} as {kind}");
            }
        }
    }

    #[test]
    fn texts_of_another_type_are_refused_naming_the_type() {
        for (kind, text) in [
            (FieldType::Int, "1.5"),
            (FieldType::Float, "nan"),
            (FieldType::Bool, "yes"),
            (FieldType::Addr, "10.1.2.300"),
            (FieldType::Ints, "{1 2}"),
        ] {
            let error = parse(kind, text).unwrap_err();
            assert!(error.contains(&format!("({kind})")) && error.contains(text), "{error}");
        }
        assert_eq!(parse(FieldType::Float, "2"), Ok(FieldValue::Float(2.0)));
    }
}
