//! fibkit peering with BIRD 2: a full table of each family announced,
//! changed while readers look up, and withdrawn when the session drops.
//! Every answer is checked against the table BIRD was given.

mod common;

use std::fmt::Write as _;
use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use common::stages::{all_withdrawn, converge, full_tables, run_stages, stages};
use common::{installed, speaker, wait_for, Bird, Scratch, Table};
use fibkit::load::ValueChoice;
use fibkit::Address;
use fibkit_sources::bgp::{NeighbourConfig, SessionState};

/// Static routes for BIRD: each prefix with its origin AS prepended.
fn statics<A: Address>(name: &str, channel: &str, table: &Table<A>) -> String {
    let mut out = format!("protocol static {name} {{\n  {channel};\n");
    for (prefix, label) in table {
        writeln!(out, "  route {prefix} blackhole {{ bgp_path.prepend({label}); }};").unwrap();
    }
    out.push_str("}\n");
    out
}

fn bird_config(port: u16, table4: &Table<u32>, table6: &Table<u128>) -> String {
    format!(
        "router id 10.0.0.2;\nprotocol device {{}}\n{}{}\
         protocol bgp fib {{\n  local 127.0.0.2 port {port} as 65001;\n  neighbor 127.0.0.1 port {port} as 65000;\n  multihop;\n  strict bind on;\n  \
         ipv4 {{ import none; export all; }};\n  \
         ipv6 {{ import none; export all; next hop address 2001:db8::2; }};\n}}\n",
        statics("s4", "ipv4", table4),
        statics("s6", "ipv6", table6),
    )
}

#[test]
fn a_full_table_from_bird_then_churn_then_the_session_drops() {
    let Some(bird) = installed("bird", "bird2") else { return };
    let (table4, table6) = full_tables();
    let bird_address = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
    let speaker = speaker(65000, ValueChoice::OriginAs, vec![NeighbourConfig::new(bird_address, 65001)]);
    let port = speaker.local_addrs()[0].port();
    let scratch = Scratch::new("bird-full");

    // 1. The full tables.
    let bird = Bird::start(&bird, &scratch, &bird_config(port, &table4, &table6));
    wait_for("the session", Duration::from_secs(120), || speaker.neighbours()[0].state == SessionState::Established);
    converge(&speaker, "BIRD", Instant::now(), &table4, &table6);

    // 2. Churn, then the LINX trace in four parts (BIRD sends what each
    // reconfiguration changed), with readers looking up throughout.
    let stages = stages(&table4, &table6);
    run_stages(&speaker, "BIRD", (table4, table6), stages, |stage, _, _| {
        bird.reconfigure(&bird_config(port, &stage.v4, &stage.v6));
    });

    // 3. The session drops: every route goes, in one batch.
    let batches = speaker.stats().batches;
    let answer = bird.birdc("disable fib");
    assert!(answer.contains("disabled"), "{answer}");
    wait_for("the session to drop", Duration::from_secs(30), || speaker.neighbours()[0].state == SessionState::Idle);
    all_withdrawn(&speaker, batches, "neighbour 127.0.0.2 (AS 65001): session down: received NOTIFICATION 6/2");
}
