//! RIB dumps (`TABLE_DUMP_V2`, `TABLE_DUMP`): a first pass counts each
//! peer's routes, a second loads the selected peer's routes into the table.

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;

use super::attributes::Attributes;
use super::cursor::{Cursor, Malformed};
use super::fields;
use super::peers::{select_peer, Omissions};
use super::records::{classify, report_reading, Content, Kind, Records};
use crate::addr::{Family, IpPrefix};
use crate::load::peer::{Peer, PeerKey};
use crate::load::{warn, Decompressed, LoadError, LoadOptions, Position, RouteTable};
use crate::nexthop::{Label, NextHopTable};
use crate::records::RecordTable;
use crate::rib::Rib;
use crate::NextHop;

/// The first pass over a RIB dump: peers and their route counts.
pub(super) struct RibScan {
    pub(super) peers: Vec<Peer>,
    /// `TABLE_DUMP_V2` peer index to position in `peers`.
    slots: Vec<Option<usize>>,
    /// Address and ASN to position in `peers`.
    sessions: HashMap<(IpAddr, u32), usize>,
    /// Whether a `PEER_INDEX_TABLE` was read.
    pub(super) peer_table: bool,
}

impl RibScan {
    /// The position of the peer of `key`, adding it when new.
    pub(super) fn position(&mut self, key: PeerKey) -> usize {
        match key {
            PeerKey::Slot(slot) => {
                let slot = usize::from(slot);
                if self.slots.len() <= slot {
                    self.slots.resize(slot + 1, None);
                }
                *self.slots[slot].get_or_insert_with(|| {
                    self.peers.push(Peer::new(slot, key));
                    self.peers.len() - 1
                })
            }
            PeerKey::Session(address, asn) => *self.sessions.entry((address, asn)).or_insert_with(|| {
                let index = self.peers.len();
                self.peers.push(Peer::new(index, key));
                index
            }),
        }
    }
}

/// One RIB entry of a record, framed but not decoded.
struct RibEntry<'a> {
    peer: PeerKey,
    /// The ADD-PATH path identifier (0 without ADD-PATH).
    path_id: u32,
    /// Offset of the entry.
    offset: u64,
    attributes: Cursor<'a>,
}

/// A RIB record's prefix and entries.
struct RibRecord<'a> {
    prefix: IpPrefix,
    entries: Vec<RibEntry<'a>>,
    /// Whether the attributes use 4-byte ASNs.
    as4: bool,
}

/// Frames a `TABLE_DUMP_V2` RIB or a `TABLE_DUMP` record.
fn rib_record<'a>(kind: Kind, body: Cursor<'a>) -> Result<RibRecord<'a>, Malformed> {
    let mut body = body;
    match kind {
        Kind::Rib { family, add_path } => {
            body.u32("sequence number")?;
            let prefix = body.nlri_prefix(family, "RIB prefix")?;
            let count = body.u16("entry count")?;
            // Each entry takes at least 8 bytes: the capacity is bounded by
            // the record, not by the count field.
            let mut entries = Vec::with_capacity(usize::from(count).min(body.remaining() / 8));
            for _ in 0..count {
                let offset = body.offset();
                let slot = body.u16("peer index")?;
                body.u32("originated time")?;
                let path_id = if add_path { body.u32("path identifier")? } else { 0 };
                let length = body.u16("attribute length")?;
                let attributes = body.take(usize::from(length), "attributes")?;
                entries.push(RibEntry { peer: PeerKey::Slot(slot), path_id, offset, attributes });
            }
            if !body.is_empty() {
                return Err(body.malformed(format!("{} bytes after the last of {count} RIB entries", body.remaining())));
            }
            Ok(RibRecord { prefix, entries, as4: true })
        }
        Kind::TableDump { family } => {
            body.u16("view number")?;
            body.u16("sequence number")?;
            let prefix = body.full_prefix(family)?;
            body.u8("status")?;
            body.u32("originated time")?;
            let offset = body.offset();
            let address = body.address(family, "peer address")?;
            let asn = body.asn(false, "peer ASN")?;
            let length = body.u16("attribute length")?;
            let attributes = body.take(usize::from(length), "attributes")?;
            if !body.is_empty() {
                return Err(body.malformed(format!("{} bytes after the attributes", body.remaining())));
            }
            Ok(RibRecord {
                prefix,
                entries: vec![RibEntry { peer: PeerKey::Session(address, asn), path_id: 0, offset, attributes }],
                as4: false,
            })
        }
        _ => unreachable!("rib_record is called for RIB records only"),
    }
}

/// First pass: frames every record, reads the peer table, counts each
/// peer's routes; warns about truncation and skipped records.
pub(super) fn scan_rib(
    file: &Path,
    data: &Decompressed<'_>,
    options: &LoadOptions,
    warnings: &mut Vec<String>,
) -> Result<RibScan, LoadError> {
    let mut scan = RibScan { peers: Vec::new(), slots: Vec::new(), sessions: HashMap::new(), peer_table: false };
    let mut skipped: BTreeMap<(u16, u16), (usize, usize)> = BTreeMap::new();
    // The record each peer was last counted in (ADD-PATH entries of one
    // prefix count once).
    let mut counted_in: Vec<usize> = Vec::new();
    let mut first_unindexed: Option<usize> = None;
    let mut records = Records::new(&data.bytes);
    for record in records.by_ref() {
        // The record's offset identifies it within the pass.
        let sequence = record.offset;
        match classify(record.mrt_type, record.subtype) {
            Kind::PeerIndexTable => {
                if scan.peer_table || !scan.peers.is_empty() {
                    return Err(LoadError::new(
                        file,
                        Position::Offset(record.offset as u64),
                        "a PEER_INDEX_TABLE after the first: one dump a file is supported \
                         (this one follows other records or tables)",
                    ));
                }
                peer_index_table(record.body, &mut scan).map_err(|error| error.into_error(file))?;
            }
            kind @ (Kind::Rib { .. } | Kind::TableDump { .. }) => {
                let rib = rib_record(kind, record.body).map_err(|error| error.into_error(file))?;
                for entry in &rib.entries {
                    if let PeerKey::Slot(slot) = entry.peer {
                        if scan.peer_table && scan.slots.get(usize::from(slot)).copied().flatten().is_none() {
                            return Err(LoadError::new(
                                file,
                                Position::Offset(entry.offset),
                                format!(
                                    "peer index {slot} is not in the PEER_INDEX_TABLE ({} peers)",
                                    scan.peers.len()
                                ),
                            ));
                        }
                        if !scan.peer_table {
                            first_unindexed.get_or_insert(record.offset);
                        }
                    }
                    let position = scan.position(entry.peer);
                    if counted_in.len() <= position {
                        counted_in.resize(position + 1, usize::MAX);
                    }
                    if counted_in[position] != sequence {
                        counted_in[position] = sequence;
                        scan.peers[position].count(&rib.prefix);
                    }
                }
            }
            Kind::Ignored => {}
            Kind::Message { .. } | Kind::Unsupported => {
                skipped.entry((record.mrt_type, record.subtype)).or_insert((0, record.offset)).0 += 1;
            }
        }
    }
    if let Some(offset) = first_unindexed {
        warn(
            file,
            Position::Offset(offset as u64),
            "TABLE_DUMP_V2 RIB records without a PEER_INDEX_TABLE before them: their peers are known by index only"
                .to_string(),
            options,
            warnings,
        )?;
    }
    report_reading(file, data, &records, &skipped, Content::Rib, options, warnings)?;
    Ok(scan)
}

/// A route of the selected peer.
struct Route {
    prefix: IpPrefix,
    value: Label,
    /// Offset of its RIB entry.
    offset: u64,
}

/// Loads the selected peer's routes of a RIB dump into `table`.
pub(super) fn load_rib(
    file: &Path,
    data: &Decompressed<'_>,
    options: &LoadOptions,
    table: &mut RouteTable,
) -> Result<(), LoadError> {
    let scan = scan_rib(file, data, options, &mut table.warnings)?;
    let chosen = select_peer(file, &scan.peers, options.peer)?;
    let peer = &scan.peers[chosen];
    let key = peer.key;
    let mut records = match &options.fields {
        None => None,
        Some(_) if options.value != super::ValueChoice::NextHop => {
            let problem = "--value chooses a route's one value; --fields makes it a record: give one or the other";
            return Err(LoadError::new(file, Position::File, problem));
        }
        Some(spec) => {
            let fields = fields::fields_of(spec).map_err(|problem| LoadError::new(file, Position::File, problem))?;
            Some(RecordTable::new(fields).map_err(|problem| LoadError::new(file, Position::File, problem))?)
        }
    };
    let record_fields = records.as_ref().map(|records| records.fields().to_vec()).unwrap_or_default();
    let mut routes = Vec::with_capacity(peer.routes());
    let mut missing = Omissions::default();
    for record in Records::new(&data.bytes) {
        let kind = classify(record.mrt_type, record.subtype);
        if !matches!(kind, Kind::Rib { .. } | Kind::TableDump { .. }) {
            continue;
        }
        // Framed without error in the first pass.
        let rib = rib_record(kind, record.body).map_err(|error| error.into_error(file))?;
        // With ADD-PATH, the path of the lowest identifier (the first entry
        // on a tie).
        let mine = rib.entries.iter().filter(|entry| entry.peer == key);
        let Some(entry) = mine.min_by_key(|entry| entry.path_id) else { continue };
        let attributes = Attributes::parse(entry.attributes, rib.as4).map_err(|error| error.into_error(file))?;
        if let Some(records) = &mut records {
            let record = fields::record(&attributes, &rib.prefix, &record_fields, peer.asn)
                .map_err(|error| error.into_error(file))?;
            let row = records
                .intern(record)
                .map_err(|problem| LoadError::new(file, Position::Offset(entry.offset), problem))?;
            routes.push(Route { prefix: rib.prefix, value: Label::Record(row), offset: entry.offset });
            continue;
        }
        match attributes.value(&rib.prefix, options.value, peer.asn).map_err(|error| error.into_error(file))? {
            Ok(value) => routes.push(Route { prefix: rib.prefix, value, offset: entry.offset }),
            Err(why) => missing.note(why, entry.offset),
        }
    }
    missing.report(file, peer, options, &mut table.warnings)?;
    table.records = records;
    insert_routes(file, &routes, options, table)
}

/// Inserts routes in file order; a repeated prefix keeps the later value
/// (warned, or an error with `strict`), and the replaced value is not
/// interned.
fn insert_routes(
    file: &Path,
    routes: &[Route],
    options: &LoadOptions,
    table: &mut RouteTable,
) -> Result<(), LoadError> {
    let insert_all = |table: &mut RouteTable, superseded: &[bool]| -> bool {
        let mut repeated = false;
        let mut last: Option<(Label, NextHop)> = None;
        for (route, _) in routes.iter().zip(superseded).filter(|(_, &superseded)| !superseded) {
            let hop = match last {
                Some((label, hop)) if label == route.value => hop,
                _ => {
                    let hop = table.next_hops.intern(route.value);
                    last = Some((route.value, hop));
                    hop
                }
            };
            let replaced = match route.prefix {
                IpPrefix::V4(prefix) => table.v4.insert(prefix, hop),
                IpPrefix::V6(prefix) => table.v6.insert(prefix, hop),
            };
            repeated |= replaced.is_some();
        }
        repeated
    };
    let mut superseded = vec![false; routes.len()];
    if !insert_all(table, &superseded) {
        return Ok(());
    }
    let mut last_seen: HashMap<IpPrefix, usize> = HashMap::new();
    for (index, route) in routes.iter().enumerate() {
        if let Some(earlier) = last_seen.insert(route.prefix, index) {
            superseded[earlier] = true;
            let before = &routes[earlier];
            let values = if before.value == route.value {
                format!("with the same value {}", route.value)
            } else {
                format!("value {} replaces {} (the later record wins)", route.value, before.value)
            };
            warn(
                file,
                Position::Offset(route.offset),
                format!("{} repeats the entry at byte {}: {values}", route.prefix, before.offset),
                options,
                &mut table.warnings,
            )?;
        }
    }
    table.v4 = Rib::new();
    table.v6 = Rib::new();
    table.next_hops = NextHopTable::new(options.mapping);
    insert_all(table, &superseded);
    Ok(())
}

/// Reads a `PEER_INDEX_TABLE` into `scan`.
pub(super) fn peer_index_table(mut body: Cursor<'_>, scan: &mut RibScan) -> Result<(), Malformed> {
    body.u32("collector BGP id")?;
    let name_len = body.u16("view name length")?;
    body.take(usize::from(name_len), "view name")?;
    let count = body.u16("peer count")?;
    for index in 0..count {
        let peer_type = body.u8("peer type")?;
        let bgp_id = Ipv4Addr::from(body.array::<4>("peer BGP id")?);
        let family = if peer_type & 1 != 0 { Family::Ipv6 } else { Family::Ipv4 };
        let address = body.address(family, "peer address")?;
        let asn = body.asn(peer_type & 2 != 0, "peer ASN")?;
        let slot = scan.position(PeerKey::Slot(index));
        let peer = &mut scan.peers[slot];
        peer.address = Some(address);
        peer.asn = Some(asn);
        peer.bgp_id = Some(bgp_id);
    }
    if !body.is_empty() {
        return Err(body.malformed(format!("{} bytes after the last of {count} peers", body.remaining())));
    }
    scan.peer_table = true;
    Ok(())
}
