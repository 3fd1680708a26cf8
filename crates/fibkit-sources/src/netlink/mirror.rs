//! The mirror: the netlink socket, and the one thread that owns it, the
//! copies of the table and the routers.

use std::collections::{HashMap, HashSet};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use fibkit::addr::IpPrefix;
use fibkit::nexthop::Label;
use fibkit::router::{Reader, Router, Update};
use fibkit::{Address, NextHop, Prefix};
use netlink_packet_core::{
    NetlinkBuffer, NetlinkHeader, NetlinkMessage, NetlinkPayload, Parseable, NLMSG_DONE, NLMSG_ERROR, NLM_F_DUMP,
    NLM_F_REPLACE, NLM_F_REQUEST,
};
use netlink_packet_route::link::LinkFlags;
use netlink_packet_route::route::{RouteHeader, RouteMessage};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};
use netlink_sys::protocols::NETLINK_ROUTE;
use netlink_sys::{Socket, SocketAddr};

use self::socket::{readable, receive_buffer};
use super::route::{self, Key, Route, Rule};
use super::table::{self, Came, Note, Table};
use super::{MirrorStats, NetlinkConfig};
use crate::published::{self, Changes, Journal, Labels};

/// The longest a read waits: how soon a stop is seen.
const TICK: Duration = Duration::from_millis(100);
/// How long after a link or address event the mirror waits before it
/// dumps: the kernel sends the event before it flushes the routes, and
/// route dumps do not wait for that flush.
const SETTLE: Duration = Duration::from_millis(250);
/// How long a dump may go without a reply before it is asked for again:
/// the kernel sends the next part of a dump as each read drains the
/// socket, so a silent dump is one the kernel is not sending.
const SILENT_DUMP: Duration = Duration::from_secs(10);
/// The longest wait before a dump that follows an inexact one: the wait
/// doubles from [`SETTLE`] with each inexact dump in a row, up to this.
const INEXACT_WAIT: Duration = Duration::from_secs(8);
/// Room for one datagram (the kernel's are at most 32 KiB).
const DATAGRAM: usize = 64 << 10;
/// `rtm_table` of a route in a table numbered above 255.
const RT_TABLE_COMPAT: u32 = 252;

/// What the mirror's thread shares with its handle.
struct Shared {
    config: NetlinkConfig,
    stopping: AtomicBool,
    journal: Journal,
    stats: Mutex<MirrorStats>,
    labels: Labels,
}

impl Shared {
    fn log(&self, line: String) {
        self.journal.log(line);
    }
}

/// A running mirror of a kernel routing table. Dropping it stops it
/// ([`Mirror::stop`]).
pub struct Mirror {
    shared: Arc<Shared>,
    readers: (Reader<u32>, Reader<u128>),
    writer: Option<JoinHandle<(Router<u32>, Router<u128>)>>,
}

impl Mirror {
    /// Opens the netlink socket (in the calling thread's network
    /// namespace), joins the route groups, and starts the thread that dumps
    /// the table and follows it, feeding `router4` and `router6`. Whatever
    /// the routers hold that the table does not is withdrawn once the first
    /// dump is in ([`Mirror::wait_for_dump`]).
    ///
    /// # Errors
    /// `InvalidInput` for table 0; the socket's error when it cannot be
    /// opened, bound or subscribed.
    pub fn start(config: NetlinkConfig, router4: Router<u32>, router6: Router<u128>) -> io::Result<Mirror> {
        Self::start_with(config, router4, router6, None)
    }

    /// [`Mirror::start`], sending every change of either FIB to `changes`
    /// as it is published (one `Vec` a batch, IPv4 then IPv6).
    ///
    /// # Errors
    /// As [`Mirror::start`].
    pub fn start_following(
        config: NetlinkConfig,
        router4: Router<u32>,
        router6: Router<u128>,
        changes: Changes,
    ) -> io::Result<Mirror> {
        Self::start_with(config, router4, router6, Some(changes))
    }

    fn start_with(
        config: NetlinkConfig,
        router4: Router<u32>,
        router6: Router<u128>,
        changes: Option<Changes>,
    ) -> io::Result<Mirror> {
        if config.table == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "table 0 (RT_TABLE_UNSPEC) is not a table"));
        }
        let readers = (router4.reader(), router6.reader());
        let writer = Writer::new(config, router4, router6, changes)?;
        let shared = Arc::clone(&writer.shared);
        let writer = thread::Builder::new().name("fibkit-netlink".into()).spawn(move || writer.run())?;
        Ok(Mirror { shared, readers, writer: Some(writer) })
    }

    /// A reader of the IPv4 FIB.
    pub fn reader4(&self) -> Reader<u32> {
        self.readers.0.clone()
    }

    /// A reader of the IPv6 FIB.
    pub fn reader6(&self) -> Reader<u128> {
        self.readers.1.clone()
    }

    /// The value that next-hop index `hop` of family `A` stands for.
    pub fn label<A: Address>(&self, hop: NextHop) -> Option<Label> {
        self.shared.labels.get::<A>(hop)
    }

    /// The mirror's counts.
    pub fn stats(&self) -> MirrorStats {
        self.shared.stats.lock().expect("stats lock").clone()
    }

    /// The log's last lines (at most 10,000), oldest first.
    pub fn journal(&self) -> Vec<String> {
        self.shared.journal.lines()
    }

    /// Waits until the first dump is applied, at most `limit`; whether it
    /// is.
    pub fn wait_for_dump(&self, limit: Duration) -> bool {
        let start = Instant::now();
        loop {
            if self.stats().dumps > 0 {
                return true;
            }
            if start.elapsed() >= limit {
                return false;
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// Stops and hands the routers back as they are. The thread's reads
    /// wait at most 100 ms; it stops once it has applied what it was
    /// applying (a large dump's reconciliation takes a second or so).
    pub fn stop(mut self) -> (Router<u32>, Router<u128>) {
        self.halt().expect("the mirror's thread ended")
    }

    fn halt(&mut self) -> Option<(Router<u32>, Router<u128>)> {
        self.shared.stopping.store(true, Ordering::Relaxed);
        self.writer.take().and_then(|writer| writer.join().ok())
    }
}

impl Drop for Mirror {
    fn drop(&mut self) {
        self.halt();
    }
}

/// The socket: bound, its receive buffer set, in the groups, nonblocking.
fn open(shared: &Shared) -> io::Result<(Socket, u32)> {
    let context = |what: &'static str| move |error: io::Error| io::Error::new(error.kind(), format!("{what}: {error}"));
    let mut socket = Socket::new(NETLINK_ROUTE).map_err(context("opening a NETLINK_ROUTE socket"))?;
    let address = socket.bind_auto().map_err(context("binding the netlink socket"))?;
    let (size, how) = receive_buffer(&socket, shared.config.receive_buffer).map_err(context("setting SO_RCVBUF"))?;
    shared.log(format!("mirroring table {}: receive buffer {size} bytes ({how})", shared.config.table));
    // The route groups first, then the dump: no change falls between.
    for group in [libc::RTNLGRP_IPV4_ROUTE, libc::RTNLGRP_IPV6_ROUTE, libc::RTNLGRP_LINK, libc::RTNLGRP_IPV4_IFADDR] {
        socket.add_membership(group).map_err(context("joining a route notification group"))?;
    }
    socket.set_non_blocking(true)?;
    Ok((socket, address.port_number()))
}

/// One family's router, copy of the table, and prefixes changed since the
/// last batch.
struct Side<A: Address> {
    router: Router<A>,
    table: Table<A>,
    changed: HashSet<Prefix<A>>,
}

impl<A: Address> Side<A> {
    fn new(router: Router<A>) -> Self {
        Side { router, table: Table::default(), changed: HashSet::new() }
    }
}

/// One family's part of a dump in progress: the new copy of the table, and
/// the notifications read during the dump, by prefix and key (a reply
/// read after one may still be older than it).
struct DumpSide<A: Address> {
    table: Table<A>,
    noted: HashMap<(Prefix<A>, Key), Vec<Note>>,
    /// Deletions read during the dump. The kernel sends a dump in parts
    /// and does not hold changes off between them, and a deletion before
    /// its place can make it skip routes it never sends: an IPv6 walk
    /// whose tree changed starts again from the root and skips as many
    /// routes as it has sent (`fib6_dump_table`); an IPv4 walk resumes at
    /// its leaf and skips as many of the leaf's routes
    /// (`fn_trie_dump_leaf`).
    deletions: usize,
}

impl<A: Address> Default for DumpSide<A> {
    fn default() -> Self {
        DumpSide { table: Table::default(), noted: HashMap::new(), deletions: 0 }
    }
}

impl<A: Address> DumpSide<A> {
    /// The dump's copy of the table in place of `side`'s. If the dump may
    /// have skipped routes, the routes of the old copy it did not send are
    /// kept unless a notification during it spoke of them; returns how
    /// many, `None` for an exact dump.
    fn replace(self, side: &mut Side<A>) -> Option<usize> {
        let DumpSide { mut table, noted, deletions } = self;
        let kept =
            (deletions > 0).then(|| table.keep_unsent(&side.table, |prefix, key| noted.contains_key(&(prefix, key))));
        side.table = table;
        reconcile(side);
        kept
    }
}

/// A dump in progress.
struct Dump {
    sequence: u32,
    reason: String,
    started: Instant,
    /// When it was asked for, or its last reply read.
    heard: Instant,
    v4: DumpSide<u32>,
    v6: DumpSide<u128>,
    /// Why another dump must follow (notifications lost during this one).
    again: Option<String>,
    /// Whether a message of the dump has been read. The kernel queues the
    /// dump's first replies behind what the socket already holds, so the
    /// notifications read before them were sent before the dump began,
    /// and the dump shows what they did: they are not the dump's notes.
    /// After an overrun the socket holds up to a receive buffer of such
    /// notifications, some of them undone by ones the kernel dropped (an
    /// addition whose deletion was lost): taken as notes, their word stood
    /// over the dump's, and the mirror kept routes the kernel no longer had.
    replied: bool,
}

impl Dump {
    /// The dump, if a notification read now came after it began.
    fn begun(dump: Option<&mut Dump>) -> Option<&mut Dump> {
        dump.filter(|dump| dump.replied)
    }
}

/// The mirror's thread.
struct Writer {
    shared: Arc<Shared>,
    socket: Socket,
    port: u32,
    rule: Rule,
    v4: Side<u32>,
    v6: Side<u128>,
    dump: Option<Dump>,
    /// A dump to start when none is running, and why.
    wanted: Option<String>,
    /// Not before this instant (a link event's flush may still run).
    settle: Option<Instant>,
    /// A link event whose flush one more dump confirms, once the dumps
    /// it asked for have ended.
    confirm: Option<String>,
    /// Inexact dumps in a row ([`DumpSide::deletions`]).
    inexact: u32,
    sequence: u32,
    /// Route messages of the table read.
    messages: u64,
    /// An overrun was read and no read has found the socket empty since.
    /// Until one does, the kernel drops every notification without
    /// another `ENOBUFS` (it clears its congestion mark only then), so a
    /// dump started now would miss changes without knowing it.
    congested: bool,
    /// Where every published change goes, if a follower takes them.
    changes: Option<Changes>,
}

impl Writer {
    /// The socket opened and subscribed ([`open`]), nothing asked yet.
    fn new(
        config: NetlinkConfig,
        router4: Router<u32>,
        router6: Router<u128>,
        changes: Option<Changes>,
    ) -> io::Result<Writer> {
        let echo_log = config.echo_log;
        let shared = Arc::new(Shared {
            config,
            stopping: AtomicBool::new(false),
            journal: Journal::new(echo_log),
            stats: Mutex::new(MirrorStats::default()),
            labels: Labels::new(),
        });
        let (socket, port) = open(&shared)?;
        shared.labels.sync(&router4);
        shared.labels.sync(&router6);
        let rule = Rule { value: shared.config.value, reject: shared.config.reject };
        Ok(Writer {
            rule,
            shared,
            socket,
            port,
            v4: Side::new(router4),
            v6: Side::new(router6),
            dump: None,
            wanted: None,
            settle: None,
            confirm: None,
            inexact: 0,
            sequence: 0,
            messages: 0,
            congested: false,
            changes,
        })
    }

    fn run(mut self) -> (Router<u32>, Router<u128>) {
        self.wanted = Some("the first dump".into());
        let mut datagram = Vec::with_capacity(DATAGRAM);
        while !self.shared.stopping.load(Ordering::Relaxed) {
            self.silent_dump(Instant::now());
            if self.dump.is_none() && !self.congested && self.settle.is_none_or(|settle| Instant::now() >= settle) {
                if let Some(reason) = self.wanted.take() {
                    self.settle = None;
                    self.start_dump(reason);
                }
            }
            match readable(&self.socket, TICK) {
                // Congested, the socket is read even when it looks empty:
                // only a read that finds it so ends the congestion.
                Ok(readable) if readable || self.congested => {}
                Ok(_) => continue,
                Err(error) => {
                    self.shared.log(format!("waiting on the netlink socket: {error}"));
                    thread::sleep(TICK);
                    continue;
                }
            }
            let mut read = 0;
            while read < self.shared.config.batch_messages.max(1) {
                datagram.clear();
                match self.socket.recv(&mut datagram, libc::MSG_TRUNC) {
                    Ok(length) if length > datagram.len() => {
                        self.shared.log(format!("a {length}-byte datagram was cut to {}", datagram.len()));
                        self.lost("a datagram was cut".into());
                    }
                    Ok(_) => read += self.datagram(&datagram),
                    Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                        self.congested = false;
                        break;
                    }
                    Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                    Err(error) if error.raw_os_error() == Some(libc::ENOBUFS) => {
                        self.congested = true;
                        self.shared.stats.lock().expect("stats lock").overruns += 1;
                        self.lost("socket overrun (ENOBUFS): the kernel dropped route notifications".into());
                    }
                    Err(error) => {
                        self.shared.log(format!("reading the netlink socket: {error}"));
                        break;
                    }
                }
            }
            self.publish();
        }
        (self.v4.router, self.v6.router)
    }

    /// Notifications were lost: the table is dumped again (after the dump
    /// in progress, if one is).
    fn lost(&mut self, why: String) {
        match self.dump.as_mut() {
            Some(dump) => {
                self.shared.log(format!("{why} during a dump: another dump follows it to reconcile"));
                dump.again = Some(why);
            }
            None => {
                self.shared.log(format!("{why}: dumping the table again to reconcile"));
                self.wanted = Some(why);
            }
        }
    }

    /// A dump silent for [`SILENT_DUMP`] at `now` is given up and asked for
    /// again: its request or the kernel's answer to it was lost (a refusal
    /// dropped on a full socket, say). Should the kernel still be sending
    /// it, the next request is refused until it ends, and asked again.
    fn silent_dump(&mut self, now: Instant) {
        let Some(dump) = self.dump.as_ref() else { return };
        let silent = now.saturating_duration_since(dump.heard);
        if silent < SILENT_DUMP {
            return;
        }
        let why = format!("no reply to dump request {} in {:.0} s", dump.sequence, silent.as_secs_f64());
        self.shared.log(format!("{why}: asking again"));
        self.dump = None;
        self.wanted = Some(why);
    }

    /// Asks for a dump of every family's routes.
    fn start_dump(&mut self, reason: String) {
        self.sequence = self.sequence.wrapping_add(1).max(1);
        let request = RouteNetlinkMessage::GetRoute(RouteMessage::default());
        let mut packet = NetlinkMessage::new(NetlinkHeader::default(), NetlinkPayload::InnerMessage(request));
        packet.header.flags = NLM_F_REQUEST | NLM_F_DUMP;
        packet.header.sequence_number = self.sequence;
        packet.finalize();
        let mut bytes = vec![0; packet.buffer_len()];
        packet.serialize(&mut bytes);
        match self.socket.send_to(&bytes, &SocketAddr::new(0, 0), 0) {
            Ok(_) => {
                self.dump = Some(Dump {
                    sequence: self.sequence,
                    reason,
                    started: Instant::now(),
                    heard: Instant::now(),
                    v4: DumpSide::default(),
                    v6: DumpSide::default(),
                    again: None,
                    replied: false,
                });
            }
            Err(error) => {
                self.shared.log(format!("asking for a dump: {error}; asking again"));
                self.wanted = Some(reason);
                thread::sleep(TICK);
            }
        }
    }

    /// Handles the messages of a datagram; returns how many it held.
    fn datagram(&mut self, mut bytes: &[u8]) -> usize {
        let mut count = 0;
        while !bytes.is_empty() {
            let buffer = match NetlinkBuffer::new_checked(bytes) {
                Ok(buffer) => buffer,
                Err(error) => {
                    self.undecodable(format!("a netlink message: {error}"));
                    break;
                }
            };
            let length = buffer.length() as usize;
            let (kind, flags) = (buffer.message_type(), buffer.flags());
            let ours = buffer.port_number() == self.port;
            let current = self.dump.as_ref().is_some_and(|dump| dump.sequence == buffer.sequence_number());
            if let Some(dump) = self.dump.as_mut().filter(|_| ours && current) {
                dump.replied = true;
                dump.heard = Instant::now();
            }
            let payload = buffer.payload();
            let message = &bytes[..length];
            bytes = &bytes[length.next_multiple_of(4).min(bytes.len())..];
            count += 1;
            match kind {
                // The replies to an abandoned dump.
                _ if ours && !current => {}
                NLMSG_DONE if ours => self.finish_dump(message),
                NLMSG_ERROR if ours => self.dump_error(message),
                libc::RTM_NEWROUTE | libc::RTM_DELROUTE => {
                    let came = match (ours, kind) {
                        (true, _) => Came::Dump,
                        (false, libc::RTM_NEWROUTE) => Came::New { replace: flags & NLM_F_REPLACE != 0 },
                        _ => Came::Del,
                    };
                    self.route(payload, came);
                }
                libc::RTM_NEWLINK | libc::RTM_DELLINK | libc::RTM_DELADDR => self.link_event(message),
                _ => {}
            }
        }
        count
    }

    /// An error in reply to the dump's request. `ENOBUFS` says the socket
    /// was full when the dump began: the kernel keeps the dump and sends
    /// its replies as the socket drains, and another dump follows it (had
    /// the mirror asked again now, the kernel would refuse while this one
    /// runs, and the refusal may itself be dropped). Any other error ends
    /// the dump.
    fn dump_error(&mut self, message: &[u8]) {
        let error = match NetlinkMessage::<RouteNetlinkMessage>::deserialize(message).map(|m| m.payload) {
            Ok(NetlinkPayload::Error(error)) => Some(error.to_io()),
            _ => None,
        };
        match (error, self.dump.as_mut()) {
            (Some(error), Some(dump)) if error.raw_os_error() == Some(libc::ENOBUFS) => {
                self.shared.log(format!("the dump began on a full socket ({error}): another dump follows it"));
                dump.again = Some(format!("the dump began on a full socket ({error})"));
            }
            (error, _) => {
                let why = error.map_or_else(|| "an error message that could not be decoded".into(), |e| e.to_string());
                self.shared.log(format!("the dump failed: {why}; dumping again"));
                self.dump = None;
                self.wanted = Some(format!("the last dump failed ({why})"));
            }
        }
    }

    fn undecodable(&self, what: String) {
        self.shared.stats.lock().expect("stats lock").undecodable += 1;
        self.shared.log(format!("skipped {what}"));
    }

    /// A route message: into the dump's copy of the table while a dump
    /// runs, else into the table and the next batch.
    fn route(&mut self, payload: &[u8], came: Came) {
        // The fixed header first: other families and tables are skipped
        // without decoding their attributes (`rtm_table` is the table's id
        // below 256, RT_TABLE_COMPAT above).
        let table = self.shared.config.table;
        match RouteHeader::parse(payload) {
            Ok(header) if matches!(header.address_family, AddressFamily::Inet | AddressFamily::Inet6) => {
                if u32::from(header.table) != if table < 256 { table } else { RT_TABLE_COMPAT } {
                    return;
                }
            }
            Ok(_) => return,
            Err(error) => return self.undecodable(format!("a route message: {error}")),
        }
        let read = match RouteMessage::parse(payload) {
            Ok(route) => route::read(&route, self.rule),
            Err(error) => Err(error.to_string()),
        };
        let read = match read {
            Ok(Some(read)) if read.table == table => read,
            Ok(_) => return,
            Err(error) => return self.undecodable(format!("a route message: {error}")),
        };
        self.messages += 1;
        let rule = self.rule;
        match read.prefix {
            IpPrefix::V4(prefix) => {
                apply(
                    &mut self.v4,
                    Dump::begun(self.dump.as_mut()).map(|dump| &mut dump.v4),
                    prefix,
                    read.route,
                    came,
                    rule,
                );
            }
            IpPrefix::V6(prefix) => {
                apply(
                    &mut self.v6,
                    Dump::begun(self.dump.as_mut()).map(|dump| &mut dump.v6),
                    prefix,
                    read.route,
                    came,
                    rule,
                );
            }
        }
    }

    /// An interface went down or away, or lost an IPv4 address: the kernel
    /// flushes the IPv4 routes through it without notifications.
    fn link_event(&mut self, message: &[u8]) {
        let why = match NetlinkMessage::<RouteNetlinkMessage>::deserialize(message).map(|m| m.payload) {
            Ok(NetlinkPayload::InnerMessage(RouteNetlinkMessage::NewLink(link))) => {
                (!link.header.flags.contains(LinkFlags::Up)).then(|| format!("interface {} is down", link.header.index))
            }
            Ok(NetlinkPayload::InnerMessage(RouteNetlinkMessage::DelLink(link))) => {
                Some(format!("interface {} was removed", link.header.index))
            }
            Ok(NetlinkPayload::InnerMessage(RouteNetlinkMessage::DelAddress(address))) => (address.header.family
                == AddressFamily::Inet)
                .then(|| format!("interface {} lost an IPv4 address", address.header.index)),
            Ok(_) => None,
            Err(_) => Some("a link or address event that could not be decoded".into()),
        };
        let Some(why) = why else { return };
        let unannounced = "the kernel flushes the IPv4 routes through it without notifications";
        self.settle = Some(Instant::now() + SETTLE);
        self.confirm = Some(why.clone());
        match self.dump.as_mut() {
            Some(dump) => dump.again = Some(why),
            None if self.wanted.is_none() => {
                self.shared.log(format!("{why}: {unannounced}; dumping the table again"));
                self.wanted = Some(why);
            }
            None => {}
        }
    }

    /// The dump ended: its copy of the table replaces the old, and every
    /// prefix of either the table or the routers is reconciled.
    fn finish_dump(&mut self, message: &[u8]) {
        let Some(dump) = self.dump.take() else { return };
        if let Ok(NetlinkPayload::Done(done)) =
            NetlinkMessage::<RouteNetlinkMessage>::deserialize(message).map(|m| m.payload)
        {
            if done.code != 0 {
                let error = io::Error::from_raw_os_error(-done.code);
                self.shared.log(format!("the dump ended with an error: {error}; dumping again"));
                self.wanted = Some(format!("the last dump ended with an error ({error})"));
                return;
            }
        }
        let seconds = dump.started.elapsed().as_secs_f64();
        let (routes4, routes6) = (dump.v4.table.len(), dump.v6.table.len());
        let deletions = (dump.v4.deletions, dump.v6.deletions);
        let kept = (dump.v4.replace(&mut self.v4), dump.v6.replace(&mut self.v6));
        let exact = kept == (None, None);
        let (announced, withdrawn) = self.publish();
        let dumps = {
            let mut stats = self.shared.stats.lock().expect("stats lock");
            stats.dumps += 1;
            stats.inexact_dumps += u64::from(!exact);
            stats.dumps
        };
        self.shared.log(format!(
            "dump {dumps} ({}): {routes4} IPv4 and {routes6} IPv6 routes in {seconds:.2} s; \
             reconciled: {announced} prefixes announced or changed, {withdrawn} withdrawn",
            dump.reason
        ));
        self.inexact = if exact { 0 } else { self.inexact.saturating_add(1) };
        if !exact {
            // Until a dump runs with no deletion, the routes a dump may have
            // skipped are the old copy's; the wait lets a burst end.
            let wait = SETTLE.saturating_mul(1 << (self.inexact - 1).min(5)).min(INEXACT_WAIT);
            let why = format!(
                "routes deleted during dump {dumps} ({} IPv4, {} IPv6): the kernel may have skipped routes \
                 in it ({} IPv4 and {} IPv6 routes it did not send were kept)",
                deletions.0,
                deletions.1,
                kept.0.unwrap_or(0),
                kept.1.unwrap_or(0)
            );
            self.shared.log(format!("{why}; dumping again in {:.2} s", wait.as_secs_f64()));
            self.settle = Some(Instant::now() + wait);
            self.wanted = Some(dump.again.unwrap_or(why));
        } else if let Some(why) = dump.again {
            self.shared.log(format!("dumping again: {why} during the dump"));
            self.wanted = Some(why);
        } else if let Some(why) = self.confirm.take() {
            // The event comes before the flush, so the dump may have raced
            // it: one more dump, later, sees what the flush left.
            self.shared.log(format!("dumping once more to confirm the flush after: {why}"));
            self.wanted = Some(format!("confirming the flush after: {why}"));
            self.settle = Some(Instant::now() + SETTLE);
        }
    }

    /// Applies the changed prefixes to the routers; returns the updates
    /// announcing and withdrawing.
    fn publish(&mut self) -> (usize, usize) {
        let mut changes = self.changes.as_ref().map(|_| Vec::new());
        let one = publish(&self.shared, &mut self.v4, &mut changes);
        let two = publish(&self.shared, &mut self.v6, &mut changes);
        published::send(&mut self.changes, changes);
        let mut stats = self.shared.stats.lock().expect("stats lock");
        stats.routes4 = self.v4.router.rib().len();
        stats.routes6 = self.v6.router.rib().len();
        stats.kernel_routes = self.v4.table.len() + self.v6.table.len();
        stats.messages = self.messages;
        for counts in [one, two] {
            stats.updates_applied += counts.applied;
            stats.updates_rejected += counts.rejected;
            stats.batches += u64::from(counts.applied > 0);
        }
        (one.announced + two.announced, one.withdrawn + two.withdrawn)
    }
}

/// Applies a route message of one family.
fn apply<A: Address>(
    side: &mut Side<A>,
    dump: Option<&mut DumpSide<A>>,
    prefix: Prefix<A>,
    route: Route,
    came: Came,
    rule: Rule,
) {
    let table = match (came, dump) {
        (Came::Dump, Some(dump)) => {
            let notes = dump.noted.get(&(prefix, route.key)).map_or(&[][..], Vec::as_slice);
            if let Some(route) = table::after_notes(route, notes, A::FAMILY, rule) {
                dump.table.add(prefix, route, false);
            }
            return;
        }
        (Came::Dump, None) => return,
        (_, Some(dump)) => {
            dump.deletions += usize::from(matches!(came, Came::Del));
            dump.noted.entry((prefix, route.key)).or_default().push((came, route.clone()));
            &mut dump.table
        }
        (_, None) => {
            side.changed.insert(prefix);
            &mut side.table
        }
    };
    match came {
        Came::New { replace } => table.add(prefix, route, replace),
        Came::Del => table.remove(prefix, &route, rule),
        Came::Dump => {}
    }
}

/// Marks every prefix of the table and of the router changed.
fn reconcile<A: Address>(side: &mut Side<A>) {
    side.changed.extend(side.router.rib().iter().map(|(prefix, _)| prefix));
    side.changed.extend(side.table.prefixes());
}

#[derive(Clone, Copy, Default)]
struct Counts {
    announced: usize,
    withdrawn: usize,
    applied: u64,
    rejected: u64,
}

/// Applies the prefixes whose value changed to the router as one batch.
fn publish<A: Address>(shared: &Shared, side: &mut Side<A>, changes: &mut Option<Vec<Update<IpPrefix>>>) -> Counts {
    let mut batch = Vec::new();
    let mut counts = Counts::default();
    for prefix in side.changed.drain() {
        let value = side.table.value(prefix);
        let serving = side.router.rib().get(prefix).and_then(|hop| side.router.next_hops().label(hop));
        if value != serving {
            batch.push(match value {
                Some(value) => {
                    counts.announced += 1;
                    Update::Announce { prefix, value }
                }
                None => {
                    counts.withdrawn += 1;
                    Update::Withdraw { prefix }
                }
            });
        }
    }
    if batch.is_empty() {
        return counts;
    }
    let (applied, rejected) = published::apply(&mut side.router, &batch, &shared.labels, &shared.journal, changes);
    counts.applied = applied;
    counts.rejected = rejected;
    counts
}

mod socket;
#[cfg(test)]
mod tests;
