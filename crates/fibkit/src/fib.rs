//! The engine trait: one [`Fib`] for both address families.
//!
//! Every forwarding structure implements `Fib<u32>` (IPv4), `Fib<u128>`
//! (IPv6), or both from one generic impl. The CLI, the benchmarks, the
//! router and the tests reach every engine through this trait, built by
//! name from [`crate::registry`].
//!
//! Engines are frozen structures: every lookup takes `&self` and reads plain
//! arrays. Building happens in the engine's builder; keeping a structure up
//! to date while readers search it is [`crate::live`]'s business, and
//! publishing it to concurrent readers the [`crate::router`]'s.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use crate::addr::{Address, Prefix};
use crate::error::BuildError;
use crate::file::{FamilyWriter, Problem};
use crate::nexthop::NextHop;
use crate::random::Keyed;
use crate::rib::Rib;
use crate::workload::{self, Workload};

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

/// A compiled forwarding structure for addresses of type `A` (`u32` for
/// IPv4, `u128` for IPv6).
pub trait Fib<A: Address>: Send + Sync {
    /// The engine's registry name with its parameters (e.g. `d16r`).
    fn name(&self) -> &str;

    /// Longest-prefix match for `addr`: its next hop, or [`crate::NO_ROUTE`].
    fn lookup(&self, addr: A) -> NextHop;

    /// Looks up every key; `out[i]` gets the next hop of `keys[i]`.
    ///
    /// # Panics
    /// If `out` is shorter than `keys`.
    fn lookup_batch(&self, keys: &[A], out: &mut [NextHop]) {
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
    fn run_workload(&self, workload: &Workload<A>, lookups: u64) -> u64
    where
        A: Keyed,
    {
        workload::run(self, workload, lookups)
    }

    /// Writes the lookup structure into its family's sections of a
    /// compiled FIB file ([`crate::file`]), for the registry's opener of
    /// the engine to map back.
    ///
    /// # Errors
    /// [`Problem::NotSavable`] for an engine without a file format (the
    /// default).
    fn save<'a>(&'a self, file: &mut FamilyWriter<'_, 'a>) -> Result<(), Problem> {
        let _ = file;
        Err(Problem::not_savable(self.name()))
    }
}

/// Every engine is what the benchmark workloads look up in.
impl<A: Address, F: Fib<A> + ?Sized> workload::Lookups<A> for F {
    #[inline]
    fn lookup(&self, key: A) -> NextHop {
        Fib::lookup(self, key)
    }

    #[inline]
    fn lookup_batch(&self, keys: &[A], out: &mut [NextHop]) {
        Fib::lookup_batch(self, keys, out)
    }
}

/// Implements [`Fib`] for an engine whose inherent methods are its lookup
/// structure's: `lookup`, `footprint`, `report` (the statistics), and
/// `lookup_batch` when it has its own batch path, `save` when it has a file
/// format. The engines keep these as inherent methods so that callers
/// holding the concrete type need no trait in scope; this is the one place
/// that forwards to them.
///
/// `forward_fib!([generics] Engine, Address, |engine| name, [lookup_batch], [save])`
///
/// `lookup` is `#[inline]`, and LLVM leaves DXR's (with its inlined AVX2
/// search) and Luleå's out of line in the benchmark loops. Measured and not
/// kept: `#[inline(always)]`, which puts DXR's in them, was no faster in
/// scalar RND in alternated runs (figures in docs/decisions.md).
macro_rules! forward_fib {
    ([$($generics:tt)*] $engine:ty, $address:ty, |$this:ident| $name:expr, [$($batch:ident)?] $(, [$save:ident])?) => {
        impl<$($generics)*> $crate::fib::Fib<$address> for $engine {
            fn name(&self) -> &str {
                let $this = self;
                $name
            }

            #[inline]
            fn lookup(&self, addr: $address) -> $crate::NextHop {
                <$engine>::lookup(self, addr)
            }

            $(
                fn $batch(&self, keys: &[$address], out: &mut [$crate::NextHop]) {
                    <$engine>::$batch(self, keys, out)
                }
            )?

            fn footprint(&self) -> usize {
                <$engine>::footprint(self)
            }

            fn stats(&self) -> $crate::fib::Stats {
                self.report()
            }

            $(
                fn $save<'a>(&'a self, file: &mut $crate::file::FamilyWriter<'_, 'a>) -> Result<(), $crate::file::Problem> {
                    <$engine>::$save(self, file)
                }
            )?
        }
    };
}
pub(crate) use forward_fib;

/// Parameters every builder gets.
#[derive(Clone, Debug, Default)]
pub struct BuildOptions {
    /// The largest next-hop index the table uses (sizes next-hop fields).
    pub max_next_hop: NextHop,
    /// The keys `auto` ([`crate::auto`]) measures its candidates on; the
    /// other engines take no notice of them.
    pub calibration: Calibrations,
}

impl BuildOptions {
    /// Options for next hops up to `max_next_hop`, `auto` measuring on
    /// the default keys.
    pub fn new(max_next_hop: NextHop) -> Self {
        BuildOptions { max_next_hop, calibration: Calibrations::default() }
    }
}

/// The keys an engine is chosen for: the traffic it will see, as far as the
/// caller knows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Calibration<A: Address> {
    /// Uniform random keys over the family's default space (all of IPv4,
    /// 2000::/3).
    #[default]
    Default,
    /// Uniform random keys inside a prefix (most IPv6 traffic goes to
    /// 2001::/16).
    Space(Prefix<A>),
    /// The caller's own keys (a sample of the addresses to look up),
    /// looked up in order, cycling.
    Keys(Arc<[A]>),
}

impl<A: Address> Calibration<A> {
    /// The caller's `keys`, or the default where there are none.
    pub fn sample(keys: Vec<A>) -> Self {
        if keys.is_empty() {
            Calibration::Default
        } else {
            Calibration::Keys(keys.into())
        }
    }
}

impl<A: Address> fmt::Display for Calibration<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Calibration::Default => write!(f, "uniform random keys, the family's default space"),
            Calibration::Space(space) => write!(f, "uniform random keys in {space}"),
            Calibration::Keys(keys) => write!(f, "{} of the caller's keys", keys.len()),
        }
    }
}

/// A [`Calibration`] for each family.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Calibrations {
    /// IPv4's.
    pub ipv4: Calibration<u32>,
    /// IPv6's.
    pub ipv6: Calibration<u128>,
}

impl Calibrations {
    /// The caller's keys of each family ([`Calibration::sample`]).
    pub fn sample(ipv4: Vec<u32>, ipv6: Vec<u128>) -> Self {
        Calibrations { ipv4: Calibration::sample(ipv4), ipv6: Calibration::sample(ipv6) }
    }

    /// Family `A`'s.
    pub fn of<A: Address>(&self) -> &Calibration<A> {
        let ipv4: &dyn Any = &self.ipv4;
        let ipv6: &dyn Any = &self.ipv6;
        ipv4.downcast_ref().or_else(|| ipv6.downcast_ref()).expect("an address is u32 or u128")
    }

    /// Family `A`'s, to set.
    pub fn of_mut<A: Address>(&mut self) -> &mut Calibration<A> {
        let (ipv4, ipv6): (&mut dyn Any, &mut dyn Any) = (&mut self.ipv4, &mut self.ipv6);
        match ipv4.downcast_mut() {
            Some(calibration) => calibration,
            None => ipv6.downcast_mut().expect("an address is u32 or u128"),
        }
    }
}

/// Builds an engine of family `A` from a RIB (the registry's builders).
pub type Build<A> = fn(&Rib<A>, &BuildOptions) -> Result<Box<dyn Fib<A>>, BuildError>;
