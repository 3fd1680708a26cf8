//! The configured neighbours and their connections: the table of slots a
//! session, the listener and the connectors find a neighbour in, the
//! threads that accept and make connections, and a reconfiguration that
//! adds and removes neighbours while the others' sessions go on.
//!
//! A neighbour's number is its slot's index, for the life of the speaker:
//! a neighbour removed keeps its slot (marked removed, its session ended
//! with a Cease "Peer De-configured"), and one added takes a new slot, so
//! that events already queued always name the neighbour they came from.

use std::io;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex, RwLock};
use std::thread;
use std::time::{Duration, Instant};

use super::session::{self, peer_address, reject, TICK};
use super::speaker::{Event, Shared};
use super::wire::{cease, Notification};
use super::{BgpConfig, NeighbourConfig, NeighbourStatus, SessionState};

/// One neighbour: its configuration and its connection.
pub struct Slot {
    /// Its configuration.
    pub config: NeighbourConfig,
    /// Its connection, for writing (keepalives from its session, a Cease
    /// from the speaker's thread).
    pub writer: Mutex<Option<TcpStream>>,
    /// Whether it has a connection (at most one).
    busy: AtomicBool,
    /// Whether a reconfiguration removed it.
    removed: AtomicBool,
}

impl Slot {
    fn new(config: NeighbourConfig) -> Arc<Slot> {
        Arc::new(Slot {
            config,
            writer: Mutex::new(None),
            busy: AtomicBool::new(false),
            removed: AtomicBool::new(false),
        })
    }

    /// Whether a reconfiguration removed it.
    pub fn removed(&self) -> bool {
        self.removed.load(Ordering::Relaxed)
    }

    /// Ends its session, if it has one, with `notification`.
    pub fn cease(&self, notification: &Notification) {
        use std::io::Write as _;
        if let Some(stream) = self.writer.lock().expect("writer lock").as_mut() {
            let _ = stream.write_all(&notification.encode());
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// The neighbours by number.
pub struct Neighbours(RwLock<Vec<Arc<Slot>>>);

impl Neighbours {
    /// The configured neighbours, numbered in order.
    pub fn new(configs: &[NeighbourConfig]) -> Neighbours {
        Neighbours(RwLock::new(configs.iter().cloned().map(Slot::new).collect()))
    }

    /// Neighbour `neighbour`.
    ///
    /// # Panics
    /// For a number no neighbour ever had.
    pub fn get(&self, neighbour: usize) -> Arc<Slot> {
        Arc::clone(&self.0.read().expect("neighbours lock")[neighbour])
    }

    /// The number of the neighbour (not removed) at `address`.
    fn find(&self, address: IpAddr) -> Option<usize> {
        let slots = self.0.read().expect("neighbours lock");
        slots.iter().position(|slot| !slot.removed() && slot.config.address == address)
    }

    /// Slots ever made (removed ones too).
    pub fn count(&self) -> usize {
        self.0.read().expect("neighbours lock").len()
    }
}

/// Accepts connections until the speaker stops.
pub fn listen(shared: &Arc<Shared>, listener: &TcpListener, events: &SyncSender<Event>) {
    while !shared.stopping.load(Ordering::Relaxed) {
        let stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                thread::sleep(Duration::from_millis(20));
                continue;
            }
            Err(error) => {
                shared.log_line(format!("accepting a connection: {error}"));
                thread::sleep(TICK);
                continue;
            }
        };
        let _ = stream.set_nonblocking(false);
        let Some(address) = peer_address(&stream) else { continue };
        let Some(neighbour) = shared.neighbours.find(address) else {
            shared.log_line(format!("connection from {address} refused: not a configured neighbour"));
            reject(stream, cease::REJECTED);
            continue;
        };
        if shared.neighbours.get(neighbour).busy.swap(true, Ordering::AcqRel) {
            shared.log(neighbour, "a second connection refused (connection collision)");
            reject(stream, cease::COLLISION);
            continue;
        }
        let (thread_shared, events) = (Arc::clone(shared), events.clone());
        let handle = thread::spawn(move || serve(&thread_shared, neighbour, stream, &events));
        shared.keep(handle);
    }
}

/// Connects to an active neighbour whenever it has no session, until the
/// speaker stops or the neighbour is removed.
pub fn connect(shared: &Arc<Shared>, neighbour: usize, events: &SyncSender<Event>) {
    let slot = shared.neighbours.get(neighbour);
    let Some(port) = slot.config.connect_port else { return };
    let address = SocketAddr::new(slot.config.address, port);
    let going = || !shared.stopping.load(Ordering::Relaxed) && !slot.removed();
    while going() {
        if !slot.busy.swap(true, Ordering::AcqRel) {
            match TcpStream::connect_timeout(&address, Duration::from_secs(3)) {
                Ok(stream) => serve(shared, neighbour, stream, events),
                Err(error) => {
                    shared.status.lock().expect("status lock")[neighbour].last_error =
                        Some(format!("cannot connect to {address}: {error}"));
                    slot.busy.store(false, Ordering::Release);
                }
            }
        }
        let start = Instant::now();
        while start.elapsed() < slot.config.connect_retry && going() {
            thread::sleep(TICK);
        }
    }
}

/// Runs a session of `neighbour` to its end, then tells the speaker.
fn serve(shared: &Arc<Shared>, neighbour: usize, stream: TcpStream, events: &SyncSender<Event>) {
    shared.status.lock().expect("status lock")[neighbour].sessions += 1;
    let why = session::run(shared, neighbour, stream, events);
    shared.log(neighbour, &format!("session down: {why}"));
    {
        let mut status = shared.status.lock().expect("status lock");
        let status = &mut status[neighbour];
        status.state = SessionState::Idle;
        status.established_at = None;
        status.last_error = Some(why);
    }
    let _ = events.send(Event::Down { neighbour });
    shared.neighbours.get(neighbour).busy.store(false, Ordering::Release);
}

/// The status of a neighbour not yet connected.
pub fn idle(config: &NeighbourConfig) -> NeighbourStatus {
    NeighbourStatus {
        address: config.address,
        remote_as: config.remote_as,
        state: SessionState::Idle,
        prefixes: 0,
        updates: 0,
        sessions: 0,
        established_at: None,
        last_error: None,
    }
}

/// What a reconfiguration changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reconfigured {
    /// The neighbours added.
    pub added: Vec<IpAddr>,
    /// The neighbours removed (their sessions ended, their routes
    /// withdrawn).
    pub removed: Vec<IpAddr>,
}

/// Applies `config`'s neighbours: those no longer in it (or configured
/// otherwise) end with a Cease "Peer De-configured" and their routes go;
/// those new to it start (connectors for the active ones); the others'
/// sessions go on untouched.
///
/// # Errors
/// A change of the speaker's own settings (local AS, identifier, listen
/// addresses, hold time, value), which needs a new speaker, or a
/// configuration that does not hold (a neighbour twice): nothing changes.
pub fn reconfigure(
    shared: &Arc<Shared>,
    config: &BgpConfig,
    events: &SyncSender<Event>,
) -> Result<Reconfigured, String> {
    let running = &shared.config;
    let settings = |config: &BgpConfig| (config.local_as, config.router_id, config.hold_time, config.value);
    if settings(running) != settings(config) || running.listen != config.listen {
        return Err(
            "the local AS, identifier, listen addresses, hold time or value changed: start a new speaker".into()
        );
    }
    super::speaker::check(config).map_err(|error| error.to_string())?;
    let mut changed = Reconfigured::default();
    let mut slots = shared.neighbours.0.write().expect("neighbours lock");
    for slot in slots.iter().filter(|slot| !slot.removed()) {
        if !config.neighbours.contains(&slot.config) {
            // Its session sees it within a tick and ends with the Cease.
            slot.removed.store(true, Ordering::Relaxed);
            changed.removed.push(slot.config.address);
        }
    }
    let mut added = Vec::new();
    for neighbour in &config.neighbours {
        if !slots.iter().any(|slot| !slot.removed() && slot.config == *neighbour) {
            slots.push(Slot::new(neighbour.clone()));
            shared.status.lock().expect("status lock").push(idle(neighbour));
            added.push(slots.len() - 1);
            changed.added.push(neighbour.address);
        }
    }
    drop(slots);
    for address in &changed.removed {
        shared.log_line(format!("neighbour {address} removed from the configuration: its session ends, its routes go"));
    }
    for &neighbour in &added {
        shared.log(neighbour, "added to the configuration");
        if shared.neighbours.get(neighbour).config.connect_port.is_some() {
            let (thread_shared, events) = (Arc::clone(shared), events.clone());
            shared.keep(thread::spawn(move || connect(&thread_shared, neighbour, &events)));
        }
    }
    Ok(changed)
}
