//! Peers: choosing the peer whose routes make the table (`--peer`, by
//! default the one with the most routes), and the routes of it left out.

use std::fmt;
use std::net::IpAddr;
use std::path::Path;
use std::str::FromStr;

use std::collections::BTreeMap;

use crate::error::shorten;
use crate::load::peer::Peer;
use crate::load::{warn, LoadError, LoadOptions, Position};

/// How to pick the peer whose routes make the table (`--peer`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PeerSelector {
    /// The peer with the most routes (see the [module docs](super)).
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
            return digits.parse().map(PeerSelector::Asn).map_err(|_| format!("ASN {} exceeds 32 bits", shorten(text)));
        }
        if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
            return text
                .parse()
                .map(PeerSelector::Index)
                .map_err(|_| format!("peer index {} is too large", shorten(text)));
        }
        text.parse::<IpAddr>().map(PeerSelector::Address).map_err(|_| {
            format!(
                "bad peer {:?}: expected an index (3), an address (192.0.2.1, 2001:db8::1) or an ASN (AS3356)",
                shorten(text)
            )
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

/// The position of the peer with the most routes (lowest index on a tie).
pub(super) fn most_routes(peers: &[Peer]) -> Option<usize> {
    peers
        .iter()
        .enumerate()
        .filter(|(_, peer)| peer.routes() > 0)
        .max_by_key(|(_, peer)| (peer.routes(), std::cmp::Reverse(peer.index)))
        .map(|(position, _)| position)
}

/// The position of the peer `selector` picks.
pub(super) fn select_peer(file: &Path, peers: &[Peer], selector: PeerSelector) -> Result<usize, LoadError> {
    let error = |message: String| LoadError::new(file, Position::File, message);
    let matching: Vec<usize> = match selector {
        PeerSelector::MostRoutes => {
            return most_routes(peers).ok_or_else(|| error("no routes in the file: no peer has any".to_string()))
        }
        PeerSelector::Index(index) => (0..peers.len()).filter(|&at| peers[at].index == index).collect(),
        PeerSelector::Address(address) => (0..peers.len()).filter(|&at| peers[at].address == Some(address)).collect(),
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

/// Routes left out for lack of a value: per reason, how many and where the
/// first was.
#[derive(Default)]
pub(super) struct Omissions {
    reasons: BTreeMap<&'static str, (usize, u64)>,
}

impl Omissions {
    pub(super) fn note(&mut self, why: &'static str, offset: u64) {
        self.reasons.entry(why).or_insert((0, offset)).0 += 1;
    }

    pub(super) fn report(
        self,
        file: &Path,
        peer: &Peer,
        options: &LoadOptions,
        warnings: &mut Vec<String>,
    ) -> Result<(), LoadError> {
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
