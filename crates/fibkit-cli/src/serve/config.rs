//! `fibkit serve`'s configuration: one TOML file, checked whole at start
//! (and at each SIGHUP) before anything runs, every error naming the file,
//! the line and the problem.
//!
//! ```toml
//! [http]                          # where lookups are answered (the defaults shown)
//! listen = ["127.0.0.1:8080"]
//! max_connections = 1024          # more are closed at once, each with a log line
//! max_body_bytes = 67108864       # a larger body: 413
//! header_timeout_seconds = 10     # headers (and an idle connection's next request)
//! body_timeout_seconds = 30       # a whole request body
//!
//! [table]                         # routes from a file, served from the start
//! path = "routes.ipasn"           # any format `fibkit lookup` reads
//!
//! [engines]                       # the FIBs' engines (the defaults shown)
//! ipv4 = "d18r"
//! ipv6 = "poptrie18"
//! atomic_batches = false          # true: a batch request sees each BGP update whole
//!
//! [bgp]                           # BGP neighbours (receive-only), as `fibkit follow`
//! local_as = 65000
//! router_id = "10.255.0.1"
//! listen = ["127.0.0.1:1790"]
//! neighbors = ["127.0.0.2,as=65001"]
//! value = "next-hop"              # or "origin-as"
//! hold_time = 90
//!
//! # [kernel]                      # or (not with [bgp]): a Linux routing table
//! # table = 254                   # the main table; any number
//! # value = "gateway"             # or "interface"
//!
//! [snapshot]                      # compiled FIB files, written atomically
//! path = "routes.fib"
//! every_seconds = 60
//! ```

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use fibkit::load::ValueChoice;
use fibkit_sources::bgp::{BgpConfig, NeighbourConfig};
use serde::Deserialize;
use toml::Spanned;

use crate::registered;

/// The whole configuration.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The HTTP side.
    #[serde(default)]
    pub http: Http,
    /// A table file served from the start.
    pub table: Option<TableFile>,
    /// The engines.
    #[serde(default)]
    pub engines: Engines,
    /// BGP neighbours.
    pub bgp: Option<Bgp>,
    /// A kernel routing table.
    pub kernel: Option<Kernel>,
    /// Snapshots.
    pub snapshot: Option<Snapshot>,
}

/// `[http]`.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Http {
    /// Where to listen.
    pub listen: Vec<SocketAddr>,
    /// Connections open at once.
    pub max_connections: usize,
    /// The largest request body.
    pub max_body_bytes: u64,
    /// Time to send a request's headers, from the connection's start or
    /// the previous answer.
    pub header_timeout_seconds: u64,
    /// Time to send a request's body.
    pub body_timeout_seconds: u64,
}

impl Default for Http {
    fn default() -> Self {
        Http {
            listen: vec![SocketAddr::from((Ipv4Addr::LOCALHOST, 8080))],
            max_connections: 1024,
            max_body_bytes: 64 << 20,
            header_timeout_seconds: 10,
            body_timeout_seconds: 30,
        }
    }
}

/// `[table]`.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TableFile {
    /// The file (relative to the configuration's folder).
    pub path: PathBuf,
}

/// `[engines]`.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Engines {
    /// The IPv4 FIB's engine.
    pub ipv4: Spanned<String>,
    /// The IPv6 FIB's engine.
    pub ipv6: Spanned<String>,
    /// Every update batch is published whole (`Router::set_atomic_batches`).
    pub atomic_batches: bool,
}

impl Default for Engines {
    fn default() -> Self {
        Engines {
            ipv4: Spanned::new(0..0, fibkit::registry::DEFAULT_IPV4.to_string()),
            ipv6: Spanned::new(0..0, fibkit::registry::DEFAULT_IPV6.to_string()),
            atomic_batches: false,
        }
    }
}

/// `[bgp]`.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Bgp {
    /// The local AS.
    pub local_as: u32,
    /// The BGP identifier.
    pub router_id: Ipv4Addr,
    /// Where neighbours connect.
    #[serde(default)]
    pub listen: Vec<SocketAddr>,
    /// The neighbours, as `fibkit follow --neighbor` takes them.
    pub neighbors: Vec<Spanned<String>>,
    /// `next-hop` or `origin-as`.
    #[serde(default = "next_hop")]
    pub value: Spanned<String>,
    /// The hold time offered.
    #[serde(default = "ninety")]
    pub hold_time: Spanned<u16>,
}

fn next_hop() -> Spanned<String> {
    Spanned::new(0..0, "next-hop".to_string())
}

fn ninety() -> Spanned<u16> {
    Spanned::new(0..0, 90)
}

/// `[kernel]`.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Kernel {
    /// The table's number (254: main).
    #[serde(default = "main_table")]
    pub table: Spanned<u32>,
    /// `gateway` or `interface`.
    #[serde(default = "gateway")]
    pub value: Spanned<String>,
}

fn main_table() -> Spanned<u32> {
    Spanned::new(0..0, 254)
}

fn gateway() -> Spanned<String> {
    Spanned::new(0..0, "gateway".to_string())
}

/// `[snapshot]`.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    /// The file written (relative to the configuration's folder).
    pub path: PathBuf,
    /// Seconds between two snapshots.
    pub every_seconds: Spanned<u64>,
}

/// A configuration read and checked.
pub struct Checked {
    /// As written, for comparing a reload with what runs.
    pub config: Config,
    /// `[bgp]` as the speaker takes it.
    pub bgp: Option<BgpConfig>,
    /// `[kernel]` as the mirror takes it.
    #[cfg(target_os = "linux")]
    pub kernel: Option<fibkit_sources::netlink::NetlinkConfig>,
    /// Paths made absolute against the configuration's folder.
    pub table: Option<PathBuf>,
    /// The snapshot's path.
    pub snapshot: Option<PathBuf>,
}

/// Reads and checks the configuration at `path`.
///
/// # Errors
/// The file cannot be read, is not TOML, has an unknown or missing key or
/// a value of the wrong type, or a value that does not hold (an engine
/// unknown for its family, a neighbour spec that does not parse, a
/// snapshot period of 0): each named with the file and the line.
pub fn read(path: &Path) -> Result<Checked> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let at = |span: std::ops::Range<usize>| format!("{} line {}", path.display(), line_of(&text, span.start));
    let config: Config = toml::from_str(&text).map_err(|error| {
        let place = error.span().map_or_else(|| path.display().to_string(), &at);
        anyhow::anyhow!("{place}: {}", error.message().trim_end())
    })?;
    for (engine, family) in [(&config.engines.ipv4, "IPv4"), (&config.engines.ipv6, "IPv6")] {
        let known = if family == "IPv4" {
            registered::resolve::<u32>(engine.get_ref()).map(|_| ())
        } else {
            registered::resolve::<u128>(engine.get_ref()).map(|_| ())
        };
        if let Err(error) = known {
            bail!("{}: {family} engine: {error}", at(engine.span()));
        }
    }
    let bgp = match &config.bgp {
        Some(bgp) => Some(bgp_config(bgp, &at)?),
        None => None,
    };
    #[cfg(target_os = "linux")]
    let kernel = match &config.kernel {
        Some(kernel) => Some(kernel_config(kernel, bgp.is_some(), &at)?),
        None => None,
    };
    #[cfg(not(target_os = "linux"))]
    if let Some(kernel) = &config.kernel {
        bail!("{}: [kernel]: the kernel's table is mirrored on Linux only", at(kernel.table.span()));
    }
    if let Some(snapshot) = &config.snapshot {
        if *snapshot.every_seconds.get_ref() == 0 {
            bail!("{}: every_seconds must be at least 1", at(snapshot.every_seconds.span()));
        }
    }
    if config.http.listen.is_empty() {
        bail!("{}: [http] listen is empty: lookups could not be asked", path.display());
    }
    if config.http.max_connections == 0
        || config.http.header_timeout_seconds == 0
        || config.http.body_timeout_seconds == 0
    {
        bail!("{}: [http] max_connections and the timeouts must be at least 1", path.display());
    }
    let folder = path.parent().unwrap_or(Path::new("."));
    let table = config.table.as_ref().map(|table| folder.join(&table.path));
    let snapshot = config.snapshot.as_ref().map(|snapshot| folder.join(&snapshot.path));
    Ok(Checked {
        config,
        bgp,
        #[cfg(target_os = "linux")]
        kernel,
        table,
        snapshot,
    })
}

/// `[bgp]` as the speaker takes it.
fn bgp_config(bgp: &Bgp, at: &impl Fn(std::ops::Range<usize>) -> String) -> Result<BgpConfig> {
    let mut config = BgpConfig::new(bgp.local_as, bgp.router_id);
    config.listen.clone_from(&bgp.listen);
    config.echo_log = true;
    config.value = bgp
        .value
        .get_ref()
        .parse::<ValueChoice>()
        .map_err(|problem| anyhow::anyhow!("{}: value: {problem}", at(bgp.value.span())))?;
    let hold_time = *bgp.hold_time.get_ref();
    if hold_time == 1 || hold_time == 2 {
        bail!("{}: hold_time {hold_time}: 0, or 3 to 65535", at(bgp.hold_time.span()));
    }
    config.hold_time = hold_time;
    for spec in &bgp.neighbors {
        let neighbour = spec
            .get_ref()
            .parse::<NeighbourConfig>()
            .map_err(|problem| anyhow::anyhow!("{}: neighbor: {problem}", at(spec.span())))?;
        if config.neighbours.iter().any(|other| other.address == neighbour.address) {
            bail!("{}: neighbor {} is configured twice", at(spec.span()), neighbour.address);
        }
        config.neighbours.push(neighbour);
    }
    if config.listen.is_empty() && config.neighbours.iter().all(|neighbour| neighbour.connect_port.is_none()) {
        bail!("[bgp]: no listen address and no neighbour to connect to: no session could start");
    }
    Ok(config)
}

/// `[kernel]` as the mirror takes it.
#[cfg(target_os = "linux")]
fn kernel_config(
    kernel: &Kernel,
    with_bgp: bool,
    at: &impl Fn(std::ops::Range<usize>) -> String,
) -> Result<fibkit_sources::netlink::NetlinkConfig> {
    use fibkit_sources::netlink::{NetlinkConfig, RouteValue};
    if with_bgp {
        bail!("{}: [kernel] and [bgp] both: serve one live source", at(kernel.table.span()));
    }
    let table = *kernel.table.get_ref();
    if table == 0 {
        bail!("{}: table 0 is not a table (254 is the main one)", at(kernel.table.span()));
    }
    let mut config = NetlinkConfig::new(table);
    config.echo_log = true;
    config.value = match kernel.value.get_ref().as_str() {
        "gateway" => RouteValue::Gateway,
        "interface" => RouteValue::Interface,
        other => bail!("{}: value {other:?}: gateway or interface", at(kernel.value.span())),
    };
    Ok(config)
}

/// The line (from 1) of byte `offset` of `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())].iter().filter(|&&byte| byte == b'\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(text: &str) -> Result<Checked> {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("serve.toml");
        std::fs::write(&path, text).unwrap();
        read(&path)
    }

    fn error(text: &str) -> String {
        format!("{:#}", checked(text).err().expect("an error"))
    }

    #[test]
    fn the_documented_example_is_a_valid_configuration() {
        let module = include_str!("config.rs");
        let example: String = module
            .lines()
            .skip_while(|line| !line.starts_with("//! ```toml"))
            .skip(1)
            .take_while(|line| !line.starts_with("//! ```"))
            .map(|line| line.strip_prefix("//! ").unwrap_or("").to_string() + "\n")
            .collect();
        let read = checked(&example).unwrap();
        assert_eq!(read.config.http, Http::default());
        let bgp = read.bgp.unwrap();
        assert_eq!((bgp.local_as, bgp.neighbours.len(), bgp.hold_time), (65000, 1, 90));
        assert!(read.snapshot.unwrap().ends_with("routes.fib"));
        assert!(!read.config.engines.atomic_batches);
        assert!(checked("[engines]\natomic_batches = true\n").unwrap().config.engines.atomic_batches);
    }

    #[test]
    fn an_empty_file_serves_nothing_on_the_default_address() {
        let read = checked("").unwrap();
        assert_eq!(read.config.http.listen, vec![SocketAddr::from((Ipv4Addr::LOCALHOST, 8080))]);
        assert!(read.bgp.is_none() && read.table.is_none() && read.snapshot.is_none());
    }

    #[test]
    fn every_error_names_the_line() {
        for (text, line, problem) in [
            ("[http]\nlisten = [\"127.0.0.1\"]\n", 2, "invalid socket address"),
            ("[http]\nlisten = []\nmax_conections = 3\n", 3, "unknown field `max_conections`"),
            ("[engines]\nipv4 = \"poptrie16x12\"\n", 2, "IPv4 engine"),
            ("[engines]\n\nipv6 = \"nope\"\n", 3, "unknown IPv6 engine \"nope\""),
            ("[bgp]\nlocal_as = 1\nrouter_id = \"10.0.0.1\"\nneighbors = [\n \"127.0.0.2,as=x\"]\n", 5, "neighbor"),
            ("[bgp]\nlocal_as = 1\nrouter_id = \"10.0.0.1\"\nneighbors = []\nhold_time = 2\n", 5, "hold_time 2"),
            ("[bgp]\nlocal_as = 1\nrouter_id = \"10.0.0.1\"\nneighbors = []\nvalue = \"asn\"\n", 5, "value"),
            ("[bgp]\nlocal_as = 1\nrouter_id = \"10.0.0.1\"\n", 1, "missing field `neighbors`"),
            ("[snapshot]\npath = \"x.fib\"\nevery_seconds = 0\n", 3, "at least 1"),
            ("[kernel]\ntable = 0\n", 2, "table 0"),
            ("[kernel]\nvalue = \"oif\"\n", 2, "gateway or interface"),
            ("[bgp]\nlocal_as = 1\nrouter_id = \"10.0.0.1\"\nlisten = [\"127.0.0.1:0\"]\nneighbors = []\n[kernel]\ntable = 100\n", 7, "serve one live source"),
            ("[http\n", 1, "unclosed table"),
        ] {
            let message = error(text);
            assert!(message.contains(&format!("serve.toml line {line}:")), "{text:?}: {message}");
            assert!(message.contains(problem), "{text:?}: {message}");
        }
    }

    #[test]
    fn a_neighbour_twice_or_no_way_to_peer_is_refused() {
        let twice = "[bgp]\nlocal_as = 1\nrouter_id = \"10.0.0.1\"\nlisten = [\"127.0.0.1:0\"]\n\
                     neighbors = [\"127.0.0.2,as=2\",\n \"127.0.0.2,as=3\"]\n";
        assert!(error(twice).contains("line 6: neighbor 127.0.0.2 is configured twice"), "{}", error(twice));
        let nowhere = "[bgp]\nlocal_as = 1\nrouter_id = \"10.0.0.1\"\nneighbors = [\"127.0.0.2,as=2\"]\n";
        assert!(error(nowhere).contains("no session could start"));
    }
}
