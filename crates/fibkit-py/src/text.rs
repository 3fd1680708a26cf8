//! Address strings in bulk, parsed by fibkit's address parser: a numpy
//! `str` array (viewed as rows of uint32 code points) or `bytes` array
//! (rows of uint8), one address a row padded with NULs, with the GIL
//! released; or a list of `str`. `fibkit.ipv4_array` and
//! `fibkit.ipv6_array` make the views.

use numpy::{Element, PyArray1, PyArray2, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use fibkit::load::{parse_address, AnyAddr};

/// The longest text an address can be (IPv6 with an embedded IPv4: 45).
const LONGEST: usize = 64;

/// Why row `index` is not an address of the family asked for.
struct Refused {
    index: usize,
    text: String,
    reason: String,
}

/// Parses `rows` rows of `width` characters as addresses of `family` (4 or
/// 6), each handed to `put(row, address)`.
fn parse_rows<C: Copy + Into<u32>>(
    chars: &[C],
    rows: usize,
    width: usize,
    family: u8,
    mut put: impl FnMut(usize, AnyAddr),
) -> Result<(), Refused> {
    let mut text = [0u8; LONGEST];
    for index in 0..rows {
        let row = chars.get(index * width..(index + 1) * width).unwrap_or_default();
        let row = row.iter().position(|&char| char.into() == 0).map_or(row, |len| row.get(..len).unwrap_or_default());
        let blank = |char: &C| matches!((*char).into(), 9..=13 | 32);
        let start = row.iter().position(|char| !blank(char)).unwrap_or(row.len());
        let end = row.iter().rposition(|char| !blank(char)).map_or(start, |last| last + 1);
        let row = row.get(start..end).unwrap_or_default();
        let ascii = row.len() <= LONGEST && row.iter().all(|&char| char.into() < 128);
        let parsed = if ascii {
            for (byte, &char) in text.iter_mut().zip(row) {
                *byte = char.into() as u8;
            }
            parse_address(text.get(..row.len()).unwrap_or_default()).map_err(|error| error.to_string())
        } else {
            Err("not an IPv4 or IPv6 address".to_string())
        };
        let refuse = |reason: String| {
            let text = row.iter().map(|&char| char::from_u32(char.into()).unwrap_or('\u{fffd}')).collect();
            Refused { index, text, reason }
        };
        match (parsed, family) {
            (Ok(addr @ AnyAddr::V4(_)), 4) | (Ok(addr @ AnyAddr::V6(_)), 6) => put(index, addr),
            (Ok(AnyAddr::V6(_)), _) => return Err(refuse("an IPv6 address (ipv6_array takes it)".into())),
            (Ok(AnyAddr::V4(_)), _) => return Err(refuse("an IPv4 address (ipv4_array takes it)".into())),
            (Err(reason), _) => return Err(refuse(reason)),
        }
    }
    Ok(())
}

/// Parsed keys: IPv4 as they are, IPv6 as 16 bytes each (network order).
enum Keys {
    V4(Vec<u32>),
    V6(Vec<u8>),
}

/// Parses `chars` ((N, W) uint32 or uint8, C-contiguous) into IPv4 keys
/// (a uint32 array of N) or IPv6 keys ((N, 16) uint8, network byte
/// order), the GIL released.
fn parse<'py, C: Copy + Into<u32> + Element + Sync>(
    py: Python<'py>,
    chars: &Bound<'py, PyArray2<C>>,
    family: u8,
) -> PyResult<Bound<'py, PyAny>> {
    let &[rows, width] = chars.shape() else { return Err(PyValueError::new_err("chars must be 2-dimensional")) };
    let readonly = chars.try_readonly().map_err(|_| PyValueError::new_err("addrs is being written elsewhere"))?;
    let chars = readonly.as_slice()?;
    let outcome = py.detach(|| -> Result<Keys, Refused> {
        if family == 4 {
            let mut keys = vec![0u32; rows];
            parse_rows(chars, rows, width, 4, |row, addr| {
                if let (Some(slot), AnyAddr::V4(addr)) = (keys.get_mut(row), addr) {
                    *slot = addr;
                }
            })?;
            Ok(Keys::V4(keys))
        } else {
            let mut keys = vec![0u8; rows * 16];
            parse_rows(chars, rows, width, 6, |row, addr| {
                if let (Some(slot), AnyAddr::V6(addr)) = (keys.get_mut(row * 16..row * 16 + 16), addr) {
                    slot.copy_from_slice(&addr.to_be_bytes());
                }
            })?;
            Ok(Keys::V6(keys))
        }
    });
    match outcome {
        Ok(Keys::V4(keys)) => Ok(PyArray1::from_vec(py, keys).into_any()),
        Ok(Keys::V6(bytes)) => Ok(PyArray1::from_vec(py, bytes).reshape([rows, 16])?.into_any()),
        Err(refused) => {
            let text = fibkit::error::shorten(&refused.text);
            Err(PyValueError::new_err(format!("addrs[{}]: {text:?}: {}", refused.index, refused.reason)))
        }
    }
}

/// Parses a list of `str` one item at a time, with the GIL held (the items
/// are Python objects); an item that is not a `str` is a `TypeError`.
fn parse_list<'py>(py: Python<'py>, list: &Bound<'py, PyList>, family: u8) -> PyResult<Bound<'py, PyAny>> {
    let (mut keys4, mut keys6) = (Vec::new(), Vec::new());
    for (index, item) in list.iter().enumerate() {
        let Ok(text) = item.cast::<PyString>() else {
            return Err(PyTypeError::new_err(format!("addrs[{index}] is not a str")));
        };
        let text = text.to_cow()?;
        let text = text.as_ref();
        let refuse = |reason: String| {
            let text = fibkit::error::shorten(text);
            PyValueError::new_err(format!("addrs[{index}]: {text:?}: {reason}"))
        };
        match (parse_address(text.as_bytes()), family) {
            (Ok(AnyAddr::V4(addr)), 4) => keys4.push(addr),
            (Ok(AnyAddr::V6(addr)), 6) => keys6.extend_from_slice(&addr.to_be_bytes()),
            (Ok(AnyAddr::V6(_)), _) => return Err(refuse("an IPv6 address (ipv6_array takes it)".into())),
            (Ok(AnyAddr::V4(_)), _) => return Err(refuse("an IPv4 address (ipv4_array takes it)".into())),
            (Err(error), _) => return Err(refuse(error.to_string())),
        }
    }
    if family == 4 {
        Ok(PyArray1::from_vec(py, keys4).into_any())
    } else {
        let rows = keys6.len() / 16;
        Ok(PyArray1::from_vec(py, keys6).reshape([rows, 16])?.into_any())
    }
}

/// Parses address strings: `chars` is a list of `str`, or an (N, W) uint32
/// array (a numpy `str` array's code points) or uint8 array (a `bytes`
/// array's), one NUL-padded address a row; `family` 4 gives a uint32 array of N keys, 6
/// an (N, 16) uint8 array. A row that is not an address of the family is a
/// `ValueError` naming its index, its text and why.
#[pyfunction]
pub fn parse_addresses<'py>(py: Python<'py>, chars: &Bound<'py, PyAny>, family: u8) -> PyResult<Bound<'py, PyAny>> {
    if family != 4 && family != 6 {
        return Err(PyValueError::new_err(format!("family must be 4 or 6, got {family}")));
    }
    if let Ok(code_points) = chars.cast::<PyArray2<u32>>() {
        return parse(py, code_points, family);
    }
    if let Ok(bytes) = chars.cast::<PyArray2<u8>>() {
        return parse(py, bytes, family);
    }
    if let Ok(list) = chars.cast::<PyList>() {
        return parse_list(py, list, family);
    }
    Err(PyTypeError::new_err("chars must be an (N, W) uint32 or uint8 array, or a list of str"))
}
