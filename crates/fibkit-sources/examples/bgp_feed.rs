//! How fast a BGP session feeds the FIB: a sender on 127.0.0.1 announces
//! the 2014 table (next hops: the origin AS modulo 239, as the benchmarks
//! map it), then sends the LINX update trace, one UPDATE per update,
//! `--repeat` times, as fast as TCP takes it (or `--rate` UPDATEs a
//! second, each sent when due), while `--readers` threads
//! (default 1) look up random addresses throughout. With `--neighbours
//! N`, N - 1 more senders (from 127.0.0.2, 127.0.0.3, ...) announce the
//! same table with other next hops before the trace, each held apart.
//!
//! ```text
//! cargo run --release -p fibkit-sources --example bgp_feed -- [--repeat N] [--rate N] [--readers N] [--engine NAME] [--neighbours N]
//! ```
//!
//! Prints the table's convergence (first UPDATE sent to last route in
//! the FIB), the UPDATEs applied a second, the time from an UPDATE's
//! receipt to the publication of its change (percentiles of the last
//! 65,536), the reader's lookups, the resident memory per route, and per
//! route held for each more neighbour.

#[path = "../../fibkit/tests/common/data.rs"]
mod data;

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fibkit::load::{load_path, load_updates, LoadOptions, Update, ValueChoice};
use fibkit::nexthop::{Label, Mapping, NextHopTable};
use fibkit::random::XorShift32;
use fibkit::router::{Router, Window};
use fibkit::{Family, Prefix4, Rib};
use fibkit_sources::bgp::wire::{self, Message, MessageReader, Open, Received};
use fibkit_sources::bgp::{BgpConfig, NeighbourConfig, Speaker};

const SENDER_AS: u32 = 65001;

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut repeat, mut readers, mut engine) = (20usize, 1usize, fibkit::registry::DEFAULT_IPV4.to_string());
    let mut rate: Option<f64> = None;
    let mut neighbours = 1u8;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--repeat" => repeat = args.next().and_then(|n| n.parse().ok()).expect("--repeat N"),
            "--engine" => engine = args.next().expect("--engine NAME"),
            "--readers" => readers = args.next().and_then(|n| n.parse().ok()).expect("--readers N"),
            "--rate" => rate = Some(args.next().and_then(|n| n.parse().ok()).expect("--rate UPDATES_PER_SECOND")),
            "--neighbours" => {
                neighbours = args.next().and_then(|n| n.parse().ok()).filter(|&n| n >= 1).expect("--neighbours 1..=255")
            }
            other => panic!("unknown argument {other}"),
        }
    }
    let (Some(table_path), Some(trace_path)) =
        (data::shared_data("routeviews-2014-05-13.ipasn.gz"), data::shared_data("linx-p52-2014-12-17.updates.gz"))
    else {
        return;
    };
    let table = load_path(&table_path, &LoadOptions::default()).unwrap();
    let trace = load_updates(&trace_path, &LoadOptions::default()).unwrap();
    let routes: Vec<(Prefix4, Ipv4Addr)> = table
        .v4
        .iter()
        .map(|(prefix, hop)| {
            let asn = table.next_hops.label(hop).unwrap().as_number();
            (prefix, Ipv4Addr::new(195, 66, 226, (asn % 239) as u8 + 1))
        })
        .collect();

    let rss_before = resident_bytes();
    let mut config = BgpConfig::new(65000, Ipv4Addr::new(10, 255, 0, 1));
    config.listen = vec![SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0)];
    config.value = ValueChoice::NextHop;
    config.neighbours = (1..=neighbours)
        .map(|host| NeighbourConfig::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, host)), SENDER_AS))
        .collect();
    let table4 = || NextHopTable::new(Mapping::Distinct);
    let router4 = Router::new(&engine, Rib::new(), table4(), Window::Count(1)).unwrap();
    let router6 = Router::new(fibkit::registry::DEFAULT_IPV6, Rib::new(), table4(), Window::Count(1)).unwrap();
    let speaker = Speaker::start(config, router4, router6).unwrap();
    let mut sender = TcpStream::connect(speaker.local_addrs()[0]).unwrap();
    handshake(&mut sender);
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| text.lines().find(|line| line.starts_with("model name")).map(str::to_string))
        .unwrap_or_default();
    println!("{cpu}; engine {engine}; {} routes, trace of {} updates x {repeat}", routes.len(), trace.updates.len());

    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let reader_threads: Vec<_> = (0..readers)
            .map(|seed| {
                let speaker = &speaker;
                let stop = &stop;
                scope.spawn(move || {
                    let reader = speaker.reader4();
                    let mut random = XorShift32::new(seed as u64 + 1);
                    let mut lookups = 0u64;
                    let mut sum = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..4096 {
                            sum += u64::from(reader.lookup(random.next()));
                        }
                        lookups += 4096;
                    }
                    (lookups, sum)
                })
            })
            .collect();

        // The table, packed as a daemon packs it: one UPDATE per next hop
        // and as many prefixes as fit.
        let bytes = table_updates(&routes);
        let start = Instant::now();
        sender.write_all(&bytes).unwrap();
        wait(|| speaker.stats().routes4 == routes.len());
        let converged = start.elapsed();
        let rss_after = resident_bytes();
        println!(
            "table: {} routes in the FIB {:.2} s after the first UPDATE was sent ({} UPDATEs, {:.1} MiB)",
            routes.len(),
            converged.as_secs_f64(),
            speaker.neighbours()[0].updates,
            bytes.len() as f64 / (1 << 20) as f64
        );
        if let (Some(before), Some(after)) = (rss_before, rss_after) {
            println!(
                "memory: {:.0} bytes of resident memory a route (Loc-RIB, router RIB, FIB and next hops together)",
                (after - before) as f64 / routes.len() as f64
            );
        }

        // The other neighbours: the same prefixes, other next hops.
        let mut others = Vec::new();
        for host in 2..=neighbours {
            let before = resident_bytes();
            let mut other = connect_from(Ipv4Addr::new(127, 0, 0, host), speaker.local_addrs()[0]);
            handshake(&mut other);
            let shifted: Vec<(Prefix4, Ipv4Addr)> =
                routes.iter().map(|&(prefix, hop)| (prefix, Ipv4Addr::new(195, 66, 227, hop.octets()[3]))).collect();
            other.write_all(&table_updates(&shifted)).unwrap();
            let index = usize::from(host - 1);
            wait(|| speaker.neighbours()[index].prefixes == routes.len());
            // The writer's last batch and its bookkeeping.
            std::thread::sleep(Duration::from_millis(500));
            if let (Some(before), Some(after)) = (before, resident_bytes()) {
                println!(
                    "memory: neighbour {host} holds the {} routes too: {:.0} more bytes of resident memory a route",
                    routes.len(),
                    (after - before) as f64 / routes.len() as f64
                );
            }
            others.push(other);
        }

        // The trace, one UPDATE per update.
        let messages: Vec<Vec<u8>> = trace.updates.iter().map(|timed| trace_update(&timed.update)).collect();
        let one_pass: usize = messages.iter().map(Vec::len).sum();
        let (updates_before, applied_before) = (speaker.neighbours()[0].updates, speaker.stats().updates_applied);
        let expected = updates_before + (trace.updates.len() * repeat) as u64;
        speaker.reset_latency();
        let start = Instant::now();
        let sending = scope.spawn(move || {
            match rate {
                // As fast as TCP takes them.
                None => sender.write_all(&messages.concat().repeat(repeat)).unwrap(),
                // One at a time, each when it is due.
                Some(rate) => {
                    for (at, message) in messages.iter().cycle().take(messages.len() * repeat).enumerate() {
                        let due = start + Duration::from_secs_f64(at as f64 / rate);
                        // Yielding, so that a waiting sender leaves the CPU to
                        // the session and the speaker.
                        while Instant::now() < due {
                            std::thread::yield_now();
                        }
                        sender.write_all(message).unwrap();
                    }
                }
            }
            sender
        });
        wait(|| speaker.neighbours()[0].updates >= expected);
        let elapsed = start.elapsed();
        // Kept open: a closed connection would end the session.
        let _sender = sending.join().unwrap();
        let messages = expected - updates_before;
        let applied = speaker.stats().updates_applied - applied_before;
        println!(
            "trace: {messages} UPDATEs ({:.1} MiB a pass) in {:.3} s: {:.0} UPDATEs a second, {applied} FIB changes applied",
            one_pass as f64 / (1 << 20) as f64,
            elapsed.as_secs_f64(),
            messages as f64 / elapsed.as_secs_f64()
        );
        let latency = speaker.latency(&[50.0, 99.0, 99.9, 100.0]).unwrap();
        println!(
            "receipt to publication, last {} UPDATEs: median {:?}, p99 {:?}, p99.9 {:?}, max {:?}",
            messages.min(65_536),
            latency[0],
            latency[1],
            latency[2],
            latency[3]
        );
        stop.store(true, Ordering::Relaxed);
        let lookups: u64 = reader_threads.into_iter().map(|reader| reader.join().unwrap().0).sum();
        println!("readers: {readers}, {lookups} lookups throughout");
        for line in speaker.journal() {
            println!("log: {line}");
        }
    });
    speaker.stop();
}

fn wait(mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(600), "not done within 10 minutes");
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// The sender's side of the OPEN exchange.
fn handshake(stream: &mut TcpStream) {
    let open = Open {
        asn: SENDER_AS,
        hold_time: 0,
        router_id: Ipv4Addr::new(10, 0, 0, 9),
        families: Some(vec![Family::Ipv4]),
        four_octet_as: true,
        route_refresh: false,
    };
    stream.write_all(&open.encode()).unwrap();
    stream.write_all(&wire::keepalive()).unwrap();
    let mut reader = MessageReader::default();
    let mut keepalive = false;
    while !keepalive {
        match reader.next(stream).unwrap() {
            Received::Message(Message::Keepalive) => keepalive = true,
            Received::Message(_) | Received::Nothing => {}
            other => panic!("the speaker refused the session: {other:?}"),
        }
    }
}

/// ORIGIN IGP, AS_PATH of the sender's AS, NEXT_HOP.
fn attributes(next_hop: Ipv4Addr) -> Vec<u8> {
    let mut out = vec![0x40, 1, 1, 0, 0x40, 2, 6, 2, 1];
    out.extend(SENDER_AS.to_be_bytes());
    out.extend([0x40, 3, 4]);
    out.extend(next_hop.octets());
    out
}

fn nlri(prefix: Prefix4) -> Vec<u8> {
    let len = prefix.prefix_len();
    let mut out = vec![len];
    out.extend(&prefix.addr().to_be_bytes()[..usize::from(len).div_ceil(8)]);
    out
}

fn table_updates(routes: &[(Prefix4, Ipv4Addr)]) -> Vec<u8> {
    let mut by_next_hop: std::collections::BTreeMap<Ipv4Addr, Vec<Prefix4>> = Default::default();
    for &(prefix, next_hop) in routes {
        by_next_hop.entry(next_hop).or_default().push(prefix);
    }
    let mut out = Vec::new();
    for (next_hop, prefixes) in by_next_hop {
        let attributes = attributes(next_hop);
        let room = wire::MAX_MESSAGE_LEN - wire::HEADER_LEN - 4 - attributes.len();
        let mut packed = Vec::new();
        for prefix in prefixes {
            let entry = nlri(prefix);
            if packed.len() + entry.len() > room {
                out.extend(wire::update(&[], &attributes, &packed));
                packed.clear();
            }
            packed.extend(entry);
        }
        out.extend(wire::update(&[], &attributes, &packed));
    }
    out
}

fn trace_update(change: &Update) -> Vec<u8> {
    match *change {
        Update::Announce { prefix: fibkit::addr::IpPrefix::V4(prefix), value: Label::Addr(IpAddr::V4(next_hop)) } => {
            wire::update(&[], &attributes(next_hop), &nlri(prefix))
        }
        Update::Withdraw { prefix: fibkit::addr::IpPrefix::V4(prefix) } => wire::update(&nlri(prefix), &[], &[]),
        ref other => panic!("not an IPv4 update with a next hop: {other:?}"),
    }
}

/// A connection to `to` from the local address `from` (a neighbour's
/// own address on the loopback network).
fn connect_from(from: Ipv4Addr, to: SocketAddr) -> TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.bind(&SocketAddr::new(IpAddr::V4(from), 0).into()).unwrap();
    socket.connect(&to.into()).unwrap();
    socket.into()
}

/// The process's resident memory.
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kib| kib * 1024)
}
