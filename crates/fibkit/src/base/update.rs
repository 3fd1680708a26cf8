//! One routing change, from the loaders (update streams, MRT `BGP4MP`) to
//! the router: [`Update`].

use std::fmt;

use crate::addr::{Address, IpPrefix, Prefix};
use crate::nexthop::Label;

/// One routing change of a prefix of type `P`: an [`IpPrefix`] (either
/// family, as update streams carry them) or a [`Prefix`]`<A>` of one family
/// (as a [`crate::router::Router`] applies them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update<P = IpPrefix> {
    /// The prefix is now routed to `value` (a new route or a replacement).
    Announce {
        /// The announced prefix.
        prefix: P,
        /// The route's value (next hop or origin AS), to be interned.
        value: Label,
    },
    /// The prefix is no longer routed.
    Withdraw {
        /// The withdrawn prefix.
        prefix: P,
    },
}

impl<P: Copy> Update<P> {
    /// The prefix the update is about.
    pub fn prefix(&self) -> P {
        match *self {
            Update::Announce { prefix, .. } | Update::Withdraw { prefix } => prefix,
        }
    }
}

impl Update<IpPrefix> {
    /// The same update if its prefix is of family `A`.
    pub fn of<A: Address>(self) -> Option<Update<Prefix<A>>> {
        Some(match self {
            Update::Announce { prefix, value } => Update::Announce { prefix: prefix.of()?, value },
            Update::Withdraw { prefix } => Update::Withdraw { prefix: prefix.of()? },
        })
    }
}

impl<P: fmt::Display> fmt::Display for Update<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Update::Announce { prefix, value } => write!(f, "announce {prefix} via {value}"),
            Update::Withdraw { prefix } => write!(f, "withdraw {prefix}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::{Prefix4, Prefix6};

    #[test]
    fn updates_of_either_family_narrow_to_theirs() {
        let v4: Prefix4 = "10.0.0.0/8".parse().unwrap();
        let v6: Prefix6 = "2001:db8::/32".parse().unwrap();
        let announce = Update::Announce { prefix: IpPrefix::from(v4), value: Label::Number(7) };
        assert_eq!(announce.of::<u32>(), Some(Update::Announce { prefix: v4, value: Label::Number(7) }));
        assert_eq!(announce.of::<u128>(), None);
        let withdraw = Update::Withdraw { prefix: IpPrefix::from(v6) };
        assert_eq!(withdraw.of::<u128>(), Some(Update::Withdraw { prefix: v6 }));
        assert_eq!(withdraw.to_string(), "withdraw 2001:db8::/32");
        assert_eq!(announce.to_string(), "announce 10.0.0.0/8 via 7");
    }
}
