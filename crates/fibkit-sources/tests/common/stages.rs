//! The stages of a full-table test against a routing daemon: the tables
//! it announces, the changes made to them (churn, then the LINX update
//! trace), readers racing each change, and the checks once the speaker
//! has settled. The daemon-specific part is how a stage reaches the
//! daemon: a closure of the test.

use std::collections::HashSet;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fibkit::addr::IpPrefix;
use fibkit::load::{load_path, load_updates, LoadOptions, Update};
use fibkit::nexthop::Label;
use fibkit::{Address, Prefix, NO_ROUTE};
use fibkit_sources::bgp::Speaker;

use super::data::shared_data;
use super::{check_answers, wait_for, Keyed, Table};

/// The table a test announces: the shared data's full table when present,
/// else the repository's cut of it. Values are origin ASNs (a table of
/// next hops gets one made-up ASN per next hop).
pub fn table<A: Address>(shared: &str, cut: &str) -> Table<A> {
    let repository = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let path = shared_data(shared).unwrap_or_else(|| repository.join("data").join(cut));
    let loaded = load_path(&path, &LoadOptions::default()).unwrap();
    let rib = if A::FAMILY == fibkit::Family::Ipv4 { loaded.v4.iter().count() } else { loaded.v6.iter().count() };
    eprintln!("{}: {rib} {} prefixes", path.display(), A::FAMILY);
    let as_asn = |hop: u32| match loaded.next_hops.label(hop).unwrap() {
        Label::Number(asn) => Label::Number(asn),
        Label::Addr(_) | Label::Record(_) => Label::Number(4_200_000_000 + u64::from(hop)),
    };
    let mut table = Table::new();
    let mut add = |prefix: Option<Prefix<A>>, hop| {
        table.insert(prefix.unwrap(), as_asn(hop));
    };
    for (prefix, hop) in loaded.v4.iter() {
        add(IpPrefix::V4(prefix).of::<A>(), hop);
    }
    for (prefix, hop) in loaded.v6.iter() {
        add(IpPrefix::V6(prefix).of::<A>(), hop);
    }
    table
}

/// The two full tables of the tests: the 2014 IPv4 table and the 2026
/// IPv6 table (or the repository's cuts).
pub fn full_tables() -> (Table<u32>, Table<u128>) {
    (
        table("routeviews-2014-05-13.ipasn.gz", "routeviews-2014-05-13-cut.ipasn"),
        table("ipdb-asn-2026-06/asn-ipv6.csv.gz", "linx-p69-2014-12-25-cut.rib6"),
    )
}

/// The table after churn: every 20th prefix gone, every 20th (from the
/// 7th) with another origin.
pub fn churned<A: Address>(table: &Table<A>) -> Table<A> {
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
pub fn apply_trace_update(table: &mut Table<u32>, update: &Update) {
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

/// A stage of the changes: its name and the tables after it.
pub struct Stage {
    pub name: &'static str,
    pub v4: Table<u32>,
    pub v6: Table<u128>,
}

/// The changes after the full tables: churn of both, then (when the shared
/// data has it) the LINX trace applied to the IPv4 table in four parts.
pub fn stages(table4: &Table<u32>, table6: &Table<u128>) -> Vec<Stage> {
    let mut stages = vec![Stage { name: "churn", v4: churned(table4), v6: churned(table6) }];
    if let Some(trace) = shared_data("linx-p52-2014-12-17.updates.gz") {
        let trace = load_updates(&trace, &LoadOptions::default()).unwrap();
        let mut current = stages[0].v4.clone();
        let names = ["LINX trace, part 1", "LINX trace, part 2", "LINX trace, part 3", "LINX trace, part 4"];
        for (part, updates) in trace.updates.chunks(trace.updates.len().div_ceil(4)).enumerate() {
            for timed in updates {
                apply_trace_update(&mut current, &timed.update);
            }
            stages.push(Stage { name: names[part], v4: current.clone(), v6: stages[0].v6.clone() });
        }
    }
    stages
}

/// The values any state between `before` and `after` may give `addr`:
/// those of every prefix covering it in either, or no route.
pub fn possible<A: Address>(addr: A, before: &Table<A>, after: &Table<A>) -> HashSet<Option<Label>> {
    let mut values = HashSet::from([None]);
    for len in 0..=A::BITS {
        let prefix = Prefix::truncating(addr, len);
        values.extend([before.get(&prefix), after.get(&prefix)].into_iter().flatten().map(|label| Some(*label)));
    }
    values
}

/// Looks up `samples` until `stop`, failing on an answer that no state of
/// the table gave; returns the number of lookups.
pub fn read_throughout<A: Keyed>(speaker: &Speaker, samples: &[(A, HashSet<Option<Label>>)], stop: &AtomicBool) -> u64 {
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

/// `count` addresses to look up while `before` becomes `after`, each with
/// the answers it may get: half at the starts of prefixes (where routes
/// change), half random.
pub fn samples<A: Keyed>(before: &Table<A>, after: &Table<A>, count: usize) -> Vec<(A, HashSet<Option<Label>>)> {
    let mut random = fibkit::random::XorShift64Pair::new(7);
    let starts = before.keys().step_by((before.len() / (count / 2)).max(1)).map(|prefix| prefix.addr());
    let randoms = (0..count / 2).map(|_| A::from_random(&mut random));
    starts.chain(randoms).map(|addr| (addr, possible(addr, before, after))).collect()
}

/// Waits until the speaker has applied everything (its counts match and
/// nothing changed for half a second).
pub fn settle(speaker: &Speaker, routes4: usize, routes6: usize) {
    let mut last = (u64::MAX, Instant::now());
    wait_for("the FIB to settle", Duration::from_secs(600), || {
        let stats = speaker.stats();
        if stats.updates_applied != last.0 {
            last = (stats.updates_applied, Instant::now());
        }
        stats.routes4 == routes4 && stats.routes6 == routes6 && last.1.elapsed() > Duration::from_millis(500)
    });
}

/// Waits for the full tables from a session that came up at `established`,
/// says how long they took, and checks every answer (1,000,000 random
/// addresses a family and both ends of every range).
pub fn converge(speaker: &Speaker, daemon: &str, established: Instant, table4: &Table<u32>, table6: &Table<u128>) {
    settle(speaker, table4.len(), table6.len());
    eprintln!(
        "converged: {} IPv4 and {} IPv6 routes within {:.1} s of the session coming up (a test, not a benchmark)",
        table4.len(),
        table6.len(),
        established.elapsed().as_secs_f64() - 0.5
    );
    let checked = check_answers(speaker, table4, 1_000_000) + check_answers(speaker, table6, 1_000_000);
    eprintln!("full tables: {checked} answers equal {daemon}'s table");
}

/// Takes the speaker from the full tables through `stages`: `apply` hands
/// a stage to the daemon (given the tables before and after it) while
/// readers look up throughout, each answer from some state of the table;
/// once settled, every answer equals the stage's tables.
pub fn run_stages(
    speaker: &Speaker,
    daemon: &str,
    full: (Table<u32>, Table<u128>),
    stages: Vec<Stage>,
    mut apply: impl FnMut(&Stage, &Table<u32>, &Table<u128>),
) {
    let (mut before4, mut before6) = full;
    for stage in stages {
        let samples4 = samples(&before4, &stage.v4, 20_000);
        let samples6 = samples(&before6, &stage.v6, 20_000);
        let stop = AtomicBool::new(false);
        let lookups = std::thread::scope(|scope| {
            let readers4 = scope.spawn(|| read_throughout(speaker, &samples4, &stop));
            let readers6 = scope.spawn(|| read_throughout(speaker, &samples6, &stop));
            apply(&stage, &before4, &before6);
            settle(speaker, stage.v4.len(), stage.v6.len());
            stop.store(true, Ordering::Relaxed);
            readers4.join().unwrap() + readers6.join().unwrap()
        });
        let checked = check_answers(speaker, &stage.v4, 200_000) + check_answers(speaker, &stage.v6, 200_000);
        eprintln!(
            "after {}: {checked} answers equal {daemon}'s table; {lookups} lookups during it, each from some state",
            stage.name
        );
        (before4, before6) = (stage.v4, stage.v6);
    }
}

/// After the session went down (the speaker's `batches` count before it
/// was `batches`): every route gone in at most one batch a family, and the
/// journal has `line`.
pub fn all_withdrawn(speaker: &Speaker, batches: u64, line: &str) {
    settle(speaker, 0, 0);
    assert!(speaker.stats().batches <= batches + 2, "the withdrawal took more than one batch a family");
    check_answers(speaker, &Table::<u32>::new(), 100_000);
    check_answers(speaker, &Table::<u128>::new(), 100_000);
    let journal = speaker.journal().join("\n");
    assert!(journal.contains(line), "{journal}");
}
