//! The engine trait and the registry of engines.
//!
//! Every forwarding structure (DXR, the RIB's own trie, and the engines of
//! later modules) implements [`Fib4`]; the CLI, benchmarks and tests reach
//! all of them through [`build4`] by name, so a new engine joins `stat`,
//! `verify` and `bench` by adding one line to [`ENGINES`].
//!
//! Engines are frozen structures: every lookup takes `&self` and reads plain
//! arrays. Building happens in [`EngineSpec::build`]; publishing a new FIB to
//! concurrent readers is not an engine's business.

use std::fmt;

use crate::rib::{Rib4, Rib6};
use crate::workload::{self, Workload, Workload6};
use crate::NextHop;

/// One figure of an engine's statistics report.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum Figure {
    /// A count or a size.
    Count(u64),
    /// A share, a ratio or a time.
    Real(f64),
    /// A name or a description.
    Text(String),
}

impl fmt::Display for Figure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Figure::Count(value) => write!(f, "{value}"),
            Figure::Real(value) => write!(f, "{value:.4}"),
            Figure::Text(value) => write!(f, "{value}"),
        }
    }
}

/// An engine's statistics: named figures in a stable order, plus the
/// human-readable report in the style of the engine's authors.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// `(key, figure)` pairs; keys are snake_case and stable (JSON output).
    pub figures: Vec<(String, Figure)>,
    /// The report as its authors print it (e.g. DXR's `rt.stat`).
    pub report: String,
}

impl Stats {
    /// Appends a count.
    pub fn count(&mut self, key: &str, value: u64) -> &mut Self {
        self.figures.push((key.to_string(), Figure::Count(value)));
        self
    }

    /// Appends a real number.
    pub fn real(&mut self, key: &str, value: f64) -> &mut Self {
        self.figures.push((key.to_string(), Figure::Real(value)));
        self
    }

    /// Appends a text.
    pub fn text(&mut self, key: &str, value: impl Into<String>) -> &mut Self {
        self.figures.push((key.to_string(), Figure::Text(value.into())));
        self
    }

    /// The figure stored under `key`.
    pub fn get(&self, key: &str) -> Option<&Figure> {
        self.figures.iter().find(|(name, _)| name == key).map(|(_, figure)| figure)
    }
}

/// A compiled IPv4 forwarding structure.
pub trait Fib4: Send + Sync {
    /// The engine's registry name with its parameters (e.g. `d16r`).
    fn name(&self) -> &str;

    /// Longest-prefix match for `addr`: its next hop, or [`crate::NO_ROUTE`].
    fn lookup(&self, addr: u32) -> NextHop;

    /// Looks up every key; `out[i]` gets the next hop of `keys[i]`.
    ///
    /// # Panics
    /// If `out` is shorter than `keys`.
    fn lookup_batch(&self, keys: &[u32], out: &mut [NextHop]) {
        assert!(out.len() >= keys.len(), "output shorter than keys");
        for (slot, &key) in out.iter_mut().zip(keys) {
            *slot = self.lookup(key);
        }
    }

    /// Bytes of the lookup structure (what a lookup can touch).
    fn footprint(&self) -> usize;

    /// The engine's statistics report.
    fn stats(&self) -> Stats;

    /// Runs a benchmark workload of `lookups` lookups and returns the
    /// checksum of the results. The loop is compiled for each engine type
    /// (provided methods are monomorphised), so `lookup` inlines into it.
    fn run_workload(&self, workload: &Workload, lookups: u64) -> u64 {
        workload::run(self, workload, lookups)
    }
}

/// A compiled IPv6 forwarding structure (the IPv6 twin of [`Fib4`]).
pub trait Fib6: Send + Sync {
    /// The engine's registry name with its parameters (e.g. `poptrie18`).
    fn name(&self) -> &str;

    /// Longest-prefix match for `addr`: its next hop, or [`crate::NO_ROUTE`].
    fn lookup(&self, addr: u128) -> NextHop;

    /// Looks up every key; `out[i]` gets the next hop of `keys[i]`.
    ///
    /// # Panics
    /// If `out` is shorter than `keys`.
    fn lookup_batch(&self, keys: &[u128], out: &mut [NextHop]) {
        assert!(out.len() >= keys.len(), "output shorter than keys");
        for (slot, &key) in out.iter_mut().zip(keys) {
            *slot = self.lookup(key);
        }
    }

    /// Bytes of the lookup structure.
    fn footprint(&self) -> usize;

    /// The engine's statistics report.
    fn stats(&self) -> Stats;

    /// Runs an IPv6 benchmark workload of `lookups` lookups and returns the
    /// checksum of the results (monomorphised per engine, as
    /// [`Fib4::run_workload`]).
    fn run_workload(&self, workload: &Workload6, lookups: u64) -> u64 {
        workload::run6(self, workload, lookups)
    }
}

/// Why an engine could not be built from a table.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{engine}: {message}")]
pub struct BuildError {
    /// The engine that refused.
    pub engine: String,
    /// Which structural limit the table exceeds, and what can take it.
    pub message: String,
}

/// Parameters every builder gets.
#[derive(Clone, Debug, Default)]
pub struct BuildOptions {
    /// The largest next-hop index the table uses (sizes next-hop fields).
    pub max_next_hop: NextHop,
}

/// Builds an IPv4 engine from a RIB.
pub type Build4 = fn(&Rib4, &BuildOptions) -> Result<Box<dyn Fib4>, BuildError>;

/// An engine in the registry.
#[derive(Clone, Copy)]
pub struct EngineSpec {
    /// Registry name, as given to `--engine`.
    pub name: &'static str,
    /// One line about the engine.
    pub summary: &'static str,
    /// The builder.
    pub build: Build4,
}

impl fmt::Debug for EngineSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EngineSpec").field("name", &self.name).finish()
    }
}

/// Every IPv4 engine fibkit has, in the order reports list them.
pub const ENGINES: &[EngineSpec] = &[
    EngineSpec { name: "d16r", summary: "DXR, K = 16", build: crate::dxr::build_boxed::<16> },
    EngineSpec { name: "d17r", summary: "DXR, K = 17", build: crate::dxr::build_boxed::<17> },
    EngineSpec { name: "d18r", summary: "DXR, K = 18", build: crate::dxr::build_boxed::<18> },
    EngineSpec { name: "d19r", summary: "DXR, K = 19", build: crate::dxr::build_boxed::<19> },
    EngineSpec { name: "d20r", summary: "DXR, K = 20", build: crate::dxr::build_boxed::<20> },
    EngineSpec { name: "d21r", summary: "DXR, K = 21", build: crate::dxr::build_boxed::<21> },
    EngineSpec { name: "d22r", summary: "DXR, K = 22", build: crate::dxr::build_boxed::<22> },
    EngineSpec { name: "poptrie0", summary: "Poptrie, s = 0", build: crate::poptrie::build_boxed::<0> },
    EngineSpec { name: "poptrie16", summary: "Poptrie, s = 16", build: crate::poptrie::build_boxed::<16> },
    EngineSpec { name: "poptrie18", summary: "Poptrie, s = 18", build: crate::poptrie::build_boxed::<18> },
    EngineSpec { name: "lulea", summary: "Lulea (Degermark et al., SIGCOMM 1997)", build: crate::lulea::build_boxed },
    EngineSpec { name: "dir24-8", summary: "DIR-24-8-BASIC as DPDK's rte_lpm", build: crate::dir24::build_boxed },
    EngineSpec { name: "lctrie", summary: "LC-trie (Nilsson-Karlsson), Linux fib_trie's shape", build: crate::lctrie::build_boxed },
    EngineSpec {
        name: "radix",
        summary: "the RIB's path-compressed binary trie (reference)",
        build: crate::radix::build_boxed,
    },
];

/// Builds an IPv6 engine from a RIB.
pub type Build6 = fn(&Rib6, &BuildOptions) -> Result<Box<dyn Fib6>, BuildError>;

/// An IPv6 engine in the registry.
#[derive(Clone, Copy)]
pub struct EngineSpec6 {
    /// Registry name, as given to `--engine`.
    pub name: &'static str,
    /// One line about the engine.
    pub summary: &'static str,
    /// The builder.
    pub build: Build6,
}

/// Every IPv6 engine fibkit has.
pub const ENGINES6: &[EngineSpec6] = &[
    EngineSpec6 { name: "poptrie0", summary: "Poptrie, s = 0", build: crate::poptrie::build_boxed6::<0> },
    EngineSpec6 { name: "poptrie16", summary: "Poptrie, s = 16", build: crate::poptrie::build_boxed6::<16> },
    EngineSpec6 { name: "poptrie18", summary: "Poptrie, s = 18", build: crate::poptrie::build_boxed6::<18> },
    EngineSpec6 { name: "d16r6", summary: "DXR for IPv6, K = 16", build: crate::dxr6::build_boxed6::<16> },
    EngineSpec6 { name: "d18r6", summary: "DXR for IPv6, K = 18", build: crate::dxr6::build_boxed6::<18> },
    EngineSpec6 {
        name: "radix",
        summary: "the RIB's path-compressed binary trie (reference)",
        build: crate::radix::build_boxed6,
    },
];

/// Builds the IPv6 engine called `name` from `rib`.
pub fn build6(name: &str, rib: &Rib6, options: &BuildOptions) -> Result<Box<dyn Fib6>, BuildError> {
    let spec = ENGINES6.iter().find(|spec| spec.name == name).ok_or_else(|| BuildError {
        engine: name.to_string(),
        message: format!(
            "unknown IPv6 engine (known: {})",
            ENGINES6.iter().map(|spec| spec.name).collect::<Vec<_>>().join(", ")
        ),
    })?;
    (spec.build)(rib, options)
}

/// The registry entry called `name`.
pub fn engine(name: &str) -> Option<&'static EngineSpec> {
    ENGINES.iter().find(|spec| spec.name == name)
}

/// Names of every engine, comma-separated (for error messages).
pub fn engine_names() -> String {
    ENGINES.iter().map(|spec| spec.name).collect::<Vec<_>>().join(", ")
}

/// Builds the engine called `name` from `rib`.
pub fn build4(name: &str, rib: &Rib4, options: &BuildOptions) -> Result<Box<dyn Fib4>, BuildError> {
    let spec = engine(name).ok_or_else(|| BuildError {
        engine: name.to_string(),
        message: format!("unknown engine (known: {})", engine_names()),
    })?;
    (spec.build)(rib, options)
}
