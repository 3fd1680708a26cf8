//! `fibkit.Table`: a routing table of both families, for columns that mix
//! IPv4 and IPv6 addresses: one call parses the strings and answers every
//! address in its family's FIB (`fibkit::compiled::CompiledTable`).

use std::path::PathBuf;

use numpy::PyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use fibkit::compiled::{CompileOptions, CompiledFamily, CompiledTable};
use fibkit::load::{self, AnyAddr, RouteTable};
use fibkit::{Address, NextHop, NO_ROUTE};

use crate::text::Text;
use crate::{convert, files, load_table};

/// A routing table of both families compiled by fibkit's engines.
///
/// `Table.load(path, engines=None, nexthops=None, strict=False)` builds
/// from a table file with IPv4 and IPv6 routes (each family gets the first
/// of `engines` that serves it: d18r and poptrie18 by default);
/// `Table.default()` from the embedded default table. `lookup_batch(addrs)`
/// answers strings of either family in one call; `values[hops]` gives the
/// routes' values.
#[pyclass(frozen, name = "Table", module = "fibkit")]
pub struct PyTable {
    table: CompiledTable,
    /// The largest next-hop index the routes use.
    last: NextHop,
    /// The compiled FIB file it was opened from, when pickles name it.
    pickle_path: Option<PathBuf>,
}

impl PyTable {
    fn build(py: Python<'_>, routes: RouteTable, engines: Option<Vec<String>>, prefixes: bool) -> PyResult<Self> {
        let last = routes.v4.iter().map(|(_, hop)| hop).chain(routes.v6.iter().map(|(_, hop)| hop)).max();
        let options = CompileOptions { engines: engines.unwrap_or_default(), prefixes };
        let table = py.detach(|| CompiledTable::build(routes, &options));
        let table = table.map_err(|error| PyValueError::new_err(error.to_string()))?;
        Ok(PyTable { table, last: last.unwrap_or(NO_ROUTE), pickle_path: None })
    }

    /// The table of an opened compiled FIB file (pickled by `path` if given).
    pub fn from_table(table: CompiledTable, path: Option<PathBuf>) -> Self {
        let last = table.values.max_index();
        PyTable { table, last, pickle_path: path }
    }
}

/// The answers of `keys` in `family` (all no route without one), each
/// written to `out[positions[i]]`, and its matched prefix to
/// `matched[positions[i]]` when `matched` is given.
fn answer<A: Address>(
    family: Option<&CompiledFamily<A>>,
    keys: &[A],
    positions: &[usize],
    out: &mut [NextHop],
    mut matched: Option<&mut [Option<String>]>,
) {
    let Some(family) = family else { return };
    let mut answers = vec![NO_ROUTE; keys.len()];
    family.lookup_batch(keys, &mut answers);
    for (&position, answer) in positions.iter().zip(answers) {
        if let Some(slot) = out.get_mut(position) {
            *slot = family.next_hop(answer);
        }
        if let Some(slot) = matched.as_deref_mut().and_then(|matched| matched.get_mut(position)) {
            *slot = family.route(answer).map(|(prefix, _)| prefix.to_string());
        }
    }
}

#[pymethods]
impl PyTable {
    /// Builds from a table file (ipasn, `PREFIX VALUE` text, range CSV,
    /// MRT; gz or bz2) with routes of either family or both.
    #[staticmethod]
    /// With `prefixes`, lookups can also answer the matched prefix (the
    /// FIBs are then built over route numbers, and are larger).
    #[pyo3(signature = (path, engines = None, nexthops = None, strict = false, prefixes = false))]
    fn load(
        py: Python<'_>,
        path: PathBuf,
        engines: Option<Vec<String>>,
        nexthops: Option<&Bound<'_, PyAny>>,
        strict: bool,
        prefixes: bool,
    ) -> PyResult<Self> {
        let mapping = convert::mapping(nexthops)?;
        let routes = py.detach(|| load_table(path, mapping, strict))?;
        Self::build(py, routes, engines, prefixes)
    }

    /// Builds from the embedded default table (synthetic, IPv4).
    #[staticmethod]
    #[pyo3(signature = (engines = None, nexthops = None, prefixes = false))]
    fn default(
        py: Python<'_>,
        engines: Option<Vec<String>>,
        nexthops: Option<&Bound<'_, PyAny>>,
        prefixes: bool,
    ) -> PyResult<Self> {
        let mapping = convert::mapping(nexthops)?;
        let routes = py.detach(|| load::synthetic::default_table(mapping));
        Self::build(py, routes, engines, prefixes)
    }

    /// Next-hop indexes (0: no route) of address strings of either family
    /// in one array: a list of `str` (parsed with the GIL held), a numpy
    /// `str` or `bytes` array or a pyarrow string array (parsed with the
    /// GIL released), or any other sequence of `str`; the lookups release
    /// the GIL. An element that is
    /// no address is a `ValueError` naming its index, its text and why.
    /// With `prefixes` (for a table loaded with `prefixes=True`), returns
    /// the next hops and an object array of the matched prefixes
    /// (`"10.0.0.0/8"`, None where no route).
    #[pyo3(signature = (addrs, prefixes = false))]
    fn lookup_batch<'py>(
        &self,
        py: Python<'py>,
        addrs: &Bound<'py, PyAny>,
        prefixes: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let v4 = self.table.v4.as_ref().map(CompiledFamily::has_prefixes);
        let v6 = self.table.v6.as_ref().map(CompiledFamily::has_prefixes);
        if prefixes && [v4, v6].contains(&Some(false)) {
            return Err(PyValueError::new_err("prefixes=True needs a table loaded with prefixes=True"));
        }
        let text = match Text::new(addrs) {
            Ok(text) => text,
            // The package's conversion: a list, or a string array's characters.
            Err(_) => Text::new(&py.import("fibkit")?.getattr("_text")?.call1((addrs,))?)?,
        };
        let (mut keys4, mut positions4, mut keys6, mut positions6) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        text.parse(0, |index, addr| match addr {
            AnyAddr::V4(addr) => {
                keys4.push(addr);
                positions4.push(index);
            }
            AnyAddr::V6(addr) => {
                keys6.push(addr);
                positions6.push(index);
            }
        })?;
        let mut out = vec![NO_ROUTE; text.len()];
        let mut matched = if prefixes { vec![None; text.len()] } else { Vec::new() };
        py.detach(|| {
            let table = &self.table;
            answer(table.family_fib::<u32>(), &keys4, &positions4, &mut out, prefixes.then_some(&mut matched[..]));
            answer(table.family_fib::<u128>(), &keys6, &positions6, &mut out, prefixes.then_some(&mut matched[..]));
        });
        let hops = PyArray1::from_vec(py, out).into_any();
        if !prefixes {
            return Ok(hops);
        }
        let matched = matched.into_iter().map(|prefix| Ok(prefix.into_pyobject(py)?.unbind()));
        let matched: Vec<Py<PyAny>> = matched.collect::<PyResult<_>>()?;
        Ok((hops, PyArray1::from_vec(py, matched)).into_pyobject(py)?.into_any())
    }

    /// The route value next-hop index `index` stands for (int or address
    /// string), or None for 0 and, with `nexthops`, for every index.
    fn value<'py>(&self, py: Python<'py>, index: NextHop) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.table.values.label(index).map(|label| convert::label_object(py, label)).transpose()
    }

    /// `values[i]`: what next-hop index `i` stands for, as `Fib.values`.
    #[getter]
    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::values(py, &self.table.values, self.last)
    }

    /// Writes both families' FIBs and the values to `path` as a compiled
    /// FIB file (replacing it whole), for `fibkit.open` and `fibkit lookup`.
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let file = self.table.to_file().map_err(files::save_error)?;
        files::write(py, file, &path)
    }

    /// Pickling: the compiled FIB file's bytes (out of band with protocol
    /// 5), or its path (opened with `pickle_path`).
    fn __reduce_ex__<'py>(&self, py: Python<'py>, protocol: u32) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let pickled = match &self.pickle_path {
            Some(path) => files::Pickled::Path(path.clone()),
            None => {
                let file = self.table.to_file().map_err(files::save_error)?;
                files::Pickled::Bytes(py.detach(|| file.to_bytes()))
            }
        };
        pickled.reduce(py, "Table", protocol)
    }

    /// The engines answering IPv4 and IPv6 (None for a family without routes).
    #[getter]
    fn engines(&self) -> (Option<String>, Option<String>) {
        let v4 = self.table.family_fib::<u32>().map(|family| family.fib().name().to_string());
        let v6 = self.table.family_fib::<u128>().map(|family| family.fib().name().to_string());
        (v4, v6)
    }

    fn __repr__(&self) -> String {
        let (v4, v6) = self.engines();
        let none = || "no routes".to_string();
        let (v4, v6) = (v4.unwrap_or_else(none), v6.unwrap_or_else(none));
        format!("<fibkit.Table {}: IPv4 {v4}, IPv6 {v6}>", self.table.name)
    }
}
