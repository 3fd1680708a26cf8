//! Insert, replace and remove, and what keeps the trie's links true
//! through them (the module docs of [`super`] say why):
//!
//! - a prefix with a node in the index is updated in place: a new next
//!   hop, or a route gained or lost;
//! - a prefix without one walks down from the root and hangs a leaf, a node
//!   between two, or a glue node and a leaf, setting their parent links and
//!   `cover`;
//! - `full` flags are recomputed upward only while they change (a route
//!   gained can only fill, a route lost only empty, the nodes above);
//! - a node that gains or loses its route names itself, or the route above
//!   it, as the `cover` of the nodes below it down to the next routes (but
//!   the root: a default route changes no `cover`);
//! - a withdrawn route's node without two children is kept (module docs);
//!   the oldest kept node is spliced out once more than half as many nodes
//!   as routes are kept, and a glue node left with one child with it. The
//!   next node to go, the nodes its splice writes and its index slot start
//!   loading one withdrawal ahead, while nothing waits for them.

use super::{Node, Rib, FREE, FULL, INDEXED, NIL, ROOT};
use crate::addr::{Address, Prefix};
use crate::simd::prefetch;
use crate::{NextHop, NO_ROUTE};

/// How many more entries than routes the queue of kept nodes may hold
/// (entries of nodes routed again since, or spliced with a neighbour, are
/// dropped when they come out).
pub(super) const KEPT_SLACK: usize = 64;

impl<A: Address> Rib<A> {
    /// Sets the route for `prefix`; returns the next hop it replaced, if any.
    ///
    /// # Panics
    /// If `next_hop` is [`NO_ROUTE`]; use [`Rib::remove`] to withdraw.
    pub fn insert(&mut self, prefix: Prefix<A>, next_hop: NextHop) -> Option<NextHop> {
        assert_ne!(next_hop, NO_ROUTE, "next hop 0 means no route; use remove()");
        let tag = self.index.tag(prefix);
        if let Some(index) = self.find(prefix, tag) {
            let was_dead = self.is_dead(index);
            let node = &mut self.nodes[index as usize];
            let old = node.next_hop;
            node.next_hop = next_hop;
            if old != NO_ROUTE {
                return Some(old);
            }
            self.dead -= usize::from(was_dead);
            self.gained_route(index);
            return None;
        }
        let mut current = ROOT;
        loop {
            let node = &self.nodes[current as usize];
            if node.is(prefix) {
                // A glue node (or the root) that was never a route.
                self.nodes[current as usize].next_hop = next_hop;
                self.add_to_index(current, tag);
                self.gained_route(current);
                return None;
            }
            // `node` strictly covers `prefix` here.
            let side = prefix.addr().bit(node.prefix_len);
            let child = node.children[side];
            if child == NIL {
                let was_dead = self.is_dead(current);
                let leaf = self.alloc(prefix, next_hop, current);
                self.nodes[current as usize].children[side] = leaf;
                self.dead -= usize::from(was_dead && !self.is_dead(current));
                self.add_route(leaf, tag, current);
                return None;
            }
            let child_prefix = self.nodes[child as usize].prefix();
            if child_prefix.covers(&prefix) {
                current = child;
                continue;
            }
            let common = prefix
                .addr()
                .common_prefix_len(child_prefix.addr())
                .min(prefix.prefix_len())
                .min(child_prefix.prefix_len());
            if common == prefix.prefix_len() {
                // The new prefix covers the child: it goes in between.
                let new = self.alloc(prefix, next_hop, current);
                self.nodes[new as usize].children[child_prefix.addr().bit(common)] = child;
                self.nodes[child as usize].parent = new;
                self.nodes[current as usize].children[side] = new;
                self.add_route(new, tag, current);
                self.recover_below(new);
            } else {
                // They diverge: a glue node at the common prefix holds both.
                let glue = self.alloc(Prefix::truncating(prefix.addr(), common), NO_ROUTE, current);
                let leaf = self.alloc(prefix, next_hop, glue);
                let glue_node = &mut self.nodes[glue as usize];
                glue_node.children[child_prefix.addr().bit(common)] = child;
                glue_node.children[prefix.addr().bit(common)] = leaf;
                self.nodes[child as usize].parent = glue;
                if self.compute_full(glue) {
                    self.nodes[glue as usize].flags |= FULL;
                }
                self.nodes[current as usize].children[side] = glue;
                self.add_route(leaf, tag, current);
            }
            return None;
        }
    }

    /// Withdraws the route for exactly `prefix`; returns its next hop, if any.
    pub fn remove(&mut self, prefix: Prefix<A>) -> Option<NextHop> {
        let index = self.find(prefix, self.index.tag(prefix))?;
        let node = &mut self.nodes[index as usize];
        let old = node.next_hop;
        if old == NO_ROUTE {
            return None;
        }
        node.next_hop = NO_ROUTE;
        self.routes -= 1;
        self.drain_up(index);
        self.recover_below(index);
        if self.is_dead(index) {
            self.dead += 1;
            self.kept.push_back(index);
        }
        // Keep at most half as many dead nodes as routes.
        let budget = self.routes / 2;
        while self.dead > budget || self.kept.len() > self.routes + KEPT_SLACK {
            let Some(kept) = self.kept.pop_front() else { break };
            if self.is_dead(kept) {
                self.splice(kept);
            }
        }
        if self.dead >= budget {
            self.read_ahead();
        }
        Some(old)
    }

    /// Starts loading what the next splices will read: the next kept node's
    /// neighbours and index slot (its own node was started a withdrawal
    /// ago), and the node after it.
    fn read_ahead(&self) {
        if let Some(&next) = self.kept.front() {
            let node = &self.nodes[next as usize];
            if node.flags & FREE == 0 {
                prefetch(&self.nodes[node.parent as usize]);
                for child in node.children {
                    if child != NIL {
                        prefetch(&self.nodes[child as usize]);
                    }
                }
                if node.flags & INDEXED != 0 {
                    self.index.prefetch(self.index.tag(node.prefix()));
                }
            }
        }
        if let Some(&after) = self.kept.get(1) {
            prefetch(&self.nodes[after as usize]);
        }
    }

    /// A free slot holding a new node of `prefix` below `parent`, not yet
    /// linked from it.
    fn alloc(&mut self, prefix: Prefix<A>, next_hop: NextHop, parent: u32) -> u32 {
        let above = &self.nodes[parent as usize];
        let node = Node {
            addr: prefix.addr(),
            children: [NIL; 2],
            parent,
            cover: if above.is_route() && parent != ROOT { parent } else { above.cover },
            next_hop,
            prefix_len: prefix.prefix_len(),
            flags: if next_hop != NO_ROUTE { FULL } else { 0 },
        };
        if let Some(index) = self.free.pop() {
            self.nodes[index as usize] = node;
            index
        } else {
            let index = u32::try_from(self.nodes.len()).ok().filter(|&index| index != NIL);
            let index = index.expect("RIB arena exceeds 2^32 - 1 nodes");
            self.nodes.push(node);
            index
        }
    }

    /// Counts a route newly at node `index` (just linked below `parent`),
    /// indexes it under `tag` and fills the flags above.
    fn add_route(&mut self, index: u32, tag: u32, parent: u32) {
        self.add_to_index(index, tag);
        self.routes += 1;
        self.fill_up(parent);
    }

    fn add_to_index(&mut self, index: u32, tag: u32) {
        self.nodes[index as usize].flags |= INDEXED;
        self.index.insert(tag, index);
    }

    /// Node `index`, already in the trie and the index, has just got a
    /// route.
    fn gained_route(&mut self, index: u32) {
        self.routes += 1;
        self.fill_up(index);
        self.recover_below(index);
    }

    /// Whether node `index` holds a withdrawn route kept in the trie, or a
    /// glue node left so: no route, not the root, fewer than two children.
    fn is_dead(&self, index: u32) -> bool {
        let node = &self.nodes[index as usize];
        index != ROOT && node.flags & FREE == 0 && !node.is_route() && node.children.contains(&NIL)
    }

    /// Takes dead node `index` out of the trie (its child, if any, takes its
    /// place), and its parent if that is left dead with it (a glue node
    /// with one child). Splicing out nodes that hold no route changes no
    /// `full` flag and no `cover`.
    fn splice(&mut self, mut index: u32) {
        loop {
            debug_assert!(self.is_dead(index));
            let node = self.nodes[index as usize];
            let child = if node.children[0] != NIL { node.children[0] } else { node.children[1] };
            let parent = node.parent;
            let parent_was_dead = self.is_dead(parent);
            let above = &mut self.nodes[parent as usize];
            let side = usize::from(above.children[1] == index);
            above.children[side] = child;
            if child != NIL {
                self.nodes[child as usize].parent = parent;
            }
            if node.flags & INDEXED != 0 {
                self.index.remove(self.index.tag(node.prefix()), index);
            }
            self.nodes[index as usize].flags = FREE;
            self.free.push(index);
            self.dead -= 1;
            if !self.is_dead(parent) {
                return;
            }
            self.dead += usize::from(!parent_was_dead);
            index = parent;
        }
    }

    /// Recomputes [`FULL`] of node `index` from its route and its children's.
    fn compute_full(&self, index: u32) -> bool {
        let node = &self.nodes[index as usize];
        let half = |child: u32| {
            child != NIL && {
                let child = &self.nodes[child as usize];
                child.full() && child.prefix_len == node.prefix_len + 1
            }
        };
        node.is_route() || (half(node.children[0]) && half(node.children[1]))
    }

    /// Sets [`FULL`] from node `index` up while it turns on (routes were
    /// added below: a flag already on stays on, and so do those above it).
    fn fill_up(&mut self, mut index: u32) {
        while index != NIL && !self.nodes[index as usize].full() && self.compute_full(index) {
            let node = &mut self.nodes[index as usize];
            node.flags |= FULL;
            index = node.parent;
        }
    }

    /// Clears [`FULL`] from node `index` up while it turns off (a route was
    /// withdrawn below: a flag already off stays off, and so do those above
    /// it).
    fn drain_up(&mut self, mut index: u32) {
        while index != NIL && self.nodes[index as usize].full() && !self.compute_full(index) {
            let node = &mut self.nodes[index as usize];
            node.flags &= !FULL;
            index = node.parent;
        }
    }

    /// Node `index` gained or lost its route: the nodes below it down to
    /// the next routes (those included) get it, or its `cover`, as theirs.
    /// Nothing names the root (a default route changes no `cover`).
    fn recover_below(&mut self, index: u32) {
        if index == ROOT {
            return;
        }
        let node = &self.nodes[index as usize];
        let cover = if node.is_route() { index } else { node.cover };
        for child in node.children {
            if child != NIL {
                self.set_cover(child, cover);
            }
        }
    }

    fn set_cover(&mut self, index: u32, cover: u32) {
        let node = &mut self.nodes[index as usize];
        node.cover = cover;
        if !node.is_route() {
            for child in node.children {
                if child != NIL {
                    self.set_cover(child, cover);
                }
            }
        }
    }
}
