//! BGP path attributes, shared by RIB entries and UPDATE messages: next
//! hops, the origin AS of the AS path, `MP_REACH_NLRI`.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use super::cursor::{family_of_afi, Cursor, Malformed, SAFI_UNICAST};
use crate::addr::Family;
use crate::addr::IpPrefix;
use crate::error::shorten;
use crate::nexthop::Label;

/// What an MRT route's value is (`--value`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ValueChoice {
    /// The route's next hop (`next-hop`).
    #[default]
    NextHop,
    /// The origin AS of the route's AS path (`origin-as`).
    OriginAs,
}

impl FromStr for ValueChoice {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "next-hop" => Ok(ValueChoice::NextHop),
            "origin-as" => Ok(ValueChoice::OriginAs),
            _ => Err(format!("bad value {:?}: expected next-hop or origin-as", shorten(text))),
        }
    }
}

impl fmt::Display for ValueChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ValueChoice::NextHop => "next-hop",
            ValueChoice::OriginAs => "origin-as",
        })
    }
}

// BGP path attribute type codes.
pub(super) const ATTR_AS_PATH: u8 = 2;
pub(super) const ATTR_NEXT_HOP: u8 = 3;
pub(super) const ATTR_MP_REACH_NLRI: u8 = 14;
pub(super) const ATTR_MP_UNREACH_NLRI: u8 = 15;
pub(super) const ATTR_AS4_PATH: u8 = 17;
/// Attribute flag: the length field is two bytes.
const ATTR_EXTENDED_LENGTH: u8 = 0x10;

/// The path attributes fibkit uses, located but not yet decoded.
#[derive(Default)]
pub(super) struct Attributes<'a> {
    next_hop: Option<Cursor<'a>>,
    as_path: Option<Cursor<'a>>,
    as4_path: Option<Cursor<'a>>,
    pub(super) mp_reach: Option<Cursor<'a>>,
    pub(super) mp_unreach: Option<Cursor<'a>>,
    /// Whether `as_path` holds 4-byte ASNs.
    as4: bool,
}

impl<'a> Attributes<'a> {
    /// Walks the attributes (the first of each type counts).
    pub(super) fn parse(mut cursor: Cursor<'a>, as4: bool) -> Result<Self, Malformed> {
        let mut found = Attributes { as4, ..Attributes::default() };
        while !cursor.is_empty() {
            let flags = cursor.u8("attribute flags")?;
            let code = cursor.u8("attribute type")?;
            let length = if flags & ATTR_EXTENDED_LENGTH != 0 {
                usize::from(cursor.u16("attribute length")?)
            } else {
                usize::from(cursor.u8("attribute length")?)
            };
            let value = cursor.take(length, "attribute value")?;
            let slot = match code {
                ATTR_NEXT_HOP => &mut found.next_hop,
                ATTR_AS_PATH => &mut found.as_path,
                ATTR_AS4_PATH => &mut found.as4_path,
                ATTR_MP_REACH_NLRI => &mut found.mp_reach,
                ATTR_MP_UNREACH_NLRI => &mut found.mp_unreach,
                _ => continue,
            };
            slot.get_or_insert(value);
        }
        Ok(found)
    }

    /// The `NEXT_HOP` attribute.
    pub(super) fn next_hop_v4(&self) -> Result<Option<IpAddr>, Malformed> {
        let Some(mut value) = self.next_hop else { return Ok(None) };
        if value.remaining() != 4 {
            return Err(value.malformed(format!("NEXT_HOP of {} bytes (expected 4)", value.remaining())));
        }
        value.address(Family::Ipv4, "NEXT_HOP").map(Some)
    }

    /// The route's value: `Ok(Ok(label))`, or `Ok(Err(why))` when the route
    /// lacks what `choice` asks for.
    pub(super) fn value(
        &self,
        prefix: &IpPrefix,
        choice: ValueChoice,
        peer_asn: Option<u32>,
    ) -> Result<Result<Label, &'static str>, Malformed> {
        match choice {
            ValueChoice::NextHop => {
                let next_hop = match (prefix, self.next_hop_v4()?) {
                    (IpPrefix::V4(_), Some(next_hop)) => Some(next_hop),
                    _ => match self.mp_reach {
                        Some(value) => rib_mp_next_hop(value)?,
                        None => None,
                    },
                };
                Ok(next_hop.map(Label::Addr).ok_or(match prefix {
                    IpPrefix::V4(_) => "no NEXT_HOP (nor MP_REACH_NLRI next hop)",
                    IpPrefix::V6(_) => "no MP_REACH_NLRI next hop",
                }))
            }
            ValueChoice::OriginAs => {
                let origin = self.origin_as()?.or(peer_asn);
                Ok(origin.map(|asn| Label::Number(u64::from(asn))).ok_or("an empty AS_PATH and no peer ASN"))
            }
        }
    }

    /// The origin AS of the path (see the [module docs](super)).
    pub(super) fn origin_as(&self) -> Result<Option<u32>, Malformed> {
        let from_path = match self.as_path {
            Some(path) => path_origin(path, self.as4)?,
            None => None,
        };
        if !self.as4 {
            if let Some(path) = self.as4_path {
                if let Some(origin) = path_origin(path, true)? {
                    return Ok(Some(origin));
                }
            }
        }
        Ok(from_path)
    }
}

/// The origin AS of an `AS_PATH` value: the last ASN of a final
/// `AS_SEQUENCE`, the lowest of a final `AS_SET`; confederation segments
/// are passed over.
pub(super) fn path_origin(mut path: Cursor<'_>, as4: bool) -> Result<Option<u32>, Malformed> {
    let mut origin = None;
    while !path.is_empty() {
        let at = path.offset();
        let segment_type = path.u8("AS path segment type")?;
        let count = path.u8("AS path segment length")?;
        let mut asns = path.take(usize::from(count) * if as4 { 4 } else { 2 }, "AS path segment")?;
        let mut last = None;
        let mut lowest = None;
        for _ in 0..count {
            let asn = asns.asn(as4, "ASN")?;
            last = Some(asn);
            lowest = Some(lowest.map_or(asn, |low: u32| low.min(asn)));
        }
        match segment_type {
            // AS_SET
            1 => origin = lowest.or(origin),
            // AS_SEQUENCE
            2 => origin = last.or(origin),
            // AS_CONFED_SEQUENCE, AS_CONFED_SET
            3 | 4 => {}
            other => {
                return Err(Malformed { offset: at, message: format!("AS path segment of unknown type {other}") });
            }
        }
    }
    Ok(origin)
}

/// An `MP_REACH_NLRI` next hop as a `TABLE_DUMP_V2` RIB entry stores it:
/// abbreviated to the next-hop length and address (RFC 6396 4.3.4), or in
/// full as some writers do (detected: the first byte is then not the
/// attribute length less one, being the high byte of the AFI).
fn rib_mp_next_hop(value: Cursor<'_>) -> Result<Option<IpAddr>, Malformed> {
    let mut value = value;
    let first = *value.bytes.first().ok_or_else(|| value.malformed("empty MP_REACH_NLRI".to_string()))?;
    if usize::from(first) == value.remaining() - 1 {
        value.u8("next hop length")?;
        return next_hop_address(value).map(Some);
    }
    let reach = MpReach::parse(value)?;
    Ok(reach.next_hop)
}

/// A next-hop field: 4 bytes (IPv4), 16 (IPv6) or 32 (IPv6 global, then
/// link-local: the global one is taken).
fn next_hop_address(mut value: Cursor<'_>) -> Result<IpAddr, Malformed> {
    match value.remaining() {
        4 => value.address(Family::Ipv4, "next hop"),
        16 | 32 => value.address(Family::Ipv6, "next hop"),
        other => Err(value.malformed(format!("next hop of {other} bytes (expected 4, 16 or 32)"))),
    }
}

/// A full `MP_REACH_NLRI` (RFC 4760).
pub(super) struct MpReach<'a> {
    pub(super) family: Option<Family>,
    pub(super) unicast: bool,
    pub(super) next_hop: Option<IpAddr>,
    pub(super) nlri: Cursor<'a>,
}

impl<'a> MpReach<'a> {
    pub(super) fn parse(mut value: Cursor<'a>) -> Result<Self, Malformed> {
        let afi = value.u16("MP_REACH_NLRI AFI")?;
        let safi = value.u8("MP_REACH_NLRI SAFI")?;
        let length = value.u8("MP_REACH_NLRI next hop length")?;
        let next_hop = value.take(usize::from(length), "MP_REACH_NLRI next hop")?;
        value.u8("MP_REACH_NLRI reserved byte")?;
        let family = family_of_afi(afi);
        let unicast = safi == SAFI_UNICAST && family.is_some();
        // Next hops of other SAFIs (VPN: with a route distinguisher) are not
        // ours to decode.
        let next_hop = if unicast { Some(next_hop_address(next_hop)?) } else { None };
        let nlri = value.take(value.remaining(), "NLRI")?;
        Ok(MpReach { family, unicast, next_hop, nlri })
    }
}
