//! A BGP peer of an MRT file's collector: who it is and what the file
//! holds of it. Below both the MRT reader, which finds peers, and the update
//! stream, which remembers the peer its updates came from.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr};

use crate::addr::IpPrefix;

/// How the records of a file refer to a peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum PeerKey {
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
    pub(super) key: PeerKey,
}

impl Peer {
    /// IPv4 and IPv6 routes together.
    pub fn routes(&self) -> usize {
        self.routes_v4 + self.routes_v6
    }

    pub(super) fn new(index: usize, key: PeerKey) -> Self {
        let (address, asn) = match key {
            PeerKey::Slot(_) => (None, None),
            PeerKey::Session(address, asn) => (Some(address), Some(asn)),
        };
        Peer { index, address, asn, bgp_id: None, routes_v4: 0, routes_v6: 0, withdrawals: 0, key }
    }

    pub(super) fn count(&mut self, prefix: &IpPrefix) {
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
