//! gzip and bzip2 input, detected by magic bytes and decompressed whole (or
//! as a stream: [`decompressing_reader`]).
//!
//! What can happen after the last byte of a compressed stream, and what the
//! loaders make of it:
//!
//! | the input | [`Decompressed`] | the loaders |
//! |---|---|---|
//! | one or more complete members (`cat a.gz b.gz`) | all members' bytes | read them |
//! | complete members, then zero bytes (tape or block padding) | the members' bytes | read them, silently (as gzip(1) does) |
//! | complete members, then other bytes | the members' bytes, [`Decompressed::trailing`] | a warning naming the offset (an error with `strict`) |
//! | a member cut short (a truncated download) | the bytes up to the cut, [`Decompressed::cut`] | complete lines or records kept, with a warning |
//! | a member with a bad checksum or invalid data | an error | an error |

use std::borrow::Cow;
use std::fmt;
use std::io::{self, BufRead, Read};
use std::path::Path;

use super::{LoadError, Position};

/// Compression detected from a file's first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compression {
    None,
    Gzip,
    Bzip2,
}

impl Compression {
    fn detect(bytes: &[u8]) -> Self {
        match bytes {
            [0x1f, 0x8b, ..] => Compression::Gzip,
            [b'B', b'Z', b'h', b'1'..=b'9', ..] => Compression::Bzip2,
            _ => Compression::None,
        }
    }
}

/// `input` as it reads decompressed: gzip and bzip2 (every member of a
/// multi-member file) detected by their magic bytes, anything else as it
/// is. For input read as a stream (`fibkit lookup`'s addresses), where
/// `decompress` reads a whole file; a damaged or truncated stream is a
/// read error there.
///
/// # Errors
/// A read error while looking at the first bytes.
pub fn decompressing_reader<R: BufRead + Send + 'static>(mut input: R) -> io::Result<Box<dyn Read + Send>> {
    Ok(match Compression::detect(input.fill_buf()?) {
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(input)),
        Compression::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(input)),
        Compression::None => Box::new(input),
    })
}

/// A file's bytes after decompression.
pub(crate) struct Decompressed<'a> {
    /// The decompressed bytes (the input itself when it was not compressed).
    pub(crate) bytes: Cow<'a, [u8]>,
    /// `gzip` or `bzip2`, or `None` for input that was not compressed.
    pub(crate) compression: Option<&'static str>,
    /// Set when the compressed stream ended before its end of stream mark:
    /// `bytes` then hold what was decompressed up to there.
    pub(crate) cut: Option<Cut>,
    /// Bytes after the last complete member that are neither another member
    /// nor zero padding: not read.
    pub(crate) trailing: Option<Trailing>,
}

/// A compressed stream that ends early (a truncated download, `head -c`).
#[derive(Clone, Debug)]
pub(crate) struct Cut {
    /// `gzip` or `bzip2`.
    pub(crate) compression: &'static str,
    /// Bytes decompressed before the stream broke off.
    pub(crate) decompressed: u64,
    /// What the decompressor said.
    pub(crate) detail: String,
}

impl fmt::Display for Cut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the {} stream is truncated after {} decompressed bytes ({})",
            self.compression, self.decompressed, self.detail
        )
    }
}

/// Bytes after the end of a complete compressed stream.
#[derive(Clone, Debug)]
pub(crate) struct Trailing {
    /// `gzip` or `bzip2`.
    pub(crate) compression: &'static str,
    /// Offset of the first such byte in the file as stored.
    pub(crate) offset: u64,
    /// How many there are.
    pub(crate) len: usize,
}

impl Trailing {
    /// The warning about these bytes, naming the file and offset.
    pub(crate) fn message(&self) -> String {
        format!(
            "{} bytes after the end of the {} stream are not {} data and are not read",
            self.len, self.compression, self.compression
        )
    }

    /// Where they start.
    pub(crate) fn position(&self) -> Position {
        Position::Offset(self.offset)
    }
}

/// Decompresses gzip or bzip2 content (detected by magic bytes), member by
/// member; other bytes are passed through. A stream that is cut off keeps
/// what was decompressed before the cut ([`Decompressed::cut`] says so); a
/// corrupt stream (bad checksum, invalid data) is an error, since what came
/// out of it cannot be trusted. See the [module docs](self) for bytes after
/// the last member.
pub(crate) fn decompress<'a>(file: &Path, raw: &'a [u8]) -> Result<Decompressed<'a>, LoadError> {
    let compression = Compression::detect(raw);
    let name = match compression {
        Compression::Gzip => "gzip",
        Compression::Bzip2 => "bzip2",
        Compression::None => {
            return Ok(Decompressed { bytes: Cow::Borrowed(raw), compression: None, cut: None, trailing: None })
        }
    };
    let mut out = Vec::with_capacity(raw.len().saturating_mul(4));
    let mut rest = raw;
    let decompressed = |out: &mut Vec<u8>, cut: Option<Cut>, trailing: Option<Trailing>| {
        Ok(Decompressed { bytes: Cow::Owned(std::mem::take(out)), compression: Some(name), cut, trailing })
    };
    loop {
        // The bufread decoders take from `rest` exactly the member's bytes.
        let outcome = match compression {
            Compression::Gzip => flate2::bufread::GzDecoder::new(&mut rest).read_to_end(&mut out),
            _ => bzip2::bufread::BzDecoder::new(&mut rest).read_to_end(&mut out),
        };
        match outcome {
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => {
                let cut = Cut { compression: name, decompressed: out.len() as u64, detail: error.to_string() };
                return decompressed(&mut out, Some(cut), None);
            }
            Err(error) => {
                return Err(LoadError::new(
                    file,
                    Position::Offset((raw.len() - rest.len()) as u64),
                    format!("{name} data is corrupt after {} decompressed bytes: {error}", out.len()),
                ))
            }
        }
        if Compression::detect(rest) == compression {
            continue;
        }
        if rest.iter().all(|&b| b == 0) {
            return decompressed(&mut out, None, None);
        }
        let trailing = Trailing { compression: name, offset: (raw.len() - rest.len()) as u64, len: rest.len() };
        return decompressed(&mut out, None, Some(trailing));
    }
}
