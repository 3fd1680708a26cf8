//! The RIB's own trie as an engine (`radix`): the radix-tree baseline, as a
//! BSD kernel without DXR would look routes up.

use crate::addr::Address;
use crate::error::BuildError;
use crate::fib::{forward_fib, BuildOptions, Fib, Stats};
use crate::rib::Rib;
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

    /// Longest-prefix match: the RIB's own walk down its trie.
    #[inline]
    pub fn lookup(&self, addr: A) -> NextHop {
        self.rib.lookup(addr)
    }

    /// Bytes of the trie's nodes.
    pub fn footprint(&self) -> usize {
        self.rib.footprint()
    }

    /// The statistics report: prefixes, nodes and bytes.
    pub fn report(&self) -> Stats {
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

/// Registry builder for `radix` (either family; it has no limits).
pub fn build<A: Address>(rib: &Rib<A>, _options: &BuildOptions) -> Result<Box<dyn Fib<A>>, BuildError> {
    Ok(Box::new(Radix::build(rib)))
}

forward_fib!([A: Address] Radix<A>, A, |_radix| "radix", []);
