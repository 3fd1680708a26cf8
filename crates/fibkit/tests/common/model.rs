//! The model the update tests check routers against: labels that stand
//! for next hops 1 to N, and the table a sequence of updates leaves.

use fibkit::addr::{Address, Prefix};
use fibkit::fib::BuildOptions;
use fibkit::nexthop::{Label, Mapping, NextHopTable};
use fibkit::registry;
use fibkit::router::Update;
use fibkit::{NextHop, Rib};

/// Every engine whose router updates family `A` in place, with the next
/// hops its tests give it: up to `hops`, or to the engine's limit where
/// that is lower (`sail` and `sail-runs`, 2^15 - 1: labels fold into fewer
/// next hops, the same for the router and for the model).
pub fn incremental_engines<A: Address>(hops: u32) -> Vec<(&'static str, u32)> {
    let empty = Rib::<A>::new();
    registry::engines_of(A::FAMILY)
        .iter()
        .filter_map(|spec| {
            let updater = registry::updater::<A>(spec.name, &empty, &BuildOptions::default()).ok()?;
            updater.incremental().then(|| (spec.name, updater.max_next_hop().min(hops)))
        })
        .collect()
}

/// Labels as next hops up to `hops`: label `n` is next hop `n + 1`.
pub fn next_hops(hops: u32) -> NextHopTable {
    NextHopTable::new(Mapping::Modulo(hops))
}

/// The label of next hop `next_hop` (from 1).
pub fn label(next_hop: NextHop) -> Label {
    Label::Number(u64::from(next_hop) - 1)
}

/// The table `updates` leave, with labels as next hops up to `hops`.
pub fn rib_from<A: Address>(updates: &[Update<Prefix<A>>], hops: u32) -> Rib<A> {
    let mut rib = Rib::new();
    let mut hops = next_hops(hops);
    for update in updates {
        match *update {
            Update::Announce { prefix, value } => {
                rib.insert(prefix, hops.intern(value));
            }
            Update::Withdraw { prefix } => {
                rib.remove(prefix);
            }
        }
    }
    rib
}
