//! The model the update tests check routers against: labels that stand
//! for next hops 1 to N, and the table a sequence of updates leaves.

use fibkit::addr::{Address, Prefix};
use fibkit::nexthop::{Label, Mapping, NextHopTable};
use fibkit::router::Update;
use fibkit::{NextHop, Rib};

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
