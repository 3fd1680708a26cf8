//! BGP UPDATE messages (RFC 4271 4.3, RFC 4760): one decoder for the
//! messages of an MRT update stream and those of a live BGP session.
//!
//! [`decode_update`] reads the withdrawn routes, the path attributes a
//! receiver's decision needs (ORIGIN, AS_PATH, NEXT_HOP, MULTI_EXIT_DISC,
//! LOCAL_PREF, the IPv4 and IPv6 unicast `MP_REACH_NLRI` and
//! `MP_UNREACH_NLRI`) and the NLRI, and judges each fault as RFC 7606 says
//! a receiver must ([`Action`]):
//!
//! | fault | action |
//! |---|---|
//! | withdrawn routes or total attribute length past the message | session reset (subcode 1, Malformed Attribute List) |
//! | a prefix longer than 32 or 128 bits, or cut off, in the NLRI or withdrawn routes | session reset (subcode 10, Invalid Network Field) |
//! | a malformed `MP_REACH_NLRI` / `MP_UNREACH_NLRI`, or one repeated | session reset (subcode 1 or 9) |
//! | an attribute running past the attribute field | treat-as-withdraw (the total length finds the NLRI); a session reset when no NLRI can be found |
//! | an unrecognized well-known attribute | session reset (subcode 2, RFC 4271 6.3) |
//! | ORIGIN, AS_PATH, NEXT_HOP, MULTI_EXIT_DISC or LOCAL_PREF of a wrong length or value, or with flags that contradict its type | treat-as-withdraw |
//! | an `AS_SET` in the AS_PATH (RFC 9774) | treat-as-withdraw |
//! | ORIGIN, AS_PATH or (with IPv4 NLRI) NEXT_HOP missing | treat-as-withdraw |
//! | a repeated attribute of another type, a malformed `AS4_PATH` | attribute discard |
//!
//! The MRT loader reads recorded messages with the same decoder but does
//! not act on attribute faults (a recording is not a session to reset):
//! it keeps what it can use, as the [module docs](super) say.

use std::net::IpAddr;

use super::attributes::{
    path_origin, Attributes, MpReach, ATTR_AS_PATH, ATTR_LOCAL_PREF, ATTR_MULTI_EXIT_DISC, ATTR_NEXT_HOP, ATTR_ORIGIN,
};
pub use super::attributes::{Action, Fault};
use super::cursor::{family_of_afi, Cursor, Malformed, SAFI_UNICAST};
use crate::addr::{Family, IpPrefix};

/// A prefix of a message's NLRI or withdrawn routes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nlri {
    /// The ADD-PATH path identifier (RFC 7911), when the session uses it.
    pub path_id: Option<u32>,
    /// The prefix.
    pub prefix: IpPrefix,
    /// Byte offset of the entry in the message body.
    pub offset: u64,
}

/// What a receiver's decision reads of an `AS_PATH` (RFC 4271 9.1.2.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AsPath {
    /// The path's length for the decision: each ASN of an `AS_SEQUENCE`
    /// counts one, an `AS_SET` one in all, confederation segments none.
    pub length: u32,
    /// The first ASN of the path (the neighbouring AS), if it starts with
    /// an `AS_SEQUENCE`.
    pub first: Option<u32>,
    /// The origin AS: the last ASN of a final `AS_SEQUENCE`, the lowest of
    /// a final `AS_SET` (from `AS4_PATH` on a 2-byte session, RFC 6793).
    pub origin: Option<u32>,
    /// Whether the path holds an `AS_SET`.
    pub has_set: bool,
}

/// The decoded path attributes of an UPDATE.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathAttributes {
    /// ORIGIN: 0 IGP, 1 EGP, 2 INCOMPLETE.
    pub origin: Option<u8>,
    /// AS_PATH.
    pub as_path: Option<AsPath>,
    /// NEXT_HOP (of the IPv4 NLRI).
    pub next_hop: Option<IpAddr>,
    /// The next hop of `MP_REACH_NLRI` (of its NLRI).
    pub mp_next_hop: Option<IpAddr>,
    /// MULTI_EXIT_DISC.
    pub med: Option<u32>,
    /// LOCAL_PREF.
    pub local_pref: Option<u32>,
}

impl PathAttributes {
    /// The next hop of a prefix of `family` announced with these attributes.
    pub fn next_hop_for(&self, family: Family) -> Option<IpAddr> {
        match family {
            Family::Ipv4 => self.next_hop.or(self.mp_next_hop),
            Family::Ipv6 => self.mp_next_hop,
        }
    }
}

/// A decoded UPDATE message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UpdateMessage {
    /// Withdrawn routes and `MP_UNREACH_NLRI` prefixes (unicast).
    pub withdrawn: Vec<Nlri>,
    /// NLRI and `MP_REACH_NLRI` prefixes (unicast), announced with `path`.
    pub announced: Vec<Nlri>,
    /// The path attributes.
    pub path: PathAttributes,
    /// Every attribute fault found, with what RFC 7606 has a receiver do.
    pub faults: Vec<Fault>,
}

impl UpdateMessage {
    /// The fault that decides what a receiver does with the message: the
    /// first that resets the session, or else the first treat-as-withdraw.
    /// `None`: apply the message (discarded attributes are already absent).
    pub fn decisive_fault(&self) -> Option<&Fault> {
        let reset = self.faults.iter().find(|fault| matches!(fault.action, Action::Reset(_)));
        reset.or_else(|| self.faults.iter().find(|fault| fault.action == Action::TreatAsWithdraw))
    }
}

/// Decodes the body of an UPDATE message (what follows its 19-byte
/// header). `as4`: the session's ASNs are 4 bytes (RFC 6793); `add_path`:
/// every NLRI entry starts with a path identifier (RFC 7911).
///
/// # Errors
/// A [`Fault`] whose action is a session reset, when the message's
/// structure cannot be read (the table in the [module docs](self)). Faults
/// of attributes are not errors: they are in [`UpdateMessage::faults`].
pub fn decode_update(body: &[u8], as4: bool, add_path: bool) -> Result<UpdateMessage, Fault> {
    decode(Cursor::new(body, 0), as4, add_path)
}

fn reset(subcode: u8) -> impl Fn(Malformed) -> Fault {
    move |error| Fault { offset: error.offset, attribute: None, message: error.message, action: Action::Reset(subcode) }
}

/// [`decode_update`] of a body at a known offset of its file.
pub(super) fn decode(mut body: Cursor<'_>, as4: bool, add_path: bool) -> Result<UpdateMessage, Fault> {
    let withdrawn_len = body.u16("withdrawn routes length").map_err(reset(1))?;
    let mut withdrawn_field = body.take(usize::from(withdrawn_len), "withdrawn routes").map_err(reset(1))?;
    let attributes_len = body.u16("total path attribute length").map_err(reset(1))?;
    let attribute_field = body.take(usize::from(attributes_len), "path attributes").map_err(reset(1))?;
    let mut nlri_field = body;

    let mut message = UpdateMessage::default();
    while !withdrawn_field.is_empty() {
        let entry = nlri_entry(&mut withdrawn_field, Family::Ipv4, add_path, "withdrawn route").map_err(reset(10))?;
        message.withdrawn.push(entry);
    }
    while !nlri_field.is_empty() {
        let entry = nlri_entry(&mut nlri_field, Family::Ipv4, add_path, "NLRI prefix").map_err(reset(10))?;
        message.announced.push(entry);
    }
    let has_ipv4_nlri = !message.announced.is_empty();

    let (attributes, overrun) = Attributes::walk(attribute_field, as4);
    message.faults = attributes.faults.clone();
    if let Some(error) = overrun {
        let found_nlri = has_ipv4_nlri || attributes.mp_reach.is_some() || attributes.mp_unreach.is_some();
        let action = if found_nlri { Action::TreatAsWithdraw } else { Action::Reset(1) };
        message.faults.push(Fault { offset: error.offset, attribute: None, message: error.message, action });
    }
    if let Some(mut unreach) = attributes.mp_unreach {
        let afi = unreach.u16("MP_UNREACH_NLRI AFI").map_err(reset(9))?;
        let safi = unreach.u8("MP_UNREACH_NLRI SAFI").map_err(reset(9))?;
        if let (Some(family), SAFI_UNICAST) = (family_of_afi(afi), safi) {
            while !unreach.is_empty() {
                let entry = nlri_entry(&mut unreach, family, add_path, "MP_UNREACH_NLRI prefix").map_err(reset(10))?;
                message.withdrawn.push(entry);
            }
        }
    }
    if let Some(value) = attributes.mp_reach {
        let mut reach = MpReach::parse(value).map_err(reset(9))?;
        if let (Some(family), true) = (reach.family, reach.unicast) {
            message.path.mp_next_hop = reach.next_hop;
            while !reach.nlri.is_empty() {
                let entry = nlri_entry(&mut reach.nlri, family, add_path, "MP_REACH_NLRI prefix").map_err(reset(10))?;
                message.announced.push(entry);
            }
        }
    }
    if !message.announced.is_empty() {
        read_path(&attributes, has_ipv4_nlri, &mut message);
    }
    Ok(message)
}

/// Decodes the path attributes of announced routes into `message.path`,
/// adding a fault for each one that is missing or malformed.
fn read_path(attributes: &Attributes<'_>, has_ipv4_nlri: bool, message: &mut UpdateMessage) {
    let mut withdraw = |attribute, offset, message_text: String| {
        let fault =
            Fault { offset, attribute: Some(attribute), message: message_text, action: Action::TreatAsWithdraw };
        message.faults.push(fault)
    };
    let path = &mut message.path;
    match attributes.origin {
        Some(value) if value.remaining() == 1 && value.bytes[0] <= 2 => path.origin = Some(value.bytes[0]),
        Some(value) => withdraw(ATTR_ORIGIN, value.offset(), format!("malformed ORIGIN {:?}", value.bytes)),
        None => withdraw(ATTR_ORIGIN, 0, "no ORIGIN".to_string()),
    }
    match attributes.as_path {
        Some(value) => match read_as_path(value, attributes.as4) {
            Ok(mut as_path) => {
                if as_path.has_set {
                    withdraw(ATTR_AS_PATH, value.offset(), "AS_SET in the AS_PATH (RFC 9774)".to_string());
                }
                // A 2-byte session's AS4_PATH names the real origin; a
                // malformed one is discarded (RFC 6793).
                as_path.origin = attributes.origin_as().unwrap_or(as_path.origin);
                path.as_path = Some(as_path);
            }
            Err(error) => withdraw(ATTR_AS_PATH, error.offset, format!("malformed AS_PATH: {}", error.message)),
        },
        None => withdraw(ATTR_AS_PATH, 0, "no AS_PATH".to_string()),
    }
    match attributes.next_hop_v4() {
        Ok(Some(next_hop)) => path.next_hop = Some(next_hop),
        Ok(None) if has_ipv4_nlri => withdraw(ATTR_NEXT_HOP, 0, "no NEXT_HOP for the IPv4 NLRI".to_string()),
        Ok(None) => {}
        Err(error) => withdraw(ATTR_NEXT_HOP, error.offset, error.message),
    }
    for (slot, value, code, name) in [
        (&mut path.med, attributes.med, ATTR_MULTI_EXIT_DISC, "MULTI_EXIT_DISC"),
        (&mut path.local_pref, attributes.local_pref, ATTR_LOCAL_PREF, "LOCAL_PREF"),
    ] {
        match value.map(|mut value| (value.remaining(), value.u32(name))) {
            Some((4, Ok(number))) => *slot = Some(number),
            Some((length, _)) => {
                let offset = value.map_or(0, |value| value.offset());
                withdraw(code, offset, format!("{name} of {length} bytes (expected 4)"));
            }
            None => {}
        }
    }
}

/// The decision's view of an `AS_PATH` value ([`AsPath`]); a segment of
/// unknown type, of no ASNs or running past the value is malformed.
pub(super) fn read_as_path(path: Cursor<'_>, as4: bool) -> Result<AsPath, Malformed> {
    let mut summary = AsPath { origin: path_origin(path, as4)?, ..AsPath::default() };
    let mut path = path;
    let mut first_segment = true;
    while !path.is_empty() {
        let at = path.offset();
        let segment_type = path.u8("AS path segment type")?;
        let count = path.u8("AS path segment length")?;
        if count == 0 {
            return Err(Malformed { offset: at, message: "AS path segment of no ASNs".to_string() });
        }
        let mut asns = path.take(usize::from(count) * if as4 { 4 } else { 2 }, "AS path segment")?;
        match segment_type {
            1 => {
                summary.length += 1;
                summary.has_set = true;
            }
            2 => {
                if first_segment {
                    summary.first = Some(asns.asn(as4, "ASN")?);
                }
                summary.length += u32::from(count);
            }
            _ => {}
        }
        first_segment = false;
    }
    Ok(summary)
}

/// One NLRI entry: a path identifier first with ADD-PATH (RFC 7911), then
/// the prefix.
fn nlri_entry(cursor: &mut Cursor<'_>, family: Family, add_path: bool, what: &str) -> Result<Nlri, Malformed> {
    let offset = cursor.offset();
    let path_id = if add_path { Some(cursor.u32("path identifier")?) } else { None };
    Ok(Nlri { path_id, prefix: cursor.nlri_prefix(family, what)?, offset })
}

#[cfg(test)]
mod tests {
    use super::super::attributes::ATTR_MP_REACH_NLRI;
    use super::*;

    const WELL_KNOWN: u8 = 0x40;
    const OPTIONAL: u8 = 0x80;

    fn attribute(out: &mut Vec<u8>, flags: u8, code: u8, value: &[u8]) {
        out.extend([flags, code, value.len() as u8]);
        out.extend(value);
    }

    /// ORIGIN IGP, AS_PATH (sequence of `path`, 4-byte), NEXT_HOP 192.0.2.1.
    fn mandatory(path: &[u32]) -> Vec<u8> {
        let mut out = Vec::new();
        attribute(&mut out, WELL_KNOWN, ATTR_ORIGIN, &[0]);
        let mut as_path = vec![2, path.len() as u8];
        path.iter().for_each(|asn| as_path.extend(asn.to_be_bytes()));
        attribute(&mut out, WELL_KNOWN, ATTR_AS_PATH, &as_path);
        attribute(&mut out, WELL_KNOWN, ATTR_NEXT_HOP, &[192, 0, 2, 1]);
        out
    }

    fn body(withdrawn: &[u8], attributes: &[u8], nlri: &[u8]) -> Vec<u8> {
        let mut out = (withdrawn.len() as u16).to_be_bytes().to_vec();
        out.extend(withdrawn);
        out.extend((attributes.len() as u16).to_be_bytes());
        out.extend(attributes);
        out.extend(nlri);
        out
    }

    fn prefix(text: &str) -> IpPrefix {
        text.parse().unwrap()
    }

    #[test]
    fn a_whole_update_decodes_without_faults() {
        let mut attributes = mandatory(&[64500, 64501, 15169]);
        attribute(&mut attributes, OPTIONAL, ATTR_MULTI_EXIT_DISC, &7u32.to_be_bytes());
        attribute(&mut attributes, WELL_KNOWN, ATTR_LOCAL_PREF, &200u32.to_be_bytes());
        // MP_REACH_NLRI: IPv6 unicast, next hop 2001:db8::1, 2001:db8:1::/48.
        let mut reach = vec![0, 2, 1, 16];
        reach.extend("2001:db8::1".parse::<std::net::Ipv6Addr>().unwrap().octets());
        reach.extend([0, 48, 0x20, 0x01, 0x0d, 0xb8, 0, 1]);
        attribute(&mut attributes, OPTIONAL, ATTR_MP_REACH_NLRI, &reach);
        let message = decode_update(&body(&[8, 10], &attributes, &[24, 1, 2, 3]), true, false).unwrap();
        assert_eq!(message.faults, vec![]);
        assert_eq!(message.decisive_fault(), None);
        let prefixes = |entries: &[Nlri]| entries.iter().map(|entry| entry.prefix).collect::<Vec<_>>();
        assert_eq!(prefixes(&message.withdrawn), vec![prefix("10.0.0.0/8")]);
        assert_eq!(prefixes(&message.announced), vec![prefix("1.2.3.0/24"), prefix("2001:db8:1::/48")]);
        let path = &message.path;
        assert_eq!((path.origin, path.med, path.local_pref), (Some(0), Some(7), Some(200)));
        let as_path = path.as_path.unwrap();
        assert_eq!(
            (as_path.length, as_path.first, as_path.origin, as_path.has_set),
            (3, Some(64500), Some(15169), false)
        );
        assert_eq!(path.next_hop_for(Family::Ipv4), Some("192.0.2.1".parse().unwrap()));
        assert_eq!(path.next_hop_for(Family::Ipv6), Some("2001:db8::1".parse().unwrap()));
    }

    /// The action the decoder takes on `body`: an error's, or the decisive
    /// fault's.
    fn action(body: &[u8]) -> Option<Action> {
        match decode_update(body, true, false) {
            Ok(message) => message.decisive_fault().map(|fault| fault.action),
            Err(fault) => Some(fault.action),
        }
    }

    #[test]
    fn each_fault_gets_the_action_rfc_7606_gives_it() {
        let nlri = [24, 1, 2, 3];
        let good = mandatory(&[64500]);
        // Lengths that lie.
        assert_eq!(action(&[0, 9, 8, 10]), Some(Action::Reset(1)), "withdrawn routes past the message");
        let mut lying = body(&[], &good, &nlri);
        lying[3] += 40;
        assert_eq!(action(&lying), Some(Action::Reset(1)), "attributes past the message");
        let mut overrun = good.clone();
        overrun.extend([WELL_KNOWN, ATTR_LOCAL_PREF, 9, 0, 0]);
        assert_eq!(action(&body(&[], &overrun, &nlri)), Some(Action::TreatAsWithdraw), "an attribute overruns");
        assert_eq!(action(&body(&[], &overrun, &[])), Some(Action::Reset(1)), "an overrun and no NLRI found");
        // Prefix lengths past the family's.
        assert_eq!(action(&body(&[], &good, &[33, 1, 2, 3, 4, 5])), Some(Action::Reset(10)));
        assert_eq!(action(&body(&[40, 1, 2, 3, 4, 5], &[], &[])), Some(Action::Reset(10)));
        let mut reach = vec![0, 2, 1, 16];
        reach.extend([0x20, 1, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 129]);
        reach.extend([0xff; 17]);
        let mut mp = good.clone();
        attribute(&mut mp, OPTIONAL, ATTR_MP_REACH_NLRI, &reach);
        assert_eq!(action(&body(&[], &mp, &[])), Some(Action::Reset(10)), "an IPv6 prefix of 129 bits");
        // An unrecognized well-known attribute.
        let mut unknown = good.clone();
        attribute(&mut unknown, WELL_KNOWN, 99, &[1]);
        assert_eq!(action(&body(&[], &unknown, &nlri)), Some(Action::Reset(2)));
        // ... but an unknown optional one is passed over.
        let mut optional = good.clone();
        attribute(&mut optional, OPTIONAL | WELL_KNOWN, 99, &[1]);
        assert_eq!(action(&body(&[], &optional, &nlri)), None);
        // AS_SET in the AS_PATH.
        let mut with_set = Vec::new();
        attribute(&mut with_set, WELL_KNOWN, ATTR_ORIGIN, &[0]);
        attribute(&mut with_set, WELL_KNOWN, ATTR_AS_PATH, &[2, 1, 0, 0, 1, 1, 1, 2, 0, 0, 0, 9, 0, 0, 0, 8]);
        attribute(&mut with_set, WELL_KNOWN, ATTR_NEXT_HOP, &[192, 0, 2, 1]);
        let message = decode_update(&body(&[], &with_set, &nlri), true, false).unwrap();
        let fault = message.decisive_fault().unwrap();
        assert_eq!((fault.action, fault.attribute), (Action::TreatAsWithdraw, Some(ATTR_AS_PATH)));
        assert_eq!(message.path.as_path.unwrap().origin, Some(8), "the set's lowest ASN");
        // Malformed values, missing attributes, wrong flags.
        let mut bad_origin = good.clone();
        bad_origin[3] = 3;
        assert_eq!(action(&body(&[], &bad_origin, &nlri)), Some(Action::TreatAsWithdraw), "ORIGIN 3");
        let mut short_med = good.clone();
        attribute(&mut short_med, OPTIONAL, ATTR_MULTI_EXIT_DISC, &[0, 0, 7]);
        assert_eq!(action(&body(&[], &short_med, &nlri)), Some(Action::TreatAsWithdraw), "MED of 3 bytes");
        let mut med_flags = good.clone();
        attribute(&mut med_flags, WELL_KNOWN, ATTR_MULTI_EXIT_DISC, &[0, 0, 0, 7]);
        assert_eq!(action(&body(&[], &med_flags, &nlri)), Some(Action::TreatAsWithdraw), "MED flagged well-known");
        let no_next_hop = &good[..good.len() - 7];
        assert_eq!(action(&body(&[], no_next_hop, &nlri)), Some(Action::TreatAsWithdraw), "no NEXT_HOP");
        assert_eq!(action(&body(&[], &good[4..], &nlri)), Some(Action::TreatAsWithdraw), "no ORIGIN");
        // A repeat: discarded; a repeated MP_REACH_NLRI: reset.
        let mut repeated = good.clone();
        attribute(&mut repeated, OPTIONAL, ATTR_MULTI_EXIT_DISC, &[0, 0, 0, 7]);
        attribute(&mut repeated, OPTIONAL, ATTR_MULTI_EXIT_DISC, &[0, 0, 0, 9]);
        let message = decode_update(&body(&[], &repeated, &nlri), true, false).unwrap();
        assert_eq!(message.decisive_fault(), None);
        assert_eq!((message.faults[0].action, message.path.med), (Action::Discard, Some(7)));
        let mut reach = vec![0, 1, 1, 4, 192, 0, 2, 1, 0];
        reach.extend([8, 10]);
        let mut twice = good.clone();
        attribute(&mut twice, OPTIONAL, ATTR_MP_REACH_NLRI, &reach);
        attribute(&mut twice, OPTIONAL, ATTR_MP_REACH_NLRI, &reach);
        assert_eq!(action(&body(&[], &twice, &[])), Some(Action::Reset(1)));
        // A withdrawal needs no attributes.
        assert_eq!(action(&body(&[8, 10], &[], &[])), None);
    }
}
