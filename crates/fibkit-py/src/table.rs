//! `fibkit.Table`: a routing table of both families, for columns that mix
//! IPv4 and IPv6 addresses: one call parses the strings and answers every
//! address in its family's FIB (`fibkit::compiled::CompiledTable`).

use std::path::PathBuf;

use std::net::{Ipv4Addr, Ipv6Addr};

use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::{PyMemoryError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

use fibkit::compiled::{CompileOptions, CompiledFamily, CompiledTable};
use fibkit::fib::Calibrations;
use fibkit::load::{self, AnyAddr, RouteTable};
use fibkit::{Address, BuildError, Family, NextHop, Prefix, NO_ROUTE};

use fibkit::records::FieldSpec;

use crate::{convert, files, load_table, routes, text};

/// A routing table of both families compiled by fibkit's engines.
///
/// `Table.load(path, engines=None, nexthops=None, strict=False)` builds
/// from a table file with IPv4 and IPv6 routes (each family gets the first
/// of `engines` that serves it: d18r and poptrie18 by default);
/// `Table.default()` from the embedded default table. As for `Fib`,
/// `lookup(addr)` answers one address string of either family with its
/// route's value (None: no route) and `next_hop(addr)` with its next-hop
/// index; `lookup_batch(addrs)` answers strings of either family in one
/// call with next-hop indexes (0: no route), which `values[hops]` maps to
/// the routes' values.
#[pyclass(frozen, name = "Table", module = "fibkit")]
pub struct PyTable {
    table: CompiledTable,
    /// The largest next-hop index the routes use.
    last: NextHop,
    /// The compiled FIB file it was opened from, when pickles name it.
    pickle_path: Option<PathBuf>,
}

/// An engine's build error: `MemoryError` for memory the system refused,
/// `ValueError` for the rest (an unknown engine, a table past its limits).
pub fn build_error(error: BuildError) -> PyErr {
    match error {
        BuildError::OutOfMemory { .. } => PyMemoryError::new_err(error.to_string()),
        _ => PyValueError::new_err(error.to_string()),
    }
}

impl PyTable {
    fn build(
        py: Python<'_>,
        routes: RouteTable,
        engines: Option<Vec<String>>,
        prefixes: bool,
        calibrate: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let last = routes.v4.iter().map(|(_, hop)| hop).chain(routes.v6.iter().map(|(_, hop)| hop)).max();
        let calibration = calibration_of(calibrate)?;
        let options = CompileOptions { engines: engines.unwrap_or_default(), prefixes, calibration };
        let table = py.detach(|| CompiledTable::build(routes, &options));
        let table = table.map_err(build_error)?;
        Ok(PyTable { table, last: last.unwrap_or(NO_ROUTE), pickle_path: None })
    }

    /// The table of an opened compiled FIB file (pickled by `path` if given).
    pub fn from_table(table: CompiledTable, path: Option<PathBuf>) -> Self {
        let last = table.values.max_index();
        PyTable { table, last, pickle_path: path }
    }
}

/// The keys `auto` measures on: `calibrate`'s addresses (either family, as
/// `Table.lookup_batch` takes them) split by family; a family without any,
/// or no `calibrate`, is measured on uniform random keys.
pub fn calibration_of(calibrate: Option<&Bound<'_, PyAny>>) -> PyResult<Calibrations> {
    calibrate.map(calibration).transpose().map(Option::unwrap_or_default)
}

fn calibration(addrs: &Bound<'_, PyAny>) -> PyResult<Calibrations> {
    let py = addrs.py();
    let split = text::split(addrs).map_err(|error| {
        let message = format!("calibrate: {}", error.value(py));
        if error.is_instance_of::<PyTypeError>(py) {
            PyTypeError::new_err(message)
        } else {
            PyValueError::new_err(message)
        }
    })?;
    Ok(Calibrations::sample(split.keys4, split.keys6))
}

/// A matched prefix of either family: its network as an IPv6 address (an
/// IPv4 one mapped, `::ffff:a.b.c.d`) and its length in its own family.
#[derive(Clone, Copy)]
struct Matched {
    network: u128,
    prefix_len: u8,
    ipv4: bool,
}

impl Matched {
    fn new<A: Address>(prefix: Prefix<A>) -> Self {
        let (addr, prefix_len) = (prefix.addr().to_u128(), prefix.prefix_len());
        match A::FAMILY {
            Family::Ipv4 => Matched { network: 0xffff << 32 | addr, prefix_len, ipv4: true },
            Family::Ipv6 => Matched { network: addr, prefix_len, ipv4: false },
        }
    }

    /// `10.0.0.0/8`, `2001:db8::/32`.
    fn text(&self) -> String {
        match self.ipv4 {
            true => format!("{}/{}", Ipv4Addr::from(self.network as u32), self.prefix_len),
            false => format!("{}/{}", Ipv6Addr::from(self.network), self.prefix_len),
        }
    }
}

/// How `lookup_batch` answers the matched prefixes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Prefixes {
    None,
    Strings,
    Arrays,
}

impl Prefixes {
    fn new(prefixes: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(flag) = prefixes.extract::<bool>() {
            return Ok(if flag { Prefixes::Strings } else { Prefixes::None });
        }
        match prefixes.extract::<String>().as_deref() {
            Ok("strings") => Ok(Prefixes::Strings),
            Ok("arrays") => Ok(Prefixes::Arrays),
            _ => Err(PyValueError::new_err(format!(
                "prefixes must be False, True, \"strings\" or \"arrays\", got {prefixes}"
            ))),
        }
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
    mut matched: Option<&mut [Option<Matched>]>,
) {
    let Some(family) = family else { return };
    let mut answers = vec![NO_ROUTE; keys.len()];
    family.lookup_batch(keys, &mut answers);
    for (&position, answer) in positions.iter().zip(answers) {
        if let Some(slot) = out.get_mut(position) {
            *slot = family.next_hop(answer);
        }
        if let Some(slot) = matched.as_deref_mut().and_then(|matched| matched.get_mut(position)) {
            *slot = family.route(answer).map(|(prefix, _)| Matched::new(prefix));
        }
    }
}

/// The matched prefixes as `lookup_batch` returns them: an object array of
/// strings (None where no route), or an (N, 16) uint8 array of networks
/// (network byte order, IPv4 ones mapped) and an int16 array of lengths
/// (-1 where no route).
fn matched_arrays<'py>(
    py: Python<'py>,
    matched: Vec<Option<Matched>>,
    form: Prefixes,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if form == Prefixes::Strings {
        let texts =
            matched.into_iter().map(|prefix| Ok(prefix.map(|prefix| prefix.text()).into_pyobject(py)?.unbind()));
        let texts: Vec<Py<PyAny>> = texts.collect::<PyResult<_>>()?;
        return Ok(vec![PyArray1::from_vec(py, texts).into_any()]);
    }
    let networks: Vec<u8> =
        matched.iter().flat_map(|prefix| prefix.map_or(0, |prefix| prefix.network).to_be_bytes()).collect();
    let lengths: Vec<i16> =
        matched.iter().map(|prefix| prefix.map_or(-1, |prefix| i16::from(prefix.prefix_len))).collect();
    let networks = PyArray1::from_vec(py, networks).reshape([matched.len(), 16])?.into_any();
    Ok(vec![networks, PyArray1::from_vec(py, lengths).into_any()])
}

#[pymethods]
impl PyTable {
    /// Builds from a table file (ipasn, `PREFIX VALUE` text, range CSV,
    /// MRT; gz or bz2) with routes of either family or both.
    #[staticmethod]
    /// With `prefixes`, lookups can also answer the matched prefix (the
    /// FIBs are then built over route numbers, and are larger).
    /// With `fields` (`"asn,org:text"`; see `fibkit lookup --fields`), the
    /// routes' values are records of those fields: a text table's columns
    /// after the addresses, or a MaxMind DB file's paths
    /// (`"country.iso_code,location.latitude"`).
    /// With `calibrate` (addresses of either family, in any form
    /// `lookup_batch` takes: a sample of the traffic), the engine `"auto"`
    /// measures its candidates on those addresses instead of uniform
    /// random ones; other engines take no notice.
    #[pyo3(signature = (path, engines = None, nexthops = None, strict = false, prefixes = false, fields = None, calibrate = None))]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments
    fn load(
        py: Python<'_>,
        path: PathBuf,
        engines: Option<Vec<String>>,
        nexthops: Option<&Bound<'_, PyAny>>,
        strict: bool,
        prefixes: bool,
        fields: Option<&str>,
        calibrate: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mapping = convert::mapping(nexthops)?;
        let fields =
            fields.map(FieldSpec::parse).transpose().map_err(|error| PyValueError::new_err(error.to_string()))?;
        let routes = py.detach(|| load_table(path, mapping, strict, fields))?;
        Self::build(py, routes, engines, prefixes, calibrate)
    }

    /// Builds from the embedded default table (synthetic, IPv4);
    /// `calibrate` as for `load`.
    #[staticmethod]
    #[pyo3(signature = (engines = None, nexthops = None, prefixes = false, calibrate = None))]
    fn default(
        py: Python<'_>,
        engines: Option<Vec<String>>,
        nexthops: Option<&Bound<'_, PyAny>>,
        prefixes: bool,
        calibrate: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mapping = convert::mapping(nexthops)?;
        let routes = py.detach(|| load::synthetic::default_table(mapping));
        Self::build(py, routes, engines, prefixes, calibrate)
    }

    /// Next-hop indexes (not values: `values[hops]` maps them; 0: no
    /// route) of address strings of either family in one array: a list of `str` (parsed with the GIL held), a numpy
    /// `str` or `bytes` array or a pyarrow string array (parsed with the
    /// GIL released), or any other sequence of `str`; the lookups release
    /// the GIL. An element that is
    /// no address is a `ValueError` naming its index, its text and why.
    /// With `prefixes` (for a table loaded with `prefixes=True`), returns
    /// the next hops and the matched prefixes: `True` or `"strings"`, an
    /// object array of strings (`"10.0.0.0/8"`, None where no route);
    /// `"arrays"`, an (N, 16) uint8 array of the networks (network byte
    /// order; an IPv4 network mapped, `::ffff:a.b.c.d`) and an int16 array
    /// of the prefix lengths in their own family (-1 where no route).
    ///
    /// With `fields` (a table of records: True for all its fields, or
    /// their names as a list or `"asn,org"`), returns a
    /// `pyarrow.RecordBatch` of those fields, one row an address (nulls
    /// where no route or no value): integers as int64, floats as float64,
    /// text and addresses as large_string, lists as large_list<int64>.
    #[pyo3(signature = (addrs, prefixes = None, fields = None))]
    fn lookup_batch<'py>(
        &self,
        py: Python<'py>,
        addrs: &Bound<'py, PyAny>,
        prefixes: Option<&Bound<'py, PyAny>>,
        fields: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Some(fields) = fields {
            if prefixes.is_some() {
                return Err(PyValueError::new_err("fields= and prefixes= are not asked together"));
            }
            let chosen = crate::records::chosen_fields(&self.table.values, fields)?;
            let hops = self.lookup_batch(py, addrs, None, None)?;
            let hops = hops.cast::<PyArray1<NextHop>>()?.readonly();
            let hops = hops.as_slice()?;
            let records = self.table.values.records().ok_or_else(|| PyValueError::new_err("no records"))?;
            let columns = crate::records::columns(py, records, hops, &chosen)?;
            return py.import("fibkit._records")?.getattr("record_batch")?.call1((columns, hops.len()));
        }
        let form = prefixes.map_or(Ok(Prefixes::None), Prefixes::new)?;
        let prefixes = form != Prefixes::None;
        let v4 = self.table.v4.as_ref().map(CompiledFamily::has_prefixes);
        let v6 = self.table.v6.as_ref().map(CompiledFamily::has_prefixes);
        if prefixes && [v4, v6].contains(&Some(false)) {
            return Err(PyValueError::new_err("prefixes=True needs a table loaded with prefixes=True"));
        }
        let split = text::split(addrs)?;
        let mut out = vec![NO_ROUTE; split.len];
        let mut matched = if prefixes { vec![None; split.len] } else { Vec::new() };
        py.detach(|| {
            let table = &self.table;
            let (v4, v6) = (table.family_fib::<u32>(), table.family_fib::<u128>());
            answer(v4, &split.keys4, &split.positions4, &mut out, prefixes.then_some(&mut matched[..]));
            answer(v6, &split.keys6, &split.positions6, &mut out, prefixes.then_some(&mut matched[..]));
        });
        let hops = PyArray1::from_vec(py, out).into_any();
        if !prefixes {
            return Ok(hops);
        }
        let mut answers = vec![hops];
        answers.extend(matched_arrays(py, matched, form)?);
        Ok(PyTuple::new(py, answers)?.into_any())
    }

    /// Every route covering each address (strings of either family, in
    /// any form `lookup_batch` takes), from the least specific to the
    /// longest match, for a table loaded (or compiled) with prefixes: a
    /// pyarrow `ListArray` with a list per address (empty: no route) of
    /// structs `prefix` (string, `"10.0.0.0/8"`), `prefix_len` (uint8) and
    /// `next_hop` (uint32: `values[next_hop]` gives the value). Parsing
    /// and the lists' building release the GIL. An element that is no
    /// address is a `ValueError` naming its index; a table without
    /// prefixes, a `ValueError` saying to load it with `prefixes=True`.
    fn covering<'py>(&self, py: Python<'py>, addrs: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let split = text::split(addrs)?;
        routes::covering(py, &self.table, &split)
    }

    /// The routes inside `prefixes` (the prefix itself included when it is
    /// a route), in address order, for a table loaded (or compiled) with
    /// prefixes: for one prefix string (`"10.0.0.0/8"`; an address stands
    /// for its /32 or /128), a pyarrow `StructArray` of `prefix`,
    /// `prefix_len` and `next_hop` as `covering` answers; for a sequence
    /// of them, a `ListArray` of such structs, a list per prefix. A
    /// malformed prefix, or one with host bits set, is a `ValueError`
    /// naming it.
    fn within<'py>(&self, py: Python<'py>, prefixes: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        routes::within(py, &self.table, prefixes)
    }

    /// The value of the route that matches `addr` (a string of either
    /// family): an int, or an address string as the table wrote it; None
    /// when no route matches. With `nexthops=N`, the route's next hop (1 to
    /// N), which its value was mapped onto.
    fn lookup<'py>(&self, py: Python<'py>, addr: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        convert::route_value(py, &self.table.values, self.next_hop(addr)?)
    }

    /// The next-hop index of `addr` (a string of either family), as
    /// `lookup_batch` answers each address; 0: no route. `value(index)` and
    /// `values[index]` give the route's value.
    fn next_hop(&self, addr: &Bound<'_, PyAny>) -> PyResult<NextHop> {
        let text = addr.cast::<PyString>().map_err(|_| {
            let kind = addr.get_type().name().map_or_else(|_| "?".to_string(), |name| name.to_string());
            PyTypeError::new_err(format!("a Table's address is a string (of either family), got {kind}"))
        })?;
        let text = text.to_cow()?;
        let parsed = load::parse_address(text.as_bytes())
            .map_err(|problem| PyValueError::new_err(format!("{text:?}: {problem}")))?;
        Ok(match parsed {
            AnyAddr::V4(addr) => self.table.family_fib::<u32>().map_or(NO_ROUTE, |family| family.lookup(addr)),
            AnyAddr::V6(addr) => self.table.family_fib::<u128>().map_or(NO_ROUTE, |family| family.lookup(addr)),
        })
    }

    /// The route value next-hop index `index` stands for (int or address
    /// string), or None for 0 and, with `nexthops`, for every index (there
    /// the index is all that is left of the value: `lookup` answers it).
    fn value<'py>(&self, py: Python<'py>, index: NextHop) -> PyResult<Option<Bound<'py, PyAny>>> {
        convert::value_object(py, &self.table.values, index)
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
        files::reduce(py, "Table", self.pickle_path.as_deref(), || self.table.to_file(), protocol)
    }

    /// The fields of a table of records as `(name, type)` pairs (types:
    /// int, float, bool, text, addr, ints); None for a table of values.
    #[getter]
    fn fields(&self) -> Option<Vec<(String, &'static str)>> {
        let records = self.table.values.records()?;
        Some(records.fields().map(|field| (field.name.clone(), field.kind.name())).collect())
    }

    /// The engines answering IPv4 and IPv6 (None for a family without routes).
    #[getter]
    fn engines(&self) -> (Option<String>, Option<String>) {
        let [v4, v6] = self.table.engines().map(|engine| engine.map(str::to_string));
        (v4, v6)
    }

    fn __repr__(&self) -> String {
        let (v4, v6) = self.engines();
        let none = || "no routes".to_string();
        let (v4, v6) = (v4.unwrap_or_else(none), v6.unwrap_or_else(none));
        format!("<fibkit.Table {}: IPv4 {v4}, IPv6 {v6}>", self.table.name)
    }
}
