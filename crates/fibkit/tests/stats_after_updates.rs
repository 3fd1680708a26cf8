//! The statistics of a FIB updated in place describe the updated structure:
//! they agree with the statistics of a FIB built from scratch from the
//! final RIB, except for the figures that legitimately differ (free space
//! and the build's own figures), which these tests name. The structure
//! of an engine updated in place holds the RIB's routes but the default
//! route, kept aside (`fibkit::live::WithDefault`): it is compared with a
//! build of those.

mod common;

use fibkit::fib::{BuildOptions, Figure, Stats};
use fibkit::nexthop::{Label, Mapping, NextHopTable};
use fibkit::random::XorShift32;
use fibkit::registry;
use fibkit::rib::Rib4;
use fibkit::router::{Router, Update, Window};

fn count(stats: &Stats, key: &str) -> u64 {
    match stats.get(key) {
        Some(Figure::Count(value)) => *value,
        other => panic!("{key}: {other:?}"),
    }
}

/// The routes of the router's structure: its RIB's but the default route,
/// which an engine updated in place keeps aside.
fn structure(router: &Router) -> Rib4 {
    let mut rib = router.rib().clone();
    rib.remove(fibkit::addr::Prefix4::default_route());
    rib
}

/// The router's stats and a fresh build's from its final structure's
/// routes.
fn updated_and_fresh(router: &Router) -> (Stats, Stats) {
    let updated = router.reader().snapshot().fib().stats();
    let spec = registry::find(router.engine()).expect("a registered engine");
    let options = BuildOptions::new(router.next_hops().max_index());
    let fresh = spec.build(&structure(router), &options).expect("the final RIB builds").stats();
    (updated, fresh)
}

/// Poptrie: every count the structure determines agrees; the allocated
/// arrays (free space for updates) are at least the fresh build's;
/// `prefixes_aggregated` and `build_ms` are the initial build's.
fn check_poptrie(router: &Router) {
    let (updated, fresh) = updated_and_fresh(router);
    for key in
        ["prefixes", "boundaries", "direct_leaves", "direct_nodes", "internal_nodes", "leaves", "levels", "leaf_bits"]
    {
        assert_eq!(count(&updated, key), count(&fresh, key), "{}: {key}", router.engine());
    }
    assert_eq!(count(&updated, "prefixes"), structure(router).len() as u64);
    assert!(count(&updated, "internal_nodes_allocated") >= count(&updated, "internal_nodes"));
    assert!(count(&updated, "leaves_allocated") >= count(&updated, "leaves"));
    assert!(count(&updated, "bytes_total") >= count(&fresh, "bytes_total"));
    // A batch changing only the default route stores its word: the
    // updater does not see it (these batches are of one update each).
    assert!(count(&updated, "update_batches") <= router.stats().publishes);
    assert!(count(&updated, "update_batches") > router.stats().publishes / 2);
    assert_eq!(count(&fresh, "update_batches"), 0);
    let aggregated = fibkit::engines::poptrie::aggregate(&structure(router)).len() as u64;
    assert_eq!(count(&fresh, "prefixes_aggregated"), aggregated);
}

/// The aligned blocks of `2^bits` addresses whose answers are not all one.
fn mixed_blocks(rib: &Rib4, bits: u32) -> u64 {
    let mut mixed = 0u64;
    let mut last_block = None;
    rib.for_each_run(0, u32::MAX, |start, _| {
        if start & ((1 << bits) - 1) != 0 && last_block != Some(start >> bits) {
            mixed += 1;
            last_block = Some(start >> bits);
        }
    });
    mixed
}

/// DIR-24-8: the route count agrees. Groups differ legitimately: the
/// updater gives a group exactly to the /24 blocks with more than one
/// answer, while a table built by inserting route after route (as DPDK
/// does) keeps a group for every block holding a prefix longer than /24,
/// even one whose answers are all equal; blocks no update touched keep
/// the build's groups. So the groups in use lie between the blocks with
/// mixed answers and a fresh build's groups, and equal the former when
/// every group came from the updater (`all_updated`).
fn check_dir24(router: &Router, all_updated: bool) {
    let (updated, fresh) = updated_and_fresh(router);
    assert_eq!(count(&updated, "prefixes"), count(&fresh, "prefixes"));
    assert_eq!(count(&updated, "prefixes"), structure(router).len() as u64);
    let mixed_blocks = mixed_blocks(&structure(router), 8);
    let groups = count(&updated, "groups_used");
    assert!(mixed_blocks <= groups && groups <= count(&fresh, "groups_used"), "{groups} groups, {mixed_blocks} mixed");
    if all_updated {
        assert_eq!(groups, mixed_blocks);
    }
    assert!(count(&updated, "groups_allocated") > groups, "room to grow is not counted as in use");
}

/// SAIL: the route count agrees. Chunks differ legitimately, as
/// DIR-24-8's groups do: a rewritten /16 gets a level-24 chunk exactly when
/// its answers are not all one, and a rewritten /24 a level-32 chunk
/// likewise, while a build gives one to every /16 (/24) holding a longer
/// route; /16s and /24s no update changed keep what they had. So every
/// mixed block has a chunk, and when every chunk came from the updater
/// (`all_updated`) only the mixed ones do.
fn check_sail(router: &Router, all_updated: bool) {
    let (updated, fresh) = updated_and_fresh(router);
    assert_eq!(count(&updated, "prefixes"), count(&fresh, "prefixes"));
    assert_eq!(count(&updated, "prefixes"), structure(router).len() as u64);
    for (level, bits) in [("24", 16), ("32", 8)] {
        let (chunks, mixed) = (count(&updated, &format!("chunks_{level}")), mixed_blocks(&structure(router), bits));
        assert!(mixed <= chunks, "level {level}: {chunks} chunks, {mixed} mixed blocks");
        if all_updated {
            assert_eq!(chunks, mixed, "level {level}");
        }
        assert!(
            count(&updated, &format!("chunks_{level}_allocated")) > chunks,
            "level {level}: room to grow is not counted as in use"
        );
    }
}

/// SAIL-R: a build and the updater both give a /16 lines, and a /24 a
/// level-32 chunk, exactly where its answers are not all one, and pack a
/// /16's answers the same way: every count of what lookups reach agrees
/// with a fresh build's; the arrays hold room beyond it.
fn check_sail_runs(router: &Router) {
    let (updated, fresh) = updated_and_fresh(router);
    for key in ["prefixes", "chunks_24", "single_line_chunks", "lines", "chunks_32"] {
        assert_eq!(count(&updated, key), count(&fresh, key), "{key}");
    }
    assert_eq!(count(&updated, "prefixes"), structure(router).len() as u64);
    assert_eq!(count(&updated, "chunks_24"), mixed_blocks(&structure(router), 16));
    assert_eq!(count(&updated, "chunks_32"), mixed_blocks(&structure(router), 8));
    assert!(count(&updated, "lines_allocated") > count(&updated, "lines"), "room to grow is not counted as in use");
    assert!(count(&updated, "chunks_32_allocated") > count(&updated, "chunks_32"));
    assert!(count(&updated, "bytes_total") > count(&fresh, "bytes_total"));
}

fn check(router: &Router, all_updated: bool) {
    match router.engine() {
        "sail-runs" => check_sail_runs(router),
        engine if engine.starts_with("poptrie") => check_poptrie(router),
        engine if engine.starts_with("sail") => check_sail(router, all_updated),
        _ => check_dir24(router, all_updated),
    }
}

#[test]
fn stats_after_random_updates_describe_the_updated_structure() {
    let next_hops = || NextHopTable::new(Mapping::Modulo(1000));
    let mut rng = XorShift32::new(99);
    let anchors = [0x0a00_0000u32, 0x0a01_0000, 0x0a02_0000, 0xc0a8_0000, 0x0000_0000, 0xffff_ff00];
    let random_prefix = |rng: &mut XorShift32| {
        let anchor = anchors[rng.next() as usize % anchors.len()];
        let prefix_len = [0, 8, 12, 16, 18, 20, 22, 24, 24, 25, 28, 32][rng.next() as usize % 12];
        fibkit::addr::Prefix4::truncating(anchor ^ (rng.next() & 0x3ffff), prefix_len)
    };
    let mut rib = Rib4::new();
    let empty = Rib4::new();
    let mut table = next_hops();
    for _ in 0..300 {
        let prefix = random_prefix(&mut rng);
        rib.insert(prefix, table.intern(Label::Number(u64::from(rng.next() % 40))));
    }
    let runs = [
        ("poptrie16", &rib),
        ("poptrie18", &rib),
        ("dir24-8", &rib),
        ("sail", &rib),
        ("sail-runs", &rib),
        ("poptrie18", &empty),
        ("dir24-8", &empty),
        ("sail", &empty),
        ("sail-runs", &empty),
    ];
    for (engine, initial) in runs {
        let all_updated = initial.is_empty();
        let mut router = Router::new(engine, initial.clone(), table.clone(), Window::Count(1)).unwrap();
        let mut rng = XorShift32::new(5);
        for _ in 0..2000 {
            let prefix = random_prefix(&mut rng);
            let update = if rng.next().is_multiple_of(3) {
                Update::Withdraw { prefix }
            } else {
                Update::Announce { prefix, value: Label::Number(u64::from(rng.next() % 40)) }
            };
            router.apply(&[update]).unwrap();
        }
        assert_eq!(router.stats().full_rebuilds, 0, "{engine}: updated in place");
        check(&router, all_updated);
    }
}

#[test]
fn stats_after_the_real_trace_describe_the_updated_structure() {
    let (Some(table), Some(updates)) =
        (common::routeviews_2014(Mapping::Modulo(239)), common::linx_trace(Mapping::Modulo(239)))
    else {
        return;
    };
    for engine in ["poptrie18", "dir24-8", "sail", "sail-runs"] {
        let mut router = Router::new(engine, table.v4.clone(), table.next_hops.clone(), Window::Count(1)).unwrap();
        for update in &updates {
            router.apply(std::slice::from_ref(update)).unwrap();
        }
        assert!(router.stats().changes > 1000, "{engine}: {:?}", router.stats());
        check(&router, false);
    }
}
