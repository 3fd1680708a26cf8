//! The default route kept aside from an in-place structure: [`WithDefault`].
//!
//! Under a full table the default route answers in tens of thousands of
//! gaps between the more specific routes; written into the structure, a
//! default route that flaps rewrites all of them (milliseconds an update).
//! An in-place updater's structure instead answers [`NO_ROUTE`] there, and
//! the lookup puts the default route's next hop, one word beside the
//! structure, in its place (a compare on the path of "no route"): changing
//! the default route stores that word
//! ([`Updater::set_default`](super::Updater::set_default)).
//!
//! The word is loaded (`Acquire`) before the structure is searched and,
//! where the structure has no route, once more after it: a lookup answers
//! the default only if no store of it came between the two, so the
//! default it answers and the structure's "no route" it found are of one
//! moment; else it looks up again. The word counts its stores in its high
//! half, so a default stored away and back is a change too. Each store is
//! followed by a `Release` fence: a lookup that finds an entry written
//! after a store also finds that store. The router orders the writes of a
//! batch around the store (its module docs, "The default route"); frozen
//! builds keep the default route in their structure, as their files do.

use std::ops::Deref;

use super::sync::{fence, AtomicU64, Ordering};
use crate::addr::Address;
use crate::fib::{Fib, Stats};
use crate::file::{FamilyWriter, Problem};
use crate::random::Keyed;
use crate::workload::{self, Workload};
use crate::{NextHop, NO_ROUTE};

/// An engine's structure `F` with the default route's next hop beside it:
/// where `F` answers [`NO_ROUTE`], the lookup answers the default.
/// Dereferences to `F`, which the updater writes as before.
#[derive(Debug)]
pub struct WithDefault<F> {
    fib: F,
    /// The default route's next hop ([`NO_ROUTE`] without one) in the low
    /// 32 bits, the number of stores so far in the high 32.
    default: AtomicU64,
}

/// The next hop of a [`WithDefault::default`] word.
#[inline(always)]
fn next_hop(word: u64) -> NextHop {
    word as NextHop
}

impl<F> WithDefault<F> {
    /// `fib` with no default route aside.
    pub fn new(fib: F) -> Self {
        WithDefault { fib, default: AtomicU64::new(u64::from(NO_ROUTE)) }
    }

    /// `fib` (a copy of `other`'s structure) with `other`'s default.
    pub fn like<G>(fib: F, other: &WithDefault<G>) -> Self {
        WithDefault { fib, default: AtomicU64::new(other.word()) }
    }

    /// The default word, `Acquire`: what was written before its store is
    /// seen by what follows.
    #[inline(always)]
    fn word(&self) -> u64 {
        self.default.load(Ordering::Acquire)
    }

    /// The default word again after a search of the structure: the same
    /// word as before it means that no store came between.
    #[inline(always)]
    fn word_after(&self) -> u64 {
        fence(Ordering::Acquire);
        self.default.load(Ordering::Relaxed)
    }

    /// The default route's next hop ([`NO_ROUTE`] without one).
    pub fn default(&self) -> NextHop {
        next_hop(self.word())
    }

    /// Makes `next_hop` the default route's ([`NO_ROUTE`]: none) for the
    /// lookups that start from now on: a `Release` store (what was written
    /// before it is seen with it), then a `Release` fence (what is written
    /// after it is seen only with it). One writer.
    pub fn set_default(&self, next_hop: NextHop) {
        let stores = (self.default.load(Ordering::Relaxed) >> 32).wrapping_add(1);
        self.default.store(stores << 32 | u64::from(next_hop), Ordering::Release);
        fence(Ordering::Release);
    }
}

impl<F> Deref for WithDefault<F> {
    type Target = F;
    #[inline(always)]
    fn deref(&self) -> &F {
        &self.fib
    }
}

impl<F> WithDefault<F> {
    /// The lookup of `addr` where the structure found no route after the
    /// default word `before`: the default, if no store came since; else
    /// the lookup again.
    #[inline]
    fn no_route<A: Address>(&self, addr: A, mut before: u64) -> NextHop
    where
        F: Fib<A>,
    {
        loop {
            let after = self.word_after();
            if after == before {
                return next_hop(before);
            }
            before = self.word();
            let found = self.fib.lookup(addr);
            if found != NO_ROUTE {
                return found;
            }
        }
    }

    /// The keys of a batch that found no route while the default changed,
    /// looked up again one at a time.
    #[cold]
    #[inline(never)]
    fn again<A: Address>(&self, keys: &[A], out: &mut [NextHop])
    where
        F: Fib<A>,
    {
        for (answer, &key) in out.iter_mut().zip(keys) {
            if *answer == NO_ROUTE {
                *answer = self.lookup(key);
            }
        }
    }
}

impl<A: Address, F: Fib<A>> Fib<A> for WithDefault<F> {
    fn name(&self) -> &str {
        self.fib.name()
    }

    #[inline]
    fn lookup(&self, addr: A) -> NextHop {
        let before = self.word();
        let found = self.fib.lookup(addr);
        if found != NO_ROUTE {
            return found;
        }
        self.no_route(addr, before)
    }

    /// The structure's batch path, then the default put in the answers of
    /// [`NO_ROUTE`] (a pass only while there is a default route); if the
    /// default changed meanwhile, those keys are looked up again.
    fn lookup_batch(&self, keys: &[A], out: &mut [NextHop]) {
        let before = self.word();
        self.fib.lookup_batch(keys, out);
        let out = &mut out[..keys.len()];
        if self.word_after() != before {
            return self.again(keys, out);
        }
        let default = next_hop(before);
        if default != NO_ROUTE {
            for answer in out {
                if *answer == NO_ROUTE {
                    *answer = default;
                }
            }
        }
    }

    fn footprint(&self) -> usize {
        self.fib.footprint()
    }

    /// The structure's: of the routes but the default route.
    fn stats(&self) -> Stats {
        self.fib.stats()
    }

    fn run_workload(&self, workload: &Workload<A>, lookups: u64) -> u64
    where
        A: Keyed,
    {
        workload::run(self, workload, lookups)
    }

    /// The structure's file, when no default route is aside: a file holds
    /// the default route in its structure, as a frozen build does.
    ///
    /// # Errors
    /// [`Problem::DefaultAside`] while a default route is aside; the
    /// structure's own otherwise.
    fn save<'a>(&'a self, file: &mut FamilyWriter<'_, 'a>) -> Result<(), Problem> {
        if self.default() != NO_ROUTE {
            return Err(Problem::DefaultAside { engine: self.fib.name().to_string() });
        }
        self.fib.save(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::Prefix4;
    use crate::engines::radix::Radix;
    use crate::rib::Rib4;

    #[test]
    fn the_default_answers_where_the_structure_has_no_route() {
        let mut rib = Rib4::new();
        rib.insert("10.0.0.0/8".parse::<Prefix4>().unwrap(), 7);
        let fib = WithDefault::new(Radix::build(&rib));
        let keys = [0x0a01_0203, 0x0b00_0000, 0];
        let mut out = [9; 4];
        fib.lookup_batch(&keys, &mut out);
        assert_eq!(out, [7, NO_ROUTE, NO_ROUTE, 9], "no default: the structure's answers, the rest untouched");
        fib.set_default(3);
        assert_eq!((fib.lookup(0x0a01_0203), fib.lookup(0x0b00_0000)), (7, 3));
        fib.lookup_batch(&keys, &mut out);
        assert_eq!(out, [7, 3, 3, 9]);
        let copy = WithDefault::like(Radix::build(&rib), &fib);
        assert_eq!(copy.lookup(0), 3, "a copy keeps the default");
        fib.set_default(NO_ROUTE);
        assert_eq!(fib.lookup(0), NO_ROUTE);
    }
}
