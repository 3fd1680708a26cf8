//! `fibkit_fib`: a frozen FIB of both families, built from a table or
//! mapped from a compiled FIB file, and its lookups.
//!
//! A lookup through the C API is the Rust call behind one NULL check: the
//! handle holds the engine's `dyn Fib` of each family, and the bulk calls
//! go through the engine's batch path. IPv6 keys and network-order IPv4
//! keys are converted in steps of `STEP` keys on the stack.

use std::ffi::{c_char, c_int, CString};

use fibkit_core::addr::Address;
use fibkit_core::address_text::{answer_mapped_as_ipv4, ipv4_mapped};
use fibkit_core::compiled::{CompileOptions, CompiledFamily, CompiledTable};
use fibkit_core::fib::Calibrations;
use fibkit_core::file::FileError;
use fibkit_core::{NextHop, NO_ROUTE};

use crate::args::{self, Addr6, FIBKIT_IPV4, FIBKIT_IPV6, FIBKIT_NO_ROUTE};
use crate::error::{guard, guard_value, Failure};
use crate::table::{c_string, Table};

/// Keys converted per step of the IPv6 and network-order bulk lookups.
const STEP: usize = 256;

/// A frozen FIB of both families (opaque).
pub struct Fib {
    compiled: CompiledTable,
    engine4: Option<CString>,
    engine6: Option<CString>,
}

impl Fib {
    /// The compiled table of both families.
    pub(crate) fn compiled(&self) -> &CompiledTable {
        &self.compiled
    }

    fn new(compiled: CompiledTable) -> Self {
        let engine4 = compiled.v4.as_ref().map(|family| c_string(family.fib().name()));
        let engine6 = compiled.v6.as_ref().map(|family| c_string(family.fib().name()));
        Fib { compiled, engine4, engine6 }
    }
}

/// Looks up `keys`, converted by `convert` in steps of [`STEP`] on the
/// stack, through `lookup` (a batch path), writing `next_hops`.
pub(crate) fn converted<K: Copy, A: Address>(
    keys: &[K],
    next_hops: &mut [u32],
    convert: impl Fn(K) -> A,
    mut lookup: impl FnMut(&[A], &mut [u32]),
) {
    let mut buffer = [A::ZERO; STEP];
    for (keys, out) in keys.chunks(STEP).zip(next_hops.chunks_mut(STEP)) {
        let step = &mut buffer[..keys.len()];
        for (slot, &key) in step.iter_mut().zip(keys) {
            *slot = convert(key);
        }
        lookup(step, out);
    }
}

/// Looks up `keys` in `family` (no route if the FIB has none of it).
fn bulk<K: Copy, A: Address>(
    family: Option<&CompiledFamily<A>>,
    keys: &[K],
    next_hops: &mut [u32],
    convert: impl Fn(K) -> A,
) {
    match family {
        Some(family) => converted(keys, next_hops, convert, |keys, out| {
            family.lookup_batch(keys, out);
            resolve(family, out);
        }),
        None => next_hops.fill(NO_ROUTE),
    }
}

/// With prefixes, a FIB answers route numbers: their next hops.
#[inline]
fn resolve<A: Address>(family: &CompiledFamily<A>, answers: &mut [u32]) {
    if family.has_prefixes() {
        for answer in answers {
            *answer = family.next_hop(*answer);
        }
    }
}

/// Builds a FIB of `table`'s routes. `engines` names the engine, or
/// several separated by commas: each family gets the first that serves it,
/// and a family none serves gets the default (`d18r` for IPv4, `poptrie18`
/// for IPv6); NULL or "" gives the defaults. `fibkit_engine_name` lists
/// the names.
///
/// Returns `FIBKIT_OK` and the FIB in `*out`, or:
/// - `FIBKIT_EINVAL`: `table` or `out` is NULL, or `engines` is not UTF-8;
/// - `FIBKIT_EENGINE`: a name is no engine's;
/// - `FIBKIT_ELIMIT`: the table exceeds a limit of the engine (the
///   message names the limit, the field and the value, and an engine that
///   holds the table when there is one).
///
/// The FIB does not depend on the table afterwards.
///
/// # Safety
/// `table` is NULL or a live table that no thread modifies during the
/// call; `engines` is NULL or a NUL-terminated string; `out` is NULL or
/// points to a writable `fibkit_fib *`.
#[no_mangle]
pub unsafe extern "C" fn fibkit_fib_build(table: *const Table, engines: *const c_char, out: *mut *mut Fib) -> c_int {
    // SAFETY: the contract above.
    unsafe { args::clear(out) };
    // SAFETY: the contract above.
    guard(|| unsafe { build(table, engines, Calibrations::default(), out) })
}

/// `fibkit_fib_build`, with `auto` measuring its candidates on the
/// caller's keys, a sample of the traffic the FIB will see: the `n4` IPv4
/// addresses at `keys4` (host byte order, as `fibkit_lookup4` takes them)
/// and the `n6` IPv6 addresses at `keys6`, of which the IPv4-mapped ones
/// (`::ffff:a.b.c.d`) count as IPv4 addresses, as lookups take them. A
/// family given no keys is measured on uniform random keys, as
/// `fibkit_fib_build` does; every engine but `auto` takes no notice of the
/// keys. `fibkit_fib_engine` names the engine `auto` chose.
///
/// Returns as `fibkit_fib_build`, and `FIBKIT_EINVAL` for a NULL or
/// misaligned `keys4` or `keys6` with a count other than 0.
///
/// # Safety
/// As `fibkit_fib_build`; `keys4` points to `n4` addresses and `keys6` to
/// `n6` (either may be NULL with a count of 0).
#[no_mangle]
pub unsafe extern "C" fn fibkit_fib_build_calibrated(
    table: *const Table,
    engines: *const c_char,
    keys4: *const u32,
    n4: usize,
    keys6: *const Addr6,
    n6: usize,
    out: *mut *mut Fib,
) -> c_int {
    // SAFETY: the contract above.
    unsafe { args::clear(out) };
    guard(|| {
        // SAFETY: the contract above.
        let calibration = unsafe { calibrations(keys4, n4, keys6, n6) }?;
        // SAFETY: the contract above.
        unsafe { build(table, engines, calibration, out) }
    })
}

/// The keys `auto` measures on: the `n4` IPv4 addresses at `keys4` and the
/// `n6` IPv6 ones at `keys6`, the IPv4-mapped among them counted as IPv4.
///
/// # Safety
/// `keys4` points to `n4` addresses and `keys6` to `n6` (either may be
/// NULL with a count of 0).
pub(crate) unsafe fn calibrations(
    keys4: *const u32,
    n4: usize,
    keys6: *const Addr6,
    n6: usize,
) -> Result<Calibrations, Failure> {
    // SAFETY: the caller's contract.
    let (keys4, keys6) = unsafe { (args::slice(keys4, n4, "keys4")?, args::slice(keys6, n6, "keys6")?) };
    let mut ipv4 = keys4.to_vec();
    let mut ipv6 = Vec::with_capacity(keys6.len());
    for &key in keys6 {
        let key = u128::from(key);
        match ipv4_mapped(key) {
            Some(mapped) => ipv4.push(mapped),
            None => ipv6.push(key),
        }
    }
    Ok(Calibrations::sample(ipv4, ipv6))
}

/// The body of `fibkit_fib_build` and `fibkit_fib_build_calibrated`.
///
/// # Safety
/// As `fibkit_fib_build`.
unsafe fn build(
    table: *const Table,
    engines: *const c_char,
    calibration: Calibrations,
    out: *mut *mut Fib,
) -> Result<(), Failure> {
    // SAFETY: the caller's contract.
    let (table, options) = unsafe { table_and_options(table, engines, calibration) }?;
    let compiled = CompiledTable::build(table.routes.clone(), &options)?;
    // SAFETY: the caller's contract.
    unsafe { args::store(out, Fib::new(compiled)) }
}

/// The table `table` points to, and the options of a build of it by
/// `engines` (as `fibkit_fib_build` reads them), `auto` measuring on
/// `calibration`.
///
/// # Safety
/// `table` is NULL or a live table; `engines` NULL or a NUL-terminated
/// string.
pub(crate) unsafe fn table_and_options<'a>(
    table: *const Table,
    engines: *const c_char,
    calibration: Calibrations,
) -> Result<(&'a Table, CompileOptions), Failure> {
    // SAFETY: the caller's contract.
    let table = unsafe { args::reference(table, "table") }?;
    // SAFETY: the caller's contract.
    let engines = unsafe { engine_names(engines) }?;
    Ok((table, CompileOptions { engines, prefixes: false, calibration }))
}

/// Opens a compiled FIB file (written by `fibkit_fib_save` or `fibkit
/// compile`): the file is mapped, checked (header, checksums, every index
/// an engine will follow) and served in place, without a build.
///
/// Returns `FIBKIT_OK` and the FIB in `*out`, or:
/// - `FIBKIT_EINVAL`: `path` or `out` is NULL;
/// - `FIBKIT_EIO`: the file cannot be read;
/// - `FIBKIT_EFILE`: it is not a compiled FIB file, is damaged, or was
///   written by a newer fibkit (the message names the byte offset).
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `out` as for
/// `fibkit_fib_build`. The file must not be modified while the FIB lives
/// (as for any mapped file).
#[no_mangle]
pub unsafe extern "C" fn fibkit_fib_open(path: *const c_char, out: *mut *mut Fib) -> c_int {
    // SAFETY: the contract above.
    unsafe { args::clear(out) };
    guard(|| {
        // SAFETY: the contract above.
        let path = unsafe { args::path(path, "path") }?;
        let compiled = CompiledTable::open(&path)?;
        // SAFETY: the contract above.
        unsafe { args::store(out, Fib::new(compiled)) }
    })
}

/// Saves the FIB to a compiled FIB file at `path` (replaced atomically if
/// it exists), for `fibkit_fib_open` to map back.
///
/// Returns `FIBKIT_OK`, or:
/// - `FIBKIT_EINVAL`: `fib` or `path` is NULL;
/// - `FIBKIT_ENOTSAVABLE`: an engine of the FIB has no file format (the
///   message lists those that have);
/// - `FIBKIT_EFILE`: the FIB has no route of either family (such a file
///   would be refused when opened);
/// - `FIBKIT_EIO`: the file cannot be written.
///
/// # Safety
/// `fib` is NULL or a live FIB; `path` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn fibkit_fib_save(fib: *const Fib, path: *const c_char) -> c_int {
    guard(|| {
        // SAFETY: the contract above.
        let fib = unsafe { args::reference(fib, "fib") }?;
        // SAFETY: the contract above.
        let path = unsafe { args::path(path, "path") }?;
        let file =
            fib.compiled.to_file().map_err(|problem| FileError::new(path.display().to_string(), None, problem))?;
        file.write(&path)?;
        Ok(())
    })
}

/// Frees a FIB (NULL is ignored), and unmaps its file if it was opened.
///
/// # Safety
/// `fib` is NULL or a FIB from `fibkit_fib_build` or `fibkit_fib_open`,
/// not freed before, with no lookup in it running or to come on any thread.
#[no_mangle]
pub unsafe extern "C" fn fibkit_fib_free(fib: *mut Fib) {
    // SAFETY: the contract above.
    unsafe { args::free(fib) }
}

/// The engine serving `family` (`FIBKIT_IPV4` or `FIBKIT_IPV6`) with its
/// parameters (`"d18r"`), valid while the FIB lives; NULL if the FIB has
/// no routes of the family (its lookups answer `FIBKIT_NO_ROUTE`), for
/// another family, or for a NULL FIB.
///
/// # Safety
/// `fib` is NULL or a live FIB.
#[no_mangle]
pub unsafe extern "C" fn fibkit_fib_engine(fib: *const Fib, family: c_int) -> *const c_char {
    // SAFETY: the contract above.
    let Ok(fib) = (unsafe { args::reference(fib, "fib") }) else { return std::ptr::null() };
    let name = match family {
        FIBKIT_IPV4 => &fib.engine4,
        FIBKIT_IPV6 => &fib.engine6,
        _ => &None,
    };
    name.as_ref().map_or(std::ptr::null(), |name| name.as_ptr())
}

/// Bytes of `family`'s lookup structure (what a lookup can touch); 0 if
/// the FIB has none, for another family, or for a NULL FIB.
///
/// # Safety
/// `fib` is NULL or a live FIB.
#[no_mangle]
pub unsafe extern "C" fn fibkit_fib_footprint(fib: *const Fib, family: c_int) -> usize {
    // SAFETY: the contract above.
    let Ok(fib) = (unsafe { args::reference(fib, "fib") }) else { return 0 };
    match family {
        FIBKIT_IPV4 => fib.compiled.v4.as_ref().map_or(0, |family| family.fib().footprint()),
        FIBKIT_IPV6 => fib.compiled.v6.as_ref().map_or(0, |family| family.fib().footprint()),
        _ => 0,
    }
}

/// Writes the table file's value behind `next_hop` (an ASN, a next-hop
/// address) into `buffer` as NUL-terminated text, cut to fit `size` bytes
/// as `snprintf` does (`buffer` may be NULL when `size` is 0).
///
/// A record's value is its fields as one line of CSV (`fibkit_fib_field`
/// gives one field).
///
/// Returns the value's length (without the NUL; larger than `size - 1`
/// when cut), or 0 when `next_hop` has no value of its own: 0 (no route),
/// beyond the FIB's next hops, or a table whose next hops are numbers (from
/// `fibkit_table_new`, or loaded with `next_hops` N, where a next hop
/// stands for every value congruent to it).
///
/// # Safety
/// `fib` is NULL or a live FIB; `buffer` is NULL or `size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn fibkit_fib_value(fib: *const Fib, next_hop: u32, buffer: *mut c_char, size: usize) -> usize {
    guard_value(0, || {
        // SAFETY: the contract above.
        let fib = unsafe { args::reference(fib, "fib") }?;
        let values = &fib.compiled.values;
        // A record's value is its fields as one CSV line; a number's, its text.
        let text = if values.records().is_some() {
            values.value_text(next_hop)
        } else {
            values.text(next_hop).map(Into::into)
        };
        let Some(text) = text else { return Ok(0) };
        // SAFETY: the contract above.
        unsafe { args::write_text(&text, buffer, size) }
    })
}

/// The next hop of the IPv4 address `addr` (host byte order: 0x0a000001
/// for 10.0.0.1): that of the longest prefix covering it, or
/// `FIBKIT_NO_ROUTE` (0). Wait-free, allocates nothing, and safe from any
/// number of threads at once. A NULL `fib` answers `FIBKIT_NO_ROUTE` and
/// sets the last error.
///
/// # Safety
/// `fib` is NULL or a live FIB.
#[no_mangle]
pub unsafe extern "C" fn fibkit_lookup4(fib: *const Fib, addr: u32) -> u32 {
    guard_value(FIBKIT_NO_ROUTE, || {
        // SAFETY: the contract above.
        let fib = unsafe { args::lookup_handle(fib, "fib") }?;
        Ok(fib.compiled.v4.as_ref().map_or(NO_ROUTE, |family| family.lookup(addr)))
    })
}

/// `fibkit_lookup4` with `addr` in network byte order (as `struct
/// in_addr`'s `s_addr` holds it).
///
/// # Safety
/// As `fibkit_lookup4`.
#[no_mangle]
pub unsafe extern "C" fn fibkit_lookup4_be(fib: *const Fib, addr: u32) -> u32 {
    // SAFETY: the contract above.
    unsafe { fibkit_lookup4(fib, u32::from_be(addr)) }
}

/// The next hop of the IPv6 address `*addr`, as `fibkit_lookup4` (a NULL
/// `addr` also answers `FIBKIT_NO_ROUTE` and sets the last error). An
/// IPv4-mapped address (`::ffff:a.b.c.d`) is looked up as IPv4, among the
/// IPv4 routes (a table's IPv6 routes inside `::ffff:0:0/96` are among
/// them), as `fibkit lookup` and Python look it up.
///
/// # Safety
/// `fib` is NULL or a live FIB; `addr` is NULL or points to 16 bytes.
#[no_mangle]
pub unsafe extern "C" fn fibkit_lookup6(fib: *const Fib, addr: *const Addr6) -> u32 {
    guard_value(FIBKIT_NO_ROUTE, || {
        // SAFETY: the contract above.
        let fib = unsafe { args::lookup_handle(fib, "fib") }?;
        // SAFETY: the contract above.
        let addr = u128::from(*unsafe { args::lookup_handle(addr, "addr") }?);
        Ok(match ipv4_mapped(addr) {
            Some(addr) => fib.compiled.v4.as_ref().map_or(NO_ROUTE, |family| family.lookup(addr)),
            None => fib.compiled.v6.as_ref().map_or(NO_ROUTE, |family| family.lookup(addr)),
        })
    })
}

/// Looks up `n` IPv4 addresses (host byte order) through the engine's batch
/// path: `next_hops[i]` gets the next hop of `keys[i]`. Safe from any
/// number of threads at once; batches of 32 to a few thousand keys go
/// fastest.
///
/// Returns `FIBKIT_OK`, or `FIBKIT_EINVAL` when `fib` is NULL, or `keys` or
/// `next_hops` is NULL or misaligned with `n` > 0 (nothing is written then).
///
/// # Safety
/// `fib` is NULL or a live FIB; `keys` and `next_hops` are NULL or hold
/// `n` elements each, and `next_hops` does not overlap `keys`.
#[no_mangle]
pub unsafe extern "C" fn fibkit_lookup4_bulk(
    fib: *const Fib,
    keys: *const u32,
    next_hops: *mut u32,
    n: usize,
) -> c_int {
    guard(|| {
        // SAFETY: the contract above.
        let (fib, keys, out) = unsafe { bulk_args(fib, "fib", keys, next_hops, n) }?;
        match &fib.compiled.v4 {
            Some(family) => {
                family.lookup_batch(keys, out);
                resolve(family, out);
            }
            None => out.fill(NO_ROUTE),
        }
        Ok(())
    })
}

/// `fibkit_lookup4_bulk` with the keys in network byte order.
///
/// # Safety
/// As `fibkit_lookup4_bulk`.
#[no_mangle]
pub unsafe extern "C" fn fibkit_lookup4_bulk_be(
    fib: *const Fib,
    keys: *const u32,
    next_hops: *mut u32,
    n: usize,
) -> c_int {
    guard(|| {
        // SAFETY: the contract above.
        let (fib, keys, out) = unsafe { bulk_args(fib, "fib", keys, next_hops, n) }?;
        bulk(fib.compiled.v4.as_ref(), keys, out, u32::from_be);
        Ok(())
    })
}

/// Looks up `n` IPv6 addresses, as `fibkit_lookup4_bulk`; an IPv4-mapped
/// one as `fibkit_lookup6` does.
///
/// # Safety
/// As `fibkit_lookup4_bulk`, `keys` holding `n` `fibkit_addr6`.
#[no_mangle]
pub unsafe extern "C" fn fibkit_lookup6_bulk(
    fib: *const Fib,
    keys: *const Addr6,
    next_hops: *mut u32,
    n: usize,
) -> c_int {
    guard(|| {
        // SAFETY: the contract above.
        let (fib, keys, out) = unsafe { bulk_args(fib, "fib", keys, next_hops, n) }?;
        bulk(fib.compiled.v6.as_ref(), keys, out, u128::from);
        answer_mapped_as_ipv4(keys, out, |addr| {
            fib.compiled.v4.as_ref().map_or(NO_ROUTE, |family| family.lookup(addr))
        });
        Ok(())
    })
}

/// The handle, keys and output of a bulk lookup, checked.
///
/// # Safety
/// As `fibkit_lookup4_bulk`.
pub(crate) unsafe fn bulk_args<'a, H, K>(
    handle: *const H,
    name: &str,
    keys: *const K,
    next_hops: *mut NextHop,
    n: usize,
) -> Result<(&'a H, &'a [K], &'a mut [NextHop]), Failure> {
    // SAFETY: the caller's contract.
    unsafe {
        Ok((args::reference(handle, name)?, args::slice(keys, n, "keys")?, args::slice_mut(next_hops, n, "next_hops")?))
    }
}

/// The engine names of a comma-separated list (NULL: none, the defaults).
///
/// # Safety
/// `engines` is NULL or a NUL-terminated string.
pub(crate) unsafe fn engine_names(engines: *const c_char) -> Result<Vec<String>, Failure> {
    if engines.is_null() {
        return Ok(Vec::new());
    }
    // SAFETY: the caller's contract.
    let names = unsafe { args::text(engines, "engines") }?;
    Ok(names.split(',').map(str::trim).filter(|name| !name.is_empty()).map(String::from).collect())
}
