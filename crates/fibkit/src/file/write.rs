//! Writing a compiled FIB file: sections are gathered, then laid out after
//! the header and section table at multiples of 64 bytes.

use std::io::Write;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use super::{
    family_prefix, header_checksum, FileError, PayloadHasher, Problem, ALIGN, ENTRY_BYTES, HEADER_BYTES,
    HEADER_CHECKSUM_AT, MAGIC, NAME_BYTES, PAYLOAD_CHECKSUM_AT, VERSION,
};
use crate::addr::Address;
use crate::mem::Plain;

/// A compiled FIB file being put together.
#[derive(Debug, Default)]
pub struct FileWriter {
    sections: Vec<(String, Vec<u8>)>,
    /// The source table's modification time (Unix seconds; 0: unknown).
    pub source_modified: u64,
    /// The time to record as the file's creation (Unix seconds); `None`:
    /// now. Fixed, two writes of one table give the same bytes.
    pub created: Option<u64>,
}

impl FileWriter {
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
        assert!(
            !name.is_empty() && name.len() <= NAME_BYTES && name.bytes().all(|byte| byte.is_ascii_graphic()),
            "bad section name {name:?}"
        );
        assert!(self.sections.iter().all(|(taken, _)| taken != name), "section {name:?} written twice");
        self.sections.push((name.to_string(), bytes));
    }

    /// Adds section `name` holding `elements`.
    pub fn array<T: Plain>(&mut self, name: &str, elements: &[T]) {
        let mut bytes = Vec::new();
        T::write_le(elements, &mut bytes);
        self.section(name, bytes);
    }

    /// The sections of family `A` (names prefixed `v4.` or `v6.`).
    pub fn family<A: Address>(&mut self) -> FamilyWriter<'_> {
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
    /// holding them all a second time.
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
        for (_, bytes) in &self.sections {
            let offset = end.next_multiple_of(ALIGN);
            offsets.push(offset);
            end = offset + bytes.len();
        }
        Layout { table_end, offsets, end }
    }

    /// The payload after the section table, in order: each section's
    /// padding (zeros, fewer than [`ALIGN`]), then its bytes.
    fn each_part(&self, layout: &Layout, mut part: impl FnMut(&[u8]) -> std::io::Result<()>) -> std::io::Result<()> {
        const ZEROS: [u8; ALIGN] = [0; ALIGN];
        let mut at = layout.table_end;
        for ((_, bytes), &offset) in self.sections.iter().zip(&layout.offsets) {
            part(&ZEROS[..offset - at])?;
            part(bytes)?;
            at = offset + bytes.len();
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
        for (index, ((name, bytes), &offset)) in self.sections.iter().zip(&layout.offsets).enumerate() {
            let entry = &mut file[HEADER_BYTES + ENTRY_BYTES * index..][..ENTRY_BYTES];
            entry[..name.len()].copy_from_slice(name.as_bytes());
            entry[16..24].copy_from_slice(&(offset as u64).to_le_bytes());
            entry[24..32].copy_from_slice(&(bytes.len() as u64).to_le_bytes());
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
pub struct FamilyWriter<'a> {
    file: &'a mut FileWriter,
    prefix: &'static str,
}

impl FamilyWriter<'_> {
    /// Adds the family's section `name` holding `elements`.
    pub fn array<T: Plain>(&mut self, name: &str, elements: &[T]) {
        self.file.array(&format!("{}{name}", self.prefix), elements);
    }

    /// Adds the family's section `name` holding `bytes`.
    pub fn bytes(&mut self, name: &str, bytes: Vec<u8>) {
        self.file.section(&format!("{}{name}", self.prefix), bytes);
    }

    /// Writes the engine's parameters (`params`).
    pub fn params(&mut self, params: &[u64]) {
        self.array("params", params);
    }
}
