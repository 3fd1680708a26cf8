//! The mirror's units: a dump's replies against the notifications read
//! during it, and a dump without a reply.

use fibkit::nexthop::{Mapping, NextHopTable};
use fibkit::registry::{DEFAULT_IPV4, DEFAULT_IPV6};
use fibkit::router::Window;
use fibkit::Rib;
use netlink_packet_route::route::RouteType;

use super::super::route::Hop;
use super::super::{RouteValue, RT_TABLE_MAIN};
use super::*;

const RULE: Rule = Rule { value: RouteValue::Gateway, reject: Some(Label::Number(0)) };

fn route(gateway: &str) -> Route {
    hops(&[(Some(gateway), 2)], RULE)
}

/// A route of priority 256 through `hops` (gateway, interface).
fn hops(hops: &[(Option<&str>, u32)], rule: Rule) -> Route {
    let key = Key { tos: 0, source_len: 0, source: 0, priority: 256 };
    let hops = hops.iter().map(|&(gateway, interface)| Hop {
        gateway: gateway.map(|text| text.parse().unwrap()),
        interface,
        dead: false,
    });
    Route::new(key, RouteType::Unicast.into(), hops.collect(), rule)
}

#[test]
fn during_a_dump_a_notification_outranks_what_the_dump_says_of_its_prefix_and_key() {
    let router = Router::new(DEFAULT_IPV4, Rib::new(), NextHopTable::new(Mapping::Distinct), Window::Count(1));
    let mut side = Side::new(router.unwrap());
    let mut dump = DumpSide::default();
    let prefix = |second: u32| Prefix::<u32>::new(0x0a00_0000 | second << 16, 16).unwrap();
    let (one, two, three) = (prefix(1), prefix(2), prefix(3));
    // Deleted, then a dump reply made before the delete still shows it.
    apply(&mut side, Some(&mut dump), one, route("10.0.0.1"), Came::Del, RULE);
    apply(&mut side, Some(&mut dump), one, route("10.0.0.1"), Came::Dump, RULE);
    assert_eq!(dump.table.value(one), None);
    // Replaced, then the dump shows the old route.
    apply(&mut side, Some(&mut dump), two, route("10.0.0.2"), Came::New { replace: true }, RULE);
    apply(&mut side, Some(&mut dump), two, route("10.0.0.1"), Came::Dump, RULE);
    assert_eq!(dump.table.value(two), Some(Label::Addr("10.0.0.2".parse().unwrap())));
    // Added, then the dump shows it too: kept once.
    apply(&mut side, Some(&mut dump), three, route("10.0.0.3"), Came::New { replace: false }, RULE);
    apply(&mut side, Some(&mut dump), three, route("10.0.0.3"), Came::Dump, RULE);
    assert_eq!(dump.table.len(), 2);
    // The serving copy waits for the dump's end.
    assert_eq!((side.table.len(), side.changed.len()), (0, 0));
    // Without a dump, a notification changes the serving copy.
    apply(&mut side, None, one, route("10.0.0.4"), Came::New { replace: false }, RULE);
    assert_eq!((side.table.value(one), side.changed.len()), (Some(Label::Addr("10.0.0.4".parse().unwrap())), 1));
}

/// A dump request whose answer never comes (the kernel's refusal
/// dropped on a full socket) is asked again, not waited for.
#[test]
fn a_dump_without_a_reply_for_ten_seconds_is_asked_again() {
    let next_hops = || NextHopTable::new(Mapping::Distinct);
    let router4 = Router::new(DEFAULT_IPV4, Rib::new(), next_hops(), Window::Count(1)).unwrap();
    let router6 = Router::new(DEFAULT_IPV6, Rib::new(), next_hops(), Window::Count(1)).unwrap();
    let mut writer = Writer::new(NetlinkConfig::new(RT_TABLE_MAIN), router4, router6, None).unwrap();
    writer.start_dump("the first dump".into());
    let asked = writer.dump.as_ref().map(|dump| dump.heard).unwrap();
    writer.silent_dump(asked + SILENT_DUMP / 2);
    assert!(writer.dump.is_some() && writer.wanted.is_none());
    writer.silent_dump(asked + SILENT_DUMP);
    assert!(writer.dump.is_none(), "the silent dump was kept");
    assert_eq!(writer.wanted.as_deref(), Some("no reply to dump request 1 in 10 s"));
    assert!(writer.shared.journal.lines().iter().any(|line| line.ends_with("in 10 s: asking again")));
}

/// Found by an interface going down while the mirror dumped: the
/// delete of fe80::/64 on one interface hid the same prefix and metric
/// on the other from the dump's reply.
#[test]
fn during_a_dump_a_notification_of_one_route_leaves_the_others_of_its_key() {
    let router = Router::new(DEFAULT_IPV6, Rib::new(), NextHopTable::new(Mapping::Distinct), Window::Count(1));
    let mut side = Side::new(router.unwrap());
    let mut dump = DumpSide::default();
    let by_interface = Rule { value: RouteValue::Interface, reject: None };
    let link_local = Prefix::<u128>::new(0xfe80 << 112, 64).unwrap();
    apply(&mut side, Some(&mut dump), link_local, hops(&[(None, 3)], by_interface), Came::Del, by_interface);
    apply(&mut side, Some(&mut dump), link_local, hops(&[(None, 2)], by_interface), Came::Dump, by_interface);
    apply(&mut side, Some(&mut dump), link_local, hops(&[(None, 3)], by_interface), Came::Dump, by_interface);
    assert_eq!((dump.table.value(link_local), dump.table.len()), (Some(Label::Number(2)), 1));
    // A hop deleted from a multipath route, and the dump's reply made
    // before: the other hop stays.
    let prefix = Prefix::<u128>::new(0x2001_0db8 << 96, 32).unwrap();
    let (nine, five) = ((Some("2001:db8::9"), 2), (Some("2001:db8::5"), 2));
    apply(&mut side, Some(&mut dump), prefix, hops(&[five], RULE), Came::Del, RULE);
    apply(&mut side, Some(&mut dump), prefix, hops(&[nine, five], RULE), Came::Dump, RULE);
    assert_eq!(dump.table.value(prefix), Some(Label::Addr("2001:db8::9".parse().unwrap())));
    // A hop appended, and the reply made before, with one hop: the
    // notification's route alone.
    let other = Prefix::<u128>::new(0x2001_0db9 << 96, 32).unwrap();
    apply(&mut side, Some(&mut dump), other, hops(&[nine, five], RULE), Came::New { replace: false }, RULE);
    apply(&mut side, Some(&mut dump), other, hops(&[nine], RULE), Came::Dump, RULE);
    assert_eq!(dump.table.len(), 3);
    assert_eq!(dump.table.value(other), Some(Label::Addr("2001:db8::5".parse().unwrap())));
}
