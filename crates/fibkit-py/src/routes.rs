//! `Table.covering` and `Table.within`: lists of routes as Arrow arrays,
//! their offsets and children built here as numpy arrays and handed to
//! pyarrow (`ListArray.from_arrays`, `StructArray.from_arrays`,
//! `StringArray.from_buffers`): no Arrow library on the Rust side.
//!
//! ```text
//!  list<struct<prefix: string, prefix_len: uint8, next_hop: uint32>>
//!  offsets:  | 0 | 3 | 3 | 4 |          address i's routes: rows offsets[i] .. offsets[i + 1]
//!  rows:     | 0.0.0.0/0 | 8.0.0.0/8 | 8.8.8.0/24 | 1.1.1.0/24 |
//! ```

use std::io::Write as _;

use numpy::PyArray1;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use fibkit::addr::IpPrefix;
use fibkit::compiled::{CompiledFamily, CompiledTable, NoPrefixes};
use fibkit::load::{self, AnyAddr};
use fibkit::{Address, NextHop, Prefix};

use crate::text::Split;

/// The field names of a route's struct, in order.
const FIELDS: [&str; 3] = ["prefix", "prefix_len", "next_hop"];

/// Routes in rows, and lists of them: the arrays of an Arrow
/// `list<struct<prefix, prefix_len, next_hop>>`.
#[derive(Default)]
pub struct RouteLists {
    /// Where each list's rows start, then where the last ends.
    offsets: Vec<i32>,
    /// The prefixes' text, back to back.
    text: Vec<u8>,
    /// Where each row's text starts, then where the last ends.
    text_offsets: Vec<i32>,
    lengths: Vec<u8>,
    hops: Vec<NextHop>,
}

/// Arrow's 32-bit offsets cannot reach this far.
fn too_large() -> PyErr {
    PyValueError::new_err("the routes listed take more than 2^31 rows or bytes of text: ask in smaller batches")
}

impl RouteLists {
    fn new() -> Self {
        RouteLists { offsets: vec![0], text_offsets: vec![0], ..Default::default() }
    }

    /// Adds a row.
    fn push<A: Address>(&mut self, (prefix, hop): (Prefix<A>, NextHop)) -> PyResult<()> {
        let _ = write!(self.text, "{prefix}");
        self.text_offsets.push(i32::try_from(self.text.len()).map_err(|_| too_large())?);
        self.lengths.push(prefix.prefix_len());
        self.hops.push(hop);
        Ok(())
    }

    /// Ends the current list (its rows: those added since the last end).
    fn end_list(&mut self) -> PyResult<()> {
        self.offsets.push(i32::try_from(self.lengths.len()).map_err(|_| too_large())?);
        Ok(())
    }

    /// The rows as a pyarrow `StructArray`.
    fn struct_array<'py>(&mut self, py: Python<'py>, pyarrow: &Bound<'py, PyModule>) -> PyResult<Bound<'py, PyAny>> {
        let rows = self.lengths.len();
        let buffer = |array: Bound<'py, PyAny>| pyarrow.call_method1("py_buffer", (array,));
        let text_offsets = buffer(PyArray1::from_vec(py, std::mem::take(&mut self.text_offsets)).into_any())?;
        let text = buffer(PyArray1::from_vec(py, std::mem::take(&mut self.text)).into_any())?;
        let prefixes = pyarrow.getattr("StringArray")?.call_method1("from_buffers", (rows, text_offsets, text))?;
        let lengths = pyarrow.call_method1("array", (PyArray1::from_vec(py, std::mem::take(&mut self.lengths)),))?;
        let hops = pyarrow.call_method1("array", (PyArray1::from_vec(py, std::mem::take(&mut self.hops)),))?;
        let names = PyDict::new(py);
        names.set_item("names", FIELDS.to_vec())?;
        pyarrow.getattr("StructArray")?.call_method("from_arrays", (vec![prefixes, lengths, hops],), Some(&names))
    }

    /// The lists as a pyarrow `ListArray` of route structs.
    fn list_array<'py>(mut self, py: Python<'py>, pyarrow: &Bound<'py, PyModule>) -> PyResult<Bound<'py, PyAny>> {
        let rows = self.struct_array(py, pyarrow)?;
        let offsets = pyarrow.call_method1("array", (PyArray1::from_vec(py, std::mem::take(&mut self.offsets)),))?;
        pyarrow.getattr("ListArray")?.call_method1("from_arrays", (offsets, rows))
    }
}

/// pyarrow, or an `ImportError` saying what needs it.
fn pyarrow<'py>(py: Python<'py>, method: &str) -> PyResult<Bound<'py, PyModule>> {
    py.import("pyarrow").map_err(|error| {
        pyo3::exceptions::PyImportError::new_err(format!("Table.{method} answers pyarrow arrays: {error}"))
    })
}

/// The `ValueError` of a table compiled without prefixes.
fn no_prefixes(method: &str) -> PyErr {
    PyValueError::new_err(format!("Table.{method} needs a table loaded with prefixes=True: {NoPrefixes}"))
}

/// Refuses a table whose families (any of them) keep no routes.
fn check_prefixes(table: &CompiledTable, method: &str) -> PyResult<()> {
    let families =
        [table.v4.as_ref().map(CompiledFamily::has_prefixes), table.v6.as_ref().map(CompiledFamily::has_prefixes)];
    if families.contains(&Some(false)) {
        return Err(no_prefixes(method));
    }
    Ok(())
}

/// Adds the routes of `family` covering `prefix` (inside it, with
/// `inside`) as rows.
fn add<A: Address>(
    lists: &mut RouteLists,
    family: Option<&CompiledFamily<A>>,
    prefix: Prefix<A>,
    inside: bool,
) -> PyResult<()> {
    let Some(family) = family else { return Ok(()) };
    if inside {
        family.covered(prefix).map_err(|_| no_prefixes("within"))?.try_for_each(|route| lists.push(route))
    } else {
        family.covering(prefix).map_err(|_| no_prefixes("covering"))?.try_for_each(|route| lists.push(route))
    }
}

/// Adds the routes related to `prefix` (covering it, or inside it with `inside`).
fn add_any(lists: &mut RouteLists, table: &CompiledTable, prefix: IpPrefix, inside: bool) -> PyResult<()> {
    match prefix {
        IpPrefix::V4(prefix) => add(lists, table.family_fib::<u32>(), prefix, inside),
        IpPrefix::V6(prefix) => add(lists, table.family_fib::<u128>(), prefix, inside),
    }
}

/// `Table.covering`: a list per address of `split`, in input order.
pub fn covering<'py>(py: Python<'py>, table: &CompiledTable, split: &Split) -> PyResult<Bound<'py, PyAny>> {
    check_prefixes(table, "covering")?;
    let pyarrow = pyarrow(py, "covering")?;
    let lists = py.detach(|| -> PyResult<RouteLists> {
        // Each input position's family and key.
        let mut order = vec![None; split.len];
        for (&position, &key) in split.positions4.iter().zip(&split.keys4) {
            if let Some(slot) = order.get_mut(position) {
                *slot = Some(IpPrefix::V4(Prefix::host(key)));
            }
        }
        for (&position, &key) in split.positions6.iter().zip(&split.keys6) {
            if let Some(slot) = order.get_mut(position) {
                *slot = Some(IpPrefix::V6(Prefix::host(key)));
            }
        }
        let mut lists = RouteLists::new();
        for prefix in order {
            if let Some(prefix) = prefix {
                add_any(&mut lists, table, prefix, false)?;
            }
            lists.end_list()?;
        }
        Ok(lists)
    })?;
    lists.list_array(py, &pyarrow)
}

/// The prefix `text` names: a prefix, or an address as its /32 or /128,
/// an IPv4-mapped IPv6 one as the IPv4 one it maps (as lookups take
/// them).
fn query(text: &str) -> Result<IpPrefix, String> {
    let prefix = match load::parse_address(text.as_bytes()) {
        Ok(AnyAddr::V4(addr)) => IpPrefix::V4(Prefix::host(addr)),
        Ok(AnyAddr::V6(addr)) => IpPrefix::V6(Prefix::host(addr)),
        Err(_) => text.parse::<IpPrefix>().map_err(|error| error.to_string())?,
    };
    Ok(match prefix {
        IpPrefix::V6(v6) if v6.prefix_len() >= 96 && v6.addr() >> 32 == 0xffff => {
            IpPrefix::V4(Prefix::truncating(v6.addr() as u32, v6.prefix_len() - 96))
        }
        prefix => prefix,
    })
}

/// `Table.within`: the routes inside one prefix (a `str`) as a
/// `StructArray`, or inside each of a sequence of them as a `ListArray`.
pub fn within<'py>(
    py: Python<'py>,
    table: &CompiledTable,
    prefixes: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    check_prefixes(table, "within")?;
    let pyarrow = pyarrow(py, "within")?;
    let mut lists = RouteLists::new();
    if let Ok(text) = prefixes.cast::<PyString>() {
        let text = text.to_cow()?;
        let prefix = query(text.trim()).map_err(|problem| PyValueError::new_err(format!("{text:?}: {problem}")))?;
        py.detach(|| add_any(&mut lists, table, prefix, true))?;
        return lists.struct_array(py, &pyarrow);
    }
    let items = prefixes.try_iter().map_err(|_| {
        let kind = prefixes.get_type().name().map_or_else(|_| "?".to_string(), |name| name.to_string());
        PyTypeError::new_err(format!("Table.within takes a prefix string or a sequence of them, got {kind}"))
    })?;
    let mut queries = Vec::new();
    for (index, item) in items.enumerate() {
        let item = item?;
        let text = item.cast::<PyString>().map_err(|_| {
            let kind = item.get_type().name().map_or_else(|_| "?".to_string(), |name| name.to_string());
            PyTypeError::new_err(format!("Table.within: element {index} is {kind}, not a prefix string"))
        })?;
        let text = text.to_cow()?;
        let prefix = query(text.trim())
            .map_err(|problem| PyValueError::new_err(format!("element {index}: {text:?}: {problem}")))?;
        queries.push(prefix);
    }
    py.detach(|| {
        queries.into_iter().try_for_each(|prefix| {
            add_any(&mut lists, table, prefix, true)?;
            lists.end_list()
        })
    })?;
    lists.list_array(py, &pyarrow)
}
