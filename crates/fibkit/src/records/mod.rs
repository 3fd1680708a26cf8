//! Records: route values made of named, typed fields (an AS number and its
//! organisation, a country and a city, an AS path and communities).
//!
//! A table whose routes carry records keeps each distinct record once: a
//! route's next hop is the number of its record, so engines, compiled files
//! and live routers hold records exactly as they hold next hops, and a
//! lookup costs the same. A table whose routes carry one number or address
//! needs no records at all and stays on the [`crate::nexthop`] path.
//!
//! ```text
//!  RecordTable (loading)                 Records (compiled, next hop order)
//!   fields: asn:int, org:text             column asn:  valid | 1 | 1 | 0 |      values | 13335 | 15169 | 0 |
//!   rows, interned: row -> record         column org:  valid | 1 | 1 | 0 |      offsets | 0 | 10 | 16 | 16 |
//!   RouteTable label Record(row)                                                bytes "CloudflareGoogle"
//!                                          next hop h <-> row h - 1
//! ```
//!
//! # Field types
//!
//! | type | name in `--fields` | Arrow type in Python | text |
//! |---|---|---|---|
//! | [`FieldType::Int`] | `int` | `int64` | decimal |
//! | [`FieldType::Float`] | `float` | `float64` | shortest decimal that reads back |
//! | [`FieldType::Bool`] | `bool` | `bool` | `true`, `false` |
//! | [`FieldType::Text`] | `text` (or `string`) | `string` | as given (UTF-8) |
//! | [`FieldType::Addr`] | `addr` | `string` | IPv4 dotted, IPv6 RFC 5952 |
//! | [`FieldType::Ints`] | `ints` | `list<int64>` | integers separated by spaces (an AS path) |
//!
//! Any field may be missing from a record (null): an empty CSV cell, a key
//! a MaxMind DB record lacks.
//!
//! A field list is written `name[:type],...` ([`FieldSpec::parse`]); a
//! field without a type has its type inferred from every value the file
//! gives it ([`infer`]).

mod builder;
mod column;
mod file;
pub mod infer;
mod spec;

pub use builder::RecordTable;
pub use column::{write_csv_cell, ColumnData, ColumnView, Records, RecordsError};
pub use spec::{FieldSpec, FieldSpecError};

use std::fmt;
use std::net::IpAddr;

/// The type of a record's field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldType {
    /// A signed 64-bit integer.
    Int,
    /// A 64-bit float.
    Float,
    /// `true` or `false`.
    Bool,
    /// UTF-8 text.
    Text,
    /// An IPv4 or IPv6 address.
    Addr,
    /// A list of signed 64-bit integers (an AS path, communities).
    Ints,
}

impl FieldType {
    /// Every type, in the order of their codes in a compiled file.
    pub const ALL: [FieldType; 6] =
        [FieldType::Int, FieldType::Float, FieldType::Bool, FieldType::Text, FieldType::Addr, FieldType::Ints];

    /// The type's name in a field list (`int`, `float`, ...).
    pub fn name(self) -> &'static str {
        match self {
            FieldType::Int => "int",
            FieldType::Float => "float",
            FieldType::Bool => "bool",
            FieldType::Text => "text",
            FieldType::Addr => "addr",
            FieldType::Ints => "ints",
        }
    }

    /// The type a name in a field list stands for (`string` is `text`).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "string" | "str" => Some(FieldType::Text),
            _ => Self::ALL.into_iter().find(|kind| kind.name() == name),
        }
    }
}

impl fmt::Display for FieldType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A named, typed field of every record of a table.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    /// The field's name (`asn`, `country.iso_code`).
    pub name: String,
    /// Its type.
    pub kind: FieldType,
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.name, self.kind)
    }
}

/// A field's value in a record being built; [`FieldValue::Null`] for a
/// missing one.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldValue {
    /// No value.
    Null,
    /// A [`FieldType::Int`].
    Int(i64),
    /// A [`FieldType::Float`].
    Float(f64),
    /// A [`FieldType::Bool`].
    Bool(bool),
    /// A [`FieldType::Text`].
    Text(String),
    /// A [`FieldType::Addr`].
    Addr(IpAddr),
    /// A [`FieldType::Ints`].
    Ints(Vec<i64>),
}

impl FieldValue {
    /// The value as [`Records`] give it (text and lists borrowed).
    pub fn as_ref(&self) -> FieldRef<'_> {
        match self {
            FieldValue::Null => FieldRef::Null,
            FieldValue::Int(value) => FieldRef::Int(*value),
            FieldValue::Float(value) => FieldRef::Float(*value),
            FieldValue::Bool(value) => FieldRef::Bool(*value),
            FieldValue::Text(text) => FieldRef::Text(text),
            FieldValue::Addr(addr) => FieldRef::Addr(*addr),
            FieldValue::Ints(values) => FieldRef::Ints(values),
        }
    }

    /// The value's type; `None` for [`FieldValue::Null`].
    pub fn kind(&self) -> Option<FieldType> {
        match self {
            FieldValue::Null => None,
            FieldValue::Int(_) => Some(FieldType::Int),
            FieldValue::Float(_) => Some(FieldType::Float),
            FieldValue::Bool(_) => Some(FieldType::Bool),
            FieldValue::Text(_) => Some(FieldType::Text),
            FieldValue::Addr(_) => Some(FieldType::Addr),
            FieldValue::Ints(_) => Some(FieldType::Ints),
        }
    }
}

/// A field's value read from [`Records`]: text and lists borrowed from
/// the records (mapped from a compiled file, or built).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FieldRef<'a> {
    /// No value.
    Null,
    /// A [`FieldType::Int`].
    Int(i64),
    /// A [`FieldType::Float`].
    Float(f64),
    /// A [`FieldType::Bool`].
    Bool(bool),
    /// A [`FieldType::Text`].
    Text(&'a str),
    /// A [`FieldType::Addr`].
    Addr(IpAddr),
    /// A [`FieldType::Ints`].
    Ints(&'a [i64]),
}

impl FieldRef<'_> {
    /// Whether the value is missing.
    pub fn is_null(&self) -> bool {
        matches!(self, FieldRef::Null)
    }

    /// Writes the value as JSON (`null` for a missing one; a float that is
    /// not finite is `null` too, as JSON has no such numbers).
    pub fn write_json(&self, out: &mut Vec<u8>) {
        use std::io::Write;
        match *self {
            FieldRef::Null => out.extend_from_slice(b"null"),
            FieldRef::Int(value) => _ = write!(out, "{value}"),
            FieldRef::Float(value) if value.is_finite() => _ = write!(out, "{value:?}"),
            FieldRef::Float(_) => out.extend_from_slice(b"null"),
            FieldRef::Bool(value) => _ = write!(out, "{value}"),
            FieldRef::Text(text) => crate::base::quote::json_string(out, text),
            FieldRef::Addr(addr) => _ = write!(out, "\"{addr}\""),
            FieldRef::Ints(values) => {
                out.push(b'[');
                for (index, value) in values.iter().enumerate() {
                    if index > 0 {
                        out.push(b',');
                    }
                    _ = write!(out, "{value}");
                }
                out.push(b']');
            }
        }
    }
}

impl fmt::Display for FieldRef<'_> {
    /// The value as text: what a CSV cell of a table holds (empty for a
    /// missing value; a list's integers separated by spaces; a float with a
    /// point or an exponent), which [`infer::parse`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FieldRef::Null => Ok(()),
            FieldRef::Int(value) => write!(f, "{value}"),
            // Debug: a point or an exponent always, so it reads back as a float.
            FieldRef::Float(value) => write!(f, "{value:?}"),
            FieldRef::Bool(value) => write!(f, "{value}"),
            FieldRef::Text(text) => f.write_str(text),
            FieldRef::Addr(addr) => write!(f, "{addr}"),
            FieldRef::Ints(values) => {
                for (index, value) in values.iter().enumerate() {
                    if index > 0 {
                        f.write_str(" ")?;
                    }
                    write!(f, "{value}")?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests;
