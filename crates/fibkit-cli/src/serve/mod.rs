//! `fibkit serve`: answers lookups over HTTP from a live table (a table
//! file's routes, BGP neighbours' after), for processes that do not link
//! the library, and writes snapshots of it as compiled FIB files.
//!
//! ```text
//!  serve.toml --config::read--> Checked
//!                                  |
//!   routes::Routes (FIBs, shadow) <-- BGP speaker (threads of its own)
//!        ^            ^
//!   http::accept  snapshot::Snapshots
//!   (tokio tasks)  (a thread: compile, write, rename)
//! ```
//!
//! Signals: SIGTERM or SIGINT stop it cleanly (no new connection; those
//! open get up to 5 s to finish; the BGP sessions end with a Cease);
//! SIGHUP reads the configuration again ([`reload`]).

mod answer;
mod config;
mod http;
mod metrics;
mod request;
mod routes;
mod snapshot;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;

use config::Checked;
use http::{Limits, Server};
use routes::Routes;
use snapshot::{Policy, Snapshots};

/// Arguments of `fibkit serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The configuration file (TOML; docs/serve.md has every key).
    config: PathBuf,
    /// Check the configuration, say what it would serve, and exit.
    #[arg(long)]
    check: bool,
    /// Stop after this many seconds (default: at SIGTERM or SIGINT).
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=31_536_000))]
    seconds: Option<u64>,
}

/// Runs `fibkit serve`.
///
/// # Errors
/// A configuration that does not hold (named with its line), a table file
/// that cannot be loaded, an address that cannot be bound.
pub fn run(args: &ServeArgs) -> Result<ExitCode> {
    let checked = config::read(&args.config)?;
    if args.check {
        println!("{}: {}", args.config.display(), summary(&checked));
        return Ok(ExitCode::SUCCESS);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(serve(args, checked))
}

/// What a configuration serves, in a line.
fn summary(checked: &Checked) -> String {
    let config = &checked.config;
    let mut parts =
        vec![format!("HTTP on {}", config.http.listen.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))];
    if let Some(table) = &checked.table {
        parts.push(format!("the routes of {}", table.display()));
    }
    if let Some(bgp) = &checked.bgp {
        parts.push(format!("{} BGP neighbours (AS {})", bgp.neighbours.len(), bgp.local_as));
    }
    parts.push(format!("FIBs {} and {}", config.engines.ipv4.get_ref(), config.engines.ipv6.get_ref()));
    if let Some(snapshot) = &checked.snapshot {
        parts.push(format!(
            "snapshots to {} every {} s",
            snapshot.display(),
            config.snapshot.as_ref().map_or(0, |s| *s.every_seconds.get_ref())
        ));
    }
    parts.join("; ")
}

/// The snapshot policy of a configuration.
fn policy(checked: &Checked) -> Option<Policy> {
    let snapshot = checked.config.snapshot.as_ref()?;
    Some(Policy {
        path: checked.snapshot.clone()?,
        every: Duration::from_secs(*snapshot.every_seconds.get_ref()),
        engines: [checked.config.engines.ipv4.get_ref().clone(), checked.config.engines.ipv6.get_ref().clone()],
    })
}

/// The HTTP listeners, each with the switch that stops it.
type Listeners = HashMap<SocketAddr, watch::Sender<bool>>;

/// Binds the addresses of `listen` not bound yet and starts accepting on
/// them; stops those no longer in it.
async fn listen(server: &Arc<Server>, listeners: &mut Listeners, listen: &[SocketAddr]) -> Result<()> {
    for address in listen {
        if listeners.contains_key(address) {
            continue;
        }
        let listener = TcpListener::bind(address).await.with_context(|| format!("HTTP: cannot listen on {address}"))?;
        let local = listener.local_addr()?;
        eprintln!("fibkit serve: HTTP: listening on {local}");
        let (stop, stopped) = watch::channel(false);
        tokio::spawn(http::accept(Arc::clone(server), listener, stopped));
        listeners.insert(*address, stop);
    }
    listeners.retain(|address, stop| {
        let keep = listen.contains(address);
        if !keep {
            eprintln!("fibkit serve: HTTP: no longer listening on {address}");
            let _ = stop.send(true);
        }
        keep
    });
    Ok(())
}

async fn serve(args: &ServeArgs, checked: Checked) -> Result<ExitCode> {
    let started = Instant::now();
    let routes = tokio::task::block_in_place(|| Routes::start(&checked))?;
    let [routes4, routes6] = routes.counts();
    eprintln!(
        "fibkit serve: {} ({routes4} IPv4 and {routes6} IPv6 routes) ready in {:.2} s",
        routes.name,
        started.elapsed().as_secs_f64()
    );
    let server = Arc::new(Server {
        routes: RwLock::new(Arc::new(routes)),
        limits: RwLock::new(Limits::from(&checked.config.http)),
        counters: metrics::Counters::default(),
        open: Default::default(),
    });
    let mut listeners = Listeners::new();
    listen(&server, &mut listeners, &checked.config.http.listen).await?;
    let mut snapshots = policy(&checked).map(|policy| Snapshots::start(Arc::clone(&server), policy));
    let mut running = checked;
    let (mut terminate, mut interrupt, mut hangup) =
        (signal(SignalKind::terminate())?, signal(SignalKind::interrupt())?, signal(SignalKind::hangup())?);
    let deadline = args.seconds.map(|seconds| tokio::time::Instant::now() + Duration::from_secs(seconds));
    loop {
        let until = deadline.unwrap_or_else(|| tokio::time::Instant::now() + Duration::from_secs(3600));
        tokio::select! {
            _ = terminate.recv() => { eprintln!("fibkit serve: SIGTERM: stopping"); break; }
            _ = interrupt.recv() => { eprintln!("fibkit serve: SIGINT: stopping"); break; }
            _ = hangup.recv() => {
                match reload(args, &server, &mut listeners, &mut snapshots, &running).await {
                    Ok(checked) => running = checked,
                    Err(error) => eprintln!("fibkit serve: SIGHUP: the configuration is not reloaded: {error:#}"),
                }
            }
            () = tokio::time::sleep_until(until) => if deadline.is_some() { break },
        }
    }
    for stop in listeners.values() {
        let _ = stop.send(true);
    }
    let closing = Instant::now();
    while server.open.load(Ordering::Relaxed) > 0 && closing.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop(snapshots);
    let routes = Arc::clone(&server.routes.read().expect("routes lock"));
    let [routes4, routes6] = routes.counts();
    eprintln!(
        "fibkit serve: stopped; {routes4} IPv4 and {routes6} IPv6 routes; {} lookups answered",
        server.counters.lookups_single.load(Ordering::Relaxed)
            + server.counters.lookups_text.load(Ordering::Relaxed)
            + server.counters.lookups_binary.load(Ordering::Relaxed)
    );
    drop(routes);
    // The BGP speaker ends its sessions as the last handle on the routes
    // drops (in-flight requests hold none once the listeners stopped).
    tokio::task::block_in_place(|| drop(server));
    Ok(ExitCode::SUCCESS)
}

/// SIGHUP: reads the configuration again and applies what changed: the
/// HTTP addresses and bounds, the snapshot policy, and the BGP neighbours
/// (one added starts, one removed or changed ends with a Cease and its
/// routes go; the others' sessions go on). A change of the table file, the
/// engines or the speaker's own settings (local AS, identifier, listen
/// addresses, hold time, value) needs a restart: the reload is refused,
/// naming it, and the server goes on as it was.
///
/// # Errors
/// The new configuration does not hold, or asks for a restart.
async fn reload(
    args: &ServeArgs,
    server: &Arc<Server>,
    listeners: &mut Listeners,
    snapshots: &mut Option<Snapshots>,
    running: &Checked,
) -> Result<Checked> {
    let checked = config::read(&args.config)?;
    let (old, new) = (&running.config, &checked.config);
    if old.table != new.table || old.engines != new.engines {
        anyhow::bail!("[table] or [engines] changed: restart fibkit serve to serve them");
    }
    let routes = Arc::clone(&server.routes.read().expect("routes lock"));
    match (routes.speaker(), &checked.bgp) {
        (Some(speaker), Some(bgp)) if old.bgp != new.bgp => {
            let changed = speaker.reconfigure(bgp).map_err(|problem| anyhow::anyhow!("[bgp]: {problem}"))?;
            eprintln!("fibkit serve: SIGHUP: BGP neighbours added {:?}, removed {:?}", changed.added, changed.removed);
        }
        (None, Some(_)) | (Some(_), None) => anyhow::bail!("[bgp] added or removed: restart fibkit serve to apply it"),
        _ => {}
    }
    listen(server, listeners, &new.http.listen).await?;
    *server.limits.write().expect("limits lock") = Limits::from(&new.http);
    let policy = policy(&checked);
    if snapshots.as_ref().map(|running| &running.policy) != policy.as_ref() {
        *snapshots = None;
        *snapshots = policy.map(|policy| Snapshots::start(Arc::clone(server), policy));
    }
    eprintln!("fibkit serve: SIGHUP: reloaded {}: {}", args.config.display(), summary(&checked));
    Ok(checked)
}
