//! MRT routing data (RFC 6396): RIB dumps and BGP update streams, as
//! RouteViews and RIPE RIS publish them.
//!
//! # What is read
//!
//! ```text
//!  every record:  0        4        6        8                12
//!                 ├────────┼────────┼────────┼────────────────┤
//!                 │ time   │ type   │subtype │ length         │ body (length bytes)
//!                 └────────┴────────┴────────┴────────────────┘
//!                 (BGP4MP_ET: the body starts with 4 bytes of microseconds)
//!
//!  TABLE_DUMP_V2   PEER_INDEX_TABLE: collector id, view name, peers
//!                     [type: bit 0 IPv6 address, bit 1 4-byte ASN | BGP id | address | ASN]
//!                  RIB_IPV4/IPV6_UNICAST(_ADDPATH): sequence, prefix, entries
//!                     [peer index | originated time | (path id) | attributes]
//!  TABLE_DUMP      one route of one peer: prefix, peer address, 2-byte peer ASN, attributes
//!  BGP4MP(_ET)     MESSAGE(_AS4)(_ADDPATH): peer ASN, local ASN, interface,
//!                  address family, peer and local address, a BGP message
//! ```
//!
//! | type | subtypes read | subtypes skipped quietly | read as |
//! |---|---|---|---|
//! | 13 `TABLE_DUMP_V2` | 1 `PEER_INDEX_TABLE`, 2/4 `RIB_IPV4/IPV6_UNICAST`, 8/10 their `_ADDPATH` forms (RFC 8050) | 3, 5, 9, 11 multicast RIBs, 7 `GEO_PEER_TABLE` | RIB dump |
//! | 12 `TABLE_DUMP` | 1 IPv4, 2 IPv6 | | RIB dump |
//! | 16 `BGP4MP`, 17 `BGP4MP_ET` | 1 `MESSAGE`, 4 `MESSAGE_AS4`, 8/9 their `_ADDPATH` forms | 0/5 `STATE_CHANGE`, 6/7/10/11 `*_LOCAL` (what the collector sent) | update stream |
//!
//! In a BGP message only UPDATEs count (OPEN, KEEPALIVE, NOTIFICATION are
//! skipped): withdrawn routes and NLRI (IPv4), and `MP_REACH_NLRI` /
//! `MP_UNREACH_NLRI` for IPv4 and IPv6 unicast (other SAFIs are skipped).
//! Any other record type or subtype (`RIB_GENERIC`, OSPF, ...) may hold
//! routes fibkit does not read: it is skipped with a warning per kind.
//! Which kind of file it is follows from the first `TABLE_DUMP*` or
//! `BGP4MP*` record; records of the other kind are skipped with a warning.
//!
//! The file is detected by content: its first 12 bytes are an MRT header of
//! a type and subtype listed above and a length below 16 MiB. (A text file
//! cannot look like that: the type's high byte is zero.)
//!
//! # Peers
//!
//! A collector's RIB dump holds the routes of many peers; a table is what a
//! router peering at one of them would see, so one peer is read
//! ([`LoadOptions::peer`], `--peer`):
//!
//! - `--peer 3`: the peer of index 3: its place in the `PEER_INDEX_TABLE`
//!   (for `TABLE_DUMP` and `BGP4MP` files, which have no such table, peers
//!   are numbered in order of first appearance);
//! - `--peer 192.0.2.1` (or an IPv6 address): the peer with that address;
//! - `--peer AS3356`: the peer with that ASN (an error when several peers
//!   match; then pick one by index).
//!
//! **The default is the peer with the most routes** (IPv4 and IPv6
//! together; the lowest index on a tie). A collector's peers are a mix of
//! full-table peers and partial feeds (customer routes only, a few hundred
//! prefixes); the first peer of the table is often one of the latter. The
//! peer with the most routes is a full-table peer, the table a router in the
//! default-free zone holds, which is what fibkit's engines are about. In an
//! update stream the default is the peer that announces the most prefixes.
//! [`list_peers`] (`--peers`) lists every peer with its counts.
//!
//! RIB entries without a `PEER_INDEX_TABLE` before them (a file cut out of
//! a dump, like `bview.20140112.1600_3samples`) are attributed to their peer
//! index alone; the peers then have no address or ASN, and a warning says so.
//!
//! # Values
//!
//! A route's value ([`LoadOptions::value`], `--value`) is, by default, its
//! **next hop**: the `NEXT_HOP` attribute for IPv4 routes (or the
//! `MP_REACH_NLRI` next hop when there is none, RFC 5549), the
//! `MP_REACH_NLRI` next hop for IPv6 (the global address when a link-local
//! one follows; `TABLE_DUMP_V2` stores the attribute abbreviated to the next
//! hop, RFC 6396 section 4.3.4, and both forms are read). With
//! `--value origin-as` it is the **origin AS**: the last AS of the
//! `AS_PATH` (from `AS4_PATH` when a 2-byte path carries one, RFC 6793);
//! a path that ends in an `AS_SET` has no single origin, its lowest ASN is
//! taken; an empty path (a route the peer originates) gives the peer's ASN.
//! A route without the value asked for is left out, with one warning per
//! kind of omission.
//!
//! # Conflicts, truncation and bad input
//!
//! The rule of every format applies: a later record replaces an earlier one
//! for the same prefix, with a warning naming both byte offsets.
//!
//! With ADD-PATH (RFC 7911, RFC 8050) a peer sends several paths for one
//! prefix; its route is the path with the lowest path identifier. In a RIB
//! record that is the entry with the lowest identifier; in an update stream
//! the paths of each prefix are tracked, and an update is emitted whenever a
//! change of any path changes the route (a withdrawal of one path
//! re-announces the lowest remaining one; the last one withdraws the prefix).
//!
//! A file that ends inside a record (a truncated download, a bzip2 stream
//! cut off mid-block) keeps every complete record and warns naming the byte
//! offset where the complete data ends; [`LoadOptions::strict`] makes that
//! an error. Offsets count bytes of the decompressed data.
//!
//! A malformed record (a field running past its record, a prefix longer
//! than 32 or 128 bits, an AS path segment of unknown type, a peer index
//! outside the `PEER_INDEX_TABLE`, ...) is an error naming the byte offset
//! of the field. Only what a load needs is decoded: the framing of every
//! record, and the attributes of the selected peer's routes.
//!
//! # Why a hand-written parser
//!
//! `bgpkit-parser` (with default features off) reads all of this and more,
//! but: it needs Rust 1.88 (fibkit's floor is 1.80); it decodes every
//! attribute of every peer into owned structures, where a table needs three
//! attributes of one peer; its errors do not carry the byte offset of the
//! problem, which the house rules ask for; and a truncated last record is an
//! error to it, where we keep every complete record. The subset fibkit
//! needs is a few hundred lines over a bounds-checked `Cursor`: no length
//! read from the file is used for anything but slicing bytes that are
//! present (never to size an allocation), and every loop consumes input, so
//! no input can make it allocate without bound or loop forever.

use std::path::Path;

use super::stream::{TimedUpdate, UpdateStream};
use super::{decompress, read_file, table_name, Decompressed, LoadError, LoadOptions, Position, RouteTable};

mod attributes;
mod bgp4mp;
mod cursor;
mod fields;
pub mod message;
mod peers;
mod records;
mod rib;

use bgp4mp::{read_messages, Item, PathTracker};
use peers::{most_routes, select_peer, Omissions};
use records::Content;
use rib::{load_rib, scan_rib};

pub use super::peer::Peer;
pub use attributes::ValueChoice;
pub use peers::PeerSelector;
pub(crate) use records::is_mrt;

// ---------------------------------------------------------------------------
// Listing peers
// ---------------------------------------------------------------------------

/// The peers of an MRT file ([`list_peers`]).
#[derive(Clone, Debug)]
pub struct PeerList {
    /// `"RIB dump"` or `"update stream"`.
    pub content: &'static str,
    /// Every peer, by index.
    pub peers: Vec<Peer>,
    /// The position in `peers` of the peer a load picks by default.
    pub default: Option<usize>,
    /// Non-fatal findings (truncated data, skipped records).
    pub warnings: Vec<String>,
}

/// Lists the peers of an MRT file with their route counts (`--peers`).
pub fn list_peers(path: &Path, options: &LoadOptions) -> Result<PeerList, LoadError> {
    let raw = read_file(path)?;
    list_peers_bytes(path, &raw, options)
}

/// [`list_peers`] on bytes in memory; `file` names them in errors.
pub fn list_peers_bytes(file: &Path, bytes: &[u8], options: &LoadOptions) -> Result<PeerList, LoadError> {
    let data = decompress(file, bytes)?;
    if !is_mrt(&data.bytes) {
        return Err(LoadError::new(
            file,
            Position::File,
            "not an MRT file: peers are listed for MRT RIB dumps and update streams",
        ));
    }
    let mut warnings = Vec::new();
    let (content, mut peers) = match Content::of(&data.bytes) {
        Content::Rib => {
            let scan = scan_rib(file, &data, options, &mut warnings)?;
            (Content::Rib, scan.peers)
        }
        Content::Updates => {
            let messages = read_messages(file, &data, options, &mut warnings)?;
            (Content::Updates, messages.peers)
        }
    };
    let default = most_routes(&peers);
    let default_index = default.map(|position| peers[position].index);
    peers.sort_by_key(|peer| peer.index);
    let default = default_index.and_then(|index| peers.iter().position(|peer| peer.index == index));
    Ok(PeerList { content: content.name(), peers, default, warnings })
}

// ---------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------

/// Loads the selected peer's table from MRT bytes (RIB dump, or update
/// stream replayed).
pub(crate) fn load_table(
    file: &Path,
    data: &Decompressed<'_>,
    options: &LoadOptions,
    table: &mut RouteTable,
) -> Result<(), LoadError> {
    match Content::of(&data.bytes) {
        Content::Rib => load_rib(file, data, options, table),
        Content::Updates if options.fields.is_some() => Err(LoadError::new(
            file,
            Position::File,
            "--fields reads the routes of an MRT RIB dump, but this is an update stream (BGP4MP messages)",
        )),
        Content::Updates => {
            let stream = load_updates(file, data, options)?;
            table.warnings.extend(stream.warnings.iter().cloned());
            stream.apply_to(table);
            Ok(())
        }
    }
}

/// Loads the selected peer's update stream from MRT `BGP4MP` bytes.
pub(crate) fn load_updates(
    file: &Path,
    data: &Decompressed<'_>,
    options: &LoadOptions,
) -> Result<UpdateStream, LoadError> {
    if Content::of(&data.bytes) == Content::Rib {
        return Err(LoadError::new(file, Position::File, "an MRT RIB dump, not an update stream (BGP4MP messages)"));
    }
    let mut warnings = Vec::new();
    let messages = read_messages(file, data, options, &mut warnings)?;
    let chosen = select_peer(file, &messages.peers, options.peer)?;
    let peer = messages.peers[chosen].clone();
    let mut missing = Omissions::default();
    let mut updates = Vec::new();
    let mut tracker = PathTracker::default();
    for (position, item) in messages.items {
        if position != chosen {
            continue;
        }
        match item {
            Item::Update(timed, None) => updates.push(timed),
            Item::Update(TimedUpdate { time, update }, Some(path_id)) => {
                updates.push(TimedUpdate { time, update: tracker.apply(update, path_id) });
            }
            Item::NoValue { offset, why } => missing.note(why, offset),
        }
    }
    missing.report(file, &peer, options, &mut warnings)?;
    Ok(UpdateStream { name: table_name(file), updates, peer: Some(peer), warnings })
}

#[cfg(test)]
mod tests;
