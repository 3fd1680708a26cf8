//! `fibkit_router` and `fibkit_reader`: a live FIB of both families, one
//! writer applying updates while readers on any threads look up.
//!
//! ```text
//!  writer thread                          reader threads (one fibkit_reader each)
//!  fibkit_router_announce4/6, withdraw,   fibkit_reader_lookup4/6 (+ _bulk)
//!  apply                                        |
//!     |                                         | load the current version:
//!     v                                         | lock-free, no lock, no wait
//!  fibkit::Router<u32> + Router<u128>  --publish-->  version n+1 ; version n freed
//!  (RIB, next hops, engine's updater)                when its last lookup returns
//! ```
//!
//! Each family is a Rust [`fibkit_core::Router`] (the reclamation lives
//! there and in `fibkit::live`, as for Rust callers); this module only
//! checks what C hands it and turns answers into status codes.

use std::ffi::{c_char, c_int, CString};

use fibkit_core::addr::{Address, Prefix};
use fibkit_core::address_text::{answer_mapped_as_ipv4, ipv4_mapped};
use fibkit_core::compiled::CompileOptions;
use fibkit_core::fib::{BuildOptions, Calibrations};
use fibkit_core::load::{fold_ipv4_mapped, RouteTable};
use fibkit_core::nexthop::Label;
use fibkit_core::router::{Reader as CoreReader, Router as CoreRouter, Update as CoreUpdate, UpdateError, Window};
use fibkit_core::{registry, NextHop};

use crate::args::{self, Addr6, FIBKIT_IPV4, FIBKIT_IPV6, FIBKIT_NO_ROUTE};
use crate::error::{guard, guard_value, Failure, FIBKIT_EREJECTED};
use crate::fib::{bulk_args, calibrations, converted, table_and_options};
use crate::table::{c_string, Table};

/// The writer's handle on a live FIB of both families (opaque).
pub struct Router {
    v4: CoreRouter<u32>,
    v6: CoreRouter<u128>,
    engine4: CString,
    engine6: CString,
}

/// A reader of a router's current FIBs (opaque).
pub struct Reader {
    pub(crate) v4: CoreReader<u32>,
    pub(crate) v6: CoreReader<u128>,
}

/// The address of a `fibkit_update`: `v4` in host byte order for
/// `FIBKIT_IPV4`, `v6` for `FIBKIT_IPV6`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union UpdateAddr {
    /// An IPv4 address, host byte order.
    pub v4: u32,
    /// An IPv6 address.
    pub v6: Addr6,
}

/// One route update of a batch for `fibkit_router_apply`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Update {
    /// `FIBKIT_IPV4` or `FIBKIT_IPV6`.
    pub family: u8,
    /// The prefix length (at most 32 for IPv4, 128 for IPv6).
    pub prefix_len: u8,
    /// 0: announce the route to `next_hop`; 1: withdraw it.
    pub withdraw: u8,
    /// Must be 0.
    pub reserved: u8,
    /// The next hop of an announcement (ignored for a withdrawal).
    pub next_hop: u32,
    /// The prefix's address.
    pub addr: UpdateAddr,
}

const _: () = assert!(size_of::<Update>() == 24);

/// The family routers of a router, by address type.
trait Family: Address {
    fn router(router: &mut Router) -> &mut CoreRouter<Self>;
}

impl Family for u32 {
    fn router(router: &mut Router) -> &mut CoreRouter<u32> {
        &mut router.v4
    }
}

impl Family for u128 {
    fn router(router: &mut Router) -> &mut CoreRouter<u128> {
        &mut router.v6
    }
}

impl Router {
    /// A family's router over the table's routes, with the engine the
    /// `engines` list gives the family.
    fn family<A: Address>(routes: &RouteTable, options: &CompileOptions) -> Result<CoreRouter<A>, Failure> {
        let engine = options.engine::<A>().map_err(fibkit_core::BuildError::from)?;
        let rib = routes.rib::<A>().clone();
        let next_hops = routes.next_hops.clone();
        let build = BuildOptions { max_next_hop: next_hops.max_index(), calibration: options.calibration.clone() };
        let updater = registry::updater::<A>(engine.name, &rib, &build)?;
        Ok(CoreRouter::with_updater(updater, rib, next_hops, Window::Count(1)))
    }

    /// The body of `fibkit_router_new` and `fibkit_router_new_calibrated`.
    ///
    /// # Safety
    /// As `fibkit_router_new`.
    unsafe fn create(
        table: *const Table,
        engines: *const c_char,
        calibration: Calibrations,
        out: *mut *mut Router,
    ) -> Result<(), Failure> {
        // SAFETY: the caller's contract.
        let (table, options) = unsafe { table_and_options(table, engines, calibration) }?;
        // A mapped route is an IPv4 route, as `fibkit_fib_build` compiles it.
        let mut routes = table.routes.clone();
        fold_ipv4_mapped(&mut routes);
        let (v4, v6) = (Router::family::<u32>(&routes, &options)?, Router::family::<u128>(&routes, &options)?);
        let (engine4, engine6) = (c_string(v4.engine()), c_string(v6.engine()));
        // SAFETY: the caller's contract.
        unsafe { args::store(out, Router { v4, v6, engine4, engine6 }) }
    }

    /// The update of `prefix` in family `A` (announce when `next_hop` is
    /// given) as the Rust router takes it.
    fn update<A: Family>(
        &mut self,
        prefix: Prefix<A>,
        next_hop: Option<NextHop>,
    ) -> Result<CoreUpdate<Prefix<A>>, Failure> {
        Ok(match next_hop {
            Some(next_hop) => CoreUpdate::Announce { prefix, value: self.label::<A>(next_hop)? },
            None => CoreUpdate::Withdraw { prefix },
        })
    }

    fn label<A: Family>(&mut self, next_hop: NextHop) -> Result<Label, Failure> {
        args::label(A::router(self).next_hops(), next_hop)
    }

    /// Applies one update and publishes it.
    fn one<A: Family>(&mut self, addr: A, prefix_len: u8, next_hop: Option<NextHop>) -> Result<(), Failure> {
        let update = self.update(args::prefix(addr, prefix_len)?, next_hop)?;
        A::router(self).apply(&[update])?;
        Ok(())
    }

    /// Applies a family's part of a batch, `positions[i]` being the
    /// caller's index of `batch[i]`; the reasons of its rejected updates
    /// join `reasons`, each naming the caller's index. Returns how many
    /// were rejected.
    fn batch<A: Family>(
        &mut self,
        batch: &[CoreUpdate<Prefix<A>>],
        positions: &[usize],
        reasons: &mut Vec<String>,
    ) -> usize {
        if batch.is_empty() {
            return 0;
        }
        let reason = |error: &UpdateError| error.named(format_args!("update {}", positions[error.index()]));
        match A::router(self).apply(batch) {
            Ok(published) => {
                reasons.extend(published.rejected.iter().map(reason));
                published.rejected.len()
            }
            Err(error) => {
                reasons.push(format!("all {} {} updates, the first: {}", batch.len(), A::FAMILY, reason(&error)));
                batch.len()
            }
        }
    }
}

/// Creates a router over `table`'s routes, each family served by the
/// engine `engines` gives it (as in `fibkit_fib_build`). Engines with
/// incremental updates (DXR, Poptrie, DIR-24-8, SAIL, SAIL-R) update in
/// place; the others are rebuilt for every batch. The table's IPv6 routes
/// inside `::ffff:0:0/96` are IPv4 routes, as `fibkit_fib_build` takes
/// them; such a route announced to the router later is refused
/// (`FIBKIT_EINVAL`, or rejected in a batch), since a mapped address is
/// looked up as IPv4.
///
/// Returns `FIBKIT_OK` and the router in `*out`, or the errors of
/// `fibkit_fib_build`.
///
/// # Safety
/// As `fibkit_fib_build`, `out` pointing to a `fibkit_router *`.
#[no_mangle]
pub unsafe extern "C" fn fibkit_router_new(
    table: *const Table,
    engines: *const c_char,
    out: *mut *mut Router,
) -> c_int {
    // SAFETY: the contract above.
    unsafe { args::clear(out) };
    // SAFETY: the contract above.
    guard(|| unsafe { Router::create(table, engines, Calibrations::default(), out) })
}

/// `fibkit_router_new`, with `auto` measuring its candidates on the
/// caller's keys, as `fibkit_fib_build_calibrated` does (the `n4` IPv4
/// addresses at `keys4`, the `n6` IPv6 ones at `keys6`);
/// `fibkit_router_engine` names the engine it chose.
///
/// Returns as `fibkit_router_new`, and `FIBKIT_EINVAL` for a NULL or
/// misaligned `keys4` or `keys6` with a count other than 0.
///
/// # Safety
/// As `fibkit_router_new`; `keys4` points to `n4` addresses and `keys6` to
/// `n6` (either may be NULL with a count of 0).
#[no_mangle]
pub unsafe extern "C" fn fibkit_router_new_calibrated(
    table: *const Table,
    engines: *const c_char,
    keys4: *const u32,
    n4: usize,
    keys6: *const Addr6,
    n6: usize,
    out: *mut *mut Router,
) -> c_int {
    // SAFETY: the contract above.
    unsafe { args::clear(out) };
    guard(|| {
        // SAFETY: the contract above.
        let calibration = unsafe { calibrations(keys4, n4, keys6, n6) }?;
        // SAFETY: the contract above.
        unsafe { Router::create(table, engines, calibration, out) }
    })
}

/// Frees a router (NULL is ignored). Its readers stay valid: they go on
/// serving its last FIBs until they are freed themselves.
///
/// # Safety
/// `router` is NULL or a router from `fibkit_router_new`, not freed
/// before, that no other thread uses.
#[no_mangle]
pub unsafe extern "C" fn fibkit_router_free(router: *mut Router) {
    // SAFETY: the contract above.
    unsafe { args::free(router) }
}

/// Announces the IPv4 route `addr/prefix_len` (host byte order) to
/// `next_hop`, replacing the prefix's next hop if it has one, and publishes
/// it at once: lookups that start after the call returns see it.
///
/// Returns `FIBKIT_OK`, or (the FIB serving as before):
/// - `FIBKIT_EINVAL`: `router` is NULL, `prefix_len` exceeds 32, or host
///   bits are set;
/// - `FIBKIT_ENEXTHOP`: `next_hop` is 0 or beyond the table's largest;
/// - `FIBKIT_ELIMIT`: the engine cannot hold the table with this route.
///
/// # Safety
/// `router` is NULL or a live router that no other thread uses during the
/// call (one writer; readers need no care).
#[no_mangle]
pub unsafe extern "C" fn fibkit_router_announce4(
    router: *mut Router,
    addr: u32,
    prefix_len: u8,
    next_hop: u32,
) -> c_int {
    // SAFETY: the contract above.
    guard(|| unsafe { args::mutable(router, "router") }?.one(addr, prefix_len, Some(next_hop)))
}

/// `fibkit_router_announce4` for the IPv6 route `*addr/prefix_len`.
///
/// # Safety
/// As `fibkit_router_announce4`; `addr` is NULL or points to 16 bytes.
#[no_mangle]
pub unsafe extern "C" fn fibkit_router_announce6(
    router: *mut Router,
    addr: *const Addr6,
    prefix_len: u8,
    next_hop: u32,
) -> c_int {
    guard(|| {
        // SAFETY: the contract above.
        let addr = u128::from(*unsafe { args::reference(addr, "addr") }?);
        // SAFETY: the contract above.
        unsafe { args::mutable(router, "router") }?.one(addr, prefix_len, Some(next_hop))
    })
}

/// Withdraws the IPv4 route `addr/prefix_len` and publishes it at once
/// (withdrawing a prefix the table lacks changes nothing and succeeds).
/// Errors as `fibkit_router_announce4`, without `FIBKIT_ENEXTHOP`.
///
/// # Safety
/// As `fibkit_router_announce4`.
#[no_mangle]
pub unsafe extern "C" fn fibkit_router_withdraw4(router: *mut Router, addr: u32, prefix_len: u8) -> c_int {
    // SAFETY: the contract above.
    guard(|| unsafe { args::mutable(router, "router") }?.one(addr, prefix_len, None))
}

/// `fibkit_router_withdraw4` for an IPv6 route.
///
/// # Safety
/// As `fibkit_router_announce6`.
#[no_mangle]
pub unsafe extern "C" fn fibkit_router_withdraw6(router: *mut Router, addr: *const Addr6, prefix_len: u8) -> c_int {
    guard(|| {
        // SAFETY: the contract above.
        let addr = u128::from(*unsafe { args::reference(addr, "addr") }?);
        // SAFETY: the contract above.
        unsafe { args::mutable(router, "router") }?.one(addr, prefix_len, None)
    })
}

/// Applies `n` updates of either family as one batch per family, each
/// published once (a batch costs an engine that rebuilds one rebuild, not
/// `n`). An update that is invalid (family, prefix, next hop) or that the
/// engine cannot take is rejected alone: the others are applied.
///
/// Returns `FIBKIT_OK` when every update was applied, or:
/// - `FIBKIT_EREJECTED`: some were rejected, `*rejected` (when `rejected`
///   is not NULL) says how many and the last error lists them;
/// - `FIBKIT_EINVAL`: `router` is NULL, or `updates` is NULL or misaligned
///   with `n` > 0 (nothing applied).
///
/// # Safety
/// `router` as for `fibkit_router_announce4`; `updates` is NULL or holds
/// `n` updates; `rejected` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fibkit_router_apply(
    router: *mut Router,
    updates: *const Update,
    n: usize,
    rejected: *mut usize,
) -> c_int {
    let mut count = 0;
    let status = guard(|| {
        // SAFETY: the contract above.
        let router = unsafe { args::mutable(router, "router") }?;
        // SAFETY: the contract above.
        let updates = unsafe { args::slice(updates, n, "updates") }?;
        let mut reasons = Vec::new();
        let (mut v4, mut v6) = (Vec::new(), Vec::new());
        // Each family's updates' indexes in the caller's array.
        let (mut v4_positions, mut v6_positions) = (Vec::new(), Vec::new());
        for (index, update) in updates.iter().enumerate() {
            let next_hop = (update.withdraw == 0).then_some(update.next_hop);
            let converted = match (update.family, update.withdraw, update.reserved) {
                (_, 2.., _) => Err(Failure::invalid(format!("withdraw is {}, not 0 or 1", update.withdraw))),
                (_, _, 1..) => Err(Failure::invalid(format!("reserved is {}, not 0", update.reserved))),
                // SAFETY: every bit pattern of the union is a valid u32.
                (4, ..) => args::prefix(unsafe { update.addr.v4 }, update.prefix_len)
                    .and_then(|prefix| router.update(prefix, next_hop))
                    .map(|update| {
                        v4.push(update);
                        v4_positions.push(index);
                    }),
                // SAFETY: every bit pattern of the union is a valid Addr6.
                (6, ..) => args::prefix(u128::from(unsafe { update.addr.v6 }), update.prefix_len)
                    .and_then(|prefix| router.update(prefix, next_hop))
                    .map(|update| {
                        v6.push(update);
                        v6_positions.push(index);
                    }),
                (family, ..) => {
                    Err(Failure::invalid(format!("family {family}, not FIBKIT_IPV4 (4) or FIBKIT_IPV6 (6)")))
                }
            };
            if let Err(failure) = converted {
                reasons.push(format!("update {index}: {}", failure.message));
            }
        }
        count = reasons.len();
        count += router.batch(&v4, &v4_positions, &mut reasons) + router.batch(&v6, &v6_positions, &mut reasons);
        if count == 0 {
            return Ok(());
        }
        Err(Failure::new(FIBKIT_EREJECTED, format!("{count} of {n} updates rejected: {}", reasons.join("; "))))
    });
    if !rejected.is_null() && rejected.is_aligned() {
        // SAFETY: not NULL, aligned, writable by the contract above.
        unsafe { rejected.write(count) };
    }
    status
}

/// Makes every batch the router applies from now on atomic for readers
/// (`atomic` non-zero): a bulk lookup answers all its addresses from one
/// version, before the batch or after it, as for a route moved from one
/// prefix to another. Each family's batch is atomic on its own. Each
/// batch then costs a copy of the engine's structure (its footprint, for
/// `dir24-8` about 70 MB) and, while readers hold the old one, the memory
/// of both. With 0 (the default) a batch is written in place, atomic per
/// address only (`fibkit_reader_lookup4_bulk` says what readers see).
///
/// Returns `FIBKIT_OK`, or `FIBKIT_EINVAL` when `router` is NULL.
///
/// # Safety
/// `router` as for `fibkit_router_announce4`.
#[no_mangle]
pub unsafe extern "C" fn fibkit_router_set_atomic(router: *mut Router, atomic: c_int) -> c_int {
    guard(|| {
        // SAFETY: the contract above.
        let router = unsafe { args::mutable(router, "router") }?;
        router.v4.set_atomic_batches(atomic != 0);
        router.v6.set_atomic_batches(atomic != 0);
        Ok(())
    })
}

/// How many generations `family`'s FIB has published since the router was
/// made (one per applied batch that changed a route); 0 for another family
/// or a NULL router.
///
/// # Safety
/// `router` is NULL or a live router that no other thread modifies during
/// the call.
#[no_mangle]
pub unsafe extern "C" fn fibkit_router_generation(router: *const Router, family: c_int) -> u64 {
    // SAFETY: the contract above.
    let Ok(router) = (unsafe { args::reference(router, "router") }) else { return 0 };
    match family {
        FIBKIT_IPV4 => router.v4.generation(),
        FIBKIT_IPV6 => router.v6.generation(),
        _ => 0,
    }
}

/// The engine serving `family`, valid while the router lives; NULL for
/// another family or a NULL router.
///
/// # Safety
/// `router` is NULL or a live router.
#[no_mangle]
pub unsafe extern "C" fn fibkit_router_engine(router: *const Router, family: c_int) -> *const c_char {
    // SAFETY: the contract above.
    let Ok(router) = (unsafe { args::reference(router, "router") }) else { return std::ptr::null() };
    match family {
        FIBKIT_IPV4 => router.engine4.as_ptr(),
        FIBKIT_IPV6 => router.engine6.as_ptr(),
        _ => std::ptr::null(),
    }
}

/// Creates a reader of `router`'s FIBs. Make one per reader thread (a
/// reader may be used from several threads at once, but they then share
/// its cache lines). A reader's lookups never block and are never blocked:
/// each loads the version being served without a lock, and a replaced
/// version is freed when the last lookup that loaded it returns; the
/// writer does not wait for readers either. The reader stays valid after
/// `fibkit_router_free` (serving the last FIBs) until `fibkit_reader_free`.
///
/// Returns `FIBKIT_OK` and the reader in `*out`, or `FIBKIT_EINVAL` when
/// `router` or `out` is NULL.
///
/// # Safety
/// `router` is NULL or a live router that no other thread modifies during
/// the call; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fibkit_reader_new(router: *const Router, out: *mut *mut Reader) -> c_int {
    // SAFETY: the contract above.
    unsafe { args::clear(out) };
    guard(|| {
        // SAFETY: the contract above.
        let router = unsafe { args::reference(router, "router") }?;
        let reader = Reader { v4: router.v4.reader(), v6: router.v6.reader() };
        // SAFETY: the contract above.
        unsafe { args::store(out, reader) }
    })
}

/// Frees a reader (NULL is ignored).
///
/// # Safety
/// `reader` is NULL or a reader from `fibkit_reader_new`, not freed before,
/// with no lookup through it running or to come.
#[no_mangle]
pub unsafe extern "C" fn fibkit_reader_free(reader: *mut Reader) {
    // SAFETY: the contract above.
    unsafe { args::free(reader) }
}

/// The next hop of the IPv4 address `addr` (host byte order) in the FIB
/// being served, as `fibkit_lookup4`.
///
/// # Safety
/// `reader` is NULL or a live reader.
#[no_mangle]
pub unsafe extern "C" fn fibkit_reader_lookup4(reader: *const Reader, addr: u32) -> u32 {
    guard_value(FIBKIT_NO_ROUTE, || {
        // SAFETY: the contract above.
        Ok(unsafe { args::lookup_handle(reader, "reader") }?.v4.lookup(addr))
    })
}

/// The next hop of the IPv6 address `*addr`, as `fibkit_lookup6`: an
/// IPv4-mapped address (`::ffff:a.b.c.d`) is looked up in the IPv4 FIB.
///
/// # Safety
/// `reader` is NULL or a live reader; `addr` is NULL or points to 16 bytes.
#[no_mangle]
pub unsafe extern "C" fn fibkit_reader_lookup6(reader: *const Reader, addr: *const Addr6) -> u32 {
    guard_value(FIBKIT_NO_ROUTE, || {
        // SAFETY: the contract above.
        let addr = u128::from(*unsafe { args::lookup_handle(addr, "addr") }?);
        // SAFETY: the contract above.
        let reader = unsafe { args::lookup_handle(reader, "reader") }?;
        Ok(match ipv4_mapped(addr) {
            Some(addr) => reader.v4.lookup(addr),
            None => reader.v6.lookup(addr),
        })
    })
}

/// Looks up `n` IPv4 addresses (host byte order) in the FIB being served,
/// as `fibkit_lookup4_bulk`. What a call may see while the writer applies
/// batches:
/// - with atomic batches (`fibkit_router_set_atomic`), or an engine that
///   rebuilds for every batch, every answer of the call is from one
///   version of the FIB;
/// - otherwise (an engine updated in place, the default) each address's
///   answer is what the routes gave it before or after each batch applied
///   during the call, never anything else; one call may answer some
///   addresses as before a batch and others as after it.
///
/// # Safety
/// As `fibkit_lookup4_bulk`, with a live reader.
#[no_mangle]
pub unsafe extern "C" fn fibkit_reader_lookup4_bulk(
    reader: *const Reader,
    keys: *const u32,
    next_hops: *mut u32,
    n: usize,
) -> c_int {
    guard(|| {
        // SAFETY: the contract above.
        let (reader, keys, out) = unsafe { bulk_args(reader, "reader", keys, next_hops, n) }?;
        reader.v4.lookup_batch(keys, out);
        Ok(())
    })
}

/// Looks up `n` IPv6 addresses in the FIB being served, as
/// `fibkit_lookup6_bulk`, seeing what `fibkit_reader_lookup4_bulk` says;
/// the IPv4-mapped ones are looked up in the IPv4 FIB, in one version of
/// it.
///
/// # Safety
/// As `fibkit_lookup6_bulk`, with a live reader.
#[no_mangle]
pub unsafe extern "C" fn fibkit_reader_lookup6_bulk(
    reader: *const Reader,
    keys: *const Addr6,
    next_hops: *mut u32,
    n: usize,
) -> c_int {
    guard(|| {
        // SAFETY: the contract above.
        let (reader, keys, out) = unsafe { bulk_args(reader, "reader", keys, next_hops, n) }?;
        let snapshot = reader.v6.snapshot();
        converted(keys, out, u128::from, |keys, out| snapshot.fib().lookup_batch(keys, out));
        let snapshot4 = reader.v4.snapshot();
        answer_mapped_as_ipv4(keys, out, |addr| snapshot4.fib().lookup(addr));
        Ok(())
    })
}
