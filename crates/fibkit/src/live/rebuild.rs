//! The updater of engines without incremental updates: every batch
//! rebuilds the structure from the RIB.

use std::sync::Arc;

use super::{Applied, ApplyContext, Updater};
use crate::addr::{Address, Prefix};
use crate::error::BuildError;
use crate::fib::{Build, BuildOptions, Fib};
use crate::rib::Rib;

/// A full rebuild by an in-place updater: `fresh`, the updater made anew
/// from the RIB, replaces `updater` (the report counts `footprint` of it as
/// written); if the RIB did not build, `mark_stale` flags `updater`, whose
/// bookkeeping may no longer match its unpublished writes, so that its next
/// batch rebuilds too, and the error is returned.
///
/// # Errors
/// `fresh`'s error: the table is beyond the engine's limits.
pub fn replace_updater<U>(
    updater: &mut U,
    fresh: Result<U, BuildError>,
    footprint: impl FnOnce(&U) -> usize,
    mark_stale: impl FnOnce(&mut U),
) -> Result<Applied, BuildError> {
    match fresh {
        Ok(fresh) => {
            *updater = fresh;
            Ok(Applied { rebuilt: true, bytes_written: footprint(updater) as u64, ..Applied::default() })
        }
        Err(error) => {
            mark_stale(updater);
            Err(error)
        }
    }
}

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
        let options = BuildOptions::new(context.max_next_hop);
        let fib: Arc<dyn Fib<A>> = Arc::from((self.build)(rib, &options)?);
        let bytes_written = fib.footprint() as u64;
        self.fib = fib;
        Ok(Applied { rebuilt: true, bytes_written, ..Applied::default() })
    }
}
