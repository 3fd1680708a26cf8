//! A mirror of a Linux routing table, read over rtnetlink, feeding a live
//! [`fibkit::Router`] per family.
//!
//! The mirror opens a `NETLINK_ROUTE` socket, joins the route
//! notification groups, dumps the table, and from then on applies every
//! `RTM_NEWROUTE` and `RTM_DELROUTE` the kernel sends, IPv4 and IPv6, to
//! an IPv4 and an IPv6 [`Router`] through the engines' updaters, while any
//! number of [`Reader`]s look up. Like the BGP speaker
//! ([`crate::bgp::Speaker`]), one thread of its own owns the routers.
//!
//! ```text
//!  kernel ──NETLINK_ROUTE──> mirror thread ─────────────────────────Update batch──> Router<u32> / Router<u128>
//!  (dump reply, then        (poll 100 ms; every kernel route of the table          │ readers: lock-free
//!   RTNLGRP_IPV4_ROUTE,      per prefix; the value rule; the lowest priority)       v
//!   RTNLGRP_IPV6_ROUTE)                                                          Reader::lookup
//! ```
//!
//! # What is read
//!
//! The wire format is decoded by `netlink-packet-route`; of each message
//! the mirror reads:
//!
//! | where | field | used for |
//! | --- | --- | --- |
//! | `nlmsghdr` | `nlmsg_type` | `RTM_NEWROUTE`, `RTM_DELROUTE`; `NLMSG_DONE` and `NLMSG_ERROR` ending the dump; link and address events |
//! | `nlmsghdr` | `nlmsg_flags` | `NLM_F_REPLACE`: the route replaces the one of the same key |
//! | `nlmsghdr` | `nlmsg_seq`, `nlmsg_pid` | which messages answer the mirror's dump |
//! | `rtmsg` | `rtm_family` | `AF_INET` or `AF_INET6` (others are skipped) |
//! | `rtmsg` | `rtm_dst_len`, `RTA_DST` | the prefix (no `RTA_DST`: the default route) |
//! | `rtmsg` | `rtm_table`, `RTA_TABLE` | the table: `RTA_TABLE` when present (ids above 255 are only there), else `rtm_table` |
//! | `rtmsg` | `rtm_type` | the route's type (below) |
//! | `rtmsg` | `rtm_tos`, `rtm_src_len`, `RTA_SRC`, `RTA_PRIORITY` | the route's key with the prefix |
//! | `rtmsg` | `rtm_flags` | `RTM_F_CLONED` (cache entries: skipped), `RTNH_F_DEAD` |
//! | attribute | `RTA_GATEWAY`, `RTA_VIA`, `RTA_OIF` | a single-path route's next hop |
//! | attribute | `RTA_MULTIPATH` | each `rtnexthop`: `rtnh_flags` (`RTNH_F_DEAD`), `rtnh_ifindex`, its `RTA_GATEWAY` or `RTA_VIA` |
//!
//! The socket also joins `RTNLGRP_LINK` and `RTNLGRP_IPV4_IFADDR`: when
//! an interface goes down or away, or loses an IPv4 address, the kernel
//! flushes the IPv4 routes through it without a notification, so the
//! mirror dumps the table again on `RTM_DELLINK`, `RTM_DELADDR` (IPv4) and
//! `RTM_NEWLINK` without `IFF_UP`. The kernel sends the event before it
//! flushes, and route dumps need not wait for the flush (recent kernels
//! dump under RCU alone, without the RTNL lock), so the mirror waits
//! 250 ms after the last such event before it dumps, and dumps once more
//! 250 ms after that dump has ended, to see what a slow flush left.
//!
//! A dump is not a snapshot: the kernel sends it in parts and changes the
//! table between them. A deletion can make it skip routes that were there
//! all along, and no notification brings them: an IPv6 walk whose tree
//! changed starts again from the root and skips as many routes as it has
//! sent, so every route deleted before its place hides one after it; an
//! IPv4 walk resumes at its leaf by position. So a dump during which a
//! route of the table was deleted is inexact: the routes of the mirror's
//! old copy that it did not send are kept (unless a notification during
//! the dump spoke of them), and another dump follows, 250 ms later,
//! doubling after each inexact dump in a row up to 8 s
//! ([`MirrorStats::inexact_dumps`] counts them).
//!
//! # Which value a route gets
//!
//! [`NetlinkConfig::value`] chooses between the gateway and the
//! interface. The rule, for a route of the mirrored table:
//!
//! - `RTN_UNICAST` routes are mirrored. A hop's value is its gateway
//!   (`RTA_GATEWAY`, or `RTA_VIA`, whose address may be of the other
//!   family) as [`Label::Addr`]; a hop without a gateway (a directly
//!   connected route) has its output interface, `RTA_OIF`, as
//!   [`Label::Number`]`(ifindex)`. With [`RouteValue::Interface`] every
//!   hop's value is its interface. (A link-local IPv6 gateway is its
//!   address alone: `fe80::1` through two interfaces is one value.) Hops the kernel marks dead
//!   (`RTNH_F_DEAD`) are left out, as the kernel's lookup leaves them out.
//! - A multipath route (`RTA_MULTIPATH`) has one value: the smallest of
//!   its live hops' values, in [`Label`]'s order (numbers before
//!   addresses, IPv4 addresses before IPv6, each by numeric value). Not the
//!   first hop: the kernel lists an IPv6 route's hops in another order in
//!   an append's notification than in a dump, and the smallest is the same
//!   whichever order the hops come in.
//! - `RTN_BLACKHOLE`, `RTN_UNREACHABLE`, `RTN_PROHIBIT` and `RTN_THROW`
//!   routes end the kernel's lookup in the table without a next hop; they
//!   are mirrored with [`NetlinkConfig::reject`] (by default
//!   [`Label::Number`]`(0)`, which no interface has), so that an address
//!   they cover does not fall through to a shorter prefix. `reject: None`
//!   leaves them out.
//! - Every other type (`local`, `broadcast`, `anycast`, `multicast`, `nat`,
//!   unspecified) is not mirrored; nor are routes with a TOS (`rtm_tos` not
//!   0) or a source prefix (`rtm_src_len` not 0), which the kernel uses
//!   only for packets with that TOS or source: the mirror answers for a
//!   destination alone. A unicast route whose hops are all dead, or have
//!   neither gateway nor interface, has no value and is not mirrored.
//!
//! # Several routes for one prefix
//!
//! The mirror keeps every route of the table, keyed by prefix, TOS, source
//! and priority (`RTA_PRIORITY`, the metric). A prefix's value is that of
//! its route with the lowest priority, as the kernel's lookup takes it;
//! routes of equal priority (IPv4 duplicates made with `ip route append`)
//! give the smallest of their values. Deleting the best route reveals the
//! next. An `RTM_DELROUTE` removes the route equal to it (type, key and
//! hops, in any order); one that names some of a route's hops (the kernel
//! deletes one hop of an IPv6 multipath route so) removes those hops. An
//! `RTM_NEWROUTE` with `NLM_F_REPLACE` replaces the route of the same key;
//! one without it adds the route, unless an equal one is there, or (IPv6)
//! it holds every hop of the route of the same key (the kernel sends a
//! multipath route whole when a hop is appended): then it replaces that.
//!
//! # The dump and the notifications
//!
//! The socket joins `RTNLGRP_IPV4_ROUTE` and `RTNLGRP_IPV6_ROUTE` before it
//! asks for the dump (`RTM_GETROUTE`, `NLM_F_DUMP`, all families, filtered
//! to the table by the mirror), so no change falls between the two: every
//! message is applied in the order it arrives. The kernel queues a dump's
//! replies behind the notifications the socket already holds, so those
//! read before the dump's first reply were sent before it began, and the
//! dump shows what they did: they are applied as before it (after an
//! overrun the socket still holds a receive buffer of them, some undone by
//! notifications the kernel dropped). From the dump's first reply on, its
//! replies and the notifications build a new copy of the table. A reply
//! read after a notification may still be older than it, so the
//! notification's word stands: a reply for a prefix and key replaced
//! during the dump is skipped, as is a reply of a route added or deleted
//! during the dump (for IPv6 also an older form of an added route, with
//! fewer hops), and hops deleted during the dump are taken out of the
//! reply; other routes of the same prefix and key (IPv6 routes of one
//! metric on two interfaces, appended IPv4 routes) are kept. When the dump ends (`NLMSG_DONE`), the new
//! copy replaces the old, and the routers get the difference in one batch
//! (the first dump withdraws whatever the routers held that the table does
//! not).
//!
//! When the kernel drops notifications because the socket's receive
//! buffer is full, the next read fails with `ENOBUFS`; the mirror then
//! dumps the table again and reconciles as above, and says so in its
//! journal. An overrun during a dump has the next dump follow it. After
//! an overrun the kernel drops every notification, without another
//! `ENOBUFS`, until a read finds the socket empty, so no dump starts
//! before one has; the mirror makes that read even when nothing more
//! arrives to wake it. A dump asked for while the socket was full is answered
//! with `ENOBUFS` and still sent as the socket drains: the mirror reads it
//! and dumps once more after it (asking again at once would be refused
//! while it runs, and the refusal could be dropped as well). A dump that
//! gets no reply for 10 s is asked for again.
//! [`NetlinkConfig::receive_buffer`] sets the buffer (with
//! `SO_RCVBUFFORCE` when allowed, `SO_RCVBUF` otherwise).
//!
//! # Namespaces
//!
//! The socket belongs to the network namespace of the thread that calls
//! [`Mirror::start`]: to mirror another namespace's table, start it on a
//! thread that has entered that namespace (`setns`).
//!
//! # Routes through nexthop objects
//!
//! A route through a nexthop object (`ip nexthop`, `RTA_NH_ID`) is
//! mirrored by the gateway and interface the kernel spells out beside the
//! id, which it does while `net.ipv4.nexthop_compat_mode` is 1 (the
//! default); it also then sends a notification for each route when a
//! nexthop object changes.

mod mirror;
mod route;
mod table;

use fibkit::nexthop::Label;
#[cfg(doc)]
use fibkit::router::{Reader, Router};

pub use mirror::Mirror;

/// The kernel's main table.
pub const RT_TABLE_MAIN: u32 = 254;

/// What a route's value is (the module's documentation gives the rule).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RouteValue {
    /// The gateway (`RTA_GATEWAY`, `RTA_VIA`); a route without one has its
    /// interface.
    #[default]
    Gateway,
    /// The output interface (`RTA_OIF`), as [`Label::Number`]`(ifindex)`.
    Interface,
}

/// The mirror's configuration.
#[derive(Clone, Debug)]
pub struct NetlinkConfig {
    /// The table mirrored, by number: [`RT_TABLE_MAIN`] (254), or any
    /// other id from 1 to `u32::MAX` (those above 255 are read from
    /// `RTA_TABLE`).
    pub table: u32,
    /// What a route's value is.
    pub value: RouteValue,
    /// The value of blackhole, unreachable, prohibit and throw routes;
    /// `None`: they are not mirrored.
    pub reject: Option<Label>,
    /// The socket's receive buffer in bytes, as the kernel counts it (with
    /// its bookkeeping; its floor is a few KiB): room for notifications
    /// that arrive faster than the routers apply them. Past it the kernel
    /// drops them and the mirror dumps again.
    pub receive_buffer: usize,
    /// Route messages read before the changes are published (at least 1):
    /// fewer publish sooner, more publish larger batches.
    pub batch_messages: usize,
    /// Also write each journal line to standard error.
    pub echo_log: bool,
}

impl Default for NetlinkConfig {
    fn default() -> Self {
        NetlinkConfig::new(RT_TABLE_MAIN)
    }
}

impl NetlinkConfig {
    /// Mirrors `table` by gateway, with rejecting routes as
    /// `Label::Number(0)`, a 16 MiB receive buffer, and batches of up to
    /// 65,536 messages.
    pub fn new(table: u32) -> Self {
        NetlinkConfig {
            table,
            value: RouteValue::Gateway,
            reject: Some(Label::Number(0)),
            receive_buffer: 16 << 20,
            batch_messages: 65_536,
            echo_log: false,
        }
    }
}

/// The mirror's counts.
#[derive(Clone, Debug, Default)]
pub struct MirrorStats {
    /// Prefixes with a route in the IPv4 FIB.
    pub routes4: usize,
    /// Prefixes with a route in the IPv6 FIB.
    pub routes6: usize,
    /// Kernel routes of the table held (both families; several may share
    /// a prefix).
    pub kernel_routes: usize,
    /// Route messages of the table read (dump replies and notifications).
    pub messages: u64,
    /// Messages that could not be decoded (each logged).
    pub undecodable: u64,
    /// Dumps completed: 1 once the table is in, more after re-dumps.
    pub dumps: u64,
    /// Socket overruns (`ENOBUFS`): notifications the kernel dropped.
    pub overruns: u64,
    /// Dumps during which routes of the table were deleted: the kernel may
    /// have skipped routes in them, so another dump followed.
    pub inexact_dumps: u64,
    /// Updates applied to the routers (both families).
    pub updates_applied: u64,
    /// Updates a router rejected (each logged).
    pub updates_rejected: u64,
    /// Batches applied.
    pub batches: u64,
}
