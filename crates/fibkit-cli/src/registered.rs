//! The engines registered, as the CLI reads fibkit's registry: every read
//! goes through here, and the first one registers fibkit-peers' engines,
//! so that a name resolves the same whichever command, or test, reads the
//! registry first. (`clippy.toml` refuses the registry's readers elsewhere
//! in the crate.)
#![allow(clippy::disallowed_methods)]

use std::sync::OnceLock;

use anyhow::Result;
use fibkit::addr::{Address, Family};
use fibkit::compiled::{CompileOptions, CompiledTable};
use fibkit::error::{BuildError, UnknownEngine};
use fibkit::load::RouteTable;
use fibkit::registry::{self, AlreadyRegistered, Engine};

/// Registers fibkit-peers' engines, once; their names taken already is an
/// error (`main` reports it before any command runs).
pub fn register_peers() -> Result<(), AlreadyRegistered> {
    static REGISTERED: OnceLock<Result<(), AlreadyRegistered>> = OnceLock::new();
    REGISTERED.get_or_init(fibkit_peers::register).clone()
}

/// The peers registered; `main` has stopped before any command if they
/// could not be.
fn ready() {
    if let Err(error) = register_peers() {
        panic!("fibkit-peers' engines could not be registered: {error}");
    }
}

/// Every engine: fibkit's own, then the peers.
pub fn engines() -> Vec<&'static Engine> {
    ready();
    registry::engines()
}

/// Every engine serving `family`, in registry order.
pub fn engines_of(family: Family) -> Vec<&'static Engine> {
    ready();
    registry::engines_of(family)
}

/// The engine called `name`, whatever it serves.
pub fn find(name: &str) -> Option<&'static Engine> {
    ready();
    registry::find(name)
}

/// The engine called `name`, whatever it serves, or why there is none.
pub fn find_any(name: &str) -> Result<&'static Engine, UnknownEngine> {
    ready();
    registry::find_any(name)
}

/// The engine called `name` for family `A`, or why there is none.
pub fn resolve<A: Address>(name: &str) -> Result<&'static Engine, UnknownEngine> {
    ready();
    registry::resolve::<A>(name)
}

/// The engine `options` give family `A` ([`CompileOptions::engine`]).
pub fn compile_engine<A: Address>(options: &CompileOptions) -> Result<&'static Engine, UnknownEngine> {
    ready();
    options.engine::<A>()
}

/// `table` compiled with the engines `options` name ([`CompiledTable::build`]).
pub fn compile(table: RouteTable, options: &CompileOptions) -> Result<CompiledTable, BuildError> {
    ready();
    CompiledTable::build(table, options)
}
