//! Compiled FIB files from Python: `save`, `open` and pickling.
//!
//! A pickled `Fib`, `Fib6` or `Table` is the compiled FIB file of what it
//! holds (`fibkit::file`): with protocol 5 its bytes go out of band as a
//! `pickle.PickleBuffer` (a `buffer_callback` can ship them without a copy
//! into the pickle stream), with older protocols as `bytes`. An object
//! opened with `pickle_path=True` pickles as its file's path, for workers
//! that see the same file system and map the file themselves.
//! Unpickling calls `_restore`, which opens the bytes or the path as
//! `open` does: every check of a file applies to a pickle.

use std::path::{Path, PathBuf};

use pyo3::exceptions::{PyMemoryError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use fibkit::compiled::CompiledTable;
use fibkit::file::{FibFile, FileError, FileWriter, Problem};

/// A file error as Python sees it: `OSError` when the file cannot be read
/// or written, `ValueError` for a file that is not a sound FIB file.
pub fn file_error(error: FileError) -> PyErr {
    match error.problem {
        Problem::Io(_) | Problem::NotRegularFile(_) => PyOSError::new_err(error.to_string()),
        _ => PyValueError::new_err(error.to_string()),
    }
}

/// `ValueError` for a FIB that cannot be saved.
pub fn save_error(problem: Problem) -> PyErr {
    PyValueError::new_err(problem.to_string())
}

/// Opens the compiled FIB file at `path`, the GIL released.
pub fn open_table(py: Python<'_>, path: &Path) -> PyResult<CompiledTable> {
    py.detach(|| CompiledTable::open(path)).map_err(file_error)
}

/// Writes `file` to `path`, the GIL released.
pub fn write(py: Python<'_>, file: FileWriter<'_>, path: &Path) -> PyResult<()> {
    py.detach(|| file.write(path)).map_err(file_error)
}

/// What `obj.__reduce_ex__(protocol)` returns for an object of class
/// `kind`: `_restore` and its arguments, the object's `pickle_path` if it
/// has one, else the bytes of its compiled FIB file (`file`).
pub fn reduce<'py, 'f>(
    py: Python<'py>,
    kind: &str,
    pickle_path: Option<&Path>,
    file: impl FnOnce() -> Result<FileWriter<'f>, Problem>,
    protocol: u32,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let restore = py.import("fibkit._fibkit")?.getattr("_restore")?;
    if let Some(path) = pickle_path {
        return Ok((restore, (kind, path.into_pyobject(py)?.into_any(), true).into_pyobject(py)?.into_any()));
    }
    let file = file().map_err(save_error)?;
    // Written straight into the bytes object, the GIL released: it is no
    // Python object's until `new_with` returns.
    let length = usize::try_from(file.len()).map_err(|_| PyMemoryError::new_err("the FIB file is too large"))?;
    let bytes = PyBytes::new_with(py, length, |buffer| {
        py.detach(move || file.write_to(&mut &mut *buffer)).map_err(|error| PyOSError::new_err(error.to_string()))
    })?
    .into_any();
    let data = if protocol >= 5 { py.import("pickle")?.getattr("PickleBuffer")?.call1((bytes,))? } else { bytes };
    Ok((restore, (kind, data, false).into_pyobject(py)?.into_any()))
}

/// The table a pickle holds: `data` is a path (`by_path`) or the bytes of
/// a compiled FIB file (anything with the buffer protocol).
pub fn unpickle(py: Python<'_>, data: &Bound<'_, PyAny>, by_path: bool) -> PyResult<(CompiledTable, Option<PathBuf>)> {
    if by_path {
        let path: PathBuf = data.extract()?;
        return Ok((open_table(py, &path)?, Some(path)));
    }
    // `bytes(data)`: the object itself for `bytes`, a copy of any other
    // buffer (the limited API has no buffer protocol before Python 3.11).
    let bytes = py.import("builtins")?.getattr("bytes")?.call1((data,))?.cast_into::<PyBytes>()?;
    let bytes = bytes.as_bytes();
    let table =
        py.detach(|| CompiledTable::from_file(&FibFile::from_bytes(bytes, "a pickled FIB")?)).map_err(file_error)?;
    Ok((table, None))
}
