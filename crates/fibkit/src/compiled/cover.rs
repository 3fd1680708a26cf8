//! Covering queries on a compiled family's routes: the routes that cover a
//! prefix or an address, least specific first
//! ([`CompiledFamily::covering`]), and the routes inside a prefix, in
//! address order ([`CompiledFamily::covered`]).
//!
//! A family compiled with prefixes keeps its routes as arrays in the
//! order of [`crate::Rib::iter`]: by network address, a prefix before the
//! longer ones it covers, i.e. ascending `(address, length)`, no route
//! twice (a file's are checked so when it is opened). Both queries are
//! binary searches over them:
//!
//! ```text
//!  routes:  0/0  10/8  10.1/16  10.1.2/24  10.128/9  10.200/16  192.168/16
//!  covered(10/8):        [ 10/8 ........................ 10.200/16 ]   first key >= (10.0.0.0, 8)
//!                                                                     to the last address <= 10.255.255.255
//!  covering(10.1.2.3/32): the last key <= (10.1.2.3, 32) is 10.1.2/24: it covers, kept;
//!                         then the last key <= (10.1.0.0, 23) before it, ... down to 0/0
//! ```
//!
//! A route met that does not cover the prefix shares its first `c` bits
//! with it (`c` less than both lengths): every covering route before it is
//! at most `c` bits long (a longer one would sort after it), so the next
//! search asks for the key of the prefix cut to `c` bits. Each search
//! finds a covering route or shortens the lengths left to look at: a few
//! searches in a real table, at most one per length.
//!
//! A family compiled without prefixes keeps no routes: both queries answer
//! [`NoPrefixes`].

use std::ops::Range;

use super::{CompiledFamily, Route, Routes};
use crate::addr::{Address, Prefix};

/// A covering query on a table compiled without its routes' prefixes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the table was compiled without its routes' prefixes, which listing routes needs: compile it with prefixes \
     (fibkit compile --prefix, prefixes=True in Python)"
)]
pub struct NoPrefixes;

/// The most routes that can cover a prefix: one per length.
const MOST_COVERING: usize = 129;

/// The routes covering a prefix, least specific first:
/// [`CompiledFamily::covering`].
#[derive(Clone, Debug)]
pub struct Covering<'a, A: Address> {
    routes: &'a Routes<A>,
    /// Indexes of the covering routes, most specific first.
    found: [u32; MOST_COVERING],
    /// `found[..left]` are still to come (the last first).
    left: usize,
}

impl<A: Address> Iterator for Covering<'_, A> {
    type Item = Route<A>;

    #[inline]
    fn next(&mut self) -> Option<Route<A>> {
        self.left = self.left.checked_sub(1)?;
        self.routes.get(self.found[self.left] as usize)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<A: Address> ExactSizeIterator for Covering<'_, A> {}

/// The routes inside a prefix, in address order: [`CompiledFamily::covered`].
#[derive(Clone, Debug)]
pub struct Covered<'a, A: Address> {
    routes: &'a Routes<A>,
    indexes: Range<usize>,
}

impl<A: Address> Iterator for Covered<'_, A> {
    type Item = Route<A>;

    #[inline]
    fn next(&mut self) -> Option<Route<A>> {
        self.routes.get(self.indexes.next()?)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.indexes.size_hint()
    }
}

impl<A: Address> ExactSizeIterator for Covered<'_, A> {}

impl<A: Address> Routes<A> {
    /// The sort key of route `index` (`index < self.len()`).
    #[inline(always)]
    fn key(&self, index: usize) -> (A, u8) {
        (self.addrs[index], self.lengths[index])
    }

    /// How many of the first `end` routes pass `before` (which the sorted
    /// keys pass up to a point, then fail).
    #[inline]
    fn partition(&self, end: usize, before: impl Fn((A, u8)) -> bool) -> usize {
        let (mut low, mut high) = (0, end.min(self.len()).min(self.lengths.len()));
        while low < high {
            let middle = low + (high - low) / 2;
            if before(self.key(middle)) {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        low
    }

    /// The routes covering `prefix` (module docs).
    fn covering(&self, prefix: Prefix<A>) -> Covering<'_, A> {
        let mut covering = Covering { routes: self, found: [0; MOST_COVERING], left: 0 };
        let mut end = self.partition(self.len(), |key| key <= (prefix.addr(), prefix.prefix_len()));
        while end > 0 && covering.left < MOST_COVERING {
            let index = end - 1;
            let (addr, len) = self.key(index);
            let shorter = if len <= prefix.prefix_len() && prefix.addr() & A::mask(len) == addr {
                covering.found[covering.left] = index as u32;
                covering.left += 1;
                match len.checked_sub(1) {
                    Some(shorter) => shorter,
                    None => break,
                }
            } else {
                addr.common_prefix_len(prefix.addr()).min(prefix.prefix_len()).min(len)
            };
            let key = (prefix.addr() & A::mask(shorter), shorter);
            end = self.partition(index, |route| route <= key);
        }
        covering
    }

    /// The routes inside `prefix`: from the first key at or after its own
    /// to the last address inside it (a route sorting between the two
    /// starts inside it: see the module docs).
    fn covered(&self, prefix: Prefix<A>) -> Covered<'_, A> {
        let start = self.partition(self.len(), |key| key < (prefix.addr(), prefix.prefix_len()));
        let end = self.partition(self.len(), |(addr, _)| addr <= prefix.last());
        Covered { routes: self, indexes: start..end.max(start) }
    }

    /// Whether the routes are in ascending `(address, length)` order, each
    /// once; if not, the index of the first out of order.
    pub(super) fn first_out_of_order(&self) -> Option<usize> {
        let count = self.len().min(self.lengths.len());
        (1..count).find(|&index| self.key(index - 1) >= self.key(index))
    }
}

impl<A: Address> CompiledFamily<A> {
    /// Every route that covers `prefix`, from the least specific to the
    /// most specific, `prefix` itself included when it is a route; for an
    /// address, ask for its [`Prefix::host`] (the last route is then its
    /// longest match). As [`crate::Rib::covering`] answers, by binary
    /// searches over the routes (module docs), without allocating.
    ///
    /// # Errors
    /// [`NoPrefixes`] if the family was compiled without prefixes.
    #[inline]
    pub fn covering(&self, prefix: Prefix<A>) -> Result<Covering<'_, A>, NoPrefixes> {
        Ok(self.routes.as_ref().ok_or(NoPrefixes)?.covering(prefix))
    }

    /// Every route inside `prefix` (`prefix` itself included when it is a
    /// route), in address order: as [`crate::Rib::covered`] answers, by
    /// two binary searches over the routes, without allocating.
    ///
    /// # Errors
    /// [`NoPrefixes`] if the family was compiled without prefixes.
    #[inline]
    pub fn covered(&self, prefix: Prefix<A>) -> Result<Covered<'_, A>, NoPrefixes> {
        Ok(self.routes.as_ref().ok_or(NoPrefixes)?.covered(prefix))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::p;
    use crate::registry;
    use crate::rib::{rib_of, Rib};

    fn rib() -> Rib<u32> {
        rib_of(&[
            ("0.0.0.0/0", 9),
            ("10.0.0.0/8", 1),
            ("10.1.0.0/16", 2),
            ("10.1.2.0/24", 3),
            ("10.1.255.0/24", 7),
            ("10.128.0.0/9", 4),
            ("10.200.0.0/16", 5),
            ("192.168.0.0/16", 6),
        ])
    }

    fn family(rib: &Rib<u32>, prefixes: bool) -> CompiledFamily<u32> {
        let engine = registry::resolve::<u32>("d16r").unwrap();
        CompiledFamily::build(engine, rib, &crate::fib::BuildOptions::new(9), prefixes).unwrap()
    }

    #[test]
    fn both_queries_answer_as_the_rib() {
        let rib = rib();
        let family = family(&rib, true);
        let queries = [
            "0.0.0.0/0",
            "10.0.0.0/8",
            "10.0.0.0/15",
            "10.1.0.0/16",
            "10.1.2.3/32",
            "10.1.3.0/24",
            "10.1.255.255/32",
            "10.200.1.0/24",
            "10.128.0.0/9",
            "11.0.0.0/8",
            "192.168.1.1/32",
            "255.255.255.255/32",
        ];
        for query in queries.map(p::<u32>) {
            let covering: Vec<_> = family.covering(query).unwrap().collect();
            assert_eq!(covering, rib.covering(query).collect::<Vec<_>>(), "covering {query}");
            assert_eq!(family.covering(query).unwrap().len(), covering.len());
            let covered: Vec<_> = family.covered(query).unwrap().collect();
            assert_eq!(covered, rib.covered(query).collect::<Vec<_>>(), "covered {query}");
        }
        let hops = |routes: Vec<Route<u32>>| routes.into_iter().map(|(_, hop)| hop).collect::<Vec<_>>();
        assert_eq!(hops(family.covering(p("10.1.2.3/32")).unwrap().collect()), [9, 1, 2, 3]);
        assert_eq!(hops(family.covered(p("10.0.0.0/8")).unwrap().collect()), [1, 2, 3, 7, 4, 5]);
    }

    #[test]
    fn without_prefixes_both_queries_say_so() {
        let family = family(&rib(), false);
        assert_eq!(family.covering(p("10.0.0.0/8")).err(), Some(NoPrefixes));
        assert_eq!(family.covered(p("10.0.0.0/8")).err(), Some(NoPrefixes));
        assert!(NoPrefixes.to_string().contains("compile it with prefixes"));
    }

    #[test]
    fn routes_out_of_order_are_found() {
        let routes = |list: &[&str]| Routes::new(&list.iter().map(|&text| (p::<u32>(text), 1)).collect::<Vec<_>>());
        assert_eq!(routes(&["10.0.0.0/8", "10.0.0.0/16", "11.0.0.0/8"]).first_out_of_order(), None);
        assert_eq!(routes(&["10.0.0.0/16", "10.0.0.0/8"]).first_out_of_order(), Some(1));
        assert_eq!(routes(&["10.0.0.0/8", "10.0.0.0/8"]).first_out_of_order(), Some(1));
        assert_eq!(routes(&["11.0.0.0/8", "10.0.0.0/16", "12.0.0.0/8"]).first_out_of_order(), Some(1));
        assert_eq!(routes(&[]).first_out_of_order(), None);
    }

    /// A file whose routes are not in order would answer wrong lists: it
    /// is refused when opened, naming the route.
    #[test]
    fn a_file_with_routes_out_of_order_is_refused() {
        use crate::compiled::{CompiledTable, Values};
        use crate::file::FibFile;
        use crate::nexthop::{Mapping, NextHopTable};
        let rib = rib();
        let values = Values::new(&NextHopTable::new(Mapping::Modulo(9)));
        let open = |family: &CompiledFamily<u32>| {
            let bytes = family.to_file("t", &values).unwrap().to_bytes();
            CompiledTable::from_file(&FibFile::from_bytes(&bytes, "t.fib").unwrap())
        };
        let mut family = family(&rib, true);
        assert!(open(&family).is_ok());
        let mut routes: Vec<Route<u32>> = rib.iter().collect();
        routes.swap(2, 3);
        family.routes = Some(Routes::new(&routes));
        let error = open(&family).err().unwrap().to_string();
        assert!(error.contains("v4.route_len") && error.contains("not after the one before it"), "{error}");
    }
}
