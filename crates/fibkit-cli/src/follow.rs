//! `fibkit follow`: peer with BGP neighbours (receive-only), keep a live
//! FIB of each family, and print every change of it as it is published.
//!
//! Standard output gets one line a change, `+ PREFIX VALUE` for a route
//! installed or replaced and `- PREFIX` for a route withdrawn; standard
//! error gets the sessions' log (each line names its neighbour) and, at
//! the end, a summary. It runs until `--seconds` have passed, or until
//! SIGINT or SIGTERM.

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::ExitCode;
use std::str::FromStr;
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
    neighbours: Vec<Neighbour>,
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

/// A `--neighbor` specification.
#[derive(Clone, Debug)]
struct Neighbour(NeighbourConfig);

impl FromStr for Neighbour {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let mut parts = text.split(',');
        let address = parts.next().unwrap_or_default();
        let address: IpAddr = address.parse().map_err(|_| format!("{address:?} is not an IP address"))?;
        let mut config = NeighbourConfig::new(address, 0);
        let mut asn = None;
        for part in parts {
            let (key, value) = part.split_once('=').ok_or_else(|| format!("{part:?}: expected KEY=VALUE"))?;
            let number = |what: &str| value.parse::<u64>().map_err(|_| format!("{key}={value:?}: {what}"));
            match key {
                "as" => asn = Some(u32::try_from(number("an AS number")?).map_err(|_| format!("AS {value} > 2^32-1"))?),
                "connect" => {
                    let port = u16::try_from(number("a TCP port")?).ok().filter(|&port| port > 0);
                    config.connect_port = Some(port.ok_or_else(|| format!("connect={value}: a port 1 to 65535"))?);
                }
                "max-prefixes" => config.max_prefixes = Some(number("a count")? as usize),
                _ => return Err(format!("unknown key {key:?} (as, connect, max-prefixes)")),
            }
        }
        config.remote_as = asn.ok_or_else(|| format!("{text:?}: no as=ASN"))?;
        Ok(Neighbour(config))
    }
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
    if args.listen.is_empty() && args.neighbours.iter().all(|Neighbour(config)| config.connect_port.is_none()) {
        bail!("no --listen address and no neighbour to connect to: no session could start");
    }
    let mut config = BgpConfig::new(args.local_as, args.router_id);
    config.listen.clone_from(&args.listen);
    config.hold_time = args.hold_time;
    config.value = args.value;
    config.neighbours = args.neighbours.iter().map(|Neighbour(config)| config.clone()).collect();
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
