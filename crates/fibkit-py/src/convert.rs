//! Python values in and out: addresses, route values, `nexthops`, and the
//! `values` array. Every wrong input is a `TypeError` (not an int or a
//! string), an `OverflowError` (an int out of an address's range) or a
//! `ValueError` (anything else out of range or malformed), naming it.

use std::net::IpAddr;

use numpy::PyArray1;
use pyo3::exceptions::{PyMemoryError, PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyString};

use fibkit::addr::Address;
use fibkit::compiled::Values;
use fibkit::load;
use fibkit::nexthop::{Label, Mapping};
use fibkit::{NextHop, NO_ROUTE};

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

/// An address of family `A` from an int or a string in the family's
/// notation; an int out of `0..2**BITS` is an `OverflowError`, a bool a
/// `TypeError`.
pub fn address<A: Address + TryFrom<u128>>(addr: &Bound<'_, PyAny>) -> PyResult<A> {
    let family = A::FAMILY;
    if addr.is_instance_of::<PyBool>() {
        // An int to Python, but no address: True would be 0.0.0.1.
        return Err(PyTypeError::new_err("an address is an int or a string, got bool"));
    }
    let above = || format!("is not an {family} address (above 2**{}-1)", A::BITS);
    if let Ok(number) = addr.extract::<u128>() {
        return A::try_from(number).map_err(|_| PyOverflowError::new_err(format!("{number} {}", above())));
    }
    if let Ok(text) = addr.cast::<PyString>() {
        let text = text.to_cow()?;
        return A::parse_addr(&text)
            .ok_or_else(|| PyValueError::new_err(format!("{text:?} is not an {family} address")));
    }
    match as_int(addr) {
        Some(int) if int.lt(0)? => {
            Err(PyOverflowError::new_err(format!("{int} is not an {family} address (negative)")))
        }
        Some(int) => Err(PyOverflowError::new_err(format!("{int} {}", above()))),
        None => Err(PyTypeError::new_err(format!("an address is an int or a string, got {}", type_name(addr)))),
    }
}

/// A route's value: an int (an ASN, any number up to 2**64-1), or a
/// string read as the table files' value column reads it
/// ([`load::parse_value`]: decimal digits, or an IPv4/IPv6 address).
pub fn label(value: &Bound<'_, PyAny>) -> PyResult<Label> {
    if let Ok(number) = value.extract::<u64>() {
        return Ok(Label::Number(number));
    }
    if let Ok(text) = value.cast::<PyString>() {
        let text = text.to_cow()?;
        if text.is_empty() {
            return Err(PyValueError::new_err("the value is an empty string"));
        }
        return load::parse_value(&text).map_err(PyValueError::new_err);
    }
    match as_int(value) {
        Some(int) if int.lt(0)? => Err(PyValueError::new_err(format!("value {int} is negative"))),
        Some(int) => Err(PyValueError::new_err(format!("value {int} is too large (above 2**64-1)"))),
        None => Err(PyTypeError::new_err(format!(
            "a value is an int or a string (a number or an address), got {}",
            type_name(value)
        ))),
    }
}

/// A label as Python sees it: an int, or an address string.
pub fn label_object<'py>(py: Python<'py>, label: Label) -> PyResult<Bound<'py, PyAny>> {
    match label {
        Label::Number(number) => Ok(number.into_pyobject(py)?.into_any()),
        Label::Addr(addr) => Ok(PyString::new(py, &addr.to_string()).into_any()),
        Label::Record(row) => Ok(format!("record #{row}").into_pyobject(py)?.into_any()),
    }
}

/// What next-hop index `hop` stands for in `values`: a record's dict, or
/// the label's int or address string; None for none.
pub fn value_object<'py>(py: Python<'py>, values: &Values, hop: NextHop) -> PyResult<Option<Bound<'py, PyAny>>> {
    match (values.records(), values.label(hop)) {
        (Some(records), Some(Label::Record(_))) => crate::records::record_dict(py, records, hop),
        (_, label) => label.map(|label| label_object(py, label)).transpose(),
    }
}

/// What a single-address `lookup` answers for next hop `hop`: the route's
/// value (an int, or an address string) as `value(hop)` gives it; with
/// `nexthops`, the next hop itself (the value it stands for was mapped
/// onto it); None for no route.
pub fn route_value<'py>(py: Python<'py>, values: &Values, hop: NextHop) -> PyResult<Option<Bound<'py, PyAny>>> {
    if hop == NO_ROUTE {
        return Ok(None);
    }
    match values.mapping() {
        Mapping::Modulo(_) => Ok(Some(hop.into_pyobject(py)?.into_any())),
        Mapping::Distinct => value_object(py, values, hop),
    }
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

/// The most threads a batch is split across.
pub const MAX_THREADS: u64 = 1024;

/// `threads` (None: one thread) as a count from 1 to [`MAX_THREADS`]:
/// anything else is a `ValueError` naming the range (an int) or a
/// `TypeError` (a bool or another type).
pub fn threads(threads: Option<&Bound<'_, PyAny>>) -> PyResult<Option<usize>> {
    let Some(threads) = threads else {
        return Ok(None);
    };
    let range = || PyValueError::new_err(format!("threads must be from 1 to {MAX_THREADS}, got {threads}"));
    if threads.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err("threads must be an int or None, got bool"));
    }
    match threads.extract::<u64>() {
        Ok(count @ 1..=MAX_THREADS) => usize::try_from(count).map(Some).map_err(|_| range()),
        Ok(_) => Err(range()),
        Err(_) if as_int(threads).is_some() => Err(range()),
        Err(_) => Err(PyTypeError::new_err(format!("threads must be an int or None, got {}", type_name(threads)))),
    }
}

/// `values[i]`, for every next-hop index `i` up to `last` (the largest the
/// FIB's routes use): the number index `i` stands for. A number label is
/// itself, an address label its integer; with `nexthops`, the index
/// itself; 0 for no route. A uint64 array, unless some label is an IPv6
/// address (128 bits): then an object array of Python ints, so that
/// distinct addresses never share a number.
///
/// With records, an object array of each index's record as a dict (None
/// for 0).
pub fn values<'py>(py: Python<'py>, next_hops: &Values, last: NextHop) -> PyResult<Bound<'py, PyAny>> {
    if next_hops.records().is_some() {
        let objects = (0..=last)
            .map(|hop| Ok(value_object(py, next_hops, hop)?.map_or_else(|| py.None(), Bound::unbind)))
            .collect::<PyResult<Vec<Py<PyAny>>>>()?;
        return Ok(PyArray1::from_vec(py, objects).into_any());
    }
    let number = |hop: NextHop| -> u128 {
        match next_hops.mapping() {
            Mapping::Modulo(_) => u128::from(hop),
            Mapping::Distinct => match next_hops.label(hop) {
                None => 0,
                Some(Label::Number(number)) => u128::from(number),
                Some(Label::Addr(IpAddr::V4(addr))) => u128::from(u32::from(addr)),
                Some(Label::Addr(IpAddr::V6(addr))) => u128::from(addr),
                Some(Label::Record(row)) => u128::from(row) + 1,
            },
        }
    };
    let wide = next_hops.mapping() == Mapping::Distinct
        && (1..=last).any(|hop| matches!(next_hops.label(hop), Some(Label::Addr(IpAddr::V6(_)))));
    if wide {
        let objects = (0..=last)
            .map(|hop| Ok(number(hop).into_pyobject(py)?.into_any().unbind()))
            .collect::<PyResult<Vec<Py<PyAny>>>>()?;
        return Ok(PyArray1::from_vec(py, objects).into_any());
    }
    let count = last as usize + 1;
    let mut numbers: Vec<u64> = Vec::new();
    numbers
        .try_reserve_exact(count)
        .map_err(|_| PyMemoryError::new_err(format!("values: no memory for {count} next hops")))?;
    numbers.extend((0..=last).map(|hop| number(hop) as u64));
    Ok(PyArray1::from_vec(py, numbers).into_any())
}
