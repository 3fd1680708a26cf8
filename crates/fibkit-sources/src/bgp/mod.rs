//! A receive-only BGP-4 speaker that feeds a live [`fibkit::Router`].
//!
//! fibkit peers with configured neighbours and never announces: it takes
//! their routes, keeps each neighbour's apart, picks the best route per
//! prefix by the decision steps that apply to a receiver
//! ([`decision`]), and applies every change to an IPv4 and an IPv6
//! [`Router`] through the engines' updaters, while any number of
//! [`Reader`]s look up.
//!
//! ```text
//!  neighbour ──TCP──> session thread ──Event──> speaker thread ──Update batch──> Router<u32> / Router<u128>
//!  (one each: OPEN, timers,          (bounded     (Loc-RIB: candidates per            │ readers: lock-free
//!   UPDATE decode, RFC 7606)          channel)     prefix; decision; max prefixes)    v
//!                                                                                  Reader::lookup
//! ```
//!
//! What it speaks: RFC 4271 sessions (OPEN, KEEPALIVE, hold timer,
//! NOTIFICATION), 4-octet ASNs (RFC 6793), multiprotocol IPv4 and IPv6
//! unicast (RFC 4760), route refresh (RFC 2918: offered; fibkit has
//! nothing to refresh, and asks for a refresh with
//! [`Speaker::refresh`]), malformed UPDATEs handled as RFC 7606 says
//! ([`fibkit::load::bgp`], the decoder the MRT loader uses), a maximum
//! prefix count per neighbour (past it: a Cease NOTIFICATION, RFC 4486,
//! and the neighbour's routes withdrawn).
//!
//! Threads, not async: a speaker has a handful of neighbours, each a
//! blocking connection with one timer; a thread each (with 100 ms read
//! timeouts for the timers) is simpler to reason about than a runtime and
//! costs nothing at that count. The one writer of the routers is the
//! speaker's thread, as [`fibkit::router`] requires.

pub mod decision;
mod neighbours;
mod session;
mod speaker;
pub mod wire;

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use fibkit::load::ValueChoice;
#[cfg(doc)]
use fibkit::router::{Reader, Router};

pub use neighbours::Reconfigured;
pub use speaker::{Speaker, StartError};

/// The speaker's configuration.
#[derive(Clone, Debug)]
pub struct BgpConfig {
    /// The local AS.
    pub local_as: u32,
    /// The BGP identifier.
    pub router_id: Ipv4Addr,
    /// Where to accept connections (none: only active neighbours). Port
    /// 0 takes a free port, the same for every address after the first.
    pub listen: Vec<SocketAddr>,
    /// The hold time offered (seconds; 0 or at least 3).
    pub hold_time: u16,
    /// What a route's value is: its next hop or its origin AS.
    pub value: ValueChoice,
    /// The neighbours.
    pub neighbours: Vec<NeighbourConfig>,
    /// Also write each log line to standard error.
    pub echo_log: bool,
}

impl BgpConfig {
    /// A configuration with no neighbours: hold time 90 s, next-hop values.
    pub fn new(local_as: u32, router_id: Ipv4Addr) -> Self {
        BgpConfig {
            local_as,
            router_id,
            listen: Vec::new(),
            hold_time: 90,
            value: ValueChoice::NextHop,
            neighbours: Vec::new(),
            echo_log: false,
        }
    }
}

/// A neighbour's configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NeighbourConfig {
    /// Its address: connections from it are its sessions.
    pub address: IpAddr,
    /// Its AS (equal to the local AS: an internal neighbour).
    pub remote_as: u32,
    /// `Some(port)`: fibkit connects to it on that port (and accepts its
    /// connections too); `None`: it only accepts.
    pub connect_port: Option<u16>,
    /// How long to wait between connection attempts.
    pub connect_retry: Duration,
    /// The most prefixes (both families) it may announce; past it the
    /// session ends with a Cease NOTIFICATION.
    pub max_prefixes: Option<usize>,
}

impl NeighbourConfig {
    /// A passive neighbour without a prefix limit.
    pub fn new(address: IpAddr, remote_as: u32) -> Self {
        NeighbourConfig {
            address,
            remote_as,
            connect_port: None,
            connect_retry: Duration::from_secs(5),
            max_prefixes: None,
        }
    }
}

impl std::str::FromStr for NeighbourConfig {
    type Err = String;

    /// `ADDRESS,as=ASN`, then optionally `,connect=PORT` (fibkit connects
    /// to it too) and `,max-prefixes=N`: the form `fibkit follow
    /// --neighbor` and Python take.
    fn from_str(text: &str) -> Result<Self, String> {
        let mut parts = text.split(',');
        let address = parts.next().unwrap_or_default();
        let address: IpAddr = address.parse().map_err(|_| format!("{address:?} is not an IP address"))?;
        let mut config = NeighbourConfig::new(address, 0);
        let mut asn = None;
        for part in parts {
            let (key, value) = part.split_once('=').ok_or_else(|| format!("{part:?}: expected KEY=VALUE"))?;
            let number = |what: &str| value.parse::<u64>().map_err(|_| format!("{key}={value:?}: {what}"));
            match key {
                "as" => asn = Some(u32::try_from(number("an AS number")?).map_err(|_| format!("AS {value} > 2^32-1"))?),
                "connect" => {
                    let port = u16::try_from(number("a TCP port")?).ok().filter(|&port| port > 0);
                    config.connect_port = Some(port.ok_or_else(|| format!("connect={value}: a port 1 to 65535"))?);
                }
                "max-prefixes" => config.max_prefixes = Some(number("a count")? as usize),
                _ => return Err(format!("unknown key {key:?} (as, connect, max-prefixes)")),
            }
        }
        config.remote_as = asn.ok_or_else(|| format!("{text:?}: no as=ASN"))?;
        Ok(config)
    }
}

/// A session's state (RFC 4271 8.2.2; Idle covers Connect and Active).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SessionState {
    /// No connection.
    #[default]
    Idle,
    /// OPEN sent, waiting for the neighbour's.
    OpenSent,
    /// OPENs exchanged, waiting for a KEEPALIVE.
    OpenConfirm,
    /// Exchanging routes.
    Established,
}

impl fmt::Display for SessionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SessionState::Idle => "idle",
            SessionState::OpenSent => "open-sent",
            SessionState::OpenConfirm => "open-confirm",
            SessionState::Established => "established",
        })
    }
}

/// What a neighbour is doing.
#[derive(Clone, Debug)]
pub struct NeighbourStatus {
    /// Its address.
    pub address: IpAddr,
    /// Its AS.
    pub remote_as: u32,
    /// Its session's state.
    pub state: SessionState,
    /// Prefixes it holds in the Loc-RIB (both families).
    pub prefixes: usize,
    /// UPDATE messages received since the speaker started.
    pub updates: u64,
    /// Sessions established since the speaker started.
    pub sessions: u64,
    /// When its session was established, if it is.
    pub established_at: Option<Instant>,
    /// Why its last session ended.
    pub last_error: Option<String>,
}

/// The speaker's counts.
#[derive(Clone, Debug, Default)]
pub struct SpeakerStats {
    /// Prefixes with a route in the IPv4 FIB.
    pub routes4: usize,
    /// Prefixes with a route in the IPv6 FIB.
    pub routes6: usize,
    /// Updates applied to the routers (both families).
    pub updates_applied: u64,
    /// Updates a router rejected (each logged).
    pub updates_rejected: u64,
    /// Batches applied.
    pub batches: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_neighbour_spec_reads_its_keys_and_names_what_is_wrong() {
        let neighbour: NeighbourConfig = "2001:db8::2,as=4200000001,connect=1790,max-prefixes=5".parse().unwrap();
        assert_eq!(neighbour.address, "2001:db8::2".parse::<IpAddr>().unwrap());
        assert_eq!(
            (neighbour.remote_as, neighbour.connect_port, neighbour.max_prefixes),
            (4_200_000_001, Some(1790), Some(5))
        );
        for (spec, problem) in [
            ("127.0.0.2", "no as=ASN"),
            ("localhost,as=1", "is not an IP address"),
            ("127.0.0.2,as=4294967296", "> 2^32-1"),
            ("127.0.0.2,as=1,connect=0", "a port 1 to 65535"),
            ("127.0.0.2,as=1,passive", "expected KEY=VALUE"),
            ("127.0.0.2,as=1,hold=3", "unknown key"),
        ] {
            let error = spec.parse::<NeighbourConfig>().unwrap_err();
            assert!(error.contains(problem), "{spec}: {error}");
        }
    }
}
