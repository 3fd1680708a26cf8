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

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::Path;
use std::str::FromStr;

use super::updates::{IpPrefix, TimedUpdate, Timestamp, Update, UpdateStream};
use super::{decompress, read_file, table_name, warn, Decompressed, LoadError, LoadOptions, Position, RouteTable};
use crate::addr::Prefix;
use crate::nexthop::{Label, NextHopTable};
use crate::rib::Rib;
use crate::NextHop;

/// `TABLE_DUMP` (RFC 6396 section 4.2): one route a record.
const TABLE_DUMP: u16 = 12;
/// `TABLE_DUMP_V2` (section 4.3): a peer table, then a record a prefix.
const TABLE_DUMP_V2: u16 = 13;
/// `BGP4MP` (section 4.4): BGP messages and state changes.
const BGP4MP: u16 = 16;
/// `BGP4MP_ET`: `BGP4MP` with a microsecond timestamp.
const BGP4MP_ET: u16 = 17;

/// Bytes of the MRT common header.
const HEADER_LEN: usize = 12;
/// The largest record length a file may start with to be taken for MRT.
const DETECT_MAX_LEN: u32 = 16 << 20;

// BGP path attribute type codes.
const ATTR_AS_PATH: u8 = 2;
const ATTR_NEXT_HOP: u8 = 3;
const ATTR_MP_REACH_NLRI: u8 = 14;
const ATTR_MP_UNREACH_NLRI: u8 = 15;
const ATTR_AS4_PATH: u8 = 17;
/// Attribute flag: the length field is two bytes.
const ATTR_EXTENDED_LENGTH: u8 = 0x10;

/// BGP message type UPDATE.
const BGP_UPDATE: u8 = 2;
/// Bytes of a BGP message header (marker, length, type).
const BGP_HEADER_LEN: usize = 19;

/// Address family numbers (AFI).
const AFI_IPV4: u16 = 1;
const AFI_IPV6: u16 = 2;
/// Subsequent address family: unicast.
const SAFI_UNICAST: u8 = 1;

/// What a record is, by type and subtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `TABLE_DUMP_V2` `PEER_INDEX_TABLE`.
    PeerIndexTable,
    /// A `TABLE_DUMP_V2` unicast RIB record.
    Rib { family: Family, add_path: bool },
    /// A `TABLE_DUMP` record.
    TableDump { family: Family },
    /// A BGP message a peer sent, in `BGP4MP` or `BGP4MP_ET`.
    Message { as4: bool, add_path: bool },
    /// Known, and holds nothing a table takes (multicast, state changes,
    /// messages the collector sent).
    Ignored,
    /// Not read by fibkit: may hold routes.
    Unsupported,
}

/// IPv4 or IPv6.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    V4,
    V6,
}

impl Family {
    fn from_afi(afi: u16) -> Option<Family> {
        match afi {
            AFI_IPV4 => Some(Family::V4),
            AFI_IPV6 => Some(Family::V6),
            _ => None,
        }
    }

    fn address_len(self) -> usize {
        match self {
            Family::V4 => 4,
            Family::V6 => 16,
        }
    }
}

fn classify(mrt_type: u16, subtype: u16) -> Kind {
    match (mrt_type, subtype) {
        (TABLE_DUMP_V2, 1) => Kind::PeerIndexTable,
        (TABLE_DUMP_V2, 2) => Kind::Rib { family: Family::V4, add_path: false },
        (TABLE_DUMP_V2, 4) => Kind::Rib { family: Family::V6, add_path: false },
        (TABLE_DUMP_V2, 8) => Kind::Rib { family: Family::V4, add_path: true },
        (TABLE_DUMP_V2, 10) => Kind::Rib { family: Family::V6, add_path: true },
        (TABLE_DUMP_V2, 3 | 5 | 7 | 9 | 11) => Kind::Ignored,
        (TABLE_DUMP, 1) => Kind::TableDump { family: Family::V4 },
        (TABLE_DUMP, 2) => Kind::TableDump { family: Family::V6 },
        (BGP4MP | BGP4MP_ET, 1) => Kind::Message { as4: false, add_path: false },
        (BGP4MP | BGP4MP_ET, 4) => Kind::Message { as4: true, add_path: false },
        (BGP4MP | BGP4MP_ET, 8) => Kind::Message { as4: false, add_path: true },
        (BGP4MP | BGP4MP_ET, 9) => Kind::Message { as4: true, add_path: true },
        (BGP4MP | BGP4MP_ET, 0 | 5 | 6 | 7 | 10 | 11) => Kind::Ignored,
        _ => Kind::Unsupported,
    }
}

/// A name for a record type and subtype, for messages.
fn type_name(mrt_type: u16, subtype: u16) -> String {
    let name = match (mrt_type, subtype) {
        (TABLE_DUMP_V2, 6) => "TABLE_DUMP_V2 RIB_GENERIC",
        (TABLE_DUMP_V2, 12) => "TABLE_DUMP_V2 RIB_GENERIC_ADDPATH",
        (BGP4MP | BGP4MP_ET, 2) => "BGP4MP_ENTRY",
        (BGP4MP | BGP4MP_ET, 3) => "BGP4MP_SNAPSHOT",
        (TABLE_DUMP, _) => "TABLE_DUMP",
        (TABLE_DUMP_V2, _) => "TABLE_DUMP_V2",
        (BGP4MP, _) => "BGP4MP",
        (BGP4MP_ET, _) => "BGP4MP_ET",
        (11, _) => "OSPFv2",
        (32 | 33, _) => "ISIS",
        (48 | 49, _) => "OSPFv3",
        _ => "unknown",
    };
    format!("type {mrt_type} subtype {subtype} ({name})")
}

/// Whether `bytes` start with an MRT header of a type and subtype fibkit
/// knows and a sane length (see the [module docs](self)).
pub(crate) fn is_mrt(bytes: &[u8]) -> bool {
    let Some(header) = bytes.get(..HEADER_LEN) else { return false };
    let mrt_type = u16::from_be_bytes([header[4], header[5]]);
    let subtype = u16::from_be_bytes([header[6], header[7]]);
    let length = u32::from_be_bytes([header[8], header[9], header[10], header[11]]);
    classify(mrt_type, subtype) != Kind::Unsupported
        && length <= DETECT_MAX_LEN
        && (mrt_type != BGP4MP_ET || length >= 4)
}

// ---------------------------------------------------------------------------
// Bounds-checked reading
// ---------------------------------------------------------------------------

/// A problem at a byte offset of the decompressed data.
#[derive(Debug)]
struct Malformed {
    offset: u64,
    message: String,
}

impl Malformed {
    fn into_error(self, file: &Path) -> LoadError {
        LoadError::new(file, Position::Offset(self.offset), self.message)
    }
}

/// Reads big-endian fields from a slice of the file, knowing the slice's
/// offset in the file for error messages. Every read checks the bytes are
/// there; lengths read from the file only ever slice what is present.
#[derive(Clone, Copy, Debug)]
struct Cursor<'a> {
    bytes: &'a [u8],
    position: usize,
    /// Offset of `bytes[0]` in the file.
    base: usize,
}

impl<'a> Cursor<'a> {
    fn new(bytes: &'a [u8], base: usize) -> Self {
        Cursor { bytes, position: 0, base }
    }

    /// The file offset of the next byte.
    fn offset(&self) -> u64 {
        (self.base + self.position) as u64
    }

    fn remaining(&self) -> usize {
        self.bytes.len() - self.position
    }

    fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    fn malformed(&self, message: String) -> Malformed {
        Malformed { offset: self.offset(), message }
    }

    /// The next `len` bytes as a cursor of their own.
    fn take(&mut self, len: usize, what: &str) -> Result<Cursor<'a>, Malformed> {
        if len > self.remaining() {
            return Err(self.malformed(format!(
                "{what} needs {len} bytes, but only {} are left in the record",
                self.remaining()
            )));
        }
        let taken = Cursor::new(&self.bytes[self.position..self.position + len], self.base + self.position);
        self.position += len;
        Ok(taken)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], Malformed> {
        let taken = self.take(N, what)?;
        let mut out = [0; N];
        out.copy_from_slice(taken.bytes);
        Ok(out)
    }

    fn u8(&mut self, what: &str) -> Result<u8, Malformed> {
        Ok(self.array::<1>(what)?[0])
    }

    fn u16(&mut self, what: &str) -> Result<u16, Malformed> {
        self.array(what).map(u16::from_be_bytes)
    }

    fn u32(&mut self, what: &str) -> Result<u32, Malformed> {
        self.array(what).map(u32::from_be_bytes)
    }

    /// A 2- or 4-byte ASN.
    fn asn(&mut self, as4: bool, what: &str) -> Result<u32, Malformed> {
        if as4 {
            self.u32(what)
        } else {
            self.u16(what).map(u32::from)
        }
    }

    fn address(&mut self, family: Family, what: &str) -> Result<IpAddr, Malformed> {
        Ok(match family {
            Family::V4 => IpAddr::V4(Ipv4Addr::from(self.array::<4>(what)?)),
            Family::V6 => IpAddr::V6(Ipv6Addr::from(self.array::<16>(what)?)),
        })
    }

    /// A prefix in NLRI encoding: a length in bits, then just enough bytes.
    /// Bits past the length are cleared (RFC 4271: they are irrelevant).
    fn nlri_prefix(&mut self, family: Family, what: &str) -> Result<IpPrefix, Malformed> {
        let at = self.offset();
        let prefix_len = self.u8(what)?;
        let max = 8 * family.address_len() as u8;
        if prefix_len > max {
            return Err(Malformed {
                offset: at,
                message: format!("{what}: prefix length {prefix_len} exceeds {max}"),
            });
        }
        let bytes = self.take(usize::from(prefix_len).div_ceil(8), what)?.bytes;
        Ok(prefix_from_bytes(family, bytes, prefix_len))
    }

    /// A whole address and a prefix length byte after it (`TABLE_DUMP`).
    fn full_prefix(&mut self, family: Family) -> Result<IpPrefix, Malformed> {
        let bytes = self.take(family.address_len(), "prefix")?.bytes;
        let at = self.offset();
        let prefix_len = self.u8("prefix length")?;
        let max = 8 * family.address_len() as u8;
        if prefix_len > max {
            return Err(Malformed { offset: at, message: format!("prefix length {prefix_len} exceeds {max}") });
        }
        Ok(prefix_from_bytes(family, bytes, prefix_len))
    }
}

/// The prefix of `prefix_len` bits whose leading bytes are `bytes`.
fn prefix_from_bytes(family: Family, bytes: &[u8], prefix_len: u8) -> IpPrefix {
    let mut wide = [0u8; 16];
    wide[..bytes.len()].copy_from_slice(bytes);
    match family {
        Family::V4 => {
            let addr = u32::from_be_bytes([wide[0], wide[1], wide[2], wide[3]]);
            IpPrefix::V4(Prefix::truncating(addr, prefix_len))
        }
        Family::V6 => IpPrefix::V6(Prefix::truncating(u128::from_be_bytes(wide), prefix_len)),
    }
}

// ---------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------

/// One complete record.
#[derive(Clone, Copy, Debug)]
struct Record<'a> {
    /// Offset of the header.
    offset: usize,
    seconds: u32,
    mrt_type: u16,
    subtype: u16,
    body: Cursor<'a>,
}

/// Where the complete records end, when the data ends inside a record.
#[derive(Clone, Debug)]
struct Truncation {
    /// Offset of the incomplete record (the end of the complete data).
    offset: usize,
    /// What is missing.
    message: String,
}

/// The complete records of a file in order; the first incomplete one ends
/// the iteration and is described in `truncation`.
struct Records<'a> {
    bytes: &'a [u8],
    offset: usize,
    count: usize,
    truncation: Option<Truncation>,
}

impl<'a> Records<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Records { bytes, offset: 0, count: 0, truncation: None }
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Record<'a>;

    fn next(&mut self) -> Option<Record<'a>> {
        let rest = &self.bytes[self.offset..];
        if rest.is_empty() || self.truncation.is_some() {
            return None;
        }
        if rest.len() < HEADER_LEN {
            self.truncation = Some(Truncation {
                offset: self.offset,
                message: format!("an incomplete MRT header ({} of {HEADER_LEN} bytes)", rest.len()),
            });
            return None;
        }
        let field = |at: usize| u16::from_be_bytes([rest[at], rest[at + 1]]);
        let length = u32::from_be_bytes([rest[8], rest[9], rest[10], rest[11]]);
        let available = rest.len() - HEADER_LEN;
        if u64::from(length) > available as u64 {
            self.truncation = Some(Truncation {
                offset: self.offset,
                message: format!(
                    "an incomplete MRT record ({}): its header announces {length} bytes, {available} follow",
                    type_name(field(4), field(6))
                ),
            });
            return None;
        }
        let length = length as usize;
        let record = Record {
            offset: self.offset,
            seconds: u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]),
            mrt_type: field(4),
            subtype: field(6),
            body: Cursor::new(&rest[HEADER_LEN..HEADER_LEN + length], self.offset + HEADER_LEN),
        };
        self.offset += HEADER_LEN + length;
        self.count += 1;
        Some(record)
    }
}

// ---------------------------------------------------------------------------
// Peers
// ---------------------------------------------------------------------------

/// How to pick the peer whose routes make the table (`--peer`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PeerSelector {
    /// The peer with the most routes (see the [module docs](self)).
    #[default]
    MostRoutes,
    /// The peer of this index (`--peer 3`).
    Index(usize),
    /// The peer with this address (`--peer 192.0.2.1`).
    Address(IpAddr),
    /// The peer with this ASN (`--peer AS3356`).
    Asn(u32),
}

impl FromStr for PeerSelector {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let asn = text.strip_prefix("AS").or_else(|| text.strip_prefix("as"));
        if let Some(digits) = asn.filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())) {
            return digits.parse().map(PeerSelector::Asn).map_err(|_| format!("ASN {text} exceeds 32 bits"));
        }
        if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
            return text.parse().map(PeerSelector::Index).map_err(|_| format!("peer index {text} is too large"));
        }
        text.parse::<IpAddr>().map(PeerSelector::Address).map_err(|_| {
            format!("bad peer {text:?}: expected an index (3), an address (192.0.2.1, 2001:db8::1) or an ASN (AS3356)")
        })
    }
}

impl fmt::Display for PeerSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PeerSelector::MostRoutes => write!(f, "(the peer with the most routes)"),
            PeerSelector::Index(index) => write!(f, "{index}"),
            PeerSelector::Address(addr) => write!(f, "{addr}"),
            PeerSelector::Asn(asn) => write!(f, "AS{asn}"),
        }
    }
}

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
            _ => Err(format!("bad value {text:?}: expected next-hop or origin-as")),
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

/// How the records of a file refer to a peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum PeerKey {
    /// By `TABLE_DUMP_V2` peer index.
    Slot(u16),
    /// By address and ASN (`TABLE_DUMP`, `BGP4MP`).
    Session(IpAddr, u32),
}

/// A BGP peer of the collector, with what the file holds of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Peer {
    /// The index `--peer INDEX` selects: the place in the
    /// `PEER_INDEX_TABLE`, else the order of first appearance.
    pub index: usize,
    /// The peer's address, when the file says.
    pub address: Option<IpAddr>,
    /// The peer's ASN, when the file says.
    pub asn: Option<u32>,
    /// The peer's BGP identifier (`PEER_INDEX_TABLE` only).
    pub bgp_id: Option<Ipv4Addr>,
    /// IPv4 prefixes: in the RIB (a dump), or announced (an update stream).
    pub routes_v4: usize,
    /// IPv6 prefixes, counted as `routes_v4`.
    pub routes_v6: usize,
    /// Withdrawn prefixes (update streams; 0 in a dump).
    pub withdrawals: usize,
    key: PeerKey,
}

impl Peer {
    /// IPv4 and IPv6 routes together.
    pub fn routes(&self) -> usize {
        self.routes_v4 + self.routes_v6
    }

    fn new(index: usize, key: PeerKey) -> Self {
        let (address, asn) = match key {
            PeerKey::Slot(_) => (None, None),
            PeerKey::Session(address, asn) => (Some(address), Some(asn)),
        };
        Peer { index, address, asn, bgp_id: None, routes_v4: 0, routes_v6: 0, withdrawals: 0, key }
    }

    fn count(&mut self, prefix: &IpPrefix) {
        match prefix {
            IpPrefix::V4(_) => self.routes_v4 += 1,
            IpPrefix::V6(_) => self.routes_v6 += 1,
        }
    }
}

impl fmt::Display for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "peer {}", self.index)?;
        if let Some(asn) = self.asn {
            write!(f, " AS{asn}")?;
        }
        if let Some(address) = self.address {
            write!(f, " {address}")?;
        }
        if self.asn.is_none() && self.address.is_none() {
            write!(f, " (address and ASN unknown: no PEER_INDEX_TABLE)")?;
        }
        Ok(())
    }
}

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

/// The position of the peer with the most routes (lowest index on a tie).
fn most_routes(peers: &[Peer]) -> Option<usize> {
    peers
        .iter()
        .enumerate()
        .filter(|(_, peer)| peer.routes() > 0)
        .max_by_key(|(_, peer)| (peer.routes(), std::cmp::Reverse(peer.index)))
        .map(|(position, _)| position)
}

/// The position of the peer `selector` picks.
fn select_peer(file: &Path, peers: &[Peer], selector: PeerSelector) -> Result<usize, LoadError> {
    let error = |message: String| LoadError::new(file, Position::File, message);
    let matching: Vec<usize> = match selector {
        PeerSelector::MostRoutes => {
            return most_routes(peers).ok_or_else(|| error("no routes in the file: no peer has any".to_string()))
        }
        PeerSelector::Index(index) => (0..peers.len()).filter(|&at| peers[at].index == index).collect(),
        PeerSelector::Address(address) => {
            (0..peers.len()).filter(|&at| peers[at].address == Some(address)).collect()
        }
        PeerSelector::Asn(asn) => (0..peers.len()).filter(|&at| peers[at].asn == Some(asn)).collect(),
    };
    match matching[..] {
        [only] => Ok(only),
        [] => {
            let mut known: Vec<&Peer> = peers.iter().collect();
            known.sort_by_key(|peer| peer.index);
            let listed: Vec<String> = known.iter().take(8).map(ToString::to_string).collect();
            let more = if known.len() > 8 { format!(", ... ({} peers in all)", known.len()) } else { String::new() };
            Err(error(format!("no peer {selector} in the file (peers: {}{more}); see --peers", listed.join(", "))))
        }
        _ => {
            let listed: Vec<String> = matching.iter().map(|&at| peers[at].to_string()).collect();
            Err(error(format!(
                "--peer {selector} matches {} peers ({}): select one by index",
                matching.len(),
                listed.join(", ")
            )))
        }
    }
}

// ---------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------

/// What a file holds, from its first `TABLE_DUMP*` or `BGP4MP*` record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Content {
    Rib,
    Updates,
}

impl Content {
    fn of(bytes: &[u8]) -> Content {
        Records::new(bytes)
            .find_map(|record| match record.mrt_type {
                TABLE_DUMP | TABLE_DUMP_V2 => Some(Content::Rib),
                BGP4MP | BGP4MP_ET => Some(Content::Updates),
                _ => None,
            })
            .unwrap_or(Content::Rib)
    }

    fn name(self) -> &'static str {
        match self {
            Content::Rib => "RIB dump",
            Content::Updates => "update stream",
        }
    }
}

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
        return Err(LoadError::new(
            file,
            Position::File,
            "an MRT RIB dump, not an update stream (BGP4MP messages)",
        ));
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

/// Routes left out for lack of a value: per reason, how many and where the
/// first was.
#[derive(Default)]
struct Omissions {
    reasons: BTreeMap<&'static str, (usize, u64)>,
}

impl Omissions {
    fn note(&mut self, why: &'static str, offset: u64) {
        self.reasons.entry(why).or_insert((0, offset)).0 += 1;
    }

    fn report(self, file: &Path, peer: &Peer, options: &LoadOptions, warnings: &mut Vec<String>) -> Result<(), LoadError> {
        for (why, (count, first)) in self.reasons {
            warn(
                file,
                Position::Offset(first),
                format!("{count} route(s) of {peer} have {why} and are left out (the first is here)"),
                options,
                warnings,
            )?;
        }
        Ok(())
    }
}

/// Warns (an error with `strict`) about a truncated file and skipped
/// records, once the records are read.
fn report_reading(
    file: &Path,
    data: &Decompressed<'_>,
    records: &Records<'_>,
    skipped: &BTreeMap<(u16, u16), (usize, usize)>,
    content: Content,
    options: &LoadOptions,
    warnings: &mut Vec<String>,
) -> Result<(), LoadError> {
    for (&(mrt_type, subtype), &(count, first)) in skipped {
        let why = match (content, classify(mrt_type, subtype)) {
            (Content::Rib, Kind::Message { .. }) => "BGP messages in a RIB dump are not read",
            (Content::Updates, Kind::Rib { .. } | Kind::TableDump { .. } | Kind::PeerIndexTable) => {
                "RIB records in an update stream are not read"
            }
            _ => "fibkit does not read them",
        };
        warn(
            file,
            Position::Offset(first as u64),
            format!("skipped {count} MRT record(s) of {}, the first here: {why}", type_name(mrt_type, subtype)),
            options,
            warnings,
        )?;
    }
    let ended = match (&records.truncation, &data.cut) {
        (Some(truncation), cut) => {
            let cause = cut.as_ref().map_or_else(String::new, |cut| format!("; {cut}"));
            Some((truncation.offset, format!("{}{cause}", truncation.message)))
        }
        (None, Some(cut)) => Some((data.bytes.len(), format!("{cut}, at the end of a record"))),
        (None, None) => None,
    };
    if let Some((offset, message)) = ended {
        warn(
            file,
            Position::Offset(offset as u64),
            format!(
                "the data ends here, in {message}; loaded the {} complete records before it",
                records.count
            ),
            options,
            warnings,
        )?;
    }
    Ok(())
}

// ---- RIB dumps --------------------------------------------------------------

/// The first pass over a RIB dump: peers and their route counts.
struct RibScan {
    peers: Vec<Peer>,
    /// `TABLE_DUMP_V2` peer index to position in `peers`.
    slots: Vec<Option<usize>>,
    /// Address and ASN to position in `peers`.
    sessions: HashMap<(IpAddr, u32), usize>,
    /// Whether a `PEER_INDEX_TABLE` was read.
    peer_table: bool,
}

impl RibScan {
    /// The position of the peer of `key`, adding it when new.
    fn position(&mut self, key: PeerKey) -> usize {
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

/// Reads a `PEER_INDEX_TABLE` into `scan`.
fn peer_index_table(mut body: Cursor<'_>, scan: &mut RibScan) -> Result<(), Malformed> {
    body.u32("collector BGP id")?;
    let name_len = body.u16("view name length")?;
    body.take(usize::from(name_len), "view name")?;
    let count = body.u16("peer count")?;
    for index in 0..count {
        let peer_type = body.u8("peer type")?;
        let bgp_id = Ipv4Addr::from(body.array::<4>("peer BGP id")?);
        let family = if peer_type & 1 != 0 { Family::V6 } else { Family::V4 };
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

/// First pass: frames every record, reads the peer table, counts each
/// peer's routes; warns about truncation and skipped records.
fn scan_rib(
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
fn load_rib(file: &Path, data: &Decompressed<'_>, options: &LoadOptions, table: &mut RouteTable) -> Result<(), LoadError> {
    let scan = scan_rib(file, data, options, &mut table.warnings)?;
    let chosen = select_peer(file, &scan.peers, options.peer)?;
    let peer = &scan.peers[chosen];
    let key = peer.key;
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
        match attributes.value(&rib.prefix, options.value, peer.asn).map_err(|error| error.into_error(file))? {
            Ok(value) => routes.push(Route { prefix: rib.prefix, value, offset: entry.offset }),
            Err(why) => missing.note(why, entry.offset),
        }
    }
    missing.report(file, peer, options, &mut table.warnings)?;
    insert_routes(file, &routes, options, table)
}

/// Inserts routes in file order; a repeated prefix keeps the later value
/// (warned, or an error with `strict`), and the replaced value is not
/// interned.
fn insert_routes(file: &Path, routes: &[Route], options: &LoadOptions, table: &mut RouteTable) -> Result<(), LoadError> {
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

// ---- Attributes --------------------------------------------------------------

/// The path attributes fibkit uses, located but not yet decoded.
#[derive(Default)]
struct Attributes<'a> {
    next_hop: Option<Cursor<'a>>,
    as_path: Option<Cursor<'a>>,
    as4_path: Option<Cursor<'a>>,
    mp_reach: Option<Cursor<'a>>,
    mp_unreach: Option<Cursor<'a>>,
    /// Whether `as_path` holds 4-byte ASNs.
    as4: bool,
}

impl<'a> Attributes<'a> {
    /// Walks the attributes (the first of each type counts).
    fn parse(mut cursor: Cursor<'a>, as4: bool) -> Result<Self, Malformed> {
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
    fn next_hop_v4(&self) -> Result<Option<IpAddr>, Malformed> {
        let Some(mut value) = self.next_hop else { return Ok(None) };
        if value.remaining() != 4 {
            return Err(value.malformed(format!("NEXT_HOP of {} bytes (expected 4)", value.remaining())));
        }
        value.address(Family::V4, "NEXT_HOP").map(Some)
    }

    /// The route's value: `Ok(Ok(label))`, or `Ok(Err(why))` when the route
    /// lacks what `choice` asks for.
    fn value(
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

    /// The origin AS of the path (see the [module docs](self)).
    fn origin_as(&self) -> Result<Option<u32>, Malformed> {
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
fn path_origin(mut path: Cursor<'_>, as4: bool) -> Result<Option<u32>, Malformed> {
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
        4 => value.address(Family::V4, "next hop"),
        16 | 32 => value.address(Family::V6, "next hop"),
        other => Err(value.malformed(format!("next hop of {other} bytes (expected 4, 16 or 32)"))),
    }
}

/// A full `MP_REACH_NLRI` (RFC 4760).
struct MpReach<'a> {
    family: Option<Family>,
    unicast: bool,
    next_hop: Option<IpAddr>,
    nlri: Cursor<'a>,
}

impl<'a> MpReach<'a> {
    fn parse(mut value: Cursor<'a>) -> Result<Self, Malformed> {
        let afi = value.u16("MP_REACH_NLRI AFI")?;
        let safi = value.u8("MP_REACH_NLRI SAFI")?;
        let length = value.u8("MP_REACH_NLRI next hop length")?;
        let next_hop = value.take(usize::from(length), "MP_REACH_NLRI next hop")?;
        value.u8("MP_REACH_NLRI reserved byte")?;
        let family = Family::from_afi(afi);
        let unicast = safi == SAFI_UNICAST && family.is_some();
        // Next hops of other SAFIs (VPN: with a route distinguisher) are not
        // ours to decode.
        let next_hop = if unicast { Some(next_hop_address(next_hop)?) } else { None };
        let nlri = value.take(value.remaining(), "NLRI")?;
        Ok(MpReach { family, unicast, next_hop, nlri })
    }
}

// ---- Update streams --------------------------------------------------------

/// What a BGP4MP message gave for one prefix.
enum Item {
    /// An update, with its ADD-PATH path identifier.
    Update(TimedUpdate, Option<u32>),
    /// An announcement without the value asked for.
    NoValue { offset: u64, why: &'static str },
}

/// Every peer's updates, in file order.
struct Messages {
    peers: Vec<Peer>,
    /// (position of the peer, what it sent).
    items: Vec<(usize, Item)>,
}

/// Reads every BGP4MP message of the file (one pass: update files are
/// small next to RIB dumps).
fn read_messages(
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
                        Item::Update(TimedUpdate { update: Update::Announce { prefix, .. }, .. }, _) => peer.count(prefix),
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
    let family = Family::from_afi(afi)
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
        found.push(withdraw(nlri_entry(&mut withdrawn, Family::V4, add_path, "withdrawn route")?));
    }
    if let Some(mut unreach) = attributes.mp_unreach {
        let afi = unreach.u16("MP_UNREACH_NLRI AFI")?;
        let safi = unreach.u8("MP_UNREACH_NLRI SAFI")?;
        if let (Some(family), SAFI_UNICAST) = (Family::from_afi(afi), safi) {
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
            let prefix = nlri_entry(&mut nlri, Family::V4, add_path, "NLRI prefix")?;
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
struct PathTracker {
    paths: HashMap<IpPrefix, BTreeMap<u32, Label>>,
}

impl PathTracker {
    fn apply(&mut self, update: Update, path_id: u32) -> Update {
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

#[cfg(test)]
mod tests;
