//! Update streams (`BGP4MP`, `BGP4MP_ET`): the UPDATE messages of every
//! peer, and the ADD-PATH paths of a prefix turned into updates of its route.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::path::Path;

use super::attributes::{ValueChoice, ATTR_AS_PATH};
use super::cursor::{family_of_afi, Malformed};
use super::message::decode;
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
    let message =
        decode(body, as4, add_path).map_err(|fault| Malformed { offset: fault.offset, message: fault.message })?;
    for entry in &message.withdrawn {
        let update = Update::Withdraw { prefix: entry.prefix };
        found.push(Item::Update(TimedUpdate { time, update }, entry.path_id));
    }
    // A recording is not a session to reset: attribute faults only cost
    // the routes their value (an AS_PATH that cannot be read has no origin).
    let path = &message.path;
    let bad_path = message.faults.iter().any(|fault| fault.attribute == Some(ATTR_AS_PATH) && path.as_path.is_none());
    for entry in &message.announced {
        let family = entry.prefix.family();
        let value = match choice {
            ValueChoice::NextHop => path.next_hop_for(family).map(Label::Addr).ok_or(match family {
                Family::Ipv4 => "no NEXT_HOP",
                Family::Ipv6 => "no MP_REACH_NLRI next hop",
            }),
            ValueChoice::OriginAs if bad_path => Err("a malformed AS_PATH"),
            ValueChoice::OriginAs => {
                let origin = path.as_path.and_then(|as_path| as_path.origin).unwrap_or(peer_asn);
                Ok(Label::Number(u64::from(origin)))
            }
        };
        found.push(match value {
            Ok(value) => {
                let update = Update::Announce { prefix: entry.prefix, value };
                Item::Update(TimedUpdate { time, update }, entry.path_id)
            }
            Err(why) => Item::NoValue { offset: entry.offset, why },
        });
    }
    Ok(Some((peer_address, peer_asn)))
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
