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
//! Nodes live in one arena (`Vec`) and refer to each other by `u32` index;
//! freed slots are reused. Besides exact get, insert/replace and remove, the
//! RIB answers longest-prefix match ([`Rib::lookup`]) and walks the disjoint
//! address ranges of the whole space or any sub-range with their effective
//! next hop ([`Rib::for_each_range`]), from which the range-based engines
//! (DXR) build their chunks.

use crate::addr::{Address, Prefix};
use crate::{NextHop, NO_ROUTE};

const NIL: u32 = u32::MAX;
const ROOT: u32 = 0;

#[derive(Clone, Debug)]
struct Node<A: Address> {
    prefix: Prefix<A>,
    /// `NO_ROUTE` for glue nodes (and for the root without a default route).
    next_hop: NextHop,
    children: [u32; 2],
    /// Routes at or below the node cover every address of its prefix: it
    /// is a route, or both halves of its prefix are such nodes. Lets
    /// [`Rib::for_each_exposed`] skip what hides no gap.
    full: bool,
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
    nodes: Vec<Node<A>>,
    free: Vec<u32>,
    routes: usize,
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
        Rib {
            nodes: vec![Node { prefix: Prefix::default_route(), next_hop: NO_ROUTE, children: [NIL; 2], full: false }],
            free: Vec::new(),
            routes: 0,
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

    /// Number of trie nodes, glue included (for memory reports).
    pub fn node_count(&self) -> usize {
        self.nodes.len() - self.free.len()
    }

    /// Bytes the trie's arena occupies.
    pub fn footprint(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node<A>>() + self.free.capacity() * 4
    }

    fn alloc(&mut self, prefix: Prefix<A>, next_hop: NextHop) -> u32 {
        let node = Node { prefix, next_hop, children: [NIL; 2], full: next_hop != NO_ROUTE };
        if let Some(index) = self.free.pop() {
            self.nodes[index as usize] = node;
            index
        } else {
            let index = u32::try_from(self.nodes.len()).expect("RIB arena exceeds 2^32 nodes");
            self.nodes.push(node);
            index
        }
    }

    /// Sets the route for `prefix`; returns the next hop it replaced, if any.
    ///
    /// # Panics
    /// If `next_hop` is [`NO_ROUTE`]; use [`Rib::remove`] to withdraw.
    pub fn insert(&mut self, prefix: Prefix<A>, next_hop: NextHop) -> Option<NextHop> {
        assert_ne!(next_hop, NO_ROUTE, "next hop 0 means no route; use remove()");
        let mut path = Path::default();
        let mut current = ROOT;
        let replaced = loop {
            path.push(current);
            let node = &self.nodes[current as usize];
            if node.prefix == prefix {
                let old = node.next_hop;
                self.nodes[current as usize].next_hop = next_hop;
                if old == NO_ROUTE {
                    self.routes += 1;
                    break None;
                }
                break Some(old);
            }
            // `node` strictly covers `prefix` here.
            let side = prefix.addr().bit(node.prefix.prefix_len());
            let child = node.children[side];
            if child == NIL {
                let leaf = self.alloc(prefix, next_hop);
                self.nodes[current as usize].children[side] = leaf;
                self.routes += 1;
                break None;
            }
            let child_prefix = self.nodes[child as usize].prefix;
            if child_prefix.covers(&prefix) {
                current = child;
                continue;
            }
            let common = prefix
                .addr()
                .common_prefix_len(child_prefix.addr())
                .min(prefix.prefix_len())
                .min(child_prefix.prefix_len());
            let inserted = if common == prefix.prefix_len() {
                // The new prefix covers the child: it goes in between.
                let new = self.alloc(prefix, next_hop);
                self.nodes[new as usize].children[child_prefix.addr().bit(common)] = child;
                new
            } else {
                // They diverge: a glue node at the common prefix holds both.
                let glue = self.alloc(Prefix::truncating(prefix.addr(), common), NO_ROUTE);
                let leaf = self.alloc(prefix, next_hop);
                let glue_node = &mut self.nodes[glue as usize];
                glue_node.children[child_prefix.addr().bit(common)] = child;
                glue_node.children[prefix.addr().bit(common)] = leaf;
                self.refresh_full(glue);
                glue
            };
            self.nodes[current as usize].children[side] = inserted;
            self.routes += 1;
            break None;
        };
        self.refresh_path(&path);
        replaced
    }

    /// Withdraws the route for exactly `prefix`; returns its next hop, if any.
    pub fn remove(&mut self, prefix: Prefix<A>) -> Option<NextHop> {
        // The nodes from the root down to `prefix`'s.
        let mut path = Path::default();
        let mut current = ROOT;
        loop {
            path.push(current);
            let node = &self.nodes[current as usize];
            if node.prefix == prefix {
                break;
            }
            if !node.prefix.covers(&prefix) || node.prefix.prefix_len() == A::BITS {
                return None;
            }
            let child = node.children[prefix.addr().bit(node.prefix.prefix_len())];
            if child == NIL || !self.nodes[child as usize].prefix.covers(&prefix) {
                return None;
            }
            current = child;
        }
        let old = self.nodes[current as usize].next_hop;
        if old == NO_ROUTE {
            return None;
        }
        self.nodes[current as usize].next_hop = NO_ROUTE;
        self.routes -= 1;
        // Splice out the node, and a glue parent left with one child.
        while let [.., parent, node] = path.nodes[..path.len] {
            let [left, right] = self.nodes[node as usize].children;
            if self.nodes[node as usize].next_hop != NO_ROUTE || (left != NIL && right != NIL) {
                break;
            }
            let replacement = if left != NIL { left } else { right };
            let side = prefix.addr().bit(self.nodes[parent as usize].prefix.prefix_len());
            self.nodes[parent as usize].children[side] = replacement;
            self.free.push(node);
            path.len -= 1;
        }
        self.refresh_path(&path);
        Some(old)
    }

    /// Recomputes [`Node::full`] of node `index` from its children's.
    fn refresh_full(&mut self, index: u32) {
        let node = &self.nodes[index as usize];
        let half = |child: u32| {
            child != NIL && {
                let child = &self.nodes[child as usize];
                child.full && child.prefix.prefix_len() == node.prefix.prefix_len() + 1
            }
        };
        let full = node.next_hop != NO_ROUTE || (half(node.children[0]) && half(node.children[1]));
        self.nodes[index as usize].full = full;
    }

    /// Recomputes [`Node::full`] along `path`, bottom up.
    fn refresh_path(&mut self, path: &Path) {
        for &index in path.nodes[..path.len].iter().rev() {
            self.refresh_full(index);
        }
    }

    /// The next hop stored for exactly `prefix`.
    pub fn get(&self, prefix: Prefix<A>) -> Option<NextHop> {
        let mut current = ROOT;
        loop {
            let node = &self.nodes[current as usize];
            if node.prefix == prefix {
                return (node.next_hop != NO_ROUTE).then_some(node.next_hop);
            }
            if node.prefix.prefix_len() >= prefix.prefix_len() {
                return None;
            }
            let child = node.children[prefix.addr().bit(node.prefix.prefix_len())];
            if child == NIL || !self.nodes[child as usize].prefix.covers(&prefix) {
                return None;
            }
            current = child;
        }
    }

    /// Longest-prefix match: the matching prefix and its next hop.
    pub fn lookup_prefix(&self, addr: A) -> Option<(Prefix<A>, NextHop)> {
        let mut best = None;
        let mut current = ROOT;
        loop {
            let node = &self.nodes[current as usize];
            if node.next_hop != NO_ROUTE {
                best = Some((node.prefix, node.next_hop));
            }
            if node.prefix.prefix_len() == A::BITS {
                return best;
            }
            let child = node.children[addr.bit(node.prefix.prefix_len())];
            if child == NIL || !self.nodes[child as usize].prefix.contains(addr) {
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
            let prefix_len = node.prefix.prefix_len();
            if prefix_len == A::BITS {
                return prefix_len;
            }
            let child = node.children[addr.bit(prefix_len)];
            if child == NIL {
                return prefix_len;
            }
            // The compressed chain down to the child is in the binary
            // trie; `addr` follows it as far as they agree.
            let below = self.nodes[child as usize].prefix;
            if !below.contains(addr) {
                return addr.common_prefix_len(below.addr()).min(below.prefix_len());
            }
            current = child;
        }
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
                if node.next_hop != NO_ROUTE {
                    return Some((node.prefix, node.next_hop));
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
    /// the whole address space. Costs the walk down to `prefix` and visits
    /// of the nodes around its gaps: a subtree that routes cover whole
    /// (a node's `full` flag) is skipped without a look inside.
    pub fn for_each_exposed(&self, prefix: Prefix<A>, mut visit: impl FnMut(Range<A>)) {
        // The topmost node inside `prefix`: every node on the way down
        // covers `prefix`, and the last route among them (`prefix`'s own
        // included) answers.
        let mut current = ROOT;
        let mut next_hop = NO_ROUTE;
        let top = loop {
            let node = &self.nodes[current as usize];
            if node.next_hop != NO_ROUTE && node.prefix.covers(&prefix) {
                next_hop = node.next_hop;
            }
            if prefix.covers(&node.prefix) {
                break Some(current);
            }
            let child = node.children[prefix.addr().bit(node.prefix.prefix_len())];
            if child == NIL {
                break None;
            }
            let child_prefix = self.nodes[child as usize].prefix;
            if !child_prefix.covers(&prefix) && !prefix.covers(&child_prefix) {
                break None;
            }
            current = child;
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

    /// [`Rib::for_each_exposed`] below node `index` (inside `outer`):
    /// `cursor` is the first address not yet visited or blocked (`None`
    /// past the end of the address space).
    fn exposed_walk(&self, index: u32, outer: Prefix<A>, cursor: &mut Option<A>, visit: &mut impl FnMut(A, A)) {
        let node = &self.nodes[index as usize];
        if node.full && node.prefix != outer {
            // Routes at or below a node strictly inside `outer` cover it.
            if let Some(at) = *cursor {
                if at < node.prefix.first() {
                    visit(at, node.prefix.first().checked_prev().unwrap());
                }
            }
            *cursor = node.prefix.last().checked_next();
            return;
        }
        for &child in &node.children {
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
        let (node_first, node_last) = (node.prefix.first(), node.prefix.last());
        if node_last < first || node_first > last {
            return;
        }
        let effective = if node.next_hop != NO_ROUTE { node.next_hop } else { inherited };
        sink.point(node_first.max(first), effective);
        for (side, &child) in node.children.iter().enumerate() {
            if child == NIL {
                continue;
            }
            // A half of the node outside [first, last] holds nothing to
            // visit (its after-point is at most a repeat of one already
            // made): skip it without loading the child.
            let len = node.prefix.prefix_len();
            let half_first = if side == 1 { node_first | A::ONE << u32::from(A::BITS - 1 - len) } else { node_first };
            let half_last = half_first | !A::mask(len + 1);
            if half_last < first || half_first > last {
                continue;
            }
            self.walk(child, effective, first, last, sink);
            if let Some(after) = self.nodes[child as usize].prefix.last().checked_next() {
                if after <= last && after <= node_last && after >= first {
                    sink.point(after, effective);
                }
            }
        }
    }
}

/// The nodes from the root down to one, without an allocation (a path has
/// at most one node per prefix length).
struct Path {
    nodes: [u32; 129],
    len: usize,
}

impl Default for Path {
    fn default() -> Self {
        Path { nodes: [NIL; 129], len: 0 }
    }
}

impl Path {
    fn push(&mut self, index: u32) {
        self.nodes[self.len] = index;
        self.len += 1;
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

#[cfg(test)]
mod tests {
    use super::*;

    use crate::addr::p;

    #[test]
    fn radix_depth_is_the_deepest_agreement_with_any_prefix() {
        let brute = |rib: &Rib4, addr: u32| {
            rib.iter().map(|(p, _)| addr.common_prefix_len(p.addr()).min(p.prefix_len())).max().unwrap_or(0)
        };
        let mut rng = crate::random::XorShift32::new(7);
        for round in 0..40 {
            let mut rib = Rib4::new();
            // Prefixes clustered under 10/8 so that they nest and branch.
            for _ in 0..1 + round * 3 {
                let len = (rng.next() % 33) as u8;
                let addr = 0x0a00_0000 | (rng.next() & if round % 2 == 0 { 0x00ff_ffff } else { 0x0003_0f0f });
                rib.insert(Prefix::truncating(addr, len), 1);
            }
            for _ in 0..300 {
                let addr =
                    if rng.next().is_multiple_of(2) { rng.next() } else { 0x0a00_0000 | (rng.next() & 0x0003_0fff) };
                assert_eq!(rib.radix_depth(addr), brute(&rib, addr), "round {round} {addr:#x}");
            }
        }
        assert_eq!(Rib4::new().radix_depth(1), 0);
        let mut host = Rib4::new();
        host.insert(p("10.0.0.1/32"), 1);
        assert_eq!(host.radix_depth(0x0a00_0001), 32);
        assert_eq!(host.radix_depth(0x0a00_0000), 31);
    }

    #[test]
    fn longest_match_and_exact_get() {
        let mut rib = Rib4::new();
        assert_eq!(rib.insert(p("10.0.0.0/8"), 1), None);
        assert_eq!(rib.insert(p("10.1.0.0/16"), 2), None);
        assert_eq!(rib.insert(p("10.1.2.0/24"), 3), None);
        assert_eq!(rib.insert(p("10.128.0.0/9"), 4), None);
        assert_eq!(rib.insert(p("10.1.0.0/16"), 5), Some(2));
        assert_eq!(rib.len(), 4);
        assert_eq!(rib.lookup(0x0a01_0203), 3);
        assert_eq!(rib.lookup(0x0a01_0303), 5);
        assert_eq!(rib.lookup(0x0a02_0000), 1);
        assert_eq!(rib.lookup(0x0a80_0000), 4);
        assert_eq!(rib.lookup(0x0b00_0000), NO_ROUTE);
        assert_eq!(rib.get(p("10.1.0.0/16")), Some(5));
        assert_eq!(rib.get(p("10.1.0.0/17")), None);
        assert_eq!(rib.get(p("10.0.0.0/7")), None);
        assert_eq!(rib.lookup_prefix(0x0a01_0203).unwrap().0, p("10.1.2.0/24"));
    }

    #[test]
    fn remove_splices_glue() {
        let mut rib = Rib4::new();
        rib.insert(p("10.0.0.0/24"), 1);
        rib.insert(p("10.0.1.0/24"), 2); // glue 10.0.0.0/23 appears
        rib.insert(p("10.0.2.0/24"), 3);
        assert_eq!(rib.remove(p("10.0.0.0/23")), None);
        assert_eq!(rib.remove(p("10.0.1.0/24")), Some(2));
        assert_eq!(rib.remove(p("10.0.1.0/24")), None);
        assert_eq!(rib.lookup(0x0a00_0100), NO_ROUTE);
        assert_eq!(rib.lookup(0x0a00_0001), 1);
        assert_eq!(rib.remove(p("10.0.0.0/24")), Some(1));
        assert_eq!(rib.remove(p("10.0.2.0/24")), Some(3));
        assert!(rib.is_empty());
        assert_eq!(rib.node_count(), 1, "only the root remains");
    }

    #[test]
    fn default_route_and_host_routes() {
        let mut rib: Rib4 = rib_of(&[("0.0.0.0/0", 7), ("255.255.255.255/32", 8), ("0.0.0.0/32", 9)]);
        assert_eq!(rib.lookup(0), 9);
        assert_eq!(rib.lookup(1), 7);
        assert_eq!(rib.lookup(u32::MAX), 8);
        assert_eq!(rib.lookup(u32::MAX - 1), 7);
        let ranges = rib.ranges(0, u32::MAX);
        assert_eq!(
            ranges,
            vec![
                Range { first: 0, last: 0, next_hop: 9 },
                Range { first: 1, last: u32::MAX - 1, next_hop: 7 },
                Range { first: u32::MAX, last: u32::MAX, next_hop: 8 },
            ]
        );
        assert_eq!(rib.remove(p("0.0.0.0/0")), Some(7));
        assert_eq!(rib.lookup(1), NO_ROUTE);
    }

    #[test]
    fn ranges_merge_and_cover_subranges() {
        let mut rib = Rib4::new();
        rib.insert(p("10.0.0.0/8"), 1);
        rib.insert(p("10.1.0.0/16"), 1); // same hop: no run boundary
        rib.insert(p("10.2.0.0/16"), 2);
        rib.insert(p("10.2.0.0/24"), 1);
        let all = rib.ranges(0, u32::MAX);
        assert_eq!(
            all,
            vec![
                Range { first: 0, last: 0x09ff_ffff, next_hop: 0 },
                Range { first: 0x0a00_0000, last: 0x0a02_00ff, next_hop: 1 },
                Range { first: 0x0a02_0100, last: 0x0a02_ffff, next_hop: 2 },
                Range { first: 0x0a03_0000, last: 0x0aff_ffff, next_hop: 1 },
                Range { first: 0x0b00_0000, last: u32::MAX, next_hop: 0 },
            ]
        );
        let sub = rib.ranges(0x0a02_0080, 0x0a02_0180);
        assert_eq!(
            sub,
            vec![
                Range { first: 0x0a02_0080, last: 0x0a02_00ff, next_hop: 1 },
                Range { first: 0x0a02_0100, last: 0x0a02_0180, next_hop: 2 },
            ]
        );
        assert_eq!(rib.ranges(5, 5), vec![Range { first: 5, last: 5, next_hop: 0 }]);
    }

    #[test]
    fn iter_lists_routes_in_order() {
        let routes = [(p("10.0.0.0/8"), 1), (p("10.0.0.0/16"), 2), (p("9.0.0.0/8"), 3)];
        let rib: Rib4 = routes.iter().copied().collect();
        let listed: Vec<_> = rib.iter().collect();
        assert_eq!(listed, vec![(p("9.0.0.0/8"), 3), (p("10.0.0.0/8"), 1), (p("10.0.0.0/16"), 2)]);
    }

    fn exposed(rib: &Rib4, prefix: &str) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        rib.for_each_exposed(p(prefix), |range| {
            assert_eq!(range.next_hop, rib.lookup(range.first), "{prefix}: {range:?}");
            out.push((range.first, range.last))
        });
        out
    }

    #[test]
    fn exposed_intervals_are_the_gaps_between_topmost_routes_inside() {
        let rib: Rib4 = rib_of(&[
            ("0.0.0.0/0", 1),
            ("0.0.0.0/8", 2),
            ("10.0.0.0/8", 3),
            ("10.1.0.0/16", 4),
            ("10.128.0.0/24", 5),
            ("10.200.0.0/16", 6), // with 10.128.0.0/24: glue 10.128.0.0/9
            ("255.255.255.255/32", 7),
        ]);
        let whole = vec![(0x0100_0000, 0x09ff_ffff), (0x0b00_0000, 0xffff_fffe)];
        assert_eq!(exposed(&rib, "0.0.0.0/0"), whole);
        assert_eq!(
            exposed(&rib, "10.0.0.0/8"),
            vec![
                (0x0a00_0000, 0x0a00_ffff),
                (0x0a02_0000, 0x0a7f_ffff),
                (0x0a80_0100, 0x0ac7_ffff),
                (0x0ac9_0000, 0x0aff_ffff)
            ]
        );
        // A prefix that is not a route, or is glue, or covers no node.
        assert_eq!(exposed(&rib, "10.128.0.0/9"), vec![(0x0a80_0100, 0x0ac7_ffff), (0x0ac9_0000, 0x0aff_ffff)]);
        assert_eq!(exposed(&rib, "10.0.0.0/9"), vec![(0x0a00_0000, 0x0a00_ffff), (0x0a02_0000, 0x0a7f_ffff)]);
        assert_eq!(exposed(&rib, "10.1.2.0/24"), vec![(0x0a01_0200, 0x0a01_02ff)]);
        assert_eq!(exposed(&rib, "12.0.0.0/8"), vec![(0x0c00_0000, 0x0cff_ffff)]);
        assert_eq!(exposed(&rib, "10.1.0.0/16"), vec![(0x0a01_0000, 0x0a01_ffff)]);
        assert_eq!(exposed(&rib, "255.255.255.255/32"), vec![(u32::MAX, u32::MAX)]);
        assert_eq!(exposed(&rib, "255.255.255.254/31"), vec![(u32::MAX - 1, u32::MAX - 1)]);
        assert_eq!(exposed(&Rib4::new(), "0.0.0.0/0"), vec![(0, u32::MAX)]);
    }

    /// Checks every reachable node's [`Node::full`] against its
    /// definition; returns the flag of node `index`.
    fn check_full(rib: &Rib4, index: u32) -> bool {
        let node = &rib.nodes[index as usize];
        let halves = node.children.map(|child| {
            child != NIL
                && check_full(rib, child)
                && rib.nodes[child as usize].prefix.prefix_len() == node.prefix.prefix_len() + 1
        });
        let full = node.next_hop != NO_ROUTE || halves == [true, true];
        assert_eq!(node.full, full, "{}", node.prefix);
        full
    }

    proptest::proptest! {
        /// Against the definition: the addresses of the prefix minus the
        /// union of the routes strictly inside it.
        #[test]
        fn exposed_intervals_match_their_definition(
            routes in proptest::collection::vec((0u32..64, proptest::prop_oneof![0u8..=8, 0u8..=32], 1u32..4), 0..40),
            withdrawn in proptest::collection::vec(0usize..40, 0..20),
            outer in (0u32..64, 0u8..=32),
        ) {
            // The top 6 bits from `top` (short prefixes are often siblings,
            // whose parent routes cover whole), the rest spread.
            let spread = |top: u32| top << 26 | top.wrapping_mul(0x9e37_79b9) >> 6;
            let prefix_of = |(top, len): (u32, u8)| Prefix::truncating(spread(top), len);
            let mut rib: Rib4 = routes.iter().map(|&(top, len, hop)| (prefix_of((top, len)), hop)).collect();
            for &index in &withdrawn {
                if let Some(&(top, len, _)) = routes.get(index) {
                    rib.remove(prefix_of((top, len)));
                }
            }
            check_full(&rib, ROOT);
            let outer = prefix_of(outer);
            let mut inside: Vec<(u32, u32)> = rib
                .iter()
                .filter(|(prefix, _)| outer.covers(prefix) && *prefix != outer)
                .map(|(prefix, _)| (prefix.first(), prefix.last()))
                .collect();
            inside.sort_unstable();
            let mut expected = Vec::new();
            let mut cursor = Some(outer.first());
            for (first, last) in inside {
                let Some(at) = cursor else { break };
                if at < first {
                    expected.push((at, first - 1));
                }
                if last >= at {
                    cursor = last.checked_add(1);
                }
            }
            if let Some(at) = cursor.filter(|&at| at <= outer.last()) {
                expected.push((at, outer.last()));
            }
            let mut found = Vec::new();
            rib.for_each_exposed(outer, |range| {
                // Every address of the interval has the one next hop (the
                // middle one as first + half the width: halving both ends
                // and adding them falls before an interval of one odd address).
                for at in [range.first, range.first + (range.last - range.first) / 2, range.last] {
                    assert_eq!(rib.lookup(at), range.next_hop, "{range:?}");
                }
                found.push((range.first, range.last));
            });
            proptest::prop_assert_eq!(found, expected);
        }
    }
}
