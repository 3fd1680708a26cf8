//! Records through the C API: a table loaded with fields, and one field of
//! a next hop's record by name, as text, an integer or a float.
//!
//! Each field call returns 1 when it wrote a value, 0 when there is none
//! (`FIBKIT_NO_ROUTE`, a next hop past the last, a missing value), or a
//! negative `FIBKIT_E...` code with the last error set.

use std::ffi::{c_char, c_int};

use fibkit_core::load::LoadOptions;
use fibkit_core::records::{FieldRef, FieldSpec};
use fibkit_core::NextHop;

use crate::args;
use crate::error::{guard, Failure};
use crate::fib::Fib;
use crate::table::{load_into, Table};

/// Loads a table file whose routes' values are records of `fields`
/// (`"asn,org:text"`: a text table's columns after the addresses, by its
/// header's names or in order; a MaxMind DB file's paths,
/// `"country.iso_code,location.latitude"`). `flags` is 0 or
/// `FIBKIT_LOAD_STRICT`.
///
/// Returns `FIBKIT_OK` and the table in `*out`, or:
/// - `FIBKIT_EINVAL`: `path`, `fields` or `out` is NULL, `fields` does not
///   parse (the message says why), or `flags` has an unknown bit;
/// - `FIBKIT_EIO`: the file cannot be read;
/// - `FIBKIT_EPARSE`: its content is wrong, or a value is not of its
///   field's type (the message names the file, the line and the field).
///
/// # Safety
/// `path` and `fields` are NULL or NUL-terminated strings; `out` is NULL or
/// points to a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn fibkit_table_load_fields(
    path: *const c_char,
    fields: *const c_char,
    flags: u32,
    out: *mut *mut Table,
) -> c_int {
    let options = |strict| {
        // SAFETY: the contract above.
        let fields = unsafe { args::text(fields, "fields") }?;
        let fields = FieldSpec::parse(fields).map_err(|error| Failure::invalid(error.to_string()))?;
        Ok(LoadOptions { strict, fields: Some(fields), ..Default::default() })
    };
    // SAFETY: the contract above.
    unsafe { load_into(path, flags, out, options) }
}

/// Field `field` of `next_hop`'s record in `fib`: `Ok(None)` for no value.
///
/// # Safety
/// As the callers'.
unsafe fn field<'a>(fib: *const Fib, next_hop: NextHop, field: *const c_char) -> Result<Option<FieldRef<'a>>, Failure> {
    // SAFETY: the caller's contract.
    let fib: &'a Fib = unsafe { args::reference(fib, "fib") }?;
    // SAFETY: the caller's contract.
    let name = unsafe { args::text(field, "field") }?;
    let records = fib.compiled().values.records().ok_or_else(|| {
        Failure::invalid("the FIB's values are not records (load its table with fibkit_table_load_fields)")
    })?;
    let index = records.field_index(name).ok_or_else(|| {
        let names: Vec<&str> = records.fields().map(|field| field.name.as_str()).collect();
        Failure::invalid(format!("no field {name:?} (the fields: {})", names.join(", ")))
    })?;
    Ok(records.get(next_hop, index).filter(|value| !value.is_null()))
}

/// Writes field `field` of `next_hop`'s record as NUL-terminated text into
/// `buffer`, cut to fit `size` bytes as `snprintf` does (`buffer` may be
/// NULL when `size` is 0), and its whole length into `*length` (if not
/// NULL). A text is itself, a list of integers is written separated by
/// spaces, an address in its usual notation.
///
/// Returns 1 (written), 0 (no value: `FIBKIT_NO_ROUTE`, a next hop past
/// the last, a missing value), or `FIBKIT_EINVAL`: `fib` or `field` is
/// NULL, the FIB has no records, or no field has that name.
///
/// # Safety
/// `fib` is NULL or a live FIB; `field` is NULL or a NUL-terminated
/// string; `buffer` is NULL or `size` writable bytes; `length` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn fibkit_fib_field(
    fib: *const Fib,
    next_hop: u32,
    field: *const c_char,
    buffer: *mut c_char,
    size: usize,
    length: *mut usize,
) -> c_int {
    guard_code(|| {
        // SAFETY: the contract above.
        let Some(value) = (unsafe { self::field(fib, next_hop, field) })? else { return Ok(0) };
        // SAFETY: the contract above.
        let written = unsafe { args::write_text(&value.to_string(), buffer, size) }?;
        if !length.is_null() {
            // SAFETY: the contract above (not NULL, writable).
            unsafe { *length = written };
        }
        Ok(1)
    })
}

/// Field `field` of `next_hop`'s record as an integer into `*value`.
///
/// Returns 1, 0 (no value, as for `fibkit_fib_field`), or `FIBKIT_EINVAL`:
/// as for `fibkit_fib_field`, or the field is not of type `int`.
///
/// # Safety
/// As for `fibkit_fib_field`; `value` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fibkit_fib_field_int(
    fib: *const Fib,
    next_hop: u32,
    field: *const c_char,
    value: *mut i64,
) -> c_int {
    // SAFETY: the contract above.
    unsafe {
        typed(
            fib,
            next_hop,
            field,
            value,
            "int",
            |value| if let FieldRef::Int(number) = value { Some(number) } else { None },
        )
    }
}

/// Field `field` of `next_hop`'s record as a float into `*value` (an
/// `int` field's value converted).
///
/// Returns 1, 0 (no value, as for `fibkit_fib_field`), or `FIBKIT_EINVAL`:
/// as for `fibkit_fib_field`, or the field is neither `float` nor `int`.
///
/// # Safety
/// As for `fibkit_fib_field`; `value` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fibkit_fib_field_float(
    fib: *const Fib,
    next_hop: u32,
    field: *const c_char,
    value: *mut f64,
) -> c_int {
    // SAFETY: the contract above.
    unsafe {
        typed(fib, next_hop, field, value, "float", |value| match value {
            FieldRef::Float(number) => Some(number),
            FieldRef::Int(number) => Some(number as f64),
            _ => None,
        })
    }
}

/// A typed field into `*out`: 1, 0 or a negative code.
///
/// # Safety
/// As for `fibkit_fib_field_int`.
unsafe fn typed<T>(
    fib: *const Fib,
    next_hop: u32,
    field: *const c_char,
    out: *mut T,
    kind: &str,
    convert: impl Fn(FieldRef<'_>) -> Option<T>,
) -> c_int {
    guard_code(|| {
        if out.is_null() {
            return Err(Failure::invalid("value is NULL"));
        }
        // SAFETY: the caller's contract.
        let Some(value) = (unsafe { self::field(fib, next_hop, field) })? else { return Ok(0) };
        let converted =
            convert(value).ok_or_else(|| Failure::invalid(format!("the field's values are not {kind}s")))?;
        // SAFETY: not NULL (checked), writable (the caller's contract).
        unsafe { out.write(converted) };
        Ok(1)
    })
}

/// Runs `body`, returning its code, or recording its failure (a panic
/// among them) and returning the failure's code.
fn guard_code(body: impl FnOnce() -> Result<c_int, Failure>) -> c_int {
    let mut code = 0;
    let status = guard(|| {
        code = body()?;
        Ok(())
    });
    if status == 0 {
        code
    } else {
        status
    }
}
