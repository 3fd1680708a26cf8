//! A compiled table in a compiled FIB file ([`crate::file`]): the values,
//! the table's name, and per family the engine's name, its sections, and
//! with prefixes the routes:
//!
//! | section | elements | what |
//! |---|---|---|
//! | `v4.route_addr` | `u32` (`u128` for `v6.`) | network address of route `n` at index `n - 1`; ascending `(address, length)`, no route twice |
//! | `v4.route_len` | `u8` | its prefix length |
//! | `v4.route_hop` | `u32` | its next hop |

use std::path::Path;

use super::{CompiledFamily, CompiledTable, Routes, Values};
use crate::addr::{Address, Prefix};
use crate::file::{FamilyFile, FibFile, FileError, FileWriter, Problem};
use crate::registry;
use crate::NextHop;

/// Section of the table's name.
const SOURCE: &str = "source";

/// A table's IPv4 and IPv6 FIBs.
type Families = (Option<CompiledFamily<u32>>, Option<CompiledFamily<u128>>);

/// A file holding the table's name and values, for the families to add.
fn file_of<'a>(name: &str, values: &'a Values) -> FileWriter<'a> {
    let mut file = FileWriter::new();
    file.section(SOURCE, name.as_bytes().to_vec());
    values.save(&mut file);
    file
}

impl<A: Address> CompiledFamily<A> {
    /// A compiled FIB file of this family alone, with `values` (what the
    /// next hops stand for) and the table's `name`.
    ///
    /// # Errors
    /// [`Problem::NotSavable`] if its engine has no file format.
    pub fn to_file<'a>(&'a self, name: &str, values: &'a Values) -> Result<FileWriter<'a>, Problem> {
        let mut file = file_of(name, values);
        self.save(&mut file)?;
        Ok(file)
    }

    /// Writes the engine's name, its structure and the routes.
    fn save<'a>(&'a self, file: &mut FileWriter<'a>) -> Result<(), Problem> {
        let mut family = file.family::<A>();
        family.bytes("engine", self.fib.name().as_bytes().to_vec());
        self.fib.save(&mut family).map_err(|problem| match problem {
            Problem::NotSavable { engine, .. } => registry::not_savable(&engine),
            problem => problem,
        })?;
        if let Some(routes) = &self.routes {
            family.array("route_addr", &routes.addrs);
            family.array("route_len", &routes.lengths);
            family.array("route_hop", &routes.next_hops);
        }
        Ok(())
    }

    /// Opens the family's engine and routes, whose next hops go up to
    /// `max_next_hop`.
    fn open(family: &FamilyFile<'_>, max_next_hop: NextHop) -> Result<Self, FileError> {
        let file = family.file();
        let engine = registry::resolve::<A>(&family.engine()?).map_err(|unknown| file.error(None, unknown.into()))?;
        let with_routes = file.section_names().any(|name| name == family.name("route_addr"));
        if !with_routes {
            return Ok(CompiledFamily { fib: engine.open(family, max_next_hop)?, routes: None });
        }
        let routes = Routes {
            addrs: family.array("route_addr")?,
            lengths: family.array("route_len")?,
            next_hops: family.array("route_hop")?,
        };
        let count = routes.len();
        if routes.lengths.len() != count || routes.next_hops.len() != count {
            let problem =
                format!("{count} routes but {} lengths and {} next hops", routes.lengths.len(), routes.next_hops.len());
            return Err(file.error(None, Problem::Section { name: family.name("route_len"), problem }));
        }
        for index in 0..count {
            let (addr, prefix_len) = (routes.addrs[index], routes.lengths[index]);
            if Prefix::new(addr, prefix_len).is_err() {
                return Err(family.bad::<u8>(
                    "route_len",
                    index,
                    prefix_len.into(),
                    "not a prefix length of the address",
                ));
            }
            if routes.next_hops[index] > max_next_hop {
                let value = routes.next_hops[index].into();
                return Err(family.bad::<NextHop>("route_hop", index, value, "next hop beyond the file's values"));
            }
        }
        if let Some(index) = routes.first_out_of_order() {
            let value = routes.lengths[index].into();
            let problem = "a route not after the one before it (routes are in address order, each once)";
            return Err(family.bad::<u8>("route_len", index, value, problem));
        }
        let numbers = NextHop::try_from(count)
            .map_err(|_| family.bad::<NextHop>("route_hop", 0, count as u64, "too many routes"))?;
        Ok(CompiledFamily { fib: engine.open(family, numbers)?, routes: Some(routes) })
    }
}

impl CompiledTable {
    /// The table as a compiled FIB file, to [`FileWriter::write`] (set
    /// its `source_modified` first, if known).
    ///
    /// # Errors
    /// [`Problem::NotSavable`] if a family's engine has no file format;
    /// [`Problem::NoFib`] if the table has neither family's FIB (no route:
    /// the file would be refused when opened).
    pub fn to_file(&self) -> Result<FileWriter<'_>, Problem> {
        if self.v4.is_none() && self.v6.is_none() {
            return Err(Problem::NoFib);
        }
        let mut file = file_of(&self.name, &self.values);
        if let Some(v4) = &self.v4 {
            v4.save(&mut file)?;
        }
        if let Some(v6) = &self.v6 {
            v6.save(&mut file)?;
        }
        Ok(file)
    }

    /// Maps the compiled FIB file at `path` and opens its table.
    ///
    /// # Errors
    /// [`FileError`]: the file's own problems ([`FibFile::open`]), an
    /// engine the registry lacks, or a section an engine's opener refuses.
    pub fn open(path: &Path) -> Result<Self, FileError> {
        let file = FibFile::open_unverified(path)?;
        let max_next_hop = Values::max_index_in(&file)?;
        // The payload checksum and the values' checks beside the engines'
        // (a damaged payload is reported as such, whatever the others found),
        // on a thread of their own while this one checks the engines.
        // Not `rayon::join` (this thread waiting on the pool): opens then
        // took the one-thread time in some runs and not in others; a rayon
        // scope with this thread working was as uneven for DXR. A thread of
        // its own gave the same time every run, Poptrie's files faster and
        // the smallest DXR files a little slower (figures in
        // docs/decisions.md). Where no thread can start, the checks run
        // one after the other.
        let values = || file.verify_payload().and_then(|()| Values::open(&file));
        let (values, families) = std::thread::scope(|scope| {
            let thread = std::thread::Builder::new().spawn_scoped(scope, values).ok();
            let families = Self::families(&file, max_next_hop);
            let values = thread
                .map_or_else(values, |thread| thread.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
            (values, families)
        });
        Self::assemble(&file, values?, families?)
    }

    /// Opens the table of a FIB file.
    ///
    /// # Errors
    /// As [`CompiledTable::open`].
    pub fn from_file(file: &FibFile) -> Result<Self, FileError> {
        let values = Values::open(file)?;
        let families = Self::families(file, values.max_index())?;
        Self::assemble(file, values, families)
    }

    /// Both families' FIBs in `file`, whose next hops go up to `max_next_hop`.
    fn families(file: &FibFile, max_next_hop: NextHop) -> Result<Families, FileError> {
        let v4 = file.family::<u32>().map(|family| CompiledFamily::open(&family, max_next_hop)).transpose()?;
        let v6 = file.family::<u128>().map(|family| CompiledFamily::open(&family, max_next_hop)).transpose()?;
        Ok((v4, v6))
    }

    /// The table of `file` from its values and families; a file with
    /// neither family's FIB is refused ([`Problem::NoFib`]), not opened to
    /// answer "no route" for everything.
    fn assemble(file: &FibFile, values: Values, (v4, v6): Families) -> Result<Self, FileError> {
        if v4.is_none() && v6.is_none() {
            return Err(file.error(None, Problem::NoFib));
        }
        let name = file.section(SOURCE)?.map(|bytes| String::from_utf8_lossy(bytes).into_owned()).unwrap_or_default();
        Ok(CompiledTable { name, v4, v6, values })
    }
}
