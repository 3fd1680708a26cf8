//! One kernel route as the mirror keeps it, read from an `RTM_NEWROUTE` or
//! `RTM_DELROUTE` message, and the value rule of the module's
//! documentation.

use std::net::IpAddr;

use fibkit::addr::{IpPrefix, Prefix4, Prefix6};
use fibkit::nexthop::Label;
use fibkit::Prefix;
use netlink_packet_route::route::{
    RouteAddress, RouteAttribute, RouteFlags, RouteMessage, RouteNextHopFlags, RouteType, RouteVia,
};
use netlink_packet_route::AddressFamily;
use smallvec::SmallVec;

use super::RouteValue;

/// How values are chosen: the configuration's part of the rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    pub value: RouteValue,
    pub reject: Option<Label>,
}

/// What tells routes of one prefix apart in the kernel: TOS, source prefix
/// and priority (IPv4 keys its aliases by TOS and priority, IPv6 its routes
/// by source and metric).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    pub tos: u8,
    pub source_len: u8,
    pub source: u128,
    pub priority: u32,
}

/// A next hop: its gateway and output interface (0: none).
#[derive(Clone, Copy, Debug)]
pub struct Hop {
    pub gateway: Option<IpAddr>,
    pub interface: u32,
    /// `RTNH_F_DEAD`: the kernel's lookup skips it. Not part of the hop's
    /// identity (the flag changes without a notification).
    pub dead: bool,
}

impl PartialEq for Hop {
    fn eq(&self, other: &Hop) -> bool {
        (self.gateway, self.interface) == (other.gateway, other.interface)
    }
}

impl Eq for Hop {}

impl Hop {
    /// The hop's value under `value`, if it has one.
    fn value(&self, value: RouteValue) -> Option<Label> {
        let interface = (self.interface != 0).then_some(Label::Number(u64::from(self.interface)));
        match value {
            RouteValue::Gateway => self.gateway.map(Label::Addr).or(interface),
            RouteValue::Interface => interface,
        }
    }

    fn order(&self) -> (Option<IpAddr>, u32) {
        (self.gateway, self.interface)
    }
}

/// A route of some prefix.
#[derive(Clone, Debug)]
pub struct Route {
    pub key: Key,
    /// The `RTN_*` type.
    pub kind: u8,
    /// Its hops, ordered by gateway then interface (none: a rejecting
    /// route).
    pub hops: SmallVec<[Hop; 1]>,
    /// Its value under the rule; `None`: it is not mirrored.
    pub value: Option<Label>,
}

impl Route {
    pub fn new(key: Key, kind: u8, mut hops: SmallVec<[Hop; 1]>, rule: Rule) -> Route {
        hops.sort_unstable_by_key(Hop::order);
        let mut route = Route { key, kind, hops, value: None };
        route.value = route.evaluate(rule);
        route
    }

    /// The same kernel route: key, type and hops.
    pub fn same(&self, other: &Route) -> bool {
        self.key == other.key && self.kind == other.kind && self.hops == other.hops
    }

    /// Whether every hop of `other` is one of this route's.
    pub fn holds(&self, other: &Route) -> bool {
        other.hops.iter().all(|hop| self.hops.contains(hop))
    }

    /// Removes `other`'s hops; its value follows.
    pub fn remove_hops(&mut self, other: &Route, rule: Rule) {
        self.hops.retain(|hop| !other.hops.contains(hop));
        self.value = if self.hops.is_empty() { None } else { self.evaluate(rule) };
    }

    /// The value rule.
    fn evaluate(&self, rule: Rule) -> Option<Label> {
        if self.key.tos != 0 || self.key.source_len != 0 {
            return None;
        }
        match RouteType::from(self.kind) {
            RouteType::Unicast => {
                self.hops.iter().filter(|hop| !hop.dead).filter_map(|hop| hop.value(rule.value)).min()
            }
            RouteType::BlackHole | RouteType::Unreachable | RouteType::Prohibit | RouteType::Throw => rule.reject,
            _ => None,
        }
    }
}

/// A route message's content.
#[derive(Clone, Debug)]
pub struct KernelRoute {
    pub prefix: IpPrefix,
    pub table: u32,
    pub route: Route,
}

/// Reads `message`: `Ok(None)` for a family other than IPv4 and IPv6, or
/// a cache entry (`RTM_F_CLONED`).
///
/// # Errors
/// A prefix length beyond the family's, or an address of the wrong family.
pub fn read(message: &RouteMessage, rule: Rule) -> Result<Option<KernelRoute>, String> {
    let header = &message.header;
    let bits = match header.address_family {
        AddressFamily::Inet => 32,
        AddressFamily::Inet6 => 128,
        _ => return Ok(None),
    };
    if header.flags.contains(RouteFlags::Cloned) {
        return Ok(None);
    }
    if header.destination_prefix_length > bits || header.source_prefix_length > bits {
        return Err(format!("prefix length {} in a /{bits} family", header.destination_prefix_length));
    }
    let mut destination = None;
    let mut source = 0;
    let mut table = u32::from(header.table);
    let mut priority = 0;
    let mut single = Hop { gateway: None, interface: 0, dead: header.flags.contains(RouteFlags::Dead) };
    let mut multipath = None;
    for attribute in &message.attributes {
        match attribute {
            RouteAttribute::Destination(address) => destination = ip(address),
            RouteAttribute::Source(address) => source = ip(address).map_or(0, wide),
            RouteAttribute::Table(id) => table = *id,
            RouteAttribute::Priority(value) => priority = *value,
            RouteAttribute::Gateway(address) => single.gateway = ip(address),
            RouteAttribute::Via(via) => single.gateway = via_ip(via),
            RouteAttribute::Oif(index) => single.interface = *index,
            RouteAttribute::MultiPath(hops) => {
                multipath = Some(
                    hops.iter()
                        .map(|hop| Hop {
                            gateway: hop.attributes.iter().find_map(|attribute| match attribute {
                                RouteAttribute::Gateway(address) => ip(address),
                                RouteAttribute::Via(via) => via_ip(via),
                                _ => None,
                            }),
                            interface: hop.interface_index,
                            dead: hop.flags.contains(RouteNextHopFlags::Dead),
                        })
                        .collect::<SmallVec<[Hop; 1]>>(),
                );
            }
            _ => {}
        }
    }
    let length = header.destination_prefix_length;
    let prefix = match (bits, destination) {
        (32, None) => IpPrefix::V4(Prefix4::truncating(0, length)),
        (32, Some(IpAddr::V4(address))) => IpPrefix::V4(Prefix::truncating(address.into(), length)),
        (_, None) => IpPrefix::V6(Prefix6::truncating(0, length)),
        (_, Some(IpAddr::V6(address))) => IpPrefix::V6(Prefix::truncating(address.into(), length)),
        (_, Some(address)) => return Err(format!("destination {address} in the other family")),
    };
    let hops = match multipath {
        Some(hops) => hops,
        None if single.gateway.is_some() || single.interface != 0 => SmallVec::from_buf([single]),
        None => SmallVec::new(),
    };
    let source_len = header.source_prefix_length;
    let source = if source_len == 0 { 0 } else { source };
    let key = Key { tos: header.tos, source_len, source, priority };
    Ok(Some(KernelRoute { prefix, table, route: Route::new(key, u8::from(header.kind), hops, rule) }))
}

fn ip(address: &RouteAddress) -> Option<IpAddr> {
    match address {
        RouteAddress::Inet(address) => Some(IpAddr::V4(*address)),
        RouteAddress::Inet6(address) => Some(IpAddr::V6(*address)),
        _ => None,
    }
}

fn via_ip(via: &RouteVia) -> Option<IpAddr> {
    match via {
        RouteVia::Inet(address) => Some(IpAddr::V4(*address)),
        RouteVia::Inet6(address) => Some(IpAddr::V6(*address)),
        _ => None,
    }
}

fn wide(address: IpAddr) -> u128 {
    match address {
        IpAddr::V4(address) => u128::from(u32::from(address)),
        IpAddr::V6(address) => u128::from(address),
    }
}

#[cfg(test)]
mod tests {
    use std::net::{Ipv4Addr, Ipv6Addr};

    use netlink_packet_core::{Emitable, Parseable};
    use netlink_packet_route::route::RouteNextHop;

    use super::*;

    const RULE: Rule = Rule { value: RouteValue::Gateway, reject: Some(Label::Number(0)) };

    /// `message` as the kernel would send it: emitted, then parsed back.
    fn wire(message: &RouteMessage) -> RouteMessage {
        let mut bytes = vec![0; message.buffer_len()];
        message.emit(&mut bytes);
        RouteMessage::parse(&bytes[..]).unwrap()
    }

    fn v4(text: &str) -> IpAddr {
        IpAddr::V4(text.parse::<Ipv4Addr>().unwrap())
    }

    fn message(family: AddressFamily, length: u8, kind: RouteType, attributes: Vec<RouteAttribute>) -> RouteMessage {
        let mut message = RouteMessage::default();
        message.header.address_family = family;
        message.header.destination_prefix_length = length;
        message.header.table = 252; // RT_TABLE_COMPAT: the id is in RTA_TABLE
        message.header.kind = kind;
        message.attributes = attributes;
        message
    }

    #[test]
    fn a_route_of_a_table_past_255_with_a_gateway() {
        let message = message(
            AddressFamily::Inet,
            24,
            RouteType::Unicast,
            vec![
                RouteAttribute::Table(1000),
                RouteAttribute::Destination(RouteAddress::Inet(Ipv4Addr::new(192, 0, 2, 0))),
                RouteAttribute::Gateway(RouteAddress::Inet(Ipv4Addr::new(10, 0, 0, 1))),
                RouteAttribute::Oif(3),
                RouteAttribute::Priority(20),
            ],
        );
        let read = read(&wire(&message), RULE).unwrap().unwrap();
        assert_eq!(read.table, 1000);
        assert_eq!(read.prefix.to_string(), "192.0.2.0/24");
        assert_eq!(read.route.key.priority, 20);
        assert_eq!(read.route.value, Some(Label::Addr(v4("10.0.0.1"))));
        let by_interface = Rule { value: RouteValue::Interface, ..RULE };
        assert_eq!(super::read(&wire(&message), by_interface).unwrap().unwrap().route.value, Some(Label::Number(3)));
    }

    #[test]
    fn without_a_gateway_the_interface_and_without_a_destination_the_default_route() {
        let message = message(AddressFamily::Inet6, 0, RouteType::Unicast, vec![RouteAttribute::Oif(7)]);
        let read = read(&wire(&message), RULE).unwrap().unwrap();
        assert_eq!(read.prefix.to_string(), "::/0");
        assert_eq!(read.table, 252);
        assert_eq!(read.route.value, Some(Label::Number(7)));
    }

    #[test]
    fn multipath_takes_the_smallest_live_hop_whatever_the_order() {
        let hop = |gateway: &str, interface, dead| {
            let mut hop = RouteNextHop::default();
            hop.interface_index = interface;
            hop.attributes = vec![RouteAttribute::Gateway(RouteAddress::Inet6(gateway.parse::<Ipv6Addr>().unwrap()))];
            if dead {
                hop.flags = RouteNextHopFlags::Dead;
            }
            hop
        };
        let hops = vec![hop("2001:db8::9", 2, false), hop("2001:db8::1", 4, true), hop("2001:db8::5", 3, false)];
        let mut reversed = hops.clone();
        reversed.reverse();
        let mut values = Vec::new();
        for hops in [hops, reversed] {
            let message = message(AddressFamily::Inet6, 48, RouteType::Unicast, vec![RouteAttribute::MultiPath(hops)]);
            values.push(read(&wire(&message), RULE).unwrap().unwrap().route.value);
        }
        let expected = Some(Label::Addr("2001:db8::5".parse().unwrap()));
        assert_eq!(values, [expected, expected]);
    }

    #[test]
    fn rejecting_routes_get_the_reject_value_and_other_types_none() {
        for (kind, value) in [
            (RouteType::BlackHole, Some(Label::Number(0))),
            (RouteType::Unreachable, Some(Label::Number(0))),
            (RouteType::Prohibit, Some(Label::Number(0))),
            (RouteType::Throw, Some(Label::Number(0))),
            (RouteType::Local, None),
            (RouteType::Broadcast, None),
            (RouteType::Multicast, None),
        ] {
            let message = message(AddressFamily::Inet, 16, kind, vec![RouteAttribute::Oif(1)]);
            assert_eq!(read(&wire(&message), RULE).unwrap().unwrap().route.value, value, "{kind:?}");
        }
        let message = message(AddressFamily::Inet, 16, RouteType::BlackHole, vec![]);
        let unmirrored = Rule { reject: None, ..RULE };
        assert_eq!(read(&wire(&message), unmirrored).unwrap().unwrap().route.value, None);
    }

    #[test]
    fn a_tos_or_a_source_prefix_or_a_cache_entry_is_not_mirrored() {
        let gateway = RouteAttribute::Gateway(RouteAddress::Inet(Ipv4Addr::new(10, 0, 0, 1)));
        let mut tos = message(AddressFamily::Inet, 8, RouteType::Unicast, vec![gateway.clone()]);
        tos.header.tos = 0x10;
        assert_eq!(read(&wire(&tos), RULE).unwrap().unwrap().route.value, None);
        let mut sourced = message(AddressFamily::Inet, 8, RouteType::Unicast, vec![gateway.clone()]);
        sourced.header.source_prefix_length = 8;
        assert_eq!(read(&wire(&sourced), RULE).unwrap().unwrap().route.value, None);
        let mut cloned = message(AddressFamily::Inet, 8, RouteType::Unicast, vec![gateway]);
        cloned.header.flags = RouteFlags::Cloned;
        assert!(read(&wire(&cloned), RULE).unwrap().is_none());
        let mpls = message(AddressFamily::Mpls, 20, RouteType::Unicast, vec![]);
        assert!(read(&mpls, RULE).unwrap().is_none());
    }
}
