//! Update streams (`BGP4MP`, `BGP4MP_ET`): the UPDATE messages of every
//! peer, and the ADD-PATH paths of a prefix turned into updates of its route.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::path::Path;

use super::attributes::{Attributes, MpReach, ValueChoice};
use super::cursor::{family_of_afi, Cursor, Malformed, SAFI_UNICAST};
use super::records::{classify, report_reading, Content, Kind, Record, Records, BGP4MP_ET};
use crate::addr::{Family, IpPrefix};
use crate::load::peer::{Peer, PeerKey};
use crate::load::stream::{TimedUpdate, Timestamp};
use crate::load::{Decompressed, LoadError, LoadOptions};
use crate::nexthop::Label;
use crate::update::Update;

/// BGP message type UPDATE.
pub(super) const BGP_UPDATE: u8 = 2;
/// Bytes of a BGP message header (marker, length, type).
const BGP_HEADER_LEN: usize = 19;

/// What a BGP4MP message gave for one prefix.
pub(super) enum Item {
    /// An update, with its ADD-PATH path identifier.
    Update(TimedUpdate, Option<u32>),
    /// An announcement without the value asked for.
    NoValue { offset: u64, why: &'static str },
}

/// Every peer's updates, in file order.
pub(super) struct Messages {
    pub(super) peers: Vec<Peer>,
    /// (position of the peer, what it sent).
    pub(super) items: Vec<(usize, Item)>,
}

/// Reads every BGP4MP message of the file (one pass: update files are
/// small next to RIB dumps).
pub(super) fn read_messages(
    file: &Path,
    data: &Decompressed<'_>,
    options: &LoadOptions,
    warnings: &mut Vec<String>,
) -> Result<Messages, LoadError> {
    let mut peers: Vec<Peer> = Vec::new();
    let mut sessions: HashMap<(IpAddr, u32), usize> = HashMap::new();
    let mut items = Vec::new();
    let mut skipped: BTreeMap<(u16, u16), (usize, usize)> = BTreeMap::new();
    let mut records = Records::new(&data.bytes);
    for record in records.by_ref() {
        match classify(record.mrt_type, record.subtype) {
            Kind::Message { as4, add_path } => {
                let mut found = Vec::new();
                let session = read_message(&record, as4, add_path, options.value, &mut found)
                    .map_err(|error| error.into_error(file))?;
                let Some((address, asn)) = session else { continue };
                let position = *sessions.entry((address, asn)).or_insert_with(|| {
                    peers.push(Peer::new(peers.len(), PeerKey::Session(address, asn)));
                    peers.len() - 1
                });
                let peer = &mut peers[position];
                for item in found {
                    match &item {
                        Item::Update(TimedUpdate { update: Update::Announce { prefix, .. }, .. }, _) => {
                            peer.count(prefix)
                        }
                        Item::Update(TimedUpdate { update: Update::Withdraw { .. }, .. }, _) => peer.withdrawals += 1,
                        Item::NoValue { .. } => {}
                    }
                    items.push((position, item));
                }
            }
            Kind::Ignored => {}
            Kind::PeerIndexTable | Kind::Rib { .. } | Kind::TableDump { .. } | Kind::Unsupported => {
                skipped.entry((record.mrt_type, record.subtype)).or_insert((0, record.offset)).0 += 1;
            }
        }
    }
    report_reading(file, data, &records, &skipped, Content::Updates, options, warnings)?;
    Ok(Messages { peers, items })
}

/// Decodes one BGP4MP message record; UPDATE contents go to `found`.
/// Returns the peer's address and ASN (`None` for other message types).
fn read_message(
    record: &Record<'_>,
    as4: bool,
    add_path: bool,
    choice: ValueChoice,
    found: &mut Vec<Item>,
) -> Result<Option<(IpAddr, u32)>, Malformed> {
    let mut body = record.body;
    let micros = if record.mrt_type == BGP4MP_ET { body.u32("microsecond timestamp")? } else { 0 };
    let time = Timestamp { seconds: u64::from(record.seconds), micros: micros.min(999_999) };
    let peer_asn = body.asn(as4, "peer ASN")?;
    body.asn(as4, "local ASN")?;
    body.u16("interface index")?;
    let at = body.offset();
    let afi = body.u16("address family")?;
    let family = family_of_afi(afi)
        .ok_or_else(|| Malformed { offset: at, message: format!("address family {afi} (expected 1 or 2)") })?;
    let peer_address = body.address(family, "peer address")?;
    body.address(family, "local address")?;
    // The BGP message: marker, length, type.
    let message_at = body.offset();
    body.take(16, "BGP marker")?;
    let length = body.u16("BGP message length")?;
    let message_type = body.u8("BGP message type")?;
    if usize::from(length) < BGP_HEADER_LEN || usize::from(length) - BGP_HEADER_LEN != body.remaining() {
        return Err(Malformed {
            offset: message_at,
            message: format!(
                "BGP message length {length} disagrees with the record ({} bytes of message)",
                BGP_HEADER_LEN + body.remaining()
            ),
        });
    }
    if message_type != BGP_UPDATE {
        return Ok(None);
    }
    let withdrawn_len = body.u16("withdrawn routes length")?;
    let mut withdrawn = body.take(usize::from(withdrawn_len), "withdrawn routes")?;
    let attributes_len = body.u16("path attribute length")?;
    let attributes = Attributes::parse(body.take(usize::from(attributes_len), "path attributes")?, as4)?;
    let mut nlri = body;

    let withdraw = |(path_id, prefix): (Option<u32>, IpPrefix)| {
        Item::Update(TimedUpdate { time, update: Update::Withdraw { prefix } }, path_id)
    };
    while !withdrawn.is_empty() {
        found.push(withdraw(nlri_entry(&mut withdrawn, Family::Ipv4, add_path, "withdrawn route")?));
    }
    if let Some(mut unreach) = attributes.mp_unreach {
        let afi = unreach.u16("MP_UNREACH_NLRI AFI")?;
        let safi = unreach.u8("MP_UNREACH_NLRI SAFI")?;
        if let (Some(family), SAFI_UNICAST) = (family_of_afi(afi), safi) {
            while !unreach.is_empty() {
                found.push(withdraw(nlri_entry(&mut unreach, family, add_path, "MP_UNREACH_NLRI prefix")?));
            }
        }
    }
    // Announcements: IPv4 NLRI with NEXT_HOP, then MP_REACH_NLRI.
    let origin = match choice {
        ValueChoice::OriginAs if !nlri.is_empty() || attributes.mp_reach.is_some() => {
            attributes.origin_as()?.or(Some(peer_asn))
        }
        _ => None,
    };
    let mut announce = |(path_id, prefix): (Option<u32>, IpPrefix), offset, next_hop: Option<IpAddr>, why| {
        let value = match choice {
            ValueChoice::NextHop => next_hop.map(Label::Addr),
            ValueChoice::OriginAs => origin.map(|asn| Label::Number(u64::from(asn))),
        };
        found.push(match value {
            Some(value) => Item::Update(TimedUpdate { time, update: Update::Announce { prefix, value } }, path_id),
            None => Item::NoValue { offset, why },
        });
    };
    if !nlri.is_empty() {
        let next_hop = attributes.next_hop_v4()?;
        while !nlri.is_empty() {
            let offset = nlri.offset();
            let prefix = nlri_entry(&mut nlri, Family::Ipv4, add_path, "NLRI prefix")?;
            announce(prefix, offset, next_hop, "no NEXT_HOP");
        }
    }
    if let Some(value) = attributes.mp_reach {
        let mut reach = MpReach::parse(value)?;
        if let (Some(family), true) = (reach.family, reach.unicast) {
            while !reach.nlri.is_empty() {
                let offset = reach.nlri.offset();
                let prefix = nlri_entry(&mut reach.nlri, family, add_path, "MP_REACH_NLRI prefix")?;
                announce(prefix, offset, reach.next_hop, "no MP_REACH_NLRI next hop");
            }
        }
    }
    Ok(Some((peer_address, peer_asn)))
}

/// One NLRI entry: a path identifier first with ADD-PATH (RFC 7911), then
/// the prefix.
fn nlri_entry(
    cursor: &mut Cursor<'_>,
    family: Family,
    add_path: bool,
    what: &str,
) -> Result<(Option<u32>, IpPrefix), Malformed> {
    let path_id = if add_path { Some(cursor.u32("path identifier")?) } else { None };
    Ok((path_id, cursor.nlri_prefix(family, what)?))
}

/// The paths of each prefix of an ADD-PATH stream, turning per-path
/// updates into updates of the route (the lowest path identifier's).
#[derive(Default)]
pub(super) struct PathTracker {
    paths: HashMap<IpPrefix, BTreeMap<u32, Label>>,
}

impl PathTracker {
    pub(super) fn apply(&mut self, update: Update, path_id: u32) -> Update {
        let prefix = update.prefix();
        let paths = self.paths.entry(prefix).or_default();
        match update {
            Update::Announce { value, .. } => paths.insert(path_id, value),
            Update::Withdraw { .. } => paths.remove(&path_id),
        };
        match paths.first_key_value() {
            Some((_, &value)) => Update::Announce { prefix, value },
            None => {
                self.paths.remove(&prefix);
                Update::Withdraw { prefix }
            }
        }
    }
}
