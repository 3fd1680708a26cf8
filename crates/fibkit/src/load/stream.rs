//! The update stream's types, whatever its source (text or MRT, read in
//! [`super::updates`] and [`super::mrt`]): [`Timestamp`], [`TimedUpdate`],
//! and [`UpdateStream`], which replays onto a table.

use std::collections::HashMap;
use std::fmt;

use super::peer::Peer;
use super::RouteTable;
use crate::addr::IpPrefix;
use crate::update::Update;

/// When an update happened: seconds since the Unix epoch and microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Timestamp {
    /// Whole seconds since 1970-01-01 00:00 UTC.
    pub seconds: u64,
    /// Microseconds within the second (0 when the source has none).
    pub micros: u32,
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.micros == 0 {
            write!(f, "{}", self.seconds)
        } else {
            write!(f, "{}.{:06}", self.seconds, self.micros)
        }
    }
}

/// An update with the time it was seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimedUpdate {
    /// When the update was received (MRT) or logged (text).
    pub time: Timestamp,
    /// What changed.
    pub update: Update,
}

/// A stream of updates in the order they happened.
#[derive(Clone, Debug, Default)]
pub struct UpdateStream {
    /// Where the stream came from (the file's name).
    pub name: String,
    /// The updates, in file order.
    pub updates: Vec<TimedUpdate>,
    /// For an MRT stream, the peer whose updates these are.
    pub peer: Option<Peer>,
    /// Non-fatal findings (truncated data, skipped records), each naming
    /// its line or byte offset.
    pub warnings: Vec<String>,
}

impl UpdateStream {
    /// Number of announcements.
    pub fn announces(&self) -> usize {
        self.updates.iter().filter(|timed| matches!(timed.update, Update::Announce { .. })).count()
    }

    /// Number of withdrawals.
    pub fn withdraws(&self) -> usize {
        self.updates.len() - self.announces()
    }

    /// Replays the stream onto `table` in order. Values are interned in
    /// order of first appearance among the routes that survive, so a value
    /// announced and then replaced or withdrawn is not counted as a next hop
    /// (as with a repeated line in a text table).
    pub fn apply_to(&self, table: &mut RouteTable) {
        // The announcement (by index) each prefix ends up with.
        let mut surviving: HashMap<IpPrefix, usize> = HashMap::new();
        for (index, timed) in self.updates.iter().enumerate() {
            match timed.update {
                Update::Announce { prefix, .. } => surviving.insert(prefix, index),
                Update::Withdraw { prefix } => surviving.remove(&prefix),
            };
        }
        let mut kept: Vec<usize> = surviving.into_values().collect();
        kept.sort_unstable();
        for index in kept {
            if let Update::Announce { prefix, value } = self.updates[index].update {
                let hop = table.next_hops.intern(value);
                match prefix {
                    IpPrefix::V4(prefix) => table.v4.insert(prefix, hop),
                    IpPrefix::V6(prefix) => table.v6.insert(prefix, hop),
                };
            }
        }
    }
}
