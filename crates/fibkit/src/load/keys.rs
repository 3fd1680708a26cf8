//! Key files: lookup keys for replaying traffic (`fibkit bench --keys`),
//! IPv4 ([`load_keys`]) and IPv6 ([`load_keys6`]).

use std::any::Any;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::Path;

use crate::addr::{Address, Family};
use super::{decompress, LoadError, Position};

/// Loads IPv4 lookup keys from `path` (gzip and bzip2 decompressed by magic bytes).
///
/// Two layouts are accepted:
///
/// - **text**: one IPv4 address a line, dotted (`192.0.2.1`) or decimal
///   (`3221225985`); blank lines and `#` comments (whole-line or after the
///   address) are skipped;
/// - **raw**: little-endian `u32` keys back to back.
///
/// Detection rule: the file is text when every line reads as above. When
/// some line does not, the file is raw if its length is a multiple of 4 —
/// unless it consists of printable text whose first address line is valid, in
/// which case it is a text file with a bad line and that line is reported.
/// A file with no key at all is an error.
pub fn load_keys(path: &Path) -> Result<Vec<u32>, LoadError> {
    let raw = super::read_file(path)?;
    keys_from_bytes(path, &raw)
}

/// [`load_keys`] on bytes in memory; `file` names them in errors. A
/// truncated compressed stream is an error here (a key file has no
/// warnings to carry), naming the offset where the data ends.
pub fn keys_from_bytes(file: &Path, bytes: &[u8]) -> Result<Vec<u32>, LoadError> {
    keys_in(file, bytes, &IPV4_LAYOUT)
}

/// Loads IPv6 lookup keys from `path`, as [`load_keys`] does for IPv4:
///
/// - **text**: one IPv6 address a line (`2001:db8::1`), or a decimal
///   128-bit number; blank lines and `#` comments are skipped;
/// - **raw**: 16-byte addresses back to back in network byte order (as
///   they stand in packet headers).
///
/// The detection rule is [`load_keys`]'s with 16 in place of 4.
pub fn load_keys6(path: &Path) -> Result<Vec<u128>, LoadError> {
    let raw = super::read_file(path)?;
    keys6_from_bytes(path, &raw)
}

/// The addresses of family `A` in a key file: [`load_keys`] for IPv4,
/// [`load_keys6`] for IPv6.
///
/// # Errors
/// As theirs.
pub fn load_keys_for<A: Address>(path: &Path) -> Result<Vec<A>, LoadError> {
    let keys: Box<dyn Any> = match A::FAMILY {
        Family::Ipv4 => Box::new(load_keys(path)?),
        Family::Ipv6 => Box::new(load_keys6(path)?),
    };
    Ok(*keys.downcast::<Vec<A>>().expect("each family's keys have its address type"))
}

/// [`load_keys6`] on bytes in memory; `file` names them in errors.
pub fn keys6_from_bytes(file: &Path, bytes: &[u8]) -> Result<Vec<u128>, LoadError> {
    keys_in(file, bytes, &IPV6_LAYOUT)
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
}

const IPV4_LAYOUT: Layout<u32> = Layout {
    family: "IPv4",
    bits: 32,
    raw_width: 4,
    raw_name: "u32",
    parse_decimal: |text| text.parse().ok(),
    parse_address: |text| text.parse::<Ipv4Addr>().ok().map(u32::from),
    from_raw: |word| u32::from_le_bytes([word[0], word[1], word[2], word[3]]),
};

const IPV6_LAYOUT: Layout<u128> = Layout {
    family: "IPv6",
    bits: 128,
    raw_width: 16,
    raw_name: "16-byte",
    parse_decimal: |text| text.parse().ok(),
    parse_address: |text| text.parse::<Ipv6Addr>().ok().map(u128::from),
    from_raw: |bytes| u128::from_be_bytes(bytes.try_into().expect("chunks of 16 bytes")),
};

fn keys_in<A>(file: &Path, bytes: &[u8], layout: &Layout<A>) -> Result<Vec<A>, LoadError> {
    let data = decompress(file, bytes)?;
    if let Some(cut) = &data.cut {
        return Err(LoadError::new(file, Position::Offset(cut.decompressed), cut.to_string()));
    }
    let bytes = &data.bytes[..];
    match text_keys(bytes, layout) {
        Ok(keys) if keys.is_empty() => Err(LoadError::new(file, Position::File, "no keys in the file")),
        Ok(keys) => Ok(keys),
        Err(bad) => {
            let printable = bytes.iter().all(|&b| b.is_ascii_graphic() || matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
            let width = layout.raw_width;
            if bytes.len() % width == 0 && !(printable && bad.after_valid_line) {
                Ok(bytes.chunks_exact(width).map(layout.from_raw).collect())
            } else {
                let raw_note = if bytes.len() % width == 0 {
                    String::new()
                } else {
                    format!(
                        " (nor raw {} keys: the length {} is not a multiple of {width})",
                        layout.raw_name,
                        bytes.len()
                    )
                };
                Err(LoadError::new(file, Position::Line(bad.line), format!("{}{raw_note}", bad.message)))
            }
        }
    }
}

/// Why a file is not a text key file.
struct BadLine {
    line: usize,
    message: String,
    /// Whether a valid address line came before the bad one.
    after_valid_line: bool,
}

fn text_keys<A>(bytes: &[u8], layout: &Layout<A>) -> Result<Vec<A>, BadLine> {
    let mut keys = Vec::with_capacity(bytes.len() / 12);
    for (index, raw_line) in bytes.split(|&b| b == b'\n').enumerate() {
        let bad = |message: String| BadLine { line: index + 1, message, after_valid_line: !keys.is_empty() };
        let without_comment = match raw_line.iter().position(|&b| b == b'#') {
            Some(hash) => &raw_line[..hash],
            None => raw_line,
        };
        let Ok(line) = std::str::from_utf8(without_comment) else {
            return Err(bad("not text (invalid UTF-8)".to_string()));
        };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let key = if line.bytes().all(|b| b.is_ascii_digit()) {
            (layout.parse_decimal)(line).ok_or_else(|| {
                bad(format!("decimal key {} exceeds {} bits", super::text::shorten(line), layout.bits))
            })?
        } else {
            (layout.parse_address)(line).ok_or_else(|| {
                bad(format!("malformed {} address {:?}", layout.family, super::text::shorten(line)))
            })?
        };
        keys.push(key);
    }
    Ok(keys)
}
