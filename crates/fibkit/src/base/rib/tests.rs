//! The RIB's tests: its answers, and the links that let updates skip the
//! walk from the root (parents, `cover`, `full`, the index, the nodes kept
//! for withdrawn routes) checked against their definitions after random
//! updates.

use super::index::Index;
use super::*;

use crate::addr::p;

#[test]
fn radix_depth_is_the_deepest_agreement_with_any_prefix() {
    let brute = |rib: &Rib4, addr: u32| {
        rib.iter().map(|(p, _)| addr.common_prefix_len(p.addr()).min(p.prefix_len())).max().unwrap_or(0)
    };
    let mut rng = crate::random::XorShift32::new(7);
    for round in 0..40 {
        let mut rib = Rib4::new();
        // Prefixes clustered under 10/8 so that they nest and branch.
        for _ in 0..1 + round * 3 {
            let len = (rng.next() % 33) as u8;
            let addr = 0x0a00_0000 | (rng.next() & if round % 2 == 0 { 0x00ff_ffff } else { 0x0003_0f0f });
            rib.insert(Prefix::truncating(addr, len), 1);
        }
        for _ in 0..300 {
            let addr = if rng.next().is_multiple_of(2) { rng.next() } else { 0x0a00_0000 | (rng.next() & 0x0003_0fff) };
            assert_eq!(rib.radix_depth(addr), brute(&rib, addr), "round {round} {addr:#x}");
        }
    }
    assert_eq!(Rib4::new().radix_depth(1), 0);
    let mut host = Rib4::new();
    host.insert(p("10.0.0.1/32"), 1);
    assert_eq!(host.radix_depth(0x0a00_0001), 32);
    assert_eq!(host.radix_depth(0x0a00_0000), 31);
}

#[test]
fn longest_match_and_exact_get() {
    let mut rib = Rib4::new();
    assert_eq!(rib.insert(p("10.0.0.0/8"), 1), None);
    assert_eq!(rib.insert(p("10.1.0.0/16"), 2), None);
    assert_eq!(rib.insert(p("10.1.2.0/24"), 3), None);
    assert_eq!(rib.insert(p("10.128.0.0/9"), 4), None);
    assert_eq!(rib.insert(p("10.1.0.0/16"), 5), Some(2));
    assert_eq!(rib.len(), 4);
    assert_eq!(rib.lookup(0x0a01_0203), 3);
    assert_eq!(rib.lookup(0x0a01_0303), 5);
    assert_eq!(rib.lookup(0x0a02_0000), 1);
    assert_eq!(rib.lookup(0x0a80_0000), 4);
    assert_eq!(rib.lookup(0x0b00_0000), NO_ROUTE);
    assert_eq!(rib.get(p("10.1.0.0/16")), Some(5));
    assert_eq!(rib.get(p("10.1.0.0/17")), None);
    assert_eq!(rib.get(p("10.0.0.0/7")), None);
    assert_eq!(rib.lookup_prefix(0x0a01_0203).unwrap().0, p("10.1.2.0/24"));
}

#[test]
fn remove_splices_glue() {
    let mut rib = Rib4::new();
    rib.insert(p("10.0.0.0/24"), 1);
    rib.insert(p("10.0.1.0/24"), 2); // glue 10.0.0.0/23 appears
    rib.insert(p("10.0.2.0/24"), 3);
    assert_eq!(rib.remove(p("10.0.0.0/23")), None);
    assert_eq!(rib.remove(p("10.0.1.0/24")), Some(2));
    assert_eq!(rib.remove(p("10.0.1.0/24")), None);
    assert_eq!(rib.lookup(0x0a00_0100), NO_ROUTE);
    assert_eq!(rib.lookup(0x0a00_0001), 1);
    assert_eq!(rib.remove(p("10.0.0.0/24")), Some(1));
    assert_eq!(rib.remove(p("10.0.2.0/24")), Some(3));
    assert!(rib.is_empty());
    assert_eq!(rib.node_count(), 1, "only the root remains");
}

#[test]
fn default_route_and_host_routes() {
    let mut rib: Rib4 = rib_of(&[("0.0.0.0/0", 7), ("255.255.255.255/32", 8), ("0.0.0.0/32", 9)]);
    assert_eq!(rib.lookup(0), 9);
    assert_eq!(rib.lookup(1), 7);
    assert_eq!(rib.lookup(u32::MAX), 8);
    assert_eq!(rib.lookup(u32::MAX - 1), 7);
    let ranges = rib.ranges(0, u32::MAX);
    assert_eq!(
        ranges,
        vec![
            Range { first: 0, last: 0, next_hop: 9 },
            Range { first: 1, last: u32::MAX - 1, next_hop: 7 },
            Range { first: u32::MAX, last: u32::MAX, next_hop: 8 },
        ]
    );
    assert_eq!(rib.remove(p("0.0.0.0/0")), Some(7));
    assert_eq!(rib.lookup(1), NO_ROUTE);
}

#[test]
fn ranges_merge_and_cover_subranges() {
    let mut rib = Rib4::new();
    rib.insert(p("10.0.0.0/8"), 1);
    rib.insert(p("10.1.0.0/16"), 1); // same hop: no run boundary
    rib.insert(p("10.2.0.0/16"), 2);
    rib.insert(p("10.2.0.0/24"), 1);
    let all = rib.ranges(0, u32::MAX);
    assert_eq!(
        all,
        vec![
            Range { first: 0, last: 0x09ff_ffff, next_hop: 0 },
            Range { first: 0x0a00_0000, last: 0x0a02_00ff, next_hop: 1 },
            Range { first: 0x0a02_0100, last: 0x0a02_ffff, next_hop: 2 },
            Range { first: 0x0a03_0000, last: 0x0aff_ffff, next_hop: 1 },
            Range { first: 0x0b00_0000, last: u32::MAX, next_hop: 0 },
        ]
    );
    let sub = rib.ranges(0x0a02_0080, 0x0a02_0180);
    assert_eq!(
        sub,
        vec![
            Range { first: 0x0a02_0080, last: 0x0a02_00ff, next_hop: 1 },
            Range { first: 0x0a02_0100, last: 0x0a02_0180, next_hop: 2 },
        ]
    );
    assert_eq!(rib.ranges(5, 5), vec![Range { first: 5, last: 5, next_hop: 0 }]);
}

#[test]
fn iter_lists_routes_in_order() {
    let routes = [(p("10.0.0.0/8"), 1), (p("10.0.0.0/16"), 2), (p("9.0.0.0/8"), 3)];
    let rib: Rib4 = routes.iter().copied().collect();
    let listed: Vec<_> = rib.iter().collect();
    assert_eq!(listed, vec![(p("9.0.0.0/8"), 3), (p("10.0.0.0/8"), 1), (p("10.0.0.0/16"), 2)]);
}

fn exposed(rib: &Rib4, prefix: &str) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    rib.for_each_exposed(p(prefix), |range| {
        assert_eq!(range.next_hop, rib.lookup(range.first), "{prefix}: {range:?}");
        out.push((range.first, range.last))
    });
    out
}

#[test]
fn exposed_intervals_are_the_gaps_between_topmost_routes_inside() {
    let rib: Rib4 = rib_of(&[
        ("0.0.0.0/0", 1),
        ("0.0.0.0/8", 2),
        ("10.0.0.0/8", 3),
        ("10.1.0.0/16", 4),
        ("10.128.0.0/24", 5),
        ("10.200.0.0/16", 6), // with 10.128.0.0/24: glue 10.128.0.0/9
        ("255.255.255.255/32", 7),
    ]);
    let whole = vec![(0x0100_0000, 0x09ff_ffff), (0x0b00_0000, 0xffff_fffe)];
    assert_eq!(exposed(&rib, "0.0.0.0/0"), whole);
    assert_eq!(
        exposed(&rib, "10.0.0.0/8"),
        vec![
            (0x0a00_0000, 0x0a00_ffff),
            (0x0a02_0000, 0x0a7f_ffff),
            (0x0a80_0100, 0x0ac7_ffff),
            (0x0ac9_0000, 0x0aff_ffff)
        ]
    );
    // A prefix that is not a route, or is glue, or covers no node.
    assert_eq!(exposed(&rib, "10.128.0.0/9"), vec![(0x0a80_0100, 0x0ac7_ffff), (0x0ac9_0000, 0x0aff_ffff)]);
    assert_eq!(exposed(&rib, "10.0.0.0/9"), vec![(0x0a00_0000, 0x0a00_ffff), (0x0a02_0000, 0x0a7f_ffff)]);
    assert_eq!(exposed(&rib, "10.1.2.0/24"), vec![(0x0a01_0200, 0x0a01_02ff)]);
    assert_eq!(exposed(&rib, "12.0.0.0/8"), vec![(0x0c00_0000, 0x0cff_ffff)]);
    assert_eq!(exposed(&rib, "10.1.0.0/16"), vec![(0x0a01_0000, 0x0a01_ffff)]);
    assert_eq!(exposed(&rib, "255.255.255.255/32"), vec![(u32::MAX, u32::MAX)]);
    assert_eq!(exposed(&rib, "255.255.255.254/31"), vec![(u32::MAX - 1, u32::MAX - 1)]);
    assert_eq!(exposed(&Rib4::new(), "0.0.0.0/0"), vec![(0, u32::MAX)]);
}

/// Checks every reachable node's [`Node::full`] against its
/// definition; returns the flag of node `index`.
fn check_full(rib: &Rib4, index: u32) -> bool {
    let node = &rib.nodes[index as usize];
    let halves = node.children.map(|child| {
        child != NIL && check_full(rib, child) && rib.nodes[child as usize].prefix_len == node.prefix_len + 1
    });
    let full = node.next_hop != NO_ROUTE || halves == [true, true];
    assert_eq!(node.full(), full, "{}", node.prefix());
    full
}

proptest::proptest! {
    /// Against the definition: the addresses of the prefix minus the
    /// union of the routes strictly inside it.
    #[test]
    fn exposed_intervals_match_their_definition(
        routes in proptest::collection::vec((0u32..64, proptest::prop_oneof![0u8..=8, 0u8..=32], 1u32..4), 0..40),
        withdrawn in proptest::collection::vec(0usize..40, 0..20),
        outer in (0u32..64, 0u8..=32),
    ) {
        // The top 6 bits from `top` (short prefixes are often siblings,
        // whose parent routes cover whole), the rest spread.
        let spread = |top: u32| top << 26 | top.wrapping_mul(0x9e37_79b9) >> 6;
        let prefix_of = |(top, len): (u32, u8)| Prefix::truncating(spread(top), len);
        let mut rib: Rib4 = routes.iter().map(|&(top, len, hop)| (prefix_of((top, len)), hop)).collect();
        for &index in &withdrawn {
            if let Some(&(top, len, _)) = routes.get(index) {
                rib.remove(prefix_of((top, len)));
            }
        }
        check_full(&rib, ROOT);
        let outer = prefix_of(outer);
        let mut inside: Vec<(u32, u32)> = rib
            .iter()
            .filter(|(prefix, _)| outer.covers(prefix) && *prefix != outer)
            .map(|(prefix, _)| (prefix.first(), prefix.last()))
            .collect();
        inside.sort_unstable();
        let mut expected = Vec::new();
        let mut cursor = Some(outer.first());
        for (first, last) in inside {
            let Some(at) = cursor else { break };
            if at < first {
                expected.push((at, first - 1));
            }
            if last >= at {
                cursor = last.checked_add(1);
            }
        }
        if let Some(at) = cursor.filter(|&at| at <= outer.last()) {
            expected.push((at, outer.last()));
        }
        let mut found = Vec::new();
        rib.for_each_exposed(outer, |range| {
            // Every address of the interval has the one next hop (the
            // middle one as first + half the width: halving both ends
            // and adding them falls before an interval of one odd address).
            for at in [range.first, range.first + (range.last - range.first) / 2, range.last] {
                assert_eq!(rib.lookup(at), range.next_hop, "{range:?}");
            }
            found.push((range.first, range.last));
        });
        proptest::prop_assert_eq!(found, expected);
    }
}

/// Checks every link of `rib` against its definition: the tree's shape
/// (children inside their parent, on their side, each linking back), each
/// node's `cover` (the nearest route above but the root), `full`, the index (exactly
/// the routes' nodes and the kept ones, each under its prefix's tag, every
/// probe reaching its node), the kept nodes (every dead node among them,
/// counted, no more than half as many as routes) and the free list.
fn check_links<A: Address>(rib: &Rib<A>) {
    fn visit<A: Address>(rib: &Rib<A>, index: u32, cover: u32, seen: &mut Vec<u32>, dead: &mut usize) {
        seen.push(index);
        let node = &rib.nodes[index as usize];
        assert_eq!(node.flags & FREE, 0, "{} is on the free list", node.prefix());
        assert_eq!(node.cover, cover, "cover of {}", node.prefix());
        assert_eq!(
            node.flags & INDEXED != 0 || node.is_route(),
            node.flags & INDEXED != 0,
            "route {} not indexed",
            node.prefix()
        );
        if index != ROOT && !node.is_route() && node.children.contains(&NIL) {
            assert!(node.flags & INDEXED != 0, "glue {} with fewer than two children", node.prefix());
            assert!(rib.kept.contains(&index), "dead {} is not kept", node.prefix());
            *dead += 1;
        }
        let below = if node.is_route() && index != ROOT { index } else { cover };
        for (side, child) in node.children.into_iter().enumerate() {
            if child == NIL {
                continue;
            }
            let inner = rib.nodes[child as usize].prefix();
            assert_eq!(rib.nodes[child as usize].parent, index, "parent of {inner}");
            assert!(
                node.prefix().covers(&inner) && inner.prefix_len() > node.prefix_len,
                "{inner} below {}",
                node.prefix()
            );
            assert_eq!(inner.addr().bit(node.prefix_len), side, "{inner} on its side of {}", node.prefix());
            visit(rib, child, below, seen, dead);
        }
    }
    let (mut seen, mut dead) = (Vec::new(), 0);
    assert_eq!(rib.nodes[ROOT as usize].parent, NIL);
    visit(rib, ROOT, NIL, &mut seen, &mut dead);
    assert_eq!(rib.dead, dead, "dead nodes counted");
    let routes = seen.iter().filter(|&&index| rib.nodes[index as usize].is_route()).count();
    assert_eq!(rib.routes, routes);
    let indexed: Vec<u32> =
        seen.iter().copied().filter(|&index| rib.nodes[index as usize].flags & INDEXED != 0).collect();
    assert_eq!(rib.index.len(), indexed.len());
    for (node, tag) in rib.index.entries() {
        assert!(indexed.contains(&node), "index names node {node}, not an indexed node of the trie");
        let prefix = rib.nodes[node as usize].prefix();
        assert_eq!(tag, rib.index.tag(prefix), "tag of {prefix}");
        assert_eq!(rib.find(prefix, tag), Some(node), "{prefix} not found");
    }
    assert!(rib.index.probes_reach_every_node());
    assert!(rib.dead <= rib.routes / 2, "{} kept for {} routes", rib.dead, rib.routes);
    assert!(rib.kept.len() <= rib.routes + super::update::KEPT_SLACK);
    assert_eq!(seen.len() + rib.free.len(), rib.nodes.len(), "nodes neither reachable nor free");
    for &free in &rib.free {
        assert_eq!(rib.nodes[free as usize].flags, FREE);
    }
    assert_eq!(rib.node_count(), seen.len());
}

/// The routes of `model` longest-matching `addr`, by brute force.
fn model_lookup(model: &std::collections::BTreeMap<Prefix<u32>, NextHop>, addr: u32) -> NextHop {
    model
        .iter()
        .filter(|(prefix, _)| prefix.contains(addr))
        .max_by_key(|(prefix, _)| prefix.prefix_len())
        .map_or(NO_ROUTE, |(_, &hop)| hop)
}

#[test]
fn a_withdrawn_route_keeps_its_node_until_too_many_are_kept() {
    let mut rib: Rib4 = (0..8u32).map(|i| (Prefix::truncating(0x0a00_0000 | i << 8, 24), i + 1)).collect();
    let third = p("10.0.3.0/24");
    let node = rib.find(third, rib.index.tag(third)).unwrap();
    let count = rib.node_count();
    assert_eq!(rib.remove(third), Some(4));
    assert_eq!((rib.get(third), rib.lookup(0x0a00_0301), rib.node_count()), (None, NO_ROUTE, count));
    // Announced again: the same node, nothing allocated.
    assert_eq!(rib.insert(third, 9), None);
    assert_eq!(rib.find(third, rib.index.tag(third)), Some(node));
    assert_eq!((rib.node_count(), rib.lookup(0x0a00_0301)), (count, 9));
    check_links(&rib);
    // Seven withdrawn of eight: at most half as many kept as routes remain.
    for i in 0..7u32 {
        assert!(rib.remove(Prefix::truncating(0x0a00_0000 | i << 8, 24)).is_some());
        check_links(&rib);
    }
    assert_eq!((rib.len(), rib.dead), (1, 0));
    assert_eq!(rib.node_count(), 2, "the root and the last route");
    assert_eq!(rib.iter().collect::<Vec<_>>(), vec![(p("10.0.7.0/24"), 8)]);
}

#[test]
fn a_withdrawn_prefix_exposes_what_covers_it_without_a_walk() {
    let mut rib: Rib4 = rib_of(&[("10.0.0.0/8", 1), ("10.1.0.0/16", 2), ("10.1.2.0/24", 3), ("10.1.3.0/24", 4)]);
    rib.remove(p("10.1.0.0/16"));
    // Kept as glue (two children): 10/8 answers in its gaps.
    assert_eq!(exposed(&rib, "10.1.0.0/16"), vec![(0x0a01_0000, 0x0a01_01ff), (0x0a01_0400, 0x0a01_ffff)]);
    let mut hops = Vec::new();
    rib.for_each_exposed(p("10.1.0.0/16"), |range| hops.push(range.next_hop));
    assert_eq!(hops, [1, 1]);
    rib.remove(p("10.1.2.0/24"));
    let mut ranges = Vec::new();
    rib.for_each_exposed(p("10.1.2.0/24"), |range| ranges.push(range));
    assert_eq!(ranges, [Range { first: 0x0a01_0200, last: 0x0a01_02ff, next_hop: 1 }]);
    // The covering route replaced: its new next hop answers.
    rib.insert(p("10.0.0.0/8"), 5);
    ranges.clear();
    rib.for_each_exposed(p("10.1.2.0/24"), |range| ranges.push(range));
    assert_eq!(ranges, [Range { first: 0x0a01_0200, last: 0x0a01_02ff, next_hop: 5 }]);
    // The covering route withdrawn: none answers.
    rib.remove(p("10.0.0.0/8"));
    ranges.clear();
    rib.for_each_exposed(p("10.1.2.0/24"), |range| ranges.push(range));
    assert_eq!(ranges, [Range { first: 0x0a01_0200, last: 0x0a01_02ff, next_hop: NO_ROUTE }]);
    // A default route (which no node names as its cover) answers, then
    // none again.
    for (default, next_hop) in [(Some(6), 6), (None, NO_ROUTE)] {
        match default {
            Some(hop) => rib.insert(p("0.0.0.0/0"), hop),
            None => rib.remove(p("0.0.0.0/0")),
        };
        ranges.clear();
        rib.for_each_exposed(p("10.1.2.0/24"), |range| ranges.push(range));
        assert_eq!(ranges, [Range { first: 0x0a01_0200, last: 0x0a01_02ff, next_hop }]);
        check_links(&rib);
    }
}

#[test]
fn the_index_finds_every_node_through_collisions_growth_and_removals() {
    // Few tag bits apart: every slot's probe passes over others.
    let mut index = Index::new();
    let tag = |node: u32| (node % 5) << 29 | node;
    for node in 0..200 {
        index.insert(tag(node), node);
        assert!(index.probes_reach_every_node());
    }
    for node in (0..200).step_by(3) {
        index.remove(tag(node), node);
        assert!(index.probes_reach_every_node());
    }
    for node in 0..200 {
        let found = index.find(tag(node), |candidate| candidate == node);
        assert_eq!(found, (node % 3 != 0).then_some(node), "node {node}");
    }
    assert_eq!(index.len(), 200 - 67);
}

proptest::proptest! {
    /// Random announcements and withdrawals, clustered so that prefixes
    /// nest, branch, flap and are announced again after their withdrawal:
    /// every answer against a model, every link against its definition.
    #[test]
    fn links_and_answers_hold_through_random_updates(
        updates in proptest::collection::vec((0u32..48, proptest::prop_oneof![0u8..=8, 6u8..=32], 0u32..4), 1..300),
        probes in proptest::collection::vec(proptest::num::u32::ANY, 16),
    ) {
        let spread = |top: u32| top << 26 | top.wrapping_mul(0x9e37_79b9) >> 6;
        let mut rib = Rib4::new();
        let mut model = std::collections::BTreeMap::new();
        for (step, &(top, len, hop)) in updates.iter().enumerate() {
            let prefix = Prefix::truncating(spread(top), len);
            if hop == 0 {
                proptest::prop_assert_eq!(rib.remove(prefix), model.remove(&prefix), "step {}", step);
            } else {
                proptest::prop_assert_eq!(rib.insert(prefix, hop), model.insert(prefix, hop), "step {}", step);
            }
            if step % 16 == 0 {
                check_links(&rib);
            }
        }
        check_links(&rib);
        check_full(&rib, ROOT);
        proptest::prop_assert_eq!(rib.iter().collect::<Vec<_>>(), model.iter().map(|(&prefix, &hop)| (prefix, hop)).collect::<Vec<_>>());
        for (&prefix, &hop) in &model {
            proptest::prop_assert_eq!(rib.get(prefix), Some(hop));
        }
        let brute = |addr: u32| model.keys().map(|p| addr.common_prefix_len(p.addr()).min(p.prefix_len())).max().unwrap_or(0);
        let starts: Vec<u32> = model.keys().map(|prefix| prefix.addr()).collect();
        for &addr in probes.iter().chain(&starts) {
            proptest::prop_assert_eq!(rib.lookup(addr), model_lookup(&model, addr), "lookup {:#x}", addr);
            proptest::prop_assert_eq!(rib.radix_depth(addr), brute(addr), "radix depth {:#x}", addr);
        }
        // Each updated prefix's gaps (every address of one the model's
        // answer) as the updaters ask for them.
        for &(top, len, _) in &updates {
            let outer = Prefix::truncating(spread(top), len);
            let mut cursor = outer.first();
            let mut covered = Vec::new();
            rib.for_each_exposed(outer, |range| {
                for at in [range.first, range.first + (range.last - range.first) / 2, range.last] {
                    assert_eq!(model_lookup(&model, at), range.next_hop, "{outer}: {range:?}");
                }
                covered.push((range.first, range.last));
            });
            // Between the gaps, routes strictly inside the prefix.
            for (first, last) in covered {
                if cursor < first {
                    let inside = model.keys().any(|p| *p != outer && outer.covers(p) && p.contains(cursor));
                    proptest::prop_assert!(inside, "{}: {:#x} neither a gap nor under a route", outer, cursor);
                }
                cursor = last.saturating_add(1);
            }
        }
    }
}
