//! One family's copy of the kernel table: every mirrored route of every
//! prefix, and the prefix's value (the module's documentation gives the
//! rules).

use std::collections::HashMap;

use fibkit::nexthop::Label;
use fibkit::{Address, Family, Prefix};
use smallvec::SmallVec;

use super::route::{Key, Route, Rule};

/// How a route message came.
#[derive(Clone, Copy, Debug)]
pub enum Came {
    /// A reply to the dump in progress.
    Dump,
    /// A notification: `RTM_NEWROUTE` (`replace`: with `NLM_F_REPLACE`).
    New { replace: bool },
    /// A notification: `RTM_DELROUTE`.
    Del,
}

/// A notification read during a dump: how it came, and its route.
pub type Note = (Came, Route);

/// What a dump's reply `reply` adds to the dump's copy of the table, given
/// the notifications of its prefix and key read before it during the dump
/// (`notes`, already applied to that copy). The reply may be older than
/// them, as the kernel dumps without holding off changes:
/// - after a replace of its key, the replacing route stands alone;
/// - a route a notification added or deleted is the notification's word
///   (for IPv6 also an older route with fewer of the added route's hops);
/// - hops deleted from it are taken out.
///
/// Another route of the same key (IPv6 routes of one metric on two
/// interfaces, appended IPv4 routes) is added whatever the notes.
pub fn after_notes(mut reply: Route, notes: &[Note], family: Family, rule: Rule) -> Option<Route> {
    for (came, note) in notes {
        match came {
            Came::New { replace: true } => return None,
            Came::New { replace: false } if note.same(&reply) => return None,
            Came::New { replace: false } if family == Family::Ipv6 && note.kind == reply.kind && note.holds(&reply) => {
                return None;
            }
            Came::Del if note.same(&reply) => return None,
            Came::Del if note.kind == reply.kind && !note.hops.is_empty() && reply.holds(note) => {
                reply.remove_hops(note, rule);
            }
            _ => {}
        }
    }
    Some(reply)
}

/// The routes of one family, by prefix.
pub struct Table<A: Address> {
    routes: HashMap<Prefix<A>, SmallVec<[Route; 1]>>,
    len: usize,
}

impl<A: Address> Default for Table<A> {
    fn default() -> Self {
        Table { routes: HashMap::new(), len: 0 }
    }
}

impl<A: Address> Table<A> {
    /// Routes held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The prefixes with a route.
    pub fn prefixes(&self) -> impl Iterator<Item = Prefix<A>> + '_ {
        self.routes.keys().copied()
    }

    /// Applies an `RTM_NEWROUTE` for `prefix` (`replace`: it had
    /// `NLM_F_REPLACE`).
    pub fn add(&mut self, prefix: Prefix<A>, route: Route, replace: bool) {
        let routes = self.routes.entry(prefix).or_default();
        let replaced = if replace {
            routes.iter().position(|old| old.key == route.key)
        } else if routes.iter().any(|old| old.same(&route)) {
            return;
        } else if A::FAMILY == Family::Ipv6 {
            // A hop appended to an IPv6 route: the notification has them all.
            routes.iter().position(|old| old.key == route.key && route.holds(old))
        } else {
            None
        };
        if let Some(at) = replaced {
            routes.swap_remove(at);
            self.len -= 1;
        }
        if route.value.is_some() {
            routes.push(route);
            self.len += 1;
        }
        if routes.is_empty() {
            self.routes.remove(&prefix);
        }
    }

    /// Applies an `RTM_DELROUTE` for `prefix`.
    pub fn remove(&mut self, prefix: Prefix<A>, route: &Route, rule: Rule) {
        let Some(routes) = self.routes.get_mut(&prefix) else { return };
        if let Some(at) = routes.iter().position(|old| old.same(route)) {
            routes.swap_remove(at);
            self.len -= 1;
        } else if let Some(at) = routes.iter().position(|old| {
            old.key == route.key && old.kind == route.kind && !route.hops.is_empty() && old.holds(route)
        }) {
            // Some hops of a multipath route (IPv6 deletes them one by one).
            routes[at].remove_hops(route, rule);
            if routes[at].value.is_none() {
                routes.swap_remove(at);
                self.len -= 1;
            }
        }
        if routes.is_empty() {
            self.routes.remove(&prefix);
        }
    }

    /// Adds the routes of `old` whose prefix and key this table has no route
    /// of and `noted` does not name: what a dump that may have skipped
    /// routes did not send, unless a notification during it spoke of them.
    /// Returns how many routes it added.
    pub fn keep_unsent(&mut self, old: &Table<A>, noted: impl Fn(Prefix<A>, Key) -> bool) -> usize {
        let mut kept = 0;
        for (&prefix, routes) in &old.routes {
            for route in routes {
                let sent = self.routes.get(&prefix).is_some_and(|new| new.iter().any(|new| new.key == route.key));
                if !sent && !noted(prefix, route.key) {
                    self.routes.entry(prefix).or_default().push(route.clone());
                    self.len += 1;
                    kept += 1;
                }
            }
        }
        kept
    }

    /// The value of `prefix`: the smallest value among its routes of the
    /// lowest priority.
    pub fn value(&self, prefix: Prefix<A>) -> Option<Label> {
        let routes = self.routes.get(&prefix)?;
        let best = routes.iter().map(|route| route.key.priority).min()?;
        routes.iter().filter(|route| route.key.priority == best).filter_map(|route| route.value).min()
    }
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;

    use netlink_packet_route::route::RouteType;

    use super::super::route::{Hop, Key};
    use super::super::RouteValue;
    use super::*;

    const RULE: Rule = Rule { value: RouteValue::Gateway, reject: Some(Label::Number(0)) };

    fn hop(gateway: &str) -> Hop {
        Hop { gateway: Some(gateway.parse().unwrap()), interface: 2, dead: false }
    }

    fn route(priority: u32, hops: &[&str]) -> Route {
        let key = Key { tos: 0, source_len: 0, source: 0, priority };
        Route::new(key, RouteType::Unicast.into(), hops.iter().map(|gateway| hop(gateway)).collect(), RULE)
    }

    fn addr(text: &str) -> Option<Label> {
        Some(Label::Addr(text.parse::<IpAddr>().unwrap()))
    }

    #[test]
    fn the_lowest_priority_wins_and_its_delete_reveals_the_next() {
        let prefix = Prefix::<u32>::new(0x0a00_0000, 8).unwrap();
        let mut table = Table::default();
        table.add(prefix, route(20, &["10.0.0.2"]), false);
        table.add(prefix, route(10, &["10.0.0.3"]), false);
        table.add(prefix, route(30, &["10.0.0.1"]), false);
        assert_eq!((table.value(prefix), table.len()), (addr("10.0.0.3"), 3));
        table.remove(prefix, &route(10, &["10.0.0.3"]), RULE);
        assert_eq!((table.value(prefix), table.len()), (addr("10.0.0.2"), 2));
        // A delete of a route that is not there changes nothing.
        table.remove(prefix, &route(20, &["10.0.0.9"]), RULE);
        assert_eq!(table.value(prefix), addr("10.0.0.2"));
        table.remove(prefix, &route(20, &["10.0.0.2"]), RULE);
        table.remove(prefix, &route(30, &["10.0.0.1"]), RULE);
        assert_eq!((table.value(prefix), table.len(), table.prefixes().count()), (None, 0, 0));
    }

    #[test]
    fn a_replace_takes_the_place_of_the_route_of_the_same_key_and_a_repeat_is_kept_once() {
        let prefix = Prefix::<u32>::new(0x0a00_0000, 8).unwrap();
        let mut table = Table::default();
        table.add(prefix, route(10, &["10.0.0.3"]), false);
        table.add(prefix, route(10, &["10.0.0.3"]), false);
        assert_eq!(table.len(), 1);
        table.add(prefix, route(10, &["10.0.0.7"]), true);
        assert_eq!((table.value(prefix), table.len()), (addr("10.0.0.7"), 1));
        // Replaced by a route without a value (a local route, say): gone.
        let mut local = route(10, &["10.0.0.7"]);
        local.kind = RouteType::Local.into();
        local.value = None;
        table.add(prefix, local, true);
        assert_eq!((table.value(prefix), table.len()), (None, 0));
    }

    #[test]
    fn ipv4_duplicates_of_one_priority_give_the_smallest_value() {
        let prefix = Prefix::<u32>::new(0x0a00_0000, 8).unwrap();
        let mut table = Table::default();
        table.add(prefix, route(5, &["10.0.0.4"]), false);
        table.add(prefix, route(5, &["10.0.0.3"]), false);
        assert_eq!((table.value(prefix), table.len()), (addr("10.0.0.3"), 2));
    }

    #[test]
    fn ipv6_hops_appended_then_deleted_one_by_one() {
        let prefix = Prefix::<u128>::new(0x2001_0db8 << 96, 32).unwrap();
        let mut table = Table::default();
        table.add(prefix, route(1024, &["2001:db8::9"]), false);
        // The append's notification holds both hops.
        table.add(prefix, route(1024, &["2001:db8::9", "2001:db8::5"]), false);
        assert_eq!((table.value(prefix), table.len()), (addr("2001:db8::5"), 1));
        table.remove(prefix, &route(1024, &["2001:db8::5"]), RULE);
        assert_eq!((table.value(prefix), table.len()), (addr("2001:db8::9"), 1));
        table.remove(prefix, &route(1024, &["2001:db8::9"]), RULE);
        assert_eq!((table.value(prefix), table.len()), (None, 0));
    }

    #[test]
    fn a_multipath_route_deleted_whole_whatever_the_order_of_its_hops() {
        let prefix = Prefix::<u32>::new(0x0a00_0000, 8).unwrap();
        let mut table = Table::default();
        table.add(prefix, route(0, &["10.0.0.2", "10.0.0.1"]), false);
        assert_eq!(table.value(prefix), addr("10.0.0.1"));
        table.remove(prefix, &route(0, &["10.0.0.1", "10.0.0.2"]), RULE);
        assert_eq!((table.value(prefix), table.len()), (None, 0));
    }

    #[test]
    fn the_routes_a_dump_did_not_send_are_kept_unless_noted() {
        let (a, b, c) = (0x0a00_0000, 0x0b00_0000, 0x0c00_0000);
        let at = |bits| Prefix::<u32>::new(bits, 8).unwrap();
        let mut old = Table::default();
        old.add(at(a), route(10, &["10.0.0.1"]), false);
        old.add(at(a), route(20, &["10.0.0.2"]), false);
        old.add(at(b), route(10, &["10.0.0.3"]), false);
        old.add(at(c), route(10, &["10.0.0.4"]), false);
        // The dump sent a's first key anew, and c's was deleted during it.
        let mut dumped = Table::default();
        dumped.add(at(a), route(10, &["10.0.0.9"]), false);
        let noted = |prefix: Prefix<u32>, key: Key| prefix == at(c) && key.priority == 10;
        assert_eq!(dumped.keep_unsent(&old, noted), 2);
        assert_eq!(dumped.len(), 3);
        assert_eq!(dumped.value(at(a)), addr("10.0.0.9"));
        assert_eq!(dumped.value(at(b)), addr("10.0.0.3"));
        assert_eq!(dumped.value(at(c)), None);
        dumped.remove(at(a), &route(10, &["10.0.0.9"]), RULE);
        assert_eq!(dumped.value(at(a)), addr("10.0.0.2"));
    }
}
