//! BGP-4 messages on the wire (RFC 4271 4): the header, OPEN with its
//! capabilities, KEEPALIVE, NOTIFICATION and ROUTE-REFRESH. UPDATE bodies
//! are decoded by [`fibkit::load::bgp`], the decoder the MRT loader uses.
//!
//! ```text
//!  header   0                 16      18   19
//!           ├─────────────────┼───────┼────┤
//!           │ marker (all 1s) │length │type│ body (length - 19 bytes)
//!           └─────────────────┴───────┴────┘
//!  OPEN     version 4 │ my AS (2) │ hold time (2) │ BGP identifier (4) │ opt. param. length │ parameters
//!           parameter 2 (capabilities): code, length, value ...
//!             1 multiprotocol (AFI 2, reserved, SAFI)   2 route refresh   65 4-octet AS (4)
//!  NOTIFICATION  error code │ subcode │ data
//!  ROUTE-REFRESH AFI (2) │ reserved │ SAFI
//! ```

use std::fmt;
use std::io;
use std::net::Ipv4Addr;

use fibkit::Family;

/// Bytes of a message header.
pub const HEADER_LEN: usize = 19;
/// The largest message without the extended-message capability (which
/// fibkit does not offer).
pub const MAX_MESSAGE_LEN: usize = 4096;

/// Message types.
pub const OPEN: u8 = 1;
/// UPDATE.
pub const UPDATE: u8 = 2;
/// NOTIFICATION.
pub const NOTIFICATION: u8 = 3;
/// KEEPALIVE.
pub const KEEPALIVE: u8 = 4;
/// ROUTE-REFRESH (RFC 2918).
pub const ROUTE_REFRESH: u8 = 5;

/// The AS number a 2-byte field carries for a 4-byte ASN (RFC 6793).
pub const AS_TRANS: u16 = 23456;

const CAPABILITY_MULTIPROTOCOL: u8 = 1;
const CAPABILITY_ROUTE_REFRESH: u8 = 2;
const CAPABILITY_FOUR_OCTET_AS: u8 = 65;
const PARAMETER_CAPABILITIES: u8 = 2;
const SAFI_UNICAST: u8 = 1;

/// A NOTIFICATION's error code and subcode (RFC 4271 4.5, RFC 4486 for
/// Cease), with its data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notification {
    /// Error code.
    pub code: u8,
    /// Error subcode.
    pub subcode: u8,
    /// Data.
    pub data: Vec<u8>,
}

impl Notification {
    /// A NOTIFICATION without data.
    pub fn new(code: u8, subcode: u8) -> Self {
        Notification { code, subcode, data: Vec::new() }
    }

    /// The same with `data`.
    pub fn with_data(mut self, data: &[u8]) -> Self {
        self.data = data.to_vec();
        self
    }

    /// The message on the wire.
    pub fn encode(&self) -> Vec<u8> {
        let mut body = vec![self.code, self.subcode];
        body.extend(&self.data);
        message(NOTIFICATION, &body)
    }

    fn decode(body: &[u8]) -> Self {
        Notification { code: body[0], subcode: body[1], data: body[2..].to_vec() }
    }
}

/// Error codes (RFC 4271 4.5).
pub mod code {
    /// Message Header Error.
    pub const HEADER: u8 = 1;
    /// OPEN Message Error.
    pub const OPEN: u8 = 2;
    /// UPDATE Message Error.
    pub const UPDATE: u8 = 3;
    /// Hold Timer Expired.
    pub const HOLD_TIMER_EXPIRED: u8 = 4;
    /// Finite State Machine Error.
    pub const FSM: u8 = 5;
    /// Cease.
    pub const CEASE: u8 = 6;
}

/// Cease subcodes (RFC 4486).
pub mod cease {
    /// Maximum Number of Prefixes Reached.
    pub const MAX_PREFIXES: u8 = 1;
    /// Administrative Shutdown.
    pub const SHUTDOWN: u8 = 2;
    /// Peer De-configured.
    pub const DECONFIGURED: u8 = 3;
    /// Connection Rejected.
    pub const REJECTED: u8 = 5;
    /// Connection Collision Resolution.
    pub const COLLISION: u8 = 7;
}

impl fmt::Display for Notification {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match (self.code, self.subcode) {
            (1, 1) => "Connection Not Synchronized",
            (1, 2) => "Bad Message Length",
            (1, 3) => "Bad Message Type",
            (1, _) => "Message Header Error",
            (2, 1) => "Unsupported Version Number",
            (2, 2) => "Bad Peer AS",
            (2, 3) => "Bad BGP Identifier",
            (2, 4) => "Unsupported Optional Parameter",
            (2, 6) => "Unacceptable Hold Time",
            (2, _) => "OPEN Message Error",
            (3, 1) => "Malformed Attribute List",
            (3, 2) => "Unrecognized Well-known Attribute",
            (3, 9) => "Optional Attribute Error",
            (3, 10) => "Invalid Network Field",
            (3, 11) => "Malformed AS_PATH",
            (3, _) => "UPDATE Message Error",
            (4, _) => "Hold Timer Expired",
            (5, _) => "Finite State Machine Error",
            (6, 1) => "Cease: Maximum Number of Prefixes Reached",
            (6, 2) => "Cease: Administrative Shutdown",
            (6, 3) => "Cease: Peer De-configured",
            (6, 4) => "Cease: Administrative Reset",
            (6, 5) => "Cease: Connection Rejected",
            (6, 6) => "Cease: Other Configuration Change",
            (6, 7) => "Cease: Connection Collision Resolution",
            (6, _) => "Cease",
            _ => "unknown error",
        };
        write!(f, "NOTIFICATION {}/{} ({name})", self.code, self.subcode)
    }
}

/// An OPEN message: what a speaker says of itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Open {
    /// The speaker's AS (from the 4-octet AS capability when it sends one).
    pub asn: u32,
    /// Hold time in seconds (0: no keepalives).
    pub hold_time: u16,
    /// BGP identifier.
    pub router_id: Ipv4Addr,
    /// The unicast families it offers (multiprotocol capability); `None`:
    /// it sent no multiprotocol capability (IPv4 unicast only).
    pub families: Option<Vec<Family>>,
    /// Whether it offers 4-octet ASNs.
    pub four_octet_as: bool,
    /// Whether it offers route refresh.
    pub route_refresh: bool,
}

impl Open {
    /// The message on the wire: version 4, the 4-octet AS, route refresh
    /// and multiprotocol IPv4 and IPv6 unicast capabilities.
    pub fn encode(&self) -> Vec<u8> {
        let mut capabilities = Vec::new();
        for family in self.families.as_deref().unwrap_or(&[Family::Ipv4]) {
            let afi: u16 = match family {
                Family::Ipv4 => 1,
                Family::Ipv6 => 2,
            };
            capabilities.extend([CAPABILITY_MULTIPROTOCOL, 4]);
            capabilities.extend(afi.to_be_bytes());
            capabilities.extend([0, SAFI_UNICAST]);
        }
        if self.route_refresh {
            capabilities.extend([CAPABILITY_ROUTE_REFRESH, 0]);
        }
        if self.four_octet_as {
            capabilities.extend([CAPABILITY_FOUR_OCTET_AS, 4]);
            capabilities.extend(self.asn.to_be_bytes());
        }
        let two_octet_as = u16::try_from(self.asn).unwrap_or(AS_TRANS);
        let mut body = vec![4];
        body.extend(two_octet_as.to_be_bytes());
        body.extend(self.hold_time.to_be_bytes());
        body.extend(self.router_id.octets());
        body.push(capabilities.len() as u8 + 2);
        body.extend([PARAMETER_CAPABILITIES, capabilities.len() as u8]);
        body.extend(capabilities);
        message(OPEN, &body)
    }

    /// Reads an OPEN body.
    ///
    /// # Errors
    /// The NOTIFICATION to answer with: Unsupported Version Number, an
    /// OPEN Message Error for parameters that run past the message.
    pub fn decode(body: &[u8]) -> Result<Self, Notification> {
        let bad = || Notification::new(code::OPEN, 0);
        if body.len() < 10 {
            return Err(Notification::new(code::HEADER, 2));
        }
        if body[0] != 4 {
            return Err(Notification::new(code::OPEN, 1).with_data(&4u16.to_be_bytes()));
        }
        let mut open = Open {
            asn: u32::from(u16::from_be_bytes([body[1], body[2]])),
            hold_time: u16::from_be_bytes([body[3], body[4]]),
            router_id: Ipv4Addr::new(body[5], body[6], body[7], body[8]),
            families: None,
            four_octet_as: false,
            route_refresh: false,
        };
        let parameters_len = usize::from(body[9]);
        let mut parameters = body.get(10..10 + parameters_len).ok_or_else(bad)?;
        if 10 + parameters_len != body.len() {
            return Err(bad());
        }
        while let [kind, len, rest @ ..] = parameters {
            let value = rest.get(..usize::from(*len)).ok_or_else(bad)?;
            parameters = &rest[usize::from(*len)..];
            if *kind != PARAMETER_CAPABILITIES {
                return Err(Notification::new(code::OPEN, 4));
            }
            let mut capabilities = value;
            while let [capability, len, rest @ ..] = capabilities {
                let value = rest.get(..usize::from(*len)).ok_or_else(bad)?;
                capabilities = &rest[usize::from(*len)..];
                match (*capability, value) {
                    (CAPABILITY_MULTIPROTOCOL, [afi_high, afi_low, _, safi]) => {
                        let family = match (u16::from_be_bytes([*afi_high, *afi_low]), *safi) {
                            (1, SAFI_UNICAST) => Some(Family::Ipv4),
                            (2, SAFI_UNICAST) => Some(Family::Ipv6),
                            _ => None,
                        };
                        let families = open.families.get_or_insert_with(Vec::new);
                        families.extend(family.filter(|family| !families.contains(family)));
                    }
                    (CAPABILITY_ROUTE_REFRESH, []) => open.route_refresh = true,
                    (CAPABILITY_FOUR_OCTET_AS, &[a, b, c, d]) => {
                        open.four_octet_as = true;
                        open.asn = u32::from_be_bytes([a, b, c, d]);
                    }
                    _ => {}
                }
            }
            if !capabilities.is_empty() {
                return Err(bad());
            }
        }
        if !parameters.is_empty() {
            return Err(bad());
        }
        Ok(open)
    }
}

/// A message with its header.
pub fn message(kind: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![0xff; 16];
    out.extend(((HEADER_LEN + body.len()) as u16).to_be_bytes());
    out.push(kind);
    out.extend(body);
    out
}

/// An UPDATE of encoded withdrawn routes, path attributes and NLRI (for
/// senders and tests: fibkit itself never announces).
pub fn update(withdrawn: &[u8], attributes: &[u8], nlri: &[u8]) -> Vec<u8> {
    let mut body = (withdrawn.len() as u16).to_be_bytes().to_vec();
    body.extend(withdrawn);
    body.extend((attributes.len() as u16).to_be_bytes());
    body.extend(attributes);
    body.extend(nlri);
    message(UPDATE, &body)
}

/// A KEEPALIVE.
pub fn keepalive() -> Vec<u8> {
    message(KEEPALIVE, &[])
}

/// A ROUTE-REFRESH for a family's unicast routes.
pub fn route_refresh(family: Family) -> Vec<u8> {
    let afi: u16 = match family {
        Family::Ipv4 => 1,
        Family::Ipv6 => 2,
    };
    let mut body = afi.to_be_bytes().to_vec();
    body.extend([0, SAFI_UNICAST]);
    message(ROUTE_REFRESH, &body)
}

/// A message read from the wire, its body checked against its type's
/// sizes.
#[derive(Debug, PartialEq, Eq)]
pub enum Message {
    /// OPEN (body).
    Open(Vec<u8>),
    /// UPDATE (body).
    Update(Vec<u8>),
    /// NOTIFICATION.
    Notification(Notification),
    /// KEEPALIVE.
    Keepalive,
    /// ROUTE-REFRESH.
    RouteRefresh,
}

/// Bytes a [`MessageReader`] reads ahead at most: sixteen of the largest
/// messages.
const READ_AHEAD: usize = 16 * MAX_MESSAGE_LEN;

impl Message {
    /// The message's type, as RFC 4271 names it.
    pub fn name(&self) -> &'static str {
        match self {
            Message::Open(_) => "OPEN",
            Message::Update(_) => "UPDATE",
            Message::Notification(_) => "NOTIFICATION",
            Message::Keepalive => "KEEPALIVE",
            Message::RouteRefresh => "ROUTE-REFRESH",
        }
    }
}

/// Splits a byte stream into messages. Reads never wait past the stream's
/// read timeout: a message arrives in as many reads as it takes. Each read
/// takes what the socket has, up to 64 KiB, so that a busy session costs a
/// system call per many messages.
pub struct MessageReader {
    buffer: Box<[u8]>,
    /// The bytes read and not yet taken: `buffer[start..end]`.
    start: usize,
    end: usize,
}

impl Default for MessageReader {
    fn default() -> Self {
        MessageReader { buffer: vec![0; READ_AHEAD].into_boxed_slice(), start: 0, end: 0 }
    }
}

/// What [`MessageReader::next`] found.
#[derive(Debug)]
pub enum Received {
    /// A whole message.
    Message(Message),
    /// Nothing yet (the read timed out).
    Nothing,
    /// The peer closed the connection.
    Closed,
    /// The stream breaks the protocol: answer with this NOTIFICATION.
    Invalid(Notification),
}

impl MessageReader {
    /// The next message, reading from `stream` when the buffer lacks one.
    ///
    /// # Errors
    /// An I/O error of the stream other than a timeout.
    pub fn next(&mut self, stream: &mut impl io::Read) -> io::Result<Received> {
        loop {
            if let Some(found) = self.take() {
                return Ok(found);
            }
            // Room for the rest of the message: what was read moves to the
            // front (at most one message's worth).
            if self.start > 0 {
                self.buffer.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            match stream.read(&mut self.buffer[self.end..]) {
                Ok(0) => return Ok(Received::Closed),
                Ok(n) => self.end += n,
                Err(error) if matches!(error.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                    return Ok(Received::Nothing);
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
    }

    /// The next message if the bytes already read hold it whole (no
    /// read).
    pub fn buffered(&mut self) -> Option<Received> {
        self.take()
    }

    /// A message from the buffer, if it holds one whole.
    fn take(&mut self) -> Option<Received> {
        let read = &self.buffer[self.start..self.end];
        if read.len() < HEADER_LEN {
            return None;
        }
        if read[..16].iter().any(|&byte| byte != 0xff) {
            return Some(Received::Invalid(Notification::new(code::HEADER, 1)));
        }
        let length_bytes = [read[16], read[17]];
        let length = usize::from(u16::from_be_bytes(length_bytes));
        let kind = read[18];
        let bad_length = Received::Invalid(Notification::new(code::HEADER, 2).with_data(&length_bytes));
        let (min, max) = match kind {
            OPEN => (29, MAX_MESSAGE_LEN),
            UPDATE => (23, MAX_MESSAGE_LEN),
            NOTIFICATION => (21, MAX_MESSAGE_LEN),
            KEEPALIVE => (19, 19),
            ROUTE_REFRESH => (23, 23),
            _ => return Some(Received::Invalid(Notification::new(code::HEADER, 3).with_data(&[kind]))),
        };
        if length < min || length > max {
            return Some(bad_length);
        }
        if read.len() < length {
            return None;
        }
        let body: Vec<u8> = read[HEADER_LEN..length].to_vec();
        self.start += length;
        Some(Received::Message(match kind {
            OPEN => Message::Open(body),
            UPDATE => Message::Update(body),
            NOTIFICATION => Message::Notification(Notification::decode(&body)),
            KEEPALIVE => Message::Keepalive,
            _ => Message::RouteRefresh,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_round_trips_with_its_capabilities() {
        let open = Open {
            asn: 4_200_000_001,
            hold_time: 90,
            router_id: Ipv4Addr::new(192, 0, 2, 1),
            families: Some(vec![Family::Ipv4, Family::Ipv6]),
            four_octet_as: true,
            route_refresh: true,
        };
        let wire = open.encode();
        assert_eq!(&wire[19..22], &[4, 0x5b, 0xa0], "version 4, AS_TRANS in the 2-byte field");
        assert_eq!(Open::decode(&wire[HEADER_LEN..]), Ok(open));
    }

    #[test]
    fn lying_lengths_get_the_notification_rfc_4271_names() {
        let mut too_long = message(KEEPALIVE, &[]);
        too_long[17] = 20;
        let mut reader = MessageReader::default();
        let found = reader.next(&mut &too_long[..]).unwrap();
        assert!(matches!(found, Received::Invalid(Notification { code: 1, subcode: 2, .. })), "{found:?}");
        let mut unsynchronised = keepalive();
        unsynchronised[3] = 0;
        let found = MessageReader::default().next(&mut &unsynchronised[..]).unwrap();
        assert!(matches!(found, Received::Invalid(Notification { code: 1, subcode: 1, .. })), "{found:?}");
        let found = MessageReader::default().next(&mut &message(9, &[])[..]).unwrap();
        assert!(matches!(found, Received::Invalid(Notification { code: 1, subcode: 3, .. })), "{found:?}");
        // An OPEN whose parameters run past it, one of another version.
        let mut open = Open::decode(&Open::encode(&sample())[HEADER_LEN..]).unwrap().encode();
        open[HEADER_LEN + 9] += 1;
        assert_eq!(Open::decode(&open[HEADER_LEN..]).unwrap_err().code, code::OPEN);
        open[HEADER_LEN] = 3;
        assert_eq!(Open::decode(&open[HEADER_LEN..]).unwrap_err(), Notification::new(2, 1).with_data(&[0, 4]));
    }

    #[test]
    fn messages_split_across_reads_are_put_together() {
        let mut stream = Vec::new();
        stream.extend(keepalive());
        stream.extend(sample().encode());
        stream.extend(Notification::new(6, 2).encode());
        let mut reader = MessageReader::default();
        let mut found = Vec::new();
        // One byte a read.
        for byte in stream {
            if let Received::Message(message) = reader.next(&mut &[byte][..]).unwrap() {
                found.push(message);
            }
        }
        assert_eq!(found.len(), 3);
        assert_eq!(found[0], Message::Keepalive);
        assert_eq!(found[2], Message::Notification(Notification::new(6, 2)));
    }

    fn sample() -> Open {
        Open {
            asn: 65001,
            hold_time: 3,
            router_id: Ipv4Addr::new(10, 0, 0, 1),
            families: None,
            four_octet_as: false,
            route_refresh: false,
        }
    }
}
