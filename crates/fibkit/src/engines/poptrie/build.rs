//! Building a Poptrie from the RIB.
//!
//! 1. **Boundary points.** The RIB becomes a sorted list of points
//!    `(address, next hop)`, each next hop holding up to the next point:
//!    - with route aggregation, the RIB's maximal runs of equal next hop
//!      ([`Rib::for_each_run`]): a slot is then a leaf exactly when its
//!      addresses share one next hop, which is what merging every set of
//!      prefixes that does not change a lookup result leaves;
//!    - without it, the first address of every prefix and the address after
//!      its last: a slot is then a leaf exactly when no prefix longer than
//!      the slot lies inside it (plain prefix expansion).
//! 2. **Arrays, depth first.** The direct array (2^S blocks) or the root
//!    node; each node classifies its 64 slots against the points (no point
//!    strictly inside the slot: a leaf, else an internal child), appends its
//!    leaves (one per run of equal next hops, the *leafvec*; for the basic
//!    layout one per leaf slot) and the block
//!    of its children, then fills each child from the child's own range of
//!    points. `Builder::fill_node` builds any subtree from its first
//!    address, its level and the points of its range alone (the RIB's runs
//!    from that first address, [`Rib::for_each_run`]), which is what an
//!    incremental update (section 3.5) needs.
//! 3. **Route aggregation's prefix count.** [`aggregate`] lists the
//!    aggregated prefixes themselves; the builder only needs their count.
//!    Building without aggregation from the aggregated prefixes gives the
//!    very arrays the aggregated build gives (a test checks it).

use std::time::Instant;

use crate::addr::{Address, Prefix};
use crate::error::{BuildError, Limit, LimitExceeded};
use crate::fib::BuildOptions;
use crate::mem::{try_copy_grown, try_push, try_reserve, try_with_capacity, AllocError};
use crate::rib::Rib;
use crate::{NextHop, NO_ROUTE};

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize};

use super::{BuildSummary, Leaf, Node, NodeLayout, Poptrie, DIRECT_LEAF, DIRECT_MAX, FANOUT, K};

/// Options of the Poptrie builder beyond [`BuildOptions`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoptrieOptions {
    /// Route aggregation (section 3 of the paper): merge prefixes that do
    /// not change any lookup result. On by default, as in the paper.
    pub aggregate: bool,
}

impl Default for PoptrieOptions {
    fn default() -> Self {
        PoptrieOptions { aggregate: true }
    }
}

/// Sorted change points: `hops[i]` holds from `starts[i]` up to
/// `starts[i + 1] - 1` (the last one up to the end of the space);
/// `starts[0]` is address zero.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Boundaries<A: Address> {
    starts: Vec<A>,
    hops: Vec<NextHop>,
}

impl<A: Address> Boundaries<A> {
    /// Adds a point; a point at the address of the previous one replaces it.
    fn push(&mut self, at: A, next_hop: NextHop) {
        if self.starts.last() == Some(&at) {
            *self.hops.last_mut().expect("starts and hops have one length") = next_hop;
        } else {
            debug_assert!(self.starts.last().is_none_or(|&last| last < at));
            self.starts.push(at);
            self.hops.push(next_hop);
        }
    }

    /// Forgets every point (keeping the buffers).
    pub(crate) fn clear(&mut self) {
        self.starts.clear();
        self.hops.clear();
    }

    /// Appends the start of a run, keeping runs maximal: a point at the
    /// address of the previous one replaces it, and a point repeating the
    /// next hop of the run before it adds nothing.
    pub(crate) fn push_run(&mut self, at: A, next_hop: NextHop) {
        if self.starts.last() == Some(&at) {
            self.starts.pop();
            self.hops.pop();
        }
        if self.hops.last() != Some(&next_hop) {
            debug_assert!(self.starts.last().is_none_or(|&last| last < at));
            self.starts.push(at);
            self.hops.push(next_hop);
        }
    }

    /// The first address and next hop of point `index`.
    pub(crate) fn point(&self, index: usize) -> (A, NextHop) {
        (self.starts[index], self.hops[index])
    }

    /// The RIB's maximal runs of equal next hop (route aggregation on).
    pub(crate) fn runs(rib: &Rib<A>) -> Self {
        let mut points = Boundaries::default();
        rib.for_each_run(A::ZERO, A::MAX, |at, next_hop| points.push(at, next_hop));
        points
    }

    /// The edges of every prefix (route aggregation off): its first address
    /// and the address after its last.
    pub(crate) fn edges(rib: &Rib<A>) -> Self {
        let mut points = Boundaries::default();
        points.push(A::ZERO, NO_ROUTE);
        // Routes covering the current position: (last address, next hop).
        let mut open: Vec<(A, NextHop)> = Vec::with_capacity(A::BITS as usize + 1);
        let close = |open: &mut Vec<(A, NextHop)>, points: &mut Boundaries<A>| {
            let (last, _) = open.pop().expect("an open route");
            if let Some(after) = last.checked_next() {
                points.push(after, open.last().map_or(NO_ROUTE, |&(_, next_hop)| next_hop));
            }
        };
        // Preorder: a prefix comes before the prefixes it covers.
        for (prefix, next_hop) in rib.iter() {
            while open.last().is_some_and(|&(last, _)| last < prefix.first()) {
                close(&mut open, &mut points);
            }
            points.push(prefix.first(), next_hop);
            open.push((prefix.last(), next_hop));
        }
        while !open.is_empty() {
            close(&mut open, &mut points);
        }
        points
    }

    pub(crate) fn len(&self) -> usize {
        self.starts.len()
    }

    /// The largest next hop any point holds.
    fn max_next_hop(&self) -> NextHop {
        self.hops.iter().copied().max().unwrap_or(NO_ROUTE)
    }

    /// Moves `point` forward to the point that holds at `addr` (`addr` must
    /// not lie before `starts[*point]`).
    #[inline]
    fn advance(&self, point: &mut usize, addr: A) {
        while *point + 1 < self.starts.len() && self.starts[*point + 1] <= addr {
            *point += 1;
        }
    }

    /// Whether `hops[point]` holds up to `last` (no point in between).
    #[inline]
    fn holds_through(&self, point: usize, last: A) -> bool {
        point + 1 == self.starts.len() || self.starts[point + 1] > last
    }
}

/// Lists the prefixes route aggregation leaves: the RIB's lookup results
/// from fewer prefixes, in address order.
///
/// Walking down the binary trie from `0/0`:
/// - a prefix whose addresses all share one next hop becomes that one
///   prefix, or nothing if the covering prefixes already give its next hop
///   (the prefixes below it are merged away);
/// - two halves whose top-level prefixes carry one next hop (each half
///   covered without a gap, more specifics inside aside) merge into their
///   parent with that next hop, and so on upwards (the paper's "merger of a
///   set of prefixes with the identical next hop that belong to a subtree
///   without any gap");
/// - a prefix with mixed next hops otherwise keeps its own route, unless the
///   covering prefixes already give it (removing redundant prefixes).
///
/// Each aggregated prefix contains a route of the RIB, so route aggregation
/// never adds prefixes (a property test checks the count).
pub fn aggregate<A: Address>(rib: &Rib<A>) -> Vec<(Prefix<A>, NextHop)> {
    let runs = Boundaries::runs(rib);
    let routes: Vec<(Prefix<A>, NextHop)> = rib.iter().collect();
    let mut walk = AggregateWalk { runs: &runs, cursor: 0, count: 0, prefixes: Some(Vec::new()) };
    walk.run(&routes);
    let mut prefixes = walk.prefixes.unwrap_or_default();
    prefixes.sort_unstable_by_key(|&(prefix, _)| (prefix.addr(), prefix.prefix_len()));
    prefixes
}

/// How many prefixes [`aggregate`] leaves, from the RIB's routes in
/// preorder and its runs.
fn aggregated_count<A: Address>(routes: &[(Prefix<A>, NextHop)], runs: &Boundaries<A>) -> usize {
    let mut walk = AggregateWalk { runs, cursor: 0, count: 0, prefixes: None };
    walk.run(routes);
    walk.count
}

/// `Some(a)` if both are `Some(a)`.
fn common_top(one: Option<NextHop>, other: Option<NextHop>) -> Option<NextHop> {
    match (one, other) {
        (Some(a), Some(b)) if a == b => Some(a),
        _ => None,
    }
}

/// One walk of the binary trie, depth first, in address order.
///
/// A visited prefix gets a *top*: the next hop the whole prefix can carry
/// (all its addresses' next hop, its halves' common top, or else its own
/// route), if any. Whether a prefix with a top is emitted depends on what
/// covers it: its parent's top if the parent has one; otherwise what the
/// RIB's covering routes give (where no top is set, the emitted covering
/// prefixes give just that, by induction from `0/0`). So each prefix's
/// emission is decided by its parent once both halves are visited, in one
/// pass.
struct AggregateWalk<'r, A: Address> {
    runs: &'r Boundaries<A>,
    /// Run holding at the last visited prefix's first address.
    cursor: usize,
    /// Prefixes emitted.
    count: usize,
    /// The emitted prefixes themselves, if wanted.
    prefixes: Option<Vec<(Prefix<A>, NextHop)>>,
}

impl<A: Address> AggregateWalk<'_, A> {
    fn run(&mut self, routes: &[(Prefix<A>, NextHop)]) {
        let root = Prefix::default_route();
        let top = self.visit(root, routes, NO_ROUTE);
        self.emit_unless(root, top, NO_ROUTE);
    }

    /// Emits `prefix` with `top` unless it has none or `covering` gives it.
    fn emit_unless(&mut self, prefix: Prefix<A>, top: Option<NextHop>, covering: NextHop) {
        if let Some(next_hop) = top.filter(|&next_hop| next_hop != covering) {
            self.count += 1;
            if let Some(prefixes) = &mut self.prefixes {
                prefixes.push((prefix, next_hop));
            }
        }
    }

    /// The next hop of every address of `prefix`, if they share one.
    fn uniform(&mut self, prefix: Prefix<A>) -> Option<NextHop> {
        self.runs.advance(&mut self.cursor, prefix.first());
        self.runs.holds_through(self.cursor, prefix.last()).then(|| self.runs.hops[self.cursor])
    }

    /// Visits `prefix` and emits what lies strictly inside it; returns its
    /// top. `routes` are the RIB's routes inside it (itself included), in
    /// preorder; `inherited` is what the RIB's covering routes give.
    fn visit(&mut self, prefix: Prefix<A>, routes: &[(Prefix<A>, NextHop)], inherited: NextHop) -> Option<NextHop> {
        if let Some(next_hop) = self.uniform(prefix) {
            return Some(next_hop);
        }
        let (own, inherited, inside) = match routes.first() {
            Some(&(route, next_hop)) if route == prefix => (Some(next_hop), next_hop, &routes[1..]),
            _ => (None, inherited, routes),
        };
        // Mixed next hops need a route strictly inside.
        let (Some(&(head, _)), Some(&(tail, _))) = (inside.first(), inside.last()) else {
            unreachable!("{prefix:?} has mixed next hops but no route inside");
        };
        let common = head.addr().common_prefix_len(tail.addr()).min(head.prefix_len()).min(tail.prefix_len());
        let len = prefix.prefix_len();
        if common > len {
            // Every route lies inside `below`; each binary node between has
            // one half without routes, uniform with `inherited`. Their tops
            // are all `inherited` (if `below`'s is) or none, so this prefix
            // carries `inherited` or its own route, which is `inherited`:
            // only `below` may need a prefix.
            let below = Prefix::truncating(head.addr(), common);
            let below_top = self.visit(below, inside, inherited);
            self.emit_unless(below, below_top, inherited);
            return common_top(below_top, Some(inherited)).or(own);
        }
        let split = inside.partition_point(|(route, _)| route.addr().bit(len) == 0);
        let low = Prefix::truncating(prefix.addr(), len + 1);
        let high = Prefix::truncating(prefix.addr() | (A::ONE << (u32::from(A::BITS) - 1 - u32::from(len))), len + 1);
        let low_top = self.visit(low, &inside[..split], inherited);
        let high_top = self.visit(high, &inside[split..], inherited);
        // Halves that agree override the own route (which they hide).
        let top = common_top(low_top, high_top).or(own);
        let covering = top.unwrap_or(inherited);
        self.emit_unless(low, low_top, covering);
        self.emit_unless(high, high_top, covering);
        top
    }
}

/// The boundary points and the prefix counts, before choosing a leaf width.
pub(crate) struct Prepared<A: Address> {
    points: Boundaries<A>,
    aggregated: bool,
    prefixes: usize,
    prefixes_aggregated: usize,
    start: Instant,
}

impl<A: Address> Prepared<A> {
    pub(crate) fn new(rib: &Rib<A>, options: &PoptrieOptions) -> Self {
        let start = Instant::now();
        let (points, prefixes_aggregated) = if options.aggregate {
            let runs = Boundaries::runs(rib);
            let routes: Vec<(Prefix<A>, NextHop)> = rib.iter().collect();
            let count = aggregated_count(&routes, &runs);
            (runs, count)
        } else {
            (Boundaries::edges(rib), rib.len())
        };
        Prepared { points, aggregated: options.aggregate, prefixes: rib.len(), prefixes_aggregated, start }
    }

    /// Whether the leaves must be 32 bits wide: the caller's largest next
    /// hop or the table's does not fit in 16.
    pub(super) fn needs_wide_leaves(&self, options: &BuildOptions) -> bool {
        options.max_next_hop.max(self.points.max_next_hop()) > NextHop::from(u16::MAX)
    }
}

/// Why the builder stopped.
#[derive(Debug)]
pub(crate) enum Stop {
    /// A figure of the table exceeds a field of the structure.
    Limit(LimitExceeded),
    /// The system refused the memory of the array named.
    Memory(&'static str, AllocError),
}

impl From<LimitExceeded> for Stop {
    fn from(limit: LimitExceeded) -> Self {
        Stop::Limit(limit)
    }
}

impl Stop {
    /// The error, refused by `engine`.
    pub(crate) fn named(self, engine: &str) -> BuildError {
        match self {
            Stop::Limit(limit) => limit.of(engine).into(),
            Stop::Memory(array, error) => BuildError::out_of_memory(engine, array, error),
        }
    }
}

/// The node array refused.
fn nodes_refused(error: AllocError) -> Stop {
    Stop::Memory("node array", error)
}

/// The leaf array refused.
fn leaves_refused(error: AllocError) -> Stop {
    Stop::Memory("leaf array", error)
}

/// Writes nodes and leaves, depth first; both arrays grow fallibly
/// ([`Stop::Memory`]).
struct Builder<'p, A: Address, L: Leaf> {
    points: &'p Boundaries<A>,
    nodes: Vec<Node>,
    leaves: Vec<L>,
    levels: u32,
    /// One leaf per run of equal next hops (else one per leaf slot, the
    /// basic Poptrie's, with every leaf slot marked in `leafvec`).
    leafvec: bool,
}

impl<A: Address, L: Leaf> Builder<'_, A, L> {
    /// Fills `nodes[index]` (already allocated) for the node whose slots
    /// start at `first`, `offset` key bits down, and its subtree; `point`
    /// is the point holding at `first`; `level` is its depth (1 for a root).
    fn fill_node(&mut self, index: usize, first: A, offset: u32, mut point: usize, level: u32) -> Result<(), Stop> {
        self.levels = self.levels.max(level);
        let bits = u32::from(A::BITS);
        let remaining = bits - offset;
        // Past the key's end the chunk is padded with zeros: slots then come
        // in groups of 2^pad that share one address.
        let (pad, span) = if remaining >= K { (0, remaining - K) } else { (K - remaining, 0) };
        let span_mask = !A::mask((bits - span) as u8);
        let mut child_first = [A::ZERO; FANOUT];
        let mut child_point = [0usize; FANOUT];
        let mut children = 0;
        let mut vector = 0u64;
        let mut leafvec = 0u64;
        let base0 = self.leaves.len();
        let mut previous: Option<NextHop> = None;
        let mut slot_first = first;
        for group in 0..FANOUT >> pad {
            let slot_last = slot_first | span_mask;
            self.points.advance(&mut point, slot_first);
            if self.points.holds_through(point, slot_last) {
                let next_hop = self.points.hops[point];
                let leaf = || {
                    L::from_next_hop(next_hop).ok_or_else(|| {
                        let field = format!("{}-bit leaves", L::BITS);
                        LimitExceeded::unnamed(Limit::NextHop, field, next_hop.into(), (1u64 << L::BITS) - 1)
                    })
                };
                if !self.leafvec {
                    // Algorithm 1: a leaf per slot, the 2^pad of a group too.
                    let slots = 1usize << pad;
                    leafvec |= (u64::MAX >> (64 - slots)) << (group << pad);
                    let leaf = leaf()?;
                    try_reserve(&mut self.leaves, slots).map_err(leaves_refused)?;
                    self.leaves.extend(std::iter::repeat_n(leaf, slots));
                } else if previous != Some(next_hop) {
                    leafvec |= 1u64 << (group << pad);
                    try_push(&mut self.leaves, leaf()?).map_err(leaves_refused)?;
                    previous = Some(next_hop);
                }
            } else {
                debug_assert_eq!(pad, 0, "a single address is always one leaf");
                vector |= 1u64 << group;
                child_first[children] = slot_first;
                child_point[children] = point;
                children += 1;
            }
            if let Some(next) = slot_last.checked_next() {
                slot_first = next;
            }
        }
        let base1 = self.nodes.len();
        if base1 + children > u32::MAX as usize || self.leaves.len() > u32::MAX as usize {
            let count = (base1 + children).max(self.leaves.len()) as u64;
            let limit = LimitExceeded::unnamed(Limit::Nodes, "32-bit node and leaf indexes", count, u32::MAX.into());
            return Err(limit.into());
        }
        try_reserve(&mut self.nodes, children).map_err(nodes_refused)?;
        self.nodes.resize(base1 + children, Node::default());
        self.nodes[index] = Node { vector, leafvec, base0: base0 as u32, base1: base1 as u32 };
        for child in 0..children {
            self.fill_node(base1 + child, child_first[child], offset + K, child_point[child], level + 1)?;
        }
        Ok(())
    }

    /// The direct array of 2^S entries and the subtrees it points to.
    fn fill_direct<const S: u32>(&mut self, direct_leaves: &mut usize) -> Result<Vec<u32>, Stop> {
        let mut direct = try_with_capacity(1 << S).map_err(|error| Stop::Memory("direct array", error))?;
        let span_mask = !A::mask(S as u8);
        let mut point = 0;
        let mut first = A::ZERO;
        for _ in 0..1usize << S {
            let last = first | span_mask;
            self.points.advance(&mut point, first);
            if self.points.holds_through(point, last) {
                let next_hop = self.points.hops[point];
                if next_hop > DIRECT_MAX {
                    return Err(direct_limit(Limit::NextHop, next_hop.into()).into());
                }
                direct.push(DIRECT_LEAF | next_hop);
                *direct_leaves += 1;
            } else {
                let index = self.nodes.len();
                if index > DIRECT_MAX as usize {
                    return Err(direct_limit(Limit::DirectIndex, index as u64).into());
                }
                try_push(&mut self.nodes, Node::default()).map_err(nodes_refused)?;
                self.fill_node(index, first, S, point, 1)?;
                direct.push(index as u32);
            }
            if let Some(next) = last.checked_next() {
                first = next;
            }
        }
        Ok(direct)
    }
}

impl<A: Address, L: Leaf, const S: u32, N: NodeLayout> Poptrie<A, L, S, N> {
    /// Builds from `rib` with leaves of type `L`.
    ///
    /// # Errors
    /// [`BuildError::Limit`] if a next hop does not fit `L` (or, with
    /// S > 0, 31 bits) or the nodes outgrow their indexes;
    /// [`BuildError::OutOfMemory`] when the system refuses an array.
    pub fn build(rib: &Rib<A>, options: &PoptrieOptions) -> Result<Self, BuildError> {
        Self::assemble(Prepared::new(rib, options))
    }

    /// The registry name of the full engine with these parameters.
    pub fn engine_name() -> String {
        format!("poptrie{S}")
    }

    /// The registry name of these parameters with route aggregation on or
    /// off: `poptrieS` (the full engine), `poptrieS-leafvec` (no route
    /// aggregation), `poptrieS-basic` (no leafvec and no route
    /// aggregation: the paper's Table 2 rows), and for the one combination
    /// the paper does not measure, `poptrieS-basic-aggregated`.
    pub fn variant_name(aggregated: bool) -> String {
        let variant = match (N::LEAFVEC, aggregated) {
            (true, true) => "",
            (true, false) => "-leafvec",
            (false, false) => "-basic",
            (false, true) => "-basic-aggregated",
        };
        format!("poptrie{S}{variant}")
    }

    /// Builds the arrays from `prepared` (no free space).
    ///
    /// # Errors
    /// As [`Poptrie::build`].
    pub(crate) fn assemble(prepared: Prepared<A>) -> Result<Self, BuildError> {
        Self::assemble_with_slack(prepared, false).map(|(poptrie, _)| poptrie)
    }

    /// Builds the arrays; with `slack`, the node and leaf arrays get a
    /// quarter (at least 4,096 entries) of free space for the updater.
    /// Also returns the entries in use (nodes, leaves). Each lookup array
    /// is filled from the builder's, which is dropped before the next one
    /// is allocated: the build's peak is the structure and the builder's
    /// arrays, not a second copy.
    ///
    /// # Errors
    /// As [`Poptrie::build`].
    pub(crate) fn assemble_with_slack(prepared: Prepared<A>, slack: bool) -> Result<(Self, [usize; 2]), BuildError> {
        const { assert!(S <= 24, "the direct array has at most 2^24 entries") };
        assert!(S < u32::from(A::BITS));
        let name = Self::variant_name(prepared.aggregated);
        let mut builder = Builder::<A, L> {
            points: &prepared.points,
            nodes: Vec::new(),
            leaves: Vec::new(),
            levels: 0,
            leafvec: N::LEAFVEC,
        };
        let mut direct_leaves = 0;
        let direct = if S == 0 {
            builder.nodes.push(Node::default());
            builder.fill_node(0, A::ZERO, 0, 0, 1).map(|()| Vec::new())
        } else {
            builder.fill_direct::<S>(&mut direct_leaves)
        }
        .map_err(|stop| stop.named(&name))?;
        let levels = builder.levels;
        let summary = BuildSummary {
            name,
            aggregated: prepared.aggregated,
            prefixes: prepared.prefixes,
            prefixes_aggregated: prepared.prefixes_aggregated,
            boundaries: prepared.points.len(),
            direct_leaves,
            levels,
            build_seconds: Some(prepared.start.elapsed().as_secs_f64()),
        };
        let used = [builder.nodes.len(), builder.leaves.len()];
        let extra = |used: usize| if slack { used / 4 + 4096 } else { 0 };
        let name = &summary.name;
        let refused = |array| move |error| BuildError::out_of_memory(name, array, error);
        let direct = try_copy_grown(&direct, 0, |&word| AtomicU32::new(word), AtomicU32::default)
            .map_err(refused("direct array"))?;
        let built = std::mem::take(&mut builder.nodes);
        let nodes = try_copy_grown(&built, used[0] + extra(used[0]), |&node| N::new(node), N::default)
            .map_err(refused("node array"))?;
        drop(built);
        let built = std::mem::take(&mut builder.leaves);
        let leaves =
            try_copy_grown(&built, used[1] + extra(used[1]), |&leaf| L::cell(leaf), || L::cell(Default::default()))
                .map_err(refused("leaf array"))?;
        drop(built);
        let poptrie = Poptrie {
            direct,
            nodes,
            leaves,
            routes: AtomicUsize::new(summary.prefixes),
            batches: AtomicU64::new(0),
            summary,
            family: std::marker::PhantomData,
        };
        let mut poptrie = poptrie;
        poptrie.check_indexes(used[0]);
        Ok((poptrie, used))
    }
}
/// Builds the subtree of the direct slot whose addresses start at `first`
/// (`s` bits down) from the slot's maximal runs `points` (the first one at
/// `first`), as the full build would: `Ok(Some(next_hop))` if the slot is
/// one leaf, else `Ok(None)` with the subtree in `nodes` (its root first)
/// and `leaves`, indexes relative to the two vectors (whose buffers are
/// reused).
///
/// # Errors
/// [`Stop::Limit`] when a next hop or an index does not fit;
/// [`Stop::Memory`] when the system refuses the vectors' growth.
pub(crate) fn build_slot<A: Address, L: Leaf>(
    points: &Boundaries<A>,
    first: A,
    s: u32,
    nodes: &mut Vec<Node>,
    leaves: &mut Vec<L>,
) -> Result<Option<NextHop>, Stop> {
    debug_assert_eq!(points.starts.first(), Some(&first));
    if points.len() == 1 {
        return Ok(Some(points.hops[0]));
    }
    nodes.clear();
    leaves.clear();
    let mut builder = Builder::<A, L> {
        points,
        nodes: std::mem::take(nodes),
        leaves: std::mem::take(leaves),
        levels: 0,
        leafvec: true,
    };
    builder.nodes.push(Node::default());
    let outcome = builder.fill_node(0, first, s, 0, 1);
    *nodes = builder.nodes;
    *leaves = builder.leaves;
    outcome.map(|()| None)
}

/// A value that does not fit the 31 bits of a direct entry.
pub(super) fn direct_limit(limit: Limit, value: u64) -> LimitExceeded {
    LimitExceeded::unnamed(limit, "the 31 bits of a direct entry", value, DIRECT_MAX.into())
}

#[cfg(test)]
mod tests {
    use super::super::build;
    use super::*;
    use crate::rib::Rib4;

    use crate::addr::p;

    fn rib(routes: &[(&str, NextHop)]) -> Rib4 {
        routes.iter().map(|&(text, next_hop)| (p(text), next_hop)).collect()
    }

    #[test]
    fn edges_mark_every_prefix_and_runs_only_changes() {
        let table = rib(&[("10.0.0.0/8", 1), ("10.1.0.0/16", 1), ("10.2.0.0/16", 2)]);
        let edges = Boundaries::edges(&table);
        assert_eq!(edges.starts, vec![0, 0x0a00_0000, 0x0a01_0000, 0x0a02_0000, 0x0a03_0000, 0x0b00_0000]);
        assert_eq!(edges.hops, vec![0, 1, 1, 2, 1, 0]);
        let runs = Boundaries::runs(&table);
        assert_eq!(runs.starts, vec![0, 0x0a00_0000, 0x0a02_0000, 0x0a03_0000, 0x0b00_0000]);
        assert_eq!(runs.hops, vec![0, 1, 2, 1, 0]);
    }

    #[test]
    fn aggregation_merges_and_drops() {
        // Two halves with one next hop become their parent; a more specific
        // repeating its cover disappears; a hole punch stays.
        let table =
            rib(&[("10.0.0.0/9", 3), ("10.128.0.0/9", 3), ("20.0.0.0/8", 4), ("20.1.0.0/16", 4), ("20.2.0.0/16", 5)]);
        let aggregated = aggregate(&table);
        assert_eq!(aggregated, vec![(p("10.0.0.0/8"), 3), (p("20.0.0.0/8"), 4), (p("20.2.0.0/16"), 5)]);
        let rebuilt: Rib4 = aggregated.into_iter().collect();
        assert_eq!(rebuilt.ranges(0, u32::MAX), table.ranges(0, u32::MAX));
    }

    #[test]
    fn a_default_route_and_a_host_route() {
        let table = rib(&[("0.0.0.0/0", 1), ("255.255.255.255/32", 2)]);
        assert_eq!(aggregate(&table), vec![(p("0.0.0.0/0"), 1), (p("255.255.255.255/32"), 2)]);
        let edges = Boundaries::edges(&table);
        assert_eq!(edges.starts, vec![0, u32::MAX]);
        assert_eq!(edges.hops, vec![1, 2]);
    }

    #[test]
    fn one_level_by_hand() {
        // Poptrie0: 10.0.0.0/8 is chunk 2 of the root (bits 31..26 = 000010),
        // 192.0.0.0/2 covers chunks 48..=63.
        let table = rib(&[("8.0.0.0/6", 7), ("192.0.0.0/2", 9)]);
        let trie = Poptrie::<u32, u16, 0>::build(&table, &PoptrieOptions::default()).unwrap();
        assert_eq!(trie.nodes().len(), 1);
        let root = trie.nodes()[0];
        assert_eq!(root.vector, 0);
        assert_eq!(root.leafvec, (1 << 0) | (1 << 2) | (1 << 3) | (1 << 48));
        assert_eq!(trie.leaves(), &[0, 7, 0, 9]);
    }

    #[test]
    fn hole_punching_keeps_runs_whole() {
        // 10.0.0.0/8 next hop 1 with a /24 inside: at level 2 (bits 6..11)
        // the slot holding 10.1.0.0 is internal; the leaves around it are one
        // run of next hop 1.
        let table = rib(&[("8.0.0.0/6", 1), ("10.1.2.0/24", 2)]);
        let trie = Poptrie::<u32, u16, 0>::build(&table, &PoptrieOptions::default()).unwrap();
        let root = trie.nodes()[0];
        assert_eq!(root.vector, 1 << 2);
        let child = trie.nodes()[root.base1 as usize];
        // Chunk 2 of 10.1.2.0 covers bits 6..11 = 0b10_0000 (10 = 0b00001010,
        // 1 = 0b00000001): bits 6,7 of 10 are 1,0 and bits 8..11 of 1 are 0.
        assert_eq!(child.vector, 1 << 32);
        assert_eq!(child.leafvec, 1, "one run of next hop 1 around the hole");
        assert_eq!(trie.leaves()[child.base0 as usize], 1);
    }

    #[test]
    fn direct_entries() {
        let table = rib(&[("10.0.0.0/8", 5), ("10.0.0.0/24", 6)]);
        let trie = Poptrie::<u32, u16, 16>::build(&table, &PoptrieOptions::default()).unwrap();
        assert_eq!(trie.direct().len(), 1 << 16);
        assert_eq!(trie.direct()[0], DIRECT_LEAF);
        assert_eq!(trie.direct()[0x0a01], DIRECT_LEAF | 5);
        assert_eq!(trie.direct()[0x0a00], 0, "10.0/16 points to node 0");
        assert_eq!(trie.summary().direct_leaves, (1 << 16) - 1);
        assert_eq!(trie.lookup(0x0a00_00ff), 6);
        assert_eq!(trie.lookup(0x0a00_0100), 5);
        assert_eq!(trie.lookup(0x0b00_0000), NO_ROUTE);
    }

    #[test]
    fn too_wide_next_hops_are_refused_not_truncated() {
        let table = rib(&[("10.0.0.0/8", 70_000)]);
        let error = Poptrie::<u32, u16, 0>::build(&table, &PoptrieOptions::default()).unwrap_err();
        assert!(error.to_string().contains("70000"), "{error}");
        let wide = Poptrie::<u32, u32, 0>::build(&table, &PoptrieOptions::default()).unwrap();
        assert_eq!(wide.lookup(0x0a00_0000), 70_000);
        let huge = rib(&[("10.0.0.0/8", 1 << 31)]);
        assert!(Poptrie::<u32, u32, 16>::build(&huge, &PoptrieOptions::default()).is_err());
        assert_eq!(
            Poptrie::<u32, u32, 0>::build(&huge, &PoptrieOptions::default()).unwrap().lookup(0x0a00_0000),
            1 << 31
        );
        // The registry builder widens instead.
        let boxed = build::<u32, 18>(&table, &BuildOptions::default()).unwrap();
        assert_eq!(boxed.lookup(0x0a00_0000), 70_000);
        assert!(build::<u32, 18>(&huge, &BuildOptions::default()).is_err());
    }
}
