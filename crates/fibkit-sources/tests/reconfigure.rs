//! A speaker reconfigured while its sessions run: a neighbour removed ends
//! with a Cease "Peer De-configured" and its routes go, one added comes
//! up, and the session of the neighbour that did not change goes on.
//!
//! BIRD speaks from three addresses (AS 65001, 65002, 65003), each session
//! to an address of the speaker's own, each announcing a prefix of its own.

mod common;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use common::{installed, routers, wait_for, Bird, Scratch};
use fibkit::nexthop::Label;
use fibkit::NO_ROUTE;
use fibkit_sources::bgp::{BgpConfig, NeighbourConfig, Reconfigured, SessionState, Speaker};

/// BIRD's sessions: (name, BIRD's address, the speaker's address, AS,
/// the prefix it announces).
const SESSIONS: [(&str, &str, &str, u32, &str); 3] = [
    ("a", "127.0.0.2", "127.0.0.1", 65001, "10.1.0.0/16"),
    ("b", "127.0.0.4", "127.0.0.5", 65002, "10.2.0.0/16"),
    ("c", "127.0.0.6", "127.0.0.7", 65003, "10.3.0.0/16"),
];

fn bird_config(port: u16) -> String {
    let mut config = "router id 10.0.0.2;\nprotocol device {}\n".to_string();
    for (name, ..) in SESSIONS {
        config += &format!("ipv4 table t{name};\n");
    }
    for (name, local, speaker, asn, prefix) in SESSIONS {
        config += &format!(
            "protocol static s{name} {{\n  ipv4 {{ table t{name}; }};\n  route {prefix} blackhole;\n}}\n\
             protocol bgp {name} {{\n  local {local} port {port} as {asn};\n  neighbor {speaker} port {port} as 65000;\n  \
             multihop;\n  strict bind on;\n  connect delay time 1;\n  connect retry time 1;\n  error wait time 1, 2;\n  \
             ipv4 {{ table t{name}; import none; export all; }};\n}}\n"
        );
    }
    config
}

fn neighbour(index: usize) -> NeighbourConfig {
    let (_, local, _, asn, _) = SESSIONS[index];
    NeighbourConfig::new(local.parse().unwrap(), asn)
}

fn config(neighbours: &[usize]) -> BgpConfig {
    let mut config = BgpConfig::new(65000, Ipv4Addr::new(10, 255, 0, 1));
    config.listen = SESSIONS.iter().map(|(_, _, speaker, _, _)| SocketAddr::new(speaker.parse().unwrap(), 0)).collect();
    config.value = fibkit::load::ValueChoice::OriginAs;
    config.neighbours = neighbours.iter().map(|&index| neighbour(index)).collect();
    config
}

/// The origin AS the FIB gives the first address of `prefix`.
fn origin(speaker: &Speaker, prefix: &str) -> Option<Label> {
    let addr: Ipv4Addr = prefix.split('/').next().unwrap().parse().unwrap();
    let hop = speaker.reader4().lookup(u32::from(addr));
    (hop != NO_ROUTE).then(|| speaker.label::<u32>(hop)).flatten()
}

fn established(speaker: &Speaker, address: &str) -> bool {
    let address: IpAddr = address.parse().unwrap();
    speaker.neighbours().iter().any(|status| status.address == address && status.state == SessionState::Established)
}

#[test]
fn neighbours_added_and_removed_while_the_others_sessions_go_on() {
    let Some(bird) = installed("bird", "bird2") else { return };
    let (router4, router6) = routers();
    let speaker = Speaker::start(config(&[0, 1]), router4, router6).unwrap();
    let port = speaker.local_addrs()[0].port();
    let scratch = Scratch::new("reconfigure");
    let _bird = Bird::start(&bird, &scratch, &bird_config(port));
    wait_for("A and B up", Duration::from_secs(60), || {
        established(&speaker, "127.0.0.2") && established(&speaker, "127.0.0.4")
    });
    wait_for("their routes", Duration::from_secs(30), || {
        origin(&speaker, "10.1.0.0/16").is_some() && origin(&speaker, "10.2.0.0/16").is_some()
    });
    assert_eq!(origin(&speaker, "10.1.0.0/16"), Some(Label::Number(65001)));
    assert_eq!(origin(&speaker, "10.2.0.0/16"), Some(Label::Number(65002)));
    assert_eq!(origin(&speaker, "10.3.0.0/16"), None, "C is not configured yet");
    let a_sessions = speaker.neighbours()[0].sessions;

    // B out, C in; A untouched.
    let next = config(&[0, 2]);
    let changed = speaker.reconfigure(&next).unwrap();
    let address = |text: &str| text.parse::<IpAddr>().unwrap();
    assert_eq!(changed, Reconfigured { added: vec![address("127.0.0.6")], removed: vec![address("127.0.0.4")] });
    wait_for("C up", Duration::from_secs(60), || established(&speaker, "127.0.0.6"));
    wait_for("B's routes gone, C's in", Duration::from_secs(30), || {
        origin(&speaker, "10.2.0.0/16").is_none() && origin(&speaker, "10.3.0.0/16") == Some(Label::Number(65003))
    });
    assert_eq!(origin(&speaker, "10.1.0.0/16"), Some(Label::Number(65001)));
    let statuses = speaker.neighbours();
    let listed: Vec<IpAddr> = statuses.iter().map(|status| status.address).collect();
    assert_eq!(listed, [address("127.0.0.2"), address("127.0.0.6")], "B is no longer listed");
    assert_eq!(statuses[0].sessions, a_sessions, "A's session was dropped");
    assert_eq!(statuses[0].state, SessionState::Established);
    let journal = speaker.journal().join("\n");
    assert!(journal.contains("neighbour 127.0.0.4 removed from the configuration"), "{journal}");
    assert!(journal.contains("neighbour 127.0.0.4 (AS 65002): session down: sent NOTIFICATION 6/3"), "{journal}");
    // B connecting again is refused as any unconfigured address.
    wait_for("B refused", Duration::from_secs(30), || {
        speaker
            .journal()
            .iter()
            .any(|line| line.contains("connection from 127.0.0.4 refused: not a configured neighbour"))
    });

    // The speaker's own settings cannot change under it.
    let mut other = next.clone();
    other.local_as = 65100;
    let refused = speaker.reconfigure(&other).unwrap_err();
    assert!(refused.contains("start a new speaker"), "{refused}");
    let mut twice = next.clone();
    twice.neighbours.push(neighbour(0));
    assert!(speaker.reconfigure(&twice).unwrap_err().contains("configured twice"));
    assert_eq!(speaker.reconfigure(&next).unwrap(), Reconfigured::default(), "the same configuration changes nothing");
    assert_eq!(speaker.neighbours()[0].sessions, a_sessions);
}
