//! Two daemons, three sessions, overlapping prefixes: the FIB follows the
//! decision steps of RFC 4271 9.1.2.2, and a neighbour going down hands
//! its prefixes to the other.
//!
//! BIRD (AS 65001, external) speaks from 127.0.0.2 and 127.0.0.4 with one
//! identifier; GoBGP (AS 65000, internal) from 127.0.0.3. Values are next
//! hops, so the winner of each prefix shows: BIRD's sessions give their own
//! address (next hop self), GoBGP gives 192.0.2.3 (2001:db8::3).

mod common;

use std::net::IpAddr;
use std::time::Duration;

use common::{installed, speaker, wait_for, Bird, GoBgp, Scratch};
use fibkit::load::ValueChoice;
use fibkit::NO_ROUTE;
use fibkit_sources::bgp::{NeighbourConfig, SessionState, Speaker};

const BIRD_A: &str = "127.0.0.2";
const BIRD_B: &str = "127.0.0.4";
const GOBGP: &str = "127.0.0.3";

fn bird_config(port: u16) -> String {
    // BIRD runs one session per neighbour address: B reaches fibkit's
    // second listening address.
    let session = |name: &str, local: &str, neighbour: &str, filter: &str| {
        format!(
            "protocol bgp {name} {{\n  local {local} port {port} as 65001;\n  neighbor {neighbour} port {port} as 65000;\n  multihop;\n  strict bind on;\n  \
             ipv4 {{ import none; export filter {{ {filter} accept; }}; }};\n  \
             ipv6 {{ import none; export all; next hop address 2001:db8::2; }};\n}}\n"
        )
    };
    let routes = [
        // Path 65001 65002: two ASNs.
        ("10.1.0.0/16", "bgp_path.prepend(65002);"),
        ("10.2.0.0/16", "bgp_path.prepend(65002);"),
        ("10.3.0.0/16", "bgp_path.prepend(65002); bgp_origin = ORIGIN_IGP;"),
        ("10.33.0.0/16", "bgp_path.prepend(65002); bgp_origin = ORIGIN_INCOMPLETE;"),
        ("10.4.0.0/16", "bgp_path.prepend(65002);"),
        ("10.5.0.0/16", "bgp_path.prepend(65002); bgp_origin = ORIGIN_IGP;"),
        ("10.6.0.0/16", "bgp_path.prepend(65002);"),
        ("10.7.0.0/16", "bgp_path.prepend(65002);"),
    ];
    let mut statics = String::from("protocol static s4 {\n  ipv4;\n");
    for (prefix, attributes) in routes {
        statics.push_str(&format!("  route {prefix} blackhole {{ {attributes} }};\n"));
    }
    statics.push_str(
        "}\nprotocol static s6 {\n  ipv6;\n  route 2001:db8:7::/48 blackhole { bgp_path.prepend(65002); };\n}\n",
    );
    // 10.4/16: MED 50 from A, 10 from B (one neighbouring AS: B wins).
    format!(
        "router id 10.0.0.2;\nprotocol device {{}}\n{statics}{}{}",
        session("a", BIRD_A, "127.0.0.1", "if net = 10.4.0.0/16 then bgp_med = 50;"),
        session("b", BIRD_B, "127.0.0.5", "if net = 10.4.0.0/16 then bgp_med = 10;"),
    )
}

fn gobgp_config(port: u16) -> String {
    format!(
        "[global.config]\n  as = 65000\n  router-id = \"10.0.0.3\"\n  port = -1\n\
         [[neighbors]]\n  [neighbors.config]\n    neighbor-address = \"127.0.0.1\"\n    peer-as = 65000\n\
         \x20 [neighbors.transport.config]\n    local-address = \"{GOBGP}\"\n    remote-port = {port}\n\
         \x20 [neighbors.timers.config]\n    connect-retry = 1\n\
         \x20 [[neighbors.afi-safis]]\n    [neighbors.afi-safis.config]\n      afi-safi-name = \"ipv4-unicast\"\n\
         \x20 [[neighbors.afi-safis]]\n    [neighbors.afi-safis.config]\n      afi-safi-name = \"ipv6-unicast\"\n"
    )
}

/// GoBGP's routes (internal: LOCAL_PREF counts).
const GOBGP_ROUTES: &[&str] = &[
    // 1: LOCAL_PREF 200 beats BIRD's shorter path.
    "10.1.0.0/16 nexthop 192.0.2.3 aspath 65010,65020,65030 local-pref 200 origin igp",
    // 2: equal preference, a longer path loses.
    "10.2.0.0/16 nexthop 192.0.2.3 aspath 65010,65020,65030 local-pref 100 origin igp",
    // 3: equal path length, INCOMPLETE loses to BIRD's IGP...
    "10.3.0.0/16 nexthop 192.0.2.3 aspath 65010,65030 local-pref 100 origin incomplete",
    // ... and IGP wins over BIRD's INCOMPLETE.
    "10.33.0.0/16 nexthop 192.0.2.3 aspath 65010,65030 local-pref 100 origin igp",
    // 5: all equal but internal against external: BIRD wins.
    "10.5.0.0/16 nexthop 192.0.2.3 aspath 65010,65030 local-pref 100 origin igp",
    // Only GoBGP has it.
    "10.8.0.0/16 nexthop 192.0.2.3 aspath 65010 local-pref 100 origin igp",
];

fn answer(speaker: &Speaker, addr: &str) -> Option<String> {
    let hop = match addr.parse::<IpAddr>().unwrap() {
        IpAddr::V4(v4) => {
            let hop = speaker.reader4().lookup(u32::from(v4));
            (hop != NO_ROUTE).then(|| speaker.label::<u32>(hop)).flatten()
        }
        IpAddr::V6(v6) => {
            let hop = speaker.reader6().lookup(u128::from(v6));
            (hop != NO_ROUTE).then(|| speaker.label::<u128>(hop)).flatten()
        }
    };
    hop.map(|label| label.to_string())
}

fn expect(speaker: &Speaker, wanted: &[(&str, Option<&str>)]) {
    let answers = || wanted.iter().map(|(addr, _)| answer(speaker, addr)).collect::<Vec<_>>();
    let wanted_answers: Vec<_> = wanted.iter().map(|(_, hop)| hop.map(str::to_string)).collect();
    // Settled when the answers are right; the panic shows them otherwise.
    let settled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_for("the decision", Duration::from_secs(60), || answers() == wanted_answers)
    }));
    if settled.is_err() {
        let got = answers();
        let rows: Vec<_> =
            wanted.iter().zip(&got).map(|((addr, want), got)| format!("{addr}: want {want:?}, got {got:?}")).collect();
        panic!("the FIB does not follow the decision steps:\n{}\n{}", rows.join("\n"), speaker.journal().join("\n"));
    }
}

#[test]
fn the_fib_follows_the_decision_steps_and_a_neighbour_down_hands_over() {
    let (Some(bird), Some(gobgpd)) = (installed("bird", "bird2"), installed("gobgpd", "gobgpd")) else { return };
    let ip = |text: &str| text.parse::<IpAddr>().unwrap();
    let speaker = speaker(
        65000,
        ValueChoice::NextHop,
        vec![
            NeighbourConfig::new(ip(BIRD_A), 65001),
            NeighbourConfig::new(ip(BIRD_B), 65001),
            NeighbourConfig::new(ip(GOBGP), 65000),
        ],
    );
    let port = speaker.local_addrs()[0].port();
    let (bird_dir, gobgp_dir) = (Scratch::new("decision-bird"), Scratch::new("decision-gobgp"));
    let gobgp = GoBgp::start(&gobgpd, &gobgp_dir, &gobgp_config(port));
    for route in GOBGP_ROUTES {
        gobgp.cli(&["global", "rib", "add", "-a", "ipv4"].into_iter().chain(route.split(' ')).collect::<Vec<_>>());
    }
    gobgp.cli(&[
        "global",
        "rib",
        "add",
        "-a",
        "ipv6",
        "2001:db8:7::/48",
        "nexthop",
        "2001:db8::3",
        "local-pref",
        "200",
    ]);
    let bird = Bird::start(&bird, &bird_dir, &bird_config(port));
    wait_for("three sessions", Duration::from_secs(120), || {
        speaker.neighbours().iter().all(|neighbour| neighbour.state == SessionState::Established)
    });
    let both = [
        ("10.1.0.1", Some("192.0.2.3")),  // LOCAL_PREF
        ("10.2.0.1", Some(BIRD_A)),       // AS_PATH length
        ("10.3.0.1", Some(BIRD_A)),       // ORIGIN
        ("10.33.0.1", Some("192.0.2.3")), // ORIGIN
        ("10.4.0.1", Some(BIRD_B)),       // MED within AS 65001 (A, the lower address, has MED 50)
        ("10.5.0.1", Some(BIRD_A)),       // external over internal
        ("10.6.0.1", Some(BIRD_A)),       // identifiers tie: the lower address
        ("10.8.0.1", Some("192.0.2.3")),  // one candidate
        ("10.9.0.1", None),
        ("2001:db8:7::1", Some("2001:db8::3")), // LOCAL_PREF, IPv6
    ];
    expect(&speaker, &both);

    // BIRD goes: GoBGP's routes take over; BIRD's own prefixes go.
    drop(bird);
    let gobgp_only = [
        ("10.1.0.1", Some("192.0.2.3")),
        ("10.2.0.1", Some("192.0.2.3")),
        ("10.3.0.1", Some("192.0.2.3")),
        ("10.33.0.1", Some("192.0.2.3")),
        ("10.4.0.1", None),
        ("10.5.0.1", Some("192.0.2.3")),
        ("10.6.0.1", None),
        ("10.8.0.1", Some("192.0.2.3")),
        ("2001:db8:7::1", Some("2001:db8::3")),
    ];
    expect(&speaker, &gobgp_only);
    wait_for("BIRD's sessions down", Duration::from_secs(10), || {
        speaker.neighbours()[..2].iter().all(|neighbour| neighbour.state == SessionState::Idle)
    });
    // A withdrawal through GoBGP.
    gobgp.cli(&["global", "rib", "del", "-a", "ipv4", "10.1.0.0/16"]);
    expect(&speaker, &[("10.1.0.1", None), ("10.2.0.1", Some("192.0.2.3"))]);
}
