//! Python values in and out: `nexthops` and the `values` array. A wrong
//! `nexthops` is a `TypeError` (not an int) or a `ValueError` (out of
//! range), naming it.

use std::net::IpAddr;

use numpy::PyArray1;
use pyo3::exceptions::{PyMemoryError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyInt;

use fibkit::nexthop::{Label, Mapping, NextHopTable};
use fibkit::NextHop;

/// `object` as a Python int, if it is one or stands for one as numpy's
/// integer scalars do (`operator.index`).
fn as_int<'py>(object: &Bound<'py, PyAny>) -> Option<Bound<'py, PyInt>> {
    let index = object.py().import("operator").ok()?.getattr("index").ok()?;
    index.call1((object,)).ok()?.cast_into::<PyInt>().ok()
}

/// The name of `object`'s Python type, for messages.
fn type_name(object: &Bound<'_, PyAny>) -> String {
    object.get_type().name().map_or_else(|_| "?".to_string(), |name| name.to_string())
}

/// The mapping `nexthops` asks for: none (distinct values), or
/// `value % nexthops + 1` for `nexthops` in `1..=2**32-1` (the indexes
/// `1..=nexthops` must fit a 32-bit next hop).
pub fn mapping(nexthops: Option<&Bound<'_, PyAny>>) -> PyResult<Mapping> {
    let Some(nexthops) = nexthops else {
        return Ok(Mapping::Distinct);
    };
    let range = || {
        let message = format!("nexthops must be between 1 and {} (2**32-1), got {nexthops}", u32::MAX);
        Err(PyValueError::new_err(message))
    };
    match nexthops.extract::<u32>() {
        Ok(0) => range(),
        Ok(count) => Ok(Mapping::Modulo(count)),
        Err(_) if as_int(nexthops).is_some() => range(),
        Err(_) => Err(PyTypeError::new_err(format!("nexthops must be an int or None, got {}", type_name(nexthops)))),
    }
}

/// `values[i]`, for every next-hop index `i` up to `last` (the largest the
/// FIB's routes use): the number index `i` stands for. A number label is
/// itself, an address label its integer (an IPv6 address folded to 64
/// bits); with `nexthops`, the index itself; 0 for no route.
pub fn values<'py>(py: Python<'py>, next_hops: &NextHopTable, last: NextHop) -> PyResult<Bound<'py, PyAny>> {
    let number = |hop: NextHop| -> u64 {
        match next_hops.mapping() {
            Mapping::Modulo(_) => u64::from(hop),
            Mapping::Distinct => next_hops.label(hop).map_or(0, |label| match label {
                Label::Addr(IpAddr::V4(addr)) => u64::from(u32::from(addr)),
                other => other.as_number(),
            }),
        }
    };
    let count = last as usize + 1;
    let mut numbers: Vec<u64> = Vec::new();
    numbers
        .try_reserve_exact(count)
        .map_err(|_| PyMemoryError::new_err(format!("values: no memory for {count} next hops")))?;
    numbers.extend((0..=last).map(number));
    Ok(PyArray1::from_vec(py, numbers).into_any())
}
