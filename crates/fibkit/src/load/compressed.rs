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
//!
//! # Bounds on what a file inflates to
//!
//! A small compressed file can inflate to gigabytes (a 2.9 MB gzip of
//! comment lines inflates to 3 GB), and [`decompress`] holds what it
//! inflates. It stops, with an error naming the file and the decompressed
//! byte offset, before it holds
//!
//! - more than 64 MiB of comment and blank lines (`#` or `;` first, or
//!   only blanks) and more than 16 times the bytes of the other lines: what
//!   it holds stays in proportion to the lines a loader keeps (MRT data,
//!   which has no lines, is not measured so);
//! - more than 1 GiB and more than 100 times the file's compressed size
//!   (real tables inflate 4 to 15 times), whatever the lines hold.
//!
//! `FIBKIT_MAX_DECOMPRESSED=BYTES` in the environment replaces both bounds
//! with one absolute cap (for an unusually compressible table). Memory that
//! runs out before a bound is an "out of memory" error naming the file,
//! never a corrupt stream or an abort.

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
    let mut out = Vec::new();
    let mut watch = Watch::new(raw.len());
    let mut rest = raw;
    let decompressed = |out: &mut Vec<u8>, cut: Option<Cut>, trailing: Option<Trailing>| {
        Ok(Decompressed { bytes: Cow::Owned(std::mem::take(out)), compression: Some(name), cut, trailing })
    };
    loop {
        // The bufread decoders take from `rest` exactly the member's bytes.
        let outcome = match compression {
            Compression::Gzip => inflate(&mut flate2::bufread::GzDecoder::new(&mut rest), &mut out, &mut watch),
            _ => inflate(&mut bzip2::bufread::BzDecoder::new(&mut rest), &mut out, &mut watch),
        };
        let outcome = match outcome {
            Ok(()) => Ok(()),
            Err(Stop::Read(error)) => Err(error),
            Err(Stop::Bound(message)) => {
                return Err(LoadError::new(file, Position::Offset(out.len() as u64), format!("{name} data {message}")))
            }
            Err(Stop::OutOfMemory) => {
                return Err(LoadError::new(
                    file,
                    Position::Offset(out.len() as u64),
                    format!("out of memory holding the {name} data decompressed ({} bytes so far)", out.len()),
                ))
            }
        };
        match outcome {
            Ok(()) => {}
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

/// Bytes inflated a read.
const CHUNK: usize = 1 << 20;
/// Comment and blank lines held before [`FILLER_RATIO`] applies.
const FILLER_FLOOR: u64 = 64 << 20;
/// Comment and blank bytes held at most for each byte of other lines.
const FILLER_RATIO: u64 = 16;
/// Bytes inflated before [`INFLATION_RATIO`] applies.
const INFLATION_FLOOR: u64 = 1 << 30;
/// Bytes inflated at most for each compressed byte.
const INFLATION_RATIO: u64 = 100;
/// The environment variable that replaces the bounds with one cap.
const MAX_DECOMPRESSED: &str = "FIBKIT_MAX_DECOMPRESSED";

/// Why inflating stopped early.
enum Stop {
    /// The decoder's error (a cut or corrupt stream).
    Read(io::Error),
    /// A bound of the [module docs](self), described.
    Bound(String),
    /// Memory for the bytes could not be had.
    OutOfMemory,
}

/// Inflates `decoder`'s member onto `out`, a chunk at a time, holding
/// `watch`'s bounds.
fn inflate(decoder: &mut dyn Read, out: &mut Vec<u8>, watch: &mut Watch) -> Result<(), Stop> {
    loop {
        let start = out.len();
        out.try_reserve(CHUNK).map_err(|_| Stop::OutOfMemory)?;
        out.resize(start + CHUNK, 0);
        let read = decoder.read(&mut out[start..]);
        let read = match read {
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => 0,
            Err(error) if error.kind() == io::ErrorKind::OutOfMemory => {
                out.truncate(start);
                return Err(Stop::OutOfMemory);
            }
            Err(error) => {
                out.truncate(start);
                return Err(Stop::Read(error));
            }
        };
        out.truncate(start + read);
        if read == 0 {
            return Ok(());
        }
        watch.check(out, start)?;
    }
}

/// What a line is, as far as it has been read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LineKind {
    /// Only blanks so far.
    Blank,
    /// A comment (`#` or `;` first).
    Comment,
    /// Anything else.
    Data,
}

/// The bounds of the [module docs](self), and what has been inflated.
struct Watch {
    /// The file's compressed size.
    compressed: u64,
    /// `FIBKIT_MAX_DECOMPRESSED`, when set.
    cap: Option<u64>,
    /// [`FILLER_FLOOR`] and [`INFLATION_FLOOR`] (smaller in the tests).
    floors: (u64, u64),
    /// Bytes of complete comment and blank lines, and of other lines.
    filler: u64,
    data: u64,
    /// The line being read: its kind and its bytes so far.
    kind: LineKind,
    len: u64,
}

impl Watch {
    fn new(compressed: usize) -> Self {
        let cap = std::env::var(MAX_DECOMPRESSED).ok().and_then(|value| value.trim().parse().ok());
        let floors = (FILLER_FLOOR, INFLATION_FLOOR);
        Watch { compressed: compressed as u64, cap, floors, filler: 0, data: 0, kind: LineKind::Blank, len: 0 }
    }

    /// Counts the lines of `out[start..]` and checks the bounds.
    fn check(&mut self, out: &[u8], start: usize) -> Result<(), Stop> {
        self.scan(&out[start..]);
        let total = out.len() as u64;
        if let Some(cap) = self.cap {
            if total > cap {
                return Err(Stop::Bound(format!("inflates past {MAX_DECOMPRESSED}={cap} bytes")));
            }
            return Ok(());
        }
        let filler = self.filler + if self.kind == LineKind::Data { 0 } else { self.len };
        if filler > self.floors.0.max(FILLER_RATIO.saturating_mul(self.data)) && !super::mrt::is_mrt(out) {
            return Err(Stop::Bound(format!(
                "inflates to {filler} bytes of comment and blank lines beside {} bytes of other lines: refused \
                 rather than held in memory (a decompression bomb? {MAX_DECOMPRESSED}=BYTES sets another bound)",
                self.data
            )));
        }
        let ratio = self.floors.1.max(INFLATION_RATIO.saturating_mul(self.compressed));
        if total > ratio {
            return Err(Stop::Bound(format!(
                "inflates past {total} bytes, over {INFLATION_RATIO} times the file's {} bytes: refused rather \
                 than held in memory (a decompression bomb? {MAX_DECOMPRESSED}=BYTES sets another bound)",
                self.compressed
            )));
        }
        Ok(())
    }

    /// Sorts the bytes of `bytes` into comment or blank lines and others.
    fn scan(&mut self, mut bytes: &[u8]) {
        while let Some((&first, after)) = bytes.split_first() {
            if self.kind != LineKind::Blank {
                match bytes.iter().position(|&byte| byte == b'\n') {
                    Some(at) => {
                        self.len += at as u64 + 1;
                        bytes = &bytes[at + 1..];
                        self.end_line();
                    }
                    None => {
                        self.len += bytes.len() as u64;
                        return;
                    }
                }
                continue;
            }
            self.len += 1;
            bytes = after;
            match first {
                b'\n' => self.end_line(),
                b' ' | b'\t' | b'\r' => {}
                b'#' | b';' => self.kind = LineKind::Comment,
                _ => self.kind = LineKind::Data,
            }
        }
    }

    fn end_line(&mut self) {
        if self.kind == LineKind::Data {
            self.data += self.len;
        } else {
            self.filler += self.len;
        }
        (self.kind, self.len) = (LineKind::Blank, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `text` to a watch of a file of `compressed` bytes with floors
    /// of 1,000 bytes, in chunks of 7 (lines cross chunks); the error if one
    /// stops it.
    fn watched(text: &str, compressed: usize) -> Result<(), String> {
        let mut watch = Watch::new(compressed);
        (watch.cap, watch.floors) = (None, (1000, 1000));
        let mut out = Vec::new();
        for chunk in text.as_bytes().chunks(7) {
            let start = out.len();
            out.extend_from_slice(chunk);
            watch.check(&out, start).map_err(|stop| match stop {
                Stop::Bound(message) => message,
                _ => "another stop".to_string(),
            })?;
        }
        Ok(())
    }

    #[test]
    fn comments_are_bounded_by_the_other_lines_and_everything_by_the_file_size() {
        let comments = "# comment\n; comment\n  \t\r\n\n".repeat(100);
        let error = watched(&comments, 1_000_000).unwrap_err();
        assert!(error.contains("bytes of comment and blank lines beside 0 bytes of other lines"), "{error}");
        // With routes between them, in proportion, the comments are held.
        let table = "# comment\n10.0.0.0/8 64500\n".repeat(1000);
        assert_eq!(watched(&table, 1_000_000), Ok(()));
        // A long comment line without its end counts as it goes.
        assert!(watched(&format!("10.0.0.0/8 1\n#{}", "x".repeat(2000)), 1_000_000).is_err());
        // Any line, past the floor and 100 times the file's size.
        let routes = "10.0.0.0/8 64500\n".repeat(100);
        assert_eq!(watched(&routes, 17), Ok(()));
        let error = watched(&routes, 16).unwrap_err();
        assert!(error.starts_with("inflates past ") && error.contains("over 100 times the file's 16 bytes"), "{error}");
    }
}
