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
use crate::{convert, load_table};

/// A routing table of both families compiled by fibkit's engines.
///
/// `Table.load(path, engines=None, nexthops=None, strict=False)` builds
/// from a table file with IPv4 and IPv6 routes (each family gets the first
/// of `engines` that serves it: d18r and poptrie18 by default);
/// `Table.default()` from the embedded default table. `lookup_batch(addrs)`
/// answers strings of either family in one call; `values[hops]` gives the
/// routes' values.
#[pyclass(frozen, subclass, name = "Table", module = "fibkit")]
pub struct PyTable {
    table: CompiledTable,
    /// The largest next-hop index the routes use.
    last: NextHop,
}

impl PyTable {
    fn build(py: Python<'_>, routes: RouteTable, engines: Option<Vec<String>>) -> PyResult<Self> {
        let last = routes.v4.iter().map(|(_, hop)| hop).chain(routes.v6.iter().map(|(_, hop)| hop)).max();
        let options = CompileOptions { engines: engines.unwrap_or_default(), prefixes: false };
        let table = py.detach(|| CompiledTable::build(routes, &options));
        let table = table.map_err(|error| PyValueError::new_err(error.to_string()))?;
        Ok(PyTable { table, last: last.unwrap_or(NO_ROUTE) })
    }
}

/// The answers of `keys` in `family` (all no route without one), each
/// written to `out[positions[i]]`.
fn answer<A: Address>(family: Option<&CompiledFamily<A>>, keys: &[A], positions: &[usize], out: &mut [NextHop]) {
    let mut answers = vec![NO_ROUTE; keys.len()];
    if let Some(family) = family {
        family.lookup_batch(keys, &mut answers);
    }
    for (&position, answer) in positions.iter().zip(answers) {
        if let Some(slot) = out.get_mut(position) {
            *slot = family.map_or(NO_ROUTE, |family| family.next_hop(answer));
        }
    }
}

#[pymethods]
impl PyTable {
    /// Builds from a table file (ipasn, `PREFIX VALUE` text, range CSV,
    /// MRT; gz or bz2) with routes of either family or both.
    #[staticmethod]
    #[pyo3(signature = (path, engines = None, nexthops = None, strict = false))]
    fn load(
        py: Python<'_>,
        path: PathBuf,
        engines: Option<Vec<String>>,
        nexthops: Option<&Bound<'_, PyAny>>,
        strict: bool,
    ) -> PyResult<Self> {
        let mapping = convert::mapping(nexthops)?;
        let routes = py.detach(|| load_table(path, mapping, strict))?;
        Self::build(py, routes, engines)
    }

    /// Builds from the embedded default table (synthetic, IPv4).
    #[staticmethod]
    #[pyo3(signature = (engines = None, nexthops = None))]
    fn default(py: Python<'_>, engines: Option<Vec<String>>, nexthops: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let mapping = convert::mapping(nexthops)?;
        let routes = py.detach(|| load::synthetic::default_table(mapping));
        Self::build(py, routes, engines)
    }

    /// Next-hop indexes (0: no route) of address strings of either family
    /// in one array: a list of `str` (parsed with the GIL held), a numpy
    /// `str` or `bytes` array (parsed with the GIL released), or any other
    /// sequence of `str`; the lookups release the GIL. An element that is
    /// no address is a `ValueError` naming its index, its text and why.
    fn lookup_batch<'py>(&self, py: Python<'py>, addrs: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<u32>>> {
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
        py.detach(|| {
            answer(self.table.family_fib::<u32>(), &keys4, &positions4, &mut out);
            answer(self.table.family_fib::<u128>(), &keys6, &positions6, &mut out);
        });
        Ok(PyArray1::from_vec(py, out))
    }

    /// `values[i]`: what next-hop index `i` stands for, as `Fib.values`.
    #[getter]
    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::values(py, &self.table.next_hops, self.last)
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
        format!("<fibkit.Table {}: IPv4 {}, IPv6 {}>", self.table.name, v4.unwrap_or_else(none), v6.unwrap_or_else(none))
    }
}
