//! Hostile neighbours: each gets what the RFCs say, a log line naming it,
//! and the speaker goes on. The neighbour here is the test itself,
//! writing bytes that no daemon would send; fibkit connects to it.

mod common;

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use common::wait_for;
use fibkit::load::ValueChoice;
use fibkit::{Family, NO_ROUTE};
use fibkit_sources::bgp::wire::{self, Message, MessageReader, Notification, Open, Received};
use fibkit_sources::bgp::{BgpConfig, NeighbourConfig, SessionState, Speaker};

const PEER_AS: u32 = 64999;

/// A speaker with one active neighbour: the listener of the test at
/// 127.0.0.`last`.
fn setup(last: u8, configure: impl FnOnce(&mut NeighbourConfig)) -> (Speaker, TcpListener) {
    let address = Ipv4Addr::new(127, 0, 0, last);
    let listener = TcpListener::bind((address, 0)).unwrap();
    let mut neighbour = NeighbourConfig::new(IpAddr::V4(address), PEER_AS);
    neighbour.connect_port = Some(listener.local_addr().unwrap().port());
    neighbour.connect_retry = Duration::from_millis(200);
    configure(&mut neighbour);
    let mut config = BgpConfig::new(65000, Ipv4Addr::new(10, 255, 0, 1));
    config.value = ValueChoice::OriginAs;
    config.neighbours = vec![neighbour];
    config.listen = vec![SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0)];
    config.echo_log = std::env::var_os("FIBKIT_BGP_LOG").is_some();
    let (router4, router6) = common::routers();
    (Speaker::start(config, router4, router6).unwrap(), listener)
}

/// The test's side of a session.
struct Peer {
    stream: TcpStream,
    reader: MessageReader,
}

impl Peer {
    /// Accepts fibkit's connection and completes the OPEN exchange,
    /// offering `hold_time`.
    fn establish(listener: &TcpListener, hold_time: u16) -> Peer {
        let (stream, _) = listener.accept().unwrap();
        stream.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
        let mut peer = Peer { stream, reader: MessageReader::default() };
        assert!(matches!(peer.next(), Message::Open(_)));
        let open = Open {
            asn: PEER_AS,
            hold_time,
            router_id: Ipv4Addr::new(10, 9, 9, 9),
            families: Some(vec![Family::Ipv4, Family::Ipv6]),
            four_octet_as: true,
            route_refresh: true,
        };
        peer.send(&open.encode());
        peer.send(&wire::keepalive());
        assert_eq!(peer.next(), Message::Keepalive);
        peer
    }

    fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
    }

    /// The next message fibkit sends (within 10 s).
    fn next(&mut self) -> Message {
        let start = Instant::now();
        loop {
            match self.reader.next(&mut self.stream).unwrap() {
                Received::Message(message) => return message,
                Received::Nothing if start.elapsed() < Duration::from_secs(10) => {}
                other => panic!("no message from fibkit: {other:?}"),
            }
        }
    }

    /// The NOTIFICATION fibkit sends, past its keepalives.
    fn notification(&mut self) -> Notification {
        loop {
            match self.next() {
                Message::Keepalive => {}
                Message::Notification(notification) => return notification,
                other => panic!("expected a NOTIFICATION, got {other:?}"),
            }
        }
    }
}

fn attribute(out: &mut Vec<u8>, flags: u8, code: u8, value: &[u8]) {
    out.extend([flags, code, value.len() as u8]);
    out.extend(value);
}

/// ORIGIN IGP, AS_PATH `PEER_AS origin`, NEXT_HOP 192.0.2.9.
fn attributes(origin: u32) -> Vec<u8> {
    let mut out = Vec::new();
    attribute(&mut out, 0x40, 1, &[0]);
    let mut path = vec![2, 2];
    path.extend(PEER_AS.to_be_bytes());
    path.extend(origin.to_be_bytes());
    attribute(&mut out, 0x40, 2, &path);
    attribute(&mut out, 0x40, 3, &[192, 0, 2, 9]);
    out
}

fn routed(speaker: &Speaker, addr: [u8; 4]) -> bool {
    speaker.reader4().lookup(u32::from_be_bytes(addr)) != NO_ROUTE
}

fn logged(speaker: &Speaker, text: &str) -> bool {
    speaker.journal().iter().any(|line| line.contains(text))
}

/// The session with 127.0.0.`last` ended with `notification` sent, logged
/// with the neighbour's name and `why`, and its routes are gone.
fn ended_with(speaker: &Speaker, peer: &mut Peer, notification: Notification, why: &str) {
    assert_eq!(peer.notification(), notification);
    wait_for("the session to end", Duration::from_secs(10), || {
        speaker.neighbours()[0].state != SessionState::Established
    });
    let name = format!("neighbour {} (AS {PEER_AS}): ", speaker.neighbours()[0].address);
    let line = format!("{name}session down: sent {notification}");
    let found = || speaker.journal().iter().any(|logged| logged.contains(&line) && logged.contains(why));
    let start = Instant::now();
    while !found() {
        assert!(start.elapsed() < Duration::from_secs(5), "no line {line:?} with {why:?} in {:#?}", speaker.journal());
        std::thread::sleep(Duration::from_millis(20));
    }
    wait_for("the routes to go", Duration::from_secs(5), || !routed(speaker, [10, 0, 0, 1]));
}

#[test]
fn lengths_that_lie() {
    let (speaker, listener) = setup(21, |_| {});
    let mut peer = Peer::establish(&listener, 90);
    peer.send(&wire::update(&[], &attributes(1), &[8, 10]));
    wait_for("10/8", Duration::from_secs(5), || routed(&speaker, [10, 0, 0, 1]));
    // An attribute that runs past the attributes: treat-as-withdraw, the
    // session stays.
    let mut overrun = attributes(2);
    overrun.extend([0x40, 5, 9, 0, 0]);
    peer.send(&wire::update(&[], &overrun, &[8, 10]));
    wait_for("10/8 withdrawn", Duration::from_secs(5), || !routed(&speaker, [10, 0, 0, 1]));
    assert!(logged(&speaker, "its 1 routes treated as withdrawn"), "{:?}", speaker.journal());
    assert_eq!(speaker.neighbours()[0].state, SessionState::Established);
    // A message longer than BGP allows: Bad Message Length.
    peer.send(&wire::update(&[], &attributes(1), &[8, 10]));
    wait_for("10/8 again", Duration::from_secs(5), || routed(&speaker, [10, 0, 0, 1]));
    let mut long = wire::message(wire::UPDATE, &[0; 8]);
    long[16..18].copy_from_slice(&5000u16.to_be_bytes());
    peer.send(&long);
    let bad_length = Notification::new(1, 2).with_data(&5000u16.to_be_bytes());
    ended_with(&speaker, &mut peer, bad_length, "a malformed message");

    // A total attribute length past the message: Malformed Attribute List.
    let mut peer = Peer::establish(&listener, 90);
    peer.send(&wire::update(&[], &attributes(1), &[8, 10]));
    wait_for("10/8", Duration::from_secs(5), || routed(&speaker, [10, 0, 0, 1]));
    let mut lying = wire::update(&[], &attributes(1), &[8, 11]);
    lying[22] += 50;
    peer.send(&lying);
    ended_with(&speaker, &mut peer, Notification::new(3, 1), "path attributes needs 74 bytes, but only 26 are left");

    // An NLRI prefix cut off: Invalid Network Field.
    let mut peer = Peer::establish(&listener, 90);
    peer.send(&wire::update(&[], &attributes(1), &[8, 10, 24, 1, 2]));
    ended_with(&speaker, &mut peer, Notification::new(3, 10), "NLRI prefix needs 3 bytes");
}

#[test]
fn prefix_lengths_past_the_family() {
    let (speaker, listener) = setup(22, |_| {});
    let mut peer = Peer::establish(&listener, 90);
    peer.send(&wire::update(&[], &attributes(1), &[33, 10, 0, 0, 0, 0]));
    ended_with(&speaker, &mut peer, Notification::new(3, 10), "prefix length 33 exceeds 32");
    // IPv6: 129 bits in MP_REACH_NLRI.
    let mut peer = Peer::establish(&listener, 90);
    let mut with_mp = attributes(1);
    let mut reach = vec![0, 2, 1, 16];
    reach.extend([0x20, 1, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 129]);
    reach.extend([0xff; 17]);
    attribute(&mut with_mp, 0x80, 14, &reach);
    peer.send(&wire::update(&[], &with_mp, &[]));
    ended_with(&speaker, &mut peer, Notification::new(3, 10), "prefix length 129 exceeds 128");
}

#[test]
fn an_unknown_well_known_attribute() {
    let (speaker, listener) = setup(23, |_| {});
    let mut peer = Peer::establish(&listener, 90);
    let mut unknown = attributes(1);
    attribute(&mut unknown, 0x40, 99, &[1, 2]);
    peer.send(&wire::update(&[], &unknown, &[8, 10]));
    ended_with(&speaker, &mut peer, Notification::new(3, 2), "unrecognized well-known attribute of type 99");
}

#[test]
fn an_as_set_in_the_path_is_treated_as_withdraw() {
    let (speaker, listener) = setup(24, |_| {});
    let mut peer = Peer::establish(&listener, 90);
    peer.send(&wire::update(&[], &attributes(1), &[8, 10]));
    wait_for("10/8", Duration::from_secs(5), || routed(&speaker, [10, 0, 0, 1]));
    let mut with_set = Vec::new();
    attribute(&mut with_set, 0x40, 1, &[0]);
    let mut path = vec![2, 1];
    path.extend(PEER_AS.to_be_bytes());
    path.extend([1, 2, 0, 0, 0, 7, 0, 0, 0, 8]);
    attribute(&mut with_set, 0x40, 2, &path);
    attribute(&mut with_set, 0x40, 3, &[192, 0, 2, 9]);
    peer.send(&wire::update(&[], &with_set, &[8, 10]));
    wait_for("10/8 withdrawn", Duration::from_secs(5), || !routed(&speaker, [10, 0, 0, 1]));
    assert!(logged(&speaker, "AS_SET in the AS_PATH (RFC 9774): its 1 routes treated as withdrawn"));
    // The session goes on: a later UPDATE lands.
    peer.send(&wire::update(&[], &attributes(3), &[8, 11]));
    wait_for("11/8", Duration::from_secs(5), || routed(&speaker, [11, 0, 0, 1]));
    assert_eq!(speaker.neighbours()[0].state, SessionState::Established);
}

#[test]
fn an_unconfigured_address_is_refused() {
    let (speaker, _listener) = setup(25, |_| {});
    // From 127.0.0.1: not the neighbour's address.
    let mut stream = TcpStream::connect(speaker.local_addrs()[0]).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut reader = MessageReader::default();
    let found = reader.next(&mut stream).unwrap();
    assert!(matches!(found, Received::Message(Message::Notification(Notification { code: 6, subcode: 5, .. }))));
    assert!(matches!(reader.next(&mut stream).unwrap(), Received::Closed));
    let line = "connection from 127.0.0.1 refused: not a configured neighbour";
    wait_for("the log line", Duration::from_secs(5), || logged(&speaker, line));
}

#[test]
fn a_flood_past_the_maximum_prefix_count() {
    let (speaker, listener) = setup(26, |neighbour| neighbour.max_prefixes = Some(1000));
    let mut peer = Peer::establish(&listener, 90);
    // 100 UPDATEs of 20 /24s each: 2,000 prefixes.
    for block in 0..100u32 {
        let mut nlri = Vec::new();
        for at in 0..20u32 {
            let n = block * 20 + at;
            nlri.extend([24, 10, (n >> 8) as u8, n as u8]);
        }
        peer.send(&wire::update(&[], &attributes(1), &nlri));
    }
    let mut data = vec![0, 1, 1];
    data.extend(1000u32.to_be_bytes());
    assert_eq!(peer.notification(), Notification::new(6, 1).with_data(&data));
    let line = "prefixes, past its maximum of 1000: sent NOTIFICATION 6/1";
    wait_for("the log line", Duration::from_secs(5), || logged(&speaker, line));
    wait_for("its routes withdrawn", Duration::from_secs(5), || {
        speaker.stats().routes4 == 0 && !routed(&speaker, [10, 0, 0, 1])
    });
    assert_eq!(speaker.neighbours()[0].prefixes, 0);
}

#[test]
fn a_neighbour_that_stops_sending_keepalives() {
    let (speaker, listener) = setup(27, |_| {});
    let mut peer = Peer::establish(&listener, 3);
    peer.send(&wire::update(&[], &attributes(1), &[8, 10]));
    wait_for("10/8", Duration::from_secs(5), || routed(&speaker, [10, 0, 0, 1]));
    // Silence: fibkit's keepalives come every second, then the hold timer
    // (3 s) expires.
    let start = Instant::now();
    ended_with(&speaker, &mut peer, Notification::new(4, 0), "nothing heard for the hold time (3 s)");
    let waited = start.elapsed();
    assert!(waited >= Duration::from_millis(2500) && waited < Duration::from_secs(8), "{waited:?}");
}

#[test]
fn an_update_before_the_open() {
    let (speaker, listener) = setup(28, |_| {});
    let (stream, _) = listener.accept().unwrap();
    stream.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    let mut peer = Peer { stream, reader: MessageReader::default() };
    assert!(matches!(peer.next(), Message::Open(_)));
    peer.send(&wire::update(&[], &attributes(1), &[8, 10]));
    assert_eq!(peer.notification(), Notification::new(5, 1));
    let line = "neighbour 127.0.0.28 (AS 64999): session down: sent NOTIFICATION 5/1 (Finite State Machine Error): \
                UPDATE before OPEN";
    wait_for("the log line", Duration::from_secs(5), || logged(&speaker, line));
    assert!(!routed(&speaker, [10, 0, 0, 1]));
}
