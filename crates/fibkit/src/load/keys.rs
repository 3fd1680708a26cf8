//! Key files: IPv4 lookup keys for replaying traffic (`fibkit bench --keys`).

use std::net::Ipv4Addr;
use std::path::Path;

use super::{decompress, LoadError, Position};

/// Loads lookup keys from `path` (gzip and bzip2 decompressed by magic bytes).
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
    let data = decompress(file, bytes)?;
    if let Some(cut) = &data.cut {
        return Err(LoadError::new(file, Position::Offset(cut.decompressed), cut.to_string()));
    }
    let bytes = &data.bytes[..];
    match text_keys(bytes) {
        Ok(keys) if keys.is_empty() => Err(LoadError::new(file, Position::File, "no keys in the file")),
        Ok(keys) => Ok(keys),
        Err(bad) => {
            let printable = bytes.iter().all(|&b| b.is_ascii_graphic() || matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
            if bytes.len() % 4 == 0 && !(printable && bad.after_valid_line) {
                Ok(bytes.chunks_exact(4).map(|word| u32::from_le_bytes([word[0], word[1], word[2], word[3]])).collect())
            } else {
                let raw_note = if bytes.len() % 4 == 0 {
                    String::new()
                } else {
                    format!(" (nor raw u32 keys: the length {} is not a multiple of 4)", bytes.len())
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

fn text_keys(bytes: &[u8]) -> Result<Vec<u32>, BadLine> {
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
            line.parse::<u32>()
                .map_err(|_| bad(format!("decimal key {} exceeds 32 bits", super::text::shorten(line))))?
        } else {
            line.parse::<Ipv4Addr>()
                .map(u32::from)
                .map_err(|_| bad(format!("malformed IPv4 address {:?}", super::text::shorten(line))))?
        };
        keys.push(key);
    }
    Ok(keys)
}
