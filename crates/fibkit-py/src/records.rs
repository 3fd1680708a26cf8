//! Records to Python: one record as a dict, and the fields of a batch's
//! answers as Arrow arrays (built in `fibkit._records` from buffers made
//! here: numbers and offsets are numpy arrays handed over without a copy).

use numpy::PyArray1;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use fibkit::compiled::Values;
use fibkit::records::{ColumnData, FieldRef, FieldSpec, Records};
use fibkit::{NextHop, NO_ROUTE};

/// A field's value as Python sees it: None, int, float, bool, str (text
/// and addresses), or a list of ints.
fn field_object<'py>(py: Python<'py>, value: FieldRef<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        FieldRef::Null => py.None().into_bound(py),
        FieldRef::Int(number) => number.into_pyobject(py)?.into_any(),
        FieldRef::Float(number) => number.into_pyobject(py)?.into_any(),
        FieldRef::Bool(flag) => pyo3::types::PyBool::new(py, flag).to_owned().into_any(),
        FieldRef::Text(text) => PyString::new(py, text).into_any(),
        FieldRef::Addr(addr) => PyString::new(py, &addr.to_string()).into_any(),
        FieldRef::Ints(numbers) => PyList::new(py, numbers)?.into_any(),
    })
}

/// Next hop `hop`'s record as a dict of its fields; None for no route.
pub fn record_dict<'py>(py: Python<'py>, records: &Records, hop: NextHop) -> PyResult<Option<Bound<'py, PyAny>>> {
    if hop == NO_ROUTE || hop as usize > records.len() {
        return Ok(None);
    }
    let dict = PyDict::new(py);
    for (index, field) in records.fields().enumerate() {
        let value = records.get(hop, index).unwrap_or(FieldRef::Null);
        dict.set_item(&field.name, field_object(py, value)?)?;
    }
    Ok(Some(dict.into_any()))
}

/// The field indexes `fields` names: a string (`"asn,org"`) or a list of
/// names; True or `"*"`: every field.
pub fn chosen_fields(values: &Values, fields: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    let records = values.records().ok_or_else(|| {
        PyValueError::new_err("fields=: the table's values are not records (load it with fields=...)")
    })?;
    let all = || (0..records.fields().len()).collect();
    if fields.extract::<bool>().is_ok_and(|flag| flag) {
        return Ok(all());
    }
    let names: Vec<String> = match fields.extract::<String>() {
        Ok(list) => FieldSpec::parse(&list)
            .map_err(|error| PyValueError::new_err(error.to_string()))?
            .fields
            .into_iter()
            .map(|(name, _)| name)
            .chain(list.split(',').map(str::trim).filter(|item| *item == "*").map(String::from))
            .collect(),
        Err(_) => fields
            .extract::<Vec<String>>()
            .map_err(|_| PyTypeError::new_err("fields is True, a string (\"asn,org\") or a list of field names"))?,
    };
    let mut chosen = Vec::new();
    for name in names {
        if name == "*" {
            chosen.extend((0..records.fields().len()).filter(|index| !chosen.contains(index)).collect::<Vec<_>>());
            continue;
        }
        let index = records.field_index(&name).ok_or_else(|| {
            let known: Vec<&str> = records.fields().map(|field| field.name.as_str()).collect();
            PyValueError::new_err(format!("the table has no field {name:?} (its fields: {})", known.join(", ")))
        })?;
        chosen.push(index);
    }
    Ok(chosen)
}

/// A validity bitmap (Arrow's: bit `i` of byte `i / 8`, least significant
/// first) of `hops`' values in `valid`, and the count of nulls.
fn validity(valid: &[u8], hops: &[NextHop]) -> (Vec<u8>, usize) {
    let present =
        |hop: NextHop| (hop as usize).checked_sub(1).and_then(|row| valid.get(row)).is_some_and(|&flag| flag != 0);
    let bitmap = hops
        .chunks(8)
        .map(|chunk| chunk.iter().enumerate().fold(0u8, |byte, (bit, &hop)| byte | u8::from(present(hop)) << bit))
        .collect();
    (bitmap, hops.iter().filter(|&&hop| !present(hop)).count())
}

/// Gathers `values` at `hops`' rows (the default where no row).
fn take<T: Copy + Default>(values: &[T], hops: &[NextHop]) -> Vec<T> {
    hops.iter()
        .map(|&hop| (hop as usize).checked_sub(1).and_then(|row| values.get(row)).copied().unwrap_or_default())
        .collect()
}

/// Gathers variable-length rows (text bytes, list items) at `hops`:
/// Arrow's 64-bit offsets and the items.
fn take_spans<T: Copy>(offsets: &[u32], items: &[T], hops: &[NextHop]) -> (Vec<i64>, Vec<T>) {
    let mut out_offsets = Vec::with_capacity(hops.len() + 1);
    let mut out = Vec::new();
    out_offsets.push(0);
    for &hop in hops {
        if let Some(row) = (hop as usize).checked_sub(1) {
            if let (Some(&start), Some(&end)) = (offsets.get(row), offsets.get(row + 1)) {
                out.extend_from_slice(items.get(start as usize..end as usize).unwrap_or_default());
            }
        }
        out_offsets.push(out.len() as i64);
    }
    (out_offsets, out)
}

/// The columns of `fields` for the answers `hops`, as `(name, type,
/// null count, validity bitmap, buffers)` tuples for
/// `fibkit._records.record_batch`: `type` is `int64`, `float64`, `bool`,
/// `large_string` (text; addresses as text) or `large_list` (of int64).
pub fn columns<'py>(
    py: Python<'py>,
    records: &Records,
    hops: &[NextHop],
    fields: &[usize],
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for &field in fields {
        let (Some(view), Some(name)) = (records.column(field), records.fields().nth(field)) else { continue };
        let name = name.name.clone();
        let (bitmap, nulls) = py.detach(|| validity(view.valid, hops));
        let bitmap = PyArray1::from_vec(py, bitmap).into_any();
        let (kind, buffers): (&str, Vec<Bound<'py, PyAny>>) = match view.data {
            ColumnData::Int(values) => {
                ("int64", vec![PyArray1::from_vec(py, py.detach(|| take(values, hops))).into_any()])
            }
            ColumnData::Float(values) => {
                ("float64", vec![PyArray1::from_vec(py, py.detach(|| take(values, hops))).into_any()])
            }
            ColumnData::Bool(values) => {
                let (bits, _) = py.detach(|| validity(values, hops));
                ("bool", vec![PyArray1::from_vec(py, bits).into_any()])
            }
            ColumnData::Text(bytes) => {
                let (offsets, data) = py.detach(|| take_spans(view.offsets, bytes, hops));
                (
                    "large_string",
                    vec![PyArray1::from_vec(py, offsets).into_any(), PyArray1::from_vec(py, data).into_any()],
                )
            }
            ColumnData::Addr(values) => {
                let (offsets, data) = py.detach(|| addr_texts(view.valid, values, hops));
                (
                    "large_string",
                    vec![PyArray1::from_vec(py, offsets).into_any(), PyArray1::from_vec(py, data).into_any()],
                )
            }
            ColumnData::Ints(items) => {
                let (offsets, data) = py.detach(|| take_spans(view.offsets, items, hops));
                (
                    "large_list",
                    vec![PyArray1::from_vec(py, offsets).into_any(), PyArray1::from_vec(py, data).into_any()],
                )
            }
        };
        list.append((name, kind, nulls, bitmap, buffers))?;
    }
    Ok(list)
}

/// Addresses at `hops` as the texts of a string array.
fn addr_texts(valid: &[u8], values: &[u128], hops: &[NextHop]) -> (Vec<i64>, Vec<u8>) {
    use std::io::Write;
    let mut offsets = Vec::with_capacity(hops.len() + 1);
    let mut bytes = Vec::new();
    offsets.push(0);
    for &hop in hops {
        if let Some(row) = (hop as usize).checked_sub(1) {
            match (valid.get(row), values.get(row)) {
                (Some(4), Some(&value)) => _ = write!(bytes, "{}", std::net::Ipv4Addr::from(value as u32)),
                (Some(6), Some(&value)) => _ = write!(bytes, "{}", std::net::Ipv6Addr::from(value)),
                _ => {}
            }
        }
        offsets.push(bytes.len() as i64);
    }
    (offsets, bytes)
}
