//! A live FIB: route updates applied by one writer while any number of
//! readers go on looking up, without locks.
//!
//! This module is the one place where fibkit deals with concurrency.
//!
//! ```text
//!   writer (&mut Router)                          readers (Reader, Clone + Send)
//!   ---------------------                         ------------------------------
//!   announce / withdraw / apply / submit           snapshot() / lookup() / lookup_batch()
//!        |                                                  |
//!        v                                                  |  load (lock-free, no
//!   Rib4 + NextHopTable  (the truth)                        |  reference-count write in
//!        |  changed prefixes                                |  the common case)
//!        v                                                  v
//!   Updater (engine's) --- writes in place / rebuilds --> ArcSwap<Version> --> Version { generation, fib }
//!        ^                                                  |
//!        +---- Weak<Version> of retired generations <-------+  (freed when the last reader drops it)
//! ```
//!
//! # Address families
//!
//! The router is generic over the address it serves: `Router` (`u32`) and
//! `Router<u128>`, each serving the `dyn Fib<A>` engines of its family.
//! Engines with incremental updates for the family ([`crate::registry`]
//! names them) update in place; the others are rebuilt from the RIB for
//! every batch ([`crate::live::FullRebuild`]) and published whole.
//!
//! An IPv4-mapped address (`::ffff:a.b.c.d`) is looked up as IPv4
//! ([`crate::address_text::ipv4_mapped`]), so an IPv6 route inside
//! `::ffff:0:0/96` would never answer: `Router<u128>` rejects its
//! announcement ([`UpdateError::Ipv4Mapped`]), naming the IPv4 route to
//! announce instead. (A table's such routes are folded into its IPv4 ones
//! when it is loaded, [`crate::load::fold_ipv4_mapped`].)
//!
//! # Single writer, many readers
//!
//! [`Router`] owns the RIB, the [`NextHopTable`] and the engine's
//! [`Updater`]. Its update methods take `&mut self`: there is exactly one
//! writer (put the router behind a `Mutex` to share it between writer
//! threads). [`Reader`]s are cheap clones that any number of threads use at
//! once. A reader loads the current [`Version`] through an
//! [`arc_swap::ArcSwap`], which takes no lock and, in the common case, writes
//! no shared reference count; a writer never waits for readers either.
//!
//! Every applied batch is published as a new generation: the writer swaps a
//! new [`Version`] into the `ArcSwap` and keeps a `Weak` reference to the one
//! it replaced. A version (and, for engines that rebuild, the whole
//! structure it holds) is freed when the last reader drops it, never before.
//! Before each batch the router tells the updater the generation being
//! served and the oldest one a reader may still hold
//! ([`ApplyContext`]), from the `Weak` references of retired versions:
//! [`crate::live`] describes how in-place updaters use them to reuse space
//! safely. The Luleå paper argues that rebuilding at most once a second
//! suffices for engines that rebuild, which a time window
//! ([`Window::Time`]) gives.
//!
//! The protocol is model-checked with loom (`make test-loom`): the real
//! router, an in-place updater in miniature with a [`crate::live::Limbo`],
//! and two readers pinning, looking up and unpinning, in every interleaving
//! of up to three preemptions (`router/model.rs`). Under `--cfg loom` the
//! atomics, `ArcSwap` and `Arc` of the protocol (`live::sync`)
//! become loom's; the normal build is unchanged.
//!
//! # The default route
//!
//! An in-place engine keeps the default route out of its structure
//! ([`crate::live::WithDefault`]): the structure answers "no route" in the
//! gaps between the more specific routes, and its lookups answer the
//! default route's next hop there, a word that the router stores. So a
//! default route announced, changed or withdrawn under a full table costs
//! one store, not a rewrite of the gaps. The updater is handed the RIB
//! without its default route (taken out of the root for the call). A
//! lookup answers the default only if no store of the word came while it
//! searched the structure, else it looks up again. A batch that changes
//! the default route and other routes is written in three steps, so that
//! an address still answers as the RIB before or after the batch: first
//! the routes it announces (the structure then holds the RIB after the
//! batch with its withdrawn routes still in, which for every address
//! answers as before or as after), then the default's word, then the
//! routes it withdraws. Engines rebuilt per batch keep the default route in
//! the structure they build.
//!
//! # Atomic batches
//!
//! With an in-place engine a batch is atomic per address, not across
//! addresses: a lookup of many keys ([`Reader::lookup_batch`]) that runs
//! while a batch is written may answer some keys as before the batch and
//! others as after it, as a router's FIB does. A caller to whom a batch
//! must be one change (a route moved from one prefix to another, the
//! default route and a more specific one changed together) sets
//! [`Router::set_atomic_batches`]: before each batch the updater moves to
//! a copy of its structure that no reader sees ([`Updater::copy_for_batch`]),
//! writes the batch there, and the router publishes the copy whole, so
//! every lookup of a call, which loads one version, answers from one
//! generation. Each batch then costs one copy of the structure (its
//! footprint, counted in [`Published::bytes_written`]) besides its
//! writes, and the memory of two structures while readers hold the old
//! one. Engines rebuilt per batch are atomic either way.
//!
//! # Failed updates
//!
//! An update is rejected alone: it never takes the valid updates of its
//! batch with it. One whose next hop exceeds what the engine holds is
//! rejected before anything changes ([`UpdateError::NextHopOverflow`]),
//! as is an IPv6 route inside `::ffff:0:0/96` ([`UpdateError::Ipv4Mapped`]);
//! when the engine fails on a batch ([`UpdateError::Engine`]: a table
//! beyond its limits, or memory the system refuses to a copy of its
//! structure, [`BuildError::OutOfMemory`], atomic batches' copy included),
//! the serving FIB stays as it was, the router rolls the RIB back and
//! applies the batch's updates one at a time, so that only those the
//! engine cannot take are rejected. [`Published::rejected`] lists them.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::addr::{Address, Prefix};
use crate::address_text::ipv4_mapped_prefix;
use crate::error::BuildError;
use crate::fib::{BuildOptions, Fib};
use crate::live::sync::{Current, Hold};
use crate::live::{Applied, ApplyContext, Updater};
use crate::nexthop::{Label, NextHopTable};
use crate::registry;
use crate::rib::Rib;
pub use crate::update::Update;
use crate::NextHop;

mod aside;
#[cfg(all(test, loom))]
mod model;
#[cfg(test)]
mod out_of_memory;
mod versions;

use versions::Versions;

/// Why an update or a batch was rejected. Whatever the error, the serving
/// FIB and the RIB are as they were before. Every error names the update
/// by its position in the batch given to [`Router::apply`] ([`Self::index`]);
/// a caller that numbers updates otherwise (a trace's line, a C caller's
/// array holding both families) renumbers with [`Self::reason`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpdateError {
    /// The update's next hop is beyond what the engine holds.
    #[error("{}", self.named(format_args!("update {index}")))]
    NextHopOverflow {
        /// Position of the update in its batch.
        index: usize,
        /// The update, as text.
        update: String,
        /// The next-hop index it would get.
        next_hop: NextHop,
        /// The engine's limit.
        limit: NextHop,
        /// The engine.
        engine: String,
    },
    /// The update announces an IPv6 route inside `::ffff:0:0/96`, which no
    /// lookup reaches: a mapped address is looked up as IPv4.
    #[error("{}", self.named(format_args!("update {index}")))]
    Ipv4Mapped {
        /// Position of the update in its batch.
        index: usize,
        /// The update, as text.
        update: String,
        /// The IPv4 prefix it is written for.
        ipv4: Prefix<u32>,
    },
    /// The engine could not apply the update (applying a batch that it
    /// could not take whole, its updates are tried one at a time).
    #[error("{}", self.named(format_args!("update {index}")))]
    Engine {
        /// Position of the update in its batch.
        index: usize,
        /// The update, as text.
        update: String,
        /// The engine's error (boxed: it is large beside the others).
        error: Box<BuildError>,
    },
}

impl UpdateError {
    /// The update's position in its batch.
    pub fn index(&self) -> usize {
        match *self {
            UpdateError::NextHopOverflow { index, .. }
            | UpdateError::Ipv4Mapped { index, .. }
            | UpdateError::Engine { index, .. } => index,
        }
    }

    /// Why the update was rejected, without its position: what follows
    /// `update N (UPDATE): ` in the error's text.
    pub fn reason(&self) -> String {
        match self {
            UpdateError::NextHopOverflow { next_hop, limit, engine, .. } => {
                format!("next hop #{next_hop} exceeds the {limit} that {engine} holds; rejected")
            }
            UpdateError::Ipv4Mapped { ipv4, .. } => format!(
                "an IPv4-mapped prefix (inside ::ffff:0:0/96), which no lookup reaches: a mapped address is looked up \
                 as IPv4, so announce {ipv4} as an IPv4 route; rejected"
            ),
            UpdateError::Engine { error, .. } => format!("{error}; rejected, the serving FIB is unchanged by it"),
        }
    }

    /// The error's text with the update called `name` (`update 7 of the
    /// trace`) instead of `update INDEX`: for callers that number updates
    /// otherwise than the batch did.
    pub fn named(&self, name: impl fmt::Display) -> String {
        format!("{name} ({}): {}", self.update(), self.reason())
    }

    /// The update, as text.
    pub fn update(&self) -> &str {
        match self {
            UpdateError::NextHopOverflow { update, .. }
            | UpdateError::Ipv4Mapped { update, .. }
            | UpdateError::Engine { update, .. } => update,
        }
    }
}

/// When queued updates ([`Router::submit`]) are applied as one batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    /// Once this many updates are queued (1: every update on its own).
    Count(usize),
    /// Once this long has passed since the first queued update (checked at
    /// [`Router::submit`] and [`Router::poll`]).
    Time(Duration),
}

/// Rejects an update whose next hop `updater` cannot hold, or that
/// announces an IPv6 route inside `::ffff:0:0/96`. `new_labels`
/// holds the labels the batch interns for the first time; an accepted
/// update's new label joins them.
fn check<A: Address>(
    next_hops: &NextHopTable,
    updater: &dyn Updater<A>,
    index: usize,
    update: &Update<Prefix<A>>,
    new_labels: &mut HashSet<Label>,
) -> Result<(), UpdateError> {
    let Update::Announce { prefix, value: label } = *update else {
        return Ok(());
    };
    if let Some(ipv4) = ipv4_mapped_prefix(prefix) {
        return Err(UpdateError::Ipv4Mapped { index, update: update.to_string(), ipv4 });
    }
    let next_hop = match next_hops.get(label) {
        Some(next_hop) => next_hop,
        None => {
            let position = if new_labels.contains(&label) { new_labels.len() } else { new_labels.len() + 1 };
            next_hops.max_index().saturating_add(position as NextHop)
        }
    };
    let limit = updater.max_next_hop();
    if next_hop > limit {
        return Err(UpdateError::NextHopOverflow {
            index,
            update: update.to_string(),
            next_hop,
            limit,
            engine: updater.name().to_string(),
        });
    }
    if next_hops.get(label).is_none() {
        new_labels.insert(label);
    }
    Ok(())
}

/// A published FIB generation, as readers hold it.
pub struct Version<A: Address = u32> {
    generation: u64,
    fib: Arc<dyn Fib<A>>,
}

impl<A: Address> Version<A> {
    /// The generation number (0 for the initial build, +1 per batch).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The forwarding structure.
    pub fn fib(&self) -> &dyn Fib<A> {
        &*self.fib
    }
}

impl<A: Address> fmt::Debug for Version<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Version").field("generation", &self.generation).field("engine", &self.fib.name()).finish()
    }
}

/// A reader's hold on one generation: lookups through it all see that
/// generation (or, for in-place engines without atomic batches, per
/// address, that generation or a later one). Hold it for a batch of
/// lookups, not for long: the space it may be reading is not reused while
/// it lives.
pub struct Snapshot<A: Address = u32>(Hold<Version<A>>);

impl<A: Address> std::ops::Deref for Snapshot<A> {
    type Target = Version<A>;
    fn deref(&self) -> &Version<A> {
        &self.0
    }
}

/// A reader of the router's current FIB: cheap to clone, `Send + Sync`,
/// never blocks and is never blocked.
pub struct Reader<A: Address = u32> {
    current: Arc<Current<Version<A>>>,
}

impl<A: Address> Clone for Reader<A> {
    fn clone(&self) -> Self {
        Reader { current: self.current.clone() }
    }
}

impl<A: Address> Reader<A> {
    /// The generation being served now.
    pub fn snapshot(&self) -> Snapshot<A> {
        Snapshot(self.current.load())
    }

    /// Longest-prefix match in the current FIB (one snapshot per call: use
    /// [`Reader::lookup_batch`] for many keys).
    #[inline]
    pub fn lookup(&self, addr: A) -> NextHop {
        self.current.load().fib.lookup(addr)
    }

    /// Looks up every key in the current FIB; `out[i]` gets the next hop
    /// of `keys[i]`. Every answer is from one generation if the router
    /// makes atomic batches or rebuilds; otherwise each key's answer is as
    /// the RIB was at some moment of the call, and a batch written
    /// meanwhile may show for some keys and not yet for others (module
    /// docs, "Atomic batches").
    ///
    /// # Panics
    /// If `out` is shorter than `keys`.
    pub fn lookup_batch(&self, keys: &[A], out: &mut [NextHop]) {
        self.current.load().fib.lookup_batch(keys, out)
    }
}

/// What one published batch did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Published {
    /// The generation readers are served from now on.
    pub generation: u64,
    /// Updates in the batch.
    pub updates: usize,
    /// Prefixes whose route changed (updates that changed nothing do not
    /// count; a batch changing nothing publishes nothing).
    pub changed: usize,
    /// The engine rebuilt the structure instead of updating it in place.
    pub rebuilt: bool,
    /// The engine copied the structure into larger arrays.
    pub relocated: bool,
    /// Bytes of the lookup structure written.
    pub bytes_written: u64,
    /// The updates of the batch that were rejected, and why; the others
    /// were applied.
    pub rejected: Vec<UpdateError>,
}

impl Published {
    /// Adds what a later publish of the same batch did.
    fn merge(&mut self, later: Published) {
        self.generation = later.generation;
        self.changed += later.changed;
        self.rebuilt |= later.rebuilt;
        self.relocated |= later.relocated;
        self.bytes_written += later.bytes_written;
    }
}

/// Running totals of a router.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RouterStats {
    /// Updates applied (in accepted batches).
    pub updates: u64,
    /// Updates that changed a route.
    pub changes: u64,
    /// Generations published.
    pub publishes: u64,
    /// Publishes that came from a full rebuild.
    pub full_rebuilds: u64,
    /// Publishes of a structure copied into larger arrays.
    pub relocations: u64,
    /// Bytes of lookup structures written.
    pub bytes_written: u64,
    /// Updates rejected.
    pub rejected: u64,
}

/// The writer's handle on a live FIB (module docs: single writer, many
/// readers), for IPv4 (`Router`, `A = u32`) or IPv6 (`Router<u128>`).
pub struct Router<A: Address = u32> {
    rib: Rib<A>,
    next_hops: NextHopTable,
    updater: Box<dyn Updater<A>>,
    versions: Versions<Version<A>>,
    generation: u64,
    stats: RouterStats,
    window: Window,
    queue: Vec<Update<Prefix<A>>>,
    queued_since: Option<Instant>,
    /// Labels the queue interns for the first time.
    queued_labels: HashSet<Label>,
    /// Scratch of a batch: prefixes changed, and how to undo the changes.
    changed: Vec<Prefix<A>>,
    undo: Vec<(Prefix<A>, Option<NextHop>)>,
    /// The default route's next hop, kept aside from the structure by the
    /// updater (module docs, "The default route"); `None` where the
    /// updater keeps it in the structure.
    aside: Option<NextHop>,
    /// Scratch of a batch with the default aside: the other prefixes it
    /// announces, and those it withdraws with their next hop before it.
    announced: Vec<Prefix<A>>,
    withdrawn: Vec<(Prefix<A>, NextHop)>,
    /// Batches are written into a copy published whole (module docs).
    atomic: bool,
}

impl<A: Address> Router<A> {
    /// A router serving `engine` built from `rib`, whose next hops
    /// `next_hops` interned; submitted updates are batched by `window`.
    pub fn new(engine: &str, rib: Rib<A>, next_hops: NextHopTable, window: Window) -> Result<Self, BuildError> {
        let options = BuildOptions::new(next_hops.max_index());
        let updater = registry::updater(engine, &rib, &options)?;
        Ok(Self::with_updater(updater, rib, next_hops, window))
    }

    /// A router serving what `updater` (already built from `rib`) keeps up
    /// to date.
    pub fn with_updater(
        mut updater: Box<dyn Updater<A>>,
        mut rib: Rib<A>,
        next_hops: NextHopTable,
        window: Window,
    ) -> Self {
        let aside = aside::set_default_aside(&mut *updater, &mut rib, next_hops.max_index());
        let version = Version { generation: 0, fib: updater.fib() };
        Router {
            rib,
            next_hops,
            updater,
            versions: Versions::new(version),
            generation: 0,
            stats: RouterStats::default(),
            window,
            queue: Vec::new(),
            queued_since: None,
            queued_labels: HashSet::new(),
            changed: Vec::new(),
            undo: Vec::new(),
            aside,
            announced: Vec::new(),
            withdrawn: Vec::new(),
            atomic: false,
        }
    }

    /// Makes every batch from now on atomic for readers (`true`: written
    /// into a copy of the structure published whole), or atomic per
    /// address only (`false`, the default: written in place). See the
    /// module docs, "Atomic batches", for what each costs.
    pub fn set_atomic_batches(&mut self, atomic: bool) {
        self.atomic = atomic;
    }

    /// Whether batches are atomic for readers: set so, or the engine
    /// rebuilds for every batch.
    pub fn atomic_batches(&self) -> bool {
        self.atomic || !self.updater.incremental()
    }

    /// A new reader of this router's FIB.
    pub fn reader(&self) -> Reader<A> {
        Reader { current: self.versions.current().clone() }
    }

    /// The RIB as of the last published batch.
    pub fn rib(&self) -> &Rib<A> {
        &self.rib
    }

    /// The next-hop table.
    pub fn next_hops(&self) -> &NextHopTable {
        &self.next_hops
    }

    /// Running totals.
    pub fn stats(&self) -> RouterStats {
        self.stats
    }

    /// The engine's name.
    pub fn engine(&self) -> &str {
        self.updater.name()
    }

    /// Whether the engine applies batches in place.
    pub fn incremental(&self) -> bool {
        self.updater.incremental()
    }

    /// The generation being served.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Replaced generations that some reader may still hold.
    pub fn retired_generations(&self) -> usize {
        self.versions.retired()
    }

    /// Announces (or replaces) one route and publishes it at once.
    pub fn announce(&mut self, prefix: Prefix<A>, label: Label) -> Result<Published, UpdateError> {
        self.apply(&[Update::Announce { prefix, value: label }])
    }

    /// Withdraws one route and publishes it at once.
    pub fn withdraw(&mut self, prefix: Prefix<A>) -> Result<Published, UpdateError> {
        self.apply(&[Update::Withdraw { prefix }])
    }

    /// Applies `batch` to the RIB and publishes it as one generation. An
    /// update that cannot be applied is rejected alone and listed in
    /// [`Published::rejected`] (see the [module docs](self)); when the engine
    /// fails on the batch, its updates are published one at a time.
    ///
    /// # Errors
    /// When no update of a non-empty batch could be applied: the first
    /// one's reason. Nothing changed then.
    pub fn apply(&mut self, batch: &[Update<Prefix<A>>]) -> Result<Published, UpdateError> {
        let mut new_labels = HashSet::new();
        let (mut rejected, mut refused) = (Vec::new(), Vec::new());
        for (index, update) in batch.iter().enumerate() {
            if let Err(error) = check(&self.next_hops, &*self.updater, index, update, &mut new_labels) {
                rejected.push(error);
                refused.push(index);
            }
        }
        // No copy of the batch unless an update was refused.
        let accepted: Cow<'_, [Update<Prefix<A>>]> = if refused.is_empty() {
            Cow::Borrowed(batch)
        } else {
            let kept = batch.iter().enumerate().filter(|(index, _)| refused.binary_search(index).is_err());
            Cow::Owned(kept.map(|(_, &update)| update).collect())
        };
        // The accepted updates' positions in `batch`.
        let positions = || (0..batch.len()).filter(|index| refused.binary_search(index).is_err());
        let engine_error = |index: usize, error: BuildError| UpdateError::Engine {
            index,
            update: batch[index].to_string(),
            error: Box::new(error),
        };
        let mut published = match self.apply_checked(&accepted) {
            Ok(published) => published,
            Err(error) if accepted.len() == 1 => {
                rejected.extend(positions().map(|index| engine_error(index, error.clone())));
                Published { generation: self.generation, ..Published::default() }
            }
            Err(_) => {
                // Which update the engine could not take is unknown: each
                // alone, so that the others still land.
                let mut published = Published { generation: self.generation, ..Published::default() };
                for (index, &update) in positions().zip(accepted.iter()) {
                    match self.apply_checked(&[update]) {
                        Ok(alone) => published.merge(alone),
                        Err(error) => rejected.push(engine_error(index, error)),
                    }
                }
                published
            }
        };
        rejected.sort_by_key(UpdateError::index);
        self.stats.rejected += rejected.len() as u64;
        if !batch.is_empty() && rejected.len() == batch.len() {
            return Err(rejected.swap_remove(0));
        }
        published.updates = batch.len();
        published.rejected = rejected;
        Ok(published)
    }

    /// Applies `batch`, whose updates passed [`check`], all or nothing: on
    /// error nothing changed.
    fn apply_checked(&mut self, batch: &[Update<Prefix<A>>]) -> Result<Published, BuildError> {
        self.changed.clear();
        self.undo.clear();
        for update in batch {
            let (prefix, old) = match *update {
                Update::Announce { prefix, value: label } => {
                    let next_hop = self.next_hops.intern(label);
                    let old = self.rib.insert(prefix, next_hop);
                    if old == Some(next_hop) {
                        continue;
                    }
                    (prefix, old)
                }
                Update::Withdraw { prefix } => match self.rib.remove(prefix) {
                    None => continue,
                    old => (prefix, old),
                },
            };
            self.changed.push(prefix);
            self.undo.push((prefix, old));
        }
        self.stats.updates += batch.len() as u64;
        if self.changed.is_empty() {
            return Ok(Published { generation: self.generation, updates: batch.len(), ..Published::default() });
        }
        let context = ApplyContext {
            published: self.generation,
            oldest_held: self.oldest_held(),
            max_next_hop: self.next_hops.max_index(),
        };
        let copied = if self.atomic { self.updater.copy_for_batch() } else { Ok(0) };
        // A copy the system refused changed nothing: the batch fails as one
        // the engine refuses does.
        let outcome = copied.and_then(|copied| {
            let applied = match self.aside {
                None => self.updater.apply(&self.rib, &self.changed, context),
                Some(default) => self.apply_aside(default, context),
            }?;
            Ok(Applied { bytes_written: applied.bytes_written + copied, ..applied })
        });
        let applied = match outcome {
            Ok(applied) => applied,
            Err(error) => {
                for &(prefix, old) in self.undo.iter().rev() {
                    match old {
                        Some(next_hop) => self.rib.insert(prefix, next_hop),
                        None => self.rib.remove(prefix),
                    };
                }
                self.stats.updates -= batch.len() as u64;
                return Err(error);
            }
        };
        self.publish();
        self.stats.changes += self.changed.len() as u64;
        self.stats.bytes_written += applied.bytes_written;
        self.stats.full_rebuilds += u64::from(applied.rebuilt);
        self.stats.relocations += u64::from(applied.relocated);
        Ok(Published {
            generation: self.generation,
            updates: batch.len(),
            changed: self.changed.len(),
            rebuilt: applied.rebuilt,
            relocated: applied.relocated,
            bytes_written: applied.bytes_written,
            rejected: Vec::new(),
        })
    }

    /// Queues `update`; when the window closes, applies the queue as one
    /// batch and returns what was published. An update that would fail
    /// ([`UpdateError::NextHopOverflow`], [`UpdateError::Ipv4Mapped`]) is
    /// rejected here, alone.
    pub fn submit(&mut self, update: Update<Prefix<A>>) -> Result<Option<Published>, UpdateError> {
        let index = self.queue.len();
        if let Err(error) = check(&self.next_hops, &*self.updater, index, &update, &mut self.queued_labels) {
            self.stats.rejected += 1;
            return Err(error);
        }
        self.queue.push(update);
        self.queued_since.get_or_insert_with(Instant::now);
        self.poll()
    }

    /// Applies the queue if the window has closed.
    pub fn poll(&mut self) -> Result<Option<Published>, UpdateError> {
        let closed = match self.window {
            Window::Count(count) => self.queue.len() >= count.max(1),
            Window::Time(window) => self.queued_since.is_some_and(|since| since.elapsed() >= window),
        };
        if closed {
            self.flush()
        } else {
            Ok(None)
        }
    }

    /// Applies whatever is queued now, as one batch ([`Router::apply`]).
    pub fn flush(&mut self) -> Result<Option<Published>, UpdateError> {
        if self.queue.is_empty() {
            return Ok(None);
        }
        let queue = std::mem::take(&mut self.queue);
        self.queued_since = None;
        self.queued_labels.clear();
        let outcome = self.apply(&queue);
        self.queue = queue;
        self.queue.clear();
        outcome.map(Some)
    }

    /// Updates queued and not yet applied.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// The oldest generation a reader may still hold.
    fn oldest_held(&mut self) -> u64 {
        self.versions.oldest_held(self.generation)
    }

    /// Swaps in the next generation and retires the one it replaces.
    fn publish(&mut self) {
        let version = Version { generation: self.generation + 1, fib: self.updater.fib() };
        self.versions.publish(self.generation, version);
        self.generation += 1;
        self.stats.publishes += 1;
    }
}

impl<A: Address> fmt::Debug for Router<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Router")
            .field("engine", &self.updater.name())
            .field("generation", &self.generation)
            .field("prefixes", &self.rib.len())
            .field("stats", &self.stats)
            .finish()
    }
}

/// Unit-test support: the published FIB answers as the RIB at both ends of
/// every range.
#[cfg(test)]
pub(crate) fn assert_matches_rib(router: &Router) {
    let snapshot = router.reader().snapshot();
    for range in router.rib().ranges(0, u32::MAX) {
        for addr in [range.first, range.last] {
            assert_eq!(snapshot.fib().lookup(addr), range.next_hop, "at {addr:#010x}");
        }
    }
}
