//! A routing table compiled for answering addresses of both families: what
//! `fibkit lookup` (and a data pipeline) holds.
//!
//! ```text
//!  CompiledTable
//!   +-- v4: CompiledFamily<u32>   engine (d18r by default) over the IPv4 RIB
//!   +-- v6: CompiledFamily<u128>  engine (poptrie18 by default) over the IPv6 RIB
//!   +-- values: Values            next hop -> the input's value (an ASN, an address)
//!
//!  CompiledFamily without prefixes:  fib answers next hops
//!  CompiledFamily with prefixes:     fib answers route numbers n (1-based);
//!                                    routes[n - 1] = (prefix, next hop)
//! ```
//!
//! A compiled table is saved whole to a compiled FIB file and mapped back
//! from one ([`file`], on [`crate::file`]'s format).
//!
//! Answering the matched prefix costs no second lookup: the FIB is built
//! over a copy of the RIB whose values are route numbers, so one lookup
//! gives the route, and the route gives prefix and next hop. The FIB is
//! then larger (neighbouring prefixes with one next hop no longer merge).
//!
//! With prefixes, a family also lists the routes covering a prefix or an
//! address and the routes inside a prefix ([`CompiledFamily::covering`],
//! [`CompiledFamily::covered`]: binary searches over the routes, which are
//! in [`Rib::iter`]'s order).

mod cover;
mod file;
#[cfg(test)]
mod tiny;
mod values;

pub use cover::{Covered, Covering, NoPrefixes};
pub use values::Values;

use std::any::Any;

use crate::addr::{Address, Family, Prefix};
use crate::error::{BuildError, Limit, LimitExceeded, UnknownEngine};
use crate::fib::{BuildOptions, Calibrations, Fib};
use crate::load::RouteTable;
use crate::mem::LookupArray;
use crate::registry::{self, Engine};
use crate::rib::Rib;
use crate::{NextHop, NO_ROUTE};

/// The engine a family gets when none of those asked for serves it (the
/// registry's [`registry::default_engine`], re-exported here for the
/// callers that compile tables).
pub use crate::registry::default_engine;

/// A route: its prefix and next hop.
pub type Route<A> = (Prefix<A>, NextHop);

/// The routes of a family that answers prefixes, as arrays (route `n` at
/// index `n - 1`), built or read in place from a compiled FIB file; in
/// [`Rib::iter`]'s order, ascending `(address, length)`, each once (a
/// file's are checked when it is opened).
#[derive(Debug)]
struct Routes<A: Address> {
    addrs: LookupArray<A>,
    lengths: LookupArray<u8>,
    next_hops: LookupArray<NextHop>,
}

impl<A: Address> Routes<A> {
    fn new(routes: &[Route<A>]) -> Self {
        Routes {
            addrs: routes.iter().map(|(prefix, _)| prefix.addr()).collect(),
            lengths: routes.iter().map(|(prefix, _)| prefix.prefix_len()).collect(),
            next_hops: routes.iter().map(|&(_, next_hop)| next_hop).collect(),
        }
    }

    /// Route `index` (0-based).
    #[inline]
    fn get(&self, index: usize) -> Option<Route<A>> {
        let prefix = Prefix::new(*self.addrs.get(index)?, *self.lengths.get(index)?).ok()?;
        Some((prefix, *self.next_hops.get(index)?))
    }

    fn len(&self) -> usize {
        self.addrs.len()
    }
}

/// One family's FIB, and its routes when it answers prefixes.
pub struct CompiledFamily<A: Address> {
    fib: Box<dyn Fib<A>>,
    /// With prefixes: route `n` is `routes[n - 1]`, and `fib` answers `n`.
    routes: Option<Routes<A>>,
}

impl<A: Address> CompiledFamily<A> {
    /// Builds `engine` over `rib`, whose next hops go up to
    /// `options.max_next_hop`; with `prefixes`, over the route numbers (see
    /// the module docs).
    ///
    /// # Errors
    /// The engine's [`BuildError`]s (a route count beyond its next-hop
    /// limit among them, with `prefixes`).
    pub fn build(engine: &Engine, rib: &Rib<A>, options: &BuildOptions, prefixes: bool) -> Result<Self, BuildError> {
        if !prefixes {
            let fib = engine.build(rib, options)?;
            return Ok(CompiledFamily { fib, routes: None });
        }
        let routes: Vec<Route<A>> = rib.iter().collect();
        let mut numbered = Rib::new();
        for (number, &(prefix, _)) in (1..).zip(routes.iter()) {
            numbered.insert(prefix, number);
        }
        let max_next_hop = NextHop::try_from(routes.len()).unwrap_or(NextHop::MAX);
        let fib = engine.build(&numbered, &BuildOptions { max_next_hop, ..options.clone() })?;
        Ok(CompiledFamily { fib, routes: Some(Routes::new(&routes)) })
    }

    /// The FIB (answering next hops, or route numbers with prefixes).
    pub fn fib(&self) -> &dyn Fib<A> {
        self.fib.as_ref()
    }

    /// Whether it answers prefixes ([`CompiledFamily::route`]).
    pub fn has_prefixes(&self) -> bool {
        self.routes.is_some()
    }

    /// Looks up every key: `out[i]` gets the answer for `keys[i]`, to read
    /// with [`CompiledFamily::next_hop`] and [`CompiledFamily::route`].
    ///
    /// # Panics
    /// If `out` is shorter than `keys`.
    pub fn lookup_batch(&self, keys: &[A], out: &mut [u32]) {
        self.fib.lookup_batch(keys, out);
    }

    /// The next hop of an answer ([`NO_ROUTE`] for none).
    #[inline]
    pub fn next_hop(&self, answer: u32) -> NextHop {
        match &self.routes {
            None => answer,
            Some(_) => self.route(answer).map_or(NO_ROUTE, |(_, next_hop)| next_hop),
        }
    }

    /// The matched route of an answer: `None` for no route, and always
    /// without prefixes.
    #[inline]
    pub fn route(&self, answer: u32) -> Option<Route<A>> {
        let index = (answer as usize).checked_sub(1)?;
        self.routes.as_ref()?.get(index)
    }

    /// The next hop of `addr`.
    pub fn lookup(&self, addr: A) -> NextHop {
        self.next_hop(self.fib.lookup(addr))
    }
}

/// A routing table's FIBs for both families and its values.
pub struct CompiledTable {
    /// The table's name (its file's).
    pub name: String,
    /// The IPv4 FIB; `None` if the table has no IPv4 route.
    pub v4: Option<CompiledFamily<u32>>,
    /// The IPv6 FIB; `None` if the table has no IPv6 route.
    pub v6: Option<CompiledFamily<u128>>,
    /// What each next hop stands for.
    pub values: Values,
}

impl std::fmt::Debug for CompiledTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledTable")
            .field("name", &self.name)
            .field("engines", &self.engines())
            .field("values", &self.values.max_index())
            .finish()
    }
}

/// How to compile a table.
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// Engine names: each family gets the first one serving it, or
    /// [`default_engine`].
    pub engines: Vec<String>,
    /// Whether lookups answer the matched prefix.
    pub prefixes: bool,
    /// The keys `auto` measures its candidates on, for each family.
    pub calibration: Calibrations,
}

impl CompileOptions {
    /// The engine family `A` gets.
    ///
    /// # Errors
    /// [`UnknownEngine`] for a name the registry does not have (whatever
    /// the family).
    pub fn engine<A: Address>(&self) -> Result<&'static Engine, UnknownEngine> {
        let mut chosen = None;
        for name in &self.engines {
            let engine = registry::find_any(name)?;
            if chosen.is_none() && engine.serves(A::FAMILY) {
                chosen = Some(engine);
            }
        }
        chosen.map_or_else(|| registry::resolve::<A>(default_engine(A::FAMILY)), Ok)
    }
}

impl CompiledTable {
    /// Compiles `table` (a family without routes gets no FIB); IPv6 routes
    /// inside `::ffff:0:0/96` are compiled as the IPv4 routes they are
    /// ([`crate::load::fold_ipv4_mapped`]).
    ///
    /// # Errors
    /// An unknown engine name, or the engine's [`BuildError`].
    pub fn build(mut table: RouteTable, options: &CompileOptions) -> Result<Self, BuildError> {
        // A mapped address is looked up as IPv4: so are mapped routes, for
        // every table compiled, whoever built it (a loader has folded
        // them already, with its warning).
        crate::load::fold_ipv4_mapped(&mut table);
        let max_next_hop = table.next_hops.max_index();
        let v4 = Self::family(&table, options, max_next_hop)?;
        let v6 = Self::family(&table, options, max_next_hop)?;
        let values = match &table.records {
            None => Values::new(&table.next_hops),
            Some(records) => Values::with_records(&table.next_hops, records).map_err(|too_large| {
                let field = format!("the 32-bit offsets of field {:?}", too_large.field);
                LimitExceeded::new("records", Limit::RecordValues, field, u64::from(u32::MAX) + 1, u64::from(u32::MAX))
                    .instead("no engine (split the field)")
            })?,
        };
        Ok(CompiledTable { name: table.name, v4, v6, values })
    }

    fn family<A: Address>(
        table: &RouteTable,
        options: &CompileOptions,
        max_next_hop: NextHop,
    ) -> Result<Option<CompiledFamily<A>>, BuildError> {
        let engine = options.engine::<A>()?;
        let rib = table.rib::<A>();
        if rib.is_empty() {
            return Ok(None);
        }
        let build = BuildOptions { max_next_hop, calibration: options.calibration.clone() };
        CompiledFamily::build(engine, rib, &build, options.prefixes).map(Some)
    }

    /// The engines serving IPv4 and IPv6, `None` for a family without
    /// routes (what `auto` chose, where it was asked).
    pub fn engines(&self) -> [Option<&str>; 2] {
        [self.v4.as_ref().map(|family| family.fib().name()), self.v6.as_ref().map(|family| family.fib().name())]
    }

    /// The FIB of family `A`, if the table has routes of it.
    pub fn family_fib<A: Address>(&self) -> Option<&CompiledFamily<A>> {
        let family: &dyn Any = match A::FAMILY {
            Family::Ipv4 => &self.v4,
            Family::Ipv6 => &self.v6,
        };
        family.downcast_ref::<Option<CompiledFamily<A>>>()?.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nexthop::{Label, Mapping};

    fn table() -> RouteTable {
        let mut table = RouteTable::new("test", Mapping::Distinct);
        for (prefix, asn) in [("10.0.0.0/8", 64500), ("10.1.0.0/16", 64501), ("10.1.2.0/24", 64500)] {
            let hop = table.next_hops.intern(Label::Number(asn));
            table.v4.insert(prefix.parse().unwrap(), hop);
        }
        let hop = table.next_hops.intern(Label::Number(64502));
        table.v6.insert("2001:db8::/32".parse().unwrap(), hop);
        table
    }

    #[test]
    fn both_families_answer_next_hops_and_prefixes_when_asked() {
        for prefixes in [false, true] {
            let engines = vec!["d16r".to_string()];
            let compiled =
                CompiledTable::build(table(), &CompileOptions { engines, prefixes, ..Default::default() }).unwrap();
            let v4 = compiled.family_fib::<u32>().unwrap();
            assert_eq!(v4.fib().name(), "d16r");
            assert_eq!(compiled.family_fib::<u128>().unwrap().fib().name(), "poptrie18");
            let keys = [0x0a01_0203, 0x0a01_0303, 0x0a02_0000, 0x0b00_0000];
            let mut answers = [0; 4];
            v4.lookup_batch(&keys, &mut answers);
            let hops: Vec<NextHop> = answers.iter().map(|&answer| v4.next_hop(answer)).collect();
            assert_eq!(hops, [1, 2, 1, NO_ROUTE]);
            assert_eq!(keys.map(|key| v4.lookup(key)), [1, 2, 1, NO_ROUTE]);
            let matched: Vec<Option<String>> =
                answers.iter().map(|&answer| v4.route(answer).map(|(prefix, _)| prefix.to_string())).collect();
            let expected = [Some("10.1.2.0/24"), Some("10.1.0.0/16"), Some("10.0.0.0/8"), None];
            if prefixes {
                assert_eq!(matched, expected.map(|prefix| prefix.map(String::from)));
            } else {
                assert!(matched.iter().all(Option::is_none));
            }
            assert_eq!(compiled.family_fib::<u128>().unwrap().lookup(0x2001_0db8 << 96), 3);
        }
    }

    /// A table built route by route (as Python and C build theirs, no
    /// loader involved) answers its IPv4-mapped IPv6 routes as IPv4.
    #[test]
    fn mapped_routes_are_compiled_as_ipv4_routes() {
        let mut table = table();
        let hop = table.next_hops.intern(Label::Number(64503));
        table.v6.insert("::ffff:1.2.3.0/120".parse().unwrap(), hop);
        let compiled = CompiledTable::build(table, &CompileOptions::default()).unwrap();
        assert_eq!(compiled.family_fib::<u32>().unwrap().lookup(0x0102_0304), hop);
        let v6 = compiled.family_fib::<u128>().unwrap();
        assert_eq!(v6.lookup(0xffff_0102_0304), NO_ROUTE, "not in the IPv6 FIB");
    }

    #[test]
    fn engines_are_chosen_per_family_and_unknown_names_refused() {
        let options =
            CompileOptions { engines: vec!["poptrie16".into(), "d16r".into()], prefixes: false, ..Default::default() };
        assert_eq!(options.engine::<u32>().unwrap().name, "poptrie16");
        assert_eq!(options.engine::<u128>().unwrap().name, "poptrie16");
        let options = CompileOptions { engines: vec!["d16r6".into()], prefixes: false, ..Default::default() };
        assert_eq!(options.engine::<u32>().unwrap().name, "d18r");
        let options = CompileOptions { engines: vec!["nonesuch".into()], prefixes: false, ..Default::default() };
        assert!(CompiledTable::build(table(), &options).is_err());
        let mut empty = table();
        empty.v6 = Rib::new();
        assert!(CompiledTable::build(empty, &CompileOptions::default()).unwrap().v6.is_none());
    }
}
