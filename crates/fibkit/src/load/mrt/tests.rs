//! Unit tests of the MRT reader on records written here byte by byte.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::Path;

use proptest::prelude::*;

use super::attributes::{
    path_origin, Attributes, ATTR_AS4_PATH, ATTR_AS_PATH, ATTR_MP_REACH_NLRI, ATTR_MP_UNREACH_NLRI, ATTR_NEXT_HOP,
};
use super::cursor::Cursor;
use super::records::HEADER_LEN;
use super::records::{Records, BGP4MP, TABLE_DUMP, TABLE_DUMP_V2};
use super::*;
use crate::addr::Prefix;
use crate::load::updates::{IpPrefix, Update};
use crate::load::{load_bytes, updates_from_bytes};

mod writer;

use writer::{as_path, attribute, nlri, peer_table, record, rib, rib_attributes, Hop, Message};

fn p(text: &str) -> IpPrefix {
    text.parse().unwrap()
}

fn v4(text: &str) -> Ipv4Addr {
    text.parse().unwrap()
}

fn v6(text: &str) -> Ipv6Addr {
    text.parse().unwrap()
}

fn load(bytes: &[u8], options: &LoadOptions) -> Result<RouteTable, LoadError> {
    load_bytes(Path::new("t.mrt"), bytes, options)
}

fn routes(table: &RouteTable) -> Vec<String> {
    let v4 = table.v4.iter().map(|(prefix, hop)| format!("{prefix} {}", table.next_hops.describe(hop)));
    let v6 = table.v6.iter().map(|(prefix, hop)| format!("{prefix} {}", table.next_hops.describe(hop)));
    v4.chain(v6).collect()
}

fn with_peer(peer: &str) -> LoadOptions {
    LoadOptions { peer: peer.parse().unwrap(), ..LoadOptions::default() }
}

/// A dump: three peers; peer 1 has the most routes.
fn sample_dump() -> Vec<u8> {
    let mut out = Vec::new();
    let peers: [(IpAddr, u32); 3] = [
        ("192.0.2.10".parse().unwrap(), 64500),
        ("192.0.2.11".parse().unwrap(), 4_200_000_000),
        ("2001:db8::12".parse().unwrap(), 64500),
    ];
    record(&mut out, 1_400_000_000, TABLE_DUMP_V2, 1, &peer_table(&peers));
    let hop0 = Hop::V4(v4("192.0.2.10"));
    let hop1 = Hop::V4(v4("192.0.2.11"));
    rib(
        &mut out,
        p("10.0.0.0/8"),
        &[(0, 0, rib_attributes(&[64500, 15169], hop0)), (1, 0, rib_attributes(&[4_200_000_000, 3356, 15169], hop1))],
        false,
    );
    rib(&mut out, p("10.1.0.0/16"), &[(1, 0, rib_attributes(&[4_200_000_000, 701], hop1))], false);
    rib(&mut out, p("0.0.0.0/0"), &[(1, 0, rib_attributes(&[4_200_000_000], hop1))], false);
    rib(
        &mut out,
        p("2001:db8::/32"),
        &[
            (1, 0, rib_attributes(&[4_200_000_000, 2914], Hop::Short(v6("2001:db8::11")))),
            (2, 0, rib_attributes(&[64500, 2914], Hop::Full(v6("2001:db8::12")))),
        ],
        false,
    );
    out
}

#[test]
fn dump_is_detected_and_the_default_peer_has_the_most_routes() {
    let bytes = sample_dump();
    assert!(is_mrt(&bytes));
    let table = load(&bytes, &LoadOptions::default()).unwrap();
    assert!(table.warnings.is_empty(), "{:?}", table.warnings);
    assert_eq!(
        routes(&table),
        ["0.0.0.0/0 192.0.2.11", "10.0.0.0/8 192.0.2.11", "10.1.0.0/16 192.0.2.11", "2001:db8::/32 2001:db8::11"]
    );
    let list = list_peers_bytes(Path::new("t"), &bytes, &LoadOptions::default()).unwrap();
    assert_eq!(list.content, "RIB dump");
    assert_eq!(list.default, Some(1));
    let counts: Vec<(usize, usize, usize)> = list.peers.iter().map(|p| (p.index, p.routes_v4, p.routes_v6)).collect();
    assert_eq!(counts, [(0, 1, 0), (1, 3, 1), (2, 0, 1)]);
    assert_eq!(list.peers[1].to_string(), "peer 1 AS4200000000 192.0.2.11");
    assert_eq!(list.peers[1].bgp_id, Some(v4("10.0.0.1")));
}

#[test]
fn peers_are_selected_by_index_address_or_asn() {
    let bytes = sample_dump();
    let peer0 = load(&bytes, &with_peer("0")).unwrap();
    assert_eq!(routes(&peer0), ["10.0.0.0/8 192.0.2.10"]);
    assert_eq!(routes(&load(&bytes, &with_peer("192.0.2.10")).unwrap()), routes(&peer0));
    let peer2 = load(&bytes, &with_peer("2001:db8::12")).unwrap();
    assert_eq!(routes(&peer2), ["2001:db8::/32 2001:db8::12"]);
    assert_eq!(routes(&load(&bytes, &with_peer("AS4200000000")).unwrap()).len(), 4);
    let ambiguous = load(&bytes, &with_peer("as64500")).unwrap_err();
    assert!(ambiguous.message.contains("matches 2 peers") && ambiguous.message.contains("by index"), "{ambiguous}");
    let absent = load(&bytes, &with_peer("7")).unwrap_err();
    assert!(absent.message.contains("no peer 7 in the file (peers: peer 0 AS64500 192.0.2.10"), "{absent}");
    assert!("AS".parse::<PeerSelector>().is_err());
    assert!("AS99999999999".parse::<PeerSelector>().unwrap_err().contains("32 bits"));
    assert!("peer1".parse::<PeerSelector>().unwrap_err().contains("expected an index"));
}

#[test]
fn origin_as_values() {
    let bytes = sample_dump();
    let options = LoadOptions { value: ValueChoice::OriginAs, ..LoadOptions::default() };
    let table = load(&bytes, &options).unwrap();
    // 0.0.0.0/0 has the path [peer]: the peer originates it.
    assert_eq!(routes(&table), ["0.0.0.0/0 4200000000", "10.0.0.0/8 15169", "10.1.0.0/16 701", "2001:db8::/32 2914"]);
    assert_eq!("origin-as".parse::<ValueChoice>().unwrap(), ValueChoice::OriginAs);
    assert!("asn".parse::<ValueChoice>().is_err());
}

#[test]
fn origin_of_sets_confederations_and_as4_path() {
    let mut path = Vec::new();
    path.extend([2, 2, 0, 0, 0, 1, 0, 0, 0, 2]); // AS_SEQUENCE 1 2
    path.extend([1, 3, 0, 0, 0, 9, 0, 0, 0, 5, 0, 0, 0, 7]); // AS_SET {9 5 7}
    path.extend([3, 1, 0, 0, 0, 8]); // AS_CONFED_SEQUENCE 8
    assert_eq!(path_origin(Cursor::new(&path, 0), true).unwrap(), Some(5));
    assert_eq!(path_origin(Cursor::new(&[], 0), true).unwrap(), None);
    let error = path_origin(Cursor::new(&[9, 0], 100), true).unwrap_err();
    assert_eq!((error.offset, error.message.as_str()), (100, "AS path segment of unknown type 9"));
    let error = path_origin(Cursor::new(&[2, 2, 0, 0, 0, 1], 100), true).unwrap_err();
    assert!(error.message.contains("AS path segment needs 8 bytes, but only 4 are left"), "{}", error.message);
    // A 2-byte path with AS_TRANS, and the AS4_PATH that says who it is.
    let mut attributes = Vec::new();
    attribute(&mut attributes, ATTR_AS_PATH, &as_path(&[3356, 23456], false));
    attribute(&mut attributes, ATTR_AS4_PATH, &as_path(&[4_200_000_000], true));
    let parsed = Attributes::parse(Cursor::new(&attributes, 0), false).unwrap();
    assert_eq!(parsed.origin_as().unwrap(), Some(4_200_000_000));
}

#[test]
fn table_dump_v1_records() {
    let mut out = Vec::new();
    for (prefix, peer, asn, hop) in [
        ("10.0.0.0/8", "192.0.2.1", 64500u32, "192.0.2.1"),
        ("10.0.0.0/8", "192.0.2.2", 64501, "192.0.2.2"),
        ("11.0.0.0/8", "192.0.2.2", 64501, "192.0.2.2"),
    ] {
        let IpPrefix::V4(prefix) = p(prefix) else { unreachable!() };
        let mut body = Vec::new();
        body.extend([0, 0, 0, 1]);
        body.extend(prefix.addr().to_be_bytes());
        body.extend([prefix.prefix_len(), 1]);
        body.extend(1_000_000u32.to_be_bytes());
        body.extend(v4(peer).octets());
        body.extend((asn as u16).to_be_bytes());
        let mut attributes = Vec::new();
        attribute(&mut attributes, ATTR_AS_PATH, &as_path(&[asn, 65000], false));
        attribute(&mut attributes, ATTR_NEXT_HOP, &v4(hop).octets());
        body.extend((attributes.len() as u16).to_be_bytes());
        body.extend(attributes);
        record(&mut out, 1_000_000, TABLE_DUMP, 1, &body);
    }
    let table = load(&out, &LoadOptions::default()).unwrap();
    assert_eq!(routes(&table), ["10.0.0.0/8 192.0.2.2", "11.0.0.0/8 192.0.2.2"]);
    let list = list_peers_bytes(Path::new("t"), &out, &LoadOptions::default()).unwrap();
    assert_eq!(list.peers.len(), 2);
    assert_eq!(list.peers[0].to_string(), "peer 0 AS64500 192.0.2.1");
    let origin = LoadOptions { value: ValueChoice::OriginAs, peer: PeerSelector::Index(0), ..Default::default() };
    assert_eq!(routes(&load(&out, &origin).unwrap()), ["10.0.0.0/8 65000"]);
}

#[test]
fn add_path_rib_takes_the_lowest_path_id() {
    let mut out = Vec::new();
    record(&mut out, 1, TABLE_DUMP_V2, 1, &peer_table(&[("192.0.2.1".parse().unwrap(), 64500)]));
    let entries = [
        (0, 9, rib_attributes(&[64500, 1], Hop::V4(v4("192.0.2.9")))),
        (0, 3, rib_attributes(&[64500, 2], Hop::V4(v4("192.0.2.3")))),
    ];
    rib(&mut out, p("10.0.0.0/8"), &entries, true);
    rib(&mut out, p("2001:db8::/32"), &[(0, 1, rib_attributes(&[64500], Hop::Short(v6("2001:db8::1"))))], true);
    let table = load(&out, &LoadOptions::default()).unwrap();
    assert_eq!(routes(&table), ["10.0.0.0/8 192.0.2.3", "2001:db8::/32 2001:db8::1"]);
    let list = list_peers_bytes(Path::new("t"), &out, &LoadOptions::default()).unwrap();
    // Two paths of one prefix count as one route.
    assert_eq!((list.peers[0].routes_v4, list.peers[0].routes_v6), (1, 1));
}

#[test]
fn dump_without_peer_table_knows_peers_by_index() {
    let mut out = Vec::new();
    rib(&mut out, p("1.0.0.0/24"), &[(6, 0, rib_attributes(&[25152, 15169], Hop::V4(v4("202.249.2.189"))))], false);
    let table = load(&out, &LoadOptions::default()).unwrap();
    assert_eq!(routes(&table), ["1.0.0.0/24 202.249.2.189"]);
    assert_eq!(table.warnings.len(), 1);
    assert!(table.warnings[0].contains("t.mrt: at byte 0: TABLE_DUMP_V2 RIB records without a PEER_INDEX_TABLE"));
    let strict = load(&out, &LoadOptions { strict: true, ..Default::default() }).unwrap_err();
    assert!(strict.message.contains("an error in strict mode"), "{strict}");
    let list = list_peers_bytes(Path::new("t"), &out, &LoadOptions::default()).unwrap();
    assert_eq!(list.peers[0].to_string(), "peer 6 (address and ASN unknown: no PEER_INDEX_TABLE)");
    assert_eq!(routes(&load(&out, &with_peer("6")).unwrap()).len(), 1);
}

#[test]
fn routes_without_a_value_are_left_out_with_a_warning() {
    let mut out = Vec::new();
    record(&mut out, 1, TABLE_DUMP_V2, 1, &peer_table(&[("192.0.2.1".parse().unwrap(), 64500)]));
    rib(&mut out, p("10.0.0.0/8"), &[(0, 0, rib_attributes(&[64500], Hop::None))], false);
    rib(&mut out, p("11.0.0.0/8"), &[(0, 0, rib_attributes(&[64500], Hop::V4(v4("192.0.2.1"))))], false);
    let table = load(&out, &LoadOptions::default()).unwrap();
    assert_eq!(routes(&table), ["11.0.0.0/8 192.0.2.1"]);
    assert_eq!(table.warnings.len(), 1);
    assert!(
        table.warnings[0].contains("1 route(s) of peer 0 AS64500 192.0.2.1 have no NEXT_HOP"),
        "{:?}",
        table.warnings
    );
    assert!(load(&out, &LoadOptions { strict: true, ..Default::default() }).is_err());
}

#[test]
fn a_repeated_prefix_keeps_the_later_record() {
    let mut out = Vec::new();
    record(&mut out, 1, TABLE_DUMP_V2, 1, &peer_table(&[("192.0.2.1".parse().unwrap(), 64500)]));
    let first_rib = out.len();
    rib(&mut out, p("10.0.0.0/8"), &[(0, 0, rib_attributes(&[64500], Hop::V4(v4("192.0.2.1"))))], false);
    let second_rib = out.len();
    rib(&mut out, p("10.0.0.0/8"), &[(0, 0, rib_attributes(&[64500], Hop::V4(v4("192.0.2.2"))))], false);
    let table = load(&out, &LoadOptions::default()).unwrap();
    assert_eq!(routes(&table), ["10.0.0.0/8 192.0.2.2"]);
    assert_eq!(table.next_hops.len(), 1, "the replaced value is not a next hop");
    // Entries start after the header, sequence, prefix and entry count.
    let entry = |rib: usize| rib + HEADER_LEN + 4 + 2 + 2;
    assert_eq!(
        table.warnings,
        [format!(
            "t.mrt: at byte {}: 10.0.0.0/8 repeats the entry at byte {}: value 192.0.2.2 replaces 192.0.2.1 \
             (the later record wins)",
            entry(second_rib),
            entry(first_rib)
        )]
    );
    let strict = load(&out, &LoadOptions { strict: true, ..Default::default() }).unwrap_err();
    assert_eq!(strict.position, Position::Offset(entry(second_rib) as u64));
}

#[test]
fn truncated_dumps_keep_every_complete_record() {
    let bytes = sample_dump();
    let mut ends = Vec::new();
    let mut records = Records::new(&bytes);
    for record in records.by_ref() {
        ends.push(record.offset + HEADER_LEN + record.body.remaining());
    }
    assert!(records.truncation.is_none());
    for cut in 1..bytes.len() {
        let complete = ends.iter().filter(|&&end| end <= cut).count();
        let ended_at = ends.iter().copied().filter(|&end| end <= cut).max().unwrap_or(0);
        match load(&bytes[..cut], &LoadOptions::default()) {
            Ok(table) => {
                assert!(complete >= 2, "a table from {complete} records at cut {cut}");
                if ended_at < cut {
                    let warning = table.warnings.last().expect("a truncation warning");
                    let expected = format!("t.mrt: at byte {ended_at}: the data ends here, in an incomplete MRT");
                    assert!(warning.starts_with(&expected), "{warning}");
                    assert!(warning.contains(&format!("loaded the {complete} complete records")), "{warning}");
                    let strict = load(&bytes[..cut], &LoadOptions { strict: true, ..Default::default() });
                    assert_eq!(strict.unwrap_err().position, Position::Offset(ended_at as u64));
                } else {
                    assert!(table.warnings.is_empty(), "{:?}", table.warnings);
                }
                // What was loaded agrees with the full file's routes of the
                // same peer (the default may differ: counts are partial).
                let list = list_peers_bytes(Path::new("t"), &bytes[..cut], &LoadOptions::default()).unwrap();
                let peer = list.peers[list.default.unwrap()].index;
                let full = load(&bytes, &with_peer(&peer.to_string())).unwrap();
                for route in routes(&table) {
                    assert!(routes(&full).contains(&route), "{route} at cut {cut}");
                }
            }
            Err(error) => assert!(
                complete < 2 || error.message.contains("no routes") || !is_mrt(&bytes[..cut]),
                "cut {cut}: {error}"
            ),
        }
    }
}

#[test]
fn a_record_running_past_the_end_of_complete_data_is_corrupt() {
    let bytes = sample_dump();
    let starts: Vec<usize> = Records::new(&bytes).map(|record| record.offset).collect();
    // The third record announces 4 GiB, with more records after it: this
    // used to keep the first two records and warn that the data ends there.
    let mut huge = bytes.clone();
    huge[starts[2] + 8..starts[2] + 12].copy_from_slice(&u32::MAX.to_be_bytes());
    let error = load(&huge, &LoadOptions::default()).unwrap_err();
    assert_eq!(error.position, Position::Offset(starts[2] as u64));
    assert!(error.message.contains("a corrupt record, not a cut-off file"), "{error}");
    assert!(error.message.contains("no MRT record holds more than"), "{error}");
    // A record that runs past the end of a complete compressed stream.
    let mut encoder = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
    std::io::Write::write_all(&mut encoder, &bytes[..bytes.len() - 1]).unwrap();
    let error = load(&encoder.finish().unwrap(), &LoadOptions::default()).unwrap_err();
    assert_eq!(error.position, Position::Offset(*starts.last().unwrap() as u64));
    assert!(error.message.contains("but the bzip2 stream they came from is complete"), "{error}");
    // A plausible length at the end of uncompressed data is a cut-off file.
    let table = load(&bytes[..bytes.len() - 1], &LoadOptions::default()).unwrap();
    assert!(table.warnings.last().unwrap().contains("the data ends here"), "{:?}", table.warnings);
}

#[test]
fn malformed_records_name_the_offset() {
    let mut peer_table_only = Vec::new();
    record(&mut peer_table_only, 1, TABLE_DUMP_V2, 1, &peer_table(&[("192.0.2.1".parse().unwrap(), 64500)]));
    let rib_at = peer_table_only.len();
    let case = |tweak: &dyn Fn(&mut Vec<u8>)| {
        let mut out = peer_table_only.clone();
        let mut body = Vec::new();
        rib(&mut body, p("10.0.0.0/8"), &[(0, 0, rib_attributes(&[64500], Hop::V4(v4("192.0.2.1"))))], false);
        tweak(&mut body);
        out.extend(body);
        load(&out, &LoadOptions::default()).unwrap_err()
    };
    // The prefix length byte follows the header and the sequence number.
    let error = case(&|body| body[HEADER_LEN + 4] = 33);
    assert_eq!(error.position, Position::Offset((rib_at + HEADER_LEN + 4) as u64));
    assert!(error.message.contains("prefix length 33 exceeds 32"), "{error}");
    assert!(error.to_string().starts_with(&format!("t.mrt: at byte {}: ", rib_at + HEADER_LEN + 4)), "{error}");
    // Peer index 5 of a one-peer table.
    let error = case(&|body| body[HEADER_LEN + 4 + 2 + 2 + 1] = 5);
    assert!(error.message.contains("peer index 5 is not in the PEER_INDEX_TABLE (1 peers)"), "{error}");
    // An attribute length past the attributes.
    let attributes_at = HEADER_LEN + 4 + 2 + 2 + 2 + 4 + 2;
    let error = case(&|body| body[attributes_at + 2] = 200);
    assert!(error.message.contains("attribute value needs 200 bytes"), "{error}");
    assert_eq!(error.position, Position::Offset((rib_at + attributes_at + 3) as u64));
    // Entry count larger than the entries.
    let error = case(&|body| body[HEADER_LEN + 4 + 2 + 1] = 9);
    assert!(error.message.contains("peer index needs 2 bytes, but only 0 are left"), "{error}");
    // Bytes after the entries.
    let error = case(&|body| {
        body.push(0);
        body[11] += 1;
    });
    assert!(error.message.contains("1 bytes after the last of 1 RIB entries"), "{error}");
    // A second peer table.
    let mut twice = peer_table_only.clone();
    twice.extend(peer_table_only.clone());
    let error = load(&twice, &LoadOptions::default()).unwrap_err();
    assert_eq!(error.position, Position::Offset(rib_at as u64));
}

#[test]
fn unsupported_records_are_skipped_with_a_warning() {
    let mut out = sample_dump();
    let at = out.len();
    record(&mut out, 1, TABLE_DUMP_V2, 6, &[1, 2, 3]);
    record(&mut out, 1, TABLE_DUMP_V2, 6, &[]);
    record(&mut out, 1, 99, 0, &[]);
    record(&mut out, 1, TABLE_DUMP_V2, 3, &[0; 40]); // multicast: quietly
    let table = load(&out, &LoadOptions::default()).unwrap();
    assert_eq!(table.warnings.len(), 2, "{:?}", table.warnings);
    assert!(table.warnings[0].contains(&format!(
        "at byte {at}: skipped 2 MRT record(s) of type 13 subtype 6 (TABLE_DUMP_V2 RIB_GENERIC), the first here"
    )));
    assert!(table.warnings[1].contains("type 99 subtype 0 (unknown)"), "{:?}", table.warnings);
    assert!(load(&out, &LoadOptions { strict: true, ..Default::default() }).is_err());
}

#[test]
fn detection_needs_a_known_header() {
    let bytes = sample_dump();
    assert!(!is_mrt(&bytes[..11]));
    let mut unknown = bytes.clone();
    unknown[5] = 99;
    assert!(!is_mrt(&unknown));
    let mut huge = bytes.clone();
    huge[8] = 0x10;
    assert!(!is_mrt(&huge));
    assert!(!is_mrt(b"10.0.0.0/8 1\n10.1.0.0/16 2\n"));
    // A text option on an MRT file is fine; MRT options on text are not.
    let error = load(b"10.0.0.0/8 1\n", &with_peer("1")).unwrap_err();
    assert!(error.message.contains("--peer 1 selects a peer of an MRT file"), "{error}");
    let error =
        load(b"10.0.0.0/8 1\n", &LoadOptions { value: ValueChoice::OriginAs, ..Default::default() }).unwrap_err();
    assert!(error.message.contains("--value origin-as applies to MRT files"), "{error}");
}

// ---- Update streams ------------------------------------------------------------

fn next_hop_attributes(path: &[u32], as4: bool, hop: &str) -> Vec<u8> {
    let mut attributes = Vec::new();
    attribute(&mut attributes, 1, &[0]);
    attribute(&mut attributes, ATTR_AS_PATH, &as_path(path, as4));
    attribute(&mut attributes, ATTR_NEXT_HOP, &v4(hop).octets());
    attributes
}

fn mp_reach(hop: &str, prefixes: &[IpPrefix]) -> Vec<u8> {
    let mut value = vec![0, 2, 1, 16];
    value.extend(v6(hop).octets());
    value.push(0);
    for &prefix in prefixes {
        value.extend(nlri(prefix));
    }
    value
}

fn mp_unreach(prefixes: &[IpPrefix]) -> Vec<u8> {
    let mut value = vec![0, 2, 1];
    for &prefix in prefixes {
        value.extend(nlri(prefix));
    }
    value
}

fn stream(bytes: &[u8], options: &LoadOptions) -> Result<UpdateStream, LoadError> {
    updates_from_bytes(Path::new("u.mrt"), bytes, options)
}

fn describe(stream: &UpdateStream) -> Vec<String> {
    stream
        .updates
        .iter()
        .map(|timed| match timed.update {
            Update::Announce { prefix, value } => format!("{} a {prefix} {value}", timed.time),
            Update::Withdraw { prefix } => format!("{} w {prefix}", timed.time),
        })
        .collect()
}

fn sample_updates() -> Vec<u8> {
    let mut out = Vec::new();
    let mut first = Message::new("195.66.226.74", 64500);
    first.attributes = next_hop_attributes(&[64500, 15169], true, "195.66.226.74");
    first.announced = vec![(0, p("10.0.0.0/8")), (0, p("10.1.0.0/16"))];
    first.write(&mut out, 100);
    // A 2-byte session (BGP4MP_MESSAGE) of another peer, ET timestamps.
    let mut other = Message::new("195.66.224.1", 65001);
    other.as4 = false;
    other.et = true;
    other.attributes = next_hop_attributes(&[65001], false, "195.66.224.1");
    other.announced = vec![(0, p("12.0.0.0/8"))];
    other.write(&mut out, 101);
    let mut third = Message::new("195.66.226.74", 64500);
    third.withdrawn = vec![(0, p("10.1.0.0/16"))];
    let mut attributes = Vec::new();
    attribute(&mut attributes, ATTR_AS_PATH, &as_path(&[64500, 2914], true));
    attribute(&mut attributes, ATTR_MP_REACH_NLRI, &mp_reach("2001:7f8:4::1", &[p("2001:db8::/32")]));
    attribute(&mut attributes, ATTR_MP_UNREACH_NLRI, &mp_unreach(&[p("2001:db9::/32")]));
    third.attributes = attributes;
    third.write(&mut out, 102);
    // A state change and a KEEPALIVE-like non-update are skipped quietly.
    record(&mut out, 103, BGP4MP, 5, &[0; 20]);
    out
}

#[test]
fn bgp4mp_updates_of_the_busiest_peer() {
    let bytes = sample_updates();
    let stream = stream(&bytes, &LoadOptions::default()).unwrap();
    assert!(stream.warnings.is_empty(), "{:?}", stream.warnings);
    assert_eq!(
        describe(&stream),
        [
            "100 a 10.0.0.0/8 195.66.226.74",
            "100 a 10.1.0.0/16 195.66.226.74",
            "102 w 10.1.0.0/16",
            "102 w 2001:db9::/32",
            "102 a 2001:db8::/32 2001:7f8:4::1"
        ]
    );
    assert_eq!(stream.peer.as_ref().unwrap().to_string(), "peer 0 AS64500 195.66.226.74");
    let other = super::super::updates_from_bytes(Path::new("u"), &bytes, &with_peer("AS65001")).unwrap();
    assert_eq!(describe(&other), ["101.250000 a 12.0.0.0/8 195.66.224.1"]);
    let origins = LoadOptions { value: ValueChoice::OriginAs, ..Default::default() };
    let stream = super::super::updates_from_bytes(Path::new("u"), &bytes, &origins).unwrap();
    assert_eq!(describe(&stream)[0], "100 a 10.0.0.0/8 15169");
    assert_eq!(describe(&stream)[4], "102 a 2001:db8::/32 2914");
    // As a table: the stream replayed.
    let table = load(&bytes, &LoadOptions::default()).unwrap();
    assert_eq!(routes(&table), ["10.0.0.0/8 195.66.226.74", "2001:db8::/32 2001:7f8:4::1"]);
    let list = list_peers_bytes(Path::new("u"), &bytes, &LoadOptions::default()).unwrap();
    assert_eq!(list.content, "update stream");
    let counts: Vec<(usize, usize, usize)> =
        list.peers.iter().map(|p| (p.routes_v4, p.routes_v6, p.withdrawals)).collect();
    assert_eq!(counts, [(2, 1, 2), (1, 0, 0)]);
    // A RIB dump is not an update stream.
    let error = stream_error(&sample_dump());
    assert!(error.message.contains("RIB dump, not an update stream"), "{error}");
}

fn stream_error(bytes: &[u8]) -> LoadError {
    stream(bytes, &LoadOptions::default()).unwrap_err()
}

#[test]
fn add_path_updates_follow_the_lowest_path() {
    let mut out = Vec::new();
    let mut write = |withdrawn: Vec<(u32, IpPrefix)>, announced: Vec<(u32, IpPrefix)>, hop: &str, time| {
        let mut message = Message::new("192.0.2.1", 64500);
        message.add_path = true;
        message.withdrawn = withdrawn;
        message.announced = announced;
        message.attributes = next_hop_attributes(&[64500], true, hop);
        message.write(&mut out, time);
    };
    write(vec![], vec![(5, p("10.0.0.0/8"))], "192.0.2.5", 1);
    write(vec![], vec![(2, p("10.0.0.0/8"))], "192.0.2.2", 2);
    write(vec![(2, p("10.0.0.0/8"))], vec![], "192.0.2.2", 3);
    write(vec![(5, p("10.0.0.0/8"))], vec![], "192.0.2.2", 4);
    let stream = stream(&out, &LoadOptions::default()).unwrap();
    assert_eq!(
        describe(&stream),
        ["1 a 10.0.0.0/8 192.0.2.5", "2 a 10.0.0.0/8 192.0.2.2", "3 a 10.0.0.0/8 192.0.2.5", "4 w 10.0.0.0/8"]
    );
}

#[test]
fn malformed_messages_name_the_offset() {
    let mut message = Message::new("192.0.2.1", 64500);
    message.attributes = next_hop_attributes(&[64500], true, "192.0.2.1");
    message.announced = vec![(0, p("10.0.0.0/8"))];
    let mut good = Vec::new();
    message.write(&mut good, 1);
    // The BGP length field: after the header, ASNs, interface, AFI, addresses, marker.
    let length_at = HEADER_LEN + 4 + 4 + 2 + 2 + 4 + 4 + 16;
    let mut bad = good.clone();
    bad[length_at + 1] += 1;
    let error = stream_error(&bad);
    assert!(error.message.contains("BGP message length"), "{error}");
    assert_eq!(error.position, Position::Offset((length_at - 16) as u64));
    let mut bad = good.clone();
    let nlri_at = bad.len() - 2;
    bad[nlri_at] = 40;
    let error = stream_error(&bad);
    assert!(error.message.contains("NLRI prefix: prefix length 40 exceeds 32"), "{error}");
    assert_eq!(error.position, Position::Offset(nlri_at as u64));
    let mut bad = good.clone();
    bad[HEADER_LEN + 4 + 4 + 2 + 1] = 3;
    assert!(stream_error(&bad).message.contains("address family 3"));
}

// ---- Hostile bytes ---------------------------------------------------------------

/// The samples above are the seeds of the `mrt` and `updates` fuzz targets
/// in `fuzz/seeds/`: this checks they are current, and with
/// `FIBKIT_WRITE_SEEDS=1` (re)writes them. The `mrt` target reads its first
/// byte as options: 0 is the default.
#[test]
fn fuzz_seeds_are_current() {
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds");
    let mut add_path = Vec::new();
    record(&mut add_path, 1, TABLE_DUMP_V2, 1, &peer_table(&[("192.0.2.1".parse().unwrap(), 64500)]));
    let entries = [
        (0, 9, rib_attributes(&[64500, 1], Hop::V4(v4("192.0.2.9")))),
        (0, 3, rib_attributes(&[64500, 2], Hop::V4(v4("192.0.2.3")))),
    ];
    rib(&mut add_path, p("10.0.0.0/8"), &entries, true);
    rib(&mut add_path, p("2001:db8::/32"), &[(0, 1, rib_attributes(&[64500], Hop::Full(v6("2001:db8::1"))))], true);
    let mut v1 = Vec::new();
    let mut body = vec![0, 0, 0, 1, 10, 0, 0, 0, 8, 1, 0, 0, 0, 1, 192, 0, 2, 1, 0xfb, 0xf4];
    let mut attributes = Vec::new();
    attribute(&mut attributes, ATTR_AS_PATH, &as_path(&[64500, 65000], false));
    attribute(&mut attributes, ATTR_NEXT_HOP, &[192, 0, 2, 1]);
    body.extend((attributes.len() as u16).to_be_bytes());
    body.extend(attributes);
    record(&mut v1, 1, TABLE_DUMP, 1, &body);
    // The third record announcing 4 GiB, with more records after it: a
    // corrupt record, not a cut-off file.
    let corrupt_length = |mut bytes: Vec<u8>| {
        let third = Records::new(&bytes).nth(2).expect("three records").offset;
        bytes[third + 8..third + 12].copy_from_slice(&u32::MAX.to_be_bytes());
        bytes
    };
    for (dir, name, bytes) in [
        ("mrt", "dump", sample_dump()),
        ("mrt", "updates", sample_updates()),
        ("mrt", "add_path", add_path),
        ("mrt", "table_dump_v1", v1),
        ("mrt", "corrupt_length", corrupt_length(sample_dump())),
        ("updates", "bgp4mp", sample_updates()),
        ("updates", "bgp4mp_corrupt_length", corrupt_length(sample_updates())),
    ] {
        let mut seed = if dir == "mrt" { vec![0] } else { Vec::new() };
        seed.extend(bytes);
        let path = seeds.join(dir).join(name);
        if std::env::var_os("FIBKIT_WRITE_SEEDS").is_some() {
            std::fs::create_dir_all(seeds.join(dir)).unwrap();
            std::fs::write(&path, &seed).unwrap();
        }
        let stored = std::fs::read(&path).unwrap_or_default();
        assert!(stored == seed, "{} is not current: run with FIBKIT_WRITE_SEEDS=1", path.display());
    }
}

/// Every way to read MRT bytes: none may panic.
fn read_every_way(bytes: &[u8]) {
    let file = Path::new("fuzz");
    for options in [
        LoadOptions::default(),
        LoadOptions { strict: true, value: ValueChoice::OriginAs, ..Default::default() },
        LoadOptions { peer: PeerSelector::Index(1), ..Default::default() },
    ] {
        let _ = load_bytes(file, bytes, &options);
        let _ = updates_from_bytes(file, bytes, &options);
    }
    let _ = list_peers_bytes(file, bytes, &LoadOptions::default());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn mutated_mrt_never_panics(
        mutations in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
        updates in any::<bool>(),
    ) {
        let mut bytes = if updates { sample_updates() } else { sample_dump() };
        for (index, byte) in mutations {
            let at = index.index(bytes.len());
            bytes[at] = byte;
        }
        bytes.truncate(cut.index(bytes.len() + 1));
        read_every_way(&bytes);
    }

    #[test]
    fn random_bytes_behind_an_mrt_header_never_panic(
        mrt_type in prop::sample::select(vec![12u16, 13, 16, 17]),
        subtype in 0..12u16,
        body in proptest::collection::vec(any::<u8>(), 0..200),
    ) {
        let mut bytes = Vec::new();
        record(&mut bytes, 1, mrt_type, subtype, &body);
        record(&mut bytes, 1, mrt_type, subtype, &body);
        read_every_way(&bytes);
    }

    /// Random dumps of random peers load exactly what was written.
    #[test]
    fn random_dumps_round_trip(
        routes in proptest::collection::vec((any::<u32>(), 0..=32u8, 0..3u16, 1..4u8), 1..40),
        chosen in 0..3u16,
    ) {
        let mut out = Vec::new();
        let peers: Vec<(IpAddr, u32)> =
            (0..3u8).map(|i| (IpAddr::V4(Ipv4Addr::new(192, 0, 2, i)), 64500 + u32::from(i))).collect();
        record(&mut out, 1, TABLE_DUMP_V2, 1, &peer_table(&peers));
        let mut expected = std::collections::BTreeMap::new();
        let mut by_prefix: std::collections::BTreeMap<Prefix<u32>, Vec<(u16, u8)>> = Default::default();
        for &(addr, len, peer, hop) in &routes {
            let entries = by_prefix.entry(Prefix::truncating(addr, len)).or_default();
            if !entries.iter().any(|&(other, _)| other == peer) {
                entries.push((peer, hop));
            }
        }
        for (prefix, entries) in &by_prefix {
            let encoded: Vec<(u16, u32, Vec<u8>)> = entries
                .iter()
                .map(|&(peer, hop)| (peer, 0, rib_attributes(&[64500], Hop::V4(Ipv4Addr::new(10, 0, 0, hop)))))
                .collect();
            rib(&mut out, IpPrefix::V4(*prefix), &encoded, false);
            for &(peer, hop) in entries {
                if peer == chosen {
                    expected.insert(*prefix, format!("10.0.0.{hop}"));
                }
            }
        }
        let loaded = load(&out, &LoadOptions { peer: PeerSelector::Index(usize::from(chosen)), ..Default::default() });
        match loaded {
            Ok(table) => {
                let got: std::collections::BTreeMap<Prefix<u32>, String> =
                    table.v4.iter().map(|(prefix, hop)| (prefix, table.next_hops.describe(hop))).collect();
                prop_assert_eq!(got, expected);
                prop_assert!(table.warnings.is_empty());
            }
            Err(error) => {
                prop_assert!(expected.is_empty(), "{}", error);
            }
        }
    }
}
