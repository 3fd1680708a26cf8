//! What every source shares with its handle: the labels of its routers'
//! next-hop indexes, its journal, and the one way a batch is applied.

use std::collections::VecDeque;
use std::sync::{Mutex, RwLock};

use fibkit::addr::IpPrefix;
use fibkit::nexthop::Label;
use fibkit::router::{Router, Update, UpdateError};
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
/// rejects, and brings `labels` up to date; appends the updates it applied
/// to `changes` when a follower takes them (a follower holds what the FIB
/// holds). Returns the updates applied and rejected.
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
    // The positions of the rejected updates, in order.
    let rejected: Vec<usize> = match router.apply(batch) {
        Ok(published) => {
            for error in &published.rejected {
                journal.log(format!("the {} FIB rejected {error}", A::FAMILY));
            }
            published.rejected.iter().map(UpdateError::index).collect()
        }
        Err(error) => {
            journal.log(format!("the {} FIB rejected the batch: {error}", A::FAMILY));
            (0..batch.len()).collect()
        }
    };
    if let Some(changes) = changes {
        let applied = batch.iter().enumerate().filter(|(index, _)| rejected.binary_search(index).is_err());
        changes.extend(applied.map(|(_, update)| match *update {
            Update::Announce { prefix, value } => Update::Announce { prefix: prefix.into(), value },
            Update::Withdraw { prefix } => Update::Withdraw { prefix: prefix.into() },
        }));
    }
    labels.sync(router);
    ((batch.len() - rejected.len()) as u64, rejected.len() as u64)
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

#[cfg(test)]
mod tests {
    use fibkit::nexthop::{Mapping, NextHopTable};
    use fibkit::rib::Rib;
    use fibkit::router::Window;

    use super::*;

    #[test]
    fn a_follower_gets_the_updates_the_fib_took_and_the_journal_the_others() {
        let mut router =
            Router::<u128>::new("poptrie16", Rib::new(), NextHopTable::new(Mapping::Distinct), Window::Count(1))
                .unwrap();
        let (labels, journal) = (Labels::new(), Journal::new(false));
        let native: Prefix<u128> = "2001:db8::/32".parse().unwrap();
        let mapped: Prefix<u128> = "::ffff:10.0.0.0/104".parse().unwrap();
        let batch = [
            Update::Announce { prefix: mapped, value: Label::Number(1) },
            Update::Announce { prefix: native, value: Label::Number(2) },
        ];
        let mut changes = Some(Vec::new());
        assert_eq!(apply(&mut router, &batch, &labels, &journal, &mut changes), (1, 1));
        assert_eq!(changes.unwrap(), [Update::Announce { prefix: IpPrefix::V6(native), value: Label::Number(2) }]);
        let lines = journal.lines();
        assert!(lines.len() == 1 && lines[0].contains("rejected update 0 (announce ::ffff:10.0.0.0/104"), "{lines:?}");
        assert_eq!(labels.get::<u128>(1), Some(Label::Number(2)));
        // A batch rejected whole hands nothing on.
        let mut changes = Some(Vec::new());
        assert_eq!(apply(&mut router, &batch[..1], &labels, &journal, &mut changes), (0, 1));
        assert_eq!(changes.unwrap(), []);
    }
}
