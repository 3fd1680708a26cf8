//! Status codes, the calling thread's last error message, and the guard
//! every exported function runs its body in.
//!
//! A function that can fail returns a status: [`FIBKIT_OK`] (0) or one of
//! the negative codes below, as DPDK's functions return `-errno`. The
//! message of the last failure on a thread (naming the file and line, the
//! engine and limit, the update) is [`fibkit_last_error`], as `dlerror`
//! keeps one per thread. No panic crosses the boundary: [`guard`] catches
//! it and it becomes [`FIBKIT_EINTERNAL`].

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use fibkit_core::error::BuildError;
use fibkit_core::file::{FileError, Problem};
use fibkit_core::load::{LoadError, Position};
use fibkit_core::router::UpdateError;

/// The status a call returns: `FIBKIT_OK` or a negative error code.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum Status {
    /// Success.
    FIBKIT_OK = 0,
    /// An argument is invalid: a NULL pointer where the function refuses one,
    /// a misaligned array, a prefix length beyond the family's, a prefix with
    /// host bits set, a family other than `FIBKIT_IPV4` and `FIBKIT_IPV6`, an
    /// engine list that is not UTF-8.
    FIBKIT_EINVAL = -1,
    /// A file could not be read or written (the message has the system's
    /// reason).
    FIBKIT_EIO = -2,
    /// A table file's content is wrong: the message names the file, the line
    /// (or byte offset) and the problem.
    FIBKIT_EPARSE = -3,
    /// No engine has that name, or none of the names serves the family.
    FIBKIT_EENGINE = -4,
    /// The table exceeds a structural limit of the engine: the message names
    /// the engine, the limit, the field and the value.
    FIBKIT_ELIMIT = -5,
    /// A next hop is 0 (which means "no route"), beyond the table's largest
    /// next hop, or beyond what the engine holds.
    FIBKIT_ENEXTHOP = -6,
    /// A compiled FIB file is not one, is damaged, or was written by a newer
    /// fibkit: the message names the file, the byte offset and the problem.
    FIBKIT_EFILE = -7,
    /// The FIB's engine has no compiled-file format (e.g. `lulea`).
    FIBKIT_ENOTSAVABLE = -8,
    /// Some updates of a batch were rejected (the others were applied); the
    /// message gives each rejected update and why.
    FIBKIT_EREJECTED = -9,
    /// A bug in fibkit, caught at the boundary (a Rust panic); the message
    /// says where. Please report it.
    FIBKIT_EINTERNAL = -10,
    /// The system refused the memory an engine's array needs: the message
    /// names the engine, the array and its bytes. Nothing was built.
    FIBKIT_ENOMEM = -11,
}

pub use Status::*;

thread_local! {
    /// The message of this thread's last failure.
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
}

/// A failed call: its status code and message.
#[derive(Debug)]
pub struct Failure {
    /// One of the `FIBKIT_E...` codes.
    pub code: Status,
    /// What went wrong, naming the file, line, engine or argument.
    pub message: String,
}

impl Failure {
    /// A failure with `code` and `message`.
    pub fn new(code: Status, message: impl Into<String>) -> Self {
        Failure { code, message: message.into() }
    }

    /// [`FIBKIT_EINVAL`] with `message`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Failure::new(FIBKIT_EINVAL, message)
    }
}

impl From<LoadError> for Failure {
    fn from(error: LoadError) -> Self {
        let code = if error.position == Position::File { FIBKIT_EIO } else { FIBKIT_EPARSE };
        Failure::new(code, error.to_string())
    }
}

impl From<BuildError> for Failure {
    fn from(error: BuildError) -> Self {
        let code = match error {
            BuildError::Unknown(_) => FIBKIT_EENGINE,
            BuildError::Limit(_) => FIBKIT_ELIMIT,
            BuildError::Route { .. } => FIBKIT_EINVAL,
            BuildError::OutOfMemory { .. } => FIBKIT_ENOMEM,
        };
        Failure::new(code, error.to_string())
    }
}

impl From<FileError> for Failure {
    fn from(error: FileError) -> Self {
        let code = match error.problem {
            Problem::Io(_) => FIBKIT_EIO,
            Problem::NotSavable { .. } => FIBKIT_ENOTSAVABLE,
            _ => FIBKIT_EFILE,
        };
        Failure::new(code, error.to_string())
    }
}

impl From<UpdateError> for Failure {
    fn from(error: UpdateError) -> Self {
        let code = match &error {
            UpdateError::NextHopOverflow { .. } => FIBKIT_ENEXTHOP,
            UpdateError::Ipv4Mapped { .. } => FIBKIT_EINVAL,
            UpdateError::Engine { error, .. } if matches!(**error, BuildError::Limit(_)) => FIBKIT_ELIMIT,
            UpdateError::Engine { error, .. } if matches!(**error, BuildError::OutOfMemory { .. }) => FIBKIT_ENOMEM,
            UpdateError::Engine { .. } => FIBKIT_EINVAL,
        };
        Failure::new(code, error.to_string())
    }
}

/// Records `failure` as this thread's last error and returns its code.
pub fn record(failure: Failure) -> c_int {
    // An interior NUL cannot come from fibkit's messages; were one there,
    // the message is cut at it rather than lost.
    let bytes: Vec<u8> = failure.message.into_bytes().into_iter().take_while(|&byte| byte != 0).collect();
    let message = CString::new(bytes).unwrap_or_default();
    LAST_ERROR.with(|last| *last.borrow_mut() = Some(message));
    failure.code as c_int
}

/// Runs `body`, turning its failure or panic into a status code (and this
/// thread's last error).
pub fn guard(body: impl FnOnce() -> Result<(), Failure>) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => FIBKIT_OK as c_int,
        Ok(Err(failure)) => record(failure),
        Err(payload) => record(internal(payload.as_ref())),
    }
}

/// [`guard`] for a walk that calls back into C: runs `body`, which
/// stores in its argument the callback's value that stopped the walk (0:
/// it went to the end). Returns that value when it is not 0, else the
/// status.
pub fn guard_walk(body: impl FnOnce(&mut c_int) -> Result<(), Failure>) -> c_int {
    let mut stopped = 0;
    let status = guard(|| body(&mut stopped));
    if status == 0 {
        stopped
    } else {
        status
    }
}

/// Runs `body` for a call that answers a value rather than a status (a
/// lookup): a failure or panic gives `fallback` and sets the last error.
#[inline]
pub fn guard_value<T>(fallback: T, body: impl FnOnce() -> Result<T, Failure>) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => value,
        Ok(Err(failure)) => failed(fallback, failure),
        Err(payload) => failed(fallback, internal(payload.as_ref())),
    }
}

#[cold]
fn failed<T>(fallback: T, failure: Failure) -> T {
    record(failure);
    fallback
}

/// The failure a caught panic becomes.
#[cold]
fn internal(payload: &(dyn std::any::Any + Send)) -> Failure {
    let what = payload
        .downcast_ref::<&str>()
        .map(|text| text.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string());
    Failure::new(FIBKIT_EINTERNAL, format!("internal error in fibkit (please report it): {what}"))
}

/// Every status, in order.
const STATUSES: [Status; 12] = [
    FIBKIT_OK,
    FIBKIT_EINVAL,
    FIBKIT_EIO,
    FIBKIT_EPARSE,
    FIBKIT_EENGINE,
    FIBKIT_ELIMIT,
    FIBKIT_ENEXTHOP,
    FIBKIT_EFILE,
    FIBKIT_ENOTSAVABLE,
    FIBKIT_EREJECTED,
    FIBKIT_EINTERNAL,
    FIBKIT_ENOMEM,
];

/// The message of the last call that failed on the calling thread, or NULL
/// if none has. It stays valid until the next call that fails on this
/// thread; copy it to keep it longer.
#[no_mangle]
pub extern "C" fn fibkit_last_error() -> *const c_char {
    LAST_ERROR.with(|last| last.borrow().as_ref().map_or(std::ptr::null(), |message| message.as_ptr()))
}

/// The name and meaning of status `code` (`"FIBKIT_EPARSE: a table file's
/// content is wrong"`), a static string; "unknown status" for a code that
/// is none of fibkit's.
#[no_mangle]
pub extern "C" fn fibkit_strerror(code: c_int) -> *const c_char {
    let text: &'static CStr = match STATUSES.iter().find(|&&status| status as c_int == code) {
        None => c"unknown status",
        Some(FIBKIT_OK) => c"FIBKIT_OK: success",
        Some(FIBKIT_EINVAL) => c"FIBKIT_EINVAL: an argument is invalid",
        Some(FIBKIT_EIO) => c"FIBKIT_EIO: a file could not be read or written",
        Some(FIBKIT_EPARSE) => c"FIBKIT_EPARSE: a table file's content is wrong",
        Some(FIBKIT_EENGINE) => c"FIBKIT_EENGINE: no such engine, or none serving the family",
        Some(FIBKIT_ELIMIT) => c"FIBKIT_ELIMIT: the table exceeds a limit of the engine",
        Some(FIBKIT_ENEXTHOP) => c"FIBKIT_ENEXTHOP: a next hop is 0 or beyond the table's or engine's limit",
        Some(FIBKIT_EFILE) => c"FIBKIT_EFILE: not a valid compiled FIB file",
        Some(FIBKIT_ENOTSAVABLE) => c"FIBKIT_ENOTSAVABLE: the engine has no compiled-file format",
        Some(FIBKIT_EREJECTED) => c"FIBKIT_EREJECTED: some updates were rejected, the others applied",
        Some(FIBKIT_EINTERNAL) => c"FIBKIT_EINTERNAL: internal error in fibkit",
        Some(FIBKIT_ENOMEM) => c"FIBKIT_ENOMEM: the system refused the memory an engine needs",
    };
    text.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last() -> String {
        // SAFETY: fibkit_last_error returns NULL or this thread's message,
        // valid until the next failure on this thread.
        unsafe { CStr::from_ptr(fibkit_last_error()) }.to_string_lossy().into_owned()
    }

    #[test]
    fn failures_and_panics_become_codes_and_messages() {
        assert_eq!(guard(|| Ok(())), 0);
        assert_eq!(guard(|| Err(Failure::invalid("argument `fib` is NULL"))), -1);
        assert_eq!(last(), "argument `fib` is NULL");
        let code = guard(|| -> Result<(), Failure> { panic!("index out of bounds") });
        assert_eq!(code, FIBKIT_EINTERNAL as c_int);
        assert!(last().ends_with("index out of bounds"), "{}", last());
        assert_eq!(guard_value(7u32, || Err(Failure::new(FIBKIT_EIO, "x"))), 7);
        assert_eq!(guard_value(7u32, || Ok(3)), 3);
    }

    #[test]
    fn the_last_error_is_per_thread() {
        record(Failure::invalid("on the main thread"));
        let other = std::thread::spawn(|| fibkit_last_error().is_null()).join().unwrap();
        assert!(other);
        assert_eq!(last(), "on the main thread");
    }

    #[test]
    fn every_code_has_its_name() {
        for (code, status) in (-10..=0).rev().zip(STATUSES) {
            assert_eq!(status as c_int, code);
            // SAFETY: fibkit_strerror returns a static NUL-terminated string.
            let text = unsafe { CStr::from_ptr(fibkit_strerror(code)) }.to_str().unwrap();
            assert!(text.starts_with("FIBKIT_"), "{code}: {text}");
        }
        // SAFETY: as above.
        assert_eq!(unsafe { CStr::from_ptr(fibkit_strerror(1)) }.to_str().unwrap(), "unknown status");
    }
}
