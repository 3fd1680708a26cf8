//! A small MRT writer: records, peer tables, RIB entries and BGP4MP UPDATE
//! messages written byte by byte for the tests.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::load::mrt::attributes::{
    ATTR_AS4_PATH, ATTR_AS_PATH, ATTR_MP_REACH_NLRI, ATTR_MP_UNREACH_NLRI, ATTR_NEXT_HOP,
};
use crate::load::mrt::bgp4mp::BGP_UPDATE;
use crate::load::mrt::cursor::{AFI_IPV4, AFI_IPV6};
use crate::load::mrt::records::{BGP4MP, BGP4MP_ET, TABLE_DUMP_V2};
use crate::load::updates::IpPrefix;

pub(super) fn record(out: &mut Vec<u8>, seconds: u32, mrt_type: u16, subtype: u16, body: &[u8]) {
    out.extend(seconds.to_be_bytes());
    out.extend(mrt_type.to_be_bytes());
    out.extend(subtype.to_be_bytes());
    out.extend((body.len() as u32).to_be_bytes());
    out.extend(body);
}

/// A `PEER_INDEX_TABLE` body; peers with `as4` get 4-byte ASN fields.
pub(super) fn peer_table(peers: &[(IpAddr, u32)]) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend([192, 0, 2, 255]);
    body.extend(4u16.to_be_bytes());
    body.extend(b"test");
    body.extend((peers.len() as u16).to_be_bytes());
    for (index, &(address, asn)) in peers.iter().enumerate() {
        let as4 = asn > 0xffff;
        body.push(u8::from(address.is_ipv6()) | if as4 { 2 } else { 0 });
        body.extend([10, 0, 0, index as u8]);
        match address {
            IpAddr::V4(v4) => body.extend(v4.octets()),
            IpAddr::V6(v6) => body.extend(v6.octets()),
        }
        if as4 {
            body.extend(asn.to_be_bytes());
        } else {
            body.extend((asn as u16).to_be_bytes());
        }
    }
    body
}

pub(super) fn nlri(prefix: IpPrefix) -> Vec<u8> {
    let (len, bytes) = match prefix {
        IpPrefix::V4(p) => (p.prefix_len(), p.addr().to_be_bytes().to_vec()),
        IpPrefix::V6(p) => (p.prefix_len(), p.addr().to_be_bytes().to_vec()),
    };
    let mut out = vec![len];
    out.extend(&bytes[..usize::from(len).div_ceil(8)]);
    out
}

/// An attribute with the flags of its type (optional non-transitive for
/// `MP_REACH_NLRI` and `MP_UNREACH_NLRI`, optional transitive for
/// `AS4_PATH`, well-known otherwise).
pub(super) fn attribute(out: &mut Vec<u8>, code: u8, value: &[u8]) {
    let flags = match code {
        ATTR_MP_REACH_NLRI | ATTR_MP_UNREACH_NLRI => 0x80,
        ATTR_AS4_PATH => 0xc0,
        _ => 0x40,
    };
    if value.len() > 255 {
        out.extend([flags | 0x10, code]);
        out.extend((value.len() as u16).to_be_bytes());
    } else {
        out.extend([flags, code, value.len() as u8]);
    }
    out.extend(value);
}

/// An `AS_PATH` value: one `AS_SEQUENCE` of `path`.
pub(super) fn as_path(path: &[u32], as4: bool) -> Vec<u8> {
    let mut value = vec![2, path.len() as u8];
    for &asn in path {
        if as4 {
            value.extend(asn.to_be_bytes());
        } else {
            value.extend((asn as u16).to_be_bytes());
        }
    }
    value
}

/// How the route's next hop is written.
#[derive(Clone, Copy, Debug)]
pub(super) enum Hop {
    V4(Ipv4Addr),
    /// `MP_REACH_NLRI` abbreviated as `TABLE_DUMP_V2` stores it.
    Short(Ipv6Addr),
    /// `MP_REACH_NLRI` in full, with a link-local address after the global.
    Full(Ipv6Addr),
    None,
}

/// RIB entry attributes: ORIGIN, AS_PATH (4-byte), the next hop.
pub(super) fn rib_attributes(path: &[u32], hop: Hop) -> Vec<u8> {
    let mut out = Vec::new();
    attribute(&mut out, 1, &[0]);
    attribute(&mut out, ATTR_AS_PATH, &as_path(path, true));
    match hop {
        Hop::V4(addr) => attribute(&mut out, ATTR_NEXT_HOP, &addr.octets()),
        Hop::Short(addr) => {
            let mut value = vec![16];
            value.extend(addr.octets());
            attribute(&mut out, ATTR_MP_REACH_NLRI, &value);
        }
        Hop::Full(addr) => {
            let mut value = vec![0, 2, 1, 32];
            value.extend(addr.octets());
            value.extend("fe80::1".parse::<Ipv6Addr>().unwrap().octets());
            value.push(0);
            attribute(&mut out, ATTR_MP_REACH_NLRI, &value);
        }
        Hop::None => {}
    }
    out
}

/// A `RIB_IPV4/IPV6_UNICAST(_ADDPATH)` record of `entries` (peer index,
/// path id, attributes).
pub(super) fn rib(out: &mut Vec<u8>, prefix: IpPrefix, entries: &[(u16, u32, Vec<u8>)], add_path: bool) {
    let mut body = Vec::new();
    body.extend(7u32.to_be_bytes());
    body.extend(nlri(prefix));
    body.extend((entries.len() as u16).to_be_bytes());
    for (peer, path_id, attributes) in entries {
        body.extend(peer.to_be_bytes());
        body.extend(1_400_000_000u32.to_be_bytes());
        if add_path {
            body.extend(path_id.to_be_bytes());
        }
        body.extend((attributes.len() as u16).to_be_bytes());
        body.extend(attributes);
    }
    let subtype = match (prefix, add_path) {
        (IpPrefix::V4(_), false) => 2,
        (IpPrefix::V6(_), false) => 4,
        (IpPrefix::V4(_), true) => 8,
        (IpPrefix::V6(_), true) => 10,
    };
    record(out, 1_400_000_000, TABLE_DUMP_V2, subtype, &body);
}

/// A BGP4MP(_ET) UPDATE message record from a peer.
pub(super) struct Message {
    pub(super) peer: IpAddr,
    pub(super) peer_asn: u32,
    pub(super) as4: bool,
    pub(super) add_path: bool,
    pub(super) et: bool,
    pub(super) withdrawn: Vec<(u32, IpPrefix)>,
    pub(super) attributes: Vec<u8>,
    pub(super) announced: Vec<(u32, IpPrefix)>,
}

impl Message {
    pub(super) fn new(peer: &str, peer_asn: u32) -> Self {
        Message {
            peer: peer.parse().unwrap(),
            peer_asn,
            as4: true,
            add_path: false,
            et: false,
            withdrawn: Vec::new(),
            attributes: Vec::new(),
            announced: Vec::new(),
        }
    }

    pub(super) fn write(&self, out: &mut Vec<u8>, seconds: u32) {
        let encode = |entries: &[(u32, IpPrefix)]| {
            let mut bytes = Vec::new();
            for &(path_id, prefix) in entries {
                if self.add_path {
                    bytes.extend(path_id.to_be_bytes());
                }
                bytes.extend(nlri(prefix));
            }
            bytes
        };
        let withdrawn = encode(&self.withdrawn);
        let announced = encode(&self.announced);
        let mut message = vec![0xff; 16];
        let length = 19 + 2 + withdrawn.len() + 2 + self.attributes.len() + announced.len();
        message.extend((length as u16).to_be_bytes());
        message.push(BGP_UPDATE);
        message.extend((withdrawn.len() as u16).to_be_bytes());
        message.extend(&withdrawn);
        message.extend((self.attributes.len() as u16).to_be_bytes());
        message.extend(&self.attributes);
        message.extend(&announced);

        let mut body = Vec::new();
        if self.et {
            body.extend(250_000u32.to_be_bytes());
        }
        let asn = |asn: u32| if self.as4 { asn.to_be_bytes().to_vec() } else { (asn as u16).to_be_bytes().to_vec() };
        body.extend(asn(self.peer_asn));
        body.extend(asn(6447));
        body.extend(0u16.to_be_bytes());
        match self.peer {
            IpAddr::V4(v4) => {
                body.extend(AFI_IPV4.to_be_bytes());
                body.extend(v4.octets());
                body.extend([192, 0, 2, 1]);
            }
            IpAddr::V6(v6) => {
                body.extend(AFI_IPV6.to_be_bytes());
                body.extend(v6.octets());
                body.extend([0; 16]);
            }
        }
        body.extend(message);
        let subtype = match (self.as4, self.add_path) {
            (false, false) => 1,
            (true, false) => 4,
            (false, true) => 8,
            (true, true) => 9,
        };
        record(out, seconds, if self.et { BGP4MP_ET } else { BGP4MP }, subtype, &body);
    }
}
