//! Address strings in bulk, parsed by fibkit's address parser: a list of
//! `str` (read with the GIL held, as its items are Python objects), or a
//! numpy `str` array viewed as rows of uint32 code points or a `bytes`
//! array as rows of uint8, one address a row padded with NULs (read with
//! the GIL released). `fibkit.ipv4_array`, `ipv6_array` and
//! `Table.lookup_batch` make the views.

use numpy::{Element, PyArray1, PyArray2, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use fibkit::load::{parse_address, AnyAddr};

/// The longest text an address can be (IPv6 with an embedded IPv4: 45).
const LONGEST: usize = 64;

/// Address text from Python, one address an element.
pub enum Text<'py> {
    /// A list of `str`.
    List(Bound<'py, PyList>),
    /// Rows of code points (a numpy `str` array's).
    Wide(Bound<'py, PyArray2<u32>>),
    /// Rows of bytes (a numpy `bytes` array's).
    Narrow(Bound<'py, PyArray2<u8>>),
    /// An Arrow string array's buffers: N + 1 offsets into UTF-8 data
    /// (`fibkit._text` takes them from a pyarrow array without a copy).
    Arrow(Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<u8>>),
}

impl<'py> Text<'py> {
    /// `object` as address text.
    ///
    /// # Errors
    /// A `TypeError` for anything but a list or an (N, W) uint32 or uint8
    /// array.
    pub fn new(object: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(list) = object.cast::<PyList>() {
            return Ok(Text::List(list.clone()));
        }
        if let Ok(wide) = object.cast::<PyArray2<u32>>() {
            return Ok(Text::Wide(wide.clone()));
        }
        if let Ok(narrow) = object.cast::<PyArray2<u8>>() {
            return Ok(Text::Narrow(narrow.clone()));
        }
        if let Ok((offsets, data)) = object.extract::<(Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<u8>>)>() {
            return Ok(Text::Arrow(offsets, data));
        }
        Err(PyTypeError::new_err("addrs must be a list of str, or an (N, W) uint32 or uint8 array"))
    }

    /// How many addresses it holds.
    pub fn len(&self) -> usize {
        match self {
            Text::List(list) => list.len(),
            Text::Wide(rows) => rows.shape().first().copied().unwrap_or(0),
            Text::Narrow(rows) => rows.shape().first().copied().unwrap_or(0),
            Text::Arrow(offsets, _) => offsets.len().saturating_sub(1),
        }
    }

    /// Parses every address as one of `family` (4 or 6; 0: either), each
    /// handed to `put(index, address)`; the GIL is released for arrays.
    ///
    /// # Errors
    /// A `ValueError` naming the first element that is not an address of
    /// the family, its text and why; a `TypeError` for a list item that is
    /// not a `str`.
    pub fn parse(&self, family: u8, put: impl FnMut(usize, AnyAddr) + Send) -> PyResult<()> {
        match self {
            Text::List(list) => parse_list(list, family, put),
            Text::Wide(rows) => parse_array(rows, family, put),
            Text::Narrow(rows) => parse_array(rows, family, put),
            Text::Arrow(offsets, data) => parse_arrow(offsets, data, family, put),
        }
    }
}

/// Why element `index` is not an address of the family asked for.
struct Refused {
    index: usize,
    text: String,
    reason: String,
}

impl Refused {
    fn into_error(self) -> PyErr {
        let text = fibkit::error::shorten(&self.text);
        PyValueError::new_err(format!("addrs[{}]: {text:?}: {}", self.index, self.reason))
    }
}

/// Checks that `parsed` (the text of element `index`) is an address of
/// `family` (0: either).
fn of_family(
    index: usize,
    text: impl FnOnce() -> String,
    parsed: Result<AnyAddr, String>,
    family: u8,
) -> Result<AnyAddr, Refused> {
    let reason = match (parsed, family) {
        (Ok(addr @ AnyAddr::V4(_)), 0 | 4) | (Ok(addr @ AnyAddr::V6(_)), 0 | 6) => return Ok(addr),
        (Ok(AnyAddr::V6(_)), _) => "an IPv6 address (ipv6_array takes it)".to_string(),
        (Ok(AnyAddr::V4(_)), _) => "an IPv4 address (ipv4_array takes it)".to_string(),
        (Err(reason), _) => reason,
    };
    Err(Refused { index, text: text(), reason })
}

fn parse_list(list: &Bound<'_, PyList>, family: u8, mut put: impl FnMut(usize, AnyAddr)) -> PyResult<()> {
    for (index, item) in list.iter().enumerate() {
        let Ok(text) = item.cast::<PyString>() else {
            return Err(PyTypeError::new_err(format!("addrs[{index}] is not a str")));
        };
        let text = text.to_cow()?;
        let parsed = parse_address(text.as_bytes()).map_err(|error| error.to_string());
        put(index, of_family(index, || text.to_string(), parsed, family).map_err(Refused::into_error)?);
    }
    Ok(())
}

fn parse_array<C: Copy + Into<u32> + Element + Sync>(
    rows: &Bound<'_, PyArray2<C>>,
    family: u8,
    put: impl FnMut(usize, AnyAddr) + Send,
) -> PyResult<()> {
    let &[count, width] = rows.shape() else { return Err(PyValueError::new_err("addrs must be 2-dimensional")) };
    let readonly = rows.try_readonly().map_err(|_| PyValueError::new_err("addrs is being written elsewhere"))?;
    let chars = readonly.as_slice()?;
    rows.py().detach(|| parse_rows(chars, count, width, family, put)).map_err(Refused::into_error)
}

fn parse_arrow(
    offsets: &Bound<'_, PyArray1<i64>>,
    data: &Bound<'_, PyArray1<u8>>,
    family: u8,
    mut put: impl FnMut(usize, AnyAddr) + Send,
) -> PyResult<()> {
    let py = offsets.py();
    let busy = |_| PyValueError::new_err("addrs is being written elsewhere");
    let (offsets_view, data_view) = (offsets.try_readonly().map_err(busy)?, data.try_readonly().map_err(busy)?);
    let (offsets, data) = (offsets_view.as_slice()?, data_view.as_slice()?);
    let parsed = py.detach(|| {
        offsets.windows(2).enumerate().try_for_each(|(index, bounds)| {
            let &[start, end] = bounds else { return Ok(()) };
            let range = usize::try_from(start).ok().zip(usize::try_from(end).ok());
            let Some(text) = range.and_then(|(start, end)| data.get(start..end)) else {
                let reason = format!("offsets {start}..{end} outside the {} bytes of data", data.len());
                return Err(Refused { index, text: String::new(), reason });
            };
            let parsed = parse_address(text).map_err(|error| error.to_string());
            put(index, of_family(index, || String::from_utf8_lossy(text).into_owned(), parsed, family)?);
            Ok(())
        })
    });
    parsed.map_err(Refused::into_error)
}

/// Parses `count` rows of `width` characters (NUL-padded at the end, white
/// space around an address ignored; a NUL followed by other characters is
/// refused, as the same text in a list is).
fn parse_rows<C: Copy + Into<u32>>(
    chars: &[C],
    count: usize,
    width: usize,
    family: u8,
    mut put: impl FnMut(usize, AnyAddr),
) -> Result<(), Refused> {
    let mut text = [0u8; LONGEST];
    for index in 0..count {
        let row = chars.get(index * width..(index + 1) * width).unwrap_or_default();
        // NULs after the text are padding; a NUL before some of it is the
        // text's own, left for the parser to refuse as a list's is.
        let len = row.iter().rposition(|&char| char.into() != 0).map_or(0, |last| last + 1);
        let row = row.get(..len).unwrap_or_default();
        let blank = |char: &C| matches!((*char).into(), 9..=13 | 32);
        let start = row.iter().position(|char| !blank(char)).unwrap_or(row.len());
        let end = row.iter().rposition(|char| !blank(char)).map_or(start, |last| last + 1);
        let row = row.get(start..end).unwrap_or_default();
        let parsed = if row.len() <= LONGEST && row.iter().all(|&char| char.into() < 128) {
            for (byte, &char) in text.iter_mut().zip(row) {
                *byte = char.into() as u8;
            }
            parse_address(text.get(..row.len()).unwrap_or_default()).map_err(|error| error.to_string())
        } else {
            Err("not an IPv4 or IPv6 address".to_string())
        };
        let shown = || row.iter().map(|&char| char::from_u32(char.into()).unwrap_or('\u{fffd}')).collect();
        put(index, of_family(index, shown, parsed, family)?);
    }
    Ok(())
}

/// Address strings of either family, split by family in their order:
/// each family's keys and the indexes in the input they came from.
pub struct Split {
    /// How many addresses the input holds.
    pub len: usize,
    /// The IPv4 keys.
    pub keys4: Vec<u32>,
    /// Where each IPv4 key stands in the input.
    pub positions4: Vec<usize>,
    /// The IPv6 keys.
    pub keys6: Vec<u128>,
    /// Where each IPv6 key stands in the input.
    pub positions6: Vec<usize>,
}

/// Parses `addrs` (strings of either family, in any form
/// `Table.lookup_batch` takes: a list of `str`, or whatever the package's
/// `fibkit._text` makes address text of) and splits them by family.
///
/// # Errors
/// A `TypeError` for an input that is no address text, a `ValueError`
/// naming the first element that is not an address, as [`Text::parse`].
pub fn split(addrs: &Bound<'_, PyAny>) -> PyResult<Split> {
    let text = match Text::new(addrs) {
        Ok(text) => text,
        // The package's conversion: a list, or a string array's characters.
        Err(_) => Text::new(&addrs.py().import("fibkit")?.getattr("_text")?.call1((addrs,))?)?,
    };
    let mut split =
        Split { len: text.len(), keys4: Vec::new(), positions4: Vec::new(), keys6: Vec::new(), positions6: Vec::new() };
    text.parse(0, |index, addr| match addr {
        AnyAddr::V4(addr) => {
            split.keys4.push(addr);
            split.positions4.push(index);
        }
        AnyAddr::V6(addr) => {
            split.keys6.push(addr);
            split.positions6.push(index);
        }
    })?;
    Ok(split)
}

/// Address strings of either family (as `Table.lookup_batch` takes them)
/// split by family, parsed as `Table.lookup_batch` parses them (an
/// IPv4-mapped IPv6 address is IPv4): `(len, keys4, positions4, keys6,
/// positions6)`, the IPv4 keys a uint32 array, the IPv6 keys an (N, 16)
/// uint8 array (network byte order), and the positions (uintp) of each
/// family's addresses in the input. For `fibkit.Client`.
#[pyfunction]
#[pyo3(name = "_split_addresses")]
pub fn split_addresses<'py>(py: Python<'py>, addrs: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
    let split = split(addrs)?;
    let keys6: Vec<u8> = split.keys6.iter().flat_map(|key| key.to_be_bytes()).collect();
    let keys6 = PyArray1::from_vec(py, keys6).reshape([split.keys6.len(), 16])?.into_any();
    let parts = [
        split.len.into_pyobject(py)?.into_any(),
        PyArray1::from_vec(py, split.keys4).into_any(),
        PyArray1::from_vec(py, split.positions4).into_any(),
        keys6,
        PyArray1::from_vec(py, split.positions6).into_any(),
    ];
    PyTuple::new(py, parts)
}

/// Parses address strings: `addrs` is a list of `str`, or an (N, W) uint32
/// array (a numpy `str` array's code points) or uint8 array (a `bytes`
/// array's), one NUL-padded address a row; `family` 4 gives a uint32 array
/// of N keys, 6 an (N, 16) uint8 array (network byte order). An element
/// that is not an address of the family is a `ValueError` naming its
/// index, its text and why.
#[pyfunction]
pub fn parse_addresses<'py>(py: Python<'py>, addrs: &Bound<'py, PyAny>, family: u8) -> PyResult<Bound<'py, PyAny>> {
    let text = Text::new(addrs)?;
    match family {
        4 => {
            let mut keys = vec![0u32; text.len()];
            text.parse(4, |index, addr| {
                if let (Some(slot), AnyAddr::V4(addr)) = (keys.get_mut(index), addr) {
                    *slot = addr;
                }
            })?;
            Ok(PyArray1::from_vec(py, keys).into_any())
        }
        6 => {
            let mut keys = vec![0u8; text.len() * 16];
            text.parse(6, |index, addr| {
                if let (Some(slot), AnyAddr::V6(addr)) = (keys.get_mut(index * 16..index * 16 + 16), addr) {
                    slot.copy_from_slice(&addr.to_be_bytes());
                }
            })?;
            Ok(PyArray1::from_vec(py, keys).reshape([text.len(), 16])?.into_any())
        }
        _ => Err(PyValueError::new_err(format!("family must be 4 or 6, got {family}"))),
    }
}
