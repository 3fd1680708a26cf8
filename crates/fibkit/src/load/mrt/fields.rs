//! A RIB dump's routes as records (`--fields`): the path attributes a
//! route carries, as fields.
//!
//! | field | type | what |
//! |---|---|---|
//! | `next_hop` | addr | `NEXT_HOP`, or the `MP_REACH_NLRI` next hop |
//! | `origin_as` | int | the path's origin AS (as `--value origin-as`; the peer's AS for an empty path) |
//! | `as_path` | ints | the `AS_PATH`'s ASNs in order, `AS_SET` members included, confederation segments left out; with 2-byte ASNs, the `AS4_PATH` replaces the path's tail (RFC 6793) |
//! | `communities` | ints | `COMMUNITIES`, each as its 32-bit number (`65000:100` is 4259840100) |
//! | `local_pref` | int | `LOCAL_PREF` |
//! | `med` | int | `MULTI_EXIT_DISC` |
//! | `peer_as` | int | the AS of the peer whose routes are loaded |
//!
//! A route without an attribute has that field missing.

use super::attributes::Attributes;
use super::cursor::{Cursor, Malformed};
use crate::addr::IpPrefix;
use crate::records::{Field, FieldSpec, FieldType, FieldValue};

/// The fields an MRT route has, and their types.
const FIELDS: [(&str, FieldType); 7] = [
    ("next_hop", FieldType::Addr),
    ("origin_as", FieldType::Int),
    ("as_path", FieldType::Ints),
    ("communities", FieldType::Ints),
    ("local_pref", FieldType::Int),
    ("med", FieldType::Int),
    ("peer_as", FieldType::Int),
];

/// The fields `spec` names, checked against those an MRT route has.
pub(super) fn fields_of(spec: &FieldSpec) -> Result<Vec<Field>, String> {
    let names: Vec<&str> = FIELDS.iter().map(|(name, _)| *name).collect();
    if spec.all {
        return Ok(FIELDS.iter().map(|&(name, kind)| Field { name: name.to_string(), kind }).collect());
    }
    let mut fields = Vec::new();
    for (name, given) in &spec.fields {
        let Some(&(_, kind)) = FIELDS.iter().find(|(known, _)| known == name) else {
            return Err(format!("--fields: an MRT route has no field {name:?} (its fields: {})", names.join(", ")));
        };
        if let Some(given) = given.filter(|&given| given != kind) {
            return Err(format!("--fields: {name} is of type {kind}, not {given}"));
        }
        fields.push(Field { name: name.clone(), kind });
    }
    Ok(fields)
}

/// The record of a route: `fields` read from its `attributes`.
pub(super) fn record(
    attributes: &Attributes<'_>,
    prefix: &IpPrefix,
    fields: &[Field],
    peer_asn: Option<u32>,
) -> Result<Vec<FieldValue>, Malformed> {
    let mut values = Vec::with_capacity(fields.len());
    for field in fields {
        let value = match field.name.as_str() {
            "next_hop" => {
                let choice = super::attributes::ValueChoice::NextHop;
                match attributes.value(prefix, choice, peer_asn)? {
                    Ok(crate::nexthop::Label::Addr(addr)) => FieldValue::Addr(addr),
                    _ => FieldValue::Null,
                }
            }
            "origin_as" => {
                attributes.origin_as()?.or(peer_asn).map_or(FieldValue::Null, |asn| FieldValue::Int(asn.into()))
            }
            "as_path" => match attributes.as_path {
                Some(path) => FieldValue::Ints(as_path(path, attributes)?),
                None => FieldValue::Null,
            },
            "communities" => match attributes.communities {
                Some(mut value) => {
                    if value.remaining() % 4 != 0 {
                        return Err(value
                            .malformed(format!("COMMUNITIES of {} bytes (not a multiple of 4)", value.remaining())));
                    }
                    let mut communities = Vec::with_capacity(value.remaining() / 4);
                    while !value.is_empty() {
                        communities.push(i64::from(value.u32("community")?));
                    }
                    FieldValue::Ints(communities)
                }
                None => FieldValue::Null,
            },
            "local_pref" => number(attributes.local_pref, "LOCAL_PREF")?,
            "med" => number(attributes.med, "MULTI_EXIT_DISC")?,
            "peer_as" => peer_asn.map_or(FieldValue::Null, |asn| FieldValue::Int(asn.into())),
            _ => FieldValue::Null,
        };
        values.push(value);
    }
    Ok(values)
}

/// A 4-byte attribute as an integer.
fn number(value: Option<Cursor<'_>>, what: &str) -> Result<FieldValue, Malformed> {
    let Some(mut value) = value else { return Ok(FieldValue::Null) };
    if value.remaining() != 4 {
        return Err(value.malformed(format!("{what} of {} bytes (expected 4)", value.remaining())));
    }
    Ok(FieldValue::Int(value.u32(what)?.into()))
}

/// The ASNs of an `AS_PATH` (see the module docs), with the `AS4_PATH`
/// merged when the path has 2-byte ASNs.
fn as_path(path: Cursor<'_>, attributes: &Attributes<'_>) -> Result<Vec<i64>, Malformed> {
    let mut asns = path_asns(path, attributes.as4)?;
    if !attributes.as4 {
        if let Some(as4_path) = attributes.as4_path {
            let tail = path_asns(as4_path, true)?;
            // RFC 6793 4.2.3: an AS4_PATH longer than the AS_PATH is ignored.
            if tail.len() <= asns.len() {
                asns.truncate(asns.len() - tail.len());
                asns.extend(tail);
            }
        }
    }
    Ok(asns)
}

/// The ASNs of a path's `AS_SEQUENCE` and `AS_SET` segments, in order.
fn path_asns(mut path: Cursor<'_>, as4: bool) -> Result<Vec<i64>, Malformed> {
    let mut asns = Vec::new();
    while !path.is_empty() {
        let at = path.offset();
        let segment_type = path.u8("AS path segment type")?;
        let count = path.u8("AS path segment length")?;
        let mut segment = path.take(usize::from(count) * if as4 { 4 } else { 2 }, "AS path segment")?;
        match segment_type {
            1 | 2 => {
                for _ in 0..count {
                    asns.push(i64::from(segment.asn(as4, "ASN")?));
                }
            }
            3 | 4 => {}
            other => return Err(Malformed { offset: at, message: format!("AS path segment of unknown type {other}") }),
        }
    }
    Ok(asns)
}
