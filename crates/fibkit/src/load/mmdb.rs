//! MaxMind DB files (`.mmdb`: GeoLite2 and GeoIP2, DB-IP lite, IPinfo
//! lite): every network of the file becomes a route whose value is a
//! record of the fields `--fields` names by path, read with the
//! `maxminddb` crate.
//!
//! A path is keys and array indexes separated by dots:
//! `country.iso_code`, `location.latitude`, `subdivisions.0.iso_code`,
//! `autonomous_system_number`. A network whose record lacks a path has that
//! field missing (null). A field's type is the one given, or the one its
//! values have in the file (integers `int`, doubles and floats `float`,
//! integers and floats together `float`, strings `text`, booleans `bool`,
//! arrays of integers `ints`); a path that leads to a map is refused,
//! naming the keys inside it.
//!
//! An IPv6 database keeps its IPv4 networks in `::/96`: they become IPv4
//! routes, as the format defines. Its aliases of that subtree
//! (`::ffff:0:0/96`, `2001::/32`, `2002::/16`) are the same networks and
//! are not repeated. A file is recognised by its metadata marker
//! (`\xab\xcd\xefMaxMind.com`), whatever its name.

use std::collections::HashMap;
use std::fmt;
use std::net::IpAddr;
use std::path::Path;

use maxminddb::{PathElement, Reader, WithinOptions};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::{LoadError, LoadOptions, Position, RouteTable};
use crate::addr::Prefix;
use crate::error::shorten;
use crate::nexthop::Label;
use crate::records::{Field, FieldSpec, FieldType, FieldValue, RecordTable};

/// The metadata marker every MaxMind DB file has in its last 128 KiB.
const MARKER: &[u8] = b"\xab\xcd\xefMaxMind.com";

/// Whether `bytes` are a MaxMind DB file.
pub(crate) fn is_mmdb(bytes: &[u8]) -> bool {
    let tail = &bytes[bytes.len().saturating_sub(128 * 1024)..];
    tail.windows(MARKER.len()).any(|window| window == MARKER)
}

/// A value of a record, as the file holds it.
#[derive(Clone, Debug, PartialEq)]
enum Node {
    Int(i128),
    Float(f64),
    Bool(bool),
    Text(String),
    List(Vec<Node>),
    Map(Vec<String>),
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a MaxMind DB value")
    }
    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Node, E> {
        Ok(Node::Bool(value))
    }
    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Node, E> {
        Ok(Node::Int(value.into()))
    }
    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Node, E> {
        Ok(Node::Int(value.into()))
    }
    fn visit_i128<E: de::Error>(self, value: i128) -> Result<Node, E> {
        Ok(Node::Int(value))
    }
    fn visit_u128<E: de::Error>(self, value: u128) -> Result<Node, E> {
        Ok(Node::Int(i128::try_from(value).unwrap_or(i128::MAX)))
    }
    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Node, E> {
        Ok(Node::Float(value))
    }
    fn visit_str<E: de::Error>(self, value: &str) -> Result<Node, E> {
        Ok(Node::Text(value.to_string()))
    }
    fn visit_bytes<E: de::Error>(self, value: &[u8]) -> Result<Node, E> {
        Ok(Node::Text(String::from_utf8_lossy(value).into_owned()))
    }
    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Node, S::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::List(items))
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Node, M::Error> {
        let mut keys = Vec::new();
        while let Some((key, _)) = map.next_entry::<String, de::IgnoredAny>()? {
            keys.push(key);
        }
        Ok(Node::Map(keys))
    }
}

/// Loads every network of the MaxMind DB `bytes` into `table`, each with
/// the record of `options.fields`.
pub(crate) fn load_table(
    file: &Path,
    bytes: &[u8],
    options: &LoadOptions,
    table: &mut RouteTable,
) -> Result<(), LoadError> {
    let fail = |position, message: String| LoadError::new(file, position, message);
    let reader = Reader::from_source(bytes).map_err(|error| fail(Position::File, format!("MaxMind DB: {error}")))?;
    let Some(spec) = &options.fields else {
        let keys = first_record_keys(&reader).unwrap_or_default();
        return Err(fail(Position::File, format!(
            "a MaxMind DB file ({}): its values are maps, so name the fields to keep with --fields (its first record has: {})",
            reader.metadata().database_type,
            keys.join(", ")
        )));
    };
    if spec.all {
        return Err(fail(
            Position::File,
            "--fields '*' names a header's columns; a MaxMind DB file's fields are paths: name them".into(),
        ));
    }
    let paths: Vec<Vec<PathElement<'_>>> = spec.fields.iter().map(|(name, _)| path_of(name)).collect();
    let networks = reader
        .networks(WithinOptions::default())
        .map_err(|error| fail(Position::File, format!("MaxMind DB: {error}")))?;
    // Records by their offset in the data section: each decoded once.
    let mut rows: Vec<(Vec<Option<Node>>, String)> = Vec::new();
    let mut by_offset: HashMap<usize, u32> = HashMap::new();
    let mut routes: Vec<(IpAddr, u8, u32)> = Vec::new();
    for result in networks {
        let result = result.map_err(|error| fail(Position::File, format!("MaxMind DB: {error}")))?;
        let network = result.network().map_err(|error| fail(Position::File, format!("MaxMind DB: {error}")))?;
        let Some(offset) = result.offset() else { continue };
        let row = match by_offset.get(&offset) {
            Some(&row) => row,
            None => {
                let mut values = Vec::with_capacity(paths.len());
                for (path, (name, _)) in paths.iter().zip(&spec.fields) {
                    let value = result.decode_path::<Node>(path).map_err(|error| {
                        fail(Position::Offset(offset as u64), format!("network {network}, field {name:?}: {error}"))
                    })?;
                    values.push(value);
                }
                let row =
                    u32::try_from(rows.len()).map_err(|_| fail(Position::File, "more than 2^32 records".into()))?;
                rows.push((values, network.to_string()));
                by_offset.insert(offset, row);
                row
            }
        };
        routes.push((network.ip(), network.prefix(), row));
    }
    let (records, renumbered) = records_of(spec, rows).map_err(|message| fail(Position::File, message))?;
    for (addr, len, row) in routes {
        let hop = table.next_hops.intern(Label::Record(renumbered[row as usize]));
        let bad = |problem: String| fail(Position::File, format!("network {addr}/{len}: {problem}"));
        match addr {
            IpAddr::V4(v4) => {
                let prefix = Prefix::new(u32::from(v4), len).map_err(|problem| bad(problem.to_string()))?;
                table.v4.insert(prefix, hop);
            }
            IpAddr::V6(v6) => {
                let prefix = Prefix::new(u128::from(v6), len).map_err(|problem| bad(problem.to_string()))?;
                table.v6.insert(prefix, hop);
            }
        }
    }
    table.records = Some(records);
    Ok(())
}

/// A field name as a path: dot-separated keys, digits an array index.
fn path_of(name: &str) -> Vec<PathElement<'_>> {
    name.split('.')
        .map(|part| match part.parse::<usize>() {
            Ok(index) => PathElement::Index(index),
            Err(_) => PathElement::Key(part),
        })
        .collect()
}

/// The keys of the first record, as paths to its values (one level into
/// maps), for the message that asks for `--fields`.
fn first_record_keys(reader: &Reader<&[u8]>) -> Option<Vec<String>> {
    let first = reader.networks(WithinOptions::default()).ok()?.next()?.ok()?;
    let Some(Node::Map(keys)) = first.decode::<Node>().ok()? else { return None };
    let mut paths = Vec::new();
    for key in keys {
        match first.decode_path::<Node>(&[PathElement::Key(&key)]) {
            Ok(Some(Node::Map(inner))) => paths.extend(inner.iter().map(|inner| format!("{key}.{inner}"))),
            _ => paths.push(key),
        }
    }
    Some(paths)
}

/// The records of the decoded `rows` (values per field, and the network
/// that first had them, for messages), types given by `spec` or decided
/// from the values, and each row's number among them.
fn records_of(spec: &FieldSpec, rows: Vec<(Vec<Option<Node>>, String)>) -> Result<(RecordTable, Vec<u32>), String> {
    let mut fields = Vec::new();
    for (index, (name, given)) in spec.fields.iter().enumerate() {
        let kind = match given {
            Some(kind) => *kind,
            None => {
                kind_of(name, rows.iter().filter_map(|(values, network)| Some((values[index].as_ref()?, network))))?
            }
        };
        fields.push(Field { name: name.clone(), kind });
    }
    let mut table = RecordTable::new(fields.clone())?;
    let mut renumbered = Vec::with_capacity(rows.len());
    for (values, network) in rows {
        let mut record = Vec::with_capacity(values.len());
        for (value, field) in values.into_iter().zip(&fields) {
            record.push(match value {
                None => FieldValue::Null,
                Some(node) => convert(node, field.kind)
                    .ok_or_else(|| format!("network {network}, field {:?}: not {} ", field.name, field.kind))?,
            });
        }
        renumbered.push(table.intern(record)?);
    }
    Ok((table, renumbered))
}

/// The type of a field whose values are `nodes`.
fn kind_of<'a>(name: &str, nodes: impl Iterator<Item = (&'a Node, &'a String)>) -> Result<FieldType, String> {
    let mut kind: Option<FieldType> = None;
    for (node, network) in nodes {
        let this = match node {
            Node::Int(_) => FieldType::Int,
            Node::Float(_) => FieldType::Float,
            Node::Bool(_) => FieldType::Bool,
            Node::Text(_) => FieldType::Text,
            Node::List(items) if items.iter().all(|item| matches!(item, Node::Int(_))) => FieldType::Ints,
            Node::List(_) => {
                return Err(format!(
                "network {network}: field {name:?} is a list of other than integers: name one of its items ({name}.0)"
            ))
            }
            Node::Map(keys) => {
                let inside: Vec<String> = keys.iter().take(12).map(|key| format!("{name}.{key}")).collect();
                return Err(format!(
                    "network {network}: field {name:?} is a map: name a value inside it ({})",
                    shorten(&inside.join(", "))
                ));
            }
        };
        kind = Some(match (kind, this) {
            (None, this) => this,
            (Some(seen), this) if seen == this => seen,
            (Some(FieldType::Int | FieldType::Float), FieldType::Int | FieldType::Float) => FieldType::Float,
            (Some(seen), this) => {
                return Err(format!("network {network}: field {name:?} is {this} where earlier networks have {seen}: give its type (--fields {name}:text)"));
            }
        });
    }
    Ok(kind.unwrap_or(FieldType::Text))
}

/// `node` as a value of type `kind`, if it is one (an integer is a float
/// too, and anything but a map or list has a text).
fn convert(node: Node, kind: FieldType) -> Option<FieldValue> {
    Some(match (node, kind) {
        (Node::Int(value), FieldType::Int) => FieldValue::Int(i64::try_from(value).ok()?),
        (Node::Int(value), FieldType::Float) => FieldValue::Float(value as f64),
        (Node::Float(value), FieldType::Float) => FieldValue::Float(value),
        (Node::Bool(value), FieldType::Bool) => FieldValue::Bool(value),
        (Node::Text(text), FieldType::Addr) => FieldValue::Addr(text.parse().ok()?),
        (Node::Text(text), FieldType::Text) => FieldValue::Text(text),
        (Node::Int(value), FieldType::Text) => FieldValue::Text(value.to_string()),
        (Node::Float(value), FieldType::Text) => FieldValue::Text(value.to_string()),
        (Node::Bool(value), FieldType::Text) => FieldValue::Text(value.to_string()),
        (Node::List(items), FieldType::Ints) => FieldValue::Ints(
            items
                .into_iter()
                .map(|item| match item {
                    Node::Int(value) => i64::try_from(value).ok(),
                    _ => None,
                })
                .collect::<Option<Vec<i64>>>()?,
        ),
        _ => return None,
    })
}
