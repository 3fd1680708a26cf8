//! fibkit peering with GoBGP: a full table of each family announced,
//! changed while readers look up, and withdrawn when the session drops.
//! Every answer is checked against the table GoBGP was given.
//!
//! GoBGP is given its routes as MRT dumps (`gobgp mrt inject global`), its
//! own routes with an AS path of the origin AS alone. A stage gives it only
//! what changed: new and changed routes, and for a route that went, a
//! replacement with NO_ADVERTISE, which GoBGP's export policy holds back,
//! so GoBGP withdraws the prefix from the speaker (inject cannot withdraw,
//! and `gobgp global rib del` takes one prefix a command: a few of each
//! stage's withdrawals go that way).

mod common;

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use common::mrt::{Dump, NO_ADVERTISE};
use common::stages::{all_withdrawn, converge, full_tables, run_stages, stages};
use common::{installed, speaker, wait_for, GoBgp, Scratch, Table, MARKER};
use fibkit::{Address, Family, Prefix};
use fibkit_sources::bgp::{NeighbourConfig, SessionState};

/// The speaker's AS and GoBGP's (external), from the 4-byte range for
/// private use (RFC 6996): no origin of the tables (`fits` checks; the
/// 2-byte one and the range for documentation have origins of the 2014
/// table).
const SPEAKER_AS: u32 = 4_200_065_000;
const GOBGP_AS: u32 = 4_200_065_001;
const GOBGP_ADDRESS: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 3);

/// At most how many of a stage's withdrawals in each family go through
/// `gobgp global rib del`, one command each.
const DELETED_ONE_BY_ONE: usize = 50;

/// GoBGP's configuration: no listening port, an export policy holding back
/// the routes with NO_ADVERTISE (GoBGP 3.10 exports them otherwise), and
/// the speaker as a neighbour, administratively down until the tables are
/// in.
fn gobgp_config(port: u16) -> String {
    format!(
        "[global.config]\n  as = {GOBGP_AS}\n  router-id = \"10.0.0.3\"\n  port = -1\n\
         [global.apply-policy.config]\n  export-policy-list = [\"no-advertise\"]\n  default-export-policy = \"accept-route\"\n\
         [[defined-sets.bgp-defined-sets.community-sets]]\n  community-set-name = \"no-advertise\"\n  community-list = [\"{NO_ADVERTISE}\"]\n\
         [[policy-definitions]]\n  name = \"no-advertise\"\n  [[policy-definitions.statements]]\n    name = \"held-back\"\n\
         \x20   [policy-definitions.statements.conditions.bgp-conditions.match-community-set]\n      community-set = \"no-advertise\"\n      match-set-options = \"any\"\n\
         \x20   [policy-definitions.statements.actions]\n      route-disposition = \"reject-route\"\n\
         [[neighbors]]\n  [neighbors.config]\n    neighbor-address = \"127.0.0.1\"\n    peer-as = {SPEAKER_AS}\n    admin-down = true\n\
         \x20 [neighbors.transport.config]\n    local-address = \"{GOBGP_ADDRESS}\"\n    remote-port = {port}\n\
         \x20 [neighbors.timers.config]\n    connect-retry = 1\n\
         \x20 [[neighbors.afi-safis]]\n    [neighbors.afi-safis.config]\n      afi-safi-name = \"ipv4-unicast\"\n\
         \x20 [[neighbors.afi-safis]]\n    [neighbors.afi-safis.config]\n      afi-safi-name = \"ipv6-unicast\"\n"
    )
}

/// A route's origin AS, as the dump writes it.
fn origin(label: &fibkit::nexthop::Label) -> u32 {
    u32::try_from(label.as_number()).expect("an origin AS of 32 bits")
}

/// Writes into `dump` what takes GoBGP from `before` to `after`: the new
/// and changed routes, and a held-back replacement for each route that
/// went, except every so often one (at most `DELETED_ONE_BY_ONE`), which
/// it returns for `gobgp global rib del`.
fn changes<A: Address>(dump: &mut Dump, before: &Table<A>, after: &Table<A>) -> Vec<Prefix<A>> {
    for (&prefix, label) in after {
        if before.get(&prefix) != Some(label) {
            dump.route(prefix, origin(label), true);
        }
    }
    let gone: Vec<_> = before.iter().filter(|(prefix, _)| !after.contains_key(prefix)).collect();
    let stride = gone.len().div_ceil(DELETED_ONE_BY_ONE).max(1);
    let mut deleted = Vec::new();
    for (at, (&prefix, label)) in gone.into_iter().enumerate() {
        if at % stride == 0 {
            deleted.push(prefix);
        } else {
            dump.route(prefix, origin(label), false);
        }
    }
    deleted
}

/// Deletes `prefixes` from GoBGP's RIB, one `gobgp global rib del` each.
fn delete<A: Address>(gobgp: &GoBgp, prefixes: &[Prefix<A>]) {
    let family = if A::FAMILY == Family::Ipv4 { "ipv4" } else { "ipv6" };
    for prefix in prefixes {
        gobgp.cli(&["global", "rib", "-a", family, "del", &prefix.to_string()]);
    }
}

/// No route of `table` has an AS of the session as its origin (the speaker
/// would see a loop) or the marker's prefix.
fn fits<A: Address>(table: &Table<A>) {
    for (prefix, label) in table {
        let asn = origin(label);
        assert!(asn != SPEAKER_AS && asn != GOBGP_AS, "{prefix} has origin AS {asn}, an AS of the session");
        assert_ne!(prefix.to_string(), MARKER, "a route for the marker's prefix");
    }
}

#[test]
fn a_full_table_from_gobgp_then_churn_then_the_session_drops() {
    let Some(gobgpd) = installed("gobgpd", "gobgpd") else { return };
    let (table4, table6) = full_tables();
    let stages = stages(&table4, &table6);
    for table in [&table4].into_iter().chain(stages.iter().map(|stage| &stage.v4)) {
        fits(table);
    }
    for table in [&table6].into_iter().chain(stages.iter().map(|stage| &stage.v6)) {
        fits(table);
    }
    let speaker = speaker(
        SPEAKER_AS,
        fibkit::load::ValueChoice::OriginAs,
        vec![NeighbourConfig::new(IpAddr::V4(GOBGP_ADDRESS), GOBGP_AS)],
    );
    let port = speaker.local_addrs()[0].port();
    let scratch = Scratch::new("gobgp-full");
    let gobgp = GoBgp::start(&gobgpd, &scratch, &gobgp_config(port));

    // 1. The full tables, given to GoBGP before the session comes up.
    let mut dump = Dump::new();
    changes(&mut dump, &Table::new(), &table4);
    changes(&mut dump, &Table::new(), &table6);
    let injecting = Instant::now();
    let routes = dump.routes();
    gobgp.inject(dump);
    eprintln!("GoBGP took the {routes} routes in {:.1} s", injecting.elapsed().as_secs_f64());
    gobgp.cli(&["neighbor", "127.0.0.1", "enable"]);
    wait_for("the session", Duration::from_secs(120), || speaker.neighbours()[0].state == SessionState::Established);
    converge(&speaker, "GoBGP", Instant::now(), &table4, &table6);

    // 2. Churn, then the LINX trace in four parts (GoBGP is given what each
    // changed), with readers looking up throughout.
    run_stages(&speaker, "GoBGP", (table4, table6), stages, |stage, before4, before6| {
        let mut dump = Dump::new();
        let deleted4 = changes(&mut dump, before4, &stage.v4);
        let deleted6 = changes(&mut dump, before6, &stage.v6);
        gobgp.inject(dump);
        delete(&gobgp, &deleted4);
        delete(&gobgp, &deleted6);
    });

    // 3. The session drops: every route goes, in one batch.
    let batches = speaker.stats().batches;
    gobgp.cli(&["neighbor", "127.0.0.1", "disable"]);
    wait_for("the session to drop", Duration::from_secs(30), || speaker.neighbours()[0].state == SessionState::Idle);
    all_withdrawn(
        &speaker,
        batches,
        &format!("neighbour {GOBGP_ADDRESS} (AS {GOBGP_AS}): session down: received NOTIFICATION 6/2"),
    );
}
