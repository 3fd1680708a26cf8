//! Packet captures as key files: the destination addresses of the packets
//! in a pcap or pcapng file, in capture order (`fibkit bench --keys
//! trace.pcap`, the Poptrie paper's real-trace test).
//!
//! The file formats are read by the `pcap-file` crate and the packet
//! headers by `etherparse`; this module only walks the records and picks
//! each packet's destination address:
//!
//! ```text
//!  record ─► link layer ─────────────► network layer ─► destination
//!            Ethernet (+ VLAN tags)    IPv4 / IPv6        key of the
//!            raw IP, IPv4, IPv6        (others: not IP)   family asked
//!            Linux cooked (SLL, SLL2)                     for, or skipped
//!            BSD loopback (NULL, LOOP)
//! ```
//!
//! A capture is told from a raw key file by its first four bytes (the pcap
//! magic numbers in either byte order and precision, or pcapng's section
//! header block type). Packets that carry no address of the family asked
//! for are counted in the [`CaptureSummary`], never dropped unseen; a
//! record cut short by the end of the file, a link type this reader does
//! not know, or a capture with no key at all is an error naming the byte
//! offset.

use std::fmt;
use std::path::Path;

use etherparse::{EtherType, LaxNetSlice, LaxSlicedPacket};
use pcap_file::pcap::PcapParser;
use pcap_file::pcapng::{Block, PcapNgParser};
use pcap_file::{DataLink, PcapError};

use super::{LoadError, Position};
use crate::addr::{Address, Family};

/// The first four bytes of a pcap file (microsecond and nanosecond
/// timestamps, in both byte orders) and of a pcapng file.
const MAGICS: [[u8; 4]; 5] = [
    [0xd4, 0xc3, 0xb2, 0xa1],
    [0xa1, 0xb2, 0xc3, 0xd4],
    [0x4d, 0x3c, 0xb2, 0xa1],
    [0xa1, 0xb2, 0x3c, 0x4d],
    [0x0a, 0x0d, 0x0d, 0x0a],
];

/// Whether `bytes` start as a pcap or pcapng file does.
pub fn is_capture(bytes: &[u8]) -> bool {
    bytes.len() >= 4 && MAGICS.iter().any(|magic| bytes[..4] == magic[..])
}

/// What reading a capture kept and what it skipped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CaptureSummary {
    /// The family whose destination addresses were kept.
    pub family: Option<Family>,
    /// Packet records read.
    pub packets: u64,
    /// Destination addresses kept as keys.
    pub keys: u64,
    /// Packets of the other IP version, skipped.
    pub other_family: u64,
    /// Packets with no IP header (ARP, LLDP, other EtherTypes), skipped.
    pub not_ip: u64,
    /// Packets captured too short to hold their IP header, skipped.
    pub too_short: u64,
}

impl fmt::Display for CaptureSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kept = self.family.unwrap_or(Family::Ipv4);
        let other = kept.other();
        write!(f, "{} packets: {} {kept} destinations kept", self.packets, self.keys)?;
        for (count, what) in [
            (self.other_family, format!("{other} packets")),
            (self.not_ip, "packets with no IP header".to_string()),
            (self.too_short, "packets cut before their IP header ends".to_string()),
        ] {
            if count > 0 {
                write!(f, ", {count} {what} skipped")?;
            }
        }
        Ok(())
    }
}

/// What a packet's link layer is, as far as finding its IP header goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Link {
    /// Ethernet II, with any VLAN tags.
    Ethernet,
    /// The IP header first (raw IP, or the IPv4- and IPv6-only types).
    Ip,
    /// Linux cooked capture v1: 16 bytes, the EtherType at 14.
    LinuxSll,
    /// Linux cooked capture v2: 20 bytes, the EtherType at 0.
    LinuxSll2,
    /// BSD loopback: a 4-byte address family word, then the IP header.
    Loopback,
}

impl Link {
    fn of(datalink: DataLink) -> Option<Link> {
        Some(match datalink {
            DataLink::ETHERNET => Link::Ethernet,
            DataLink::RAW | DataLink::IPV4 | DataLink::IPV6 => Link::Ip,
            DataLink::LINUX_SLL => Link::LinuxSll,
            DataLink::LINUX_SLL2 => Link::LinuxSll2,
            DataLink::NULL | DataLink::LOOP => Link::Loopback,
            _ => return None,
        })
    }

    /// The packet's network layer, if the link header is whole.
    fn network(self, data: &[u8]) -> Option<LaxSlicedPacket<'_>> {
        let ether_type = |at: usize| EtherType(u16::from_be_bytes([data[at], data[at + 1]]));
        match self {
            Link::Ethernet => LaxSlicedPacket::from_ethernet(data).ok(),
            Link::Ip => LaxSlicedPacket::from_ip(data).ok(),
            Link::LinuxSll if data.len() >= 16 => Some(LaxSlicedPacket::from_ether_type(ether_type(14), &data[16..])),
            Link::LinuxSll2 if data.len() >= 20 => Some(LaxSlicedPacket::from_ether_type(ether_type(0), &data[20..])),
            Link::Loopback if data.len() >= 4 => LaxSlicedPacket::from_ip(&data[4..]).ok(),
            _ => None,
        }
    }
}

/// Collects the keys of family `A` packet by packet.
struct Collector<A> {
    keys: Vec<A>,
    summary: CaptureSummary,
}

impl<A: Address> Collector<A> {
    fn packet(&mut self, link: Link, data: &[u8]) {
        self.summary.packets += 1;
        let Some(packet) = link.network(data) else {
            self.summary.too_short += 1;
            return;
        };
        let destination: Option<u128> = match packet.net {
            Some(LaxNetSlice::Ipv4(ip)) => {
                Some(u128::from(u32::from_be_bytes(ip.header().destination()))).filter(|_| A::FAMILY == Family::Ipv4)
            }
            Some(LaxNetSlice::Ipv6(ip)) => {
                Some(u128::from_be_bytes(ip.header().destination())).filter(|_| A::FAMILY == Family::Ipv6)
            }
            _ if packet.stop_err.is_some() => {
                self.summary.too_short += 1;
                return;
            }
            _ => {
                self.summary.not_ip += 1;
                return;
            }
        };
        match destination {
            Some(value) => {
                self.keys.push(A::from_words(words_of(value, A::BITS)));
                self.summary.keys += 1;
            }
            None => self.summary.other_family += 1,
        }
    }
}

/// The 32-bit words of the low `bits` bits of `value`, most significant
/// first, for [`Address::from_words`].
fn words_of(value: u128, bits: u8) -> impl FnMut() -> u32 {
    let mut shift = u32::from(bits);
    move || {
        shift -= 32;
        (value >> shift) as u32
    }
}

/// The destination addresses of family `A` in the capture `bytes` (already
/// decompressed), in packet order, and what was skipped. `file` names the
/// capture in errors.
///
/// # Errors
/// A [`LoadError`] at the byte offset of the first record that cannot be
/// read (cut short by the end of the file, or malformed), of a link type
/// other than those in the module documentation, or for the whole file if
/// no packet held a key.
pub fn capture_keys<A: Address>(file: &Path, bytes: &[u8]) -> Result<(Vec<A>, CaptureSummary), LoadError> {
    let mut collector =
        Collector { keys: Vec::new(), summary: CaptureSummary { family: Some(A::FAMILY), ..Default::default() } };
    let offset = |rest: &[u8]| (bytes.len() - rest.len()) as u64;
    let error = |rest: &[u8], what: String| LoadError::new(file, Position::Offset(offset(rest)), what);
    let link_of = |rest: &[u8], datalink: DataLink| {
        Link::of(datalink).ok_or_else(|| error(rest, format!("link type {datalink:?} is not one fibkit reads")))
    };
    if bytes[..4] == MAGICS[4] {
        let (mut rest, mut parser) =
            PcapNgParser::new(bytes).map_err(|e| error(bytes, problem(&e, "section header")))?;
        while !rest.is_empty() {
            let (next, block) = parser.next_block(rest).map_err(|e| error(rest, problem(&e, "block")))?;
            match block {
                Block::EnhancedPacket(packet) => {
                    let interface = parser.packet_interface(&packet).ok_or_else(|| {
                        error(rest, format!("packet of interface {}, which no block described", packet.interface_id))
                    })?;
                    collector.packet(link_of(rest, interface.linktype)?, &packet.data);
                }
                Block::SimplePacket(packet) => {
                    let interface = parser
                        .interfaces()
                        .first()
                        .ok_or_else(|| error(rest, "simple packet before any interface block".to_string()))?;
                    collector.packet(link_of(rest, interface.linktype)?, &packet.data);
                }
                Block::Packet(packet) => {
                    let interface = parser.interfaces().get(usize::from(packet.interface_id)).ok_or_else(|| {
                        error(rest, format!("packet of interface {}, which no block described", packet.interface_id))
                    })?;
                    collector.packet(link_of(rest, interface.linktype)?, &packet.data);
                }
                _ => {}
            }
            rest = next;
        }
    } else {
        let (mut rest, parser) = PcapParser::new(bytes).map_err(|e| error(bytes, problem(&e, "file header")))?;
        let link = link_of(rest, parser.header().datalink)?;
        while !rest.is_empty() {
            // Raw records: the crate's checked packets refuse an original
            // length above the snapshot length, which is every packet a
            // short snapshot length truncated.
            let (next, record) = parser.next_raw_packet(rest).map_err(|e| error(rest, problem(&e, "packet record")))?;
            collector.packet(link, &record.data);
            rest = next;
        }
    }
    if collector.keys.is_empty() {
        return Err(LoadError::new(
            file,
            Position::File,
            format!("no {} destination in the capture ({})", A::FAMILY, collector.summary),
        ));
    }
    Ok((collector.keys, collector.summary))
}

/// A reader error as a message about `what`.
fn problem(error: &PcapError, what: &str) -> String {
    match error {
        PcapError::IncompleteBuffer => format!("capture cut short inside a {what}"),
        other => format!("unreadable {what}: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::time::Duration;

    use pcap_file::pcap::{PcapHeader, PcapWriter, RawPcapPacket};
    use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
    use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionBlock;
    use pcap_file::pcapng::PcapNgWriter;
    use pcap_file::Endianness;

    use super::*;

    const IPV4: [u8; 2] = [0x08, 0x00];
    const IPV6: [u8; 2] = [0x86, 0xdd];

    /// An IPv4 header to `destination` claiming `total` bytes.
    fn ipv4(destination: [u8; 4], total: u16) -> Vec<u8> {
        let mut header = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 192, 0, 2, 1];
        header[2..4].copy_from_slice(&total.to_be_bytes());
        header.extend(destination);
        header
    }

    fn ipv6(destination: u128) -> Vec<u8> {
        let mut header = vec![0x60, 0, 0, 0, 0, 0, 59, 64];
        header.extend(0x2001_0db8_u128.to_be_bytes());
        header.extend(destination.to_be_bytes());
        header
    }

    /// An Ethernet frame with the given VLAN tags around `payload`.
    fn ethernet(vlans: &[u16], ether_type: [u8; 2], payload: &[u8]) -> Vec<u8> {
        let mut frame = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2];
        for vlan in vlans {
            frame.extend([0x81, 0x00]);
            frame.extend(vlan.to_be_bytes());
        }
        frame.extend(ether_type);
        frame.extend(payload);
        frame
    }

    /// A pcap file of `frames`, each recorded whole but claiming 1500
    /// bytes on the wire (as a short snapshot length leaves them).
    fn pcap(datalink: DataLink, endianness: Endianness, frames: &[Vec<u8>]) -> Vec<u8> {
        let header = PcapHeader { snaplen: 96, datalink, endianness, ..Default::default() };
        let mut writer = PcapWriter::with_header(Vec::new(), header).unwrap();
        for frame in frames {
            let record = RawPcapPacket {
                ts_sec: 1,
                ts_frac: 0,
                incl_len: frame.len() as u32,
                orig_len: 1500,
                data: Cow::Borrowed(frame),
            };
            writer.write_raw_packet(&record).unwrap();
        }
        writer.into_writer()
    }

    fn keys<A: Address>(bytes: &[u8]) -> Result<(Vec<A>, CaptureSummary), LoadError> {
        assert!(is_capture(bytes));
        capture_keys::<A>(Path::new("trace.pcap"), bytes)
    }

    #[test]
    fn pcap_ethernet_with_vlans_gives_each_familys_destinations_in_order() {
        let frames = [
            ethernet(&[], IPV4, &ipv4([10, 0, 0, 1], 1500)),
            ethernet(&[7], IPV4, &ipv4([10, 0, 0, 2], 20)),
            ethernet(&[7, 8], IPV6, &ipv6(0x2001_0db8_0000_0000_0000_0000_0000_0009)),
            ethernet(&[], [0x08, 0x06], &[0; 28]),
            ethernet(&[], IPV4, &ipv4([10, 0, 0, 3], 40)[..12]),
            ethernet(&[], IPV4, &ipv4([10, 0, 0, 4], 60)),
        ];
        for endianness in [Endianness::Big, Endianness::Little] {
            let file = pcap(DataLink::ETHERNET, endianness, &frames);
            let (four, summary) = keys::<u32>(&file).unwrap();
            assert_eq!(four, [0x0a00_0001, 0x0a00_0002, 0x0a00_0004]);
            let want = CaptureSummary {
                family: Some(Family::Ipv4),
                packets: 6,
                keys: 3,
                other_family: 1,
                not_ip: 1,
                too_short: 1,
            };
            assert_eq!(summary, want);
            assert_eq!(
                summary.to_string(),
                "6 packets: 3 IPv4 destinations kept, 1 IPv6 packets skipped, 1 packets with no IP header skipped, \
                 1 packets cut before their IP header ends skipped"
            );
            let (six, summary) = keys::<u128>(&file).unwrap();
            assert_eq!(six, [0x2001_0db8_0000_0000_0000_0000_0000_0009]);
            assert_eq!((summary.keys, summary.other_family), (1, 3));
        }
    }

    #[test]
    fn raw_ip_cooked_and_loopback_links_are_read() {
        let raw = pcap(DataLink::RAW, Endianness::Little, &[ipv4([1, 2, 3, 4], 20), ipv6(5)]);
        assert_eq!(keys::<u32>(&raw).unwrap().0, [0x0102_0304]);
        assert_eq!(keys::<u128>(&raw).unwrap().0, [5]);
        let mut sll = vec![0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0];
        sll.extend(IPV4);
        sll.extend(ipv4([9, 9, 9, 9], 20));
        let mut sll2 = IPV6.to_vec();
        sll2.extend([0; 18]);
        sll2.extend(ipv6(77));
        assert_eq!(keys::<u32>(&pcap(DataLink::LINUX_SLL, Endianness::Big, &[sll])).unwrap().0, [0x0909_0909]);
        assert_eq!(keys::<u128>(&pcap(DataLink::LINUX_SLL2, Endianness::Big, &[sll2])).unwrap().0, [77]);
        let mut looped = 2u32.to_le_bytes().to_vec();
        looped.extend(ipv4([8, 8, 4, 4], 20));
        assert_eq!(keys::<u32>(&pcap(DataLink::NULL, Endianness::Little, &[looped])).unwrap().0, [0x0808_0404]);
    }

    #[test]
    fn pcapng_reads_each_packets_interface_link_type() {
        let mut writer = PcapNgWriter::with_endianness(Vec::new(), Endianness::Little).unwrap();
        writer
            .write_block(&Block::InterfaceDescription(InterfaceDescriptionBlock::new(DataLink::ETHERNET, 0)))
            .unwrap();
        writer.write_block(&Block::InterfaceDescription(InterfaceDescriptionBlock::new(DataLink::RAW, 0))).unwrap();
        let packet = |interface_id: u32, data: Vec<u8>| {
            Block::EnhancedPacket(EnhancedPacketBlock {
                interface_id,
                timestamp: Duration::from_secs(1),
                original_len: data.len() as u32,
                data: Cow::Owned(data),
                options: vec![],
            })
        };
        writer.write_block(&packet(0, ethernet(&[3], IPV4, &ipv4([10, 1, 1, 1], 20)))).unwrap();
        writer.write_block(&packet(1, ipv4([10, 2, 2, 2], 20))).unwrap();
        writer.write_block(&packet(0, ethernet(&[], IPV6, &ipv6(6)))).unwrap();
        let file = writer.into_inner();
        let (four, summary) = keys::<u32>(&file).unwrap();
        assert_eq!(four, [0x0a01_0101, 0x0a02_0202]);
        assert_eq!((summary.packets, summary.other_family), (3, 1));
        assert_eq!(keys::<u128>(&file).unwrap().0, [6]);
    }

    #[test]
    fn bad_captures_are_errors_at_their_offset() {
        let frames = [ethernet(&[], IPV4, &ipv4([10, 0, 0, 1], 20)), ethernet(&[], IPV4, &ipv4([10, 0, 0, 2], 20))];
        let whole = pcap(DataLink::ETHERNET, Endianness::Little, &frames);
        // A capture whose length is a multiple of 4 is still no raw key file.
        assert_eq!(whole.len() % 4, 0);
        assert_eq!(crate::load::keys_from_bytes(Path::new("t"), &whole).unwrap(), [0x0a00_0001, 0x0a00_0002]);
        let second_record = 24 + 16 + frames[0].len();
        let error = keys::<u32>(&whole[..whole.len() - 3]).unwrap_err();
        assert_eq!(error.position, Position::Offset(second_record as u64));
        assert!(error.message.contains("cut short inside a packet record"), "{}", error.message);
        assert_eq!(
            keys::<u32>(&whole[..20]).unwrap_err().to_string(),
            "trace.pcap: at byte 0: capture cut short inside a file header"
        );
        let ppp = pcap(DataLink::PPP, Endianness::Little, &frames);
        assert!(keys::<u32>(&ppp).unwrap_err().message.contains("link type PPP is not one fibkit reads"));
        let no_ipv6 = keys::<u128>(&whole).unwrap_err();
        assert_eq!(no_ipv6.position, Position::File);
        assert!(
            no_ipv6.message.starts_with("no IPv6 destination in the capture (2 packets: 0 IPv6"),
            "{}",
            no_ipv6.message
        );
        assert!(!is_capture(b"\xd4\xc3\xb2") && !is_capture(b"1.2.3.4\n"));
    }
}
