//! The registry: the one place that names engines.
//!
//! Every engine is one [`Engine`] value: its name, a summary, the families
//! it serves, for each the builder and (where the engine has one) the
//! incremental updater, and whether it is a third-party peer. fibkit's own
//! engines are [`ENGINES`]; other crates add theirs with [`register`] (the
//! `fibkit-peers` crate registers the libraries `fibkit bench` compares
//! with), as FreeBSD's FIB algorithms register one `struct fib_lookup_module`
//! each. The CLI, the router, the Python package, verify and bench resolve
//! names only here ([`resolve`], [`build`], [`updater`]), and an unknown
//! name is always the same error, [`UnknownEngine`], listing the valid
//! names.
//!
//! ```
//! use fibkit::{registry, Family, Rib4};
//!
//! let poptrie = registry::find("poptrie18").unwrap();
//! assert_eq!(poptrie.families(), vec![Family::Ipv4, Family::Ipv6]);
//! let fib = registry::build::<u32>("d18r", &Rib4::new(), &Default::default()).unwrap();
//! assert_eq!(fib.name(), "d18r");
//! let error = registry::resolve::<u128>("d18r").unwrap_err();
//! assert_eq!(error.to_string().split(" (").next(), Some("unknown IPv6 engine: \"d18r\" is IPv4 only"));
//! ```

use std::any::Any;
use std::fmt;
use std::sync::RwLock;

use crate::addr::{Address, Family};
use crate::auto;
use crate::engines::poptrie::{BasicNodeCell, NodeCell};
use crate::engines::{dir24, dxr, dxr6, lctrie, lulea, poptrie, radix, sail, sail_runs, treebitmap};
use crate::error::{BuildError, UnknownEngine};
use crate::fib::{Build, BuildOptions, Fib};
use crate::file::{FamilyFile, FileError};
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
            None => Err(family.file().error(None, crate::file::not_savable(self.name))),
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
        .ipv4(poptrie::build::<u32, 16>, Some(poptrie::updater::<16>))
        .opens_ipv4(poptrie::open::<u32, 16>)
        .ipv6(poptrie::build::<u128, 16>, None)
        .opens_ipv6(poptrie::open::<u128, 16>),
    Engine::new("poptrie18", "Poptrie, s = 18")
        .ipv4(poptrie::build::<u32, 18>, Some(poptrie::updater::<18>))
        .opens_ipv4(poptrie::open::<u32, 18>)
        .ipv6(poptrie::build::<u128, 18>, None)
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
    .ipv6(poptrie::build_expanded::<u128, 16, 12>, None)
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

/// `auto`: the fastest of [`AUTO_CANDIDATES`] on the table and machine at
/// hand ([`crate::auto`]). Names resolve to it, but [`engines`] does not
/// list it: it is a choice among them, not a structure of its own (a FIB
/// it builds is the chosen engine's, named so).
pub static AUTO: Engine =
    Engine::new(auto::NAME, "the fastest candidate on this table and machine, chosen by measuring")
        .ipv4(auto::build::<u32>, Some(auto::updater::<u32>))
        .ipv6(auto::build::<u128>, Some(auto::updater::<u128>));

/// The engines `auto` chooses among, for the families they serve: every
/// DXR split, Poptrie with direct pointing, SAIL and SAIL-R for IPv4, and for IPv6
/// Poptrie with direct and with two-stage direct pointing. Each has a file
/// format, and for IPv4 an incremental updater, so a FIB `auto` builds can
/// be saved and updated (IPv6 FIBs are rebuilt per batch; DXR for IPv6 has
/// no file format yet, and is not among them). The engine chosen keeps its
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

/// The engine called `name`, whatever it serves (`auto` among them).
pub fn find(name: &str) -> Option<&'static Engine> {
    engines().into_iter().find(|engine| engine.name == name).or_else(|| (name == AUTO.name).then_some(&AUTO))
}

/// The engine called `name`, whatever it serves.
///
/// # Errors
/// [`UnknownEngine`] listing every engine's name, when none has it: for a
/// check before the family is known (before a table loads).
pub fn find_any(name: &str) -> Result<&'static Engine, UnknownEngine> {
    find(name).ok_or_else(|| UnknownEngine {
        name: name.to_string(),
        family: None,
        known: engines().iter().map(|engine| engine.name).chain([AUTO.name]).collect(),
        other_family: None,
    })
}

/// The error for `name` asked of family `A`.
fn unknown<A: Address>(name: &str) -> UnknownEngine {
    let other_family = find(name).map(|engine| (engine.families(), engine.peer));
    UnknownEngine {
        name: name.to_string(),
        family: Some(A::FAMILY),
        known: engines_of(A::FAMILY).iter().map(|engine| engine.name).chain([AUTO.name]).collect(),
        other_family,
    }
}

/// The engine called `name` serving family `A`.
///
/// # Errors
/// [`UnknownEngine`], listing the names valid for `A` (and saying which
/// family the name serves, if it is an engine of the other one).
pub fn resolve<A: Address>(name: &str) -> Result<&'static Engine, UnknownEngine> {
    find(name).filter(|engine| engine.serves(A::FAMILY)).ok_or_else(|| unknown::<A>(name))
}

/// Builds the engine called `name` for family `A` from `rib`.
///
/// # Errors
/// [`BuildError::Unknown`] for a name [`resolve`] refuses; the engine's
/// own errors otherwise ([`Engine::build`]).
pub fn build<A: Address>(name: &str, rib: &Rib<A>, options: &BuildOptions) -> Result<Box<dyn Fib<A>>, BuildError> {
    resolve::<A>(name)?.build(rib, options)
}

/// The updater of the engine called `name` for family `A`, built from
/// `rib` ([`Engine::updater`]).
///
/// # Errors
/// As [`build`].
pub fn updater<A: Address>(
    name: &str,
    rib: &Rib<A>,
    options: &BuildOptions,
) -> Result<Box<dyn Updater<A>>, BuildError> {
    resolve::<A>(name)?.updater(rib, options)
}

#[cfg(test)]
mod tests {
    use super::*;

    static EXTRA: &[Engine] =
        &[Engine::new("extra-radix", "a registered engine").peer_of("tests").ipv4(radix::build::<u32>, None)];
    static CLASH: &[Engine] = &[Engine::new("d16r", "a second d16r").ipv4(radix::build::<u32>, None)];

    #[test]
    fn every_name_is_unique_and_every_engine_serves_a_family() {
        let names: std::collections::HashSet<&str> = ENGINES.iter().map(|engine| engine.name).collect();
        assert_eq!(names.len(), ENGINES.len());
        assert!(ENGINES.iter().all(|engine| !engine.families().is_empty() && engine.peer.is_none()));
        assert!(resolve::<u32>("d16r").unwrap().incremental::<u32>());
        assert!(!resolve::<u128>("poptrie18").unwrap().incremental::<u128>());
        assert!(resolve::<u128>("d16r6").is_ok() && resolve::<u32>("d16r6").is_err());
        // `auto` resolves for both families, is listed by none, and its
        // candidates are engines.
        assert!(resolve::<u32>("auto").is_ok() && resolve::<u128>("auto").is_ok());
        assert!(engines().iter().all(|engine| engine.name != AUTO.name));
        for name in AUTO_CANDIDATES {
            let engine = ENGINES.iter().find(|engine| engine.name == *name).unwrap();
            assert!(!engine.serves(Family::Ipv4) || engine.savable::<u32>() && engine.incremental::<u32>(), "{name}");
            assert!(!engine.serves(Family::Ipv6) || engine.savable::<u128>(), "{name}");
        }
        // A variant's engine exists and serves what the variant does.
        for engine in ENGINES.iter().filter(|engine| engine.variant_of.is_some()) {
            let base = find(engine.variant_of.unwrap()).unwrap_or_else(|| panic!("{}'s base", engine.name));
            assert!(
                base.variant_of.is_none() && engine.families().iter().all(|&family| base.serves(family)),
                "{}",
                engine.name
            );
        }
    }

    #[test]
    fn unknown_names_list_the_valid_ones() {
        let error = resolve::<u128>("nonesuch").unwrap_err();
        let message = error.to_string();
        assert!(message.starts_with("unknown IPv6 engine \"nonesuch\" (known: poptrie0, "), "{message}");
        assert!(!message.contains("d16r,"), "{message}");
        let message = resolve::<u128>("lulea").unwrap_err().to_string();
        assert!(
            message.starts_with("unknown IPv6 engine: \"lulea\" is IPv4 only (IPv6 engines: poptrie0"),
            "{message}"
        );
        let message = resolve::<u32>("d18r6").unwrap_err().to_string();
        assert!(message.starts_with("unknown engine: \"d18r6\" is IPv6 only (IPv4 engines: d16r"), "{message}");
        let message = find_any("nonesuch").unwrap_err().to_string();
        assert!(message.starts_with("unknown engine \"nonesuch\" (known: d16r, "), "{message}");
        assert!(message.contains("d16r6") && find_any("d16r6").is_ok(), "{message}");
        let built = build::<u32>("nonesuch", &Rib::new(), &BuildOptions::default());
        assert!(matches!(built, Err(BuildError::Unknown(UnknownEngine { ref name, .. })) if name == "nonesuch"));
    }

    #[test]
    fn other_crates_register_their_engines_once() {
        register(EXTRA).unwrap();
        register(EXTRA).unwrap();
        assert_eq!(engines().iter().filter(|engine| engine.name == "extra-radix").count(), 1);
        assert_eq!(register(CLASH), Err(AlreadyRegistered("d16r")));
        assert_eq!(resolve::<u32>("d16r").unwrap().summary, "DXR, K = 16");
        let fib = build::<u32>("extra-radix", &Rib::new(), &BuildOptions::default()).unwrap();
        assert_eq!(fib.lookup(1), crate::NO_ROUTE);
        let message = resolve::<u128>("extra-radix").unwrap_err().to_string();
        assert!(message.contains("is a third-party peer; tests is IPv4 only"), "{message}");
    }
}
