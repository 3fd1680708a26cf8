//! The RIB: a path-compressed binary trie of prefixes, the reference answer
//! for every engine.
//!
//! ```text
//!            0/0 (root, always present; holds the default route if any)
//!           /    \
//!      10.0.0.0/8  192.168.0.0/16        a node exists for every prefix and
//!        /   \                           for every branching point ("glue",
//!  10.1/16   10.128/9 (glue)             no next hop); single-child chains
//!             /    \                     are compressed away
//!     10.128/24  10.200/16
//! ```
//!
//! Nodes live in one arena (`arena.rs`) and refer to each other by `u32` index;
//! freed slots are reused. Besides exact get, insert/replace and remove, the
//! RIB answers longest-prefix match ([`Rib::lookup`]) and walks the disjoint
//! address ranges of the whole space or any sub-range with their effective
//! next hop ([`Rib::for_each_range`]), from which the range-based engines
//! (DXR) build their chunks. It lists the routes covering a prefix or an
//! address, least specific first ([`Rib::covering`]), and the routes
//! inside a prefix ([`Rib::covered`]), without allocating (`cover.rs`).
//!
//! # Updates without a walk from the root
//!
//! A walk from the root reads a node a level, most of them out of cache in
//! a full table (a few dozen levels deep in IPv6, over megabytes of nodes:
//! figures in docs/decisions.md). So an update that names a prefix with
//! a node goes straight to it, and what it changes is found from there
//! (`update.rs`):
//!
//! - an exact-match index (`index.rs`) finds the node of every route;
//! - each node links to its parent, and `full` flags are recomputed upward
//!   only while they change;
//! - each node names the route nearest above it (`cover`, the default
//!   route aside), whose next hop answers in a withdrawn prefix's gaps
//!   ([`Rib::for_each_exposed`]);
//! - a withdrawn prefix's node stays in the trie without a route (and in
//!   the index) while no more than half as many nodes as routes are kept
//!   so: a route announced again soon after its withdrawal, as flapping
//!   routes are, finds its node at once, and the updater that follows a
//!   withdrawal finds the prefix's gaps without a walk. The oldest kept
//!   node is spliced out when the count is exceeded (its neighbours read
//!   ahead, one withdrawal before);
//! - the nodes and the index sit on huge pages once large (`arena.rs`).
//!
//! Only a prefix without a node (a new route, or one withdrawn long ago)
//! walks down from the root.

mod arena;
mod cover;
mod index;
mod update;

pub use cover::{Covered, Covering};

#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use crate::addr::{Address, Prefix};
use crate::{NextHop, NO_ROUTE};
use arena::Arena;
use index::Index;

const NIL: u32 = u32::MAX;
const ROOT: u32 = 0;

/// [`Node::flags`]: routes at or below the node cover every address of its
/// prefix: it is a route, or both halves of its prefix are such nodes.
/// Lets [`Rib::for_each_exposed`] skip what hides no gap.
const FULL: u8 = 1;
/// [`Node::flags`]: the node is in the index (a route's node, or a
/// withdrawn route's still in the trie).
const INDEXED: u8 = 2;
/// [`Node::flags`]: the slot is free (on the free list).
const FREE: u8 = 4;

/// A trie node: 40 bytes for IPv6 (the address needs no 16-byte alignment
/// here), 28 for IPv4.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, packed(8))]
struct Node<A: Address> {
    /// The prefix's address (host bits zero).
    addr: A,
    children: [u32; 2],
    /// `NIL` for the root.
    parent: u32,
    /// The nearest node above that is a route, the root aside (`NIL` if
    /// none): what answers in the node's prefix where no route at or below
    /// it does, or else the root's default route if any. The root is never
    /// named, so that a default route announced or withdrawn under a full
    /// table renames nothing.
    cover: u32,
    /// `NO_ROUTE` for glue nodes, withdrawn nodes kept, and the root
    /// without a default route.
    next_hop: NextHop,
    prefix_len: u8,
    /// [`FULL`], [`INDEXED`], [`FREE`].
    flags: u8,
}

const _: () = assert!(size_of::<Node<u128>>() == 40 && size_of::<Node<u32>>() == 28);

impl<A: Address> Node<A> {
    #[inline(always)]
    fn prefix(&self) -> Prefix<A> {
        Prefix::from_parts(self.addr, self.prefix_len)
    }

    #[inline(always)]
    fn is(&self, prefix: Prefix<A>) -> bool {
        self.prefix_len == prefix.prefix_len() && { self.addr } == prefix.addr()
    }

    #[inline(always)]
    fn is_route(&self) -> bool {
        self.next_hop != NO_ROUTE
    }

    #[inline(always)]
    fn full(&self) -> bool {
        self.flags & FULL != 0
    }
}

/// A maximal run of addresses sharing one effective next hop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range<A: Address> {
    /// First address of the run.
    pub first: A,
    /// Last address of the run (inclusive).
    pub last: A,
    /// Next hop of every address in the run (`NO_ROUTE` where none covers).
    pub next_hop: NextHop,
}

/// The reference routing table: a path-compressed binary trie.
#[derive(Clone, Debug)]
pub struct Rib<A: Address> {
    /// On huge pages once large (`arena.rs`).
    nodes: Arena<Node<A>>,
    free: Vec<u32>,
    routes: usize,
    /// The nodes of routes and of withdrawn routes still in the trie.
    index: Index,
    /// Nodes of withdrawn routes kept in the trie, oldest first (an entry
    /// may name a node since spliced, reused or routed again: it is
    /// checked when it comes out). Every dead node is in it.
    kept: VecDeque<u32>,
    /// Dead nodes: neither a route nor the root, with fewer than two
    /// children (withdrawn routes kept, and the glue nodes above them).
    dead: usize,
}

/// An IPv4 RIB.
pub type Rib4 = Rib<u32>;
/// An IPv6 RIB.
pub type Rib6 = Rib<u128>;

impl<A: Address> Default for Rib<A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<A: Address> Rib<A> {
    /// An empty RIB.
    pub fn new() -> Self {
        let root = Node {
            addr: A::ZERO,
            children: [NIL; 2],
            parent: NIL,
            cover: NIL,
            next_hop: NO_ROUTE,
            prefix_len: 0,
            flags: 0,
        };
        Rib {
            nodes: Arena::with(root),
            free: Vec::new(),
            routes: 0,
            index: Index::new(),
            kept: VecDeque::new(),
            dead: 0,
        }
    }

    /// Number of prefixes with a route.
    pub fn len(&self) -> usize {
        self.routes
    }

    /// Whether the RIB holds no route.
    pub fn is_empty(&self) -> bool {
        self.routes == 0
    }

    /// Number of trie nodes, glue and the nodes kept for withdrawn routes
    /// included (for memory reports).
    pub fn node_count(&self) -> usize {
        self.nodes.len() - self.free.len()
    }

    /// Bytes the trie's arena and its index occupy.
    pub fn footprint(&self) -> usize {
        self.nodes.capacity() * size_of::<Node<A>>()
            + (self.free.capacity() + self.kept.capacity()) * 4
            + self.index.footprint()
    }

    /// The node of `prefix` in the index (a route's, or a withdrawn route's
    /// still in the trie).
    #[inline]
    fn find(&self, prefix: Prefix<A>, tag: u32) -> Option<u32> {
        self.index.find(tag, |node| self.nodes[node as usize].is(prefix))
    }

    /// The next hop of the route nearest above node `index` (`NO_ROUTE` if
    /// none).
    #[inline]
    fn cover_hop(&self, index: u32) -> NextHop {
        match self.nodes[index as usize].cover {
            NIL => self.nodes[ROOT as usize].next_hop,
            cover => self.nodes[cover as usize].next_hop,
        }
    }

    /// The next hop stored for exactly `prefix`.
    pub fn get(&self, prefix: Prefix<A>) -> Option<NextHop> {
        let node = self.find(prefix, self.index.tag(prefix))?;
        let next_hop = self.nodes[node as usize].next_hop;
        (next_hop != NO_ROUTE).then_some(next_hop)
    }

    /// Longest-prefix match: the matching prefix and its next hop.
    pub fn lookup_prefix(&self, addr: A) -> Option<(Prefix<A>, NextHop)> {
        let mut best = None;
        let mut current = ROOT;
        loop {
            let node = &self.nodes[current as usize];
            if node.is_route() {
                best = Some((node.prefix(), node.next_hop));
            }
            if node.prefix_len == A::BITS {
                return best;
            }
            let child = node.children[addr.bit(node.prefix_len)];
            if child == NIL || !self.nodes[child as usize].prefix().contains(addr) {
                return best;
            }
            current = child;
        }
    }

    /// The binary radix depth of `addr` (the Poptrie paper's section 4.6):
    /// how many leading bits of `addr` a binary trie holding every prefix
    /// examines before it knows the answer, i.e. the depth where the walk
    /// along `addr` leaves the trie. Equal to the largest, over the
    /// prefixes `p`, of `min(p.prefix_len, common_prefix_len(addr, p))`;
    /// 0 for an empty RIB.
    pub fn radix_depth(&self, addr: A) -> u8 {
        if self.routes == 0 {
            return 0;
        }
        let mut current = ROOT;
        loop {
            let node = &self.nodes[current as usize];
            let prefix_len = node.prefix_len;
            if prefix_len == A::BITS {
                return prefix_len;
            }
            // A subtree of withdrawn nodes kept holds no prefix: the walk
            // leaves the trie as if it were not there.
            let child = node.children[addr.bit(prefix_len)];
            if child == NIL || !self.holds_route(child) {
                return prefix_len;
            }
            // The compressed chain down to the child is in the binary
            // trie; `addr` follows it as far as they agree.
            let below = self.nodes[child as usize].prefix();
            if !below.contains(addr) {
                return addr.common_prefix_len(below.addr()).min(below.prefix_len());
            }
            current = child;
        }
    }

    /// Whether a route is at or below node `index`.
    fn holds_route(&self, index: u32) -> bool {
        let node = &self.nodes[index as usize];
        node.is_route() || node.children.iter().any(|&child| child != NIL && self.holds_route(child))
    }

    /// Longest-prefix match: the next hop for `addr`, `NO_ROUTE` if none.
    pub fn lookup(&self, addr: A) -> NextHop {
        self.lookup_prefix(addr).map_or(NO_ROUTE, |(_, next_hop)| next_hop)
    }

    /// Every route in address order (a prefix before the prefixes it covers).
    pub fn iter(&self) -> impl Iterator<Item = (Prefix<A>, NextHop)> + '_ {
        let mut stack = vec![ROOT];
        std::iter::from_fn(move || {
            while let Some(index) = stack.pop() {
                let node = &self.nodes[index as usize];
                for &child in node.children.iter().rev() {
                    if child != NIL {
                        stack.push(child);
                    }
                }
                if node.is_route() {
                    return Some((node.prefix(), node.next_hop));
                }
            }
            None
        })
    }

    /// Calls `visit(first_address, next_hop)` for each maximal run of equal
    /// effective next hop inside `[first, last]`, in address order. The first
    /// call starts at `first`; each run ends where the next begins (the last
    /// at `last`). Adjacent runs always differ in next hop.
    pub fn for_each_run(&self, first: A, last: A, mut visit: impl FnMut(A, NextHop)) {
        if first > last {
            return;
        }
        let mut sink = RunSink { pending: None, last_emitted: None, visit: &mut visit };
        self.walk(ROOT, NO_ROUTE, first, last, &mut sink);
        sink.finish();
    }

    /// The maximal runs of equal next hop inside `[first, last]` as ranges.
    pub fn ranges(&self, first: A, last: A) -> Vec<Range<A>> {
        let mut out = Vec::new();
        self.for_each_range(first, last, |range| out.push(range));
        out
    }

    /// Like [`Rib::for_each_run`], with each run's last address given.
    pub fn for_each_range(&self, first: A, last: A, mut visit: impl FnMut(Range<A>)) {
        let mut previous: Option<(A, NextHop)> = None;
        self.for_each_run(first, last, |start, next_hop| {
            if let Some((run_first, run_hop)) = previous {
                visit(Range { first: run_first, last: start.checked_prev().unwrap(), next_hop: run_hop });
            }
            previous = Some((start, next_hop));
        });
        if let Some((run_first, run_hop)) = previous {
            visit(Range { first: run_first, last, next_hop: run_hop });
        }
    }

    /// Calls `visit` for each maximal interval of `prefix`'s addresses that
    /// no route strictly inside `prefix` covers, in address order, with
    /// their one next hop: `prefix`'s route, or if it is not a route, the
    /// route covering it (`NO_ROUTE` if none).
    ///
    /// When the routes of a batch change, an address whose answer changed
    /// lies in such an interval of a changed prefix, the longest changed one
    /// covering it (a longer route covering it is unchanged and answers
    /// before and after). So an updater need only rewrite these intervals,
    /// and knows their answer without a walk: for a default route under a
    /// full table, the gaps between the topmost more specific routes, not
    /// the whole address space. Costs the visits of the nodes around its
    /// gaps (a subtree that routes cover whole, a node's `full` flag, is
    /// skipped without a look inside), from `prefix`'s node when it has one
    /// (a route, or a withdrawn route still kept: the index finds it), or
    /// else after a walk down to `prefix`.
    pub fn for_each_exposed(&self, prefix: Prefix<A>, mut visit: impl FnMut(Range<A>)) {
        let (top, next_hop) = match self.find(prefix, self.index.tag(prefix)) {
            Some(node) if self.nodes[node as usize].is_route() => (Some(node), self.nodes[node as usize].next_hop),
            Some(node) => (Some(node), self.cover_hop(node)),
            None => self.exposed_top(prefix),
        };
        let mut cursor = Some(prefix.first());
        let mut gap = |first: A, last: A| visit(Range { first, last, next_hop });
        if let Some(top) = top {
            self.exposed_walk(top, prefix, &mut cursor, &mut gap);
        }
        if let Some(at) = cursor.filter(|&at| at <= prefix.last()) {
            gap(at, prefix.last());
        }
    }

    /// The topmost node inside `prefix`, if any, and the next hop of the
    /// last route covering `prefix` (`prefix`'s own included), by a walk
    /// from the root: every node on the way down covers `prefix`.
    fn exposed_top(&self, prefix: Prefix<A>) -> (Option<u32>, NextHop) {
        let mut current = ROOT;
        let mut next_hop = NO_ROUTE;
        let top = loop {
            let node = &self.nodes[current as usize];
            if node.is_route() && node.prefix().covers(&prefix) {
                next_hop = node.next_hop;
            }
            if prefix.covers(&node.prefix()) {
                break Some(current);
            }
            let child = node.children[prefix.addr().bit(node.prefix_len)];
            if child == NIL {
                break None;
            }
            let child_prefix = self.nodes[child as usize].prefix();
            if !child_prefix.covers(&prefix) && !prefix.covers(&child_prefix) {
                break None;
            }
            current = child;
        };
        (top, next_hop)
    }

    /// [`Rib::for_each_exposed`] below node `index` (inside `outer`):
    /// `cursor` is the first address not yet visited or blocked (`None`
    /// past the end of the address space).
    fn exposed_walk(&self, index: u32, outer: Prefix<A>, cursor: &mut Option<A>, visit: &mut impl FnMut(A, A)) {
        let node = &self.nodes[index as usize];
        if node.full() && !node.is(outer) {
            // Routes at or below a node strictly inside `outer` cover it.
            let prefix = node.prefix();
            if let Some(at) = *cursor {
                if at < prefix.first() {
                    visit(at, prefix.first().checked_prev().unwrap());
                }
            }
            *cursor = prefix.last().checked_next();
            return;
        }
        for child in node.children {
            if child != NIL {
                self.exposed_walk(child, outer, cursor, visit);
            }
        }
    }

    fn walk<F: FnMut(A, NextHop)>(
        &self,
        index: u32,
        inherited: NextHop,
        first: A,
        last: A,
        sink: &mut RunSink<'_, A, F>,
    ) {
        let node = &self.nodes[index as usize];
        let prefix = node.prefix();
        let (node_first, node_last) = (prefix.first(), prefix.last());
        if node_last < first || node_first > last {
            return;
        }
        let effective = if node.is_route() { node.next_hop } else { inherited };
        sink.point(node_first.max(first), effective);
        for (side, child) in node.children.into_iter().enumerate() {
            if child == NIL {
                continue;
            }
            // A half of the node outside [first, last] holds nothing to
            // visit (its after-point is at most a repeat of one already
            // made): skip it without loading the child.
            let len = prefix.prefix_len();
            let half_first = if side == 1 { node_first | A::ONE << u32::from(A::BITS - 1 - len) } else { node_first };
            let half_last = half_first | !A::mask(len + 1);
            if half_last < first || half_first > last {
                continue;
            }
            self.walk(child, effective, first, last, sink);
            if let Some(after) = self.nodes[child as usize].prefix().last().checked_next() {
                if after <= last && after <= node_last && after >= first {
                    sink.point(after, effective);
                }
            }
        }
    }
}

/// Collects change points, coalescing equal neighbours and letting a later
/// point at the same address replace an earlier one.
struct RunSink<'v, A: Address, F: FnMut(A, NextHop)> {
    pending: Option<(A, NextHop)>,
    last_emitted: Option<NextHop>,
    visit: &'v mut F,
}

impl<A: Address, F: FnMut(A, NextHop)> RunSink<'_, A, F> {
    #[inline]
    fn point(&mut self, at: A, next_hop: NextHop) {
        match &mut self.pending {
            Some((pending_at, pending_hop)) if *pending_at == at => *pending_hop = next_hop,
            _ => {
                self.flush();
                self.pending = Some((at, next_hop));
            }
        }
    }

    fn flush(&mut self) {
        if let Some((at, next_hop)) = self.pending.take() {
            if self.last_emitted != Some(next_hop) {
                (self.visit)(at, next_hop);
                self.last_emitted = Some(next_hop);
            }
        }
    }

    fn finish(&mut self) {
        self.flush();
    }
}

impl<A: Address> FromIterator<(Prefix<A>, NextHop)> for Rib<A> {
    fn from_iter<I: IntoIterator<Item = (Prefix<A>, NextHop)>>(routes: I) -> Self {
        let mut rib = Rib::new();
        for (prefix, next_hop) in routes {
            rib.insert(prefix, next_hop);
        }
        rib
    }
}

/// Test support: a RIB of `routes` written as text (panics on a malformed
/// prefix).
#[cfg(test)]
pub(crate) fn rib_of<A: Address>(routes: &[(&str, NextHop)]) -> Rib<A> {
    routes.iter().map(|&(prefix, next_hop)| (crate::addr::p(prefix), next_hop)).collect()
}
