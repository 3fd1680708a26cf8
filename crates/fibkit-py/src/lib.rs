//! Python bindings of fibkit: `fibkit.Fib` (IPv4) and `fibkit.Fib6` (IPv6).
//!
//! A FIB is built once from routes or a table file. `lookup(addr)` answers
//! one address's route value (None: no route) and `next_hop(addr)` its
//! next-hop index; `lookup_batch` answers a whole numpy array of addresses
//! with next-hop indexes (`values[hops]` maps them to values), with the GIL
//! released, in the engine's own batch path, optionally split across
//! threads. Both classes
//! are thin shells over one generic `Core`; only the way addresses come
//! in from Python (`PyAddress`) differs. The Python package
//! (`python/fibkit/__init__.py`) adds address conversions on top.
//!
//! No panic reaches Python: arguments are checked in `arrays` (the numpy
//! arrays) and `convert` (ints and strings), numpy borrows are tried
//! (`try_readonly`/`try_readwrite`) and their failures are `ValueError`s.

#![warn(clippy::undocumented_unsafe_blocks)]
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod arrays;
mod convert;
mod files;
mod live;
mod records;
mod routes;
mod table;
mod text;

use std::path::PathBuf;
use std::time::Instant;

use numpy::{Element, PyArray1, PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;

use fibkit::addr::{Address, Family, Prefix};
use fibkit::compiled::{CompiledFamily, CompiledTable, Values};
use fibkit::fib::{BuildOptions, Calibration, Calibrations, Fib, Figure, Stats};
use fibkit::load::{self, LoadOptions, RouteTable};
use fibkit::nexthop::Mapping;
use fibkit::records::FieldSpec;
use fibkit::{registry, NextHop, NO_ROUTE};

/// Below this many keys a batch is not split across threads.
const PARALLEL_MIN: usize = 1 << 15;

/// IPv6 keys converted per step of [`PyFib6::lookup_batch`] (a stack buffer).
const V6_STEP: usize = 256;

/// Loads a table file with fibkit's loaders (format and compression are
/// detected from the content).
fn load_table(path: PathBuf, mapping: Mapping, strict: bool, fields: Option<FieldSpec>) -> PyResult<RouteTable> {
    let options = LoadOptions { mapping, strict, fields, ..Default::default() };
    load::load_path(&path, &options).map_err(|error| PyValueError::new_err(error.to_string()))
}

/// A table of family `A`'s `(prefix, value)` pairs from Python.
fn routes_table<A: PyAddress>(routes: &Bound<'_, PyAny>, nexthops: Option<&Bound<'_, PyAny>>) -> PyResult<RouteTable> {
    let mut table = RouteTable::new("routes", convert::mapping(nexthops)?);
    let mut rib = fibkit::Rib::<A>::new();
    for (position, route) in routes.try_iter()?.enumerate() {
        let (prefix, value): (String, Bound<'_, PyAny>) = route?
            .extract()
            .map_err(|_| PyTypeError::new_err(format!("route {position}: expected a (prefix, value) pair")))?;
        let parsed = prefix.parse::<Prefix<A>>().map_err(|problem| {
            let other = prefix.contains(':') != (A::FAMILY == Family::Ipv6);
            let hint = if other { format!(" ({} takes this family)", A::OTHER_CLASS) } else { String::new() };
            PyValueError::new_err(format!("route {position}: {problem}{hint}"))
        })?;
        let label = convert::label(&value).map_err(|error| at_route(routes.py(), position, error))?;
        let hop = table.next_hops.intern(label);
        rib.insert(parsed, hop);
    }
    A::set_rib(&mut table, rib);
    Ok(table)
}

/// `error` (about route `position`'s value) as the same kind of exception,
/// its message prefixed with the route's position.
fn at_route(py: Python<'_>, position: usize, error: PyErr) -> PyErr {
    let message = format!("route {position}: {}", error.value(py));
    if error.is_instance_of::<PyTypeError>(py) {
        PyTypeError::new_err(message)
    } else {
        PyValueError::new_err(message)
    }
}

/// Loads a table file for family `A`, refusing a file with none of its
/// routes but some of the other family's.
fn load_family<A: PyAddress>(path: PathBuf, mapping: Mapping, strict: bool) -> PyResult<RouteTable> {
    let table = load_table(path, mapping, strict, None)?;
    if table.prefixes(A::FAMILY) == 0 && table.prefixes(A::FAMILY.other()) > 0 {
        let message = format!("{}: none of its routes is of this family (use {}.load)", table.name, A::OTHER_CLASS);
        return Err(PyValueError::new_err(message));
    }
    Ok(table)
}

/// The statistics as a dict of ints, floats and strings.
fn stats_dict<'py>(py: Python<'py>, stats: &Stats) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (key, figure) in &stats.figures {
        match figure {
            Figure::Count(count) => dict.set_item(key, count)?,
            Figure::Real(real) => dict.set_item(key, real)?,
            Figure::Text(text) => dict.set_item(key, text)?,
        }
    }
    Ok(dict)
}

/// How many pieces a batch of `len` keys is cut into for `threads`.
fn pieces(len: usize, threads: Option<usize>) -> PyResult<usize> {
    match threads {
        Some(0) => Err(PyValueError::new_err("threads must be at least 1")),
        Some(count) if len >= PARALLEL_MIN => Ok(count.min(len / (PARALLEL_MIN / 2)).max(1)),
        _ => Ok(1),
    }
}

/// How addresses of one family come in from Python.
trait PyAddress: Address + TryFrom<u128> {
    /// The Python class of the other family (for hints).
    const OTHER_CLASS: &'static str;

    /// Puts `rib` into `table` as this family's routes.
    fn set_rib(table: &mut RouteTable, rib: fibkit::Rib<Self>);

    /// Takes this family's FIB out of a compiled table.
    fn take_family(table: &mut CompiledTable) -> Option<CompiledFamily<Self>>;

    /// An address from an int or a string in the family's notation.
    fn from_py(addr: &Bound<'_, PyAny>) -> PyResult<Self> {
        convert::address(addr)
    }

    /// The addresses of an array as the class's `lookup_batch` takes them;
    /// `None` if `addrs` is no such array.
    fn batch_keys(addrs: &Bound<'_, PyAny>) -> PyResult<Option<Vec<Self>>>;

    /// The keys `auto` measures on (`calibrate`): addresses as the class's
    /// `lookup_batch` takes them, or in any form `Table.lookup_batch`
    /// takes (strings); none, uniform random keys.
    fn calibration(calibrate: Option<&Bound<'_, PyAny>>) -> PyResult<Calibrations> {
        let Some(addrs) = calibrate else { return Ok(Calibrations::default()) };
        let Some(keys) = Self::batch_keys(addrs)? else { return table::calibration_of(Some(addrs)) };
        let mut calibrations = Calibrations::default();
        *calibrations.of_mut::<Self>() = Calibration::sample(keys);
        Ok(calibrations)
    }
}

impl PyAddress for u32 {
    const OTHER_CLASS: &'static str = "Fib6";

    fn set_rib(table: &mut RouteTable, rib: fibkit::Rib<u32>) {
        table.v4 = rib;
    }

    fn take_family(table: &mut CompiledTable) -> Option<CompiledFamily<u32>> {
        table.v4.take()
    }

    fn batch_keys(addrs: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u32>>> {
        let Ok(array) = arrays::keys4(addrs) else { return Ok(None) };
        let keys = array.try_readonly().map_err(arrays::borrow_error("calibrate"))?;
        Ok(Some(keys.as_slice()?.to_vec()))
    }
}

impl PyAddress for u128 {
    const OTHER_CLASS: &'static str = "Fib";

    fn set_rib(table: &mut RouteTable, rib: fibkit::Rib<u128>) {
        table.v6 = rib;
    }

    fn take_family(table: &mut CompiledTable) -> Option<CompiledFamily<u128>> {
        table.v6.take()
    }

    fn batch_keys(addrs: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u128>>> {
        if let Ok(Some(halves)) = arrays::keys6_halves(addrs) {
            let words = halves.try_readonly().map_err(arrays::borrow_error("calibrate"))?;
            return Ok(Some(words.as_slice()?.chunks_exact(2).map(key6_of_halves).collect()));
        }
        let Ok(array) = arrays::keys6(addrs) else { return Ok(None) };
        let bytes = array.try_readonly().map_err(arrays::borrow_error("calibrate"))?;
        Ok(Some(bytes.as_slice()?.chunks_exact(16).map(key6_of_bytes).collect()))
    }
}

/// The engine behind `Fib` (`A = u32`) and `Fib6` (`A = u128`).
struct Core<A: Address> {
    family: CompiledFamily<A>,
}

impl<A: PyAddress> Core<A> {
    /// Builds `engine` from the table's routes of family `A` (`auto`
    /// measuring on `calibration`'s keys of the family).
    fn build(table: RouteTable, engine: &str, calibration: Calibrations) -> PyResult<(Self, Compiled)> {
        let start = Instant::now();
        let rib = table.rib::<A>();
        let engine = registry::resolve::<A>(engine).map_err(|error| PyValueError::new_err(error.to_string()))?;
        let options = BuildOptions { max_next_hop: table.next_hops.max_index(), calibration };
        let family = CompiledFamily::build(engine, rib, &options, false);
        let family = family.map_err(|error| PyValueError::new_err(error.to_string()))?;
        let (last, prefixes) = (rib.iter().map(|(_, hop)| hop).max().unwrap_or(NO_ROUTE), rib.len());
        let build_ms = start.elapsed().as_secs_f64() * 1e3;
        let compiled = Compiled::new(family.fib(), Values::new(&table.next_hops), table.name, prefixes, last, build_ms);
        Ok((Core { family }, compiled))
    }

    /// The FIB of family `A` of an opened compiled FIB file (`file` names
    /// it in messages; pickled by `path` if given).
    fn from_table(mut table: CompiledTable, file: &str, path: Option<PathBuf>) -> PyResult<(Self, Compiled)> {
        let Some(family) = A::take_family(&mut table) else {
            let message = format!("{file}: no {} FIB in the file (fibkit.open opens both families)", A::FAMILY);
            return Err(PyValueError::new_err(message));
        };
        let prefixes = match family.fib().stats().get("prefixes") {
            Some(Figure::Count(count)) => usize::try_from(*count).unwrap_or(usize::MAX),
            _ => 0,
        };
        let last = table.values.max_index();
        let mut compiled = Compiled::new(family.fib(), table.values, table.name, prefixes, last, 0.0);
        compiled.pickle_path = path;
        Ok((Core { family }, compiled))
    }

    /// Builds from Python `(prefix, value)` pairs.
    fn from_routes(
        routes: &Bound<'_, PyAny>,
        engine: &str,
        nexthops: Option<&Bound<'_, PyAny>>,
        calibrate: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<(Self, Compiled)> {
        let calibration = A::calibration(calibrate)?;
        Self::build(routes_table::<A>(routes, nexthops)?, engine, calibration)
    }

    /// Builds from a table file, the GIL released.
    fn load(
        py: Python<'_>,
        path: PathBuf,
        engine: &str,
        nexthops: Option<&Bound<'_, PyAny>>,
        strict: bool,
        calibrate: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<(Self, Compiled)> {
        let engine = engine.to_string();
        let mapping = convert::mapping(nexthops)?;
        let calibration = A::calibration(calibrate)?;
        py.detach(move || Self::build(load_family::<A>(path, mapping, strict)?, &engine, calibration))
    }

    /// The next-hop index of one Python address (0: no route).
    fn next_hop(&self, addr: &Bound<'_, PyAny>) -> PyResult<NextHop> {
        Ok(self.family.lookup(A::from_py(addr)?))
    }

    /// The next hops of `keys` (checked by [`arrays::keys4`] or
    /// [`arrays::keys6`]; `width` elements a key), into `out` if given
    /// (checked) or a new array, the GIL released, a large batch split
    /// across `threads`; `run(fib, keys, slots)` answers `keys` into
    /// `slots` (route numbers, for a FIB with prefixes, then mapped to
    /// their next hops). Keys sharing memory with `out` are copied first.
    fn lookup_array<'py, T: Element + Sync>(
        &self,
        py: Python<'py>,
        keys: Bound<'py, PyArrayDyn<T>>,
        width: usize,
        out: Option<&Bound<'py, PyAny>>,
        threads: Option<&Bound<'py, PyAny>>,
        run: impl Fn(&dyn Fib<A>, &[T], &mut [NextHop]) + Sync,
    ) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let len = keys.len() / width;
        let result = arrays::output(py, out, len)?;
        let pieces = pieces(len, convert::threads(threads)?)?;
        let keys = arrays::apart(keys, &result)?;
        let readable = keys.try_readonly().map_err(arrays::borrow_error("addrs"))?;
        let mut writable = result.try_readwrite().map_err(arrays::borrow_error("out"))?;
        let keys = readable.as_slice()?;
        let slots = writable.as_slice_mut()?.get_mut(..len).ok_or_else(|| PyValueError::new_err("out is too short"))?;
        let family = &self.family;
        // A FIB opened from a file compiled with prefixes answers route
        // numbers: each becomes its route's next hop.
        let answer = |keys: &[T], slots: &mut [NextHop]| {
            run(family.fib(), keys, slots);
            if family.has_prefixes() {
                for slot in slots.iter_mut() {
                    *slot = family.next_hop(*slot);
                }
            }
        };
        py.detach(|| {
            if pieces == 1 {
                answer(keys, slots);
            } else {
                let piece = len.div_ceil(pieces).max(1);
                slots
                    .par_chunks_mut(piece)
                    .zip(keys.par_chunks(piece * width))
                    .for_each(|(slots, keys)| answer(keys, slots));
            }
        });
        drop(writable);
        Ok(result)
    }
}

/// What `Fib` and `Fib6` share: the route values behind next-hop indexes
/// and the engine's figures, taken when it was built or opened (a FIB never
/// changes).
#[pyclass(frozen, subclass, module = "fibkit")]
struct Compiled {
    engine: String,
    footprint: usize,
    stats: Stats,
    values: Values,
    /// The table's name.
    name: String,
    /// The largest next-hop index of the FIB's routes.
    last: NextHop,
    prefixes: usize,
    build_ms: f64,
    /// The compiled FIB file it was opened from, when pickles name it
    /// rather than carry its bytes.
    pickle_path: Option<PathBuf>,
}

impl Compiled {
    fn new<A: Address>(
        fib: &dyn Fib<A>,
        values: Values,
        name: String,
        prefixes: usize,
        last: NextHop,
        build_ms: f64,
    ) -> Self {
        let (engine, footprint, stats) = (fib.name().to_string(), fib.footprint(), fib.stats());
        Compiled { engine, footprint, stats, values, name, last, prefixes, build_ms, pickle_path: None }
    }

    fn describe(&self, class: &str) -> String {
        format!("<fibkit.{class} {} with {} prefixes, {} bytes>", self.engine, self.prefixes, self.footprint)
    }
}

#[pymethods]
impl Compiled {
    /// The route value next-hop index `index` stands for (int or address
    /// string), or None for 0 and, with `nexthops`, for every index (there
    /// the index is all that is left of the value: `lookup` answers it).
    fn value<'py>(&self, py: Python<'py>, index: NextHop) -> PyResult<Option<Bound<'py, PyAny>>> {
        convert::value_object(py, &self.values, index)
    }

    /// `values[i]`: the number next-hop index `i` stands for, for every
    /// index a lookup can return (0 up to the largest the routes use), so
    /// that `values[hops]` maps a batch's answers to the routes' values: a
    /// number value is itself, an address its integer, 0 is no route; with
    /// `nexthops`, the index itself. A uint64 array; if some value is an
    /// IPv6 address, an object array of Python ints instead (an address
    /// keeps its 128 bits, so distinct values never share a number).
    #[getter]
    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::values(py, &self.values, self.last)
    }

    /// The engine's registry name.
    #[getter]
    fn engine(&self) -> &str {
        &self.engine
    }

    /// Bytes a lookup can touch.
    #[getter]
    fn footprint(&self) -> usize {
        self.footprint
    }

    /// Prefixes the table holds (of the FIB's address family).
    #[getter]
    fn prefixes(&self) -> usize {
        self.prefixes
    }

    /// Build time in milliseconds.
    #[getter]
    fn build_ms(&self) -> f64 {
        self.build_ms
    }

    /// The engine's figures (as `fibkit stat --json`).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        stats_dict(py, &self.stats)
    }

    /// The engine's report (as `fibkit stat`).
    fn report(&self) -> String {
        self.stats.report.clone()
    }
}

/// The methods `Fib` and `Fib6` share, for class `$class` (Python name
/// `$name`) over its `core`, with `$engine` the default engine; the class's
/// own `lookup_batch` (its array layout differs) goes in `{ ... }`.
macro_rules! fib_class {
    ($class:ident, $name:literal, $engine:literal, $load_doc:literal, { $($batch:tt)* }) => {
        #[pymethods]
        impl $class {
            #[new]
            #[pyo3(signature = (routes, engine = $engine, nexthops = None, calibrate = None))]
            fn new(
                routes: &Bound<'_, PyAny>,
                engine: &str,
                nexthops: Option<&Bound<'_, PyAny>>,
                calibrate: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<PyClassInitializer<Self>> {
                let (core, compiled) = Core::from_routes(routes, engine, nexthops, calibrate)?;
                Ok(PyClassInitializer::from(compiled).add_subclass($class { core }))
            }

            #[doc = $load_doc]
            #[staticmethod]
            #[pyo3(signature = (path, engine = $engine, nexthops = None, strict = false, calibrate = None))]
            fn load<'py>(
                py: Python<'py>,
                path: PathBuf,
                engine: &str,
                nexthops: Option<&Bound<'py, PyAny>>,
                strict: bool,
                calibrate: Option<&Bound<'py, PyAny>>,
            ) -> PyResult<Bound<'py, Self>> {
                let (core, compiled) = Core::load(py, path, engine, nexthops, strict, calibrate)?;
                Bound::new(py, PyClassInitializer::from(compiled).add_subclass($class { core }))
            }

            /// Opens a compiled FIB file (`fibkit compile`, `save`) by
            /// mapping it: nothing is built, and processes that open the
            /// same file share its pages. Its routes of this family answer.
            /// With `pickle_path`, a pickle of the object holds the path,
            /// not the file's bytes (for workers that see the same file).
            #[staticmethod]
            #[pyo3(signature = (path, pickle_path = false))]
            fn open<'py>(py: Python<'py>, path: PathBuf, pickle_path: bool) -> PyResult<Bound<'py, Self>> {
                let table = files::open_table(py, &path)?;
                let (core, compiled) = Core::from_table(table, &path.display().to_string(), pickle_path.then_some(path.clone()))?;
                Bound::new(py, PyClassInitializer::from(compiled).add_subclass($class { core }))
            }

            /// Writes the FIB and its values to `path` as a compiled FIB
            /// file (replacing it whole), for `open` and `fibkit lookup`.
            fn save(slf: PyRef<'_, Self>, py: Python<'_>, path: PathBuf) -> PyResult<()> {
                let compiled = slf.as_super();
                let file = slf.core.family.to_file(&compiled.name, &compiled.values).map_err(files::save_error)?;
                files::write(py, file, &path)
            }

            /// Pickling: the compiled FIB file's bytes (out of band with
            /// protocol 5), or its path (opened with `pickle_path`).
            fn __reduce_ex__<'py>(slf: PyRef<'py, Self>, protocol: u32) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
                let compiled = slf.as_super();
                let file = || slf.core.family.to_file(&compiled.name, &compiled.values);
                files::reduce(slf.py(), $name, compiled.pickle_path.as_deref(), file, protocol)
            }

            /// The value of the route that matches `addr` (an int or a
            /// string): an int, or an address string as the table wrote it;
            /// None when no route matches. With `nexthops=N`, the route's
            /// next hop (1 to N), which its value was mapped onto. An int out
            /// of the family's range is an `OverflowError`.
            fn lookup<'py>(slf: PyRef<'py, Self>, addr: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
                let hop = slf.core.next_hop(addr)?;
                convert::route_value(slf.py(), &slf.as_super().values, hop)
            }

            /// The next-hop index of `addr` (an int or a string), as
            /// `lookup_batch` answers each address; 0: no route.
            /// `value(index)` and `values[index]` give the route's value.
            fn next_hop(&self, addr: &Bound<'_, PyAny>) -> PyResult<NextHop> {
                self.core.next_hop(addr)
            }

            $($batch)*

            fn __repr__(slf: PyRef<'_, Self>) -> String {
                slf.as_super().describe($name)
            }
        }
    };
}

/// Python shows a default argument only when the signature writes it as a
/// literal, so the signatures of `Fib`, `Fib.default` and `Fib6` spell out
/// the registry's default engines (`fibkit::registry::DEFAULT_IPV4`,
/// `DEFAULT_IPV6`): this stops the build when the registry's change, for
/// the signatures (and the stub) to change with them.
const _: () = {
    assert!(same_text("d18r", fibkit::registry::DEFAULT_IPV4));
    assert!(same_text("poptrie18", fibkit::registry::DEFAULT_IPV6));
};

/// `a == b`, at compile time.
const fn same_text(a: &str, b: &str) -> bool {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    loop {
        match (a, b) {
            ([], []) => return true,
            ([x, rest_a @ ..], [y, rest_b @ ..]) if *x == *y => (a, b) = (rest_a, rest_b),
            _ => return false,
        }
    }
}

/// An IPv4 forwarding table compiled by one of fibkit's engines.
///
/// `Fib(routes, engine="d18r", nexthops=None)` builds from an iterable of
/// `(prefix, value)` pairs, e.g. `("10.0.0.0/8", 64500)`, a value being an
/// int or a string as table files write one (`"64500"`, `"192.0.2.1"`);
/// `Fib.load(path)` from a table file. With `nexthops=N` (1 to 2**32-1)
/// value `v` becomes next hop `v % N + 1`. With `engine="auto"`,
/// `calibrate` (a sample of the addresses to be looked up, as an array
/// `lookup_batch` takes or a list of strings) gives the keys `auto`
/// measures its candidates on, else uniform random keys of the family.
///
/// `lookup(addr)` answers one address with its route's value (None: no
/// route; with `nexthops`, the next hop 1 to N). `next_hop(addr)` and
/// `lookup_batch(addrs)` answer next-hop indexes (0: no route), the batch
/// as a uint32 array from the engine's batch path; `values[hops]` maps
/// them to the routes' values as numbers (0: no route), `value(index)` one
/// index to its value as `lookup` gives it.
#[pyclass(frozen, extends = Compiled, name = "Fib", module = "fibkit")]
struct PyFib {
    core: Core<u32>,
}

fib_class!(
    PyFib,
    "Fib",
    "d18r",
    "Builds from a table file (ipasn, `PREFIX VALUE` text, range CSV, MRT; gz or bz2), its IPv4 routes.",
    {
        /// Builds from the embedded default table, as the `fibkit` command
        /// uses without a TABLE: a synthetic IPv4 table shaped like a current
        /// full BGP table (one million prefixes, 75,000 origin ASes as values;
        /// generated, deterministic, nothing read). `nexthops` as for `Fib`.
        #[staticmethod]
        #[pyo3(signature = (engine = "d18r", nexthops = None, calibrate = None))]
        fn default<'py>(
            py: Python<'py>,
            engine: &str,
            nexthops: Option<&Bound<'py, PyAny>>,
            calibrate: Option<&Bound<'py, PyAny>>,
        ) -> PyResult<Bound<'py, Self>> {
            let mapping = convert::mapping(nexthops)?;
            let engine = engine.to_string();
            let calibration = <u32 as PyAddress>::calibration(calibrate)?;
            let (core, compiled) =
                py.detach(move || Core::build(load::synthetic::default_table(mapping), &engine, calibration))?;
            Bound::new(py, PyClassInitializer::from(compiled).add_subclass(PyFib { core }))
        }

        /// Next-hop indexes (not values: `values[hops]` maps them; 0: no
        /// route) of a uint32 array of addresses, into `out` if given (a uint32 array of at least as many slots, which may be
        /// `addrs` itself); the GIL is released, and with `threads` (1 to
        /// 1024) a large batch is split across that many threads.
        #[pyo3(signature = (addrs, out = None, threads = None))]
        fn lookup_batch<'py>(
            &self,
            py: Python<'py>,
            addrs: &Bound<'py, PyAny>,
            out: Option<&Bound<'py, PyAny>>,
            threads: Option<&Bound<'py, PyAny>>,
        ) -> PyResult<Bound<'py, PyArray1<u32>>> {
            self.core.lookup_array(py, arrays::keys4(addrs)?, 1, out, threads, |fib, keys, slots| {
                fib.lookup_batch(keys, slots);
            })
        }
    }
);

/// An IPv6 forwarding table: `Fib6(routes, engine="poptrie18")` or
/// `Fib6.load(path)`, routes, values and what each lookup answers as for
/// `Fib`; `lookup_batch` takes an (N, 16) uint8 array of addresses in
/// network byte order.
#[pyclass(frozen, extends = Compiled, name = "Fib6", module = "fibkit")]
struct PyFib6 {
    core: Core<u128>,
}

fib_class!(PyFib6, "Fib6", "poptrie18", "Builds from a table file, its IPv6 routes.", {
    /// Next-hop indexes (not values: `values[hops]` maps them; 0: no
    /// route) of an (N, 16) uint8 array of addresses (network byte order) or an (N, 2) uint64 array (each address's high and low
    /// 64 bits), into `out` if given (a uint32 array of at least N slots);
    /// the GIL is released.
    #[pyo3(signature = (addrs, out = None, threads = None))]
    fn lookup_batch<'py>(
        &self,
        py: Python<'py>,
        addrs: &Bound<'py, PyAny>,
        out: Option<&Bound<'py, PyAny>>,
        threads: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyArray1<u32>>> {
        if let Some(halves) = arrays::keys6_halves(addrs)? {
            return self.core.lookup_array(py, halves, 2, out, threads, |fib, words, slots| {
                lookup6(fib, words, 2, slots, key6_of_halves);
            });
        }
        self.core.lookup_array(py, arrays::keys6(addrs)?, 16, out, threads, |fib, bytes, slots| {
            lookup6(fib, bytes, 16, slots, key6_of_bytes);
        })
    }
});

/// An IPv6 key from a row of an (N, 2) uint64 array: its high 64 bits,
/// then its low.
fn key6_of_halves(row: &[u64]) -> u128 {
    row.iter().fold(0u128, |wide, &word| wide << 64 | u128::from(word))
}

/// An IPv6 key from a row of an (N, 16) uint8 array, network byte order.
fn key6_of_bytes(row: &[u8]) -> u128 {
    row.iter().fold(0u128, |wide, &byte| wide << 8 | u128::from(byte))
}

/// Looks up IPv6 keys given as rows of `width` elements of `rows`, each
/// made a key by `key`, `V6_STEP` at a time through a stack buffer.
fn lookup6<T>(fib: &dyn Fib<u128>, rows: &[T], width: usize, slots: &mut [NextHop], key: impl Fn(&[T]) -> u128) {
    let mut keys = [0u128; V6_STEP];
    for (rows, slots) in rows.chunks(width * V6_STEP).zip(slots.chunks_mut(V6_STEP)) {
        let keys = keys.get_mut(..slots.len()).unwrap_or_default();
        for (slot, row) in keys.iter_mut().zip(rows.chunks_exact(width)) {
            *slot = key(row);
        }
        fib.lookup_batch(keys, slots);
    }
}

/// Restores a pickled `Fib`, `Fib6` or `Table` (see [`files`]).
#[pyfunction]
fn _restore<'py>(py: Python<'py>, kind: &str, data: &Bound<'py, PyAny>, by_path: bool) -> PyResult<Bound<'py, PyAny>> {
    let (table, path) = files::unpickle(py, data, by_path)?;
    Ok(match kind {
        "Fib" => {
            let (core, compiled) = Core::from_table(table, "a pickled Fib", path)?;
            Bound::new(py, PyClassInitializer::from(compiled).add_subclass(PyFib { core }))?.into_any()
        }
        "Fib6" => {
            let (core, compiled) = Core::from_table(table, "a pickled Fib6", path)?;
            Bound::new(py, PyClassInitializer::from(compiled).add_subclass(PyFib6 { core }))?.into_any()
        }
        "Table" => Bound::new(py, table::PyTable::from_table(table, path))?.into_any(),
        other => return Err(PyValueError::new_err(format!("_restore: unknown kind {other:?}"))),
    })
}

/// Opens a compiled FIB file (`fibkit compile`, `Fib.save`,
/// `Table.save`) as a `Table` answering both families, by mapping it:
/// nothing is built, and processes that open the same file share its
/// pages. With `pickle_path`, a pickle of the table holds the path, not
/// the file's bytes. A damaged file, or one of a newer format, is a
/// `ValueError` naming the file, the offset and the problem.
#[pyfunction]
#[pyo3(signature = (path, pickle_path = false))]
fn open(py: Python<'_>, path: PathBuf, pickle_path: bool) -> PyResult<table::PyTable> {
    let table = files::open_table(py, &path)?;
    Ok(table::PyTable::from_table(table, pickle_path.then_some(path)))
}

/// Names of the IPv4 engines.
#[pyfunction]
fn engines() -> Vec<&'static str> {
    registry::engines_of(Family::Ipv4).iter().map(|engine| engine.name).collect()
}

/// Names of the IPv6 engines.
#[pyfunction]
fn engines6() -> Vec<&'static str> {
    registry::engines_of(Family::Ipv6).iter().map(|engine| engine.name).collect()
}

/// The native part of the `fibkit` package.
#[pymodule]
fn _fibkit(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<Compiled>()?;
    module.add_class::<PyFib>()?;
    module.add_class::<PyFib6>()?;
    module.add_class::<table::PyTable>()?;
    module.add_class::<live::PyBgpSpeaker>()?;
    module.add_function(wrap_pyfunction!(engines, module)?)?;
    module.add_function(wrap_pyfunction!(engines6, module)?)?;
    module.add_function(wrap_pyfunction!(text::parse_addresses, module)?)?;
    module.add_function(wrap_pyfunction!(text::split_addresses, module)?)?;
    module.add_function(wrap_pyfunction!(open, module)?)?;
    module.add_function(wrap_pyfunction!(_restore, module)?)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
