//! Building: the RIB's routes in address order, split node by node, depth
//! first.
//!
//! The routes of a node's subtree are one contiguous run of the routes
//! sorted by (address, length): those ending inside the node (relative
//! length below `S`) set internal bits, and the others fall into runs of
//! equal next `S` bits, one run per child. A route ending inside the node
//! never splits a child's run: its address is the first of the `S`-bit
//! chunk it starts, and it sorts before the longer routes at that address.
//! Each node writes its results as one block and reserves its children as
//! one block, then fills each child from its run.

use std::marker::PhantomData;

use super::{position, Bitmap, Layout, Node, TreeBitmap};
use crate::addr::Address;
use crate::error::{BuildError, Limit, LimitExceeded};
use crate::mem::{try_copy_grown, try_reserve, try_with_capacity, AllocError};
use crate::rib::Rib;
use crate::{NextHop, NO_ROUTE};

/// A route as the builder reads it.
#[derive(Clone, Copy, Debug)]
struct Route<A: Address> {
    addr: A,
    len: u32,
    next_hop: NextHop,
}

/// `count` bits (at most 32) of `addr` from bit `start` on (bit 0 is the
/// top bit), zeros past the address's last bit: the chunk a node at key
/// offset `start` reads.
#[inline(always)]
pub(super) fn chunk_at<A: Address>(addr: A, start: u32, count: u32) -> u32 {
    let bits = u32::from(A::BITS);
    if count == 0 || start >= bits {
        return 0;
    }
    ((addr << start) >> (bits - count)).to_u128() as u32
}

/// `count` as a 32-bit index of `field`, or the limit `engine` exceeds.
pub(super) fn index_of(engine: &str, field: &str, count: usize) -> Result<u32, LimitExceeded> {
    u32::try_from(count).map_err(|_| LimitExceeded::new(engine, Limit::Nodes, field, count as u64, u64::from(u32::MAX)))
}

/// The error of memory refused to `engine`'s array `array`.
fn refused(engine: &'static str, array: &'static str) -> impl Fn(AllocError) -> BuildError {
    move |error| BuildError::out_of_memory(engine, array, error)
}

/// The arrays as they grow (fallibly: [`BuildError::OutOfMemory`]).
struct Builder<A: Address, L: Layout> {
    nodes: Vec<Node<L::Bitmap>>,
    results: Vec<NextHop>,
    nodes_per_level: Vec<usize>,
    family: PhantomData<A>,
}

impl<A: Address, L: Layout> Builder<A, L> {
    /// Fills `nodes[at_node]`, at depth `depth`, from `routes`: the routes of
    /// its subtree (lengths `depth * S` and more, all under the node's
    /// path), sorted by (address, length).
    ///
    /// # Errors
    /// [`BuildError::Limit`] when an index outgrows 32 bits;
    /// [`BuildError::OutOfMemory`] when the system refuses an array's
    /// growth.
    fn fill(&mut self, at_node: usize, routes: &[Route<A>], depth: u32) -> Result<(), BuildError> {
        let stride = L::STRIDE;
        let offset = depth * stride;
        match self.nodes_per_level.get_mut(depth as usize) {
            Some(count) => *count += 1,
            None => self.nodes_per_level.push(1),
        }
        // Next hops by internal position, and each child's run of routes.
        let mut inside = [NO_ROUTE; 64];
        let mut internal = 0u64;
        let mut external = 0u64;
        let mut runs = [(0usize, 0usize); 64];
        let mut children = 0;
        let mut at = 0;
        while at < routes.len() {
            let route = routes[at];
            debug_assert!(route.len >= offset);
            let len = route.len - offset;
            if len < stride {
                let position = position(len, chunk_at(route.addr, offset, len));
                debug_assert!(internal >> position & 1 == 0, "one route per prefix");
                internal |= 1 << position;
                inside[position as usize] = route.next_hop;
                at += 1;
                continue;
            }
            let chunk = chunk_at(route.addr, offset, stride);
            let start = at;
            while at < routes.len()
                && routes[at].len >= offset + stride
                && chunk_at(routes[at].addr, offset, stride) == chunk
            {
                at += 1;
            }
            debug_assert!(external >> chunk == 0, "a child's routes are one run, in chunk order");
            external |= 1 << chunk;
            runs[children] = (start, at);
            children += 1;
        }
        // Indexes up to the blocks' ends fit in 32 bits, so their starts do.
        index_of(L::NAME, "the 32-bit result index of a node", self.results.len() + internal.count_ones() as usize)?;
        let results = self.results.len() as u32;
        try_reserve(&mut self.results, internal.count_ones() as usize).map_err(refused(L::NAME, "result array"))?;
        let mut bits = internal;
        while bits != 0 {
            self.results.push(inside[bits.trailing_zeros() as usize]);
            bits &= bits - 1;
        }
        let first_child = self.nodes.len();
        index_of(L::NAME, "the 32-bit child index of a node", first_child + children)?;
        try_reserve(&mut self.nodes, children).map_err(refused(L::NAME, "node array"))?;
        self.nodes.resize(first_child + children, Node::default());
        self.nodes[at_node] = Node {
            internal: L::Bitmap::from_bits(internal),
            external: L::Bitmap::from_bits(external),
            children: first_child as u32,
            results,
        };
        for (child, &(start, end)) in runs[..children].iter().enumerate() {
            self.fill(first_child + child, &routes[start..end], depth + 1)?;
        }
        Ok(())
    }
}

impl<A: Address, L: Layout> TreeBitmap<A, L> {
    /// Builds the structure from every route of `rib`.
    ///
    /// # Errors
    /// [`BuildError::Limit`] when the nodes or the results outgrow their
    /// 32-bit indexes; [`BuildError::OutOfMemory`] when the system refuses
    /// an array.
    pub fn build(rib: &Rib<A>) -> Result<Self, BuildError> {
        let mut routes: Vec<Route<A>> = try_with_capacity(rib.len()).map_err(refused(L::NAME, "route list"))?;
        routes.extend(rib.iter().map(|(prefix, next_hop)| Route {
            addr: prefix.addr(),
            len: u32::from(prefix.prefix_len()),
            next_hop,
        }));
        // The RIB walks its trie in preorder, which is this order already.
        if !routes.is_sorted_by_key(|route| (route.addr, route.len)) {
            routes.sort_unstable_by_key(|route| (route.addr, route.len));
        }
        let mut builder = Builder::<A, L> {
            nodes: vec![Node::default()],
            results: vec![NO_ROUTE],
            nodes_per_level: Vec::new(),
            family: PhantomData,
        };
        builder.fill(0, &routes, 0)?;
        let Builder { nodes, results, nodes_per_level, .. } = builder;
        check_indexes::<L::Bitmap>(&nodes, results.len());
        let prefixes = routes.len();
        drop(routes);
        // Each lookup array from the builder's, dropped once copied.
        let node_array =
            try_copy_grown(&nodes, 0, |&node| node, Default::default).map_err(refused(L::NAME, "node array"))?;
        drop(nodes);
        let result_array = try_copy_grown(&results, 0, |&result| result, Default::default)
            .map_err(refused(L::NAME, "result array"))?;
        drop(results);
        Ok(TreeBitmap { nodes: node_array, results: result_array, prefixes, nodes_per_level, family: PhantomData })
    }
}

/// Asserts that every node's children and results lie inside the arrays:
/// what the lookup's unchecked reads rely on.
///
/// # Panics
/// If a block does not (a bug of the builder).
fn check_indexes<W: Bitmap>(nodes: &[Node<W>], results: usize) {
    for (at, node) in nodes.iter().enumerate() {
        assert!(node.children as usize + node.child_count() <= nodes.len(), "node {at}: children past the node array");
        assert!(node.results as usize + node.result_count() <= results, "node {at}: results past the result array");
    }
}
