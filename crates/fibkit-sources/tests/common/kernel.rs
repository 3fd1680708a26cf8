//! Test support for the kernel mirror: a network namespace of the test's
//! own with two interfaces, `ip` run in it, the mirror started in it, and
//! the table `ip route show` prints read back under the mirror's value
//! rule (written again here from the module's documentation, from `ip`'s
//! text rather than from netlink).

use std::collections::{BTreeMap, HashMap};
use std::ffi::CString;
use std::net::IpAddr;
use std::process::Command;
use std::time::Duration;

use fibkit::nexthop::Label;
use fibkit::{Address, Family, Prefix};
use fibkit_sources::netlink::{Mirror, NetlinkConfig, RouteValue};

use super::{answer, routers, Keyed, Table};

/// A network namespace, deleted when dropped (a failed test too).
pub struct Netns {
    pub name: String,
}

impl Netns {
    /// A new namespace, or `None` (having said `skipped: ...`) where this
    /// process may not make one.
    pub fn new(tag: &str) -> Option<Netns> {
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: the netlink tests make network namespaces, which needs root");
            return None;
        }
        let name = format!("fibkit-test-{}-{tag}", std::process::id());
        let _ = Command::new("ip").args(["netns", "del", &name]).output();
        match Command::new("ip").args(["netns", "add", &name]).output() {
            Ok(output) if output.status.success() => Some(Netns { name }),
            Ok(output) => {
                let error = String::from_utf8_lossy(&output.stderr);
                eprintln!("skipped: cannot make a network namespace (ip netns add: {})", error.trim());
                None
            }
            Err(error) => {
                eprintln!("skipped: cannot run ip (apt-get install iproute2, or make setup): {error}");
                None
            }
        }
    }

    /// Runs `ip -n NAME ARGS`; its output. Panics when it fails.
    pub fn ip(&self, args: &str) -> String {
        let output = Command::new("ip").args(["-n", &self.name]).args(args.split_whitespace()).output().unwrap();
        assert!(output.status.success(), "ip {args}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    }

    /// Whether `ip -n NAME ARGS` succeeds.
    pub fn try_ip(&self, args: &str) -> bool {
        let output = Command::new("ip").args(["-n", &self.name]).args(args.split_whitespace()).output().unwrap();
        output.status.success()
    }

    /// Runs `commands` (one `ip` command a line, without `ip`) with
    /// `ip -batch`.
    pub fn batch(&self, commands: &str) {
        let path = std::env::temp_dir().join(format!("{}.batch", self.name));
        std::fs::write(&path, commands).unwrap();
        let output = Command::new("ip").args(["-n", &self.name, "-batch"]).arg(&path).output().unwrap();
        let _ = std::fs::remove_file(&path);
        assert!(output.status.success(), "ip -batch: {}", String::from_utf8_lossy(&output.stderr));
    }

    /// Runs `work` on a thread that has entered the namespace.
    pub fn enter<T: Send>(&self, work: impl FnOnce() -> T + Send) -> T {
        let path = CString::new(format!("/run/netns/{}", self.name)).unwrap();
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    // SAFETY: `path` is a NUL-terminated string that lives
                    // through the call.
                    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
                    assert!(fd >= 0, "open {path:?}: {}", std::io::Error::last_os_error());
                    // SAFETY: `fd` is an open namespace file; setns moves
                    // only this thread, which runs `work` and ends.
                    let entered = unsafe { libc::setns(fd, libc::CLONE_NEWNET) };
                    let error = std::io::Error::last_os_error();
                    // SAFETY: `fd` is open and closed once.
                    unsafe { libc::close(fd) };
                    assert_eq!(entered, 0, "setns: {error}");
                    work()
                })
                .join()
                .unwrap()
        })
    }

    /// Interfaces `d0` (10.255.0.1/16, 2001:db8:ffff::1/64) and `d1`
    /// (10.254.0.1/16, 2001:db8:fffe::1/64), up: dummies, or a veth pair
    /// where the kernel has no dummy driver. Returns their indexes.
    pub fn interfaces(&self) -> (u32, u32) {
        if !(self.try_ip("link add d0 type dummy") && self.try_ip("link add d1 type dummy")) {
            let _ = self.try_ip("link del d0");
            self.ip("link add d0 type veth peer name d1");
        }
        for command in [
            "link set lo up",
            "link set d0 up",
            "link set d1 up",
            "addr add 10.255.0.1/16 dev d0",
            "addr add 10.254.0.1/16 dev d1",
            "addr add 2001:db8:ffff::1/64 dev d0 nodad",
            "addr add 2001:db8:fffe::1/64 dev d1 nodad",
        ] {
            self.ip(command);
        }
        let indexes = self.indexes();
        (indexes["d0"], indexes["d1"])
    }

    /// Every interface's index, by name.
    pub fn indexes(&self) -> HashMap<String, u32> {
        let mut indexes = HashMap::new();
        for line in self.ip("-o link show").lines() {
            let mut fields = line.split(": ");
            let index = fields.next().unwrap().trim().parse().unwrap();
            let name = fields.next().unwrap().split('@').next().unwrap();
            indexes.insert(name.to_string(), index);
        }
        indexes
    }

    /// Starts a mirror of `config` inside the namespace, and waits for its
    /// first dump.
    pub fn mirror(&self, mut config: NetlinkConfig) -> Mirror {
        config.echo_log = std::env::var_os("FIBKIT_NETLINK_LOG").is_some();
        let mirror = self.enter(|| {
            let (router4, router6) = routers();
            Mirror::start(config, router4, router6).unwrap()
        });
        assert!(mirror.wait_for_dump(Duration::from_secs(120)), "no first dump: {:#?}", mirror.journal());
        mirror
    }

    /// Adds the sentinel routes of round `round` to `table`
    /// (198.18.ROUND.0/24 and 2001:db8:5e:ROUND::/64), and waits until
    /// `mirrors` answer them: every change made before is then in.
    pub fn sync(&self, table: &str, round: u8, mirrors: &[&Mirror]) {
        self.ip(&format!("route add 198.18.{round}.0/24 via 10.255.1.{round} dev d0 table {table}"));
        self.ip(&format!("route add 2001:db8:5e:{round:x}::/64 via 2001:db8:ffff::1:{round:x} dev d0 table {table}"));
        let (at4, at6) =
            (0xc612_0001u32 | u32::from(round) << 8, (0x2001_0db8_005e_u128 << 80) | u128::from(round) << 64);
        for mirror in mirrors {
            let start = std::time::Instant::now();
            while answer(*mirror, at4).is_none() || answer(*mirror, at6).is_none() {
                assert!(
                    start.elapsed() < Duration::from_secs(300),
                    "the mirror did not see the sentinels of round {round}: {:?}\n{:#?}",
                    mirror.stats(),
                    mirror.journal()
                );
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }

    /// The table `ip route show table TABLE` prints, each prefix with its
    /// value under the mirror's rule (`value`, `reject`).
    pub fn kernel_table<A: Address>(&self, table: &str, value: RouteValue, reject: Option<Label>) -> Table<A> {
        let family = if A::FAMILY == Family::Ipv4 { "-4" } else { "-6" };
        let text = self.ip(&format!("{family} route show table {table}"));
        reference_table(&text, &self.indexes(), value, reject)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.name]).output();
    }
}

/// A route as `ip route show` prints it.
#[derive(Default)]
struct Shown {
    kind: String,
    destination: String,
    metric: u32,
    /// TOS or source prefix: not for a lookup by destination alone.
    qualified: bool,
    /// Each hop's gateway and interface name, and whether it is dead.
    hops: Vec<(Option<IpAddr>, Option<String>, bool)>,
}

const TYPES: [&str; 10] =
    ["unicast", "local", "broadcast", "anycast", "multicast", "blackhole", "unreachable", "prohibit", "throw", "nat"];

/// Reads the words of a route line, or of a `nexthop` line into `hop`.
fn read_words<'a>(
    words: impl Iterator<Item = &'a str>,
    route: &mut Shown,
    hop: &mut (Option<IpAddr>, Option<String>, bool),
) {
    let mut words = words.peekable();
    while let Some(word) = words.next() {
        match word {
            "via" => {
                if matches!(words.peek(), Some(&"inet") | Some(&"inet6")) {
                    words.next();
                }
                hop.0 = Some(words.next().unwrap().parse().unwrap());
            }
            "dev" => hop.1 = Some(words.next().unwrap().to_string()),
            "metric" => route.metric = words.next().unwrap().parse().unwrap(),
            "tos" | "dsfield" | "from" => {
                route.qualified |= words.next() != Some("0x00");
            }
            "dead" => hop.2 = true,
            "proto" | "scope" | "src" | "table" | "pref" | "weight" | "expires" | "nhid" | "mtu" | "realms" => {
                words.next();
            }
            _ => {}
        }
    }
}

/// `ip route show`'s text as a table of values (the rule of
/// `fibkit_sources::netlink`).
pub fn reference_table<A: Address>(
    text: &str,
    indexes: &HashMap<String, u32>,
    value: RouteValue,
    reject: Option<Label>,
) -> Table<A> {
    let mut shown: Vec<Shown> = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        if line.starts_with(char::is_whitespace) {
            let words = line.split_whitespace();
            let route = shown.last_mut().unwrap();
            let mut hop = (None, None, false);
            read_words(words.skip(1), route, &mut hop);
            route.hops.push(hop);
            continue;
        }
        let mut words = line.split_whitespace().peekable();
        let mut route = Shown { kind: "unicast".into(), ..Shown::default() };
        if TYPES.contains(words.peek().unwrap()) {
            route.kind = words.next().unwrap().to_string();
        }
        route.destination = words.next().unwrap().to_string();
        let mut hop = (None, None, false);
        read_words(words, &mut route, &mut hop);
        if hop.0.is_some() || hop.1.is_some() {
            route.hops.push(hop);
        }
        shown.push(route);
    }
    // The value of each route, then the smallest of the lowest metric.
    let mut best: BTreeMap<Prefix<A>, (u32, Label)> = BTreeMap::new();
    for route in shown {
        if route.qualified {
            continue;
        }
        let label = match route.kind.as_str() {
            "unicast" => route
                .hops
                .iter()
                .filter(|(_, _, dead)| !dead)
                .filter_map(|(gateway, device, _)| {
                    let interface = device.as_ref().map(|name| Label::Number(u64::from(indexes[name])));
                    match value {
                        RouteValue::Gateway => gateway.map(Label::Addr).or(interface),
                        RouteValue::Interface => interface,
                    }
                })
                .min(),
            "blackhole" | "unreachable" | "prohibit" | "throw" => reject,
            _ => None,
        };
        let Some(label) = label else { continue };
        let prefix = match route.destination.as_str() {
            "default" => Prefix::new(A::ZERO, 0).unwrap(),
            text if text.contains('/') => text.parse().unwrap(),
            text => Prefix::new(A::parse_addr(text).unwrap(), A::BITS).unwrap(),
        };
        let entry = best.entry(prefix).or_insert((route.metric, label));
        if (route.metric, label) < *entry {
            *entry = (route.metric, label);
        }
    }
    best.into_iter().map(|(prefix, (_, label))| (prefix, label)).collect()
}

/// The address `text` as family `A`'s number.
pub fn addr<A: Keyed>(text: &str) -> A {
    A::parse_addr(text).unwrap()
}
