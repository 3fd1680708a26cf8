//! MRT TABLE_DUMP_V2 (RFC 6396) written for `gobgp mrt inject global`: a
//! peer table of one peer, then one RIB record a route, each route with
//! ORIGIN IGP, an AS_PATH of its origin AS alone and a next hop.
//!
//! The one peer has AS 0 and identifier 0.0.0.0, so GoBGP takes the routes
//! as its own: a later route for the same prefix replaces the earlier one,
//! and `gobgp global rib del` removes them. A route can carry the
//! NO_ADVERTISE community, which a test's GoBGP refuses to export: GoBGP
//! then keeps it but withdraws the prefix from its neighbours.

use std::net::{Ipv4Addr, Ipv6Addr};

use fibkit::{Address, Family, Prefix};

/// MRT type TABLE_DUMP_V2 and its subtypes.
const TABLE_DUMP_V2: u16 = 13;
const PEER_INDEX_TABLE: u16 = 1;
const RIB_IPV4_UNICAST: u16 = 2;
const RIB_IPV6_UNICAST: u16 = 4;

/// Path attributes: type codes and flags.
const ORIGIN: u8 = 1;
const AS_PATH: u8 = 2;
const NEXT_HOP: u8 = 3;
const COMMUNITIES: u8 = 8;
const MP_REACH_NLRI: u8 = 14;
const WELL_KNOWN: u8 = 0x40;
const OPTIONAL: u8 = 0x80;
const OPTIONAL_TRANSITIVE: u8 = 0xc0;

/// The well-known community NO_ADVERTISE (RFC 1997), as GoBGP's
/// configuration writes it.
pub const NO_ADVERTISE: &str = "65535:65282";
const NO_ADVERTISE_VALUE: u32 = 0xffff_ff02;

/// The next hops of the routes.
pub const NEXT_HOP4: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 3);
pub const NEXT_HOP6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 3);

/// A TABLE_DUMP_V2 file being written: its bytes and the routes in it.
pub struct Dump {
    bytes: Vec<u8>,
    routes: u32,
}

impl Default for Dump {
    fn default() -> Self {
        Dump::new()
    }
}

impl Dump {
    /// A dump holding the peer table.
    pub fn new() -> Dump {
        let mut body = Vec::new();
        body.extend([0; 4]); // collector identifier
        body.extend(0u16.to_be_bytes()); // no view name
        body.extend(1u16.to_be_bytes()); // one peer:
        body.push(2); // IPv4 address, 4-byte AS
        body.extend([0; 4]); // identifier 0.0.0.0
        body.extend([0; 4]); // address 0.0.0.0
        body.extend(0u32.to_be_bytes()); // AS 0
        let mut dump = Dump { bytes: Vec::new(), routes: 0 };
        dump.record(PEER_INDEX_TABLE, &body);
        dump
    }

    /// The number of routes written.
    pub fn routes(&self) -> u32 {
        self.routes
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Writes a route for `prefix` with AS path `origin`; with
    /// `advertise` false it carries NO_ADVERTISE.
    pub fn route<A: Address>(&mut self, prefix: Prefix<A>, origin: u32, advertise: bool) {
        let nlri = nlri(prefix);
        let mut attributes = Vec::new();
        attribute(&mut attributes, WELL_KNOWN, ORIGIN, &[0]);
        let mut path = vec![2, 1]; // one AS_SEQUENCE of one AS
        path.extend(origin.to_be_bytes());
        attribute(&mut attributes, WELL_KNOWN, AS_PATH, &path);
        let subtype = match A::FAMILY {
            Family::Ipv4 => {
                attribute(&mut attributes, WELL_KNOWN, NEXT_HOP, &NEXT_HOP4.octets());
                RIB_IPV4_UNICAST
            }
            Family::Ipv6 => {
                // GoBGP 3.10 reads the attribute in full (AFI, SAFI, next
                // hop, reserved byte, NLRI), not in the short form of
                // RFC 6396 4.3.4 (next hop alone).
                let mut reach = vec![0, 2, 1, 16];
                reach.extend(NEXT_HOP6.octets());
                reach.push(0);
                reach.extend(&nlri);
                attribute(&mut attributes, OPTIONAL, MP_REACH_NLRI, &reach);
                RIB_IPV6_UNICAST
            }
        };
        if !advertise {
            attribute(&mut attributes, OPTIONAL_TRANSITIVE, COMMUNITIES, &NO_ADVERTISE_VALUE.to_be_bytes());
        }
        let mut body = Vec::new();
        body.extend(self.routes.to_be_bytes()); // sequence number
        body.extend(&nlri);
        body.extend(1u16.to_be_bytes()); // one entry:
        body.extend(0u16.to_be_bytes()); // peer 0
        body.extend(0u32.to_be_bytes()); // originated at 0
        body.extend(u16::try_from(attributes.len()).unwrap().to_be_bytes());
        body.extend(attributes);
        self.record(subtype, &body);
        self.routes += 1;
    }

    fn record(&mut self, subtype: u16, body: &[u8]) {
        self.bytes.extend(0u32.to_be_bytes()); // timestamp
        self.bytes.extend(TABLE_DUMP_V2.to_be_bytes());
        self.bytes.extend(subtype.to_be_bytes());
        self.bytes.extend(u32::try_from(body.len()).unwrap().to_be_bytes());
        self.bytes.extend(body);
    }
}

/// A prefix as BGP writes it: its length, then the bytes that length uses.
fn nlri<A: Address>(prefix: Prefix<A>) -> Vec<u8> {
    let bytes = prefix.addr().to_u128().to_be_bytes();
    let address = &bytes[16 - usize::from(A::BITS / 8)..];
    let len = prefix.prefix_len();
    let mut out = vec![len];
    out.extend(&address[..usize::from(len).div_ceil(8)]);
    out
}

/// Appends a path attribute (an extended length when it needs one).
fn attribute(out: &mut Vec<u8>, flags: u8, code: u8, value: &[u8]) {
    match u8::try_from(value.len()) {
        Ok(len) => out.extend([flags, code, len]),
        Err(_) => {
            out.extend([flags | 0x10, code]);
            out.extend(u16::try_from(value.len()).unwrap().to_be_bytes());
        }
    }
    out.extend(value);
}
