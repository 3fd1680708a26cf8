//! The routes each neighbour sent, kept apart, and the best of them per
//! prefix by the decision steps that apply to a receiver (RFC 4271
//! 9.1.2.2).
//!
//! A prefix's candidates are `(neighbour, route)` pairs; the route is
//! shared by every prefix of the UPDATE that announced it. The steps, each
//! keeping the candidates that tie for the best:
//!
//! 1. highest degree of preference: LOCAL_PREF from an internal
//!    neighbour, [`DEFAULT_LOCAL_PREF`] for a route from an external one
//!    (whose LOCAL_PREF is ignored, 5.1.5);
//! 2. shortest AS_PATH (an `AS_SET` counts one);
//! 3. lowest ORIGIN;
//! 4. lowest MULTI_EXIT_DISC among routes from the same neighbouring AS
//!    (a route loses when another from its AS has a lower one; a missing
//!    MED is 0);
//! 5. routes from external neighbours over internal ones;
//! 6. (interior cost to the next hop: fibkit has no IGP, so all tie;)
//! 7. lowest BGP identifier of the neighbour;
//! 8. lowest neighbour address.

use std::cmp::Reverse;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use fibkit::nexthop::Label;
use fibkit::Family;
use smallvec::SmallVec;

/// The degree of preference of a route from an external neighbour.
pub const DEFAULT_LOCAL_PREF: u32 = 100;

/// What the decision and the FIB need of a route: one per UPDATE, shared
/// by its prefixes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// Degree of preference (step 1).
    pub local_pref: u32,
    /// AS_PATH length (step 2).
    pub as_path_len: u32,
    /// ORIGIN (step 3).
    pub origin: u8,
    /// MULTI_EXIT_DISC, 0 when absent (step 4).
    pub med: u32,
    /// The neighbouring AS: the first of the AS_PATH, or the local AS for
    /// a route an internal neighbour originates (step 4).
    pub neighbour_as: u32,
    /// From an external neighbour (step 5).
    pub external: bool,
    /// The next hop of the IPv4 NLRI and of the `MP_REACH_NLRI` NLRI.
    pub next_hop: Option<IpAddr>,
    /// The next hop of the `MP_REACH_NLRI` NLRI.
    pub mp_next_hop: Option<IpAddr>,
    /// The origin AS (the neighbour's AS for an empty path).
    pub origin_as: u32,
}

impl Route {
    /// The value the FIB holds for the route when it wins: its next hop or
    /// its origin AS. `None`: the route has no next hop for the family.
    pub fn label(&self, family: Family, choice: fibkit::load::ValueChoice) -> Option<Label> {
        match choice {
            fibkit::load::ValueChoice::OriginAs => Some(Label::Number(u64::from(self.origin_as))),
            fibkit::load::ValueChoice::NextHop => {
                let next_hop = match family {
                    Family::Ipv4 => self.next_hop.or(self.mp_next_hop),
                    Family::Ipv6 => self.mp_next_hop,
                };
                next_hop.map(Label::Addr)
            }
        }
    }
}

/// Who a neighbour is, for the last two steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Identity {
    /// The BGP identifier it sent.
    pub router_id: Ipv4Addr,
    /// Its address.
    pub address: IpAddr,
}

/// A prefix's candidates: the route of each neighbour that sent one.
pub type Candidates = SmallVec<[(u16, Arc<Route>); 1]>;

/// The position in `candidates` of the best route, by the steps of the
/// [module docs](self); `identity` gives each neighbour's identifier and
/// address. `None` when there is no candidate.
pub fn best(candidates: &[(u16, Arc<Route>)], identity: impl Fn(u16) -> Identity) -> Option<usize> {
    match candidates.len() {
        0 => return None,
        1 => return Some(0),
        _ => {}
    }
    let mut alive: SmallVec<[usize; 4]> = (0..candidates.len()).collect();
    let route = |at: usize| &candidates[at].1;
    keep_best(&mut alive, |at| route(at).local_pref);
    keep_best(&mut alive, |at| Reverse(route(at).as_path_len));
    keep_best(&mut alive, |at| Reverse(route(at).origin));
    // Step 4: a route loses to one from the same neighbouring AS with a
    // lower MED.
    let survivors: SmallVec<[usize; 4]> = alive
        .iter()
        .copied()
        .filter(|&at| {
            !alive
                .iter()
                .any(|&other| route(other).neighbour_as == route(at).neighbour_as && route(other).med < route(at).med)
        })
        .collect();
    alive = survivors;
    keep_best(&mut alive, |at| route(at).external);
    keep_best(&mut alive, |at| Reverse(identity(candidates[at].0).router_id));
    keep_best(&mut alive, |at| Reverse(identity(candidates[at].0).address));
    alive.first().copied()
}

/// Keeps the candidates whose `key` is the greatest.
fn keep_best<K: Ord>(alive: &mut SmallVec<[usize; 4]>, key: impl Fn(usize) -> K) {
    if alive.len() > 1 {
        let top = alive.iter().map(|&at| key(at)).max().expect("candidates");
        alive.retain(|at| key(*at) == top);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(local_pref: u32, as_path_len: u32, origin: u8, med: u32, neighbour_as: u32, external: bool) -> Arc<Route> {
        Arc::new(Route {
            local_pref,
            as_path_len,
            origin,
            med,
            neighbour_as,
            external,
            next_hop: None,
            mp_next_hop: None,
            origin_as: neighbour_as,
        })
    }

    fn identity(neighbour: u16) -> Identity {
        // Neighbour n: identifier 10.0.0.(9 - n), address 192.0.2.n.
        Identity {
            router_id: Ipv4Addr::new(10, 0, 0, 9 - neighbour as u8),
            address: IpAddr::V4(Ipv4Addr::new(192, 0, 2, neighbour as u8)),
        }
    }

    fn winner(candidates: &[(u16, Arc<Route>)]) -> u16 {
        candidates[best(candidates, identity).unwrap()].0
    }

    #[test]
    fn each_step_decides_when_the_ones_before_it_tie() {
        // 1: LOCAL_PREF beats a shorter path.
        assert_eq!(winner(&[(0, route(100, 1, 0, 0, 1, true)), (1, route(200, 5, 2, 0, 2, false))]), 1);
        // 2: a shorter path beats a better origin.
        assert_eq!(winner(&[(0, route(100, 3, 0, 0, 1, true)), (1, route(100, 2, 2, 0, 2, true))]), 1);
        // 3: origin IGP beats INCOMPLETE.
        assert_eq!(winner(&[(0, route(100, 2, 2, 0, 1, true)), (1, route(100, 2, 0, 9, 2, true))]), 1);
        // 4: MED counts between routes of one neighbouring AS...
        assert_eq!(winner(&[(0, route(100, 2, 0, 50, 7, true)), (1, route(100, 2, 0, 10, 7, true))]), 1);
        // ... and not between ASes (then the identifier decides: 1's is lower).
        assert_eq!(winner(&[(0, route(100, 2, 0, 10, 7, true)), (1, route(100, 2, 0, 50, 8, true))]), 1);
        // 5: external beats internal.
        assert_eq!(winner(&[(0, route(100, 2, 0, 0, 7, false)), (1, route(100, 2, 0, 0, 8, true))]), 1);
        // 7: the lowest identifier.
        assert_eq!(winner(&[(1, route(100, 2, 0, 0, 7, true)), (2, route(100, 2, 0, 0, 8, true))]), 2);
        // 8: the lowest address when identifiers tie.
        let same_id = |neighbour: u16| Identity { router_id: Ipv4Addr::new(10, 0, 0, 1), ..identity(neighbour) };
        let candidates = [(3, route(100, 2, 0, 0, 7, true)), (2, route(100, 2, 0, 0, 8, true))];
        assert_eq!(candidates[best(&candidates, same_id).unwrap()].0, 2);
        assert_eq!(best(&[], identity), None);
    }

    #[test]
    fn med_eliminates_only_within_its_as() {
        // A (AS 7, MED 50), B (AS 7, MED 10), C (AS 8, MED 99): A loses to
        // B; of B and C the identifier decides (B = neighbour 1, C = 2: C).
        let candidates = [
            (0, route(100, 2, 0, 50, 7, true)),
            (1, route(100, 2, 0, 10, 7, true)),
            (2, route(100, 2, 0, 99, 8, true)),
        ];
        assert_eq!(winner(&candidates), 2);
    }
}
