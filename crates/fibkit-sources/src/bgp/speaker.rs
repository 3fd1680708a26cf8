//! The speaker: a listener, a connector per active neighbour, a thread per
//! session, and the one thread that owns the Loc-RIB and the routers.

use std::collections::{HashMap, VecDeque};
use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use fibkit::addr::IpPrefix;
use fibkit::load::ValueChoice;
use fibkit::nexthop::Label;
use fibkit::router::{Reader, Router, Update};
use fibkit::{Address, Family, NextHop, Prefix};

use super::decision::{best, Candidates, Identity, Route};
use super::neighbours::{self, Neighbours, Reconfigured};
use super::wire::{self, cease, code, Notification};
use super::{BgpConfig, NeighbourStatus, SpeakerStats};
use crate::published::{self, Changes, Journal, Labels};

/// How many events the sessions may queue ahead of the speaker's thread
/// (each an UPDATE at most 4 KiB on the wire): a neighbour that sends
/// faster than the routers apply waits on its socket, as TCP makes it.
const QUEUE: usize = 16;
/// Events taken into one batch at most.
const BATCH_EVENTS: usize = 64;
/// UPDATE latencies kept (the last ones).
const LATENCIES: usize = 1 << 16;

/// What the session threads tell the speaker's thread.
pub enum Event {
    /// A session was established.
    Up { neighbour: usize, identity: Identity },
    /// UPDATEs, in order; when the first was read.
    Update { neighbour: usize, updates: Vec<Routes>, received: Instant },
    /// A session ended: its routes go.
    Down { neighbour: usize },
}

/// What one UPDATE says: prefixes withdrawn, and prefixes announced with
/// `route`.
pub struct Routes {
    pub withdrawn: Vec<IpPrefix>,
    pub announced: Vec<IpPrefix>,
    pub route: Option<Arc<Route>>,
}

/// What every thread of the speaker shares.
pub struct Shared {
    /// The configuration the speaker started with (its neighbours are
    /// those of [`Shared::neighbours`] since).
    pub config: BgpConfig,
    pub stopping: AtomicBool,
    /// The neighbours by number (the configured ones first, then those a
    /// reconfiguration added).
    pub neighbours: Neighbours,
    /// Each neighbour's state, by number.
    pub status: Mutex<Vec<NeighbourStatus>>,
    journal: Journal,
    stats: Mutex<SpeakerStats>,
    labels: Labels,
    sessions: Mutex<Vec<JoinHandle<()>>>,
    /// The last UPDATEs' times from receipt to publication, in µs.
    latencies: Mutex<VecDeque<u32>>,
}

impl Shared {
    /// Logs `text` about `neighbour`.
    pub fn log(&self, neighbour: usize, text: &str) {
        let slot = self.neighbours.get(neighbour);
        self.log_line(format!("neighbour {} (AS {}): {text}", slot.config.address, slot.config.remote_as));
    }

    /// Logs `line`.
    pub fn log_line(&self, line: String) {
        self.journal.log(line);
    }

    /// Keeps a thread to join when the speaker stops (forgetting those
    /// that ended).
    pub fn keep(&self, thread: JoinHandle<()>) {
        let mut threads = self.sessions.lock().expect("sessions lock");
        threads.retain(|thread| !thread.is_finished());
        threads.push(thread);
    }
}

/// Why a speaker did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The listen address could not be bound.
    #[error("cannot listen on {address}: {error}")]
    Listen {
        /// The address.
        address: SocketAddr,
        /// Why.
        error: io::Error,
    },
    /// The configuration contradicts itself.
    #[error("bad BGP configuration: {0}")]
    Config(String),
}

/// A running speaker. Dropping it stops it ([`Speaker::stop`]).
pub struct Speaker {
    shared: Arc<Shared>,
    readers: (Reader<u32>, Reader<u128>),
    local_addrs: Vec<SocketAddr>,
    threads: Vec<JoinHandle<()>>,
    events: Option<SyncSender<Event>>,
    writer: Option<JoinHandle<(Router<u32>, Router<u128>)>>,
}

impl Speaker {
    /// Starts peering as `config` says, feeding `router4` and `router6`
    /// (which may hold routes already: the neighbours' routes replace
    /// them prefix by prefix, and a withdrawal removes the route).
    ///
    /// # Errors
    /// [`StartError::Listen`] when the listen address cannot be bound,
    /// [`StartError::Config`] for a neighbour configured twice, or a hold
    /// time of 1 or 2 s.
    pub fn start(config: BgpConfig, router4: Router<u32>, router6: Router<u128>) -> Result<Speaker, StartError> {
        Self::start_with(config, router4, router6, None)
    }

    /// [`Speaker::start`], sending every change of either FIB to `changes`
    /// as it is published (one `Vec` a batch, IPv4 then IPv6).
    ///
    /// # Errors
    /// As [`Speaker::start`].
    pub fn start_following(
        config: BgpConfig,
        router4: Router<u32>,
        router6: Router<u128>,
        changes: Changes,
    ) -> Result<Speaker, StartError> {
        Self::start_with(config, router4, router6, Some(changes))
    }

    fn start_with(
        config: BgpConfig,
        router4: Router<u32>,
        router6: Router<u128>,
        changes: Option<Changes>,
    ) -> Result<Speaker, StartError> {
        check(&config)?;
        let mut listeners = Vec::new();
        let mut port = 0;
        for &address in &config.listen {
            let address = if address.port() == 0 { SocketAddr::new(address.ip(), port) } else { address };
            let listen = |error| StartError::Listen { address, error };
            let listener = TcpListener::bind(address).map_err(listen)?;
            listener.set_nonblocking(true).map_err(listen)?;
            let local = listener.local_addr().map_err(listen)?;
            port = local.port();
            listeners.push((listener, local));
        }
        let local_addrs = listeners.iter().map(|(_, local)| *local).collect();
        let status = config.neighbours.iter().map(neighbours::idle).collect();
        let neighbours = Neighbours::new(&config.neighbours);
        let echo_log = config.echo_log;
        let shared = Arc::new(Shared {
            config,
            stopping: AtomicBool::new(false),
            neighbours,
            status: Mutex::new(status),
            journal: Journal::new(echo_log),
            stats: Mutex::new(SpeakerStats::default()),
            labels: Labels::new(),
            sessions: Mutex::new(Vec::new()),
            latencies: Mutex::new(VecDeque::with_capacity(LATENCIES)),
        });
        let readers = (router4.reader(), router6.reader());
        shared.labels.sync(&router4);
        shared.labels.sync(&router6);
        let (events, received) = sync_channel(QUEUE);
        let writer = Writer::new(Arc::clone(&shared), router4, router6, changes);
        let writer = thread::Builder::new()
            .name("fibkit-bgp".into())
            .spawn(move || writer.run(&received))
            .expect("spawn the speaker's thread");
        let mut threads = Vec::new();
        for (listener, _) in listeners {
            let (shared, events) = (Arc::clone(&shared), events.clone());
            threads.push(thread::spawn(move || neighbours::listen(&shared, &listener, &events)));
        }
        // The active neighbours' connectors (passive ones only accept).
        for neighbour in 0..shared.neighbours.count() {
            if shared.neighbours.get(neighbour).config.connect_port.is_none() {
                continue;
            }
            let (shared, events) = (Arc::clone(&shared), events.clone());
            threads.push(thread::spawn(move || neighbours::connect(&shared, neighbour, &events)));
        }
        Ok(Speaker { shared, readers, local_addrs, threads, events: Some(events), writer: Some(writer) })
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

    /// The addresses connections are accepted on.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.local_addrs
    }

    /// Each neighbour's state and counts: the configured ones in order,
    /// then those a reconfiguration added; none it removed.
    pub fn neighbours(&self) -> Vec<NeighbourStatus> {
        let status = self.shared.status.lock().expect("status lock").clone();
        let kept = |(neighbour, _): &(usize, NeighbourStatus)| !self.shared.neighbours.get(*neighbour).removed();
        status.into_iter().enumerate().filter(kept).map(|(_, status)| status).collect()
    }

    /// Applies the neighbours of `config` (the speaker's other settings
    /// unchanged): a neighbour no longer in it, or configured otherwise,
    /// ends with a Cease "Peer De-configured" and its routes go; a new one
    /// starts; the others' sessions go on.
    ///
    /// # Errors
    /// A change of the local AS, identifier, listen addresses, hold time
    /// or value (which needs a new speaker), or a neighbour configured
    /// twice: nothing changes, and the reason says which.
    pub fn reconfigure(&self, config: &BgpConfig) -> Result<Reconfigured, String> {
        let events = self.events.as_ref().ok_or("the speaker is stopping")?;
        neighbours::reconfigure(&self.shared, config, events)
    }

    /// The speaker's counts.
    pub fn stats(&self) -> SpeakerStats {
        self.shared.stats.lock().expect("stats lock").clone()
    }

    /// Percentiles (0 to 100) of the time from an UPDATE's receipt to the
    /// publication of what it changed, over the last 65,536 UPDATEs. An
    /// UPDATE read behind others counts from the first one's receipt (an
    /// upper bound), and one that changed nothing to the end of its batch.
    /// `None` before the first.
    pub fn latency(&self, percentiles: &[f64]) -> Option<Vec<Duration>> {
        let mut sorted: Vec<u32> = self.shared.latencies.lock().expect("latency lock").iter().copied().collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_unstable();
        let at = |percentile: f64| {
            let rank = (percentile / 100.0 * (sorted.len() - 1) as f64).round() as usize;
            Duration::from_micros(u64::from(sorted[rank.min(sorted.len() - 1)]))
        };
        Some(percentiles.iter().map(|&percentile| at(percentile)).collect())
    }

    /// Forgets the latencies measured so far (to measure a phase alone).
    pub fn reset_latency(&self) {
        self.shared.latencies.lock().expect("latency lock").clear();
    }

    /// The log's last lines (at most 10,000), oldest first.
    pub fn journal(&self) -> Vec<String> {
        self.shared.journal.lines()
    }

    /// Asks neighbour `neighbour` (its position in the configuration) to
    /// send its routes of `family` again (ROUTE-REFRESH, RFC 2918).
    ///
    /// # Errors
    /// `NotConnected` when it has no session; the socket's error otherwise.
    pub fn refresh(&self, neighbour: usize, family: Family) -> io::Result<()> {
        let slot = self.shared.neighbours.get(neighbour);
        let mut writer = slot.writer.lock().expect("writer lock");
        match writer.as_mut() {
            Some(stream) => stream.write_all(&wire::route_refresh(family)),
            None => Err(io::Error::new(io::ErrorKind::NotConnected, "no session")),
        }
    }

    /// Stops: every session ends with a Cease (Administrative Shutdown),
    /// the threads are joined, and the routers are handed back as they are
    /// (the neighbours' routes withdrawn).
    pub fn stop(mut self) -> (Router<u32>, Router<u128>) {
        self.halt().expect("the speaker's thread ended")
    }

    fn halt(&mut self) -> Option<(Router<u32>, Router<u128>)> {
        self.shared.stopping.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
        let sessions: Vec<_> = self.shared.sessions.lock().expect("sessions lock").drain(..).collect();
        for thread in sessions {
            let _ = thread.join();
        }
        self.events = None;
        self.writer.take().and_then(|writer| writer.join().ok())
    }
}

impl Drop for Speaker {
    fn drop(&mut self) {
        self.halt();
    }
}

/// Refuses a configuration that contradicts itself.
pub(super) fn check(config: &BgpConfig) -> Result<(), StartError> {
    if config.hold_time == 1 || config.hold_time == 2 {
        return Err(StartError::Config(format!("hold time {} s: 0 or at least 3", config.hold_time)));
    }
    for (at, neighbour) in config.neighbours.iter().enumerate() {
        if config.neighbours[..at].iter().any(|other| other.address == neighbour.address) {
            return Err(StartError::Config(format!("neighbour {} configured twice", neighbour.address)));
        }
    }
    if config.neighbours.len() > usize::from(u16::MAX) {
        return Err(StartError::Config("more than 65,535 neighbours".to_string()));
    }
    Ok(())
}

/// One family's Loc-RIB: the candidates of every prefix.
type LocRib<A> = HashMap<Prefix<A>, Candidates>;
/// Prefixes changed by the events of a batch, with the value each had
/// before it.
type Touched<A> = HashMap<Prefix<A>, Option<Label>>;

/// The speaker's thread: the Loc-RIB, the decision and the routers.
struct Writer {
    shared: Arc<Shared>,
    router4: Router<u32>,
    router6: Router<u128>,
    rib4: LocRib<u32>,
    rib6: LocRib<u128>,
    identities: Vec<Identity>,
    up: Vec<bool>,
    counts: Vec<usize>,
    /// UPDATEs received from each neighbour.
    updates: Vec<u64>,
    changes: Option<Changes>,
}

impl Writer {
    fn new(shared: Arc<Shared>, router4: Router<u32>, router6: Router<u128>, changes: Option<Changes>) -> Self {
        let count = shared.neighbours.count();
        let identity = |neighbour| Identity {
            router_id: std::net::Ipv4Addr::UNSPECIFIED,
            address: shared.neighbours.get(neighbour).config.address,
        };
        let identities = (0..count).map(identity).collect();
        Writer {
            shared,
            router4,
            router6,
            rib4: HashMap::new(),
            rib6: HashMap::new(),
            identities,
            up: vec![false; count],
            counts: vec![0; count],
            updates: vec![0; count],
            changes,
        }
    }

    fn run(mut self, events: &Receiver<Event>) -> (Router<u32>, Router<u128>) {
        let mut receipts = Vec::new();
        while let Ok(first) = events.recv() {
            let (mut touched4, mut touched6) = (Touched::new(), Touched::new());
            for event in std::iter::once(first).chain(events.try_iter().take(BATCH_EVENTS - 1)) {
                if let Event::Update { received, ref updates, .. } = event {
                    receipts.push((received, updates.len()));
                }
                self.handle(event, &mut touched4, &mut touched6);
            }
            let decide = Decide { identities: &self.identities, choice: self.shared.config.value };
            let mut changes = self.changes.as_ref().map(|_| Vec::new());
            let applied4 = publish(&self.shared, &mut self.rib4, &mut self.router4, touched4, decide, &mut changes);
            let applied6 = publish(&self.shared, &mut self.rib6, &mut self.router6, touched6, decide, &mut changes);
            published::send(&mut self.changes, changes);
            let mut stats = self.shared.stats.lock().expect("stats lock");
            stats.routes4 = self.router4.rib().len();
            stats.routes6 = self.router6.rib().len();
            for (updates, rejected) in [applied4, applied6] {
                stats.updates_applied += updates;
                stats.updates_rejected += rejected;
                stats.batches += u64::from(updates > 0);
            }
            drop(stats);
            let published = Instant::now();
            let mut latencies = self.shared.latencies.lock().expect("latency lock");
            for (received, count) in receipts.drain(..) {
                let micros = published.saturating_duration_since(received).as_micros().min(u128::from(u32::MAX));
                for _ in 0..count.min(LATENCIES) {
                    if latencies.len() == LATENCIES {
                        latencies.pop_front();
                    }
                    latencies.push_back(micros as u32);
                }
            }
            drop(latencies);
            let mut status = self.shared.status.lock().expect("status lock");
            for ((status, &count), &updates) in status.iter_mut().zip(&self.counts).zip(&self.updates) {
                status.prefixes = count;
                status.updates = updates;
            }
        }
        (self.router4, self.router6)
    }

    fn handle(&mut self, event: Event, touched4: &mut Touched<u32>, touched6: &mut Touched<u128>) {
        let (Event::Up { neighbour, .. } | Event::Down { neighbour } | Event::Update { neighbour, .. }) = event;
        self.make_room(neighbour);
        match event {
            Event::Up { neighbour, identity } => {
                self.identities[neighbour] = identity;
                self.up[neighbour] = true;
                let mut status = self.shared.status.lock().expect("status lock");
                status[neighbour].established_at = Some(Instant::now());
            }
            Event::Down { neighbour } => self.drop_routes(neighbour, touched4, touched6),
            // Queued before its session ended: its routes are gone.
            Event::Update { neighbour, .. } if !self.up[neighbour] => {}
            Event::Update { neighbour, updates, received: _ } => {
                self.updates[neighbour] += updates.len() as u64;
                let id = neighbour as u16;
                let decide = Decide { identities: &self.identities, choice: self.shared.config.value };
                let count = &mut self.counts[neighbour];
                for Routes { withdrawn, announced, route } in updates {
                    for prefix in withdrawn {
                        match prefix {
                            IpPrefix::V4(prefix) => withdraw(&mut self.rib4, touched4, prefix, id, count, decide),
                            IpPrefix::V6(prefix) => withdraw(&mut self.rib6, touched6, prefix, id, count, decide),
                        }
                    }
                    let Some(route) = route else { continue };
                    for prefix in announced {
                        match prefix {
                            IpPrefix::V4(prefix) => {
                                announce(&mut self.rib4, touched4, prefix, id, &route, count, decide)
                            }
                            IpPrefix::V6(prefix) => {
                                announce(&mut self.rib6, touched6, prefix, id, &route, count, decide)
                            }
                        }
                    }
                }
                self.limit(neighbour, touched4, touched6);
            }
        }
    }

    /// Makes the per-neighbour lists hold `neighbour` (one a
    /// reconfiguration added).
    fn make_room(&mut self, neighbour: usize) {
        while self.identities.len() <= neighbour {
            let address = self.shared.neighbours.get(self.identities.len()).config.address;
            self.identities.push(Identity { router_id: std::net::Ipv4Addr::UNSPECIFIED, address });
            self.up.push(false);
            self.counts.push(0);
            self.updates.push(0);
        }
    }

    /// Ends the session of a neighbour past its maximum prefix count.
    fn limit(&mut self, neighbour: usize, touched4: &mut Touched<u32>, touched6: &mut Touched<u128>) {
        let Some(max) = self.shared.neighbours.get(neighbour).config.max_prefixes else { return };
        let count = self.counts[neighbour];
        if count <= max {
            return;
        }
        // RFC 4486: the data is the AFI, SAFI and the limit.
        let mut data = vec![0, 1, 1];
        data.extend(u32::try_from(max).unwrap_or(u32::MAX).to_be_bytes());
        let notification = Notification::new(code::CEASE, cease::MAX_PREFIXES).with_data(&data);
        self.shared.log(
            neighbour,
            &format!("{count} prefixes, past its maximum of {max}: sent {notification}; its routes are withdrawn"),
        );
        self.shared.neighbours.get(neighbour).cease(&notification);
        self.drop_routes(neighbour, touched4, touched6);
    }

    /// Removes every route of `neighbour` (its session ended).
    fn drop_routes(&mut self, neighbour: usize, touched4: &mut Touched<u32>, touched6: &mut Touched<u128>) {
        self.up[neighbour] = false;
        self.counts[neighbour] = 0;
        let id = neighbour as u16;
        let decide = Decide { identities: &self.identities, choice: self.shared.config.value };
        remove_neighbour(&mut self.rib4, touched4, id, decide);
        remove_neighbour(&mut self.rib6, touched6, id, decide);
    }
}

/// What the decision needs besides the candidates.
#[derive(Clone, Copy)]
struct Decide<'a> {
    identities: &'a [Identity],
    choice: ValueChoice,
}

impl Decide<'_> {
    /// The value of the best of `candidates`, or `None`.
    fn label<A: Address>(&self, candidates: &Candidates) -> Option<Label> {
        let winner = best(candidates, |neighbour| self.identities[usize::from(neighbour)])?;
        candidates[winner].1.label(A::FAMILY, self.choice)
    }

    /// Notes the value `prefix` had before the batch first changed it.
    fn remember<A: Address>(&self, touched: &mut Touched<A>, prefix: Prefix<A>, candidates: &Candidates) {
        touched.entry(prefix).or_insert_with(|| self.label::<A>(candidates));
    }
}

fn withdraw<A: Address>(
    rib: &mut LocRib<A>,
    touched: &mut Touched<A>,
    prefix: Prefix<A>,
    neighbour: u16,
    count: &mut usize,
    decide: Decide<'_>,
) {
    let Some(candidates) = rib.get_mut(&prefix) else { return };
    let Some(at) = candidates.iter().position(|(from, _)| *from == neighbour) else { return };
    decide.remember(touched, prefix, candidates);
    candidates.remove(at);
    *count -= 1;
}

fn announce<A: Address>(
    rib: &mut LocRib<A>,
    touched: &mut Touched<A>,
    prefix: Prefix<A>,
    neighbour: u16,
    route: &Arc<Route>,
    count: &mut usize,
    decide: Decide<'_>,
) {
    let candidates = rib.entry(prefix).or_default();
    decide.remember(touched, prefix, candidates);
    match candidates.iter_mut().find(|(from, _)| *from == neighbour) {
        Some(slot) => slot.1 = Arc::clone(route),
        None => {
            candidates.push((neighbour, Arc::clone(route)));
            *count += 1;
        }
    }
}

fn remove_neighbour<A: Address>(rib: &mut LocRib<A>, touched: &mut Touched<A>, neighbour: u16, decide: Decide<'_>) {
    for (&prefix, candidates) in rib.iter_mut() {
        if let Some(at) = candidates.iter().position(|(from, _)| *from == neighbour) {
            decide.remember(touched, prefix, candidates);
            candidates.remove(at);
        }
    }
}

/// Applies the changes of `touched` to `router` as one batch; returns
/// the updates applied and rejected.
fn publish<A: Address>(
    shared: &Shared,
    rib: &mut LocRib<A>,
    router: &mut Router<A>,
    touched: Touched<A>,
    decide: Decide<'_>,
    changes: &mut Option<Vec<Update<IpPrefix>>>,
) -> (u64, u64) {
    let mut batch = Vec::new();
    for (prefix, before) in touched {
        let after = match rib.get(&prefix) {
            Some(candidates) if candidates.is_empty() => {
                rib.remove(&prefix);
                None
            }
            Some(candidates) => decide.label::<A>(candidates),
            None => None,
        };
        if after != before {
            batch.push(match after {
                Some(value) => Update::Announce { prefix, value },
                None => Update::Withdraw { prefix },
            });
        }
    }
    if batch.is_empty() {
        return (0, 0);
    }
    published::apply(router, &batch, &shared.labels, &shared.journal, changes)
}

#[cfg(test)]
mod tests {
    use fibkit::nexthop::{Label, Mapping, NextHopTable};
    use fibkit::router::Window;
    use fibkit::{registry, Rib};
    use std::net::Ipv4Addr;

    use super::*;

    /// A router that starts with routes has their values known to readers
    /// before any neighbour sends anything.
    #[test]
    fn the_values_of_routes_a_router_starts_with_are_known() {
        let mut table = NextHopTable::new(Mapping::Distinct);
        let hop = table.intern(Label::Number(64500));
        let mut rib = Rib::new();
        rib.insert("10.0.0.0/8".parse().unwrap(), hop);
        let router4 = Router::new(registry::DEFAULT_IPV4, rib, table, Window::Count(1)).unwrap();
        let router6 =
            Router::new(registry::DEFAULT_IPV6, Rib::new(), NextHopTable::new(Mapping::Distinct), Window::Count(1))
                .unwrap();
        let speaker = Speaker::start(BgpConfig::new(65000, Ipv4Addr::new(10, 0, 0, 1)), router4, router6).unwrap();
        let answer = speaker.reader4().lookup(0x0a01_0203);
        assert_eq!(speaker.label::<u32>(answer), Some(Label::Number(64500)));
    }
}
