//! Arguments from C, checked before they are trusted: NULL pointers,
//! alignment, lengths, text, prefixes, families and next hops.

use std::ffi::{c_char, c_int, CStr};
use std::path::PathBuf;

use fibkit_core::addr::{Address, Prefix};
use fibkit_core::nexthop::{Label, NextHopTable};
use fibkit_core::NextHop;

use crate::error::Failure;

/// The IPv4 family, as `fibkit_fib_engine` and `fibkit_update` take it.
pub const FIBKIT_IPV4: c_int = 4;
/// The IPv6 family.
pub const FIBKIT_IPV6: c_int = 6;
/// The next hop of an address no prefix covers.
pub const FIBKIT_NO_ROUTE: u32 = 0;

/// An IPv6 address: 16 bytes in network order, laid out as `struct
/// in6_addr` (a `struct in6_addr *` may be cast to a `fibkit_addr6 *`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Addr6 {
    /// The address, most significant byte first.
    pub bytes: [u8; 16],
}

const _: () = assert!(size_of::<Addr6>() == 16 && align_of::<Addr6>() == 1);

impl From<Addr6> for u128 {
    #[inline]
    fn from(addr: Addr6) -> u128 {
        u128::from_be_bytes(addr.bytes)
    }
}

impl From<u128> for Addr6 {
    fn from(addr: u128) -> Addr6 {
        Addr6 { bytes: addr.to_be_bytes() }
    }
}

/// `ptr` as a reference, refused when NULL or misaligned.
///
/// # Safety
/// A non-NULL, aligned `ptr` must point to a live `T` (the header's
/// contract for every handle and struct argument).
#[inline]
pub unsafe fn reference<'a, T>(ptr: *const T, name: &str) -> Result<&'a T, Failure> {
    check_pointer(ptr, name)?;
    // SAFETY: not NULL and aligned (checked); live by the caller's contract.
    Ok(unsafe { &*ptr })
}

/// The handle at `ptr` for a scalar lookup: only NULL is refused, with no
/// `Result` plumbing on the way (it cost scalar lookups through the C API
/// 5-15% of their rate, measured with `bench_dpdk`).
///
/// # Safety
/// A non-NULL `ptr` must point to a live `T`.
#[inline(always)]
pub unsafe fn lookup_handle<'a, T>(ptr: *const T, name: &'static str) -> Result<&'a T, Failure> {
    // SAFETY: NULL or live by the caller's contract.
    match unsafe { ptr.as_ref() } {
        Some(handle) => Ok(handle),
        None => Err(null(name)),
    }
}

/// The failure of a NULL argument `name`.
#[cold]
#[inline(never)]
fn null(name: &str) -> Failure {
    Failure::invalid(format!("argument `{name}` is NULL"))
}

/// `ptr` as a mutable reference, refused when NULL or misaligned.
///
/// # Safety
/// As [`reference()`], and no other reference to the `T` is in use.
#[inline]
pub unsafe fn mutable<'a, T>(ptr: *mut T, name: &str) -> Result<&'a mut T, Failure> {
    check_pointer(ptr, name)?;
    // SAFETY: not NULL and aligned (checked); live and unaliased by the
    // caller's contract.
    Ok(unsafe { &mut *ptr })
}

/// The `len` elements at `ptr` (which may be NULL when `len` is 0).
///
/// # Safety
/// A non-NULL `ptr` must point to `len` initialised elements that nothing
/// writes during the call.
pub unsafe fn slice<'a, T>(ptr: *const T, len: usize, name: &str) -> Result<&'a [T], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    check_array::<T>(ptr, len, name)?;
    // SAFETY: checked non-NULL, aligned and within isize::MAX bytes; the
    // caller promises `len` live elements.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// The `len` elements at `ptr` to write (`ptr` may be NULL when `len` is 0).
///
/// # Safety
/// A non-NULL `ptr` must point to `len` writable elements that nothing
/// else reads or writes during the call.
pub unsafe fn slice_mut<'a, T>(ptr: *mut T, len: usize, name: &str) -> Result<&'a mut [T], Failure> {
    if len == 0 {
        return Ok(&mut []);
    }
    check_array::<T>(ptr, len, name)?;
    // SAFETY: as in `slice`, and unaliased by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
}

/// The NUL-terminated text at `ptr`, which must be UTF-8.
///
/// # Safety
/// A non-NULL `ptr` must point to a NUL-terminated string.
pub unsafe fn text<'a>(ptr: *const c_char, name: &str) -> Result<&'a str, Failure> {
    check_pointer(ptr, name)?;
    // SAFETY: not NULL; NUL-terminated by the caller's contract.
    let text = unsafe { CStr::from_ptr(ptr) };
    text.to_str().map_err(|_| Failure::invalid(format!("argument `{name}` is not UTF-8")))
}

/// The file path at `ptr` (any bytes but NUL, as the system takes them).
///
/// # Safety
/// As [`text`].
pub unsafe fn path(ptr: *const c_char, name: &str) -> Result<PathBuf, Failure> {
    check_pointer(ptr, name)?;
    // SAFETY: not NULL; NUL-terminated by the caller's contract.
    let bytes = unsafe { CStr::from_ptr(ptr) }.to_bytes();
    Ok(path_of(bytes))
}

#[cfg(unix)]
fn path_of(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

#[cfg(not(unix))]
fn path_of(bytes: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}

/// Writes `text` into `buffer` as NUL-terminated text, cut to fit `size`
/// bytes as `snprintf` does; returns `text`'s length (without the NUL).
///
/// # Safety
/// `buffer` is NULL with `size` 0, or points to `size` writable bytes.
pub unsafe fn write_text(text: &str, buffer: *mut c_char, size: usize) -> Result<usize, Failure> {
    // SAFETY: the caller's contract.
    let buffer = unsafe { slice_mut(buffer.cast::<u8>(), size, "buffer") }?;
    if let Some((last, room)) = buffer.split_last_mut() {
        let copied = text.len().min(room.len());
        room[..copied].copy_from_slice(&text.as_bytes()[..copied]);
        match room.get_mut(copied) {
            Some(end) => *end = 0,
            None => *last = 0,
        }
    }
    Ok(text.len())
}

/// Stores `value` boxed in `*out` (whose NULL was checked by [`clear`]).
///
/// # Safety
/// `out` is NULL or points to a writable pointer.
pub unsafe fn store<T>(out: *mut *mut T, value: T) -> Result<(), Failure> {
    check_pointer(out, "out")?;
    // SAFETY: not NULL and aligned (checked), writable by the caller's
    // contract.
    unsafe { out.write(Box::into_raw(Box::new(value))) };
    Ok(())
}

/// Sets `*out` to NULL (if `out` is not NULL), so that a failed call
/// leaves no stale handle behind.
///
/// # Safety
/// `out` is NULL or points to a writable pointer.
pub unsafe fn clear<T>(out: *mut *mut T) {
    if !out.is_null() && out.is_aligned() {
        // SAFETY: not NULL, aligned, writable by the caller's contract.
        unsafe { out.write(std::ptr::null_mut()) };
    }
}

/// Frees a handle made by [`store`]; NULL is ignored.
///
/// # Safety
/// `handle` is NULL or came from [`store`] for this `T` and is not used
/// again.
pub unsafe fn free<T>(handle: *mut T) {
    if !handle.is_null() {
        // SAFETY: made by Box::into_raw in `store`, freed once by contract.
        drop(unsafe { Box::from_raw(handle) });
    }
}

#[inline(always)]
fn check_pointer<T>(ptr: *const T, name: &str) -> Result<(), Failure> {
    if ptr.is_null() || !ptr.is_aligned() {
        return Err(bad_pointer(ptr, name));
    }
    Ok(())
}

/// Why `ptr` was refused (out of line: lookups check a pointer per call).
#[cold]
#[inline(never)]
fn bad_pointer<T>(ptr: *const T, name: &str) -> Failure {
    if ptr.is_null() {
        null(name)
    } else {
        Failure::invalid(format!("argument `{name}` is not aligned to {} bytes", align_of::<T>()))
    }
}

fn check_array<T>(ptr: *const T, len: usize, name: &str) -> Result<(), Failure> {
    check_pointer(ptr, name)?;
    match len.checked_mul(size_of::<T>()) {
        Some(bytes) if bytes <= isize::MAX as usize => Ok(()),
        _ => Err(Failure::invalid(format!("argument `{name}`: {len} elements exceed the address space"))),
    }
}

/// The prefix `addr/prefix_len`, refused with the reason (length beyond
/// the family's, host bits set).
pub fn prefix<A: Address>(addr: A, prefix_len: u8) -> Result<Prefix<A>, Failure> {
    Prefix::new(addr, prefix_len).map_err(|problem| Failure::invalid(problem.to_string()))
}

/// The label that `next_hops` interns to `next_hop`: refused for 0 and for
/// a next hop beyond the table's largest.
pub fn label(next_hops: &NextHopTable, next_hop: NextHop) -> Result<Label, Failure> {
    next_hops.label_for(next_hop).ok_or_else(|| {
        let max = next_hops.max_index();
        let why = if next_hop == 0 {
            "0 means no route".to_string()
        } else {
            format!("this table's next hops are 1 to {max}")
        };
        Failure::new(crate::error::FIBKIT_ENEXTHOP, format!("next hop {next_hop} refused: {why}"))
    })
}
