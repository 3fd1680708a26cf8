//! What every source shares with its handle: the labels of its routers'
//! next-hop indexes, its journal, and the one way a batch is applied.

use std::collections::VecDeque;
use std::sync::{Mutex, RwLock};

use fibkit::addr::IpPrefix;
use fibkit::nexthop::Label;
use fibkit::router::{Router, Update};
use fibkit::{Address, Family, NextHop, Prefix};

/// Where a source sends every change of its FIBs as it is published: one
/// `Vec` a batch (IPv4 then IPv6), for a follower (`fibkit follow`, `fibkit
/// serve`'s copy of the routes).
pub type Changes = std::sync::mpsc::Sender<Vec<Update<IpPrefix>>>;

/// Lines a journal keeps.
const JOURNAL_LINES: usize = 10_000;

/// A source's log: its last 10,000 lines, also written to standard error
/// when asked.
pub(crate) struct Journal {
    lines: Mutex<VecDeque<String>>,
    echo: bool,
}

impl Journal {
    pub(crate) fn new(echo: bool) -> Self {
        Journal { lines: Mutex::new(VecDeque::new()), echo }
    }

    pub(crate) fn log(&self, line: String) {
        if self.echo {
            eprintln!("{line}");
        }
        let mut lines = self.lines.lock().expect("journal lock");
        if lines.len() == JOURNAL_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The lines kept, oldest first.
    pub(crate) fn lines(&self) -> Vec<String> {
        self.lines.lock().expect("journal lock").iter().cloned().collect()
    }
}

/// The label of each next-hop index of the IPv4 and the IPv6 router, for
/// readers on other threads (a router's table of them lives with its one
/// writer; indexes are only ever added).
pub(crate) struct Labels([RwLock<Vec<Label>>; 2]);

impl Labels {
    pub(crate) fn new() -> Self {
        Labels([RwLock::new(Vec::new()), RwLock::new(Vec::new())])
    }

    fn of<A: Address>(&self) -> &RwLock<Vec<Label>> {
        match A::FAMILY {
            Family::Ipv4 => &self.0[0],
            Family::Ipv6 => &self.0[1],
        }
    }

    /// Brings family `A`'s labels up to `router`'s table of them (its
    /// writer's thread; before the first batch too, for a router that
    /// starts with routes).
    pub(crate) fn sync<A: Address>(&self, router: &Router<A>) {
        let table = router.next_hops();
        let mut known = self.of::<A>().write().expect("labels lock");
        while known.len() < table.len() {
            match table.label(known.len() as NextHop + 1) {
                Some(label) => known.push(label),
                None => break,
            }
        }
    }

    /// The value that next-hop index `hop` of family `A` stands for.
    pub(crate) fn get<A: Address>(&self, hop: NextHop) -> Option<Label> {
        let labels = self.of::<A>().read().expect("labels lock");
        hop.checked_sub(1).and_then(|index| labels.get(index as usize).copied())
    }
}

/// Applies `batch` to `router` (its writer's thread), logs what it
/// rejects, and brings `labels` up to date; appends the batch to `changes`
/// when a follower takes them. Returns the updates applied and rejected.
pub(crate) fn apply<A: Address>(
    router: &mut Router<A>,
    batch: &[Update<Prefix<A>>],
    labels: &Labels,
    journal: &Journal,
    changes: &mut Option<Vec<Update<IpPrefix>>>,
) -> (u64, u64) {
    if batch.is_empty() {
        return (0, 0);
    }
    if let Some(changes) = changes {
        changes.extend(batch.iter().map(|update| match *update {
            Update::Announce { prefix, value } => Update::Announce { prefix: prefix.into(), value },
            Update::Withdraw { prefix } => Update::Withdraw { prefix: prefix.into() },
        }));
    }
    let rejected = match router.apply(batch) {
        Ok(published) => {
            for error in &published.rejected {
                journal.log(format!("the {} FIB rejected {error}", A::FAMILY));
            }
            published.rejected.len()
        }
        Err(error) => {
            journal.log(format!("the {} FIB rejected the batch: {error}", A::FAMILY));
            batch.len()
        }
    };
    labels.sync(router);
    ((batch.len() - rejected) as u64, rejected as u64)
}

/// Sends a batch's `changes` to the follower, if any; a follower that went
/// away stops getting them.
pub(crate) fn send(follower: &mut Option<Changes>, changes: Option<Vec<Update<IpPrefix>>>) {
    if let (Some(sender), Some(changes)) = (follower.as_ref(), changes.filter(|changes| !changes.is_empty())) {
        if sender.send(changes).is_err() {
            *follower = None;
        }
    }
}
