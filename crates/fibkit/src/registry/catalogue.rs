//! The engine catalogue: the [`Engine`] type, fibkit's engines
//! ([`ENGINES`]), the ones other crates [`register`], and what the registry
//! says about them as a whole (the default engine of a family, the engines
//! that can be saved). It names every engine but `auto`, which sits above
//! it and chooses among [`AUTO_CANDIDATES`]; [`crate::registry`] resolves
//! names, `auto` among them.

use std::any::Any;
use std::fmt;
use std::sync::RwLock;

use crate::addr::{Address, Family};
use crate::engines::poptrie::{BasicNodeCell, NodeCell};
use crate::engines::{dir24, dxr, dxr6, lctrie, lulea, poptrie, radix, sail, sail_runs, treebitmap};
use crate::error::{BuildError, UnknownEngine};
use crate::fib::{Build, BuildOptions, Fib};
use crate::file::{FamilyFile, FileError, Problem};
use crate::live::{FullRebuild, Updater};
use crate::rib::Rib;
use crate::NextHop;

/// Builds an engine of family `A` from a RIB as an incremental updater.
pub type NewUpdater<A> = fn(&Rib<A>, &BuildOptions) -> Result<Box<dyn Updater<A>>, BuildError>;

/// Opens an engine of family `A` saved in a compiled FIB file (its family's
/// sections), checking it against the file's largest next hop.
pub type Open<A> = fn(&FamilyFile<'_>, NextHop) -> Result<Box<dyn Fib<A>>, FileError>;

/// What an engine has for one family.
#[derive(Clone, Copy)]
pub struct Builders<A: Address> {
    /// The builder.
    pub build: Build<A>,
    /// The incremental updater; `None`: the router rebuilds per batch.
    pub updater: Option<NewUpdater<A>>,
    /// The opener of a compiled FIB file ([`crate::file`]); `None`: the
    /// engine cannot be saved.
    pub open: Option<Open<A>>,
}

/// An engine in the registry.
#[derive(Clone, Copy)]
pub struct Engine {
    /// Registry name, as given to `--engine`.
    pub name: &'static str,
    /// One line about the engine.
    pub summary: &'static str,
    /// For a third-party library: the crate that registered it.
    pub peer: Option<&'static str>,
    /// For a variant of another engine (a paper's ablation, a wider
    /// field): that engine's name. Default selections (`fibkit bench`
    /// without `--engines`) leave variants out; `all` takes them.
    pub variant_of: Option<&'static str>,
    /// Its IPv4 builders, if it serves IPv4.
    pub ipv4: Option<Builders<u32>>,
    /// Its IPv6 builders, if it serves IPv6.
    pub ipv6: Option<Builders<u128>>,
}

impl Engine {
    /// An engine serving no family yet (add them with [`Engine::ipv4`] and
    /// [`Engine::ipv6`]).
    pub const fn new(name: &'static str, summary: &'static str) -> Self {
        Engine { name, summary, peer: None, variant_of: None, ipv4: None, ipv6: None }
    }

    /// The same, as a third-party library registered by crate `source`.
    pub const fn peer_of(self, source: &'static str) -> Self {
        Engine { peer: Some(source), ..self }
    }

    /// The same, as a variant of engine `base`.
    pub const fn variant_of(self, base: &'static str) -> Self {
        Engine { variant_of: Some(base), ..self }
    }

    /// The same, serving IPv4 through `build` (and `updater`).
    pub const fn ipv4(self, build: Build<u32>, updater: Option<NewUpdater<u32>>) -> Self {
        Engine { ipv4: Some(Builders { build, updater, open: None }), ..self }
    }

    /// The same, serving IPv6 through `build` (and `updater`).
    pub const fn ipv6(self, build: Build<u128>, updater: Option<NewUpdater<u128>>) -> Self {
        Engine { ipv6: Some(Builders { build, updater, open: None }), ..self }
    }

    /// The same, its IPv4 structures saved to and opened from compiled FIB
    /// files through `open` (after [`Engine::ipv4`]).
    pub const fn opens_ipv4(self, open: Open<u32>) -> Self {
        let Some(builders) = self.ipv4 else { panic!("opens_ipv4 of an engine without IPv4") };
        Engine { ipv4: Some(Builders { open: Some(open), ..builders }), ..self }
    }

    /// The same, for IPv6 (after [`Engine::ipv6`]).
    pub const fn opens_ipv6(self, open: Open<u128>) -> Self {
        let Some(builders) = self.ipv6 else { panic!("opens_ipv6 of an engine without IPv6") };
        Engine { ipv6: Some(Builders { open: Some(open), ..builders }), ..self }
    }

    /// Its builders for family `A`, if it serves it.
    pub fn builders<A: Address>(&self) -> Option<&Builders<A>> {
        let slot: &dyn Any = match A::FAMILY {
            Family::Ipv4 => &self.ipv4,
            Family::Ipv6 => &self.ipv6,
        };
        slot.downcast_ref::<Option<Builders<A>>>()?.as_ref()
    }

    /// Whether it serves `family`.
    pub fn serves(&self, family: Family) -> bool {
        match family {
            Family::Ipv4 => self.ipv4.is_some(),
            Family::Ipv6 => self.ipv6.is_some(),
        }
    }

    /// The families it serves.
    pub fn families(&self) -> Vec<Family> {
        Family::ALL.into_iter().filter(|&family| self.serves(family)).collect()
    }

    /// Whether it updates family `A` in place (else the router rebuilds it
    /// for every batch).
    pub fn incremental<A: Address>(&self) -> bool {
        self.builders::<A>().is_some_and(|builders| builders.updater.is_some())
    }

    fn builders_or_error<A: Address>(&self) -> Result<&Builders<A>, UnknownEngine> {
        self.builders::<A>().ok_or_else(|| unknown::<A>(self.name))
    }

    /// Builds it for family `A` from `rib`.
    ///
    /// # Errors
    /// [`BuildError::Unknown`] if it does not serve `A`; the engine's own
    /// [`BuildError::Limit`] when the table exceeds its structure.
    pub fn build<A: Address>(&self, rib: &Rib<A>, options: &BuildOptions) -> Result<Box<dyn Fib<A>>, BuildError> {
        (self.builders_or_error::<A>()?.build)(rib, options)
    }

    /// Whether its structures of family `A` can be saved to a compiled FIB
    /// file.
    pub fn savable<A: Address>(&self) -> bool {
        self.builders::<A>().is_some_and(|builders| builders.open.is_some())
    }

    /// Opens its structure of family `A` from `family`'s sections, whose
    /// next hops go up to `max_next_hop`.
    ///
    /// # Errors
    /// [`Problem::NotSavable`](crate::file::Problem::NotSavable) if it has no file format for `A`; the
    /// opener's [`FileError`]s for a section it refuses.
    pub fn open<A: Address>(
        &self,
        family: &FamilyFile<'_>,
        max_next_hop: NextHop,
    ) -> Result<Box<dyn Fib<A>>, FileError> {
        match self.builders::<A>().and_then(|builders| builders.open) {
            Some(open) => open(family, max_next_hop),
            None => Err(family.file().error(None, not_savable(self.name))),
        }
    }

    /// Its updater for family `A`, built from `rib`: the incremental one
    /// where it has it, else a [`FullRebuild`].
    ///
    /// # Errors
    /// As [`Engine::build`].
    pub fn updater<A: Address>(&self, rib: &Rib<A>, options: &BuildOptions) -> Result<Box<dyn Updater<A>>, BuildError> {
        let builders = self.builders_or_error::<A>()?;
        match builders.updater {
            Some(updater) => updater(rib, options),
            None => Ok(Box::new(FullRebuild::new(self.name, builders.build, rib, options)?)),
        }
    }
}

impl fmt::Debug for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Engine").field("name", &self.name).field("families", &self.families()).finish()
    }
}

/// A row of the Poptrie paper's Table 2 as an engine: Poptrie with direct
/// pointing on `S` bits, nodes `N`, no route aggregation, both families,
/// a variant of `base`.
const fn poptrie_variant<const S: u32, N: poptrie::NodeLayout>(
    name: &'static str,
    summary: &'static str,
    base: &'static str,
) -> Engine {
    Engine::new(name, summary)
        .ipv4(poptrie::build_variant::<u32, S, N, false>, None)
        .ipv6(poptrie::build_variant::<u128, S, N, false>, None)
        .variant_of(base)
}

/// fibkit's own engines, in the order reports list them.
pub static ENGINES: &[Engine] = &[
    Engine::new("d16r", "DXR, K = 16").ipv4(dxr::build::<16>, Some(dxr::updater::<16>)).opens_ipv4(dxr::open::<16>),
    Engine::new("d17r", "DXR, K = 17").ipv4(dxr::build::<17>, Some(dxr::updater::<17>)).opens_ipv4(dxr::open::<17>),
    Engine::new("d18r", "DXR, K = 18").ipv4(dxr::build::<18>, Some(dxr::updater::<18>)).opens_ipv4(dxr::open::<18>),
    Engine::new("d19r", "DXR, K = 19").ipv4(dxr::build::<19>, Some(dxr::updater::<19>)).opens_ipv4(dxr::open::<19>),
    Engine::new("d20r", "DXR, K = 20").ipv4(dxr::build::<20>, Some(dxr::updater::<20>)).opens_ipv4(dxr::open::<20>),
    Engine::new("d21r", "DXR, K = 21").ipv4(dxr::build::<21>, Some(dxr::updater::<21>)).opens_ipv4(dxr::open::<21>),
    Engine::new("d22r", "DXR, K = 22").ipv4(dxr::build::<22>, Some(dxr::updater::<22>)).opens_ipv4(dxr::open::<22>),
    Engine::new("poptrie0", "Poptrie, s = 0")
        .ipv4(poptrie::build::<u32, 0>, None)
        .opens_ipv4(poptrie::open::<u32, 0>)
        .ipv6(poptrie::build::<u128, 0>, None)
        .opens_ipv6(poptrie::open::<u128, 0>),
    Engine::new("poptrie16", "Poptrie, s = 16")
        .ipv4(poptrie::build::<u32, 16>, Some(poptrie::updater::<u32, 16>))
        .opens_ipv4(poptrie::open::<u32, 16>)
        .ipv6(poptrie::build::<u128, 16>, Some(poptrie::updater::<u128, 16>))
        .opens_ipv6(poptrie::open::<u128, 16>),
    Engine::new("poptrie18", "Poptrie, s = 18")
        .ipv4(poptrie::build::<u32, 18>, Some(poptrie::updater::<u32, 18>))
        .opens_ipv4(poptrie::open::<u32, 18>)
        .ipv6(poptrie::build::<u128, 18>, Some(poptrie::updater::<u128, 18>))
        .opens_ipv6(poptrie::open::<u128, 18>),
    poptrie_variant::<0, NodeCell>(
        "poptrie0-leafvec",
        "Poptrie, s = 0, leafvec without route aggregation (Table 2)",
        "poptrie0",
    ),
    poptrie_variant::<16, NodeCell>(
        "poptrie16-leafvec",
        "Poptrie, s = 16, leafvec without route aggregation (Table 2)",
        "poptrie16",
    ),
    poptrie_variant::<18, NodeCell>(
        "poptrie18-leafvec",
        "Poptrie, s = 18, leafvec without route aggregation (Table 2)",
        "poptrie18",
    ),
    poptrie_variant::<0, BasicNodeCell>(
        "poptrie0-basic",
        "Poptrie, s = 0, basic: 16-byte nodes, a leaf per slot, no route aggregation (Table 2)",
        "poptrie0",
    ),
    poptrie_variant::<16, BasicNodeCell>(
        "poptrie16-basic",
        "Poptrie, s = 16, basic: 16-byte nodes, a leaf per slot, no route aggregation (Table 2)",
        "poptrie16",
    ),
    poptrie_variant::<18, BasicNodeCell>(
        "poptrie18-basic",
        "Poptrie, s = 18, basic: 16-byte nodes, a leaf per slot, no route aggregation (Table 2)",
        "poptrie18",
    ),
    Engine::new(
        "poptrie16x12",
        "Poptrie with two-stage direct pointing: 16 bits, then 12 more where the trie goes on (IPv6)",
    )
    .ipv6(poptrie::build_expanded::<u128, 16, 12>, Some(poptrie::updater_expanded::<u128, 16, 12>))
    .opens_ipv6(poptrie::open_expanded::<u128, 16, 12>),
    Engine::new("d16r6", "DXR for IPv6, K = 16").ipv6(dxr6::build::<16>, None),
    Engine::new("d18r6", "DXR for IPv6, K = 18").ipv6(dxr6::build::<18>, None),
    Engine::new("lulea", "Lulea (Degermark et al., SIGCOMM 1997)").ipv4(lulea::build, None),
    Engine::new("dir24-8", "DIR-24-8-BASIC as DPDK's rte_lpm")
        .ipv4(dir24::build, Some(dir24::updater))
        .opens_ipv4(dir24::open),
    Engine::new("lctrie", "LC-trie (Nilsson-Karlsson), Linux fib_trie's shape").ipv4(lctrie::build, None),
    Engine::new("sail", "SAIL_L (Yang et al., SIGCOMM 2014): levels 16/24/32, 15-bit chunk IDs and next hops")
        .ipv4(sail::build::<u16>, Some(sail::updater::<u16>))
        .opens_ipv4(sail::open::<u16>),
    Engine::new("sail-wide", "SAIL_L with 32-bit entries (31-bit chunk IDs and next hops)")
        .ipv4(sail::build::<u32>, Some(sail::updater::<u32>))
        .opens_ipv4(sail::open::<u32>)
        .variant_of("sail"),
    Engine::new(
        "sail-runs",
        "SAIL-R (fibkit's): SAIL's levels, a /16's /24 answers as up to 21 runs in one cache line",
    )
    .ipv4(sail_runs::build, Some(sail_runs::updater))
    .opens_ipv4(sail_runs::open),
    Engine::new("treebitmap16", "Tree BitMap (Eatherton et al.), 16-ary (stride 4)")
        .ipv4(treebitmap::build::<u32, 4>, None)
        .ipv6(treebitmap::build::<u128, 4>, None),
    Engine::new("treebitmap64", "Tree BitMap (Eatherton et al.), 64-ary (stride 6)")
        .ipv4(treebitmap::build::<u32, 6>, None)
        .ipv6(treebitmap::build::<u128, 6>, None),
    Engine::new("radix", "the RIB's path-compressed binary trie (reference)")
        .ipv4(radix::build::<u32>, None)
        .ipv6(radix::build::<u128>, None),
];

/// The engines `auto` chooses among, for the families they serve: every
/// DXR split, Poptrie with direct pointing, SAIL and SAIL-R for IPv4, and for IPv6
/// Poptrie with direct and with two-stage direct pointing. Each has a file
/// format and an incremental updater, so a FIB `auto` builds can be saved
/// and updated in place (DXR for IPv6 has neither yet, and is not among
/// them). The engine chosen keeps its
/// limits for later updates: `sail` and `sail-runs` take next hops up to
/// 32,767, DXR up to 2^22 - 1.
pub const AUTO_CANDIDATES: &[&str] = &[
    "d16r",
    "d17r",
    "d18r",
    "d19r",
    "d20r",
    "d21r",
    "d22r",
    "poptrie16",
    "poptrie18",
    "sail",
    "sail-wide",
    "sail-runs",
    "poptrie16x12",
];

/// The engine of IPv4 tables when none is asked for: DXR, K = 18.
pub const DEFAULT_IPV4: &str = "d18r";

/// The engine of IPv6 tables when none is asked for: Poptrie, s = 18.
pub const DEFAULT_IPV6: &str = "poptrie18";

/// The engine a family gets when none is asked for (or none of those asked
/// for serves it): [`DEFAULT_IPV4`] or [`DEFAULT_IPV6`]. The CLI, the C
/// library and the Python package take their defaults from here.
pub fn default_engine(family: Family) -> &'static str {
    match family {
        Family::Ipv4 => DEFAULT_IPV4,
        Family::Ipv6 => DEFAULT_IPV6,
    }
}

/// [`Problem::NotSavable`] for engine `engine`, naming the engines that can
/// be saved (a family of theirs has a file format).
pub fn not_savable(engine: &str) -> Problem {
    let savable: Vec<&str> = engines()
        .into_iter()
        .filter(|engine| engine.savable::<u32>() || engine.savable::<u128>())
        .map(|engine| engine.name)
        .collect();
    Problem::NotSavable { engine: engine.to_string(), savable: savable.join(", ") }
}

/// The name the registry gives [`crate::auto`]: reserved here, below it,
/// so that the errors of unknown names list it.
pub const AUTO_NAME: &str = "auto";

/// Engines other crates registered, in the order they did.
static REGISTERED: RwLock<Vec<&'static Engine>> = RwLock::new(Vec::new());

/// A name that [`register`] found taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("engine {0:?} is registered already")]
pub struct AlreadyRegistered(pub &'static str);

/// Adds `engines` (a crate's own, e.g. `fibkit_peers::PEERS`) to the
/// registry, after fibkit's. Registering the same engines again does
/// nothing.
///
/// # Errors
/// [`AlreadyRegistered`] if another engine has one of their names; then
/// none of them is added.
pub fn register(engines: &'static [Engine]) -> Result<(), AlreadyRegistered> {
    let mut registered = REGISTERED.write().unwrap_or_else(|poisoned| poisoned.into_inner());
    if engines.iter().all(|engine| registered.iter().any(|&known| std::ptr::eq(known, engine))) {
        return Ok(());
    }
    for engine in engines {
        if ENGINES.iter().chain(registered.iter().copied()).any(|known| known.name == engine.name) {
            return Err(AlreadyRegistered(engine.name));
        }
    }
    registered.extend(engines.iter());
    Ok(())
}

/// Every engine: fibkit's own, then the registered ones.
pub fn engines() -> Vec<&'static Engine> {
    let registered = REGISTERED.read().unwrap_or_else(|poisoned| poisoned.into_inner());
    ENGINES.iter().chain(registered.iter().copied()).collect()
}

/// Every engine serving `family`, in registry order.
pub fn engines_of(family: Family) -> Vec<&'static Engine> {
    engines().into_iter().filter(|engine| engine.serves(family)).collect()
}

/// The listed engine called `name` (fibkit's own or a registered one; not
/// `auto`).
pub fn listed(name: &str) -> Option<&'static Engine> {
    engines().into_iter().find(|engine| engine.name == name)
}

/// The error for `name` asked of family `A`.
pub(crate) fn unknown<A: Address>(name: &str) -> UnknownEngine {
    let other_family = listed(name).map(|engine| (engine.families(), engine.peer));
    UnknownEngine {
        name: name.to_string(),
        family: Some(A::FAMILY),
        known: engines_of(A::FAMILY).iter().map(|engine| engine.name).chain([AUTO_NAME]).collect(),
        other_family,
    }
}
