//! Loading routing tables: text formats, compressed files, the synthetic
//! default table.

use std::fmt;
use std::path::PathBuf;

use crate::nexthop::{Mapping, NextHopTable};
use crate::rib::{Rib4, Rib6};

/// A routing table as loaded: IPv4 and IPv6 RIBs sharing one next-hop table.
#[derive(Clone, Debug)]
pub struct RouteTable {
    /// Where the table came from (file name or generator description).
    pub name: String,
    /// IPv4 routes.
    pub v4: Rib4,
    /// IPv6 routes.
    pub v6: Rib6,
    /// The interned route values.
    pub next_hops: NextHopTable,
    /// Non-fatal findings (duplicates, overlaps), each naming its line.
    pub warnings: Vec<String>,
}

impl RouteTable {
    /// An empty table.
    pub fn new(name: impl Into<String>, mapping: Mapping) -> Self {
        RouteTable {
            name: name.into(),
            v4: Rib4::new(),
            v6: Rib6::new(),
            next_hops: NextHopTable::new(mapping),
            warnings: Vec::new(),
        }
    }
}

/// Where in a file a problem is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Position {
    /// The file as a whole.
    File,
    /// A line (1-based).
    Line(usize),
    /// A byte offset (0-based) in the decompressed data.
    Offset(u64),
}

/// A loading error: the file, the position and the problem.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct LoadError {
    /// The file's path as given.
    pub file: PathBuf,
    /// Where in the file.
    pub position: Position,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Position::File => write!(f, "{}: {}", self.file.display(), self.message),
            Position::Line(line) => write!(f, "{}:{}: {}", self.file.display(), line, self.message),
            Position::Offset(offset) => {
                write!(f, "{}: at byte {}: {}", self.file.display(), offset, self.message)
            }
        }
    }
}

/// How to load a table.
#[derive(Clone, Copy, Debug, Default)]
pub struct LoadOptions {
    /// How route values become next-hop indexes.
    pub mapping: Mapping,
    /// Whether warnings (duplicates, overlaps) are errors.
    pub strict: bool,
}
