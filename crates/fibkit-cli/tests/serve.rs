//! `fibkit serve` answering as the library does: over a table file (both
//! families; text, binary and single-address requests, sent by curl) and
//! with a BIRD neighbour whose routes change while snapshots are written;
//! `/metrics` scraped; `--check`.

// Both test supports include the shared data's finder.
#![allow(clippy::duplicate_mod)]

mod common;
#[path = "../../fibkit-sources/tests/common/mod.rs"]
mod sources;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::server::{curl_output, have_curl, Served};
use fibkit::addr::{Address, IpPrefix};
use fibkit::compiled::CompiledTable;
use fibkit::load::{load_path, LoadOptions, RouteTable};
use fibkit::nexthop::Label;
use fibkit::random::XorShift64Pair;
use fibkit::{Prefix, NO_ROUTE};

/// A folder of the test's own.
fn folder(name: &str) -> PathBuf {
    let folder = std::env::temp_dir().join(format!("fibkit-serve-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).unwrap();
    folder
}

fn repository(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data").join(file)
}

/// The repository's IPv4 cut (values ASNs) and IPv6 cut (values next-hop
/// addresses) as one `PREFIX VALUE` file in `folder`; the table loaded.
fn both_families(folder: &Path) -> (PathBuf, RouteTable) {
    let mut text = String::new();
    for file in ["routeviews-2014-05-13-cut.ipasn", "linx-p69-2014-12-25-cut.rib6"] {
        let table = load_path(&repository(file), &LoadOptions::default()).unwrap();
        for (prefix, hop) in table.v4.iter().map(|(p, h)| (IpPrefix::V4(p), h)) {
            writeln!(text, "{prefix} {}", table.next_hops.label(hop).unwrap()).unwrap();
        }
        for (prefix, hop) in table.v6.iter().map(|(p, h)| (IpPrefix::V6(p), h)) {
            writeln!(text, "{prefix} {}", table.next_hops.label(hop).unwrap()).unwrap();
        }
    }
    let path = folder.join("both.txt");
    std::fs::write(&path, text).unwrap();
    let table = load_path(&path, &LoadOptions::default()).unwrap();
    (path, table)
}

/// Addresses to ask about: both ends of every range of the RIB, and
/// `randoms` random ones (IPv6 in 2000::/3).
fn probes<A: Address>(rib: &fibkit::Rib<A>, randoms: usize) -> Vec<A> {
    let mut addrs = Vec::new();
    rib.for_each_range(A::ZERO, A::MAX, |range| addrs.extend([range.first, range.last]));
    let mut random = XorShift64Pair::new(0x5eed);
    for _ in 0..randoms {
        let mut first = A::BITS == 128;
        addrs.push(A::from_words(|| {
            let word = random.next() as u32;
            if std::mem::take(&mut first) {
                word >> 3 | 1 << 29
            } else {
                word
            }
        }));
    }
    addrs
}

/// The value text the table gives `addr` (empty: no route).
fn expected<A: Address>(table: &RouteTable, rib: &fibkit::Rib<A>, addr: A) -> String {
    match rib.lookup(addr) {
        NO_ROUTE => String::new(),
        hop => table.next_hops.label(hop).unwrap().to_string(),
    }
}

/// A value as the server's JSON writes it.
fn json_value(label: Option<Label>) -> serde_json::Value {
    match label {
        Some(Label::Number(number)) => number.into(),
        Some(label @ (Label::Addr(_) | Label::Record(_))) => label.to_string().into(),
        None => serde_json::Value::Null,
    }
}

/// The values `/values/FAMILY` lists, as text.
fn values(served: &Served, family: &str) -> Vec<String> {
    let answer = served.curl(&[&served.url(&format!("/values/{family}"))]);
    let list: Vec<serde_json::Value> = serde_json::from_slice(&answer.body).unwrap();
    list.iter().map(|value| value.as_str().map_or_else(|| value.to_string(), String::from)).collect()
}

/// The binary batch's answers for `addrs`, as value text.
fn binary<A: Address>(served: &Served, addrs: &[A]) -> Vec<String> {
    let family = if A::BITS == 32 { "ipv4" } else { "ipv6" };
    let mut body = Vec::new();
    for addr in addrs {
        let bytes = addr.to_u128().to_be_bytes();
        body.extend_from_slice(&bytes[16 - usize::from(A::BITS / 8)..]);
    }
    let path = served.folder.join(format!("keys.{family}"));
    std::fs::write(&path, body).unwrap();
    let data = format!("@{}", path.display());
    let answer = served.curl(&[
        "-H",
        "Content-Type: application/octet-stream",
        "--data-binary",
        &data,
        &served.url(&format!("/lookup/{family}")),
    ]);
    assert_eq!(answer.status, 200, "{}", answer.text());
    let values = values(served, family);
    answer
        .body
        .chunks_exact(4)
        .map(|hop| match u32::from_le_bytes(hop.try_into().unwrap()) {
            0 => String::new(),
            hop => values[hop as usize - 1].clone(),
        })
        .collect()
}

#[test]
fn answers_over_http_equal_the_librarys_for_a_table_file() {
    let folder = folder("file");
    let (table_path, table) = both_families(&folder);
    let config =
        format!("[http]\nlisten = [\"127.0.0.1:0\"]\n[table]\npath = {:?}\n", table_path.display().to_string());
    let served = Served::start(&folder, &config);
    if !have_curl() {
        return;
    }
    let (addrs4, addrs6) = (probes(&table.v4, 20_000), probes(&table.v6, 20_000));

    // The text batch: both families in one body, in order.
    let mut body = String::new();
    for addr in &addrs4 {
        writeln!(body, "{}", addr.display()).unwrap();
    }
    for addr in &addrs6 {
        writeln!(body, "{}", addr.display()).unwrap();
    }
    std::fs::write(folder.join("addresses"), &body).unwrap();
    let data = format!("@{}", folder.join("addresses").display());
    let answer = served.curl(&["--data-binary", &data, &served.url("/lookup")]);
    assert_eq!(answer.status, 200, "{}", answer.text());
    let text = answer.text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), addrs4.len() + addrs6.len());
    let wanted = addrs4.iter().map(|&addr| (addr.display(), expected(&table, &table.v4, addr)));
    let wanted = wanted.chain(addrs6.iter().map(|&addr| (addr.display(), expected(&table, &table.v6, addr))));
    for (line, (address, value)) in lines.iter().zip(wanted) {
        assert_eq!(*line, format!("{address}\t{value}"));
    }

    // The binary batches, a family each.
    for (addr, got) in addrs4.iter().zip(binary(&served, &addrs4)) {
        assert_eq!(got, expected(&table, &table.v4, *addr), "{}", addr.display());
    }
    for (addr, got) in addrs6.iter().zip(binary(&served, &addrs6)) {
        assert_eq!(got, expected(&table, &table.v6, *addr), "{}", addr.display());
    }

    // Single addresses, with their prefixes (curl keeps one connection).
    let matched = |found: Option<(String, u32)>| match found {
        Some((prefix, hop)) => (Some(prefix), table.next_hops.label(hop)),
        None => (None, None),
    };
    let picked4 = addrs4.iter().step_by(addrs4.len() / 300).map(|&addr| {
        (addr.display(), matched(table.v4.lookup_prefix(addr).map(|(prefix, hop)| (prefix.to_string(), hop))))
    });
    let picked6 = addrs6.iter().step_by(addrs6.len() / 300).map(|&addr| {
        (addr.display(), matched(table.v6.lookup_prefix(addr).map(|(prefix, hop)| (prefix.to_string(), hop))))
    });
    let picked: Vec<_> = picked4.chain(picked6).collect();
    let urls: String = picked
        .iter()
        .map(|(address, _)| format!("url = \"{}\"\n", served.url(&format!("/lookup/{address}"))))
        .collect();
    std::fs::write(folder.join("urls"), urls).unwrap();
    let printed = curl_output(&["-K", &folder.join("urls").display().to_string()]);
    let answers: Vec<serde_json::Value> = printed.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(answers.len(), picked.len());
    for ((address, (prefix, value)), got) in picked.iter().zip(&answers) {
        assert_eq!(got["address"], serde_json::json!(address));
        assert_eq!(got["prefix"], serde_json::json!(prefix), "{address}");
        assert_eq!(got["value"], json_value(*value), "{address}");
    }
    eprintln!(
        "{} + {} addresses in text and binary batches and {} single ones: every answer equals the library's",
        addrs4.len(),
        addrs6.len(),
        picked.len()
    );

    // /metrics counts what was asked.
    let metrics = served.curl(&[&served.url("/metrics")]).text();
    let samples: HashMap<&str, &str> =
        metrics.lines().filter(|line| !line.starts_with('#')).map(|line| line.rsplit_once(' ').unwrap()).collect();
    assert_eq!(samples["fibkit_routes{family=\"ipv4\"}"], table.v4.len().to_string());
    assert_eq!(samples["fibkit_routes{family=\"ipv6\"}"], table.v6.len().to_string());
    let text_count = addrs4.len() + addrs6.len();
    assert_eq!(samples["fibkit_lookups_total{form=\"text\"}"], text_count.to_string());
    assert_eq!(samples["fibkit_lookups_total{form=\"binary\"}"], text_count.to_string());
    assert_eq!(samples["fibkit_lookups_total{form=\"single\"}"], picked.len().to_string());
    for name in samples.keys().map(|sample| sample.split('{').next().unwrap()) {
        assert!(metrics.contains(&format!("# TYPE {name} ")), "{name} has no TYPE line");
    }
    assert!(served.stop(), "fibkit serve did not stop cleanly on SIGTERM");
}

#[test]
fn check_names_the_line_of_a_bad_configuration() {
    let folder = folder("check");
    std::fs::write(folder.join("good.toml"), "[http]\nlisten = [\"127.0.0.1:0\"]\n").unwrap();
    let good = common::fibkit(&["serve", "--check", &folder.join("good.toml").display().to_string()]);
    assert!(good.status.success(), "{}", String::from_utf8_lossy(&good.stderr));
    assert!(String::from_utf8_lossy(&good.stdout).contains("HTTP on 127.0.0.1:0"));
    std::fs::write(folder.join("bad.toml"), "[http]\nlisten = [\"127.0.0.1:0\"]\n\n[snapshot]\npath = \"x\"\n")
        .unwrap();
    let bad = common::fibkit(&["serve", "--check", &folder.join("bad.toml").display().to_string()]);
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success());
    assert!(stderr.contains("bad.toml line 4") && stderr.contains("every_seconds"), "{stderr}");
}

/// BIRD's static routes: `table`'s prefixes with their origin ASNs, and
/// `changed` of them with origin `origin` (all in one UPDATE: one path).
fn bird_config(port: u16, table: &RouteTable, changed: &[Prefix<u32>], origin: Option<u32>) -> String {
    let mut config = "router id 10.0.0.2;\nprotocol device {}\nprotocol static s4 {\n  ipv4;\n".to_string();
    for (prefix, hop) in table.v4.iter() {
        let asn = match (origin, changed.contains(&prefix)) {
            (Some(origin), true) => origin.to_string(),
            _ => table.next_hops.label(hop).unwrap().to_string(),
        };
        writeln!(config, "  route {prefix} blackhole {{ bgp_path.prepend({asn}); }};").unwrap();
    }
    write!(
        config,
        "}}\nprotocol bgp fib {{\n  local 127.0.0.2 port {port} as 65001;\n  neighbor 127.0.0.1 port {port} as 65000;\n  \
         multihop;\n  strict bind on;\n  connect delay time 1;\n  connect retry time 1;\n  \
         ipv4 {{ import none; export all; }};\n}}\n"
    )
    .unwrap();
    config
}

/// The state (0: the table; k: origin 4200000000 + k) that `answers`
/// (one for each changed prefix, as value text) give every changed prefix,
/// if they all agree.
fn state_of(changed: &[Prefix<u32>], table: &RouteTable, answers: &[String]) -> Option<u32> {
    let states: Vec<u32> = changed
        .iter()
        .zip(answers)
        .map(|(prefix, answer)| match answer.parse::<u64>() {
            Ok(asn) if asn > 4_200_000_000 => (asn - 4_200_000_000) as u32,
            _ if *answer == expected(table, &table.v4, prefix.addr()) => 0,
            _ => u32::MAX,
        })
        .collect();
    (states.iter().all(|&state| state == states[0]) && states[0] != u32::MAX).then_some(states[0])
}

/// The state a snapshot file holds, and how many of the table's prefixes
/// it matches at their first address as the table does (all of them: it
/// holds every route).
fn snapshot_state(path: &Path, changed: &[Prefix<u32>], table: &RouteTable) -> (Option<u32>, usize) {
    let compiled = CompiledTable::open(path).unwrap_or_else(|error| panic!("a snapshot does not open: {error}"));
    let v4 = compiled.v4.as_ref().unwrap();
    let answers: Vec<String> = changed
        .iter()
        .map(|prefix| {
            compiled.values.label(v4.lookup(prefix.addr())).map(|label| label.to_string()).unwrap_or_default()
        })
        .collect();
    let state = state_of(changed, table, &answers);
    let mut routes = 0;
    for (prefix, _) in table.v4.iter() {
        let matched = table.v4.lookup_prefix(prefix.addr()).map(|(found, _)| found);
        routes += usize::from(v4.route(v4.fib().lookup(prefix.addr())).map(|(found, _)| found) == matched);
    }
    (state, routes)
}

#[test]
fn with_a_bird_neighbour_answers_and_snapshots_follow_its_routes() {
    let Some(bird) = sources::installed("bird", "bird2") else { return };
    if !have_curl() {
        return;
    }
    let folder = folder("bird");
    let table = load_path(&repository("routeviews-2014-05-13-cut.ipasn"), &LoadOptions::default()).unwrap();
    // Every 75th prefix whose first address it answers itself (no more
    // specific route starts there).
    let changed: Vec<Prefix<u32>> = table
        .v4
        .iter()
        .map(|(prefix, _)| prefix)
        .filter(|prefix| table.v4.lookup_prefix(prefix.addr()).is_some_and(|(found, _)| found == *prefix))
        .step_by(75)
        .collect();
    let port = sources::free_port();
    let config = format!(
        "[http]\nlisten = [\"127.0.0.1:0\"]\n[bgp]\nlocal_as = 65000\nrouter_id = \"10.255.0.1\"\n\
         listen = [\"127.0.0.1:{port}\"]\nneighbors = [\"127.0.0.2,as=65001\"]\nvalue = \"origin-as\"\n\
         [snapshot]\npath = \"routes.fib\"\nevery_seconds = 1\n"
    );
    let served = Served::start(&folder, &config);
    let scratch = sources::Scratch::new("serve-bird");
    let bird = sources::Bird::start(&bird, &scratch, &bird_config(port, &table, &changed, None));
    let snapshot = folder.join("routes.fib");
    let mut first_open: Option<(CompiledTable, u32)> = None;
    let mut seen = std::collections::BTreeSet::new();
    for state in 0..4u32 {
        if state > 0 {
            bird.reconfigure(&bird_config(port, &table, &changed, Some(4_200_000_000 + state)));
        }
        // Until the server answers state `state`, check every snapshot
        // that appears: whole, and one published state.
        let addrs: Vec<u32> = changed.iter().map(|prefix| prefix.addr()).collect();
        sources::wait_for("the server to answer the new state", Duration::from_secs(60), || {
            if snapshot.exists() {
                let (held, routes) = snapshot_state(&snapshot, &changed, &table);
                if routes == table.v4.len() {
                    let held = held.expect("a snapshot mixes two states");
                    seen.insert(held);
                    if first_open.is_none() {
                        first_open = Some((CompiledTable::open(&snapshot).unwrap(), held));
                    }
                }
            }
            let metrics = served.curl(&[&served.url("/metrics")]).text();
            let routes = format!("fibkit_routes{{family=\"ipv4\"}} {}\n", table.v4.len());
            metrics.contains(&routes) && state_of(&changed, &table, &binary(&served, &addrs)) == Some(state)
        });
        // Every answer equals BIRD's table in this state.
        let addrs = probes(&table.v4, 5_000);
        for (addr, got) in addrs.iter().zip(binary(&served, &addrs)) {
            let want = match table.v4.lookup_prefix(*addr) {
                Some((prefix, _)) if state > 0 && changed.contains(&prefix) => (4_200_000_000 + state).to_string(),
                Some((_, hop)) => table.next_hops.label(hop).unwrap().to_string(),
                None => String::new(),
            };
            assert_eq!(got, want, "state {state}: {}", addr.display());
        }
        std::thread::sleep(Duration::from_millis(1500));
    }
    // The last snapshot holds the last state, for `fibkit lookup` too; the
    // first one opened still answers its own state.
    let (held, routes) = snapshot_state(&snapshot, &changed, &table);
    assert_eq!((held, routes), (Some(3), table.v4.len()));
    let probe = changed[0].addr();
    let lookup = common::fibkit(&["lookup", &snapshot.display().to_string(), &probe.display(), "--prefix"]);
    let printed = String::from_utf8_lossy(&lookup.stdout).into_owned();
    assert_eq!(printed, format!("{}\t4200000003\t{}\n", probe.display(), changed[0]));
    let (old, old_state) = first_open.expect("no snapshot was ever whole");
    let v4 = old.v4.as_ref().unwrap();
    let answers: Vec<String> = changed
        .iter()
        .map(|prefix| old.values.label(v4.lookup(prefix.addr())).map(|label| label.to_string()).unwrap_or_default())
        .collect();
    assert_eq!(state_of(&changed, &table, &answers), Some(old_state));
    eprintln!("snapshots seen holding states {seen:?}; the first one mapped still answers state {old_state}");
    let metrics = served.curl(&[&served.url("/metrics")]).text();
    assert!(metrics.contains("fibkit_bgp_session_state{neighbor=\"127.0.0.2\",as=\"65001\"} 3"), "{metrics}");
    assert!(metrics.contains(&format!("fibkit_bgp_prefixes{{neighbor=\"127.0.0.2\",as=\"65001\"}} {}", table.v4.len())));
    drop(bird);
    assert!(served.stop());
}

#[test]
fn sighup_reloads_neighbours_and_bounds_without_dropping_the_others_sessions() {
    let Some(bird) = sources::installed("bird", "bird2") else { return };
    if !have_curl() {
        return;
    }
    let folder = folder("reload");
    let table = load_path(&repository("routeviews-2014-05-13-cut.ipasn"), &LoadOptions::default()).unwrap();
    let port = sources::free_port();
    let config = |neighbors: &str, max_body: u64, engine: &str| {
        format!(
            "[http]\nlisten = [\"127.0.0.1:0\"]\nmax_body_bytes = {max_body}\n[engines]\nipv4 = \"{engine}\"\n\
             [bgp]\nlocal_as = 65000\nrouter_id = \"10.255.0.1\"\nlisten = [\"127.0.0.1:{port}\"]\n\
             neighbors = [{neighbors}]\nvalue = \"origin-as\"\n"
        )
    };
    let mut served = Served::start(&folder, &config("\"127.0.0.2,as=65001\"", 1 << 20, "d18r"));
    let scratch = sources::Scratch::new("serve-reload");
    let _bird = sources::Bird::start(&bird, &scratch, &bird_config(port, &table, &[], None));
    let metric = |served: &Served, sample: &str| served.curl(&[&served.url("/metrics")]).text().contains(sample);
    let up = "fibkit_bgp_session_state{neighbor=\"127.0.0.2\",as=\"65001\"} 3";
    sources::wait_for("BIRD's session", Duration::from_secs(60), || metric(&served, up));

    // A neighbour added and a smaller body bound: applied; BIRD's session
    // goes on.
    let path = folder.join("serve.toml");
    std::fs::write(&path, config("\"127.0.0.2,as=65001\", \"127.0.0.9,as=65009\"", 64, "d18r")).unwrap();
    served.signal(libc::SIGHUP);
    served.wait_for_log("SIGHUP: reloaded", Duration::from_secs(10));
    assert!(metric(&served, "fibkit_bgp_session_state{neighbor=\"127.0.0.9\",as=\"65009\"} 0"));
    assert!(metric(&served, up));
    let body = "8.8.8.8\n".repeat(10);
    let answer = served.curl(&["--data-binary", &body, &served.url("/lookup")]);
    assert_eq!(answer.status, 413, "the new bound of 64 bytes: {}", answer.text());

    // The neighbour removed again; then an engine changed: refused, and
    // the server goes on as it was.
    std::fs::write(&path, config("\"127.0.0.2,as=65001\"", 64, "d18r")).unwrap();
    served.signal(libc::SIGHUP);
    served.wait_for_log("removed [127.0.0.9]", Duration::from_secs(10));
    std::fs::write(&path, config("\"127.0.0.2,as=65001\"", 64, "poptrie18")).unwrap();
    served.signal(libc::SIGHUP);
    let refused = served.wait_for_log("not reloaded", Duration::from_secs(10));
    assert!(refused.contains("[table] or [engines] changed"), "{refused}");
    assert!(metric(&served, up));
    assert!(!metric(&served, "127.0.0.9"));
    let log = served.log().join("\n");
    assert!(!log.contains("neighbour 127.0.0.2 (AS 65001): session down"), "BIRD's session was dropped:\n{log}");
    assert_eq!(served.log().iter().filter(|line| line.contains("127.0.0.2 (AS 65001): established")).count(), 1);
    assert!(served.stop());
}

/// The single answer of `address` as (prefix, value) text.
fn single(served: &Served, address: &str) -> (String, String) {
    let answer = served.curl(&[&served.url(&format!("/lookup/{address}"))]);
    let json: serde_json::Value = serde_json::from_slice(&answer.body).unwrap();
    let text = |value: &serde_json::Value| value.as_str().map_or_else(|| value.to_string(), String::from);
    (text(&json["prefix"]), text(&json["value"]))
}

#[cfg(target_os = "linux")]
#[test]
fn with_a_kernel_table_answers_follow_ip_route() {
    use fibkit_sources::netlink::RouteValue;

    let Some(netns) = sources::kernel::Netns::new("serve") else { return };
    if !have_curl() {
        return;
    }
    netns.interfaces();
    netns.batch(
        "route add 10.1.0.0/16 via 10.255.1.1 dev d0 table 100\n\
         route add 10.1.2.0/24 via 10.254.1.2 dev d1 table 100\n\
         route add blackhole 10.9.0.0/16 table 100\n\
         route add 2001:db8:1::/48 via 2001:db8:ffff::1:1 dev d0 table 100\n",
    );
    let folder = folder("kernel");
    let config = "[http]\nlisten = [\"127.0.0.1:0\"]\n[kernel]\ntable = 100\nvalue = \"gateway\"\n";
    let served = Served::start_via(&folder, config, &["ip", "netns", "exec", &netns.name]);
    let text = |prefix: &str, value: &str| (prefix.to_string(), value.to_string());
    assert_eq!(single(&served, "10.1.2.3"), text("10.1.2.0/24", "10.254.1.2"));
    assert_eq!(single(&served, "10.1.3.1"), text("10.1.0.0/16", "10.255.1.1"));
    assert_eq!(single(&served, "10.9.0.1"), text("10.9.0.0/16", "0"));
    assert_eq!(single(&served, "2001:db8:1::1"), text("2001:db8:1::/48", "2001:db8:ffff::1:1"));
    assert_eq!(single(&served, "10.2.0.1"), text("null", "null"));

    // Routes change under it: its answers follow, in both forms.
    netns.batch("route del 10.1.2.0/24 table 100\nroute add 10.3.0.0/16 via 10.254.1.3 dev d1 table 100\n");
    sources::wait_for("the change", Duration::from_secs(30), || single(&served, "10.1.2.3").0 == "10.1.0.0/16");
    let kernel = netns.kernel_table::<u32>("100", RouteValue::Gateway, Some(Label::Number(0)));
    let mut rib = fibkit::Rib::new();
    let mut values = Vec::new();
    for (prefix, label) in &kernel {
        values.push(label.to_string());
        rib.insert(*prefix, values.len() as u32);
    }
    let addrs = probes(&rib, 2_000);
    for (addr, got) in addrs.iter().zip(binary(&served, &addrs)) {
        let want = match rib.lookup(*addr) {
            NO_ROUTE => String::new(),
            hop => values[hop as usize - 1].clone(),
        };
        assert_eq!(got, want, "{}", addr.display());
    }
    let metrics = served.curl(&[&served.url("/metrics")]).text();
    assert!(metrics.contains(&format!("fibkit_routes{{family=\"ipv4\"}} {}", kernel.len())), "{metrics}");
    assert!(served.stop());
}
