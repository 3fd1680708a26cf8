//! Test support: routing daemons started on loopback addresses of their
//! own, the speaker started beside them, and the checks of a live FIB (the
//! speaker's or the kernel mirror's) against the table it was given.

#![allow(dead_code)]

#[path = "../../../fibkit/tests/common/data.rs"]
pub mod data;
#[cfg(target_os = "linux")]
pub mod kernel;
pub mod mrt;
pub mod stages;

use std::cell::Cell;
use std::collections::BTreeMap;
use std::io::Write as _;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fibkit::load::ValueChoice;
use fibkit::nexthop::{Label, Mapping, NextHopTable};
use fibkit::random::XorShift64Pair;
use fibkit::registry::{DEFAULT_IPV4, DEFAULT_IPV6};
use fibkit::router::{Reader, Router, Window};
use fibkit::{Address, NextHop, Prefix, Rib, NO_ROUTE};
use fibkit_sources::bgp::{BgpConfig, NeighbourConfig, Speaker};
#[cfg(target_os = "linux")]
use fibkit_sources::netlink::Mirror;
use mrt::Dump;

/// The path of `program` if it is installed; otherwise says `skipped`
/// with the command that installs it.
pub fn installed(program: &str, package: &str) -> Option<PathBuf> {
    for dir in ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin", "/sbin", "/bin"] {
        let path = Path::new(dir).join(program);
        if path.exists() {
            return Some(path);
        }
    }
    eprintln!("skipped: {program} is not installed (apt-get install {package}, or make setup)");
    None
}

/// A folder of its own for a test's files, removed at the end.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("fibkit-sources-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A BIRD 2 daemon with a configuration of the test's, in the foreground,
/// killed when dropped.
pub struct Bird {
    child: Child,
    socket: PathBuf,
    config: PathBuf,
}

impl Bird {
    pub fn start(bird: &Path, scratch: &Scratch, config: &str) -> Bird {
        let config_path = scratch.0.join("bird.conf");
        std::fs::write(&config_path, config).unwrap();
        let socket = scratch.0.join("bird.ctl");
        let child = Command::new(bird)
            .args(["-f", "-c"])
            .arg(&config_path)
            .arg("-s")
            .arg(&socket)
            .stdout(Stdio::null())
            .spawn()
            .expect("start bird");
        let bird = Bird { child, socket, config: config_path };
        wait_for("BIRD's control socket", Duration::from_secs(60), || bird.socket.exists());
        bird
    }

    /// Runs `birdc` with `command`; its output.
    pub fn birdc(&self, command: &str) -> String {
        let output =
            Command::new("birdc").arg("-s").arg(&self.socket).args(command.split(' ')).output().expect("run birdc");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Replaces the configuration and has BIRD apply it.
    pub fn reconfigure(&self, config: &str) {
        std::fs::write(&self.config, config).unwrap();
        let answer = self.birdc("configure");
        assert!(answer.contains("Reconfigured") || answer.contains("Reconfiguration in progress"), "{answer}");
    }
}

impl Drop for Bird {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until `done` holds, polling; panics after `limit`.
pub fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    start.elapsed()
}

/// Empty routers of the default engines.
pub fn routers() -> (Router<u32>, Router<u128>) {
    let table = || NextHopTable::new(Mapping::Distinct);
    (
        Router::new(DEFAULT_IPV4, Rib::new(), table(), Window::Count(1)).unwrap(),
        Router::new(DEFAULT_IPV6, Rib::new(), table(), Window::Count(1)).unwrap(),
    )
}

/// A speaker listening on 127.0.0.1 and 127.0.0.5 (a free port) for
/// `neighbours`.
pub fn speaker(local_as: u32, value: ValueChoice, neighbours: Vec<NeighbourConfig>) -> Speaker {
    let mut config = BgpConfig::new(local_as, Ipv4Addr::new(10, 255, 0, 1));
    config.listen = [Ipv4Addr::LOCALHOST, Ipv4Addr::new(127, 0, 0, 5)]
        .map(|address| SocketAddr::new(IpAddr::V4(address), 0))
        .to_vec();
    config.value = value;
    config.neighbours = neighbours;
    config.echo_log = std::env::var_os("FIBKIT_BGP_LOG").is_some();
    let (router4, router6) = routers();
    Speaker::start(config, router4, router6).unwrap()
}

/// A table as prefix -> value, for one family.
pub type Table<A> = BTreeMap<Prefix<A>, Label>;

/// The reference RIB of `table`, with its labels by next-hop index.
pub fn reference<A: Address>(table: &Table<A>) -> (Rib<A>, Vec<Label>) {
    let mut labels: Vec<Label> = Vec::new();
    let mut index = std::collections::HashMap::new();
    let mut rib = Rib::new();
    for (&prefix, &label) in table {
        let hop = *index.entry(label).or_insert_with(|| {
            labels.push(label);
            labels.len() as u32
        });
        rib.insert(prefix, hop);
    }
    (rib, labels)
}

/// A live FIB of both families whose next hops have labels: the BGP
/// speaker or the kernel mirror.
pub trait Source {
    fn reader4(&self) -> Reader<u32>;
    fn reader6(&self) -> Reader<u128>;
    fn label<A: Address>(&self, hop: NextHop) -> Option<Label>;
}

impl Source for Speaker {
    fn reader4(&self) -> Reader<u32> {
        Speaker::reader4(self)
    }
    fn reader6(&self) -> Reader<u128> {
        Speaker::reader6(self)
    }
    fn label<A: Address>(&self, hop: NextHop) -> Option<Label> {
        Speaker::label::<A>(self, hop)
    }
}

#[cfg(target_os = "linux")]
impl Source for Mirror {
    fn reader4(&self) -> Reader<u32> {
        Mirror::reader4(self)
    }
    fn reader6(&self) -> Reader<u128> {
        Mirror::reader6(self)
    }
    fn label<A: Address>(&self, hop: NextHop) -> Option<Label> {
        Mirror::label::<A>(self, hop)
    }
}

/// The value `source`'s family-`A` FIB gives `addr`.
pub fn answer<A: Keyed, S: Source>(source: &S, addr: A) -> Option<Label> {
    let hop = A::reader(source).lookup(addr);
    (hop != NO_ROUTE).then(|| source.label::<A>(hop)).flatten()
}

/// Every answer of `source`'s family-`A` FIB equals `table`'s: at both
/// ends of every range of the reference and on `randoms` random
/// addresses. Returns the number of addresses checked.
pub fn check_answers<A: Address + Keyed, S: Source>(source: &S, table: &Table<A>, randoms: usize) -> usize {
    let (rib, labels) = reference(table);
    let reader = A::reader(source);
    let expected = |hop: u32| (hop != NO_ROUTE).then(|| labels[hop as usize - 1]);
    let mut checked = 0;
    let mut check = |addr: A, want: u32| {
        let got = reader.lookup(addr);
        let got_label = (got != NO_ROUTE).then(|| source.label::<A>(got)).flatten();
        assert_eq!(got_label, expected(want), "{} at {addr:?}: the FIB answered #{got}", A::FAMILY);
        checked += 1;
    };
    rib.for_each_range(A::ZERO, A::MAX, |range| {
        check(range.first, range.next_hop);
        check(range.last, range.next_hop);
    });
    let mut random = XorShift64Pair::new(0x5eed);
    for _ in 0..randoms {
        let addr = A::from_random(&mut random);
        check(addr, rib.lookup(addr));
    }
    checked
}

/// What the checks need of a family.
pub trait Keyed: Address {
    fn reader<S: Source>(source: &S) -> Reader<Self>;
    fn from_random(random: &mut XorShift64Pair) -> Self;
}

impl Keyed for u32 {
    fn reader<S: Source>(source: &S) -> Reader<u32> {
        source.reader4()
    }
    fn from_random(random: &mut XorShift64Pair) -> u32 {
        random.next() as u32
    }
}

impl Keyed for u128 {
    fn reader<S: Source>(source: &S) -> Reader<u128> {
        source.reader6()
    }
    fn from_random(random: &mut XorShift64Pair) -> u128 {
        // Where routes are: 2000::/3.
        (random.next() >> 3) | (1 << 125)
    }
}

/// A free TCP port on the loopback address (for a daemon's own API).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A GoBGP daemon with a configuration of the test's and its gRPC API on
/// a port of its own, killed when dropped.
pub struct GoBgp {
    child: Child,
    api: String,
    dir: PathBuf,
    injections: Cell<u32>,
}

/// The prefix of the marker route that [`GoBgp::inject`] ends a dump with.
pub const MARKER: &str = "198.51.100.0/24";

impl GoBgp {
    pub fn start(gobgpd: &Path, scratch: &Scratch, config: &str) -> GoBgp {
        let config_path = scratch.0.join("gobgpd.toml");
        std::fs::write(&config_path, config).unwrap();
        let api = free_port().to_string();
        let child = Command::new(gobgpd)
            .arg("-f")
            .arg(&config_path)
            .args(["--api-hosts", &format!("127.0.0.1:{api}"), "--pprof-disable", "-p", "-l", "warn"])
            .stdout(Stdio::null())
            .spawn()
            .expect("start gobgpd");
        let gobgp = GoBgp { child, api, dir: scratch.0.clone(), injections: Cell::new(0) };
        wait_for("GoBGP's API", Duration::from_secs(60), || gobgp.try_cli(&["global"]).is_ok());
        gobgp
    }

    fn try_cli(&self, args: &[&str]) -> Result<String, String> {
        let output = Command::new("gobgp").args(["-p", &self.api]).args(args).output().expect("run gobgp");
        let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
        if output.status.success() {
            Ok(text)
        } else {
            Err(text)
        }
    }

    /// Runs `gobgp` with `args` against this daemon; its output.
    pub fn cli(&self, args: &[&str]) -> String {
        self.try_cli(args).unwrap_or_else(|error| panic!("gobgp {args:?}: {error}"))
    }

    /// Adds the routes of `dump` to GoBGP's global RIB (`gobgp mrt inject
    /// global`); returns once all are in.
    ///
    /// `gobgp` 3.10 exits as soon as it has sent the last route, without
    /// waiting for the daemon to take it, and the routes still in flight
    /// are lost. So the dump goes through its standard input, ended by a
    /// marker route (with NO_ADVERTISE, which the daemon's configuration
    /// must hold back, and an AS path of a number of its own), and the
    /// input closes only once the marker is in the RIB: GoBGP takes the
    /// routes of one stream in order.
    pub fn inject(&self, mut dump: Dump) {
        let serial = 4_200_000_000 + self.injections.get();
        self.injections.set(self.injections.get() + 1);
        dump.route(MARKER.parse::<Prefix<u32>>().unwrap(), serial, false);
        let log_path = self.dir.join("inject.log");
        let log = std::fs::File::create(&log_path).unwrap();
        let mut child = Command::new("gobgp")
            .args(["-p", &self.api, "mrt", "inject", "global", "/dev/stdin"])
            .stdin(Stdio::piped())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("run gobgp mrt inject");
        let failed = |what: &str| -> ! {
            panic!("gobgp mrt inject: {what}: {}", std::fs::read_to_string(&log_path).unwrap_or_default())
        };
        let mut input = child.stdin.take().unwrap();
        if let Err(error) = input.write_all(dump.bytes()) {
            failed(&error.to_string());
        }
        let (start, serial) = (Instant::now(), serial.to_string());
        loop {
            let rib = self.try_cli(&["global", "rib", "-a", "ipv4", MARKER]).unwrap_or_default();
            if rib.split_whitespace().any(|word| word == serial) {
                break;
            }
            if let Some(status) = child.try_wait().unwrap() {
                failed(&format!("ended ({status}) before its routes were in"));
            }
            if start.elapsed() > Duration::from_secs(600) {
                failed("its routes were not in within 600 s");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        drop(input);
        let status = child.wait().unwrap();
        if !status.success() {
            failed(&status.to_string());
        }
    }
}

impl Drop for GoBgp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
