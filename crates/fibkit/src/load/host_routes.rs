//! Host-route tables: `count` /32 routes packed into `subnets` subnets, the
//! second scenario of the Linux route-lookup article ("500,000 host routes
//! tightly packed in 4 distinct subnets"), for `fibkit convert
//! --host-routes` and `fibkit reproduce linux`.
//!
//! ```text
//!   10.0.0.0/8 split in `subnets` equal parts (a power of two at least as large)
//!   ┌───────────────┬───────────────┬───────────────┬───────────────┐
//!   │ ▮▮▮▮▮▮▮▮▮     │ ▮▮▮▮▮▮▮▮▮     │ ▮▮▮▮▮▮▮▮▮     │ ▮▮▮▮▮▮▮▮      │
//!   └───────────────┴───────────────┴───────────────┴───────────────┘
//!    each part's hosts consecutive from its first address; host i of the
//!    table goes to part i % subnets, next hop i % next_hops + 1
//! ```

use crate::addr::Prefix4;
use crate::nexthop::Mapping;

use super::RouteTable;

/// The block the subnets are carved from.
const BLOCK: u32 = 0x0a00_0000;
/// Its prefix length (10.0.0.0/8).
const BLOCK_LEN: u32 = 8;

/// Why a host-route table cannot be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HostRoutesError {
    /// No subnet, or more than 10.0.0.0/8 has /32s.
    #[error("{subnets} subnets: give 1 to 16,777,216")]
    Subnets {
        /// Subnets asked for.
        subnets: usize,
    },
    /// More hosts than the subnets hold.
    #[error("{count} host routes do not fit {subnets} subnets of 10.0.0.0/8 ({capacity} addresses each)")]
    TooMany {
        /// Routes asked for.
        count: usize,
        /// Subnets asked for.
        subnets: usize,
        /// Addresses in each subnet.
        capacity: u64,
    },
    /// No next hop to route to.
    #[error("0 next hops: give at least 1")]
    NextHops,
}

/// `count` host routes in `subnets` subnets of 10.0.0.0/8, to `next_hops`
/// next hops in turn, as the module documentation draws them. The table's
/// values are the next-hop indexes themselves.
///
/// # Errors
/// [`HostRoutesError`]: no subnet or too many, more routes than the subnets
/// hold, no next hop.
pub fn host_routes(count: usize, subnets: usize, next_hops: u32) -> Result<RouteTable, HostRoutesError> {
    if subnets == 0 || subnets > 1 << (32 - BLOCK_LEN) {
        return Err(HostRoutesError::Subnets { subnets });
    }
    if next_hops == 0 {
        return Err(HostRoutesError::NextHops);
    }
    let part_bits = (32 - BLOCK_LEN) - subnets.next_power_of_two().trailing_zeros();
    let capacity = 1u64 << part_bits;
    if count as u64 > capacity * subnets as u64 {
        return Err(HostRoutesError::TooMany { count, subnets, capacity });
    }
    let mut table =
        RouteTable::new(format!("host-routes({count} /32 in {subnets} subnets)"), Mapping::Modulo(next_hops));
    for host in 0..count {
        let (part, offset) = ((host % subnets) as u32, (host / subnets) as u32);
        let addr = BLOCK | (part << part_bits) | offset;
        let next_hop = (host as u32) % next_hops + 1;
        table.v4.insert(Prefix4::new(addr, 32).expect("a /32 of any address"), next_hop);
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_fill_each_subnet_from_its_start() {
        let table = host_routes(10, 4, 3).unwrap();
        let routes: Vec<(String, u32)> = table.v4.iter().map(|(prefix, hop)| (prefix.to_string(), hop)).collect();
        assert_eq!(routes.len(), 10);
        // Part i % 4, host i / 4 in it; next hop i % 3 + 1.
        assert!(routes.contains(&("10.0.0.0/32".to_string(), 1)));
        assert!(routes.contains(&("10.64.0.0/32".to_string(), 2)));
        assert!(routes.contains(&("10.192.0.1/32".to_string(), 2)), "host 7");
        assert!(routes.contains(&("10.0.0.2/32".to_string(), 3)), "host 8");
        assert_eq!(table.v4.lookup(0x0a40_0001), 3, "host 5");
        assert_eq!(table.v4.lookup(0x0a40_0002), 1, "host 9");
        assert_eq!(table.v4.lookup(0x0a40_0003), crate::NO_ROUTE);
        assert_eq!(table.next_hops.max_index(), 3);
    }

    #[test]
    fn half_a_million_in_four_subnets_and_the_limits() {
        let table = host_routes(500_000, 4, 16).unwrap();
        assert_eq!(table.v4.len(), 500_000);
        assert!(table.v4.iter().all(|(prefix, _)| prefix.prefix_len() == 32));
        assert_eq!(
            host_routes(1 << 24, 3, 1).unwrap_err(),
            HostRoutesError::TooMany { count: 1 << 24, subnets: 3, capacity: 1 << 22 }
        );
        assert_eq!(host_routes(1, 0, 1).unwrap_err(), HostRoutesError::Subnets { subnets: 0 });
        assert_eq!(host_routes(1, 1, 0).unwrap_err(), HostRoutesError::NextHops);
        // As many subnets as 10.0.0.0/8 has addresses: one host each.
        let spread = host_routes(3, 1 << 24, 1).unwrap();
        assert_eq!(
            spread.v4.iter().map(|(prefix, _)| prefix.to_string()).collect::<Vec<_>>(),
            ["10.0.0.0/32", "10.0.0.1/32", "10.0.0.2/32"]
        );
        assert_eq!(host_routes(3, (1 << 24) + 1, 1).unwrap_err(), HostRoutesError::Subnets { subnets: (1 << 24) + 1 });
    }
}
