//! Opening a compiled FIB file: the header, both checksums and the section
//! table are checked before any section is handed out, and sections are
//! handed out as arrays read in place from the mapped pages.

use std::any::Any;
use std::path::Path;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

use super::{
    family_prefix, header_checksum, is_fib_file, payload_checksum, FileError, Problem, ALIGN, ENTRY_BYTES,
    HEADER_BYTES, HEADER_CHECKSUM_AT, NAME_BYTES, PAYLOAD_CHECKSUM_AT, VERSION,
};
use crate::addr::Address;
use crate::mem::{LookupArray, Plain};

/// A section of the table.
#[derive(Clone, Debug)]
struct Section {
    name: String,
    offset: u64,
    length: u64,
}

/// How a section has been handed out (each at most once as an array,
/// which may be written through).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Use {
    Free,
    Shared,
    Array,
}

/// A block of 64 bytes, for copies of files kept in memory aligned as a
/// mapping would be.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Block([u8; ALIGN]);

/// Memory holding a file's bytes when it is not mapped (bytes given in
/// memory, or a file too short to map).
struct Owned {
    start: NonNull<Block>,
    blocks: usize,
}

// SAFETY: `Owned` owns its blocks as a `Box<[Block]>` would.
unsafe impl Send for Owned {}
// SAFETY: `Owned` hands out nothing itself; the arrays over it are `Sync`
// by their own elements.
unsafe impl Sync for Owned {}

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: the blocks came from `Box::into_raw` of this many blocks.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.start.as_ptr(), self.blocks)) });
    }
}

/// An opened compiled FIB file: its checked header and section table, and
/// the memory its arrays are read from.
pub struct FibFile {
    name: String,
    /// Keeps the memory alive (a `memmap2::MmapMut` or an [`Owned`]).
    owner: Arc<dyn Any + Send + Sync>,
    base: NonNull<u8>,
    len: usize,
    sections: Vec<Section>,
    /// Where the payload (the checksummed sections) starts.
    payload_start: usize,
    uses: Mutex<Vec<Use>>,
    /// When the file was written (Unix seconds).
    pub created: u64,
    /// The source table's modification time (Unix seconds; 0: unknown).
    pub source_modified: u64,
}

// SAFETY: the memory is only read through `&self` (and handed out as
// arrays of `Send + Sync` elements, each range once).
unsafe impl Send for FibFile {}
// SAFETY: as above.
unsafe impl Sync for FibFile {}

impl FibFile {
    /// Maps and checks the file at `path` (header, checksums, section
    /// table). The mapping is private: pages are shared with every other
    /// process mapping the file until one writes to them, which lookups
    /// never do.
    ///
    /// The file must not change in place while it is mapped: truncated
    /// under its readers, their next read of a lost page kills the process
    /// (SIGBUS); rewritten in place (`cp new.fib old.fib`), the answers
    /// change with no check. Replace a file by renaming a new one over it,
    /// as [`super::FileWriter::write`] and `fibkit compile` do: readers of
    /// the old file keep its bytes until they open the new one.
    ///
    /// # Errors
    /// [`Problem::NotRegularFile`] for a device, a FIFO, a socket or a
    /// folder (never read); [`Problem::Io`] if it cannot be read; [`Problem::NotFibFile`],
    /// [`Problem::NewerVersion`], [`Problem::Length`],
    /// [`Problem::Checksum`], [`Problem::Entry`] for a file that is not a
    /// sound FIB file; [`Problem::BigEndian`] on a big-endian machine.
    pub fn open(path: &Path) -> Result<Self, FileError> {
        let file = Self::open_unverified(path)?;
        file.verify_payload()?;
        Ok(file)
    }

    /// [`FibFile::open`] but for the payload checksum, which is left to
    /// [`FibFile::verify_payload`]: to run beside the engines' checks of
    /// the sections (which take untrusted bytes anyway) rather than before.
    ///
    /// # Errors
    /// As [`FibFile::open`], but for the payload checksum.
    pub fn open_unverified(path: &Path) -> Result<Self, FileError> {
        let name = path.display().to_string();
        let io = |error: std::io::Error| FileError::new(name.clone(), None, Problem::Io(error.to_string()));
        let file = std::fs::File::open(path).map_err(io)?;
        let metadata = file.metadata().map_err(io)?;
        // A device or a FIFO has no length to trust (`/dev/zero` reads
        // without end): only a regular file is read.
        super::kind::regular(&metadata.file_type()).map_err(|problem| FileError::new(name.clone(), None, problem))?;
        let length = metadata.len();
        if length < HEADER_BYTES as u64 {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut std::io::Read::take(&file, length), &mut bytes).map_err(io)?;
            return Self::from_bytes(&bytes, &name);
        }
        // SAFETY: a private (copy-on-write) mapping: writes never reach the
        // file, and FIB files are replaced by renaming, never rewritten in
        // place (`FileWriter::write`), so the bytes do not change under us.
        // Pages are faulted in as the checks read them, by both threads of
        // `CompiledTable::open` at once (faster than populating the whole
        // mapping first, measured), read-only: they stay the page cache's.
        let mut map = unsafe { memmap2::MmapOptions::new().map_copy(&file) }.map_err(io)?;
        let (base, len) =
            (NonNull::new(map.as_mut_ptr()).ok_or_else(|| io(std::io::Error::other("null mapping")))?, map.len());
        Self::checked(name, Arc::new(map), base, len)
    }

    /// Checks a FIB file held in memory (`bytes`, called `name` in errors),
    /// copied into memory of its own.
    ///
    /// # Errors
    /// As [`FibFile::open`], but for [`Problem::Io`].
    pub fn from_bytes(bytes: &[u8], name: &str) -> Result<Self, FileError> {
        let blocks: Box<[Block]> = vec![Block([0; ALIGN]); bytes.len().div_ceil(ALIGN)].into_boxed_slice();
        let count = blocks.len();
        let start = NonNull::new(Box::into_raw(blocks).cast::<Block>()).unwrap_or(NonNull::dangling());
        let owned = Owned { start, blocks: count };
        let base = start.cast::<u8>();
        // SAFETY: the blocks hold at least `bytes.len()` bytes and are ours.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), base.as_ptr(), bytes.len()) };
        let file = Self::checked(name.to_string(), Arc::new(owned), base, bytes.len())?;
        file.verify_payload()?;
        Ok(file)
    }

    /// Checks the payload checksum.
    ///
    /// # Errors
    /// [`Problem::Checksum`] naming the payload if the bytes after the
    /// section table are not those written.
    pub fn verify_payload(&self) -> Result<(), FileError> {
        let bytes = self.bytes();
        let stored =
            u64::from_le_bytes(bytes[PAYLOAD_CHECKSUM_AT..PAYLOAD_CHECKSUM_AT + 8].try_into().unwrap_or_default());
        let computed = payload_checksum(&bytes[self.payload_start..]);
        if stored != computed {
            return Err(
                self.error(Some(PAYLOAD_CHECKSUM_AT as u64), Problem::Checksum { what: "payload", stored, computed })
            );
        }
        Ok(())
    }

    /// The file's bytes.
    fn bytes(&self) -> &[u8] {
        // SAFETY: `base` points at `len` bytes that `owner` keeps alive.
        unsafe { std::slice::from_raw_parts(self.base.as_ptr(), self.len) }
    }

    fn checked(
        name: String,
        owner: Arc<dyn Any + Send + Sync>,
        base: NonNull<u8>,
        len: usize,
    ) -> Result<Self, FileError> {
        let uses = Mutex::new(Vec::new());
        let mut file = FibFile {
            name,
            owner,
            base,
            len,
            sections: Vec::new(),
            payload_start: 0,
            uses,
            created: 0,
            source_modified: 0,
        };
        if cfg!(target_endian = "big") {
            return Err(file.error(None, Problem::BigEndian));
        }
        (file.sections, file.payload_start, file.created, file.source_modified) = file.parse()?;
        file.uses = Mutex::new(vec![Use::Free; file.sections.len()]);
        Ok(file)
    }

    /// `problem` at `offset` of this file.
    pub fn error(&self, offset: Option<u64>, problem: Problem) -> FileError {
        FileError::new(self.name.clone(), offset, problem)
    }

    /// Checks the header, the checksums and the section table.
    /// Returns the sections, where the payload starts, the creation time
    /// and the source's time.
    fn parse(&self) -> Result<(Vec<Section>, usize, u64, u64), FileError> {
        let bytes = self.bytes();
        if !is_fib_file(bytes) {
            return Err(self.error(Some(0), Problem::NotFibFile));
        }
        let actual = bytes.len() as u64;
        let Some(header) = bytes.first_chunk::<HEADER_BYTES>() else {
            return Err(self.error(None, Problem::Length { expected: HEADER_BYTES as u64, actual }));
        };
        let word = |at: usize| u32::from_le_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]]);
        let long = |at: usize| u64::from(word(at)) | u64::from(word(at + 4)) << 32;
        match word(8) {
            0 => return Err(self.error(Some(8), Problem::BadVersion)),
            found if found > VERSION => return Err(self.error(Some(8), Problem::NewerVersion { found })),
            _ => {}
        }
        let expected = long(16);
        if expected != actual {
            return Err(self.error(Some(16), Problem::Length { expected, actual }));
        }
        let count = word(12) as usize;
        let table_end = HEADER_BYTES as u64 + ENTRY_BYTES as u64 * count as u64;
        if table_end > actual {
            return Err(self.error(Some(12), Problem::Length { expected: table_end, actual }));
        }
        let table_end = table_end as usize;
        let (stored, computed) = (long(HEADER_CHECKSUM_AT), header_checksum(&bytes[..table_end]));
        if stored != computed {
            return Err(
                self.error(Some(HEADER_CHECKSUM_AT as u64), Problem::Checksum { what: "header", stored, computed })
            );
        }
        let payload_start = table_end;
        let (created, source_modified) = (long(40), long(48));
        let mut sections: Vec<Section> = Vec::with_capacity(count);
        let mut end = payload_start as u64;
        for index in 0..count {
            let at = HEADER_BYTES + ENTRY_BYTES * index;
            let entry = &bytes[at..at + ENTRY_BYTES];
            let fail = |field: usize, problem| self.error(Some((at + field) as u64), Problem::Entry { index, problem });
            let name = &entry[..NAME_BYTES];
            let used = name.iter().position(|&byte| byte == 0).unwrap_or(NAME_BYTES);
            if used == 0 || !name[..used].iter().all(u8::is_ascii_graphic) || name[used..].iter().any(|&byte| byte != 0)
            {
                return Err(fail(0, "the name is not ASCII padded with zero bytes"));
            }
            let name = String::from_utf8_lossy(&name[..used]).into_owned();
            if sections.iter().any(|section| section.name == name) {
                return Err(fail(0, "the name is taken by an earlier section"));
            }
            let field = |from: usize| u64::from_le_bytes(entry[from..from + 8].try_into().unwrap_or_default());
            let (offset, length) = (field(16), field(24));
            if offset % ALIGN as u64 != 0 {
                return Err(fail(16, "the offset is not a multiple of 64"));
            }
            if offset < end {
                return Err(fail(16, "the section starts before the end of the table or of the section before it"));
            }
            match offset.checked_add(length) {
                Some(section_end) if section_end <= actual => end = section_end,
                _ => return Err(fail(24, "the section ends past the end of the file")),
            }
            sections.push(Section { name, offset, length });
        }
        Ok((sections, payload_start, created, source_modified))
    }

    /// The names of the sections, in file order.
    pub fn section_names(&self) -> impl Iterator<Item = &str> {
        self.sections.iter().map(|section| section.name.as_str())
    }

    /// The length of section `name` in bytes.
    pub fn section_length(&self, name: &str) -> Option<u64> {
        self.sections.iter().find(|section| section.name == name).map(|section| section.length)
    }

    /// Where section `name` starts in the file.
    pub fn section_offset(&self, name: &str) -> Option<u64> {
        self.sections.iter().find(|section| section.name == name).map(|section| section.offset)
    }

    /// The section called `name` and its position, marked as handed out
    /// `as_use`.
    fn take(&self, name: &str, as_use: Use) -> Result<Option<&Section>, FileError> {
        let Some(position) = self.sections.iter().position(|section| section.name == name) else { return Ok(None) };
        let mut uses = self.uses.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let section = &self.sections[position];
        match (uses[position], as_use) {
            (Use::Free, _) | (Use::Shared, Use::Shared) => uses[position] = as_use,
            _ => {
                let problem = "read twice (a reader asked for it again)".to_string();
                return Err(self.error(Some(section.offset), Problem::Section { name: name.to_string(), problem }));
            }
        }
        Ok(Some(section))
    }

    /// The bytes of section `name`, if the file has it.
    ///
    /// # Errors
    /// [`Problem::Section`] if it was handed out as an array.
    pub fn section(&self, name: &str) -> Result<Option<&[u8]>, FileError> {
        let Some(section) = self.take(name, Use::Shared)? else { return Ok(None) };
        Ok(Some(&self.bytes()[section.offset as usize..][..section.length as usize]))
    }

    /// Section `name` as an array of `T`, read in place.
    ///
    /// # Errors
    /// [`Problem::MissingSection`]; [`Problem::SectionLength`] if its
    /// length is not a multiple of `T`'s size; [`Problem::Section`] if it
    /// was handed out before.
    pub fn array<T: Plain>(&self, name: &str) -> Result<LookupArray<T>, FileError> {
        let Some(section) = self.take(name, Use::Array)? else {
            return Err(self.error(None, Problem::MissingSection(name.to_string())));
        };
        let size = size_of::<T>();
        if section.length % size as u64 != 0 || section.offset % align_of::<T>() as u64 != 0 {
            let problem = Problem::SectionLength { name: name.to_string(), length: section.length, element: size };
            return Err(self.error(Some(section.offset), problem));
        }
        // SAFETY: the section lies inside the file's memory (checked by
        // `parse`), its offset is a multiple of 64 from a base aligned to at
        // least 64 (a page or a `Block`), so aligned for `T`; it is handed
        // out once (`take`), and `owner` keeps the memory mapped and
        // writable (private mapping, or our own blocks).
        unsafe {
            let start = NonNull::new_unchecked(self.base.as_ptr().add(section.offset as usize).cast::<T>());
            Ok(LookupArray::mapped(Arc::clone(&self.owner), start, section.length as usize / size))
        }
    }

    /// The error for element `index` (of `size` bytes) of section `name`
    /// holding `value`.
    pub fn element_error(&self, name: &str, size: usize, index: usize, value: u64, problem: &'static str) -> FileError {
        let offset = self.section_offset(name).map(|offset| offset + (index * size) as u64);
        self.error(offset, Problem::Element { section: name.to_string(), index: index as u64, value, problem })
    }

    /// The sections of family `A`, if the file has its FIB.
    pub fn family<A: Address>(&self) -> Option<FamilyFile<'_>> {
        let prefix = family_prefix::<A>();
        self.sections
            .iter()
            .any(|section| section.name == format!("{prefix}engine"))
            .then_some(FamilyFile { file: self, prefix })
    }

    /// The file's name, as errors give it.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// The sections of one family's FIB in a file.
#[derive(Clone, Copy)]
pub struct FamilyFile<'a> {
    file: &'a FibFile,
    prefix: &'static str,
}

impl<'a> FamilyFile<'a> {
    /// The file.
    pub fn file(&self) -> &'a FibFile {
        self.file
    }

    /// The full name of the family's section `name`.
    pub fn name(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// The family's engine name.
    ///
    /// # Errors
    /// [`Problem::Section`] if it is not a short ASCII name.
    pub fn engine(&self) -> Result<String, FileError> {
        let name = self.name("engine");
        let bytes = self.file.section(&name)?.unwrap_or_default();
        match std::str::from_utf8(bytes) {
            Ok(engine)
                if !engine.is_empty() && engine.len() <= 32 && engine.bytes().all(|byte| byte.is_ascii_graphic()) =>
            {
                Ok(engine.to_string())
            }
            _ => Err(self.file.error(None, Problem::Section { name, problem: "not an engine name".to_string() })),
        }
    }

    /// The engine's parameters: exactly `count` of them.
    ///
    /// # Errors
    /// [`Problem::MissingSection`], or [`Problem::SectionLength`] if the
    /// section does not hold `count` `u64`s.
    pub fn params(&self, count: usize) -> Result<Vec<u64>, FileError> {
        let name = self.name("params");
        let bytes =
            self.file.section(&name)?.ok_or_else(|| self.file.error(None, Problem::MissingSection(name.clone())))?;
        if bytes.len() != count * 8 {
            let problem = Problem::Section {
                name,
                problem: format!("{} bytes, expected {count} parameters of 8 bytes", bytes.len()),
            };
            return Err(self.file.error(None, problem));
        }
        Ok(bytes.chunks_exact(8).map(|word| u64::from_le_bytes(word.try_into().unwrap_or_default())).collect())
    }

    /// The family's section `name` as an array ([`FibFile::array`]).
    ///
    /// # Errors
    /// As [`FibFile::array`].
    pub fn array<T: Plain>(&self, name: &str) -> Result<LookupArray<T>, FileError> {
        self.file.array(&self.name(name))
    }

    /// The error for element `index` of the family's section `name` (of
    /// `T`s) holding `value`.
    pub fn bad<T>(&self, name: &str, index: usize, value: u64, problem: &'static str) -> FileError {
        self.file.element_error(&self.name(name), size_of::<T>(), index, value, problem)
    }

    /// The error for a parameter out of its range.
    pub fn bad_param(&self, index: usize, value: u64, problem: &'static str) -> FileError {
        self.bad::<u64>("params", index, value, problem)
    }
}
