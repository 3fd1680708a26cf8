//! Writing a compiled FIB file: sections are gathered, then laid out after
//! the header and section table at multiples of 64 bytes.
//!
//! A section of elements borrows them (or keeps them) and turns them into
//! little-endian bytes a chunk at a time as the file is written, so that
//! writing a structure's file holds the structure once, not a second time
//! as its sections' bytes. They are read twice, hashed and then written:
//! elements changed in between make a file whose payload checksum refuses
//! it when it is opened, never a file that opens with torn contents.

use std::io::Write;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use super::{
    family_prefix, header_checksum, FileError, PayloadHasher, Problem, ALIGN, ENTRY_BYTES, HEADER_BYTES,
    HEADER_CHECKSUM_AT, MAGIC, NAME_BYTES, PAYLOAD_CHECKSUM_AT, VERSION,
};
use crate::addr::Address;
use crate::mem::Plain;

/// A compiled FIB file being put together, borrowing for `'a` the arrays
/// its sections hold.
#[derive(Debug, Default)]
pub struct FileWriter<'a> {
    sections: Vec<(String, Section<'a>)>,
    /// The source table's modification time (Unix seconds; 0: unknown).
    pub source_modified: u64,
    /// The time to record as the file's creation (Unix seconds); `None`:
    /// now. Fixed, two writes of one table give the same bytes.
    pub created: Option<u64>,
}

/// A section's content: elements, borrowed or owned (bytes are elements
/// too).
type Section<'a> = Box<dyn Elements + Send + Sync + 'a>;

impl std::fmt::Debug for dyn Elements + Send + Sync + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} bytes", self.bytes())
    }
}

/// Elements, borrowed or owned, written as their little-endian bytes.
trait Elements {
    /// Their length in bytes.
    fn bytes(&self) -> usize;
    /// Hands `part` their bytes, a chunk at a time.
    fn each_part(&self, part: &mut dyn FnMut(&[u8]) -> std::io::Result<()>) -> std::io::Result<()>;
}

/// How many bytes of elements are turned into little-endian bytes at a time.
const CHUNK_BYTES: usize = 1 << 16;

/// Elements borrowed (`&[T]`) or owned (a vector, a lookup array).
impl<T: Plain, S: std::ops::Deref<Target = [T]>> Elements for S {
    fn bytes(&self) -> usize {
        std::mem::size_of_val(&**self)
    }

    fn each_part(&self, part: &mut dyn FnMut(&[u8]) -> std::io::Result<()>) -> std::io::Result<()> {
        let mut bytes = Vec::with_capacity(CHUNK_BYTES);
        for chunk in self.chunks((CHUNK_BYTES / std::mem::size_of::<T>()).max(1)) {
            bytes.clear();
            T::write_le(chunk, &mut bytes);
            part(&bytes)?;
        }
        Ok(())
    }
}

impl<'a> FileWriter<'a> {
    /// An empty file.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds section `name` holding `bytes`.
    ///
    /// # Panics
    /// If the name is empty, longer than 16 bytes, not ASCII, or taken:
    /// names are fibkit's own constants.
    pub fn section(&mut self, name: &str, bytes: Vec<u8>) {
        self.owned_array(name, bytes);
    }

    /// Adds section `name` holding `elements`, borrowed until the file is
    /// written.
    ///
    /// # Panics
    /// As [`FileWriter::section`].
    pub fn array<T: Plain>(&mut self, name: &str, elements: &'a [T]) {
        self.owned_array(name, elements);
    }

    /// Adds section `name` holding `elements`, which it keeps until the
    /// file is written (a vector, a lookup array: a structure made only to
    /// be written).
    ///
    /// # Panics
    /// As [`FileWriter::section`].
    pub fn owned_array<T: Plain, S>(&mut self, name: &str, elements: S)
    where
        S: std::ops::Deref<Target = [T]> + Send + Sync + 'a,
    {
        assert!(
            !name.is_empty() && name.len() <= NAME_BYTES && name.bytes().all(|byte| byte.is_ascii_graphic()),
            "bad section name {name:?}"
        );
        assert!(self.sections.iter().all(|(taken, _)| taken != name), "section {name:?} written twice");
        self.sections.push((name.to_string(), Box::new(elements)));
    }

    /// The sections of family `A` (names prefixed `v4.` or `v6.`).
    pub fn family<A: Address>(&mut self) -> FamilyWriter<'_, 'a> {
        FamilyWriter { file: self, prefix: family_prefix::<A>() }
    }

    /// The file's length in bytes.
    #[allow(clippy::len_without_is_empty)] // a file is never empty: it has a header
    pub fn len(&self) -> u64 {
        self.layout().end as u64
    }

    /// The file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.layout().end);
        self.write_to(&mut bytes).expect("a vector takes every byte");
        bytes
    }

    /// Writes the file's bytes to `out`, section by section, without
    /// holding them all.
    ///
    /// # Errors
    /// What `out` returns.
    pub fn write_to(&self, out: &mut impl Write) -> std::io::Result<()> {
        let layout = self.layout();
        // The payload's checksum is in the header, ahead of the payload: a
        // first pass hashes the sections and their padding as laid out.
        let mut payload = PayloadHasher::new();
        self.each_part(&layout, |part| {
            payload.update(part);
            Ok(())
        })?;
        out.write_all(&self.header(&layout, payload.digest()))?;
        self.each_part(&layout, |part| out.write_all(part))
    }

    /// Where each section goes.
    fn layout(&self) -> Layout {
        let table_end = HEADER_BYTES + ENTRY_BYTES * self.sections.len();
        let mut offsets = Vec::with_capacity(self.sections.len());
        let mut end = table_end;
        for (_, section) in &self.sections {
            let offset = end.next_multiple_of(ALIGN);
            offsets.push(offset);
            end = offset + section.bytes();
        }
        Layout { table_end, offsets, end }
    }

    /// The payload after the section table, in order: each section's
    /// padding (zeros, fewer than [`ALIGN`]), then its bytes.
    fn each_part(&self, layout: &Layout, mut part: impl FnMut(&[u8]) -> std::io::Result<()>) -> std::io::Result<()> {
        const ZEROS: [u8; ALIGN] = [0; ALIGN];
        let mut at = layout.table_end;
        for ((_, section), &offset) in self.sections.iter().zip(&layout.offsets) {
            part(&ZEROS[..offset - at])?;
            section.each_part(&mut part)?;
            at = offset + section.bytes();
        }
        Ok(())
    }

    /// The header and the section table, sealed.
    fn header(&self, layout: &Layout, payload: u64) -> Vec<u8> {
        let mut file = vec![0u8; layout.table_end];
        let now = || SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_secs());
        let created = self.created.unwrap_or_else(now);
        file[..8].copy_from_slice(&MAGIC);
        file[8..12].copy_from_slice(&VERSION.to_le_bytes());
        file[12..16].copy_from_slice(&(self.sections.len() as u32).to_le_bytes());
        file[16..24].copy_from_slice(&(layout.end as u64).to_le_bytes());
        file[PAYLOAD_CHECKSUM_AT..PAYLOAD_CHECKSUM_AT + 8].copy_from_slice(&payload.to_le_bytes());
        file[40..48].copy_from_slice(&created.to_le_bytes());
        file[48..56].copy_from_slice(&self.source_modified.to_le_bytes());
        for (index, ((name, section), &offset)) in self.sections.iter().zip(&layout.offsets).enumerate() {
            let entry = &mut file[HEADER_BYTES + ENTRY_BYTES * index..][..ENTRY_BYTES];
            entry[..name.len()].copy_from_slice(name.as_bytes());
            entry[16..24].copy_from_slice(&(offset as u64).to_le_bytes());
            entry[24..32].copy_from_slice(&(section.bytes() as u64).to_le_bytes());
        }
        let checksum = header_checksum(&file);
        file[HEADER_CHECKSUM_AT..HEADER_CHECKSUM_AT + 8].copy_from_slice(&checksum.to_le_bytes());
        file
    }

    /// Writes the file to `path`: to a temporary file beside it, renamed
    /// over `path` once complete, so that a process mapping the old file
    /// keeps reading the old bytes. A symbolic link at `path` is followed
    /// (the file it names is replaced, the link stays).
    ///
    /// # Errors
    /// [`Problem::NotRegularFile`] when `path` (or what its link names) is
    /// a device, a FIFO, a socket or a folder, which are never replaced;
    /// [`Problem::Io`] naming the path when it cannot be written.
    pub fn write(&self, path: &Path) -> Result<(), FileError> {
        let name = path.display().to_string();
        let path = &super::kind::write_target(path).map_err(|problem| FileError::new(name.clone(), None, problem))?;
        let io = |error: std::io::Error| FileError::new(name.clone(), None, Problem::Io(error.to_string()));
        let directory = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let mut builder = tempfile::Builder::new();
        // Readable as any file the user writes (the umask applies), not
        // only by the user as temporary files are.
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
        let mut temporary = builder.prefix(".fibkit-").tempfile_in(directory).map_err(io)?;
        let mut out = std::io::BufWriter::new(&mut temporary);
        self.write_to(&mut out).and_then(|()| out.flush()).map_err(io)?;
        drop(out);
        temporary.persist(path).map_err(|error| io(error.error))?;
        Ok(())
    }
}

/// Where a file's sections go: the section table's end, each section's
/// offset, and the file's end.
struct Layout {
    table_end: usize,
    offsets: Vec<usize>,
    end: usize,
}

/// The sections of one family, named `v4.NAME` or `v6.NAME`.
pub struct FamilyWriter<'w, 'a> {
    file: &'w mut FileWriter<'a>,
    prefix: &'static str,
}

impl<'a> FamilyWriter<'_, 'a> {
    /// Adds the family's section `name` holding `elements`, borrowed until
    /// the file is written.
    pub fn array<T: Plain>(&mut self, name: &str, elements: &'a [T]) {
        self.file.array(&format!("{}{name}", self.prefix), elements);
    }

    /// Adds the family's section `name` holding `elements`, which it keeps
    /// until the file is written.
    pub fn owned_array<T: Plain, S>(&mut self, name: &str, elements: S)
    where
        S: std::ops::Deref<Target = [T]> + Send + Sync + 'a,
    {
        self.file.owned_array(&format!("{}{name}", self.prefix), elements);
    }

    /// Adds the family's section `name` holding `bytes`.
    pub fn bytes(&mut self, name: &str, bytes: Vec<u8>) {
        self.file.section(&format!("{}{name}", self.prefix), bytes);
    }

    /// Writes the engine's parameters (`params`).
    pub fn params(&mut self, params: &[u64]) {
        self.owned_array("params", params.to_vec());
    }
}
