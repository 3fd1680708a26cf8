//! Compiled FIB files: built lookup structures saved once and mapped by
//! every process that serves them, without rebuilding or copying.
//!
//! A file is a fixed header, a table of named sections, and the sections:
//! plain little-endian arrays, each at a multiple of 64 bytes, so that a
//! mapped file's arrays are aligned for any element and an engine reads
//! them in place ([`crate::mem::LookupArray::mapped`]).
//!
//! ```text
//!  0        64                64 + 32 n   (rounded up to 64)
//!  +--------+-----------------+-----------+----------+-----------+--
//!  | header | n section entries           | section  | section   | ...
//!  +--------+-----------------+-----------+----------+-----------+--
//!  |<-- header checksum: 0 .. 64 + 32 n ->|
//!                                         |<-- payload checksum: the rest,
//!                                              padding included
//! ```
//!
//! Both checksums are XXH3-64: several times faster than CRC-32 (see
//! docs/decisions.md), so that opening stays far below building.
//!
//! # Header (64 bytes, little-endian)
//!
//! | offset | size | field | meaning |
//! |---|---|---|---|
//! | 0 | 8 | `magic` | `\x89FIBKIT\n` ([`MAGIC`]) |
//! | 8 | 4 | `version` | format version ([`VERSION`]); a newer one is refused |
//! | 12 | 4 | `sections` | number of section entries |
//! | 16 | 8 | `length` | the file's length in bytes |
//! | 24 | 8 | `header_checksum` | XXH3-64 of bytes `0 .. 64 + 32 n`, this field read as zero |
//! | 32 | 8 | `payload_checksum` | XXH3-64 of the bytes after the section table (from `64 + 32 n`, padding included) to `length` |
//! | 40 | 8 | `created` | when the file was written (Unix seconds) |
//! | 48 | 8 | `source_modified` | the source table's modification time (Unix seconds, 0: unknown) |
//! | 56 | 8 | reserved | zero |
//!
//! # Section entry (32 bytes)
//!
//! | offset | size | field | meaning |
//! |---|---|---|---|
//! | 0 | 16 | `name` | ASCII, padded with zero bytes (`v4.direct`, `values.text`) |
//! | 16 | 8 | `offset` | where the section starts: a multiple of 64, after the table and after the previous section's end |
//! | 24 | 8 | `length` | its length in bytes |
//!
//! # Sections
//!
//! | name | what |
//! |---|---|
//! | `source` | the source table's name (UTF-8) |
//! | `values.mapping` | `u64` pair: 0 (distinct values) or 1 (`value % n + 1`), then `n` |
//! | `values.offsets`, `values.text` | distinct values: the text of next hop `i` is `text[offsets[i - 1] .. offsets[i]]` |
//! | `v4.engine`, `v6.engine` | a family's engine (its registry name); absent: no routes of that family |
//! | `v4.params` | `u64`s the engine defines (counts, widths), then its arrays `v4.*` |
//! | `v4.route_addr`, `v4.route_len`, `v4.route_hop` | with prefixes: route `n`'s prefix and next hop at index `n - 1`, in ascending `(address, length)` order (refused otherwise) |
//!
//! A mapped file must not change under its readers: fibkit replaces a file
//! by writing a new one and renaming it over the old ([`FileWriter::write`]),
//! which leaves processes that mapped the old one reading the old bytes;
//! overwriting a mapped file in place (`cp new.fib old.fib`) is not safe,
//! as for every memory-mapped format.
//!
//! Each engine documents its own sections beside its layout (`file.rs` in
//! its folder), and checks on opening every index its lookup follows, so a
//! damaged or hostile file is an error ([`FileError`]) naming the file, the
//! offset and the problem, never a panic or a read out of bounds.

pub(crate) mod kind;
mod read;
mod scan;
mod write;

pub use read::{FamilyFile, FibFile};
pub use scan::largest_references_and_hops;
pub use write::{FamilyWriter, FileWriter};

use std::fmt;

use crate::error::UnknownEngine;

/// The first eight bytes of every compiled FIB file.
pub const MAGIC: [u8; 8] = *b"\x89FIBKIT\n";

/// The format version this fibkit writes and the newest it reads.
pub const VERSION: u32 = 1;

/// Bytes of the fixed header.
const HEADER_BYTES: usize = 64;
/// Bytes of a section entry.
const ENTRY_BYTES: usize = 32;
/// Bytes of a section name.
const NAME_BYTES: usize = 16;
/// Alignment of every section's offset.
const ALIGN: usize = 64;
/// Where the header checksum sits.
const HEADER_CHECKSUM_AT: usize = 24;
/// Where the payload checksum sits.
const PAYLOAD_CHECKSUM_AT: usize = 32;

/// Whether `bytes` start like a compiled FIB file (its magic): the one
/// sniffing of the kind, for bytes in memory and for files
/// ([`is_fib_file_at`]).
pub fn is_fib_file(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// Whether the file at `path` starts like a compiled FIB file
/// ([`is_fib_file`] on its first bytes); a file that cannot be read, or
/// is shorter than the magic, is not one.
pub fn is_fib_file_at(path: &std::path::Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; MAGIC.len()];
    std::fs::File::open(path).and_then(|mut file| file.read_exact(&mut magic)).is_ok_and(|()| is_fib_file(&magic))
}

/// What is wrong with a compiled FIB file, or why a FIB cannot be saved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    /// The file could not be read or written.
    #[error("{0}")]
    Io(String),
    /// The path names a device, a FIFO, a socket or a folder (the kind).
    #[error("{0}, not a regular file: compiled FIB files are read from and written to regular files")]
    NotRegularFile(&'static str),
    /// The magic is missing.
    #[error("not a compiled FIB file (it does not start with fibkit's magic)")]
    NotFibFile,
    /// Written by a newer fibkit.
    #[error("format version {found} is newer than this fibkit reads (up to {VERSION}); open it with a newer fibkit or compile the table again")]
    NewerVersion {
        /// The file's version.
        found: u32,
    },
    /// Version 0 is no version.
    #[error("format version 0 is not a version")]
    BadVersion,
    /// The file is shorter (or longer) than its header says.
    #[error("the header says {expected} bytes but the file has {actual}")]
    Length {
        /// The header's length.
        expected: u64,
        /// The file's.
        actual: u64,
    },
    /// A checksum does not match the bytes.
    #[error("{what} checksum {stored:#018x} does not match the bytes ({computed:#018x}): the file is damaged")]
    Checksum {
        /// `header` or `payload`.
        what: &'static str,
        /// The checksum the file holds.
        stored: u64,
        /// The checksum of its bytes.
        computed: u64,
    },
    /// A section entry is malformed.
    #[error("section entry {index}: {problem}")]
    Entry {
        /// The entry's position in the table.
        index: usize,
        /// What is wrong.
        problem: &'static str,
    },
    /// A section an engine needs is missing.
    #[error("no section {0:?}")]
    MissingSection(String),
    /// A section's length or alignment does not fit its elements.
    #[error("section {name:?}: {length} bytes is not a whole number of {element}-byte elements")]
    SectionLength {
        /// The section.
        name: String,
        /// Its length.
        length: u64,
        /// The element size it should hold.
        element: usize,
    },
    /// A section does not hold what its reader expects.
    #[error("section {name:?}: {problem}")]
    Section {
        /// The section.
        name: String,
        /// What is wrong.
        problem: String,
    },
    /// An element holds a value the lookup cannot follow.
    #[error("{section}[{index}] = {value:#x}: {problem}")]
    Element {
        /// The section.
        section: String,
        /// The element's index.
        index: u64,
        /// Its value.
        value: u64,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// The file holds values but neither family's FIB: opened, it would
    /// answer "no route" for every address. Refused when opened, and not
    /// written (a table without routes: the loaders refuse one, the C
    /// library can build one).
    #[error("holds no FIB of either family (a table without routes): not written, and refused when opened")]
    NoFib,
    /// The engine named in the file is not in the registry.
    #[error(transparent)]
    UnknownEngine(Box<UnknownEngine>),
    /// The engine has no file format.
    #[error("engine {engine} cannot be saved to a FIB file{}", engines_that_can(savable))]
    NotSavable {
        /// The engine.
        engine: String,
        /// The engines that can, comma separated: empty where the error
        /// arises below the registry ([`Problem::not_savable`]), filled in
        /// by it ([`crate::registry::not_savable`]).
        savable: String,
    },
    /// A live FIB keeps its default route aside from its structure
    /// ([`crate::live::WithDefault`]): a file holds it in the structure,
    /// so compile the table from its RIB instead.
    #[error("{engine} keeps its default route aside from its structure while it is updated in place; compile the table from its RIB to save it")]
    DefaultAside {
        /// The engine.
        engine: String,
    },
    /// FIB files are little-endian; a big-endian machine can neither write
    /// nor map them.
    #[error("compiled FIB files are little-endian; this machine is big-endian")]
    BigEndian,
}

/// An error about a compiled FIB file: the file, the byte offset where
/// the problem is (when it is at one), and the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct FileError {
    /// The file's name (or what the bytes came from).
    pub file: String,
    /// The byte offset of the problem.
    pub offset: Option<u64>,
    /// What is wrong.
    pub problem: Problem,
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(offset) => write!(f, "{}: offset {offset}: {}", self.file, self.problem),
            None => write!(f, "{}: {}", self.file, self.problem),
        }
    }
}

impl FileError {
    /// `problem` in `file`, at `offset` if known.
    pub fn new(file: impl Into<String>, offset: Option<u64>, problem: Problem) -> Self {
        FileError { file: file.into(), offset, problem }
    }
}

/// The checksum of a payload.
fn payload_checksum(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

/// [`payload_checksum`] over parts fed in turn (the writer's, which never
/// holds the payload whole): the same XXH3-64.
type PayloadHasher = xxhash_rust::xxh3::Xxh3;

/// The checksum of a header and section table, its checksum field read as
/// zero.
fn header_checksum(table: &[u8]) -> u64 {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hasher.update(&table[..HEADER_CHECKSUM_AT]);
    hasher.update(&[0; 8]);
    hasher.update(&table[HEADER_CHECKSUM_AT + 8..]);
    hasher.digest()
}

/// Recomputes both checksums of a FIB file's bytes, so that bytes changed
/// on purpose still check: for tests and fuzzing, which feed the openers
/// damaged files that the checksums would otherwise turn away first. Does
/// nothing to bytes too short for a header or a section table.
pub fn reseal(bytes: &mut [u8]) {
    let Some(count) = bytes.get(12..16) else { return };
    let count = u32::from_le_bytes([count[0], count[1], count[2], count[3]]) as usize;
    let table_end = HEADER_BYTES + ENTRY_BYTES * count;
    if table_end > bytes.len() {
        return;
    }
    let payload = payload_checksum(&bytes[table_end..]);
    bytes[PAYLOAD_CHECKSUM_AT..PAYLOAD_CHECKSUM_AT + 8].copy_from_slice(&payload.to_le_bytes());
    let header = header_checksum(&bytes[..table_end]);
    bytes[HEADER_CHECKSUM_AT..HEADER_CHECKSUM_AT + 8].copy_from_slice(&header.to_le_bytes());
}

/// The section prefix of family `A`'s names (`v4.` or `v6.`).
fn family_prefix<A: crate::Address>() -> &'static str {
    match A::FAMILY {
        crate::Family::Ipv4 => "v4.",
        crate::Family::Ipv6 => "v6.",
    }
}

impl From<UnknownEngine> for Problem {
    fn from(unknown: UnknownEngine) -> Self {
        Problem::UnknownEngine(Box::new(unknown))
    }
}

impl Problem {
    /// The error of engine `engine`, which has no file format: the name
    /// alone, as the engine knows it. The registry's
    /// [`crate::registry::not_savable`] adds the engines that can be saved.
    pub fn not_savable(engine: &str) -> Problem {
        Problem::NotSavable { engine: engine.to_string(), savable: String::new() }
    }
}

/// The end of [`Problem::NotSavable`]'s message: the engines that can be
/// saved, when known.
fn engines_that_can(savable: &str) -> String {
    if savable.is_empty() {
        String::new()
    } else {
        format!(" (engines that can: {savable})")
    }
}

#[cfg(test)]
mod tests;
