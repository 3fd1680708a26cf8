//! Typed errors of building an engine or applying a batch to one.
//!
//! | variant | when | what it carries |
//! |---|---|---|
//! | [`BuildError::Unknown`] | no engine of that name serves the family | [`UnknownEngine`]: the name, the family, the valid names |
//! | [`BuildError::Limit`] | a figure of the table exceeds a field of the structure | [`LimitExceeded`]: the engine, which [`Limit`], the field, the value, the largest it holds, an engine without the limit |
//! | [`BuildError::Route`] | a route the engine cannot take as given | the engine, the route, the problem |
//! | [`BuildError::OutOfMemory`] | the system refused the memory of an array that grows with the table (a build's, or an updater's larger copy) | the engine, the array, its bytes |

use std::fmt;

use crate::addr::Family;
pub use crate::base::quote::shorten;

/// Why an engine could not be built from a table, or could not apply a
/// batch of updates.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// No engine of that name (for that family).
    #[error(transparent)]
    Unknown(#[from] UnknownEngine),
    /// The table exceeds a structural limit of the engine.
    #[error(transparent)]
    Limit(#[from] LimitExceeded),
    /// A route the engine cannot take as given.
    #[error("{engine}: {route}: {problem}")]
    Route {
        /// The engine that refused.
        engine: String,
        /// The route, as text.
        route: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// The system refused the memory of one of the structure's arrays (an
    /// address-space or memory limit; where memory is overcommitted, a
    /// build that exhausts it may instead be ended by the kernel).
    #[error("{engine}: out of memory: its {array} needs {bytes} bytes, which the system refused")]
    OutOfMemory {
        /// The engine.
        engine: String,
        /// Which of its arrays.
        array: &'static str,
        /// The bytes asked for.
        bytes: u64,
    },
}

impl BuildError {
    /// Engine `engine` could not allocate its array `array`.
    pub fn out_of_memory(engine: &str, array: &'static str, error: crate::mem::AllocError) -> Self {
        BuildError::OutOfMemory { engine: engine.to_string(), array, bytes: error.bytes as u64 }
    }

    /// The same error, refused by `engine` (a structure built inside
    /// another engine's, as `poptrie16x12` builds a `poptrie16`).
    pub fn of(self, engine: &str) -> Self {
        match self {
            BuildError::Unknown(unknown) => BuildError::Unknown(unknown),
            BuildError::Limit(limit) => BuildError::Limit(limit.of(engine)),
            BuildError::Route { route, problem, .. } => {
                BuildError::Route { engine: engine.to_string(), route, problem }
            }
            BuildError::OutOfMemory { array, bytes, .. } => {
                BuildError::OutOfMemory { engine: engine.to_string(), array, bytes }
            }
        }
    }

    /// The engine that refused, or the name that matched none.
    pub fn engine(&self) -> &str {
        match self {
            BuildError::Unknown(unknown) => &unknown.name,
            BuildError::Limit(limit) => &limit.engine,
            BuildError::Route { engine, .. } | BuildError::OutOfMemory { engine, .. } => engine,
        }
    }
}

/// Which figure of a table ran into an engine's limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Limit {
    /// A next-hop index.
    NextHop,
    /// Entries of a range table (DXR).
    RangeEntries,
    /// Fragments of one chunk (DXR's header entry counts them).
    ChunkFragments,
    /// Nodes or leaves of a trie (Poptrie's 32-bit indexes).
    Nodes,
    /// An index stored in a direct entry (Poptrie's 31-bit direct array).
    DirectIndex,
    /// Chunks of one level (Luleå's pointer index).
    Chunks,
    /// A base index (Luleå's base index width).
    BaseIndex,
    /// Text bytes or list items of one field of a table's records.
    RecordValues,
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Limit::NextHop => "next hop",
            Limit::RangeEntries => "range table size",
            Limit::ChunkFragments => "chunk of fragments",
            Limit::Nodes => "node and leaf count",
            Limit::DirectIndex => "node index",
            Limit::Chunks => "chunk count",
            Limit::BaseIndex => "base index",
            Limit::RecordValues => "text bytes or list items of a field",
        })
    }
}

/// A figure of the table exceeds what a field of the engine's structure
/// holds: `"{engine}: {limit} {value} exceeds {field} (at most {max});
/// {instead} has no such limit"`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{engine}: {limit} {value} exceeds {field} (at most {max}); {instead} has no such limit")]
pub struct LimitExceeded {
    /// The engine that refused (its registry name).
    pub engine: String,
    /// Which figure.
    pub limit: Limit,
    /// The field of the structure, in the engine's words (e.g. `the 22-bit
    /// next-hop field of a direct entry`).
    pub field: String,
    /// The table's figure.
    pub value: u64,
    /// The largest figure the field holds.
    pub max: u64,
    /// An engine that takes the table (e.g. `the radix engine`).
    pub instead: &'static str,
}

impl LimitExceeded {
    /// The limit `limit` of `engine`'s `field`, exceeded by `value`; the
    /// radix engine, which has no limits, takes the table instead.
    pub fn new(engine: impl Into<String>, limit: Limit, field: impl Into<String>, value: u64, max: u64) -> Self {
        LimitExceeded { engine: engine.into(), limit, field: field.into(), value, max, instead: "the radix engine" }
    }

    /// The limit of a field exceeded inside a builder that does not know
    /// the engine's registry name; the caller names it with
    /// [`LimitExceeded::of`].
    pub fn unnamed(limit: Limit, field: impl Into<String>, value: u64, max: u64) -> Self {
        Self::new(String::new(), limit, field, value, max)
    }

    /// The same, refused by `engine`.
    pub fn of(self, engine: impl Into<String>) -> Self {
        LimitExceeded { engine: engine.into(), ..self }
    }

    /// The same, with another engine named as taking the table.
    pub fn instead(self, instead: &'static str) -> Self {
        LimitExceeded { instead, ..self }
    }
}

/// A name no registered engine of the family has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct UnknownEngine {
    /// The name asked for.
    pub name: String,
    /// The family asked for (`None`: any).
    pub family: Option<Family>,
    /// The names valid for that family, in registry order.
    pub known: Vec<&'static str>,
    /// When an engine of that name exists in another family: the families
    /// it serves, and the crate that registered it if it is a peer.
    pub other_family: Option<(Vec<Family>, Option<&'static str>)>,
}

impl fmt::Display for UnknownEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = shorten(&self.name);
        let known = self.known.join(", ");
        // IPv4 is every command's default family: only IPv6 is named.
        let family = if self.family == Some(Family::Ipv6) { "IPv6 " } else { "" };
        match &self.other_family {
            Some((serves, peer)) => {
                let serves = serves.iter().map(|family| family.to_string()).collect::<Vec<_>>().join(" and ");
                match peer {
                    Some(source) => {
                        write!(f, "unknown {family}engine: {name:?} is a third-party peer; {source} is {serves} only")?
                    }
                    None => write!(f, "unknown {family}engine: {name:?} is {serves} only")?,
                }
                let asked = self.family.map(|family| format!("{family} ")).unwrap_or_default();
                write!(f, " ({asked}engines: {known})")
            }
            None => write!(f, "unknown {family}engine {name:?} (known: {known})"),
        }
    }
}
