//! The kernel mirror in a network namespace of each test's own: half a
//! million routes added, changed and deleted with `ip -batch` while it
//! follows, then every answer checked against `ip route show`; the value
//! rules one by one; an overrun of its socket; an interface going down.
//! Skipped where this process may not make network namespaces.

#![cfg(target_os = "linux")]

mod common;

use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::kernel::{addr, Netns};
use common::{answer, check_answers, wait_for, Table};
use fibkit::nexthop::Label;
use fibkit_sources::netlink::{Mirror, NetlinkConfig, RouteValue, RT_TABLE_MAIN};

/// One test at a time: each floods the kernel, and the machine may have
/// two cores.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The mirror's answers equal `ip route show table TABLE`'s, both
/// families; returns the addresses checked.
fn check_table(ns: &Netns, mirror: &Mirror, table: &str, value: RouteValue, reject: Option<Label>) -> usize {
    let want4: Table<u32> = ns.kernel_table(table, value, reject);
    let want6: Table<u128> = ns.kernel_table(table, value, reject);
    // The kernel is still now; a mirror may be finishing a dump.
    let caught_up = || {
        let stats = mirror.stats();
        (stats.routes4, stats.routes6) == (want4.len(), want6.len())
    };
    let start = Instant::now();
    while !caught_up() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let stats = mirror.stats();
    assert_eq!(
        (stats.routes4, stats.routes6),
        (want4.len(), want6.len()),
        "prefixes in the FIBs: {stats:?}\n{}",
        journal_tail(mirror)
    );
    assert_eq!((stats.undecodable, stats.updates_rejected), (0, 0), "{:#?}", mirror.journal());
    check_answers(mirror, &want4, 100_000) + check_answers(mirror, &want6, 100_000)
}

/// The journal's last 60 lines, for a failure's message.
fn journal_tail(mirror: &Mirror) -> String {
    let journal = mirror.journal();
    journal[journal.len().saturating_sub(60)..].join("\n")
}

/// The `i`th /24 from 11.0.0.0.
fn slash24(i: usize) -> String {
    format!("{}.{}.{}.0/24", 11 + i / 65536, i / 256 % 256, i % 256)
}

fn gateway4(i: usize) -> String {
    format!("10.255.0.{}", 2 + i % 6)
}

fn gateway6(i: usize) -> String {
    format!("2001:db8:ffff::{:x}", 2 + i % 6)
}

/// Half a million routes: 400,000 /24s from 11.0.0.0 (every 50th through
/// d1), 2,000 /16s over them, 20,000 /32s of which 1,000 blackholes,
/// 5,000 /24s with two metrics, 60,000 IPv6 /48s, 3,000 /32s and 10,000
/// /128s.
fn additions() -> String {
    let mut out = String::with_capacity(32 << 20);
    for i in 0..400_000usize {
        let via = if i % 50 == 0 { "10.254.0.2 dev d1".to_string() } else { gateway4(i) };
        writeln!(out, "route add {} via {via}", slash24(i)).unwrap();
    }
    for j in 0..2_000usize {
        writeln!(out, "route add {}.{}.0.0/16 via {}", 11 + j / 256, j % 256, gateway4(j + 3)).unwrap();
    }
    for k in 0..20_000usize {
        let host = 0x1e00_0000 + k * 7;
        let dotted = format!("{}.{}.{}.{}", host >> 24, host >> 16 & 255, host >> 8 & 255, host & 255);
        match k % 20 {
            0 => writeln!(out, "route add blackhole {dotted}/32").unwrap(),
            _ => writeln!(out, "route add {dotted}/32 via {}", gateway4(k)).unwrap(),
        }
    }
    for m in 0..5_000usize {
        writeln!(out, "route add 40.{}.{}.0/24 via {} metric 10", m / 256, m % 256, gateway4(m)).unwrap();
        writeln!(out, "route add 40.{}.{}.0/24 via {} metric 20", m / 256, m % 256, gateway4(m + 1)).unwrap();
    }
    for i in 0..60_000usize {
        writeln!(out, "route add 2a00:{:x}:{:x}::/48 via {}", i >> 16, i & 0xffff, gateway6(i)).unwrap();
    }
    for j in 0..3_000usize {
        let via = if j % 10 == 0 { "2001:db8:fffe::2 dev d1".to_string() } else { gateway6(j) };
        writeln!(out, "route add 2a01:{j:x}::/32 via {via}").unwrap();
    }
    for k in 0..10_000usize {
        writeln!(out, "route add 2a02::{k:x}/128 via {}", gateway6(k + 1)).unwrap();
    }
    out
}

/// Every 10th /24 and 48 to another gateway, every 13th /24, every 7th
/// /16, every 11th IPv6 /48 and the best metric of every 3rd two-metric
/// /24 deleted.
fn changes() -> String {
    let mut out = String::new();
    for i in (0..400_000usize).step_by(10) {
        writeln!(out, "route replace {} via {}", slash24(i), gateway4(i + 1)).unwrap();
    }
    for i in (0..60_000usize).step_by(10) {
        writeln!(out, "route replace 2a00:{:x}:{:x}::/48 via {}", i >> 16, i & 0xffff, gateway6(i + 2)).unwrap();
    }
    for i in (1..400_000usize).step_by(13) {
        writeln!(out, "route del {}", slash24(i)).unwrap();
    }
    for j in (0..2_000usize).step_by(7) {
        writeln!(out, "route del {}.{}.0.0/16", 11 + j / 256, j % 256).unwrap();
    }
    for i in (5..60_000usize).step_by(11) {
        writeln!(out, "route del 2a00:{:x}:{:x}::/48", i >> 16, i & 0xffff).unwrap();
    }
    for m in (0..5_000usize).step_by(3) {
        writeln!(out, "route del 40.{}.{}.0/24 metric 10", m / 256, m % 256).unwrap();
    }
    out
}

#[test]
fn half_a_million_routes_added_changed_and_deleted_then_every_answer_equals_ip_route() {
    let _serial = serial();
    let Some(ns) = Netns::new("big") else { return };
    ns.interfaces();
    let mirror = ns.mirror(NetlinkConfig::new(RT_TABLE_MAIN));
    let (adds, changes) = (additions(), changes());

    let start = Instant::now();
    ns.batch(&adds);
    let added = start.elapsed();
    ns.batch(&changes);
    let changed = start.elapsed();
    ns.sync("main", 1, &[&mirror]);
    let followed = start.elapsed();
    let stats = mirror.stats();
    eprintln!(
        "{} commands: ip -batch took {:.2} s for the additions and {:.2} s for the changes; \
         the mirror was in step {:.2} s after the start ({} messages, {} batches, {} dumps, {} overruns)",
        adds.lines().count() + changes.lines().count(),
        added.as_secs_f64(),
        (changed - added).as_secs_f64(),
        followed.as_secs_f64(),
        stats.messages,
        stats.batches,
        stats.dumps,
        stats.overruns
    );
    let checked = check_table(&ns, &mirror, "main", RouteValue::Gateway, Some(Label::Number(0)));
    eprintln!(
        "followed: {checked} answers equal ip route show's ({} IPv4, {} IPv6 prefixes)",
        stats.routes4, stats.routes6
    );
    for line in mirror.journal().iter().filter(|line| line.contains("ENOBUFS") || line.starts_with("dump ")) {
        eprintln!("journal: {line}");
    }

    // The same table from a dump alone.
    let start = Instant::now();
    let dumped = ns.mirror(NetlinkConfig::new(RT_TABLE_MAIN));
    eprintln!("a second mirror dumped the table in {:.2} s", start.elapsed().as_secs_f64());
    let checked = check_table(&ns, &dumped, "main", RouteValue::Gateway, Some(Label::Number(0)));
    eprintln!("dumped: {checked} answers equal ip route show's");
    let start = Instant::now();
    drop(dumped.stop());
    drop(mirror.stop());
    assert!(start.elapsed() < Duration::from_secs(2), "stopping took {:?}", start.elapsed());
}

/// The answer of `mirror` for `text` (either family).
fn at(mirror: &Mirror, text: &str) -> Option<Label> {
    if text.contains(':') {
        answer(mirror, addr::<u128>(text))
    } else {
        answer(mirror, addr::<u32>(text))
    }
}

fn gateway(text: &str) -> Option<Label> {
    Some(Label::Addr(text.parse().unwrap()))
}

#[test]
fn the_rules_in_table_1000_multipath_metrics_rejects_and_no_gateway() {
    let _serial = serial();
    let Some(ns) = Netns::new("rules") else { return };
    let (d0, d1) = ns.interfaces();
    let by_gateway = ns.mirror(NetlinkConfig::new(1000));
    let mut config = NetlinkConfig::new(1000);
    config.value = RouteValue::Interface;
    config.reject = None;
    let by_interface = ns.mirror(config);
    let both = [&by_gateway, &by_interface];
    let interface = |index: u32| Some(Label::Number(u64::from(index)));

    ns.batch(
        "route add 10.9.0.0/16 via 10.255.0.9\n\
         route add 10.0.0.0/8 via 10.255.0.6 table 1000\n\
         route add 10.1.0.0/16 table 1000 nexthop via 10.255.0.9 dev d0 nexthop via 10.254.0.3 dev d1\n\
         route add 10.2.0.0/16 via 10.255.0.2 metric 10 table 1000\n\
         route add 10.2.0.0/16 via 10.255.0.3 metric 5 table 1000\n\
         route add 10.2.0.0/16 via 10.255.0.4 metric 20 table 1000\n\
         route add 10.3.0.0/16 via 10.255.0.5 tos 0x10 table 1000\n\
         route add blackhole 10.4.0.0/16 table 1000\n\
         route add unreachable 10.5.0.0/16 table 1000\n\
         route add prohibit 10.6.0.0/16 table 1000\n\
         route add throw 10.7.0.0/16 table 1000\n\
         route add 10.8.0.0/16 dev d1 table 1000\n\
         route add local 10.10.0.0/16 dev lo table 1000\n\
         route add 10.11.0.0/16 via inet6 2001:db8:ffff::7 dev d0 table 1000\n\
         nexthop add id 1 via 10.255.0.5 dev d0\n\
         route add 10.13.0.0/16 nhid 1 table 1000\n\
         route add 2001:db8:1::/48 via 2001:db8:ffff::9 dev d0 table 1000\n\
         route append 2001:db8:1::/48 via 2001:db8:ffff::3 dev d0 table 1000\n\
         route add 2001:db8:2::/48 table 1000 nexthop via 2001:db8:ffff::9 dev d0 nexthop via 2001:db8:fffe::5 dev d1\n\
         route add 2001:db8:3::/48 via 2001:db8:ffff::2 metric 100 table 1000\n\
         route add 2001:db8:3::/48 via 2001:db8:ffff::3 metric 50 table 1000\n\
         route add blackhole 2001:db8:4::/48 table 1000\n\
         route add 2001:db8:5::/48 dev d1 table 1000\n",
    );
    ns.sync("1000", 1, &both);
    let cases = [
        // A route of the main table is not mirrored: the covering one answers.
        ("10.9.0.1", gateway("10.255.0.6"), interface(d0)),
        // Multipath: the smallest hop.
        ("10.1.0.1", gateway("10.254.0.3"), interface(d0.min(d1))),
        // Several metrics: the lowest.
        ("10.2.0.1", gateway("10.255.0.3"), interface(d0)),
        // A TOS route is for packets with that TOS: the covering one answers.
        ("10.3.0.1", gateway("10.255.0.6"), interface(d0)),
        // Rejecting routes: 0 by default; left out (the covering route) with reject None.
        ("10.4.0.1", Some(Label::Number(0)), interface(d0)),
        ("10.5.0.1", Some(Label::Number(0)), interface(d0)),
        ("10.6.0.1", Some(Label::Number(0)), interface(d0)),
        ("10.7.0.1", Some(Label::Number(0)), interface(d0)),
        // No gateway: the interface.
        ("10.8.0.1", interface(d1), interface(d1)),
        // A local route is not mirrored.
        ("10.10.0.1", gateway("10.255.0.6"), interface(d0)),
        // An IPv6 gateway for an IPv4 prefix (RTA_VIA).
        ("10.11.0.1", gateway("2001:db8:ffff::7"), interface(d0)),
        ("10.12.0.1", gateway("10.255.0.6"), interface(d0)),
        // Through a nexthop object: the gateway the kernel spells out.
        ("10.13.0.1", gateway("10.255.0.5"), interface(d0)),
        ("11.0.0.1", None, None),
        // IPv6: an appended hop, multipath, metrics, blackhole, no gateway.
        ("2001:db8:1::1", gateway("2001:db8:ffff::3"), interface(d0)),
        ("2001:db8:2::1", gateway("2001:db8:fffe::5"), interface(d0.min(d1))),
        ("2001:db8:3::1", gateway("2001:db8:ffff::3"), interface(d0)),
        ("2001:db8:4::1", Some(Label::Number(0)), None),
        ("2001:db8:5::1", interface(d1), interface(d1)),
    ];
    for (address, gateway_value, interface_value) in cases {
        assert_eq!(at(&by_gateway, address), gateway_value, "{address} by gateway");
        assert_eq!(at(&by_interface, address), interface_value, "{address} by interface");
    }
    check_table(&ns, &by_gateway, "1000", RouteValue::Gateway, Some(Label::Number(0)));
    check_table(&ns, &by_interface, "1000", RouteValue::Interface, None);

    // Delete the best: the next shows; one hop of a multipath route goes;
    // a replace; the nexthop object changes (the kernel sends its routes
    // again, with NLM_F_REPLACE).
    ns.batch(
        "route del 10.2.0.0/16 via 10.255.0.3 metric 5 table 1000\n\
         route del 2001:db8:3::/48 via 2001:db8:ffff::3 metric 50 table 1000\n\
         route del 2001:db8:1::/48 via 2001:db8:ffff::3 dev d0 table 1000\n\
         route del 2001:db8:2::/48 via 2001:db8:fffe::5 dev d1 table 1000\n\
         route replace 10.1.0.0/16 via 10.255.0.8 table 1000\n\
         route del blackhole 10.4.0.0/16 table 1000\n\
         nexthop replace id 1 via 10.255.0.6 dev d0\n",
    );
    ns.sync("1000", 2, &both);
    for (address, value) in [
        ("10.2.0.1", gateway("10.255.0.2")),
        ("2001:db8:3::1", gateway("2001:db8:ffff::2")),
        ("2001:db8:1::1", gateway("2001:db8:ffff::9")),
        ("2001:db8:2::1", gateway("2001:db8:ffff::9")),
        ("10.1.0.1", gateway("10.255.0.8")),
        ("10.4.0.1", gateway("10.255.0.6")),
        ("10.13.0.1", gateway("10.255.0.6")),
    ] {
        assert_eq!(at(&by_gateway, address), value, "{address} after the deletes");
    }
    ns.batch("route del 10.2.0.0/16 via 10.255.0.2 metric 10 table 1000\n");
    ns.sync("1000", 3, &both);
    assert_eq!(at(&by_gateway, "10.2.0.1"), gateway("10.255.0.4"));
    check_table(&ns, &by_gateway, "1000", RouteValue::Gateway, Some(Label::Number(0)));
    check_table(&ns, &by_interface, "1000", RouteValue::Interface, None);

    // d1 goes down: the kernel flushes the IPv4 routes through it without
    // a word, and the mirror dumps again.
    let dumps = (by_gateway.stats().dumps, by_interface.stats().dumps);
    ns.ip("link set d1 down");
    // Each mirror dumps again on its own: wait for both.
    wait_for("a dump after the link went down", Duration::from_secs(60), || {
        by_gateway.stats().dumps > dumps.0 && by_interface.stats().dumps > dumps.1
    });
    ns.sync("1000", 4, &both);
    assert!(by_gateway.journal().iter().any(|line| line.contains("is down")), "{:#?}", by_gateway.journal());
    assert_eq!(at(&by_gateway, "10.8.0.1"), gateway("10.255.0.6"), "the route through d1 is gone");
    check_table(&ns, &by_gateway, "1000", RouteValue::Gateway, Some(Label::Number(0)));
    check_table(&ns, &by_interface, "1000", RouteValue::Interface, None);

    let start = Instant::now();
    drop(by_interface.stop());
    drop(by_gateway.stop());
    assert!(start.elapsed() < Duration::from_secs(1), "stopping took {:?}", start.elapsed());
}

#[test]
fn an_overrun_of_the_socket_is_reconciled_by_dumping_again() {
    let _serial = serial();
    let Some(ns) = Netns::new("overrun") else { return };
    ns.interfaces();
    let mut config = NetlinkConfig::new(RT_TABLE_MAIN);
    config.receive_buffer = 8192;
    let mirror = ns.mirror(config);
    let mut adds = String::new();
    for i in 0..50_000usize {
        writeln!(adds, "route add {} via {}", slash24(i), gateway4(i)).unwrap();
    }
    for i in 0..10_000usize {
        writeln!(adds, "route add 2a00:{:x}:{:x}::/48 via {}", i >> 16, i & 0xffff, gateway6(i)).unwrap();
    }
    ns.batch(&adds);
    ns.sync("main", 1, &[&mirror]);
    let stats = mirror.stats();
    let journal = mirror.journal();
    assert!(stats.overruns > 0, "no overrun with a {}-byte buffer: {stats:?}", 8192);
    assert!(journal.iter().any(|line| line.contains("ENOBUFS") && line.contains("again")), "{journal:#?}");
    eprintln!("{} overruns, {} dumps", stats.overruns, stats.dumps);
    check_table(&ns, &mirror, "main", RouteValue::Gateway, Some(Label::Number(0)));
}

/// After an overrun the mirror dumps once a read finds the socket empty.
/// A read that emptied it while ending a batch did not count: the mirror
/// then waited for the socket to become readable again, and if the kernel
/// had dropped every change after the overrun, nothing came, no dump ran,
/// and the mirror kept the table it had read (CI: a mirror whose sentinel
/// routes were dropped while it drained waited 300 s). Reading one message
/// a batch, every drain ends a batch; no route is added after the flood,
/// so only the dump can bring the last ones. Failed 5 runs of 5 before
/// the fix.
#[test]
fn after_an_overrun_the_mirror_dumps_with_no_change_to_wake_it() {
    let _serial = serial();
    let Some(ns) = Netns::new("quiet") else { return };
    ns.interfaces();
    let mut config = NetlinkConfig::new(RT_TABLE_MAIN);
    config.receive_buffer = 8192;
    config.batch_messages = 1;
    let mirror = ns.mirror(config);
    // Floods of 50,000 routes until one overruns the socket (the first
    // mostly does).
    for round in 0..8usize {
        let mut adds = String::new();
        for i in round * 50_000..(round + 1) * 50_000 {
            writeln!(adds, "route add {} via {}", slash24(i), gateway4(i)).unwrap();
        }
        ns.batch(&adds);
        if mirror.stats().overruns > 0 {
            break;
        }
    }
    let stats = mirror.stats();
    assert!(stats.overruns > 0, "no overrun with an 8 KiB buffer: {stats:?}");
    check_table(&ns, &mirror, "main", RouteValue::Gateway, Some(Label::Number(0)));
    eprintln!("{} overruns, {} dumps", stats.overruns, mirror.stats().dumps);
}

/// After an overrun the socket still holds the notifications queued before
/// it, and the kernel dropped the ones after: additions whose deletions
/// were dropped, among them. Read after the dump had begun, they were taken
/// as the dump's notes, whose word outranks the dump's, and a mirror could
/// keep routes the kernel had deleted (146 of them, once, in the
/// half-million test on a loaded machine). Additions and deletions in
/// rounds through a 32 KiB buffer, read in batches of 64 messages. It
/// found that a dump asked for on a full socket, answered with `ENOBUFS`,
/// was abandoned while the kernel kept it running; the next request (the
/// kernel runs one dump a socket) went unanswered, and the mirror waited
/// for its replies for good (in CI, 159 routes short; here the test failed
/// 4 runs of 4 before the fix).
#[test]
fn routes_added_then_deleted_across_an_overrun_are_not_kept() {
    let _serial = serial();
    let Some(ns) = Netns::new("undone") else { return };
    ns.interfaces();
    let mut config = NetlinkConfig::new(RT_TABLE_MAIN);
    config.receive_buffer = 32768;
    // Batches smaller than what the socket holds: the reads often stop
    // before it is empty, the moment after an overrun when the kernel
    // still drops every notification without saying so again.
    config.batch_messages = 64;
    let mirror = ns.mirror(config);
    let mut commands = String::new();
    for round in 0..8 {
        for i in (round * 20_000)..(round + 1) * 20_000 {
            writeln!(commands, "route add {} via {}", slash24(i), gateway4(i)).unwrap();
        }
        for i in (round * 20_000..(round + 1) * 20_000).filter(|i| i % 3 != 0) {
            writeln!(commands, "route del {}", slash24(i)).unwrap();
        }
    }
    ns.batch(&commands);
    ns.sync("main", 1, &[&mirror]);
    let stats = mirror.stats();
    assert!(stats.overruns > 0, "no overrun with a 32 KiB buffer: {stats:?}");
    eprintln!("{} overruns, {} dumps", stats.overruns, stats.dumps);
    check_table(&ns, &mirror, "main", RouteValue::Gateway, Some(Label::Number(0)));
}

/// The kernel sends `RTM_NEWLINK` before it flushes the routes through the
/// interface, and route dumps do not wait for the flush: a dump started at
/// once may still see them. With 200,000 routes through the interface the
/// flush takes long enough for that race to be lost without the mirror's
/// settling and confirming dumps.
#[test]
fn an_interface_going_down_under_200_000_routes_leaves_none_of_them() {
    let _serial = serial();
    let Some(ns) = Netns::new("flush") else { return };
    ns.interfaces();
    let mirror = ns.mirror(NetlinkConfig::new(RT_TABLE_MAIN));
    let mut adds = String::new();
    for i in 0..200_000usize {
        let via = if i % 100 == 0 { gateway4(i) } else { "10.254.0.2 dev d1".to_string() };
        writeln!(adds, "route add {} via {via}", slash24(i)).unwrap();
    }
    ns.batch(&adds);
    ns.sync("main", 1, &[&mirror]);
    check_table(&ns, &mirror, "main", RouteValue::Gateway, Some(Label::Number(0)));
    let dumps = mirror.stats().dumps;
    ns.ip("link set d1 down");
    wait_for("a dump after the link went down", Duration::from_secs(60), || mirror.stats().dumps > dumps);
    ns.sync("main", 2, &[&mirror]);
    let checked = check_table(&ns, &mirror, "main", RouteValue::Gateway, Some(Label::Number(0)));
    eprintln!("{checked} answers equal ip route show's; journal: {:#?}", mirror.journal());
}

/// The kernel dumps an IPv6 table in parts; when the tree changed between
/// two parts it walks again from the root and skips as many routes as it
/// has sent (`fib6_dump_table`), so the routes deleted before its place
/// make it skip as many that it never sent, and that no notification will
/// bring. In CI the half-million test ended 922 IPv6 routes short after a
/// dump during the deletions. Mirrors started one after another while
/// every other of 120,000 /48s is deleted: each first dump runs during the
/// deletions. Before the fix it failed 2 runs of 2, 218 and 5,599 routes
/// short.
#[test]
fn ipv6_dumps_during_deletions_miss_no_route() {
    let _serial = serial();
    let Some(ns) = Netns::new("skip6") else { return };
    ns.interfaces();
    let route = |i: usize| format!("2a00:{:x}:{:x}::/48", i >> 16, i & 0xffff);
    let mut adds = String::new();
    for i in 0..120_000usize {
        writeln!(adds, "route add {} via {}", route(i), gateway6(i)).unwrap();
    }
    ns.batch(&adds);
    // Every other route, in 60 batches from all over the table.
    let deletes: Vec<String> = (0..60)
        .map(|batch| (0..1_000usize).map(|j| format!("route del {}\n", route(2 * (j * 60 + batch)))).collect())
        .collect();
    let mirrors = std::thread::scope(|scope| {
        let deleting = scope.spawn(|| deletes.iter().for_each(|batch| ns.batch(batch)));
        let mut mirrors = Vec::new();
        while !deleting.is_finished() && mirrors.len() < 8 {
            let mut config = NetlinkConfig::new(RT_TABLE_MAIN);
            // Small reads: the dump comes in many parts.
            config.batch_messages = 64;
            mirrors.push(ns.mirror(config));
        }
        deleting.join().unwrap();
        mirrors
    });
    assert!(!mirrors.is_empty(), "the deletions ended before a mirror started");
    let all: Vec<&Mirror> = mirrors.iter().collect();
    ns.sync("main", 1, &all);
    for mirror in &mirrors {
        check_table(&ns, mirror, "main", RouteValue::Gateway, Some(Label::Number(0)));
    }
    let inexact: Vec<u64> = mirrors.iter().map(|mirror| mirror.stats().inexact_dumps).collect();
    eprintln!("{} mirrors started during the deletions; their inexact dumps: {inexact:?}", mirrors.len());
}
