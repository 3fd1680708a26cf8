//! fibkit peering with BIRD 2: a full table of each family announced,
//! changed while readers look up, and withdrawn when the session drops.
//! Every answer is checked against the table BIRD was given.

mod common;

use std::collections::HashSet;
use std::fmt::Write as _;
use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::data::shared_data;
use common::{check_answers, installed, speaker, wait_for, Bird, Keyed, Scratch, Table};
use fibkit::addr::IpPrefix;
use fibkit::load::{load_path, load_updates, LoadOptions, Update, ValueChoice};
use fibkit::nexthop::Label;
use fibkit::{Address, Prefix, NO_ROUTE};
use fibkit_sources::bgp::{NeighbourConfig, SessionState, Speaker};

/// The table a test announces: the shared data's full table when present,
/// else the repository's cut of it. Values are origin ASNs (a table of
/// next hops gets one made-up ASN per next hop).
fn table<A: Address>(shared: &str, cut: &str) -> Table<A> {
    let repository = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let path = shared_data(shared).unwrap_or_else(|| repository.join("data").join(cut));
    let loaded = load_path(&path, &LoadOptions::default()).unwrap();
    let rib = if A::FAMILY == fibkit::Family::Ipv4 { loaded.v4.iter().count() } else { loaded.v6.iter().count() };
    eprintln!("{}: {rib} {} prefixes", path.display(), A::FAMILY);
    let as_asn = |hop: u32| match loaded.next_hops.label(hop).unwrap() {
        Label::Number(asn) => Label::Number(asn),
        Label::Addr(_) => Label::Number(4_200_000_000 + u64::from(hop)),
    };
    let mut table = Table::new();
    let mut add = |prefix: Option<Prefix<A>>, hop| {
        table.insert(prefix.unwrap(), as_asn(hop));
    };
    for (prefix, hop) in loaded.v4.iter() {
        add(fibkit::addr::IpPrefix::V4(prefix).of::<A>(), hop);
    }
    for (prefix, hop) in loaded.v6.iter() {
        add(fibkit::addr::IpPrefix::V6(prefix).of::<A>(), hop);
    }
    table
}

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

/// The table after churn: every 20th prefix gone, every 20th (from the
/// 7th) with another origin.
fn churned<A: Address>(table: &Table<A>) -> Table<A> {
    let mut next = Table::new();
    for (at, (&prefix, &label)) in table.iter().enumerate() {
        match at % 20 {
            0 => {}
            7 => {
                next.insert(prefix, Label::Number(label.as_number() % 4_000_000_000 + 1));
            }
            _ => {
                next.insert(prefix, label);
            }
        }
    }
    next
}

/// Applies an update of the LINX trace to `table`: a next hop becomes
/// the made-up origin AS of its address's number.
fn apply_trace_update(table: &mut Table<u32>, update: &Update) {
    match *update {
        Update::Announce { prefix: IpPrefix::V4(prefix), value: Label::Addr(IpAddr::V4(next_hop)) } => {
            table.insert(prefix, Label::Number(u64::from(u32::from(next_hop))));
        }
        Update::Withdraw { prefix: IpPrefix::V4(prefix) } => {
            table.remove(&prefix);
        }
        ref other => panic!("not an IPv4 update of the trace: {other:?}"),
    }
}

/// The values any state between `before` and `after` may give `addr`:
/// those of every prefix covering it in either, or no route.
fn possible<A: Address>(addr: A, before: &Table<A>, after: &Table<A>) -> HashSet<Option<Label>> {
    let mut values = HashSet::from([None]);
    for len in 0..=A::BITS {
        let prefix = Prefix::truncating(addr, len);
        values.extend([before.get(&prefix), after.get(&prefix)].into_iter().flatten().map(|label| Some(*label)));
    }
    values
}

/// Looks up `samples` until `stop`, failing on an answer that no state of
/// the table gave; returns the number of lookups.
fn read_throughout<A: Keyed>(speaker: &Speaker, samples: &[(A, HashSet<Option<Label>>)], stop: &AtomicBool) -> u64 {
    let reader = A::reader(speaker);
    let mut lookups = 0;
    while !stop.load(Ordering::Relaxed) {
        for (addr, allowed) in samples {
            let hop = reader.lookup(*addr);
            let label = (hop != NO_ROUTE).then(|| speaker.label::<A>(hop)).flatten();
            assert!(allowed.contains(&label), "{addr:?} answered {label:?}, which no state of the table gave");
            lookups += 1;
        }
    }
    lookups
}

fn samples<A: Keyed>(before: &Table<A>, after: &Table<A>, count: usize) -> Vec<(A, HashSet<Option<Label>>)> {
    let mut random = fibkit::random::XorShift64Pair::new(7);
    // Half at the starts of prefixes (where routes change), half random.
    let starts = before.keys().step_by((before.len() / (count / 2)).max(1)).map(|prefix| prefix.addr());
    let randoms = (0..count / 2).map(|_| A::from_random(&mut random));
    starts.chain(randoms).map(|addr| (addr, possible(addr, before, after))).collect()
}

/// Waits until the speaker has applied everything (its counts match and
/// nothing changed for half a second).
fn settle(speaker: &Speaker, routes4: usize, routes6: usize) {
    let mut last = (u64::MAX, Instant::now());
    wait_for("the FIB to settle", Duration::from_secs(600), || {
        let stats = speaker.stats();
        if stats.updates_applied != last.0 {
            last = (stats.updates_applied, Instant::now());
        }
        stats.routes4 == routes4 && stats.routes6 == routes6 && last.1.elapsed() > Duration::from_millis(500)
    });
}

#[test]
fn a_full_table_from_bird_then_churn_then_the_session_drops() {
    let Some(bird) = installed("bird", "bird2") else { return };
    let table4: Table<u32> = table("routeviews-2014-05-13.ipasn.gz", "routeviews-2014-05-13-cut.ipasn");
    let table6: Table<u128> = table("ipdb-asn-2026-06/asn-ipv6.csv.gz", "linx-p69-2014-12-25-cut.rib6");
    let bird_address = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
    let speaker = speaker(65000, ValueChoice::OriginAs, vec![NeighbourConfig::new(bird_address, 65001)]);
    let port = speaker.local_addrs()[0].port();
    let scratch = Scratch::new("bird-full");

    // 1. The full tables.
    let bird = Bird::start(&bird, &scratch, &bird_config(port, &table4, &table6));
    wait_for("the session", Duration::from_secs(120), || speaker.neighbours()[0].state == SessionState::Established);
    let established = Instant::now();
    settle(&speaker, table4.len(), table6.len());
    eprintln!(
        "converged: {} IPv4 and {} IPv6 routes within {:.1} s of the session coming up (a test, not a benchmark)",
        table4.len(),
        table6.len(),
        established.elapsed().as_secs_f64() - 0.5
    );
    let checked = check_answers(&speaker, &table4, 1_000_000) + check_answers(&speaker, &table6, 1_000_000);
    eprintln!("full tables: {checked} answers equal BIRD's table");

    // 2. Churn, then the LINX trace in four parts (BIRD sends what each
    // reconfiguration changed), with readers looking up throughout.
    let mut stages = vec![("churn", churned(&table4), churned(&table6))];
    if let Some(trace) = shared_data("linx-p52-2014-12-17.updates.gz") {
        let trace = load_updates(&trace, &LoadOptions::default()).unwrap();
        let mut current = stages[0].1.clone();
        for (part, updates) in trace.updates.chunks(trace.updates.len().div_ceil(4)).enumerate() {
            for timed in updates {
                apply_trace_update(&mut current, &timed.update);
            }
            let name = ["LINX trace, part 1", "LINX trace, part 2", "LINX trace, part 3", "LINX trace, part 4"][part];
            stages.push((name, current.clone(), stages[0].2.clone()));
        }
    }
    let (mut before4, mut before6) = (table4.clone(), table6.clone());
    for (stage, next4, next6) in stages {
        let samples4 = samples(&before4, &next4, 20_000);
        let samples6 = samples(&before6, &next6, 20_000);
        let stop = AtomicBool::new(false);
        let lookups = std::thread::scope(|scope| {
            let readers4 = scope.spawn(|| read_throughout(&speaker, &samples4, &stop));
            let readers6 = scope.spawn(|| read_throughout(&speaker, &samples6, &stop));
            bird.reconfigure(&bird_config(port, &next4, &next6));
            settle(&speaker, next4.len(), next6.len());
            stop.store(true, Ordering::Relaxed);
            readers4.join().unwrap() + readers6.join().unwrap()
        });
        let checked = check_answers(&speaker, &next4, 200_000) + check_answers(&speaker, &next6, 200_000);
        eprintln!(
            "after {stage}: {checked} answers equal BIRD's table; {lookups} lookups during it, each from some state"
        );
        (before4, before6) = (next4, next6);
    }

    // 3. The session drops: every route goes, in one batch.
    let batches = speaker.stats().batches;
    let answer = bird.birdc("disable fib");
    assert!(answer.contains("disabled"), "{answer}");
    wait_for("the session to drop", Duration::from_secs(30), || speaker.neighbours()[0].state == SessionState::Idle);
    settle(&speaker, 0, 0);
    assert!(speaker.stats().batches <= batches + 2, "the withdrawal took more than one batch a family");
    check_answers(&speaker, &Table::<u32>::new(), 100_000);
    check_answers(&speaker, &Table::<u128>::new(), 100_000);
    let journal = speaker.journal().join("\n");
    assert!(journal.contains("neighbour 127.0.0.2 (AS 65001): session down: received NOTIFICATION 6/2"), "{journal}");
}
