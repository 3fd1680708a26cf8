//! The C library's live sources, used from C: `tests/test_sources.c` is
//! compiled against `libfibkit.a` and driven line by line while BIRD
//! announces routes to its BGP source, or while `ip` changes the routing
//! table its kernel source mirrors in a network namespace of the test's
//! own. Every answer the C program gives (through `fibkit_reader` bulk
//! lookups and `fibkit_source_value`) is checked against the table the
//! daemon or the kernel was given.

// The integration tests see the core crate by its own name, as the test
// support shared with `fibkit-sources` expects.
extern crate fibkit_core as fibkit;

#[path = "../../fibkit-sources/tests/common/mod.rs"]
mod common;

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use common::{installed, reference, wait_for, Bird, Scratch, Table};
use fibkit::load::{load_path, LoadOptions};
use fibkit::nexthop::Label;
use fibkit::random::XorShift64Pair;
use fibkit::{Address, Prefix, NO_ROUTE};

/// `tests/test_sources.c` compiled against the `libfibkit.a` that
/// `FIBKIT_C_LIBRARY` names; `None` (having said `skipped`) without it or
/// without a C compiler. (`cargo test` does not build the crate's static
/// library; `make test-c` builds it, then runs these tests with it.)
fn compiled(scratch: &Scratch) -> Option<PathBuf> {
    let Some(library) = std::env::var_os("FIBKIT_C_LIBRARY").map(PathBuf::from) else {
        eprintln!("skipped: FIBKIT_C_LIBRARY is not set (make test-c builds libfibkit.a and runs this test)");
        return None;
    };
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let compiler = installed(&compiler, "gcc")?;
    assert!(library.exists(), "FIBKIT_C_LIBRARY: {} does not exist", library.display());
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let program = scratch.0.join("test_sources");
    let output = Command::new(compiler)
        .args(["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-pedantic", "-pthread"])
        .arg(format!("-I{}", crate_dir.join("include").display()))
        .arg(crate_dir.join("tests/test_sources.c"))
        .arg(&library)
        .args(["-ldl", "-lm", "-o"])
        .arg(&program)
        .output()
        .unwrap();
    assert!(output.status.success(), "cc: {}", String::from_utf8_lossy(&output.stderr));
    Some(program)
}

/// The C program, answering commands a line each.
struct Program {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Program {
    /// Starts `program` (in network namespace `netns` if given).
    fn start(program: &Path, netns: Option<&str>) -> Program {
        let mut command = match netns {
            Some(name) => {
                let mut command = Command::new("ip");
                command.args(["netns", "exec", name]).arg(program);
                command
            }
            None => Command::new(program),
        };
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let (input, output) = (child.stdin.take().unwrap(), BufReader::new(child.stdout.take().unwrap()));
        Program { child, input, output }
    }

    /// Sends `command`; the words of its `ok` answer (the `log` lines
    /// before it joined into the first word of `log`).
    fn ask(&mut self, command: &str) -> Vec<String> {
        writeln!(self.input, "{command}").unwrap();
        let mut log = String::new();
        loop {
            let mut line = String::new();
            assert!(self.output.read_line(&mut line).unwrap() > 0, "{command}: the program ended");
            if let Some(text) = line.strip_prefix("log ") {
                log.push_str(text);
                continue;
            }
            let words: Vec<String> = line.split_whitespace().map(String::from).collect();
            assert_eq!(words.first().map(String::as_str), Some("ok"), "{command}: {line}");
            return if command == "log" { vec![log] } else { words[1..].to_vec() };
        }
    }

    /// Numbers of an `ok` answer.
    fn numbers(&mut self, command: &str) -> Vec<u64> {
        self.ask(command).iter().map(|word| word.parse().unwrap_or(u64::MAX)).collect()
    }

    /// The C program's answer for each of `addrs`: a value's text, or `-`.
    fn lookup(&mut self, scratch: &Scratch, addrs: &[String]) -> Vec<String> {
        let (input, output) = (scratch.0.join("addresses"), scratch.0.join("answers"));
        std::fs::write(&input, addrs.join("\n") + "\n").unwrap();
        let answered = self.ask(&format!("lookup {} {}", input.display(), output.display()));
        assert_eq!(answered, [addrs.len().to_string()]);
        std::fs::read_to_string(&output).unwrap().lines().map(String::from).collect()
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Addresses to check `table` at: both ends of every range of its
/// reference, and `randoms` random ones (in 2000::/3 for IPv6); each with
/// the answer it must get.
fn probes<A: Address>(table: &Table<A>, randoms: usize) -> (Vec<String>, Vec<String>) {
    let (rib, labels) = reference(table);
    let text = |hop: u32| if hop == NO_ROUTE { "-".to_string() } else { labels[hop as usize - 1].to_string() };
    let (mut addrs, mut expected) = (Vec::new(), Vec::new());
    rib.for_each_range(A::ZERO, A::MAX, |range| {
        for addr in [range.first, range.last] {
            addrs.push(addr.display());
            expected.push(text(range.next_hop));
        }
    });
    let mut random = XorShift64Pair::new(0x5eed);
    for _ in 0..randoms {
        // IPv6 addresses where the routes are: 2000::/3.
        let mut first = A::BITS == 128;
        let addr = A::from_words(|| {
            let word = random.next() as u32;
            if std::mem::take(&mut first) {
                word >> 3 | 1 << 29
            } else {
                word
            }
        });
        addrs.push(addr.display());
        expected.push(text(rib.lookup(addr)));
    }
    (addrs, expected)
}

/// The C program's answers equal `table`'s; returns how many were checked.
fn check<A: Address>(program: &mut Program, scratch: &Scratch, table: &Table<A>) -> usize {
    let (addrs, expected) = probes(table, 20_000);
    let answers = program.lookup(scratch, &addrs);
    for ((addr, want), got) in addrs.iter().zip(&expected).zip(&answers) {
        assert_eq!(got, want, "{} at {addr}", A::FAMILY);
    }
    addrs.len()
}

/// A cut of a real table from the repository, values origin ASNs.
fn cut<A: Address>(file: &str) -> Table<A> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data").join(file);
    let loaded = load_path(&path, &LoadOptions::default()).unwrap();
    let mut table = Table::new();
    let routes = loaded.v4.iter().map(|(prefix, hop)| (fibkit::addr::IpPrefix::V4(prefix), hop));
    for (prefix, hop) in routes.chain(loaded.v6.iter().map(|(prefix, hop)| (fibkit::addr::IpPrefix::V6(prefix), hop))) {
        let Some(prefix) = prefix.of::<A>() else { continue };
        let label = match loaded.next_hops.label(hop).unwrap() {
            Label::Number(asn) => Label::Number(asn),
            Label::Addr(_) | Label::Record(_) => Label::Number(4_200_000_000 + u64::from(hop)),
        };
        table.insert(prefix, label);
    }
    table
}

/// BIRD's configuration: `table4` and `table6` as static routes with
/// their origin AS, exported to the C program's source at `port`.
fn bird_config(port: u16, table4: &Table<u32>, table6: &Table<u128>) -> String {
    let mut config = "router id 10.0.0.2;\nprotocol device {}\n".to_string();
    fn statics<A: Address>(config: &mut String, name: &str, table: &Table<A>) {
        writeln!(config, "protocol static {name} {{\n  {};", if A::BITS == 32 { "ipv4" } else { "ipv6" }).unwrap();
        for (prefix, label) in table {
            writeln!(config, "  route {prefix} blackhole {{ bgp_path.prepend({label}); }};").unwrap();
        }
        config.push_str("}\n");
    }
    statics(&mut config, "s4", table4);
    statics(&mut config, "s6", table6);
    write!(
        config,
        "protocol bgp c {{\n  local 127.0.0.2 port {port} as 65001;\n  neighbor 127.0.0.1 port {port} as 65000;\n  \
         multihop;\n  strict bind on;\n  ipv4 {{ import none; export all; }};\n  \
         ipv6 {{ import none; export all; next hop address 2001:db8::2; }};\n}}\n"
    )
    .unwrap();
    config
}

/// Waits until the C program's source holds `routes4` and `routes6`
/// routes and has applied nothing for half a second.
fn settle(program: &mut Program, routes4: usize, routes6: usize) {
    let mut last = (u64::MAX, std::time::Instant::now());
    wait_for("the source to settle", Duration::from_secs(120), || {
        let stats = program.numbers("stats");
        if stats[2] != last.0 {
            last = (stats[2], std::time::Instant::now());
        }
        stats[..2] == [routes4 as u64, routes6 as u64] && last.1.elapsed() > Duration::from_millis(500)
    });
}

#[test]
fn the_error_paths_of_the_source_calls() {
    let scratch = Scratch::new("c-source-errors");
    let Some(program) = compiled(&scratch) else { return };
    let output = Command::new(program).arg("errors").output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success() && text.contains(" passed, 0 failed"), "{text}");
}

#[test]
fn a_c_program_follows_bird_and_its_readers_answer_as_bird_was_told() {
    let Some(bird) = installed("bird", "bird2") else { return };
    let scratch = Scratch::new("c-source-bird");
    let Some(binary) = compiled(&scratch) else { return };
    let mut program = Program::start(&binary, None);
    let port = program.ask("bgp 65000 10.255.0.1 origin-as 127.0.0.1:0 127.0.0.2,as=65001")[0].parse().unwrap();
    let (table4, table6) = (cut::<u32>("routeviews-2014-05-13-cut.ipasn"), cut::<u128>("linx-p69-2014-12-25-cut.rib6"));
    let bird = Bird::start(&bird, &scratch, &bird_config(port, &table4, &table6));
    settle(&mut program, table4.len(), table6.len());
    let neighbour = program.ask("neighbor 0");
    assert_eq!(neighbour[0], "3", "established: {neighbour:?}");
    assert_eq!(neighbour[1], (table4.len() + table6.len()).to_string());
    assert_eq!(neighbour[4], "127.0.0.2");
    let checked = check(&mut program, &scratch, &table4) + check(&mut program, &scratch, &table6);
    eprintln!("{} + {} routes from BIRD: {checked} answers from C equal BIRD's", table4.len(), table6.len());

    // Every 20th route withdrawn and every 20th changed, while two C
    // threads look up through readers of their own.
    let churn = |table: &Table<u32>| -> Table<u32> {
        let changed = |(at, (&prefix, &label)): (usize, (&Prefix<u32>, &Label))| match at % 20 {
            0 => None,
            7 => Some((prefix, Label::Number(label.as_number() % 4_000_000_000 + 1))),
            _ => Some((prefix, label)),
        };
        table.iter().enumerate().filter_map(changed).collect()
    };
    let next4 = churn(&table4);
    program.ask("spin");
    bird.reconfigure(&bird_config(port, &next4, &table6));
    settle(&mut program, next4.len(), table6.len());
    let lookups = program.numbers("unspin")[0];
    assert!(lookups > 0, "the reader threads looked nothing up");
    let checked = check(&mut program, &scratch, &next4) + check(&mut program, &scratch, &table6);
    eprintln!("after churn: {checked} answers equal BIRD's; {lookups} lookups from two C threads during it");

    // Stopping ends the session with a Cease; the readers stay, with the
    // routes withdrawn.
    let log = program.ask("log").remove(0);
    assert!(log.contains("neighbour 127.0.0.2 (AS 65001): established"), "{log}");
    program.ask("stop");
    check(&mut program, &scratch, &Table::<u32>::new());
    wait_for("BIRD to see the Cease", Duration::from_secs(30), || {
        bird.birdc("show protocols all c").contains("Administrative shutdown")
    });
}

#[cfg(target_os = "linux")]
#[test]
fn a_c_program_mirrors_the_kernel_table_and_answers_as_ip_route_shows() {
    use common::kernel::Netns;
    use fibkit_sources::netlink::RouteValue;

    let Some(netns) = Netns::new("c") else { return };
    let scratch = Scratch::new("c-source-kernel");
    let Some(binary) = compiled(&scratch) else { return };
    netns.interfaces();
    // 5,000 random prefixes of each family (one in ten IPv4 ones a
    // blackhole), each a line of `ip -batch`.
    let (mut routes4, mut routes6) = (std::collections::BTreeMap::new(), std::collections::BTreeMap::new());
    let mut random = XorShift64Pair::new(7);
    for at in 0..5_000u32 {
        let word = random.next() as u32;
        let (len, hop) = (8 + word % 25, 1 + (word >> 8) % 200);
        let prefix = Prefix::truncating(word.rotate_left(7), len as u8);
        let route = if at % 10 == 0 { "blackhole".to_string() } else { format!("via 10.255.1.{hop} dev d0") };
        routes4.insert(prefix, route);
        let prefix6 = Prefix::truncating(0x2001_0db8u128 << 96 | u128::from(word) << 64, 32 + len as u8);
        routes6.insert(prefix6, format!("via 2001:db8:fffe::1:{hop:x} dev d1"));
    }
    let lines = |verb: &str, every: usize| -> String {
        let line = |prefix: String, route: &String| match route.as_str() {
            "blackhole" => format!("route {verb} blackhole {prefix} table 100\n"),
            _ => format!("route {verb} {prefix} {route} table 100\n"),
        };
        let lines4 = routes4.iter().step_by(every).map(|(prefix, route)| line(prefix.to_string(), route));
        lines4.chain(routes6.iter().step_by(every).map(|(prefix, route)| line(prefix.to_string(), route))).collect()
    };
    netns.batch(&lines("add", 1));
    let mut program = Program::start(&binary, Some(&netns.name));
    let started = program.numbers("kernel 100 gateway");
    let (kernel4, kernel6) = (
        netns.kernel_table::<u32>("100", RouteValue::Gateway, Some(Label::Number(0))),
        netns.kernel_table::<u128>("100", RouteValue::Gateway, Some(Label::Number(0))),
    );
    assert_eq!(started[1..], [kernel4.len() as u64, kernel6.len() as u64], "the dump is in when the start returns");
    let checked = check(&mut program, &scratch, &kernel4) + check(&mut program, &scratch, &kernel6);
    eprintln!("{} + {} kernel routes: {checked} answers from C equal ip route's", kernel4.len(), kernel6.len());

    // Half the routes deleted, while two C threads look up.
    program.ask("spin");
    netns.batch(&lines("del", 2));
    let (after4, after6) = (
        netns.kernel_table::<u32>("100", RouteValue::Gateway, Some(Label::Number(0))),
        netns.kernel_table::<u128>("100", RouteValue::Gateway, Some(Label::Number(0))),
    );
    settle(&mut program, after4.len(), after6.len());
    assert!(program.numbers("unspin")[0] > 0);
    let checked = check(&mut program, &scratch, &after4) + check(&mut program, &scratch, &after6);
    eprintln!("after deletions: {checked} answers equal ip route's");
}
