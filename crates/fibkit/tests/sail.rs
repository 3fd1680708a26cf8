//! SAIL and SAIL-R on the 2014 RouteViews table: their levels, their
//! 15-bit limits, and the exhaustive 2^32 sweeps (ignored: `make
//! test-exhaustive`). The differential tests of every engine
//! (properties.rs, real_tables.rs, batch.rs) cover `sail`, `sail-wide` and
//! `sail-runs` too.

mod common;

use fibkit::error::{BuildError, Limit};
use fibkit::fib::{BuildOptions, Figure};
use fibkit::measure::verify;
use fibkit::nexthop::Mapping;
use fibkit::registry;

#[test]
fn the_2014_table_fits_sail_with_239_next_hops() {
    let Some(table) = common::routeviews_2014(Mapping::Modulo(239)) else { return };
    let fib = registry::build("sail", &table.v4, &BuildOptions::default()).unwrap();
    let stats = fib.stats();
    // Chunks where routes longer than /16 and /24 lie: 20,323 of the 2^15
    // level-24 chunk IDs that SAIL's 15 bits allow.
    assert_eq!(stats.get("chunks_24"), Some(&Figure::Count(20_323)), "{}", stats.report);
    assert_eq!(stats.get("chunks_32"), Some(&Figure::Count(1_982)), "{}", stats.report);
    assert_eq!(fib.footprint(), (65_536 + (20_323 + 1_982) * 256) * 2);
    assert!(stats.report.contains("level 24: 20323 chunks of 256"), "{}", stats.report);
}

#[test]
fn sail_runs_packs_the_2014_table_into_lines() {
    let Some(table) = common::routeviews_2014(Mapping::Modulo(239)) else { return };
    let fib = registry::build("sail-runs", &table.v4, &BuildOptions::default()).unwrap();
    let stats = fib.stats();
    // Of SAIL's 20,323 level-24 and 1,982 level-32 chunks, those whose
    // answers differ, the level-24 ones in 1 to 16 lines each.
    assert_eq!(stats.get("lines"), Some(&Figure::Count(26_846)), "{}", stats.report);
    assert_eq!(stats.get("chunks_32"), Some(&Figure::Count(722)), "{}", stats.report);
    assert_eq!(fib.footprint(), 65_536 * 4 + 26_846 * 64 + 722 * 256 * 2);
    assert_eq!(stats.get("chunks_24"), Some(&Figure::Count(13_820)), "{}", stats.report);
    assert!(
        stats.report.contains("level 24: 13820 chunks (10388 in one line), 26846 lines of up to 21 runs"),
        "{}",
        stats.report
    );
    let Err(BuildError::Limit(refused)) =
        registry::build("sail-runs", &common::routeviews_2014(Mapping::Distinct).unwrap().v4, &BuildOptions::default())
    else {
        panic!("sail-runs took 46,823 next hops")
    };
    assert_eq!((refused.limit, refused.value, refused.max), (Limit::NextHop, 46_823, 32_767));
}

#[test]
fn origin_asns_need_sail_wide() {
    let Some(table) = common::routeviews_2014(Mapping::Distinct) else { return };
    let options = BuildOptions::new(table.next_hops.max_index());
    let Err(BuildError::Limit(refused)) = registry::build("sail", &table.v4, &options) else {
        panic!("sail took 46,823 next hops")
    };
    assert_eq!((refused.limit, refused.value, refused.max), (Limit::NextHop, 46_823, 32_767));
    let wide = registry::build("sail-wide", &table.v4, &options).unwrap();
    assert!(verify::boundaries(wide.as_ref(), &table.v4).passed());
}

#[test]
#[ignore = "all 2^32 addresses for sail, sail-wide and sail-runs: run with `make test-exhaustive`"]
fn sail_exhaustive() {
    let Some(table) = common::routeviews_2014(Mapping::Modulo(239)) else { return };
    for name in ["sail", "sail-wide", "sail-runs"] {
        let fib = registry::build(name, &table.v4, &BuildOptions::default()).unwrap();
        let report = verify::exhaustive(fib.as_ref(), &table.v4);
        assert_eq!(report.checked, 1 << 32);
        assert!(report.passed(), "{name}: {} wrong, first {:?}", report.mismatches, report.first);
    }
}
