//! One BGP session over one TCP connection (RFC 4271 8): OPEN exchanged
//! and checked, then KEEPALIVEs and UPDATEs until either side stops.
//!
//! The session runs on a thread of its own with short read timeouts, so
//! that the hold timer, the keepalive timer and a shutdown are noticed
//! within [`TICK`]. What it learns goes to the speaker's thread as
//! [`Event`]s; it never touches the FIB.
//!
//! ```text
//!  connected ──send OPEN──> OpenSent ──OPEN checked, send KEEPALIVE──> OpenConfirm
//!      OpenConfirm ──KEEPALIVE──> Established ──UPDATE / KEEPALIVE / ROUTE-REFRESH──> Established
//!  any state ──NOTIFICATION received or sent, hold timer expired, shutdown, close──> down
//! ```

use std::io::Write;
use std::net::{IpAddr, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::mpsc::SyncSender;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fibkit::load::bgp::{decode_update, Action, UpdateMessage};
use fibkit::Family;

use super::decision::{Identity, Route, DEFAULT_LOCAL_PREF};
use super::speaker::{Event, Routes, Shared};
use super::wire::{self, code, keepalive, Message, MessageReader, Notification, Open, Received};
use super::SessionState;

/// How often a session wakes to look at its timers.
pub const TICK: Duration = Duration::from_millis(100);
/// How long a connection may take to send its OPEN (RFC 4271 suggests a
/// large hold time before the OPEN; a neighbour that connects and says
/// nothing holds a thread that long).
const OPEN_WAIT: Duration = Duration::from_secs(30);

/// Why a session ended, for the log.
type Ended = String;
/// UPDATEs already read that go to the speaker in one event, at most.
const BATCH_MESSAGES: usize = 256;

/// Runs a session with neighbour `neighbour` over `stream` until it ends;
/// returns why it ended. The speaker hears of it through `events`.
pub fn run(shared: &Arc<Shared>, neighbour: usize, stream: TcpStream, events: &SyncSender<Event>) -> Ended {
    let slot = shared.neighbours.get(neighbour);
    let _ = stream.set_nodelay(true);
    if let Err(error) = stream.set_read_timeout(Some(TICK)) {
        return format!("cannot set a read timeout: {error}");
    }
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    match stream.try_clone() {
        Ok(writer) => *slot.writer.lock().expect("writer lock") = Some(writer),
        Err(error) => return format!("cannot share the connection: {error}"),
    }
    let mut session = Session {
        shared,
        neighbour,
        stream,
        reader: MessageReader::default(),
        hold_time: Duration::ZERO,
        as4: false,
        peer_as: slot.config.remote_as,
    };
    let ended = session.run(events);
    *slot.writer.lock().expect("writer lock") = None;
    let _ = session.stream.shutdown(std::net::Shutdown::Both);
    ended
}

struct Session<'a> {
    shared: &'a Arc<Shared>,
    neighbour: usize,
    stream: TcpStream,
    reader: MessageReader,
    /// The negotiated hold time (zero: no keepalives).
    hold_time: Duration,
    /// Whether both sides offered 4-octet ASNs.
    as4: bool,
    peer_as: u32,
}

impl Session<'_> {
    fn run(&mut self, events: &SyncSender<Event>) -> Ended {
        let config = &self.shared.config;
        let ours = Open {
            asn: config.local_as,
            hold_time: config.hold_time,
            router_id: config.router_id,
            families: Some(vec![Family::Ipv4, Family::Ipv6]),
            four_octet_as: true,
            route_refresh: true,
        };
        self.set_state(SessionState::OpenSent);
        if let Err(error) = self.send(&ours.encode()) {
            return format!("cannot send OPEN: {error}");
        }
        // OpenSent: their OPEN.
        let theirs = match self.wait(OPEN_WAIT, "OPEN") {
            Ok(Message::Open(body)) => body,
            Ok(other) => return self.notify(Notification::new(code::FSM, 1), &format!("{} before OPEN", other.name())),
            Err(ended) => return ended,
        };
        let theirs = match Open::decode(&theirs) {
            Ok(open) => open,
            Err(notification) => return self.notify(notification, "a malformed OPEN"),
        };
        if let Err(ended) = self.check_open(&theirs) {
            return ended;
        }
        self.as4 = theirs.four_octet_as;
        let hold = config.hold_time.min(theirs.hold_time);
        self.hold_time = Duration::from_secs(u64::from(hold));
        if let Err(error) = self.send(&keepalive()) {
            return format!("cannot send KEEPALIVE: {error}");
        }
        // OpenConfirm: their KEEPALIVE.
        self.set_state(SessionState::OpenConfirm);
        let wait = if hold == 0 { OPEN_WAIT } else { self.hold_time };
        match self.wait(wait, "KEEPALIVE") {
            Ok(Message::Keepalive) => {}
            Ok(other) => {
                return self.notify(Notification::new(code::FSM, 2), &format!("{} in OpenConfirm", other.name()))
            }
            Err(ended) => return ended,
        }
        let families = theirs.families.clone().unwrap_or_else(|| vec![Family::Ipv4]);
        let address = self.shared.neighbours.get(self.neighbour).config.address;
        let identity = Identity { router_id: theirs.router_id, address };
        let external = self.peer_as != config.local_as;
        let up = Event::Up { neighbour: self.neighbour, identity };
        if events.send(up).is_err() {
            return "the speaker stopped".to_string();
        }
        self.set_state(SessionState::Established);
        self.shared.log(
            self.neighbour,
            &format!(
                "established: AS {}, identifier {}, hold time {hold} s, families {families:?}, {}",
                self.peer_as,
                theirs.router_id,
                if self.as4 { "4-octet ASNs" } else { "2-octet ASNs" }
            ),
        );
        self.established(events, external)
    }

    /// Checks the neighbour's OPEN against its configuration (RFC 4271
    /// 6.2); on a fault, sends the NOTIFICATION and returns why it ended.
    fn check_open(&mut self, theirs: &Open) -> Result<(), Ended> {
        let config = &self.shared.config;
        if theirs.asn != self.peer_as {
            let data = u16::try_from(self.peer_as).unwrap_or(wire::AS_TRANS).to_be_bytes();
            let why = format!("OPEN from AS {}, configured as AS {}", theirs.asn, self.peer_as);
            return Err(self.notify(Notification::new(code::OPEN, 2).with_data(&data), &why));
        }
        if theirs.hold_time == 1 || theirs.hold_time == 2 {
            let why = format!("hold time of {} s (0 or at least 3)", theirs.hold_time);
            return Err(self.notify(Notification::new(code::OPEN, 6), &why));
        }
        let internal = self.peer_as == config.local_as;
        if theirs.router_id.is_unspecified() || (internal && theirs.router_id == config.router_id) {
            let why = format!("BGP identifier {}", theirs.router_id);
            return Err(self.notify(Notification::new(code::OPEN, 3), &why));
        }
        Ok(())
    }

    /// Established: UPDATEs to events, timers kept, until the end.
    fn established(&mut self, events: &SyncSender<Event>, external: bool) -> Ended {
        let keepalive_every = self.hold_time / 3;
        let mut heard = Instant::now();
        let mut sent = Instant::now();
        loop {
            if let Some((notification, why)) = self.ending() {
                return self.notify(notification, why);
            }
            if !self.hold_time.is_zero() {
                if heard.elapsed() > self.hold_time {
                    let why = format!("nothing heard for the hold time ({} s)", self.hold_time.as_secs());
                    return self.notify(Notification::new(code::HOLD_TIMER_EXPIRED, 0), &why);
                }
                if sent.elapsed() >= keepalive_every {
                    if let Err(error) = self.send(&keepalive()) {
                        return format!("cannot send KEEPALIVE: {error}");
                    }
                    sent = Instant::now();
                }
            }
            let message = match self.reader.next(&mut self.stream) {
                Ok(Received::Nothing) => continue,
                Ok(Received::Message(message)) => message,
                Ok(Received::Closed) => return "the neighbour closed the connection".to_string(),
                Ok(Received::Invalid(notification)) => return self.notify(notification, "a malformed message"),
                Err(error) => return format!("connection lost: {error}"),
            };
            heard = Instant::now();
            // This message and those already read behind it (up to
            // BATCH_MESSAGES) go to the speaker as one event.
            let mut updates = Vec::new();
            let mut next = Some(message);
            let mut ended = None;
            while let Some(message) = next.take() {
                match message {
                    Message::Keepalive | Message::RouteRefresh => {}
                    Message::Update(body) => match self.update(&body, external) {
                        Ok(routes) => updates.push(routes),
                        Err(why) => ended = Some(why),
                    },
                    Message::Notification(notification) => ended = Some(format!("received {notification}")),
                    // RFC 6608: an unexpected message in Established.
                    Message::Open(_) => {
                        ended = Some(self.notify(Notification::new(code::FSM, 3), "OPEN in Established"));
                    }
                }
                if ended.is_some() || updates.len() == BATCH_MESSAGES {
                    break;
                }
                next = match self.reader.buffered() {
                    Some(Received::Message(message)) => Some(message),
                    Some(Received::Invalid(notification)) => {
                        ended = Some(self.notify(notification, "a malformed message"));
                        None
                    }
                    _ => None,
                };
            }
            if !updates.is_empty() {
                let event = Event::Update { neighbour: self.neighbour, updates, received: heard };
                if events.send(event).is_err() {
                    return "the speaker stopped".to_string();
                }
            }
            if let Some(ended) = ended {
                return ended;
            }
        }
    }

    /// One UPDATE, decoded and judged as RFC 7606 says: its routes, or why
    /// the session ends.
    fn update(&mut self, body: &[u8], external: bool) -> Result<Routes, Ended> {
        let message = match decode_update(body, self.as4, false) {
            Ok(message) => message,
            Err(fault) => {
                let Action::Reset(subcode) = fault.action else { unreachable!("decode errors reset") };
                let why = format!("UPDATE byte {}: {}", fault.offset, fault.message);
                return Err(self.notify(Notification::new(code::UPDATE, subcode), &why));
            }
        };
        let mut withdraw_all = false;
        if let Some(fault) = message.decisive_fault() {
            let why = format!("UPDATE byte {}: {}", fault.offset, fault.message);
            match fault.action {
                Action::Reset(subcode) => return Err(self.notify(Notification::new(code::UPDATE, subcode), &why)),
                Action::TreatAsWithdraw => {
                    let count = message.announced.len();
                    self.shared.log(self.neighbour, &format!("{why}: its {count} routes treated as withdrawn"));
                    withdraw_all = true;
                }
                Action::Discard => {}
            }
        }
        for fault in message.faults.iter().filter(|fault| fault.action == Action::Discard) {
            let text = format!("UPDATE byte {}: {}: attribute discarded", fault.offset, fault.message);
            self.shared.log(self.neighbour, &text);
        }
        let route = (!withdraw_all && !message.announced.is_empty()).then(|| Arc::new(self.route(&message, external)));
        let UpdateMessage { mut withdrawn, announced, .. } = message;
        let announced = if route.is_some() {
            announced.into_iter().map(|entry| entry.prefix).collect()
        } else {
            withdrawn.extend(announced);
            Vec::new()
        };
        let withdrawn = withdrawn.into_iter().map(|entry| entry.prefix).collect();
        Ok(Routes { withdrawn, announced, route })
    }

    /// The decision's view of an UPDATE's routes.
    fn route(&self, message: &UpdateMessage, external: bool) -> Route {
        let path = &message.path;
        let as_path = path.as_path.unwrap_or_default();
        let local_as = self.shared.config.local_as;
        Route {
            local_pref: if external { DEFAULT_LOCAL_PREF } else { path.local_pref.unwrap_or(DEFAULT_LOCAL_PREF) },
            as_path_len: as_path.length,
            origin: path.origin.unwrap_or(2),
            med: path.med.unwrap_or(0),
            neighbour_as: as_path.first.unwrap_or(if external { self.peer_as } else { local_as }),
            external,
            next_hop: path.next_hop,
            mp_next_hop: path.mp_next_hop,
            origin_as: as_path.origin.unwrap_or(self.peer_as),
        }
    }

    /// Waits up to `limit` for a message (`what` names it for the log).
    fn wait(&mut self, limit: Duration, what: &str) -> Result<Message, Ended> {
        let start = Instant::now();
        loop {
            if let Some((notification, why)) = self.ending() {
                return Err(self.notify(notification, why));
            }
            if start.elapsed() > limit {
                let why = format!("no {what} within {} s", limit.as_secs());
                return Err(self.notify(Notification::new(code::HOLD_TIMER_EXPIRED, 0), &why));
            }
            match self.reader.next(&mut self.stream) {
                Ok(Received::Nothing) => {}
                Ok(Received::Message(Message::Notification(notification))) => {
                    return Err(format!("received {notification}"))
                }
                Ok(Received::Message(message)) => return Ok(message),
                Ok(Received::Closed) => return Err("the neighbour closed the connection".to_string()),
                Ok(Received::Invalid(notification)) => return Err(self.notify(notification, "a malformed message")),
                Err(error) => return Err(format!("connection lost: {error}")),
            }
        }
    }

    /// Whether the session must end from this side: the speaker stops, or
    /// a reconfiguration removed the neighbour; the Cease to send, and why.
    fn ending(&self) -> Option<(Notification, &'static str)> {
        if self.shared.stopping.load(Ordering::Relaxed) {
            return Some((Notification::new(code::CEASE, wire::cease::SHUTDOWN), "fibkit is stopping"));
        }
        let removed = self.shared.neighbours.get(self.neighbour).removed();
        removed.then(|| (Notification::new(code::CEASE, wire::cease::DECONFIGURED), "removed from the configuration"))
    }

    fn send(&self, bytes: &[u8]) -> std::io::Result<()> {
        let slot = self.shared.neighbours.get(self.neighbour);
        let mut writer = slot.writer.lock().expect("writer lock");
        match writer.as_mut() {
            Some(stream) => stream.write_all(bytes),
            None => Err(std::io::Error::new(std::io::ErrorKind::NotConnected, "the connection was closed")),
        }
    }

    /// Sends `notification`, logs it with `why`, and returns why the
    /// session ended.
    fn notify(&self, notification: Notification, why: &str) -> Ended {
        let _ = self.send(&notification.encode());
        format!("sent {notification}: {why}")
    }

    fn set_state(&self, state: SessionState) {
        self.shared.status.lock().expect("status lock")[self.neighbour].state = state;
    }
}

/// Rejects a connection from `address`: a Cease NOTIFICATION with
/// `subcode`, then the close.
pub fn reject(mut stream: TcpStream, subcode: u8) {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let _ = stream.write_all(&Notification::new(code::CEASE, subcode).encode());
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

/// The address a connection comes from, as configurations name it (an
/// IPv4-mapped IPv6 address as IPv4).
pub fn peer_address(stream: &TcpStream) -> Option<IpAddr> {
    let address = stream.peer_addr().ok()?.ip();
    Some(match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        IpAddr::V4(_) => address,
    })
}
