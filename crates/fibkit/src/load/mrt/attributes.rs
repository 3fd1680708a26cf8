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
pub(super) const ATTR_ORIGIN: u8 = 1;
pub(super) const ATTR_AS_PATH: u8 = 2;
pub(super) const ATTR_NEXT_HOP: u8 = 3;
pub(super) const ATTR_MULTI_EXIT_DISC: u8 = 4;
pub(super) const ATTR_LOCAL_PREF: u8 = 5;
pub(super) const ATTR_ATOMIC_AGGREGATE: u8 = 6;
pub(super) const ATTR_MP_REACH_NLRI: u8 = 14;
pub(super) const ATTR_MP_UNREACH_NLRI: u8 = 15;
pub(super) const ATTR_AS4_PATH: u8 = 17;
/// `COMMUNITIES` (RFC 1997).
pub(super) const ATTR_COMMUNITIES: u8 = 8;
/// Attribute flag: optional (clear: well-known).
pub(super) const ATTR_OPTIONAL: u8 = 0x80;
/// Attribute flag: transitive.
pub(super) const ATTR_TRANSITIVE: u8 = 0x40;
/// Attribute flag: the length field is two bytes.
const ATTR_EXTENDED_LENGTH: u8 = 0x10;

/// What RFC 7606 has a receiver do about a faulty attribute, from the
/// mildest: drop the attribute, withdraw the message's routes, or reset the
/// session with a NOTIFICATION (error code 3, UPDATE Message Error, and
/// this subcode).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Attribute discard: the attribute is ignored.
    Discard,
    /// Treat-as-withdraw: every route the message announces is withdrawn.
    TreatAsWithdraw,
    /// Session reset, with a NOTIFICATION of UPDATE Message Error and the
    /// subcode given.
    Reset(u8),
}

/// A fault found in an UPDATE's attributes: where, what, and what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// Byte offset of the faulty field.
    pub offset: u64,
    /// The type code of the faulty attribute (`None`: the message's
    /// framing or NLRI).
    pub attribute: Option<u8>,
    /// What is wrong.
    pub message: String,
    /// What RFC 7606 has the receiver do.
    pub action: Action,
}

/// The path attributes fibkit uses, located but not yet decoded.
#[derive(Default)]
pub(super) struct Attributes<'a> {
    pub(super) origin: Option<Cursor<'a>>,
    next_hop: Option<Cursor<'a>>,
    pub(super) as_path: Option<Cursor<'a>>,
    pub(super) as4_path: Option<Cursor<'a>>,
    pub(super) communities: Option<Cursor<'a>>,
    pub(super) med: Option<Cursor<'a>>,
    pub(super) local_pref: Option<Cursor<'a>>,
    pub(super) mp_reach: Option<Cursor<'a>>,
    pub(super) mp_unreach: Option<Cursor<'a>>,
    /// Whether `as_path` holds 4-byte ASNs.
    pub(super) as4: bool,
    /// Faults of the attributes' framing and flags (duplicates, flags that
    /// contradict the type, unknown well-known attributes).
    pub(super) faults: Vec<Fault>,
}

impl<'a> Attributes<'a> {
    /// Walks the attributes (the first of each type counts); an attribute
    /// that runs past the field is an error.
    pub(super) fn parse(cursor: Cursor<'a>, as4: bool) -> Result<Self, Malformed> {
        let (found, overrun) = Self::walk(cursor, as4);
        match overrun {
            Some(error) => Err(error),
            None => Ok(found),
        }
    }

    /// Walks the attributes as far as they can be read: the attributes
    /// found, and the overrun that stopped the walk, if one did.
    pub(super) fn walk(mut cursor: Cursor<'a>, as4: bool) -> (Self, Option<Malformed>) {
        let mut found = Attributes { as4, ..Attributes::default() };
        while !cursor.is_empty() {
            let at = cursor.offset();
            let (flags, code, value) = match Self::next(&mut cursor) {
                Ok(attribute) => attribute,
                Err(error) => return (found, Some(error)),
            };
            let (slot, expected, flag_action) = match code {
                ATTR_ORIGIN => (&mut found.origin, ATTR_TRANSITIVE, Action::TreatAsWithdraw),
                ATTR_AS_PATH => (&mut found.as_path, ATTR_TRANSITIVE, Action::TreatAsWithdraw),
                ATTR_NEXT_HOP => (&mut found.next_hop, ATTR_TRANSITIVE, Action::TreatAsWithdraw),
                ATTR_MULTI_EXIT_DISC => (&mut found.med, ATTR_OPTIONAL, Action::TreatAsWithdraw),
                ATTR_LOCAL_PREF => (&mut found.local_pref, ATTR_TRANSITIVE, Action::TreatAsWithdraw),
                ATTR_AS4_PATH => (&mut found.as4_path, ATTR_OPTIONAL | ATTR_TRANSITIVE, Action::Discard),
                ATTR_COMMUNITIES => (&mut found.communities, ATTR_OPTIONAL | ATTR_TRANSITIVE, Action::TreatAsWithdraw),
                // Malformed Attribute List: the NLRI cannot be found for sure.
                ATTR_MP_REACH_NLRI => (&mut found.mp_reach, ATTR_OPTIONAL, Action::Reset(1)),
                ATTR_MP_UNREACH_NLRI => (&mut found.mp_unreach, ATTR_OPTIONAL, Action::Reset(1)),
                ATTR_ATOMIC_AGGREGATE => continue,
                // Unrecognized Well-known Attribute (RFC 4271 6.3).
                _ if flags & ATTR_OPTIONAL == 0 => {
                    let message = format!("unrecognized well-known attribute of type {code}");
                    found.faults.push(Fault { offset: at, attribute: Some(code), message, action: Action::Reset(2) });
                    continue;
                }
                _ => continue,
            };
            if flags & (ATTR_OPTIONAL | ATTR_TRANSITIVE) != expected {
                let message = format!("attribute of type {code} with flags {flags:#04x}, which contradict its type");
                found.faults.push(Fault { offset: at, attribute: Some(code), message, action: flag_action });
            }
            if slot.is_some() {
                // RFC 7606 3.g: a repeated MP_REACH/MP_UNREACH resets the
                // session; other repeats are discarded.
                let action = if matches!(flag_action, Action::Reset(_)) { flag_action } else { Action::Discard };
                let message = format!("attribute of type {code} repeated");
                found.faults.push(Fault { offset: at, attribute: Some(code), message, action });
                continue;
            }
            *slot = Some(value);
        }
        (found, None)
    }

    /// The next attribute's flags, type code and value.
    fn next(cursor: &mut Cursor<'a>) -> Result<(u8, u8, Cursor<'a>), Malformed> {
        let flags = cursor.u8("attribute flags")?;
        let code = cursor.u8("attribute type")?;
        let length = if flags & ATTR_EXTENDED_LENGTH != 0 {
            usize::from(cursor.u16("attribute length")?)
        } else {
            usize::from(cursor.u8("attribute length")?)
        };
        Ok((flags, code, cursor.take(length, "attribute value")?))
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
