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
//! In two layers: `catalogue.rs` holds the [`Engine`] type and the list of
//! engines, below [`crate::auto`], which chooses among them; this module
//! resolves names, `auto` among them ([`AUTO`]), above it.
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

pub(crate) mod catalogue;

pub use catalogue::{
    default_engine, engines, engines_of, not_savable, register, AlreadyRegistered, Builders, Engine, NewUpdater, Open,
    AUTO_CANDIDATES, DEFAULT_IPV4, DEFAULT_IPV6, ENGINES,
};
use catalogue::{listed, unknown};

use crate::addr::Address;
use crate::auto;
use crate::error::{BuildError, UnknownEngine};
use crate::fib::{BuildOptions, Fib};
use crate::live::Updater;
use crate::rib::Rib;

/// `auto`: the fastest of [`AUTO_CANDIDATES`] on the table and machine at
/// hand ([`crate::auto`]). Names resolve to it, but [`engines`] does not
/// list it: it is a choice among them, not a structure of its own (a FIB
/// it builds is the chosen engine's, named so).
pub static AUTO: Engine =
    Engine::new(auto::NAME, "the fastest candidate on this table and machine, chosen by measuring")
        .ipv4(auto::build::<u32>, Some(auto::updater::<u32>))
        .ipv6(auto::build::<u128>, Some(auto::updater::<u128>));

/// The engine called `name`, whatever it serves (`auto` among them).
pub fn find(name: &str) -> Option<&'static Engine> {
    listed(name).or_else(|| (name == AUTO.name).then_some(&AUTO))
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
mod out_of_memory;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::Family;
    use crate::engines::radix;

    static EXTRA: &[Engine] =
        &[Engine::new("extra-radix", "a registered engine").peer_of("tests").ipv4(radix::build::<u32>, None)];
    static CLASH: &[Engine] = &[Engine::new("d16r", "a second d16r").ipv4(radix::build::<u32>, None)];

    #[test]
    fn every_name_is_unique_and_every_engine_serves_a_family() {
        let names: std::collections::HashSet<&str> = ENGINES.iter().map(|engine| engine.name).collect();
        assert_eq!(names.len(), ENGINES.len());
        assert!(ENGINES.iter().all(|engine| !engine.families().is_empty() && engine.peer.is_none()));
        assert!(resolve::<u32>("d16r").unwrap().incremental::<u32>());
        assert!(resolve::<u128>("poptrie18").unwrap().incremental::<u128>());
        assert!(!resolve::<u128>("d16r6").unwrap().incremental::<u128>());
        assert!(resolve::<u128>("d16r6").is_ok() && resolve::<u32>("d16r6").is_err());
        // `auto` resolves for both families, is listed by none, and its
        // candidates are engines.
        assert!(resolve::<u32>("auto").is_ok() && resolve::<u128>("auto").is_ok());
        assert!(engines().iter().all(|engine| engine.name != AUTO.name));
        for name in AUTO_CANDIDATES {
            let engine = ENGINES.iter().find(|engine| engine.name == *name).unwrap();
            assert!(!engine.serves(Family::Ipv4) || engine.savable::<u32>() && engine.incremental::<u32>(), "{name}");
            assert!(!engine.serves(Family::Ipv6) || engine.savable::<u128>() && engine.incremental::<u128>(), "{name}");
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
