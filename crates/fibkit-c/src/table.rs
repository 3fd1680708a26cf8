//! `fibkit_table`: the routes of both families, loaded from a table file
//! or added one by one, that FIBs and routers are built from.

use std::ffi::{c_char, c_int, c_void, CString};

use fibkit_core::addr::Address;
use fibkit_core::load::{self, LoadOptions, RouteTable};
use fibkit_core::nexthop::Mapping;
use fibkit_core::rib::Rib;
use fibkit_core::NextHop;

use crate::args::{self, Addr6};
use crate::error::{guard, guard_walk, Failure, FIBKIT_ENEXTHOP};

/// Load flag: warnings (duplicate prefixes, overlapping ranges, truncated
/// data) are errors instead of being kept for `fibkit_table_warning`.
pub const FIBKIT_LOAD_STRICT: u32 = 1;

/// A routing table of both families (opaque).
pub struct Table {
    pub(crate) routes: RouteTable,
    name: CString,
    warnings: Vec<CString>,
}

impl Table {
    pub(crate) fn new(routes: RouteTable) -> Self {
        let name = c_string(&routes.name);
        let warnings = routes.warnings.iter().map(|warning| c_string(warning)).collect();
        Table { routes, name, warnings }
    }

    /// Adds (or replaces) the route `addr/prefix_len` to `next_hop`.
    fn add<A: Address>(&mut self, addr: A, prefix_len: u8, next_hop: NextHop) -> Result<(), Failure>
    where
        RouteTable: RibOf<A>,
    {
        let prefix = args::prefix(addr, prefix_len)?;
        let label = args::label(&self.routes.next_hops, next_hop)?;
        let hop = self.routes.next_hops.intern(label);
        self.routes.rib_mut().insert(prefix, hop);
        Ok(())
    }
}

/// The RIB of one family in a route table, to write.
pub trait RibOf<A: Address> {
    /// The family's RIB.
    fn rib_mut(&mut self) -> &mut Rib<A>;
}

impl RibOf<u32> for RouteTable {
    fn rib_mut(&mut self) -> &mut Rib<u32> {
        &mut self.v4
    }
}

impl RibOf<u128> for RouteTable {
    fn rib_mut(&mut self) -> &mut Rib<u128> {
        &mut self.v6
    }
}

/// `text` as a C string, cut at an interior NUL (none of fibkit's texts
/// has one; a file name might).
pub fn c_string(text: &str) -> CString {
    CString::new(text.split('\0').next().unwrap_or_default()).unwrap_or_default()
}

/// Creates an empty table whose next hops are the numbers 1 to
/// `max_next_hop`, as the caller gives them to `fibkit_table_add4` and
/// `fibkit_table_add6` and as lookups answer them (DPDK's `rte_lpm` keeps
/// next hops the same way). Engines size their fields by `max_next_hop`.
///
/// Returns `FIBKIT_OK` and the table in `*out`, or:
/// - `FIBKIT_EINVAL`: `out` is NULL;
/// - `FIBKIT_ENEXTHOP`: `max_next_hop` is 0.
///
/// Free the table with `fibkit_table_free`.
///
/// # Safety
/// `out` is NULL or points to a writable `fibkit_table *`.
#[no_mangle]
pub unsafe extern "C" fn fibkit_table_new(max_next_hop: u32, out: *mut *mut Table) -> c_int {
    // SAFETY: `out` is NULL or writable (the contract above).
    unsafe { args::clear(out) };
    guard(|| {
        if max_next_hop == 0 {
            return Err(Failure::new(FIBKIT_ENEXTHOP, "max_next_hop 0: a table needs at least next hop 1"));
        }
        let routes = RouteTable::new("table", Mapping::Modulo(max_next_hop));
        // SAFETY: as above.
        unsafe { args::store(out, Table::new(routes)) }
    })
}

/// Loads a table file: text (`prefix value` lines), range CSV, or an MRT
/// dump, detected from the content, gzip or bzip2 compressed or not. A
/// route's value (an ASN, a next-hop address) becomes a next hop: with
/// `next_hops` 0 each distinct value gets the next number from 1 on, in
/// order of first appearance (`fibkit_fib_value` gives a next hop's value
/// back); with `next_hops` N > 0 value v becomes v % N + 1. `flags` is 0 or
/// `FIBKIT_LOAD_STRICT`.
///
/// Returns `FIBKIT_OK` and the table in `*out`, or:
/// - `FIBKIT_EINVAL`: `path` or `out` is NULL, or `flags` has an unknown bit;
/// - `FIBKIT_EIO`: the file cannot be read;
/// - `FIBKIT_EPARSE`: its content is wrong (the message names the file,
///   the line or byte offset, and the problem), or, with
///   `FIBKIT_LOAD_STRICT`, it has a warning.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `out` as for
/// `fibkit_table_new`.
#[no_mangle]
pub unsafe extern "C" fn fibkit_table_load(
    path: *const c_char,
    next_hops: u32,
    flags: u32,
    out: *mut *mut Table,
) -> c_int {
    let mapping = if next_hops == 0 { Mapping::Distinct } else { Mapping::Modulo(next_hops) };
    // SAFETY: the contract above.
    unsafe { load_into(path, flags, out, |strict| Ok(LoadOptions { mapping, strict, ..Default::default() })) }
}

/// Loads the table file `path` into `*out` with the options `options`
/// gives (told whether `flags` asks for `FIBKIT_LOAD_STRICT`): the body of
/// the `fibkit_table_load` functions, returning their status.
///
/// # Safety
/// As for `fibkit_table_load`.
pub(crate) unsafe fn load_into(
    path: *const c_char,
    flags: u32,
    out: *mut *mut Table,
    options: impl FnOnce(bool) -> Result<LoadOptions, Failure>,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { args::clear(out) };
    guard(|| {
        // SAFETY: the caller's contract.
        let path = unsafe { args::path(path, "path") }?;
        if flags & !FIBKIT_LOAD_STRICT != 0 {
            return Err(Failure::invalid(format!("flags {flags:#x}: unknown bits (only FIBKIT_LOAD_STRICT)")));
        }
        let routes = load::load_path(&path, &options(flags & FIBKIT_LOAD_STRICT != 0)?)?;
        // SAFETY: the caller's contract.
        unsafe { args::store(out, Table::new(routes)) }
    })
}

/// Frees a table (NULL is ignored). FIBs and routers built from it are
/// independent of it and stay valid.
///
/// # Safety
/// `table` is NULL or a table from `fibkit_table_new` or
/// `fibkit_table_load` not freed before and not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn fibkit_table_free(table: *mut Table) {
    // SAFETY: the contract above.
    unsafe { args::free(table) }
}

/// Adds the IPv4 route `addr/prefix_len` (address in host byte order,
/// 0x0a000000 for 10.0.0.0) to `next_hop`, replacing the prefix's next hop
/// if the table has it already.
///
/// Returns `FIBKIT_OK`, or:
/// - `FIBKIT_EINVAL`: `table` is NULL, `prefix_len` exceeds 32, or `addr`
///   has bits set past `prefix_len` (10.0.0.1/8: the message gives
///   10.0.0.0/8; unlike `rte_lpm_add`, fibkit does not clear them silently);
/// - `FIBKIT_ENEXTHOP`: `next_hop` is 0 or beyond the table's largest.
///
/// # Safety
/// `table` is NULL or a live table that no other thread uses during the
/// call.
#[no_mangle]
pub unsafe extern "C" fn fibkit_table_add4(table: *mut Table, addr: u32, prefix_len: u8, next_hop: u32) -> c_int {
    guard(|| {
        // SAFETY: the contract above.
        unsafe { args::mutable(table, "table") }?.add(addr, prefix_len, next_hop)
    })
}

/// Adds the IPv6 route `*addr/prefix_len` to `next_hop`, as
/// `fibkit_table_add4` (and `FIBKIT_EINVAL` also for a NULL `addr`, or
/// `prefix_len` beyond 128).
///
/// # Safety
/// `table` as for `fibkit_table_add4`; `addr` is NULL or points to 16 bytes.
#[no_mangle]
pub unsafe extern "C" fn fibkit_table_add6(
    table: *mut Table,
    addr: *const Addr6,
    prefix_len: u8,
    next_hop: u32,
) -> c_int {
    guard(|| {
        // SAFETY: the contract above.
        let addr = unsafe { args::reference(addr, "addr") }?;
        // SAFETY: the contract above.
        unsafe { args::mutable(table, "table") }?.add(u128::from(*addr), prefix_len, next_hop)
    })
}

/// The number of routes of `family` (`FIBKIT_IPV4` or `FIBKIT_IPV6`); 0
/// for a NULL table or another family.
///
/// # Safety
/// `table` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn fibkit_table_routes(table: *const Table, family: c_int) -> usize {
    // SAFETY: the contract above.
    let Ok(table) = (unsafe { args::reference(table, "table") }) else { return 0 };
    match family {
        args::FIBKIT_IPV4 => table.routes.v4.len(),
        args::FIBKIT_IPV6 => table.routes.v6.len(),
        _ => 0,
    }
}

/// The table's largest next hop: `max_next_hop` of `fibkit_table_new`,
/// the number of distinct values of a loaded table, or its N. 0 for NULL.
///
/// # Safety
/// `table` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn fibkit_table_max_next_hop(table: *const Table) -> u32 {
    // SAFETY: the contract above.
    unsafe { args::reference(table, "table") }.map_or(0, |table| table.routes.next_hops.max_index())
}

/// The table's name (its file's name, or "table"), valid while the table
/// lives; NULL for a NULL table.
///
/// # Safety
/// `table` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn fibkit_table_name(table: *const Table) -> *const c_char {
    // SAFETY: the contract above.
    unsafe { args::reference(table, "table") }.map_or(std::ptr::null(), |table| table.name.as_ptr())
}

/// The number of warnings loading the table gave (duplicate prefixes,
/// overlapping ranges, skipped records), each naming its line.
///
/// # Safety
/// `table` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn fibkit_table_warnings(table: *const Table) -> usize {
    // SAFETY: the contract above.
    unsafe { args::reference(table, "table") }.map_or(0, |table| table.warnings.len())
}

/// Warning `index` (from 0), valid while the table lives; NULL past the
/// last.
///
/// # Safety
/// `table` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn fibkit_table_warning(table: *const Table, index: usize) -> *const c_char {
    // SAFETY: the contract above.
    let Ok(table) = (unsafe { args::reference(table, "table") }) else { return std::ptr::null() };
    table.warnings.get(index).map_or(std::ptr::null(), |warning| warning.as_ptr())
}

/// Called by `fibkit_table_foreach4` for each IPv4 route (address in host
/// byte order); a non-zero return stops the walk.
pub type Route4Fn =
    Option<unsafe extern "C" fn(context: *mut c_void, addr: u32, prefix_len: u8, next_hop: u32) -> c_int>;

/// Called by `fibkit_table_foreach6` for each IPv6 route; `addr` is valid
/// during the call only. A non-zero return stops the walk.
pub type Route6Fn =
    Option<unsafe extern "C" fn(context: *mut c_void, addr: *const Addr6, prefix_len: u8, next_hop: u32) -> c_int>;

/// Calls `route(context, addr, prefix_len, next_hop)` for every IPv4 route
/// in address order (a prefix before the longer ones inside it), to feed
/// another library the same table.
///
/// Returns `FIBKIT_OK` after the last route, the callback's non-zero value
/// if it stopped the walk, or `FIBKIT_EINVAL` for a NULL `table` or
/// `route`.
///
/// # Safety
/// `table` is NULL or a live table not modified during the walk; `route`
/// must not unwind or `longjmp` out of the walk.
#[no_mangle]
pub unsafe extern "C" fn fibkit_table_foreach4(table: *const Table, route: Route4Fn, context: *mut c_void) -> c_int {
    // SAFETY: the contract above.
    unsafe {
        walk::<u32>(table, route.is_some(), |addr, prefix_len, next_hop| match route {
            Some(route) => route(context, addr, prefix_len, next_hop),
            None => 0,
        })
    }
}

/// `fibkit_table_foreach4` for the IPv6 routes.
///
/// # Safety
/// As `fibkit_table_foreach4`.
#[no_mangle]
pub unsafe extern "C" fn fibkit_table_foreach6(table: *const Table, route: Route6Fn, context: *mut c_void) -> c_int {
    // SAFETY: the contract above; `addr` lives through each call.
    unsafe {
        walk::<u128>(table, route.is_some(), |addr, prefix_len, next_hop| match route {
            Some(route) => route(context, &Addr6::from(addr), prefix_len, next_hop),
            None => 0,
        })
    }
}

/// Calls `visit` for every route of family `A` until it returns non-zero.
///
/// # Safety
/// `table` is NULL or a live table; `visit` calls a C function of the
/// declared type, which must not unwind.
unsafe fn walk<A: Address>(
    table: *const Table,
    has_route: bool,
    mut visit: impl FnMut(A, u8, NextHop) -> c_int,
) -> c_int {
    guard_walk(|stopped| {
        // SAFETY: the contract above.
        let table = unsafe { args::reference(table, "table") }?;
        if !has_route {
            return Err(Failure::invalid("argument `route` is NULL"));
        }
        for (prefix, next_hop) in table.routes.rib::<A>().iter() {
            *stopped = visit(prefix.addr(), prefix.prefix_len(), next_hop);
            if *stopped != 0 {
                break;
            }
        }
        Ok(())
    })
}
