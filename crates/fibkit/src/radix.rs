//! The RIB's own trie as an engine (`radix`): the radix-tree baseline, as a
//! BSD kernel without DXR would look routes up.

use crate::addr::Address;
use crate::engine::{BuildError, BuildOptions, Fib4, Fib6, Stats};
use crate::rib::{Rib, Rib4, Rib6};
use crate::NextHop;

/// A frozen copy of the RIB used as a lookup engine.
#[derive(Clone, Debug)]
pub struct Radix<A: Address> {
    rib: Rib<A>,
}

impl<A: Address> Radix<A> {
    /// Copies `rib` into an engine.
    pub fn build(rib: &Rib<A>) -> Self {
        Radix { rib: rib.clone() }
    }
}

/// Registry builder for IPv4 `radix`.
pub fn build_boxed(rib: &Rib4, _options: &BuildOptions) -> Result<Box<dyn Fib4>, BuildError> {
    Ok(Box::new(Radix::build(rib)))
}

/// Registry builder for IPv6 `radix`.
pub fn build_boxed6(rib: &Rib6, _options: &BuildOptions) -> Result<Box<dyn Fib6>, BuildError> {
    Ok(Box::new(Radix::build(rib)))
}

impl Fib4 for Radix<u32> {
    fn name(&self) -> &str {
        "radix"
    }

    #[inline]
    fn lookup(&self, addr: u32) -> NextHop {
        self.rib.lookup(addr)
    }

    fn footprint(&self) -> usize {
        self.rib.footprint()
    }

    fn stats(&self) -> Stats {
        self.report()
    }
}

impl Fib6 for Radix<u128> {
    fn name(&self) -> &str {
        "radix"
    }

    #[inline]
    fn lookup(&self, addr: u128) -> NextHop {
        self.rib.lookup(addr)
    }

    fn footprint(&self) -> usize {
        self.rib.footprint()
    }

    fn stats(&self) -> Stats {
        self.report()
    }
}

impl<A: Address> Radix<A> {
    fn footprint(&self) -> usize {
        self.rib.footprint()
    }

    fn report(&self) -> Stats {
        let mut stats = Stats::default();
        stats
            .text("engine", "radix")
            .count("prefixes", self.rib.len() as u64)
            .count("nodes", self.rib.node_count() as u64)
            .count("bytes_total", self.footprint() as u64);
        stats.report = format!(
            "radix: {} prefixes in {} trie nodes, {} bytes",
            self.rib.len(),
            self.rib.node_count(),
            self.footprint()
        );
        stats
    }
}
