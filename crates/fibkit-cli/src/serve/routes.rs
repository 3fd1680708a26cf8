//! What `fibkit serve` answers from: a live FIB of each family (a table
//! file's routes to start with, BGP neighbours' or a kernel table's
//! after), read lock-free by
//! every batch request, and a copy of its routes as RIBs for the answers
//! that need the matched prefix and for snapshots.
//!
//! ```text
//!  table file --+--> Router<u32>, Router<u128> ---publish---> readers (batch lookups: next hops)
//!               |        ^  (the speaker's thread writes)              labels: next hop -> value
//!               |        |
//!               |    BGP neighbours --changes, one batch at a time--+
//!               v                                                   v
//!  Shadow: RIBs + values (RwLock): single lookups with their prefix, snapshots
//! ```
//!
//! The shadow takes each published batch whole under its lock, so a
//! single answer or a snapshot is always some published state of the
//! table. Its next-hop numbers are its own (the values are the same).

use std::sync::mpsc;
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;

use anyhow::{Context, Result};
use fibkit::addr::{Address, IpPrefix};
use fibkit::load::{load_path, LoadOptions, RouteTable, Update};
use fibkit::nexthop::{Label, Mapping, NextHopTable};
use fibkit::router::{Reader, Router, Window};
use fibkit::{NextHop, Rib, NO_ROUTE};
use fibkit_sources::bgp::{NeighbourStatus, Speaker};
#[cfg(target_os = "linux")]
use fibkit_sources::netlink::Mirror;
use fibkit_sources::Changes;

use super::config::Checked;
use crate::registered;

/// The routes as RIBs, with their values.
pub struct Shadow {
    /// IPv4 routes.
    pub v4: Rib<u32>,
    /// IPv6 routes.
    pub v6: Rib<u128>,
    /// The values of the RIBs' next hops.
    pub next_hops: NextHopTable,
    /// Batches taken since the start.
    pub generation: u64,
}

impl Shadow {
    /// Applies one published batch of changes.
    fn apply(&mut self, batch: Vec<Update<IpPrefix>>) {
        for update in batch {
            match update {
                Update::Announce { prefix: IpPrefix::V4(prefix), value } => {
                    let hop = self.next_hops.intern(value);
                    self.v4.insert(prefix, hop);
                }
                Update::Announce { prefix: IpPrefix::V6(prefix), value } => {
                    let hop = self.next_hops.intern(value);
                    self.v6.insert(prefix, hop);
                }
                Update::Withdraw { prefix: IpPrefix::V4(prefix) } => {
                    self.v4.remove(prefix);
                }
                Update::Withdraw { prefix: IpPrefix::V6(prefix) } => {
                    self.v6.remove(prefix);
                }
            }
        }
        self.generation += 1;
    }

    /// The routes as a table to compile.
    pub fn table(&self) -> RouteTable {
        let mut table = RouteTable::new("fibkit serve", Mapping::Distinct);
        table.v4 = self.v4.clone();
        table.v6 = self.v6.clone();
        table.next_hops = self.next_hops.clone();
        table
    }
}

/// The matched route of an address: its prefix and value.
pub type Matched = Option<(IpPrefix, Label)>;

/// Where the routes come from.
enum Source {
    /// A table file only: the routers hold it (kept, never written: the
    /// mutex only makes them shareable), and its values by next hop.
    File { _routers: Box<Mutex<(Router<u32>, Router<u128>)>>, labels: [Vec<Label>; 2] },
    /// BGP neighbours (on the table file's routes, if any); the feed's
    /// thread ends when the speaker stops (it ends the channel).
    Bgp { speaker: Speaker, _feed: JoinHandle<()> },
    /// A kernel routing table (the table file's routes, if any, replaced
    /// by it once its dump is in).
    #[cfg(target_os = "linux")]
    Kernel { mirror: Mirror, _feed: JoinHandle<()> },
}

/// A channel for a source's changes, and the thread that takes them
/// into `shadow` a batch at a time (it ends when the source stops).
fn follow(shadow: &Arc<RwLock<Shadow>>) -> Result<(Changes, JoinHandle<()>)> {
    let (changes, received) = mpsc::channel::<Vec<Update<IpPrefix>>>();
    let taking = Arc::clone(shadow);
    let feed = std::thread::Builder::new().name("fibkit-serve-feed".into()).spawn(move || {
        for batch in received {
            taking.write().expect("shadow lock").apply(batch);
        }
    })?;
    Ok((changes, feed))
}

/// The served routes.
pub struct Routes {
    readers: (Reader<u32>, Reader<u128>),
    source: Source,
    shadow: Arc<RwLock<Shadow>>,
    /// The table file's name, or none.
    pub name: String,
}

impl Routes {
    /// Loads the table file (if any), builds the FIBs and starts the BGP
    /// speaker (if any).
    ///
    /// # Errors
    /// The table file cannot be loaded, an engine cannot build it, or the
    /// speaker cannot listen.
    pub fn start(checked: &Checked) -> Result<Routes> {
        let options = LoadOptions { mapping: Mapping::Distinct, ..LoadOptions::default() };
        let table = match &checked.table {
            Some(path) => load_path(path, &options)?,
            None => RouteTable::new("no table file", Mapping::Distinct),
        };
        let name = table.name.clone();
        let engines = &checked.config.engines;
        let engine4 = registered::resolve::<u32>(engines.ipv4.get_ref())?.name;
        let engine6 = registered::resolve::<u128>(engines.ipv6.get_ref())?.name;
        let mut router4 = Router::new(engine4, table.v4.clone(), table.next_hops.clone(), Window::Count(1))
            .with_context(|| format!("building the IPv4 FIB of {name}"))?;
        let mut router6 = Router::new(engine6, table.v6.clone(), table.next_hops.clone(), Window::Count(1))
            .with_context(|| format!("building the IPv6 FIB of {name}"))?;
        router4.set_atomic_batches(engines.atomic_batches);
        router6.set_atomic_batches(engines.atomic_batches);
        let readers = (router4.reader(), router6.reader());
        let labels: Vec<Label> =
            (1..=table.next_hops.max_index()).filter_map(|hop| table.next_hops.label(hop)).collect();
        let shadow =
            Arc::new(RwLock::new(Shadow { v4: table.v4, v6: table.v6, next_hops: table.next_hops, generation: 0 }));
        let source = match &checked.bgp {
            Some(bgp) => {
                let (changes, feed) = follow(&shadow)?;
                let speaker = Speaker::start_following(bgp.clone(), router4, router6, changes)?;
                for address in speaker.local_addrs() {
                    eprintln!("fibkit serve: BGP: listening on {address}");
                }
                Source::Bgp { speaker, _feed: feed }
            }
            #[cfg(target_os = "linux")]
            None if checked.kernel.is_some() => {
                let config = checked.kernel.clone().expect("a kernel table");
                let (changes, feed) = follow(&shadow)?;
                let table = config.table;
                let mirror = Mirror::start_following(config, router4, router6, changes)
                    .with_context(|| format!("mirroring the kernel's table {table}"))?;
                if !mirror.wait_for_dump(std::time::Duration::from_secs(120)) {
                    anyhow::bail!("the kernel's table {table}: its dump took more than 120 s");
                }
                Source::Kernel { mirror, _feed: feed }
            }
            None => {
                Source::File { _routers: Box::new(Mutex::new((router4, router6))), labels: [labels.clone(), labels] }
            }
        };
        Ok(Routes { readers, source, shadow, name })
    }

    /// Looks up every key in family `A`'s FIB: in one published version
    /// with atomic batches, else each key as the routes were at some moment
    /// of the call ([`fibkit::router::Reader::lookup_batch`]).
    pub fn lookup_batch<A: Family>(&self, keys: &[A], out: &mut [NextHop]) {
        A::reader(self).snapshot().fib().lookup_batch(keys, out);
    }

    /// The value of family `A`'s next hop `hop` (an answer of
    /// [`Routes::lookup_batch`]); `None` for [`NO_ROUTE`].
    pub fn value<A: Family>(&self, hop: NextHop) -> Option<Label> {
        if hop == NO_ROUTE {
            return None;
        }
        match &self.source {
            Source::File { labels, .. } => labels[A::SLOT].get(hop as usize - 1).copied(),
            Source::Bgp { speaker, .. } => speaker.label::<A>(hop),
            #[cfg(target_os = "linux")]
            Source::Kernel { mirror, .. } => mirror.label::<A>(hop),
        }
    }

    /// Family `A`'s values by next hop, from next hop 1: what binary
    /// answers index (a list that only grows).
    pub fn values<A: Family>(&self) -> Vec<Label> {
        match &self.source {
            Source::File { labels, .. } => labels[A::SLOT].clone(),
            Source::Bgp { speaker, .. } => (1..).map_while(|hop| speaker.label::<A>(hop)).collect(),
            #[cfg(target_os = "linux")]
            Source::Kernel { mirror, .. } => (1..).map_while(|hop| mirror.label::<A>(hop)).collect(),
        }
    }

    /// The matched route of `addr`: from the shadow, under its lock.
    pub fn matched<A: Family>(&self, addr: A) -> Matched {
        let shadow = self.shadow.read().expect("shadow lock");
        let (prefix, hop) = A::rib(&shadow).lookup_prefix(addr)?;
        Some((prefix.into(), shadow.next_hops.label(hop)?))
    }

    /// The routes now, as a table to compile (a copy taken under the lock)
    /// and the shadow's generation.
    pub fn table(&self) -> (RouteTable, u64) {
        let shadow = self.shadow.read().expect("shadow lock");
        (shadow.table(), shadow.generation)
    }

    /// The batches the routes have taken since the start (a snapshot is
    /// due only when it moved).
    pub fn generation(&self) -> u64 {
        self.shadow.read().expect("shadow lock").generation
    }

    /// Routes in each family's FIB.
    pub fn counts(&self) -> [usize; 2] {
        let shadow = self.shadow.read().expect("shadow lock");
        [shadow.v4.len(), shadow.v6.len()]
    }

    /// The speaker, if BGP runs.
    pub fn speaker(&self) -> Option<&Speaker> {
        match &self.source {
            Source::Bgp { speaker, .. } => Some(speaker),
            _ => None,
        }
    }

    /// Route updates applied and rejected by the live source, if one runs.
    pub fn updates(&self) -> Option<(u64, u64)> {
        match &self.source {
            Source::Bgp { speaker, .. } => {
                let stats = speaker.stats();
                Some((stats.updates_applied, stats.updates_rejected))
            }
            #[cfg(target_os = "linux")]
            Source::Kernel { mirror, .. } => {
                let stats = mirror.stats();
                Some((stats.updates_applied, stats.updates_rejected))
            }
            Source::File { .. } => None,
        }
    }

    /// The BGP neighbours' states (none without BGP).
    pub fn neighbours(&self) -> Vec<NeighbourStatus> {
        self.speaker().map(Speaker::neighbours).unwrap_or_default()
    }
}

/// What the server needs of an address family.
pub trait Family: Address {
    /// The family's index in per-family arrays.
    const SLOT: usize;
    /// The family's reader.
    fn reader(routes: &Routes) -> &Reader<Self>;
    /// The family's shadow RIB.
    fn rib(shadow: &Shadow) -> &Rib<Self>;
}

impl Family for u32 {
    const SLOT: usize = 0;
    fn reader(routes: &Routes) -> &Reader<u32> {
        &routes.readers.0
    }
    fn rib(shadow: &Shadow) -> &Rib<u32> {
        &shadow.v4
    }
}

impl Family for u128 {
    const SLOT: usize = 1;
    fn reader(routes: &Routes) -> &Reader<u128> {
        &routes.readers.1
    }
    fn rib(shadow: &Shadow) -> &Rib<u128> {
        &shadow.v6
    }
}
