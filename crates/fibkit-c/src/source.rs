//! `fibkit_source`: a live FIB of both families fed by a route source on
//! threads of its own: BGP neighbours (`fibkit_bgp_start`) or the Linux
//! kernel's routing table (`fibkit_kernel_start`). The C program only
//! reads: `fibkit_source_reader` gives the same `fibkit_reader` a
//! `fibkit_router` gives.
//!
//! ```text
//!  source threads (fibkit-sources)             reader threads (one fibkit_reader each)
//!  BGP sessions / netlink socket               fibkit_reader_lookup4/6 (+ _bulk)
//!     |  one writer thread                           |
//!     v                                              | lock-free, as for a router
//!  Router<u32> + Router<u128>  -----publish----->  version n+1
//!  next hops: indexes of the values seen, in order  fibkit_source_value(hop) -> "192.0.2.1"
//! ```
//!
//! The sources, their rules (the decision process, how a kernel route
//! maps to one value) and their log are those of the Rust crate
//! `fibkit-sources`; this module checks what C hands it.

use std::ffi::{c_char, c_int, c_void, CString};
use std::net::{Ipv4Addr, SocketAddr};

use fibkit_core::compiled::CompileOptions;
use fibkit_core::load::ValueChoice;
use fibkit_core::nexthop::{Label, Mapping, NextHopTable};
use fibkit_core::router::{Reader as CoreReader, Router as CoreRouter, Window};
use fibkit_core::{Address, Rib};
use fibkit_sources::bgp::{BgpConfig as CoreBgpConfig, NeighbourConfig, SessionState, Speaker, StartError};

use crate::args::{self, FIBKIT_IPV4, FIBKIT_IPV6};
use crate::error::{guard, guard_value, guard_walk, Failure, FIBKIT_EIO};
use crate::fib::engine_names;
use crate::router::Reader;
use crate::table::c_string;

/// A route's value in a BGP source: the route's next hop.
pub const FIBKIT_VALUE_NEXT_HOP: c_int = 0;
/// A route's value in a BGP source: the origin AS of its AS path.
pub const FIBKIT_VALUE_ORIGIN_AS: c_int = 1;
/// A route's value in a kernel source: its gateway (a route without one:
/// its output interface's index).
pub const FIBKIT_VALUE_GATEWAY: c_int = 2;
/// A route's value in a kernel source: its output interface's index.
pub const FIBKIT_VALUE_INTERFACE: c_int = 3;

/// A BGP session's state (`fibkit_bgp_neighbor.state`): no connection.
pub const FIBKIT_BGP_IDLE: c_int = 0;
/// OPEN sent, waiting for the neighbour's.
pub const FIBKIT_BGP_OPEN_SENT: c_int = 1;
/// OPENs exchanged, waiting for a KEEPALIVE.
pub const FIBKIT_BGP_OPEN_CONFIRM: c_int = 2;
/// Exchanging routes.
pub const FIBKIT_BGP_ESTABLISHED: c_int = 3;

/// A live route source and the FIBs it feeds (opaque).
pub struct Source {
    running: Running,
    engine4: CString,
    engine6: CString,
}

enum Running {
    Bgp(Speaker),
    #[cfg(target_os = "linux")]
    Kernel(fibkit_sources::netlink::Mirror),
}

impl Running {
    fn readers(&self) -> (CoreReader<u32>, CoreReader<u128>) {
        match self {
            Running::Bgp(speaker) => (speaker.reader4(), speaker.reader6()),
            #[cfg(target_os = "linux")]
            Running::Kernel(mirror) => (mirror.reader4(), mirror.reader6()),
        }
    }

    fn label<A: Address>(&self, hop: u32) -> Option<Label> {
        match self {
            Running::Bgp(speaker) => speaker.label::<A>(hop),
            #[cfg(target_os = "linux")]
            Running::Kernel(mirror) => mirror.label::<A>(hop),
        }
    }
}

/// A BGP source's configuration, for `fibkit_bgp_start`. Fill it with
/// `fibkit_bgp_config_init` first, so that fields added later keep their
/// defaults.
#[repr(C)]
pub struct BgpConfig {
    /// The local AS (a 4-octet AS number).
    pub local_as: u32,
    /// The BGP identifier, an IPv4 address as text (`"192.0.2.1"`).
    pub router_id: *const c_char,
    /// `neighbor_count` neighbours, each `"ADDRESS,as=ASN"`, optionally
    /// followed by `,connect=PORT` (fibkit connects to it too) and
    /// `,max-prefixes=N` (past it: a Cease NOTIFICATION and its routes
    /// withdrawn): the form of `fibkit follow --neighbor`.
    pub neighbors: *const *const c_char,
    /// How many strings `neighbors` holds.
    pub neighbor_count: usize,
    /// `listen_count` addresses to accept connections on, each
    /// `"ADDRESS:PORT"` (`"127.0.0.1:0"` takes a free port:
    /// `fibkit_bgp_port` says which).
    pub listen: *const *const c_char,
    /// How many strings `listen` holds.
    pub listen_count: usize,
    /// `FIBKIT_VALUE_NEXT_HOP` or `FIBKIT_VALUE_ORIGIN_AS`.
    pub value: c_int,
    /// The hold time offered, in seconds: 0 (no keepalives) or at least 3.
    pub hold_time: u16,
    /// The engines, as `fibkit_router_new` takes them; NULL: the defaults.
    pub engines: *const c_char,
}

/// A BGP neighbour's state, from `fibkit_bgp_neighbor`.
#[repr(C)]
pub struct NeighborStatus {
    /// Its address as NUL-terminated text.
    pub address: [c_char; 46],
    /// Its AS.
    pub remote_as: u32,
    /// Its session's state: `FIBKIT_BGP_IDLE` to `FIBKIT_BGP_ESTABLISHED`.
    pub state: c_int,
    /// Prefixes it holds (both families).
    pub prefixes: u64,
    /// UPDATE messages received from it since the source started.
    pub updates: u64,
    /// Sessions established with it since the source started.
    pub sessions: u64,
}

/// A source's counts, from `fibkit_source_stats`.
#[repr(C)]
pub struct SourceCounts {
    /// Prefixes with a route in the IPv4 FIB.
    pub routes4: u64,
    /// Prefixes with a route in the IPv6 FIB.
    pub routes6: u64,
    /// Route updates applied to the FIBs (both families).
    pub updates_applied: u64,
    /// Route updates a FIB rejected (each in the log).
    pub updates_rejected: u64,
    /// Batches of updates applied (each published as one version).
    pub batches: u64,
}

impl SourceCounts {
    fn new(routes: [usize; 2], updates_applied: u64, updates_rejected: u64, batches: u64) -> Self {
        let [routes4, routes6] = routes.map(|count| count as u64);
        SourceCounts { routes4, routes6, updates_applied, updates_rejected, batches }
    }
}

/// Called by `fibkit_source_log` with each line of the log, oldest first;
/// `line` is valid during the call only. A non-zero return stops the walk.
pub type LogFn = Option<unsafe extern "C" fn(context: *mut c_void, line: *const c_char) -> c_int>;

/// The empty routers a source feeds, each family served by the engine
/// `engines` (a C string or NULL) gives it.
///
/// # Safety
/// `engines` is NULL or a NUL-terminated string.
unsafe fn routers(engines: *const c_char) -> Result<(CoreRouter<u32>, CoreRouter<u128>), Failure> {
    // SAFETY: the caller's contract.
    let options = CompileOptions { engines: unsafe { engine_names(engines) }?, prefixes: false, ..Default::default() };
    fn family<A: Address>(options: &CompileOptions) -> Result<CoreRouter<A>, Failure> {
        let engine = options.engine::<A>().map_err(fibkit_core::BuildError::from)?;
        let table = NextHopTable::new(Mapping::Distinct);
        Ok(CoreRouter::new(engine.name, Rib::new(), table, Window::Count(1))?)
    }
    Ok((family(&options)?, family(&options)?))
}

/// Stores a started source in `*out`.
///
/// # Safety
/// `out` is NULL or points to a writable pointer.
unsafe fn store(out: *mut *mut Source, running: Running, engines: (CString, CString)) -> Result<(), Failure> {
    let source = Source { running, engine4: engines.0, engine6: engines.1 };
    // SAFETY: the caller's contract.
    unsafe { args::store(out, source) }
}

/// The `count` strings at `strings`, each named `what[i]` when refused.
///
/// # Safety
/// `strings` is NULL with `count` 0, or points to `count` pointers to
/// NUL-terminated strings.
unsafe fn strings<'a>(strings: *const *const c_char, count: usize, what: &str) -> Result<Vec<&'a str>, Failure> {
    // SAFETY: the caller's contract.
    let pointers = unsafe { args::slice(strings, count, what) }?;
    let text = |(index, &pointer): (usize, &*const c_char)| {
        // SAFETY: the caller's contract.
        unsafe { args::text(pointer, &format!("{what}[{index}]")) }
    };
    pointers.iter().enumerate().map(text).collect()
}

/// Fills `*config` with the defaults: no neighbours, no listen address,
/// next-hop values, a hold time of 90 s, the default engines, local AS 0
/// and no router id (both must be set).
///
/// # Safety
/// `config` is NULL (ignored) or points to a writable `fibkit_bgp_config`.
#[no_mangle]
pub unsafe extern "C" fn fibkit_bgp_config_init(config: *mut BgpConfig) {
    if config.is_null() || !config.is_aligned() {
        return;
    }
    let defaults = BgpConfig {
        local_as: 0,
        router_id: std::ptr::null(),
        neighbors: std::ptr::null(),
        neighbor_count: 0,
        listen: std::ptr::null(),
        listen_count: 0,
        value: FIBKIT_VALUE_NEXT_HOP,
        hold_time: 90,
        engines: std::ptr::null(),
    };
    // SAFETY: not NULL, aligned, writable by the contract above.
    unsafe { config.write(defaults) };
}

/// Starts a receive-only BGP speaker as `*config` says: it accepts the
/// neighbours' connections on the listen addresses (and connects to those
/// given a port), keeps each neighbour's routes apart, and publishes the
/// best route of each prefix (RFC 4271 9.1.2.2) to the FIBs, which
/// `fibkit_source_reader` reads. A session that ends withdraws its routes.
///
/// Returns `FIBKIT_OK` and the source in `*out`, or:
/// - `FIBKIT_EINVAL`: a NULL `config` or `out`, no router id or one that is
///   not an IPv4 address, local AS 0, a neighbour string that does not
///   parse (the message names it and why), a neighbour given twice, a hold
///   time of 1 or 2, a `value` other than the two BGP values;
/// - `FIBKIT_EIO`: a listen address that cannot be bound (the message has
///   the system's reason);
/// - `FIBKIT_EENGINE`, as `fibkit_router_new`.
///
/// # Safety
/// `config` is NULL or points to a `fibkit_bgp_config` whose strings and
/// arrays are as its fields say; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fibkit_bgp_start(config: *const BgpConfig, out: *mut *mut Source) -> c_int {
    // SAFETY: the contract above.
    unsafe { args::clear(out) };
    guard(|| {
        // SAFETY: the contract above.
        let config = unsafe { args::reference(config, "config") }?;
        // SAFETY: the contract above.
        let router_id = unsafe { args::text(config.router_id, "config->router_id") }?;
        let router_id: Ipv4Addr = router_id
            .parse()
            .map_err(|_| Failure::invalid(format!("config->router_id {router_id:?} is not an IPv4 address")))?;
        if config.local_as == 0 {
            return Err(Failure::invalid("config->local_as is 0"));
        }
        let mut bgp = CoreBgpConfig::new(config.local_as, router_id);
        bgp.hold_time = config.hold_time;
        bgp.value = match config.value {
            FIBKIT_VALUE_NEXT_HOP => ValueChoice::NextHop,
            FIBKIT_VALUE_ORIGIN_AS => ValueChoice::OriginAs,
            value => {
                return Err(Failure::invalid(format!(
                    "config->value {value}: FIBKIT_VALUE_NEXT_HOP (0) or FIBKIT_VALUE_ORIGIN_AS (1)"
                )))
            }
        };
        // SAFETY: the contract above.
        let neighbours = unsafe { strings(config.neighbors, config.neighbor_count, "config->neighbors") }?;
        for (index, spec) in neighbours.into_iter().enumerate() {
            let neighbour = spec
                .parse::<NeighbourConfig>()
                .map_err(|problem| Failure::invalid(format!("config->neighbors[{index}]: {problem}")))?;
            bgp.neighbours.push(neighbour);
        }
        // SAFETY: the contract above.
        let listen = unsafe { strings(config.listen, config.listen_count, "config->listen") }?;
        for (index, address) in listen.into_iter().enumerate() {
            let address: SocketAddr = address
                .parse()
                .map_err(|_| Failure::invalid(format!("config->listen[{index}] {address:?}: expected ADDRESS:PORT")))?;
            bgp.listen.push(address);
        }
        // SAFETY: the contract above.
        let (router4, router6) = unsafe { routers(config.engines) }?;
        let engines = (c_string(router4.engine()), c_string(router6.engine()));
        let speaker = Speaker::start(bgp, router4, router6).map_err(|error| match error {
            StartError::Listen { .. } => Failure::new(FIBKIT_EIO, error.to_string()),
            StartError::Config(_) => Failure::invalid(error.to_string()),
        })?;
        // SAFETY: the contract above.
        unsafe { store(out, Running::Bgp(speaker), engines) }
    })
}

/// The port a BGP source accepts connections on (its first listen
/// address's), as bound: the free port it took for port 0. 0 for a NULL
/// source, a kernel source, or one without a listen address.
///
/// # Safety
/// `source` is NULL or a live source.
#[no_mangle]
pub unsafe extern "C" fn fibkit_bgp_port(source: *const Source) -> u16 {
    guard_value(0, || {
        // SAFETY: the contract above.
        Ok(match &unsafe { args::reference(source, "source") }?.running {
            Running::Bgp(speaker) => speaker.local_addrs().first().map_or(0, SocketAddr::port),
            #[cfg(target_os = "linux")]
            Running::Kernel(_) => 0,
        })
    })
}

/// Writes the state of neighbour `index` (from 0, in the configuration's
/// order) of a BGP source into `*out`.
///
/// Returns `FIBKIT_OK`, or `FIBKIT_EINVAL` for a NULL argument, a kernel
/// source, or `index` past the last neighbour.
///
/// # Safety
/// `source` is NULL or a live source; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fibkit_bgp_neighbor(source: *const Source, index: usize, out: *mut NeighborStatus) -> c_int {
    guard(|| {
        // SAFETY: the contract above.
        let source = unsafe { args::reference(source, "source") }?;
        // SAFETY: the contract above.
        let out = unsafe { args::mutable(out, "out") }?;
        let speaker = match &source.running {
            Running::Bgp(speaker) => speaker,
            #[cfg(target_os = "linux")]
            Running::Kernel(_) => return Err(Failure::invalid("a kernel source has no BGP neighbours")),
        };
        let neighbours = speaker.neighbours();
        let neighbour = neighbours.get(index).ok_or_else(|| {
            Failure::invalid(format!("neighbour {index} of {}: they are 0 to {}", neighbours.len(), neighbours.len()))
        })?;
        let mut address = [0; 46];
        // SAFETY: 46 writable bytes; an address's text is shorter.
        unsafe { args::write_text(&neighbour.address.to_string(), address.as_mut_ptr(), address.len()) }?;
        *out = NeighborStatus {
            address,
            remote_as: neighbour.remote_as,
            state: match neighbour.state {
                SessionState::Idle => FIBKIT_BGP_IDLE,
                SessionState::OpenSent => FIBKIT_BGP_OPEN_SENT,
                SessionState::OpenConfirm => FIBKIT_BGP_OPEN_CONFIRM,
                SessionState::Established => FIBKIT_BGP_ESTABLISHED,
            },
            prefixes: neighbour.prefixes as u64,
            updates: neighbour.updates,
            sessions: neighbour.sessions,
        };
        Ok(())
    })
}

/// Starts mirroring the Linux kernel's routing table `table` (254: the
/// main table) over rtnetlink, in the calling thread's network namespace:
/// the whole table is dumped, then every route added, changed or deleted
/// is applied as the kernel announces it. A route's value is its gateway
/// (`FIBKIT_VALUE_GATEWAY`; a route without one: its interface's index) or
/// its interface's index (`FIBKIT_VALUE_INTERFACE`); a multipath route
/// takes its first live next hop (docs/sources.md has the whole rule).
/// Blackhole, unreachable and prohibit routes answer the value `0`. Waits
/// until the first dump is in the FIBs (at most 60 s), so that the first
/// lookups see the whole table.
///
/// Returns `FIBKIT_OK` and the source in `*out`, or:
/// - `FIBKIT_EINVAL`: a NULL `out`, table 0, another `value`, or a system
///   other than Linux;
/// - `FIBKIT_EIO`: the netlink socket cannot be opened, or the dump took
///   more than 60 s (the message says which);
/// - `FIBKIT_EENGINE`, as `fibkit_router_new`.
///
/// # Safety
/// `engines` is NULL or a NUL-terminated string; `out` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn fibkit_kernel_start(
    table: u32,
    value: c_int,
    engines: *const c_char,
    out: *mut *mut Source,
) -> c_int {
    // SAFETY: the contract above.
    unsafe { args::clear(out) };
    guard(|| {
        #[cfg(target_os = "linux")]
        {
            use fibkit_sources::netlink::{Mirror, NetlinkConfig, RouteValue};
            let mut config = NetlinkConfig::new(table);
            config.value = match value {
                FIBKIT_VALUE_GATEWAY => RouteValue::Gateway,
                FIBKIT_VALUE_INTERFACE => RouteValue::Interface,
                value => {
                    return Err(Failure::invalid(format!(
                        "value {value}: FIBKIT_VALUE_GATEWAY (2) or FIBKIT_VALUE_INTERFACE (3)"
                    )))
                }
            };
            if table == 0 {
                return Err(Failure::invalid("table 0 (RT_TABLE_UNSPEC) is not a table"));
            }
            // SAFETY: the contract above.
            let (router4, router6) = unsafe { routers(engines) }?;
            let engines = (c_string(router4.engine()), c_string(router6.engine()));
            let mirror = Mirror::start(config, router4, router6)
                .map_err(|error| Failure::new(FIBKIT_EIO, format!("the netlink socket: {error}")))?;
            if !mirror.wait_for_dump(std::time::Duration::from_secs(60)) {
                return Err(Failure::new(FIBKIT_EIO, format!("table {table}'s dump took more than 60 s")));
            }
            // SAFETY: the contract above.
            unsafe { store(out, Running::Kernel(mirror), engines) }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (table, value, engines);
            Err(Failure::invalid("the kernel's routing table is mirrored on Linux only"))
        }
    })
}

/// Creates a reader of a source's FIBs: a `fibkit_reader` as
/// `fibkit_reader_new` makes for a router, with the same guarantees. It
/// stays valid after `fibkit_source_stop` (serving the last FIBs) until
/// `fibkit_reader_free`.
///
/// Returns `FIBKIT_OK` and the reader in `*out`, or `FIBKIT_EINVAL` when
/// `source` or `out` is NULL.
///
/// # Safety
/// `source` is NULL or a live source; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fibkit_source_reader(source: *const Source, out: *mut *mut Reader) -> c_int {
    // SAFETY: the contract above.
    unsafe { args::clear(out) };
    guard(|| {
        // SAFETY: the contract above.
        let (v4, v6) = unsafe { args::reference(source, "source") }?.running.readers();
        // SAFETY: the contract above.
        unsafe { args::store(out, Reader { v4, v6 }) }
    })
}

/// Writes the value that `next_hop` (an answer of a reader of `source`,
/// in `family`) stands for into `buffer`, as `fibkit_fib_value` does: a
/// next-hop address (`"192.0.2.1"`, `"2001:db8::1"`), an origin AS
/// (`"65001"`) or an interface's index (`"3"`). A next hop keeps its value
/// for the source's life.
///
/// Returns the value's length (without the NUL; larger than `size - 1`
/// when cut), or 0 for `FIBKIT_NO_ROUTE`, a next hop the source has not
/// given, another family, or a NULL `source`.
///
/// # Safety
/// `source` is NULL or a live source; `buffer` is NULL or `size` writable
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn fibkit_source_value(
    source: *const Source,
    family: c_int,
    next_hop: u32,
    buffer: *mut c_char,
    size: usize,
) -> usize {
    guard_value(0, || {
        // SAFETY: the contract above.
        let running = &unsafe { args::reference(source, "source") }?.running;
        let label = match family {
            FIBKIT_IPV4 => running.label::<u32>(next_hop),
            FIBKIT_IPV6 => running.label::<u128>(next_hop),
            _ => None,
        };
        match label {
            // SAFETY: the contract above.
            Some(label) => unsafe { args::write_text(&label.to_string(), buffer, size) },
            None => Ok(0),
        }
    })
}

/// Writes a source's counts into `*out`.
///
/// Returns `FIBKIT_OK`, or `FIBKIT_EINVAL` for a NULL argument.
///
/// # Safety
/// `source` is NULL or a live source; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fibkit_source_stats(source: *const Source, out: *mut SourceCounts) -> c_int {
    guard(|| {
        // SAFETY: the contract above.
        let source = unsafe { args::reference(source, "source") }?;
        // SAFETY: the contract above.
        let out = unsafe { args::mutable(out, "out") }?;
        *out = match &source.running {
            Running::Bgp(speaker) => {
                let stats = speaker.stats();
                let (applied, rejected) = (stats.updates_applied, stats.updates_rejected);
                SourceCounts::new([stats.routes4, stats.routes6], applied, rejected, stats.batches)
            }
            #[cfg(target_os = "linux")]
            Running::Kernel(mirror) => {
                let stats = mirror.stats();
                let (applied, rejected) = (stats.updates_applied, stats.updates_rejected);
                SourceCounts::new([stats.routes4, stats.routes6], applied, rejected, stats.batches)
            }
        };
        Ok(())
    })
}

/// The engine serving `family`, valid while the source lives; NULL for
/// another family or a NULL source.
///
/// # Safety
/// `source` is NULL or a live source.
#[no_mangle]
pub unsafe extern "C" fn fibkit_source_engine(source: *const Source, family: c_int) -> *const c_char {
    // SAFETY: the contract above.
    let Ok(source) = (unsafe { args::reference(source, "source") }) else { return std::ptr::null() };
    match family {
        FIBKIT_IPV4 => source.engine4.as_ptr(),
        FIBKIT_IPV6 => source.engine6.as_ptr(),
        _ => std::ptr::null(),
    }
}

/// Calls `line(context, text)` for each line of the source's log (its
/// last 10,000: sessions up and down with their reasons, NOTIFICATIONs,
/// malformed messages and the neighbour that sent them, dumps and
/// overruns), oldest first.
///
/// Returns `FIBKIT_OK` after the last line, the callback's non-zero value
/// if it stopped the walk, or `FIBKIT_EINVAL` for a NULL `source` or
/// `line`.
///
/// # Safety
/// `source` is NULL or a live source; `line` must not unwind or `longjmp`
/// out of the walk.
#[no_mangle]
pub unsafe extern "C" fn fibkit_source_log(source: *const Source, line: LogFn, context: *mut c_void) -> c_int {
    guard_walk(|stopped| {
        // SAFETY: the contract above.
        let source = unsafe { args::reference(source, "source") }?;
        let line = line.ok_or_else(|| Failure::invalid("argument `line` is NULL"))?;
        let lines = match &source.running {
            Running::Bgp(speaker) => speaker.journal(),
            #[cfg(target_os = "linux")]
            Running::Kernel(mirror) => mirror.journal(),
        };
        for text in lines {
            let text = c_string(&text);
            // SAFETY: a C function of the declared type (the contract
            // above); `text` lives through the call.
            *stopped = unsafe { line(context, text.as_ptr()) };
            if *stopped != 0 {
                break;
            }
        }
        Ok(())
    })
}

/// Stops a source (NULL is ignored) and frees it, returning once its
/// threads have ended (within about a second). A BGP source's sessions end
/// with a Cease NOTIFICATION (Administrative Shutdown) and their routes
/// are withdrawn, as when a session ends; a kernel source's netlink socket
/// is closed and its FIBs keep the table as it was. Its readers stay valid
/// and go on answering from the last FIBs it published, until
/// `fibkit_reader_free`.
///
/// # Safety
/// `source` is NULL or a source from a _start call, not stopped before,
/// that no other thread uses.
#[no_mangle]
pub unsafe extern "C" fn fibkit_source_stop(source: *mut Source) {
    // SAFETY: the contract above.
    unsafe { args::free(source) }
}
