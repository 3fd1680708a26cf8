//! Compiled FIB files, opened once per process and path: Polars calls a
//! plugin once per chunk (per morsel when streaming), on several threads,
//! and each call names the table by its path. A file replaced on disk
//! (another modification time, size or inode) is opened again, as
//! `fibkit.open_once` does in the bindings; calls still holding the old
//! table finish on it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use fibkit::compiled::CompiledTable;
use fibkit::nexthop::{Label, Mapping};
use fibkit::NextHop;

/// What a table's routes answer when no field is asked for.
pub enum Plain {
    /// Every value is a number (an origin ASN): per next hop, index `h`.
    Numbers(Vec<Option<u64>>),
    /// Some value is an address: the values' texts.
    Texts,
    /// Values folded to next hops (`--nexthops N`): the next hop itself.
    NextHops,
}

/// An opened table and what its plain answers are.
pub struct Table {
    /// The FIBs, values and records.
    pub compiled: CompiledTable,
    /// The answers without fields.
    pub plain: Plain,
}

impl Table {
    fn new(compiled: CompiledTable) -> Self {
        let values = &compiled.values;
        let plain = match values.mapping() {
            Mapping::Modulo(_) => Plain::NextHops,
            Mapping::Distinct => {
                let numbers: Option<Vec<Option<u64>>> = (0..=values.max_index())
                    .map(|hop: NextHop| match values.label(hop) {
                        None => Some(None),
                        Some(Label::Number(number)) => Some(Some(number)),
                        Some(_) => None,
                    })
                    .collect();
                numbers.map_or(Plain::Texts, Plain::Numbers)
            }
        };
        Table { compiled, plain }
    }
}

/// A file's identity: a replaced file differs in one of them.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
    inode: u64,
}

impl Stamp {
    fn of(path: &Path) -> std::io::Result<Self> {
        let meta = std::fs::metadata(path)?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&meta);
        #[cfg(not(unix))]
        let inode = 0;
        Ok(Stamp { modified: meta.modified().ok(), len: meta.len(), inode })
    }
}

/// The tables opened so far (a few: one an expression's path).
static OPENED: Mutex<Vec<(PathBuf, Stamp, Arc<Table>)>> = Mutex::new(Vec::new());

/// The table of the compiled FIB file at `path`, opened (mapped) on the
/// first call and whenever the file was replaced since.
///
/// # Errors
/// The file's path and why it cannot be opened: missing, not a compiled
/// FIB file, or damaged (the opener checks every section).
pub fn open(path: &Path) -> Result<Arc<Table>, String> {
    let stamp = Stamp::of(path).map_err(|error| format!("{}: {error}", path.display()))?;
    // A poisoned lock only means another call panicked (and was caught):
    // the list itself is always whole.
    let mut opened = OPENED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, _, table)) = opened.iter().find(|(known, known_stamp, _)| known == path && *known_stamp == stamp) {
        return Ok(Arc::clone(table));
    }
    let compiled = CompiledTable::open(path).map_err(|error| error.to_string())?;
    let table = Arc::new(Table::new(compiled));
    opened.retain(|(known, _, _)| known != path);
    opened.push((path.to_path_buf(), stamp, Arc::clone(&table)));
    Ok(table)
}
