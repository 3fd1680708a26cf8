//! Model-based tests of DIR-24-8's incremental updates: random inserts,
//! replacements and removals applied to both the RIB (the model) and the
//! engine, with lookups compared after every step.

use std::collections::BTreeSet;

use fibkit::addr::Prefix4;
use fibkit::engines::dir24::Dir24Table;
use fibkit::measure::verify::{self, Space};
use fibkit::rib::Rib4;
use fibkit::NextHop;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Insert(Prefix4, NextHop),
    /// Remove the prefix inserted `n` operations before (modulo).
    RemoveEarlier(usize),
    /// Remove a prefix that may not be present.
    Remove(Prefix4),
}

/// Prefixes crowding into two /16s (so they nest and share groups), plus a
/// few anywhere, short ones included.
fn prefix_strategy() -> impl Strategy<Value = Prefix4> {
    prop_oneof![
        6 => (prop_oneof![Just(0x0a00_0000u32), Just(0xc0a8_0000u32)], any::<u16>(), 16u8..=32)
            .prop_map(|(base, low, len)| Prefix4::truncating(base | u32::from(low), len)),
        2 => (prop_oneof![Just(0x0a00_0000u32), Just(0xc0a8_0000u32)], any::<u16>(), 8u8..=15)
            .prop_map(|(base, low, len)| Prefix4::truncating(base | u32::from(low), len)),
        1 => (any::<u32>(), 0u8..=32).prop_map(|(addr, len)| Prefix4::truncating(addr, len)),
    ]
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (prefix_strategy(), 1u32..=6).prop_map(|(prefix, next_hop)| Op::Insert(prefix, next_hop)),
        3 => (0usize..64).prop_map(Op::RemoveEarlier),
        1 => prefix_strategy().prop_map(Op::Remove),
    ]
}

/// Groups the engine must hold: one per /24 with a route longer than /24.
fn expected_groups(rib: &Rib4) -> usize {
    rib.iter()
        .filter(|(prefix, _)| prefix.prefix_len() > 24)
        .map(|(prefix, _)| prefix.addr() >> 8)
        .collect::<BTreeSet<_>>()
        .len()
}

/// Addresses around `prefix`: its ends, their neighbours, and its /24's.
fn probes(prefix: Prefix4) -> Vec<u32> {
    let mut addrs = vec![prefix.first(), prefix.last(), prefix.first().wrapping_sub(1), prefix.last().wrapping_add(1)];
    let block = prefix.first() & !0xff;
    addrs.extend((0..=255u32).step_by(17).map(|low| block | low));
    addrs
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn dir24_updates_track_the_rib(ops in prop::collection::vec(op_strategy(), 1..120)) {
        let mut rib = Rib4::new();
        let mut table = Dir24Table::new();
        let mut inserted: Vec<Prefix4> = Vec::new();
        for op in &ops {
            let touched = match *op {
                Op::Insert(prefix, next_hop) => {
                    let expected = rib.insert(prefix, next_hop);
                    prop_assert_eq!(table.insert(prefix, next_hop).unwrap(), expected);
                    inserted.push(prefix);
                    prefix
                }
                Op::RemoveEarlier(back) => {
                    if inserted.is_empty() {
                        continue;
                    }
                    let prefix = inserted[inserted.len() - 1 - back % inserted.len()];
                    prop_assert_eq!(table.remove(prefix), rib.remove(prefix));
                    prefix
                }
                Op::Remove(prefix) => {
                    prop_assert_eq!(table.remove(prefix), rib.remove(prefix));
                    prefix
                }
            };
            for addr in probes(touched) {
                prop_assert_eq!(table.fib().lookup(addr), rib.lookup(addr), "after {:?}, address {:#010x}", op, addr);
            }
            prop_assert_eq!(table.fib().groups_in_use(), expected_groups(&rib), "after {:?}", op);
            prop_assert_eq!(table.rules().len(), rib.len());
        }
        let report = verify::boundaries(table.fib(), &rib);
        prop_assert!(report.passed(), "boundaries: {:?}", report);
        let report = verify::random(table.fib(), &rib, Space::Anywhere, 5_000, 3);
        prop_assert!(report.passed(), "random: {:?}", report);
    }
}

#[test]
fn removing_everything_leaves_an_empty_table() {
    let prefixes: Vec<Prefix4> =
        ["0.0.0.0/0", "10.0.0.0/8", "10.1.0.0/16", "10.1.2.0/24", "10.1.2.0/25", "10.1.2.7/32"]
            .iter()
            .map(|text| text.parse().unwrap())
            .collect();
    let mut table = Dir24Table::new();
    for (i, &prefix) in prefixes.iter().enumerate() {
        table.insert(prefix, i as NextHop + 1).unwrap();
    }
    assert_eq!(table.fib().lookup(0x0a01_0207), 6);
    assert_eq!(table.fib().lookup(0x0a01_0208), 5);
    assert_eq!(table.fib().lookup(0x0a01_0280), 4);
    // Remove from the outside in: every inner answer stays.
    for (i, &prefix) in prefixes.iter().enumerate().take(5) {
        assert_eq!(table.remove(prefix), Some(i as NextHop + 1));
        assert_eq!(table.fib().lookup(0x0a01_0207), 6, "after removing {prefix}");
    }
    assert_eq!(table.fib().lookup(0x0a01_0208), fibkit::NO_ROUTE);
    assert_eq!(table.remove(prefixes[5]), Some(6));
    assert_eq!(table.fib().lookup(0x0a01_0207), fibkit::NO_ROUTE);
    assert_eq!(table.fib().groups_in_use(), 0);
    assert!(table.rules().is_empty());
}
