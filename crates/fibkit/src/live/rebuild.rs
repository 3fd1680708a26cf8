//! The updater of engines without incremental updates: every batch
//! rebuilds the structure from the RIB.

use std::sync::Arc;

use super::{Applied, ApplyContext, Updater};
use crate::addr::{Address, Prefix};
use crate::error::BuildError;
use crate::fib::{Build, BuildOptions, Fib};
use crate::rib::Rib;

/// Rebuilds the engine from the RIB for every batch and hands the new
/// structure over whole ([`Applied::rebuilt`]).
pub struct FullRebuild<A: Address> {
    name: &'static str,
    build: Build<A>,
    fib: Arc<dyn Fib<A>>,
}

impl<A: Address> FullRebuild<A> {
    /// Builds the engine called `name` with `build` from `rib`.
    ///
    /// # Errors
    /// Whatever `build` refuses.
    pub fn new(name: &'static str, build: Build<A>, rib: &Rib<A>, options: &BuildOptions) -> Result<Self, BuildError> {
        Ok(FullRebuild { name, build, fib: Arc::from(build(rib, options)?) })
    }
}

impl<A: Address> Updater<A> for FullRebuild<A> {
    fn name(&self) -> &str {
        self.name
    }

    fn fib(&self) -> Arc<dyn Fib<A>> {
        self.fib.clone()
    }

    fn max_next_hop(&self) -> crate::NextHop {
        crate::NextHop::MAX
    }

    fn incremental(&self) -> bool {
        false
    }

    fn apply(&mut self, rib: &Rib<A>, _changed: &[Prefix<A>], context: ApplyContext) -> Result<Applied, BuildError> {
        let options = BuildOptions { max_next_hop: context.max_next_hop };
        let fib: Arc<dyn Fib<A>> = Arc::from((self.build)(rib, &options)?);
        let bytes_written = fib.footprint() as u64;
        self.fib = fib;
        Ok(Applied { rebuilt: true, bytes_written, ..Applied::default() })
    }
}
