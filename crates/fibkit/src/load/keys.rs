//! Key files: lookup keys for replaying traffic (`fibkit bench --keys`),
//! IPv4 ([`load_keys`]) and IPv6 ([`load_keys6`]): text, raw, or a packet
//! capture ([`super::capture`]).

use std::any::Any;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::Path;

use super::capture::{capture_keys, is_capture, CaptureSummary};
use super::text::numbered_lines;
use super::{decompress, LoadError, Position};
use crate::addr::{Address, Family};
use crate::error::shorten;

/// Loads IPv4 lookup keys from `path` (gzip and bzip2 decompressed by magic bytes).
///
/// Two layouts are accepted:
///
/// - **text**: one IPv4 address a line, dotted (`192.0.2.1`) or decimal
///   (`3221225985`); blank lines and `#` comments (whole-line or after the
///   address) are skipped;
/// - **raw**: little-endian `u32` keys back to back.
///
/// - **capture**: a pcap or pcapng file; the keys are the destination
///   addresses of its IPv4 packets, in capture order (IPv6 and non-IP
///   packets are skipped: [`load_keys_for`] tells how many).
///
/// Detection rule, by content: a file that starts with a pcap or pcapng
/// magic number is a capture; a file of text (UTF-8 without control bytes
/// but tab, CR and LF) is a text key file, and a line that does not read as
/// above is an error naming it (an IPv6 address says so); any other file is
/// raw if its length is a multiple of 4. A file with no key at all is an
/// error.
pub fn load_keys(path: &Path) -> Result<Vec<u32>, LoadError> {
    let raw = super::read_file(path)?;
    keys_from_bytes(path, &raw)
}

/// [`load_keys`] on bytes in memory; `file` names them in errors. A
/// truncated compressed stream, or bytes after it that are not part of it,
/// are an error here (a key file has no warnings to carry), naming the
/// offset.
pub fn keys_from_bytes(file: &Path, bytes: &[u8]) -> Result<Vec<u32>, LoadError> {
    Ok(keys_in(file, bytes, &IPV4_LAYOUT)?.keys)
}

/// Loads IPv6 lookup keys from `path`, as [`load_keys`] does for IPv4:
///
/// - **text**: one IPv6 address a line (`2001:db8::1`), or a decimal
///   128-bit number; blank lines and `#` comments are skipped;
/// - **raw**: 16-byte addresses back to back in network byte order (as
///   they stand in packet headers);
/// - **capture**: the destinations of the IPv6 packets of a pcap or pcapng
///   file.
///
/// The detection rule is [`load_keys`]'s with 16 in place of 4.
pub fn load_keys6(path: &Path) -> Result<Vec<u128>, LoadError> {
    let raw = super::read_file(path)?;
    keys6_from_bytes(path, &raw)
}

/// The keys of a key file, and for a capture what it skipped.
#[derive(Clone, Debug)]
pub struct KeyFile<A> {
    /// The keys in file order.
    pub keys: Vec<A>,
    /// For a packet capture, its packet counts (kept and skipped).
    pub capture: Option<CaptureSummary>,
}

/// The addresses of family `A` in a key file, as [`load_keys`] reads them
/// for IPv4 and [`load_keys6`] for IPv6, with a capture's summary.
///
/// # Errors
/// As theirs.
pub fn load_keys_for<A: Address>(path: &Path) -> Result<KeyFile<A>, LoadError> {
    let raw = super::read_file(path)?;
    let file: Box<dyn Any> = match A::FAMILY {
        Family::Ipv4 => Box::new(keys_in(path, &raw, &IPV4_LAYOUT)?),
        Family::Ipv6 => Box::new(keys_in(path, &raw, &IPV6_LAYOUT)?),
    };
    Ok(*file.downcast::<KeyFile<A>>().expect("each family's keys have its address type"))
}

/// [`load_keys6`] on bytes in memory; `file` names them in errors.
pub fn keys6_from_bytes(file: &Path, bytes: &[u8]) -> Result<Vec<u128>, LoadError> {
    Ok(keys_in(file, bytes, &IPV6_LAYOUT)?.keys)
}

/// How one family's key files read.
struct Layout<A> {
    /// The family's name in messages (`IPv4`).
    family: &'static str,
    /// Bits of a key (decimal keys above are refused).
    bits: u32,
    /// Bytes of a raw key.
    raw_width: usize,
    /// What a raw key is called in messages.
    raw_name: &'static str,
    parse_decimal: fn(&str) -> Option<A>,
    parse_address: fn(&str) -> Option<A>,
    from_raw: fn(&[u8]) -> A,
    /// The other family's name, and whether a line is one of its addresses
    /// (to say so rather than "malformed").
    other_family: &'static str,
    other_family_parses: fn(&str) -> bool,
}

const IPV4_LAYOUT: Layout<u32> = Layout {
    family: "IPv4",
    bits: 32,
    raw_width: 4,
    raw_name: "u32",
    parse_decimal: |text| text.parse().ok(),
    parse_address: |text| text.parse::<Ipv4Addr>().ok().map(u32::from),
    from_raw: |word| u32::from_le_bytes([word[0], word[1], word[2], word[3]]),
    other_family: "IPv6",
    other_family_parses: |text| text.parse::<Ipv6Addr>().is_ok(),
};

const IPV6_LAYOUT: Layout<u128> = Layout {
    family: "IPv6",
    bits: 128,
    raw_width: 16,
    raw_name: "16-byte",
    parse_decimal: |text| text.parse().ok(),
    parse_address: |text| text.parse::<Ipv6Addr>().ok().map(u128::from),
    from_raw: |bytes| u128::from_be_bytes(bytes.try_into().expect("chunks of 16 bytes")),
    other_family: "IPv4",
    other_family_parses: |text| text.parse::<Ipv4Addr>().is_ok(),
};

fn keys_in<A: Address>(file: &Path, bytes: &[u8], layout: &Layout<A>) -> Result<KeyFile<A>, LoadError> {
    let data = decompress(file, bytes)?;
    if let Some(cut) = &data.cut {
        return Err(LoadError::new(file, Position::Offset(cut.decompressed), cut.to_string()));
    }
    if let Some(trailing) = &data.trailing {
        return Err(LoadError::new(file, trailing.position(), trailing.message()));
    }
    let bytes = &data.bytes[..];
    if is_capture(bytes) {
        let (keys, summary) = capture_keys(file, bytes)?;
        return Ok(KeyFile { keys, capture: Some(summary) });
    }
    let keys = match text_of(bytes) {
        // Printable text is never taken for raw keys, even when its length
        // is a multiple of the key width: its bad line is the error.
        Some(text) => {
            text_keys(text, layout).map_err(|(line, message)| LoadError::new(file, Position::Line(line), message))?
        }
        None if bytes.len() % layout.raw_width == 0 => {
            bytes.chunks_exact(layout.raw_width).map(layout.from_raw).collect()
        }
        None => {
            return Err(LoadError::new(
                file,
                Position::File,
                format!(
                    "neither text nor raw {} keys: the length {} is not a multiple of {}",
                    layout.raw_name,
                    bytes.len(),
                    layout.raw_width
                ),
            ))
        }
    };
    if keys.is_empty() {
        return Err(LoadError::new(file, Position::File, "no keys in the file"));
    }
    Ok(KeyFile { keys, capture: None })
}

/// `bytes` as text, if they are: UTF-8 without control bytes but tab, CR
/// and LF (a byte order mark at the start is dropped).
fn text_of(bytes: &[u8]) -> Option<&str> {
    if super::text::first_control_byte(bytes).is_some() {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?;
    Some(text.strip_prefix('\u{feff}').unwrap_or(text))
}

/// The keys of a text key file, or the first bad line's number and problem.
fn text_keys<A>(text: &str, layout: &Layout<A>) -> Result<Vec<A>, (usize, String)> {
    let mut keys = Vec::with_capacity(text.len() / 12);
    for (number, line) in numbered_lines(text) {
        let line = line.split_once('#').map_or(line, |(before, _)| before).trim();
        if line.is_empty() {
            continue;
        }
        let key = if line.bytes().all(|b| b.is_ascii_digit()) {
            (layout.parse_decimal)(line)
                .ok_or_else(|| format!("decimal key {} exceeds {} bits", shorten(line), layout.bits))
        } else {
            (layout.parse_address)(line).ok_or_else(|| {
                let other = if (layout.other_family_parses)(line) { layout.other_family } else { "malformed" };
                format!("{other} address {:?} in an {} key file", shorten(line), layout.family)
            })
        };
        keys.push(key.map_err(|message| (number, message))?);
    }
    Ok(keys)
}
