//! The arrays `lookup_batch` takes: checked here, so that a wrong dtype,
//! shape or flag is a `TypeError`/`ValueError` naming what was expected
//! and what was given, never a panic or a silently wrong read.
//!
//! Keys are read through a slice, so an array that is not C-contiguous and
//! aligned (a strided or reversed view, a field of a packed record array, a
//! Fortran-ordered matrix) is copied first. `out` is written in place and
//! must be a contiguous, aligned, writeable uint32 array. When `out` shares
//! memory with the keys (`out=addrs` itself, or views of one buffer), the
//! keys are copied before any answer is written, so every key is read as
//! the caller gave it.

use numpy::{
    BorrowError, Element, PyArray1, PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// `object` as an ndarray of element type `T`; a `TypeError` saying
/// "`name` must be `expected`, got ..." (the dtype, or the Python type of
/// what is not an array) otherwise.
fn typed<'py, T: Element>(
    object: &Bound<'py, PyAny>,
    name: &str,
    expected: &str,
) -> PyResult<Bound<'py, PyUntypedArray>> {
    let Ok(array) = object.cast::<PyUntypedArray>() else {
        return Err(PyTypeError::new_err(format!("{name} must be {expected}, got {}", object.get_type().name()?)));
    };
    let dtype = array.dtype();
    if !dtype.is_equiv_to(&numpy::dtype::<T>(object.py())) {
        return Err(PyTypeError::new_err(format!("{name} must be {expected}, got {dtype}")));
    }
    Ok(array.clone())
}

/// `array` (of element type `T`) itself when a slice can read it
/// (C-contiguous and aligned), else a copy that can.
fn readable<'py, T: Element>(array: Bound<'py, PyUntypedArray>) -> PyResult<Bound<'py, PyArrayDyn<T>>> {
    let array =
        if array.is_c_contiguous() && array.is_aligned() { array.into_any() } else { array.call_method0("copy")? };
    Ok(array.cast_into::<PyArrayDyn<T>>()?)
}

/// IPv4 keys: a 1-dimensional uint32 array, readable as a slice.
pub fn keys4<'py>(object: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArrayDyn<u32>>> {
    let array = typed::<u32>(object, "addrs", "a uint32 array")?;
    if array.ndim() != 1 {
        let message = format!("addrs must be 1-dimensional, got shape {}", shape(array.shape()));
        return Err(PyValueError::new_err(message));
    }
    readable(array)
}

/// IPv6 keys: an (N, 16) uint8 array (one address a row, network byte
/// order), readable as a slice of N * 16 bytes.
pub fn keys6<'py>(object: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArrayDyn<u8>>> {
    let array = typed::<u8>(object, "addrs", "an (N, 16) uint8 array or an (N, 2) uint64 array")?;
    if !matches!(array.shape(), [_, 16]) {
        return Err(PyValueError::new_err(format!("addrs must have shape (N, 16), got {}", shape(array.shape()))));
    }
    readable(array)
}

/// IPv6 keys as two uint64 columns: an (N, 2) uint64 array (one address a
/// row: its high 64 bits, then its low 64 bits, as numbers), readable as a
/// slice of N * 2 words; `None` if `object` is no uint64 array.
pub fn keys6_halves<'py>(object: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyArrayDyn<u64>>>> {
    let Ok(array) = typed::<u64>(object, "addrs", "an (N, 2) uint64 array") else { return Ok(None) };
    if !matches!(array.shape(), [_, 2]) {
        return Err(PyValueError::new_err(format!(
            "addrs of uint64 must have shape (N, 2), got {}",
            shape(array.shape())
        )));
    }
    readable(array).map(Some)
}

/// The output array: `out` if given (checked: uint32, 1-dimensional, at
/// least `len` slots, contiguous and aligned), else a new one (by numpy,
/// whose failure to allocate is a `MemoryError`).
pub fn output<'py>(
    py: Python<'py>,
    out: Option<&Bound<'py, PyAny>>,
    len: usize,
) -> PyResult<Bound<'py, PyArray1<u32>>> {
    let Some(out) = out else {
        let array = py.import("numpy")?.call_method1("empty", (len, numpy::dtype::<u32>(py)))?;
        return Ok(array.cast_into::<PyArray1<u32>>()?);
    };
    let array = typed::<u32>(out, "out", "a uint32 array")?;
    if array.ndim() != 1 {
        return Err(PyValueError::new_err(format!("out must be 1-dimensional, got shape {}", shape(array.shape()))));
    }
    if array.len() < len {
        return Err(PyValueError::new_err(format!("out has {} slots for {len} addresses", array.len())));
    }
    if !array.is_contiguous() {
        return Err(PyValueError::new_err("out must be a contiguous uint32 array (not a strided view)"));
    }
    if !array.is_aligned() {
        return Err(PyValueError::new_err(
            "out must be aligned (a uint32 array whose data starts on a 4-byte boundary)",
        ));
    }
    Ok(array.cast_into::<PyArray1<u32>>()?)
}

/// `keys` as they are, or a copy of them when their data overlap the
/// contiguous `out`'s (which is about to be written).
pub fn apart<'py, T: Element>(
    keys: Bound<'py, PyArrayDyn<T>>,
    out: &Bound<'py, PyArray1<u32>>,
) -> PyResult<Bound<'py, PyArrayDyn<T>>> {
    let start = keys.data() as usize;
    let end = start + keys.len() * std::mem::size_of::<T>();
    let out_start = out.data() as usize;
    let out_end = out_start + out.len() * std::mem::size_of::<u32>();
    if start < end && out_start < out_end && start < out_end && out_start < end {
        return Ok(keys.call_method0("copy")?.cast_into::<PyArrayDyn<T>>()?);
    }
    Ok(keys)
}

/// The `ValueError` of a failed borrow of array `name`.
pub fn borrow_error(name: &'static str) -> impl Fn(BorrowError) -> PyErr {
    move |error| match error {
        BorrowError::NotWriteable => PyValueError::new_err(format!("{name} is read-only (its WRITEABLE flag is off)")),
        BorrowError::AlreadyBorrowed => PyValueError::new_err(format!(
            "{name} is in use by another lookup_batch (running on another thread, the GIL released)"
        )),
        _ => PyValueError::new_err(format!("{name}: {error}")),
    }
}

/// A shape in Python's notation: `(16,)`, `(2, 2)`.
fn shape(dims: &[usize]) -> String {
    match dims {
        [one] => format!("({one},)"),
        _ => format!("({})", dims.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")),
    }
}
