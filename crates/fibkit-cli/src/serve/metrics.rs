//! `GET /metrics`: the server's counts in Prometheus' text exposition
//! format (version 0.0.4): routes per family, updates applied, each BGP
//! neighbour's session state and prefixes, lookups answered by form,
//! requests by status, connections, snapshots.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use fibkit_sources::bgp::SessionState;
use hyper::StatusCode;

use super::routes::Routes;

/// Counts kept as the server runs.
#[derive(Default)]
pub struct Counters {
    /// Addresses answered by `GET /lookup/ADDRESS`.
    pub lookups_single: AtomicU64,
    /// Addresses answered in text batches.
    pub lookups_text: AtomicU64,
    /// Addresses answered in binary batches.
    pub lookups_binary: AtomicU64,
    /// Answers by status class: 2xx, 4xx, 5xx.
    pub status: [AtomicU64; 3],
    /// Connections closed at once (too many open).
    pub connections_refused: AtomicU64,
    /// Connections that ended in an error (a timeout, a malformed request).
    pub connections_failed: AtomicU64,
    /// Snapshots written.
    pub snapshots: AtomicU64,
    /// Snapshots that failed (each logged).
    pub snapshot_failures: AtomicU64,
    /// The last snapshot's time to build and write, in microseconds.
    pub snapshot_micros: AtomicU64,
}

impl Counters {
    /// Counts an answer's status.
    pub fn count_status(&self, status: StatusCode) {
        let class = match status.as_u16() {
            200..=299 => 0,
            400..=499 => 1,
            _ => 2,
        };
        self.status[class].fetch_add(1, Ordering::Relaxed);
    }
}

/// Writes one metric's help, type and samples.
fn metric(out: &mut String, name: &str, kind: &str, help: &str, samples: &[(String, u64)]) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
    for (labels, value) in samples {
        let _ = writeln!(out, "{name}{labels} {value}");
    }
}

fn plain(value: u64) -> [(String, u64); 1] {
    [(String::new(), value)]
}

/// The exposition text.
pub fn render(routes: &Routes, counters: &Counters, connections: u64) -> String {
    let mut out = String::new();
    let [routes4, routes6] = routes.counts();
    let families =
        [("{family=\"ipv4\"}".to_string(), routes4 as u64), ("{family=\"ipv6\"}".to_string(), routes6 as u64)];
    metric(&mut out, "fibkit_routes", "gauge", "Routes in the FIB, by family.", &families);
    if let Some((applied, rejected)) = routes.updates() {
        metric(&mut out, "fibkit_updates_applied_total", "counter", "Route updates applied.", &plain(applied));
        let help = "Route updates the FIB rejected.";
        metric(&mut out, "fibkit_updates_rejected_total", "counter", help, &plain(rejected));
    }
    if routes.speaker().is_some() {
        let neighbours = routes.neighbours();
        let label = |address: &std::net::IpAddr, asn: u32| format!("{{neighbor=\"{address}\",as=\"{asn}\"}}");
        let states: Vec<(String, u64)> = neighbours
            .iter()
            .map(|neighbour| {
                let state = match neighbour.state {
                    SessionState::Idle => 0,
                    SessionState::OpenSent => 1,
                    SessionState::OpenConfirm => 2,
                    SessionState::Established => 3,
                };
                (label(&neighbour.address, neighbour.remote_as), state)
            })
            .collect();
        let help = "A BGP session's state: 0 idle, 1 open-sent, 2 open-confirm, 3 established.";
        metric(&mut out, "fibkit_bgp_session_state", "gauge", help, &states);
        let prefixes: Vec<(String, u64)> = neighbours
            .iter()
            .map(|neighbour| (label(&neighbour.address, neighbour.remote_as), neighbour.prefixes as u64))
            .collect();
        metric(&mut out, "fibkit_bgp_prefixes", "gauge", "Prefixes a neighbour announces.", &prefixes);
        let updates: Vec<(String, u64)> = neighbours
            .iter()
            .map(|neighbour| (label(&neighbour.address, neighbour.remote_as), neighbour.updates))
            .collect();
        metric(&mut out, "fibkit_bgp_updates_received_total", "counter", "UPDATE messages received.", &updates);
    }
    let lookups = [
        ("{form=\"single\"}".to_string(), counters.lookups_single.load(Ordering::Relaxed)),
        ("{form=\"text\"}".to_string(), counters.lookups_text.load(Ordering::Relaxed)),
        ("{form=\"binary\"}".to_string(), counters.lookups_binary.load(Ordering::Relaxed)),
    ];
    metric(&mut out, "fibkit_lookups_total", "counter", "Addresses answered, by request form.", &lookups);
    let statuses: Vec<(String, u64)> = ["2xx", "4xx", "5xx"]
        .iter()
        .zip(&counters.status)
        .map(|(class, count)| (format!("{{class=\"{class}\"}}"), count.load(Ordering::Relaxed)))
        .collect();
    metric(&mut out, "fibkit_http_responses_total", "counter", "HTTP answers, by status class.", &statuses);
    metric(&mut out, "fibkit_http_connections", "gauge", "HTTP connections open.", &plain(connections));
    let refused = plain(counters.connections_refused.load(Ordering::Relaxed));
    metric(
        &mut out,
        "fibkit_http_connections_refused_total",
        "counter",
        "Connections closed at once: too many open.",
        &refused,
    );
    let failed = plain(counters.connections_failed.load(Ordering::Relaxed));
    let help = "Connections ended by an error: a timeout, a malformed request.";
    metric(&mut out, "fibkit_http_connections_failed_total", "counter", help, &failed);
    let snapshots = plain(counters.snapshots.load(Ordering::Relaxed));
    metric(&mut out, "fibkit_snapshots_total", "counter", "Snapshots written.", &snapshots);
    let failures = plain(counters.snapshot_failures.load(Ordering::Relaxed));
    metric(&mut out, "fibkit_snapshot_failures_total", "counter", "Snapshots that could not be written.", &failures);
    let micros = plain(counters.snapshot_micros.load(Ordering::Relaxed));
    let help = "The last snapshot's time to build and write, in microseconds.";
    metric(&mut out, "fibkit_snapshot_last_duration_microseconds", "gauge", help, &micros);
    out
}
