//! Covering queries: the routes that cover a prefix or an address, least
//! specific first ([`Rib::covering`]), and the routes inside a prefix, in
//! address order ([`Rib::covered`]).
//!
//! ```text
//!   covering(10.1.2.3/32):  root -> 10/8 -> 10.1/16 -> 10.1.2/24   the walk down along the address,
//!                                                                  routes only (glue skipped)
//!   covered(10.0.0.0/8):    the node at or just below 10/8, then its subtree in pre-order,
//!                           climbing back by the parent links (no stack)
//! ```
//!
//! Neither allocates: each iterator holds the node it visits next.

use super::{Rib, NIL, ROOT};
use crate::addr::{Address, Prefix};
use crate::NextHop;

/// The routes covering a prefix, least specific first: [`Rib::covering`].
#[derive(Clone, Debug)]
pub struct Covering<'a, A: Address> {
    rib: &'a Rib<A>,
    target: Prefix<A>,
    /// The node to visit next (`NIL`: done); it covers `target`.
    next: u32,
}

impl<A: Address> Iterator for Covering<'_, A> {
    type Item = (Prefix<A>, NextHop);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        while self.next != NIL {
            let node = &self.rib.nodes[self.next as usize];
            self.next = NIL;
            if node.prefix_len < self.target.prefix_len() {
                let child = node.children[self.target.addr().bit(node.prefix_len)];
                if child != NIL && self.rib.nodes[child as usize].prefix().covers(&self.target) {
                    self.next = child;
                }
            }
            if node.is_route() {
                return Some((node.prefix(), node.next_hop));
            }
        }
        None
    }
}

/// The routes inside a prefix, in address order: [`Rib::covered`].
#[derive(Clone, Debug)]
pub struct Covered<'a, A: Address> {
    rib: &'a Rib<A>,
    /// The topmost node inside the prefix: the walk's end.
    top: u32,
    /// The node to visit next (`NIL`: done).
    next: u32,
}

impl<A: Address> Covered<'_, A> {
    /// The node after `index` in pre-order within `top`'s subtree.
    #[inline]
    fn after(&self, mut index: u32) -> u32 {
        let nodes = &self.rib.nodes;
        for child in nodes[index as usize].children {
            if child != NIL {
                return child;
            }
        }
        while index != self.top {
            let parent = &nodes[nodes[index as usize].parent as usize];
            if parent.children[0] == index && parent.children[1] != NIL {
                return parent.children[1];
            }
            index = nodes[index as usize].parent;
        }
        NIL
    }
}

impl<A: Address> Iterator for Covered<'_, A> {
    type Item = (Prefix<A>, NextHop);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        while self.next != NIL {
            let index = self.next;
            self.next = self.after(index);
            let node = &self.rib.nodes[index as usize];
            if node.is_route() {
                return Some((node.prefix(), node.next_hop));
            }
        }
        None
    }
}

impl<A: Address> Rib<A> {
    /// Every route that covers `prefix`, from the least specific (the
    /// default route, if any) to the most specific, `prefix` itself
    /// included when it is a route. For an address, ask for its
    /// [`Prefix::host`]: the last route is then its longest match.
    ///
    /// Walks down from the root along `prefix` (as [`Rib::lookup`]),
    /// lazily and without allocating.
    #[inline]
    pub fn covering(&self, prefix: Prefix<A>) -> Covering<'_, A> {
        Covering { rib: self, target: prefix, next: ROOT }
    }

    /// Every route inside `prefix` (`prefix` itself included when it is a
    /// route), in address order as [`Rib::iter`] gives them: by network
    /// address, a prefix before the longer ones it covers.
    ///
    /// Walks down from the root to the first node inside `prefix`, then
    /// through its subtree, lazily and without allocating.
    pub fn covered(&self, prefix: Prefix<A>) -> Covered<'_, A> {
        let top = self.top_inside(prefix);
        Covered { rib: self, top, next: top }
    }

    /// The topmost node inside `prefix` (`NIL` if none): every node on the
    /// way down from the root covers `prefix`.
    fn top_inside(&self, prefix: Prefix<A>) -> u32 {
        let mut current = ROOT;
        loop {
            let node = &self.nodes[current as usize];
            if prefix.covers(&node.prefix()) {
                return current;
            }
            // `node` covers `prefix` strictly: its prefix is shorter.
            let child = node.children[prefix.addr().bit(node.prefix_len)];
            if child == NIL {
                return NIL;
            }
            let below = self.nodes[child as usize].prefix();
            if !below.covers(&prefix) && !prefix.covers(&below) {
                return NIL;
            }
            current = child;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::p;
    use crate::rib::rib_of;

    fn texts<A: Address>(routes: impl Iterator<Item = (Prefix<A>, NextHop)>) -> Vec<String> {
        routes.map(|(prefix, hop)| format!("{prefix} {hop}")).collect()
    }

    fn rib() -> Rib<u32> {
        rib_of(&[
            ("0.0.0.0/0", 9),
            ("10.0.0.0/8", 1),
            ("10.1.0.0/16", 2),
            ("10.1.2.0/24", 3),
            ("10.128.0.0/9", 4),
            ("10.200.0.0/16", 5),
            ("192.168.0.0/16", 6),
        ])
    }

    #[test]
    fn covering_lists_the_routes_above_least_specific_first() {
        let rib = rib();
        let host = |text: &str| Prefix::host(text.parse::<std::net::Ipv4Addr>().unwrap().into());
        assert_eq!(
            texts(rib.covering(host("10.1.2.3"))),
            ["0.0.0.0/0 9", "10.0.0.0/8 1", "10.1.0.0/16 2", "10.1.2.0/24 3"]
        );
        assert_eq!(
            texts(rib.covering(host("10.200.1.1"))),
            ["0.0.0.0/0 9", "10.0.0.0/8 1", "10.128.0.0/9 4", "10.200.0.0/16 5"]
        );
        assert_eq!(texts(rib.covering(host("11.0.0.0"))), ["0.0.0.0/0 9"]);
        assert_eq!(texts(rib.covering(p("10.1.0.0/16"))), ["0.0.0.0/0 9", "10.0.0.0/8 1", "10.1.0.0/16 2"]);
        assert_eq!(texts(rib.covering(p("10.0.0.0/15"))), ["0.0.0.0/0 9", "10.0.0.0/8 1"]);
        assert_eq!(texts(rib.covering(p("0.0.0.0/0"))), ["0.0.0.0/0 9"]);
        assert_eq!(texts(rib_of::<u32>(&[("10.0.0.0/8", 1)]).covering(p("11.0.0.0/8"))), Vec::<String>::new());
    }

    #[test]
    fn covered_lists_the_routes_inside_in_address_order() {
        let rib = rib();
        let inside = |prefix: &str| texts(rib.covered(p(prefix)));
        assert_eq!(
            inside("10.0.0.0/8"),
            ["10.0.0.0/8 1", "10.1.0.0/16 2", "10.1.2.0/24 3", "10.128.0.0/9 4", "10.200.0.0/16 5"]
        );
        // Starting at a glue node (10.128/9 is a route; 10.0/8's halves are not both routes).
        assert_eq!(inside("10.128.0.0/9"), ["10.128.0.0/9 4", "10.200.0.0/16 5"]);
        assert_eq!(inside("10.192.0.0/10"), ["10.200.0.0/16 5"]);
        assert_eq!(inside("10.1.2.3/32"), Vec::<String>::new());
        assert_eq!(inside("172.16.0.0/12"), Vec::<String>::new());
        assert_eq!(inside("0.0.0.0/0"), texts(rib.iter()));
        assert_eq!(texts(Rib::<u128>::new().covered(p("::/0"))), Vec::<String>::new());
    }

    #[test]
    fn withdrawn_nodes_kept_are_not_listed() {
        let mut rib = rib();
        rib.remove(p("10.1.0.0/16"));
        rib.remove(p("10.200.0.0/16"));
        assert_eq!(texts(rib.covered(p("10.0.0.0/8"))), ["10.0.0.0/8 1", "10.1.2.0/24 3", "10.128.0.0/9 4"]);
        assert_eq!(texts(rib.covering(p("10.1.2.0/24"))), ["0.0.0.0/0 9", "10.0.0.0/8 1", "10.1.2.0/24 3"]);
    }
}
