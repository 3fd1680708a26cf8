//! A full table's convergence from BIRD 2, beside BIRD's own export of the
//! same table into the kernel, in one sitting (run as root: the kernel
//! side runs in a network namespace of its own).
//!
//! ```text
//! cargo run --release -p fibkit-sources --example bird_convergence
//! ```
//!
//! 1. BIRD announces the 2014 table (static routes, each with its origin
//!    AS) to fibkit over BGP: the time from the session's establishment to
//!    the last route in fibkit's FIB.
//! 2. BIRD exports the same static routes into kernel table 100 in a fresh
//!    namespace (its `kernel` protocol): the time from BIRD's start to the
//!    kernel protocol having exported every route, as `birdc` counts them.

#[path = "../../fibkit/tests/common/data.rs"]
mod data;

use std::fmt::Write as _;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fibkit::load::{load_path, LoadOptions, ValueChoice};
use fibkit::nexthop::{Mapping, NextHopTable};
use fibkit::router::{Router, Window};
use fibkit::Rib;
use fibkit_sources::bgp::{BgpConfig, NeighbourConfig, SessionState, Speaker};

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn main() {
    let Some(path) = data::shared_data("routeviews-2014-05-13.ipasn.gz") else { return };
    let table = load_path(&path, &LoadOptions::default()).unwrap();
    let mut statics = String::from("protocol static s4 {\n  ipv4;\n");
    for (prefix, hop) in table.v4.iter() {
        let asn = table.next_hops.label(hop).unwrap();
        writeln!(statics, "  route {prefix} blackhole {{ bgp_path.prepend({asn}); }};").unwrap();
    }
    statics.push_str("}\n");
    let routes = table.v4.iter().count();
    let dir = std::env::temp_dir().join(format!("fibkit-bird-convergence-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| text.lines().find(|line| line.starts_with("model name")).map(str::to_string))
        .unwrap_or_default();
    println!("{cpu}; {routes} routes");

    // 1. Over BGP into fibkit.
    let mut config = BgpConfig::new(65000, Ipv4Addr::new(10, 255, 0, 1));
    config.listen = vec![SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0)];
    config.value = ValueChoice::OriginAs;
    config.neighbours = vec![NeighbourConfig::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)), 65001)];
    let empty = || NextHopTable::new(Mapping::Distinct);
    let router4 = Router::new(fibkit::registry::DEFAULT_IPV4, Rib::new(), empty(), Window::Count(1)).unwrap();
    let router6 = Router::new(fibkit::registry::DEFAULT_IPV6, Rib::new(), empty(), Window::Count(1)).unwrap();
    let speaker = Speaker::start(config, router4, router6).unwrap();
    let port = speaker.local_addrs()[0].port();
    let bgp = format!(
        "router id 10.0.0.2;\nprotocol device {{}}\n{statics}protocol bgp fib {{\n  local 127.0.0.2 port {port} as 65001;\n  \
         neighbor 127.0.0.1 port {port} as 65000;\n  multihop;\n  strict bind on;\n  connect delay time 1;\n  \
         ipv4 {{ import none; export all; }};\n}}\n"
    );
    std::fs::write(dir.join("bgp.conf"), bgp).unwrap();
    let start = Instant::now();
    let _bird = bird(&["bird"], &dir, "bgp");
    wait(|| speaker.neighbours()[0].state == SessionState::Established);
    let established = Instant::now();
    wait(|| speaker.stats().routes4 == routes);
    println!(
        "fibkit over BGP: {:.2} s from the session's establishment to the last route in the FIB \
         ({:.2} s after BIRD's start; {} UPDATEs)",
        established.elapsed().as_secs_f64(),
        start.elapsed().as_secs_f64(),
        speaker.neighbours()[0].updates
    );
    drop(speaker);

    // 2. BIRD into the kernel, in a namespace of its own.
    let namespace = format!("fibkit-bird-{}", std::process::id());
    if !Command::new("ip").args(["netns", "add", &namespace]).status().is_ok_and(|status| status.success()) {
        println!("skipped: no network namespace (run as root)");
        return;
    }
    let kernel = format!(
        "router id 10.0.0.2;\nprotocol device {{}}\n{statics}protocol kernel k4 {{\n  kernel table 100;\n  \
         ipv4 {{ import none; export all; }};\n}}\n"
    );
    std::fs::write(dir.join("kernel.conf"), kernel).unwrap();
    let start = Instant::now();
    let bird_kernel = bird(&["ip", "netns", "exec", &namespace, "bird"], &dir, "kernel");
    let socket = dir.join("kernel.ctl");
    wait(|| exported(&socket) >= routes);
    let elapsed = start.elapsed();
    let in_kernel = Command::new("ip")
        .args(["netns", "exec", &namespace, "ip", "-4", "route", "show", "table", "100"])
        .output()
        .map(|output| output.stdout.iter().filter(|&&byte| byte == b'\n').count())
        .unwrap_or(0);
    println!(
        "BIRD into the kernel: {:.2} s from BIRD's start to every route exported ({in_kernel} routes in table 100)",
        elapsed.as_secs_f64()
    );
    drop(bird_kernel);
    let _ = Command::new("ip").args(["netns", "del", &namespace]).status();
    let _ = std::fs::remove_dir_all(&dir);
}

/// BIRD with `DIR/NAME.conf` and the control socket `DIR/NAME.ctl`.
fn bird(command: &[&str], dir: &std::path::Path, name: &str) -> Killed {
    let child = Command::new(command[0])
        .args(&command[1..])
        .arg("-f")
        .arg("-c")
        .arg(dir.join(format!("{name}.conf")))
        .arg("-s")
        .arg(dir.join(format!("{name}.ctl")))
        .stdout(Stdio::null())
        .spawn()
        .expect("start bird (apt-get install bird2)");
    Killed(child)
}

/// Routes the kernel protocol has exported, as `birdc` says.
fn exported(socket: &std::path::Path) -> usize {
    let Ok(output) = Command::new("birdc").arg("-s").arg(socket).args(["show", "protocols", "all", "k4"]).output()
    else {
        return 0;
    };
    let text = String::from_utf8_lossy(&output.stdout);
    // "Routes:         0 imported, 512621 exported, 0 preferred"
    text.lines()
        .find_map(|line| line.trim().strip_prefix("Routes:"))
        .and_then(|rest| rest.split(',').find(|part| part.contains("exported")))
        .and_then(|part| part.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn wait(mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(900), "not done within 15 minutes");
        std::thread::sleep(Duration::from_millis(1));
    }
}
