//! The Poptrie paper's synthetic tables (section 4.8): a real table grown
//! to what a larger Internet might hold, to test engines' limits.
//!
//! | table | route of length | is split into |
//! |---|---|---|
//! | SYN1 | /0 to /15 | 4 (two more bits) |
//! | SYN1 | /16 to /23 | 2 (one more bit) |
//! | SYN2 | /0 to /15 | 8 (three more bits) |
//! | SYN2 | /16 to /19 | 4 |
//! | SYN2 | /20 to /23 | 2 |
//! | both | /24 to /32 | 1 (kept as it is) |
//!
//! The paper says "each prefix that is no longer than /24 and /16 is split
//! into two and four prefixes" (SYN2: /24, /20, /16). Read with the lengths
//! included, the 2014 RouteViews table grows 2.05 times (SYN1: 512,621
//! routes to 1,050,832) and 2.46 times (SYN2), against the 1.44 and 1.67
//! times of the paper's own tables (531,489 routes to 764,847 and
//! 885,645); read as "shorter than", as in the table above, it grows 1.46
//! and 1.69 times (748,074 and 867,596 routes). That reading also
//! keeps every part at /24 or shorter, which SAIL compiling SYN1 in the
//! paper needs (a /25 part would cost a level-32 chunk per /24), so fibkit
//! takes it.
//!
//! The paper gives the i-th part of a route to next hop n the next hop
//! n + i, "which did not overlap any existing next hops" of its 13; here
//! the i-th part gets n + i × `stride`, `stride` being one more than the
//! table's largest next hop, so that part 0 keeps n, the other parts get
//! next hops no route had, and every new next hop still names its route:
//! `next_hop % stride` is the original's.
//!
//! Parts of two routes can be the same prefix (a /15's quarters and a
//! /16's halves are /17s): the part of the longer route, the more specific
//! one, is kept, so every address is answered by a part of the route that
//! answered it before.

use crate::addr::Prefix4;
use crate::rib::Rib4;
use crate::NextHop;

/// Which of the paper's synthetic tables to grow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Growth {
    /// SYN1: shorter than /16 in 4, /16 to /23 in 2.
    Syn1,
    /// SYN2: shorter than /16 in 8, /16 to /19 in 4, /20 to /23 in 2.
    Syn2,
}

impl Growth {
    /// Bits a route of `prefix_len` bits is split by (into 2^bits parts).
    pub fn split_bits(self, prefix_len: u8) -> u8 {
        match (self, prefix_len) {
            (_, 24..) => 0,
            (Growth::Syn1, 16..) | (Growth::Syn2, 20..) => 1,
            (Growth::Syn1, _) | (Growth::Syn2, 16..) => 2,
            (Growth::Syn2, _) => 3,
        }
    }

    /// The paper's name (`SYN1`, `SYN2`).
    pub fn name(self) -> &'static str {
        match self {
            Growth::Syn1 => "SYN1",
            Growth::Syn2 => "SYN2",
        }
    }
}

/// The table's next hops are too large for the new ones to fit 32 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{growth:?}: next hop {largest} leaves no room for {parts} parts' new next hops below 2^32")]
pub struct GrowthError {
    /// The growth asked for.
    pub growth: Growth,
    /// The table's largest next hop.
    pub largest: NextHop,
    /// Parts of the routes split most.
    pub parts: u32,
}

/// `rib` grown as `growth` says (see the module docs). Returns the grown
/// table and the `stride` of its new next hops.
///
/// # Errors
/// [`GrowthError`] if a new next hop would not fit 32 bits.
pub fn grow(rib: &Rib4, growth: Growth) -> Result<(Rib4, NextHop), GrowthError> {
    let largest = rib.iter().map(|(_, next_hop)| next_hop).max().unwrap_or_default();
    let parts = 1u32 << growth.split_bits(0);
    let error = GrowthError { growth, largest, parts };
    let stride = largest.checked_add(1).ok_or(error)?;
    // The largest new next hop: the largest one's last part.
    stride.checked_mul(parts - 1).and_then(|offset| offset.checked_add(largest)).ok_or(error)?;
    // Shorter routes first: a part of a longer route replaces an equal one.
    let mut routes: Vec<(Prefix4, NextHop)> = rib.iter().collect();
    routes.sort_by_key(|(prefix, _)| prefix.prefix_len());
    let mut grown = Rib4::new();
    for (prefix, next_hop) in routes {
        let bits = growth.split_bits(prefix.prefix_len());
        let length = prefix.prefix_len() + bits;
        for part in 0..1u32 << bits {
            let addr = prefix.addr() | part.checked_shl(32 - u32::from(length)).unwrap_or_default();
            grown.insert(Prefix4::truncating(addr, length), next_hop + part * stride);
        }
    }
    Ok((grown, stride))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rib(routes: &[(&str, NextHop)]) -> Rib4 {
        let mut rib = Rib4::new();
        for &(prefix, next_hop) in routes {
            rib.insert(prefix.parse().unwrap(), next_hop);
        }
        rib
    }

    fn listed(rib: &Rib4) -> Vec<(String, NextHop)> {
        rib.iter().map(|(prefix, next_hop)| (prefix.to_string(), next_hop)).collect()
    }

    #[test]
    fn split_bits_follow_the_paper() {
        let bits = |growth: Growth| [0, 8, 15, 16, 19, 20, 23, 24, 32].map(|len| growth.split_bits(len));
        assert_eq!(bits(Growth::Syn1), [2, 2, 2, 1, 1, 1, 1, 0, 0]);
        assert_eq!(bits(Growth::Syn2), [3, 3, 3, 2, 2, 1, 1, 0, 0]);
    }

    #[test]
    fn syn1_by_hand() {
        let table = rib(&[("10.0.0.0/8", 1), ("10.0.0.0/16", 2), ("192.168.0.0/23", 3), ("192.168.1.0/24", 4)]);
        let (grown, stride) = grow(&table, Growth::Syn1).unwrap();
        assert_eq!(stride, 5);
        let want = [
            ("10.0.0.0/10", 1),
            ("10.0.0.0/17", 2),
            ("10.0.128.0/17", 7),
            ("10.64.0.0/10", 6),
            ("10.128.0.0/10", 11),
            ("10.192.0.0/10", 16),
            ("192.168.0.0/24", 3),
            // The /23's second half (3 + 5) gives way to the /24 itself.
            ("192.168.1.0/24", 4),
        ];
        assert_eq!(listed(&grown), want.map(|(prefix, next_hop)| (prefix.to_string(), next_hop)));
    }

    #[test]
    fn syn2_by_hand() {
        let table = rib(&[("0.0.0.0/0", 1), ("10.0.0.0/15", 2), ("10.0.0.0/16", 3), ("10.0.0.0/21", 4)]);
        let (grown, stride) = grow(&table, Growth::Syn2).unwrap();
        assert_eq!(stride, 5);
        // /0 in 8 /3s, /15 in 8 /18s, /16 in 4 /18s (replacing the /15's
        // first four), /21 in 2 /22s.
        assert_eq!(grown.len(), 8 + 8 + 2);
        assert_eq!(grown.get("224.0.0.0/3".parse().unwrap()), Some(1 + 7 * 5));
        assert_eq!(grown.get("10.0.192.0/18".parse().unwrap()), Some(3 + 3 * 5));
        assert_eq!(grown.get("10.1.0.0/18".parse().unwrap()), Some(2 + 4 * 5));
        assert_eq!(grown.get("10.0.4.0/22".parse().unwrap()), Some(4 + 5));
    }

    #[test]
    fn every_address_keeps_its_route() {
        let table = rib(&[
            ("0.0.0.0/0", 9),
            ("10.0.0.0/8", 1),
            ("10.0.0.0/15", 2),
            ("10.0.0.0/16", 3),
            ("10.0.0.0/17", 4),
            ("10.0.0.0/21", 5),
            ("10.0.0.0/24", 6),
            ("10.0.0.0/25", 7),
            ("10.0.0.1/32", 8),
        ]);
        for growth in [Growth::Syn1, Growth::Syn2] {
            let (grown, stride) = grow(&table, growth).unwrap();
            let mut rng = crate::random::XorShift32::new(7);
            let probes =
                (0..20_000u32).map(|_| rng.next() & 0x0f03_ffff | 0x0a00_0000).chain([0, 1, 0x0a00_0001, u32::MAX]);
            for addr in probes {
                assert_eq!(grown.lookup(addr) % stride, table.lookup(addr) % stride, "{growth:?} {addr:#x}");
            }
        }
    }

    #[test]
    fn next_hops_near_2_to_the_32_are_refused() {
        // SYN1's last part of 2^30 - 1 is 2^30 - 1 + 3 * 2^30 = 2^32 - 1.
        let table = rib(&[("10.0.0.0/8", u32::MAX / 4)]);
        let error = grow(&table, Growth::Syn2).unwrap_err();
        assert_eq!((error.largest, error.parts), (u32::MAX / 4, 8));
        let (grown, _) = grow(&table, Growth::Syn1).unwrap();
        assert_eq!(grown.get("10.192.0.0/10".parse().unwrap()), Some(u32::MAX));
    }
}
