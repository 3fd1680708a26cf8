//! `fibkit follow`: peer with BGP neighbours (receive-only), keep a live
//! FIB of each family, and print every change of it as it is published.
//!
//! Standard output gets one line a change, `+ PREFIX VALUE` for a route
//! installed or replaced and `- PREFIX` for a route withdrawn; standard
//! error gets the sessions' log (each line names its neighbour) and, at
//! the end, a summary. It runs until `--seconds` have passed, or until
//! SIGINT or SIGTERM.

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use fibkit::load::{Update, ValueChoice};
use fibkit::nexthop::{Mapping, NextHopTable};
use fibkit::router::{Router, Window};
use fibkit::Rib;
use fibkit_sources::bgp::{BgpConfig, NeighbourConfig, Speaker};

use crate::registered;

/// Arguments of `fibkit follow`.
#[derive(Args, Debug)]
pub struct FollowArgs {
    /// The local AS.
    #[arg(long, value_name = "ASN")]
    local_as: u32,
    /// The BGP identifier (an IPv4 address).
    #[arg(long, value_name = "ADDRESS")]
    router_id: Ipv4Addr,
    /// Accept neighbours' connections on ADDRESS:PORT (repeat for several).
    #[arg(long, value_name = "ADDRESS:PORT")]
    listen: Vec<SocketAddr>,
    /// A neighbour: `ADDRESS,as=ASN`, then optionally `,connect=PORT` (also
    /// connect to it), `,max-prefixes=N` (end its session past N prefixes).
    /// Repeat for several.
    #[arg(long = "neighbor", value_name = "SPEC", required = true)]
    neighbours: Vec<NeighbourConfig>,
    /// What a route's value is.
    #[arg(long, default_value = "next-hop", value_name = "next-hop|origin-as")]
    value: ValueChoice,
    /// The hold time offered, in seconds (0, or 3 to 65535).
    #[arg(long, default_value_t = 90)]
    hold_time: u16,
    /// The IPv4 engine.
    #[arg(long, default_value = fibkit::registry::DEFAULT_IPV4)]
    engine: String,
    /// The IPv6 engine.
    #[arg(long, default_value = fibkit::registry::DEFAULT_IPV6)]
    engine6: String,
    /// Stop after this many seconds (default: at SIGINT or SIGTERM).
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=31_536_000))]
    seconds: Option<u64>,
    /// Print no changes (the log and the summary only).
    #[arg(long)]
    quiet: bool,
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// Runs `fibkit follow`.
///
/// # Errors
/// An engine unknown for its family, a listen address that cannot be
/// bound, a neighbour configured twice, or standard output closed.
pub fn run(args: &FollowArgs) -> Result<ExitCode> {
    if args.hold_time == 1 || args.hold_time == 2 {
        bail!("--hold-time {}: 0, or 3 to 65535", args.hold_time);
    }
    if args.listen.is_empty() && args.neighbours.iter().all(|neighbour| neighbour.connect_port.is_none()) {
        bail!("no --listen address and no neighbour to connect to: no session could start");
    }
    let mut config = BgpConfig::new(args.local_as, args.router_id);
    config.listen.clone_from(&args.listen);
    config.hold_time = args.hold_time;
    config.value = args.value;
    config.neighbours.clone_from(&args.neighbours);
    config.echo_log = true;
    let table = || NextHopTable::new(Mapping::Distinct);
    let engine4 = registered::resolve::<u32>(&args.engine)?.name;
    let engine6 = registered::resolve::<u128>(&args.engine6)?.name;
    let router4 = Router::new(engine4, Rib::new(), table(), Window::Count(1))?;
    let router6 = Router::new(engine6, Rib::new(), table(), Window::Count(1))?;
    let (changes, received) = mpsc::channel();
    let speaker = Speaker::start_following(config, router4, router6, changes)?;
    for address in speaker.local_addrs() {
        eprintln!("listening on {address}");
    }
    #[cfg(unix)]
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t);
    }
    let deadline = args.seconds.map(|seconds| Instant::now() + Duration::from_secs(seconds));
    let mut stdout = std::io::stdout().lock();
    while !STOP.load(Ordering::Relaxed) && deadline.is_none_or(|deadline| Instant::now() < deadline) {
        match received.recv_timeout(Duration::from_millis(100)) {
            Ok(batch) if !args.quiet => {
                let mut text = String::new();
                for change in batch {
                    match change {
                        Update::Announce { prefix, value } => text += &format!("+ {prefix} {value}\n"),
                        Update::Withdraw { prefix } => text += &format!("- {prefix}\n"),
                    }
                }
                stdout
                    .write_all(text.as_bytes())
                    .and_then(|()| stdout.flush())
                    .context("cannot write to standard output")?;
            }
            Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let stats = speaker.stats();
    for neighbour in speaker.neighbours() {
        eprintln!(
            "neighbour {} (AS {}): {}, {} prefixes, {} UPDATEs, sessions established: {}",
            neighbour.address,
            neighbour.remote_as,
            neighbour.state,
            neighbour.prefixes,
            neighbour.updates,
            neighbour.sessions
        );
    }
    eprintln!(
        "{} IPv4 and {} IPv6 routes; {} changes applied in {} batches, {} rejected",
        stats.routes4, stats.routes6, stats.updates_applied, stats.batches, stats.updates_rejected
    );
    speaker.stop();
    Ok(ExitCode::SUCCESS)
}
