//! `fibkit follow` with BIRD 2 as its neighbour: the routes BIRD
//! announces are printed as they land, and withdrawn when BIRD stops.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Lines of `fibkit follow`'s output until `wanted` are all seen (or 60 s).
fn lines_until(lines: &mpsc::Receiver<String>, wanted: &[&str]) -> Vec<String> {
    let mut seen = Vec::new();
    let start = Instant::now();
    while !wanted.iter().all(|line| seen.iter().any(|seen: &String| seen == line)) {
        let left = Duration::from_secs(60).saturating_sub(start.elapsed());
        match lines.recv_timeout(left) {
            Ok(line) => seen.push(line),
            Err(_) => panic!("fibkit follow printed {seen:?}, not all of {wanted:?}"),
        }
    }
    seen
}

#[test]
fn follow_prints_what_bird_announces_and_withdraws() {
    if !std::path::Path::new("/usr/sbin/bird").exists() {
        eprintln!("skipped: bird is not installed (apt-get install bird2, or make setup)");
        return;
    }
    let port = free_port();
    let follow = Command::new(env!("CARGO_BIN_EXE_fibkit"))
        .args(["follow", "--local-as", "65000", "--router-id", "10.255.0.1"])
        .args(["--listen", &format!("127.0.0.1:{port}"), "--neighbor", "127.0.0.2,as=65001", "--value", "origin-as"])
        .args(["--seconds", "120"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut follow = Killed(follow);
    let (sender, lines) = mpsc::channel();
    let stdout = follow.0.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = sender.send(line);
        }
    });
    let dir = std::env::temp_dir().join(format!("fibkit-follow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = format!(
        "router id 10.0.0.2;\nprotocol device {{}}\n\
         protocol static s4 {{ ipv4; route 10.1.0.0/16 blackhole {{ bgp_path.prepend(64501); }}; \
         route 10.2.0.0/16 blackhole {{ bgp_path.prepend(64502); }}; }}\n\
         protocol static s6 {{ ipv6; route 2001:db8::/32 blackhole {{ bgp_path.prepend(64503); }}; }}\n\
         protocol bgp fib {{ local 127.0.0.2 port {port} as 65001; neighbor 127.0.0.1 port {port} as 65000; multihop; strict bind on;\n\
         ipv4 {{ import none; export all; }}; ipv6 {{ import none; export all; next hop address 2001:db8::2; }}; }}\n"
    );
    std::fs::write(dir.join("bird.conf"), config).unwrap();
    let bird = Command::new("/usr/sbin/bird")
        .args(["-f", "-c"])
        .arg(dir.join("bird.conf"))
        .arg("-s")
        .arg(dir.join("bird.ctl"))
        .spawn()
        .unwrap();
    let bird = Killed(bird);
    lines_until(&lines, &["+ 10.1.0.0/16 64501", "+ 10.2.0.0/16 64502", "+ 2001:db8::/32 64503"]);
    drop(bird);
    lines_until(&lines, &["- 10.1.0.0/16", "- 10.2.0.0/16", "- 2001:db8::/32"]);
    // SIGTERM: a clean stop with a summary naming the neighbour.
    // SAFETY: signalling the child this test started.
    unsafe { libc::kill(follow.0.id() as libc::pid_t, libc::SIGTERM) };
    let output = std::mem::replace(&mut follow.0, Command::new("true").spawn().unwrap()).wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("neighbour 127.0.0.2 (AS 65001): established"), "{stderr}");
    assert!(stderr.contains("neighbour 127.0.0.2 (AS 65001): idle, 0 prefixes"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
