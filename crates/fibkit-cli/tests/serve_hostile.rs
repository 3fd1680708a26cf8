//! Hostile clients of `fibkit serve`: each gets the right HTTP status or a
//! closed connection and a log line naming it, while the server goes on
//! answering the others and its memory stays bounded.

mod common;

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::server::{get_on, raw, read_answer, Served};

/// A server of the repository's IPv4 cut with small bounds: 256
/// connections, 1 MiB bodies, 2 s for headers, 3 s for a body.
fn bounded(name: &str) -> Served {
    let folder = std::env::temp_dir().join(format!("fibkit-serve-hostile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    let table: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/routeviews-2014-05-13-cut.ipasn");
    let config = format!(
        "[http]\nlisten = [\"127.0.0.1:0\"]\nmax_connections = 256\nmax_body_bytes = 1048576\n\
         header_timeout_seconds = 2\nbody_timeout_seconds = 3\n[table]\npath = {:?}\n",
        table.display().to_string()
    );
    Served::start(&folder, &config)
}

/// The server still answers 8.8.8.8 as the table says.
fn still_serving(served: &Served) {
    let answer = raw(served.address, b"GET /lookup/8.8.8.8 HTTP/1.1\r\nHost: x\r\n\r\n", Duration::from_secs(5));
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert!(answer.text().contains("\"value\":15169"), "{}", answer.text());
}

/// Waits for a log line naming the client at `local` and containing `part`.
fn logged(served: &mut Served, local: SocketAddr, part: &str) -> String {
    let start = Instant::now();
    loop {
        let client = format!("client {local}: ");
        if let Some(line) = served.log().into_iter().find(|line| line.contains(&client) && line.contains(part)) {
            return line;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no log line naming {local} with {part:?}:\n{}",
            served.log().join("\n")
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `request` on a new connection; the answer and the client's
/// address.
fn ask(served: &Served, request: &[u8]) -> (common::server::Answer, SocketAddr) {
    let mut stream = TcpStream::connect(served.address).unwrap();
    let local = stream.local_addr().unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let _ = stream.write_all(request);
    (read_answer(&mut stream), local)
}

#[test]
fn a_gigabyte_body_or_a_batch_of_100_million_keys_gets_413() {
    let mut served = bounded("body");
    // Announced: refused from the header, before any of it is read.
    for (path, length) in [("/lookup", 1u64 << 30), ("/lookup/ipv4", 400_000_000)] {
        let request = format!("POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n");
        let started = Instant::now();
        let (answer, local) = ask(&served, request.as_bytes());
        assert_eq!(answer.status, 413, "{}", answer.text());
        assert!(answer.closes, "a 413 without Connection: close");
        assert!(started.elapsed() < Duration::from_secs(2));
        let line = logged(&mut served, local, "413");
        assert!(line.contains(&format!("a body of {length} bytes: the limit is 1048576")), "{line}");
    }
    // Not announced (chunked): refused once past the bound, as it comes.
    let mut stream = TcpStream::connect(served.address).unwrap();
    let local = stream.local_addr().unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(b"POST /lookup HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n").unwrap();
    let chunk = format!("{:x}\r\n{}\r\n", 1 << 16, "8.8.8.8\n".repeat(1 << 13));
    let mut sent = 0;
    while sent < 64 << 20 && stream.write_all(chunk.as_bytes()).is_ok() {
        sent += 1 << 16;
    }
    assert!(sent < 16 << 20, "the server read {sent} bytes of a body bounded at 1 MiB");
    let answer = read_answer(&mut stream);
    assert!(answer.status == 413 || answer.status == 0, "{}", answer.text());
    logged(&mut served, local, "413");
    still_serving(&served);
}

#[test]
fn a_byte_a_second_is_cut_off() {
    let mut served = bounded("slow");
    // Headers a byte at a time: closed once the header time is out.
    let mut stream = TcpStream::connect(served.address).unwrap();
    let local = stream.local_addr().unwrap();
    let started = Instant::now();
    let mut closed = false;
    for byte in b"GET /lookup/8.8.8.8 HTTP/1.1\r\nHost: x\r\n\r\n" {
        if stream.write_all(&[*byte]).is_err() {
            closed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(400));
        if started.elapsed() > Duration::from_secs(6) {
            break;
        }
    }
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let answer = read_answer(&mut stream);
    assert!(closed || answer.status != 200, "a slow client got its answer: {}", answer.text());
    logged(&mut served, local, "connection closed");
    // A body a byte at a time: 408 once the body time is out.
    let mut stream = TcpStream::connect(served.address).unwrap();
    let local = stream.local_addr().unwrap();
    stream.write_all(b"POST /lookup HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n").unwrap();
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(5) && stream.write_all(b"8").is_ok() {
        std::thread::sleep(Duration::from_millis(500));
    }
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(read_answer(&mut stream).status, 408);
    logged(&mut served, local, "408");
    still_serving(&served);
}

/// Raises the open-file limit to what `wanted` connections need; the
/// connections it allows.
fn open_files_for(wanted: usize) -> usize {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `limit` is a valid rlimit to fill.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) }, 0);
    limit.rlim_cur = limit.rlim_max.min(wanted as libc::rlim_t + 512);
    // SAFETY: as above; the soft limit is at most the hard one.
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) };
    (limit.rlim_cur as usize).saturating_sub(512).min(wanted)
}

#[test]
fn ten_thousand_idle_connections_do_not_stop_the_others() {
    let connections = open_files_for(10_000);
    if connections < 10_000 {
        eprintln!("the open-file limit allows {connections} connections here, not 10,000");
    }
    let mut served = bounded("idle");
    let rss_before = served.rss_kib();
    // A client with a connection of its own asks all along.
    let address = served.address;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let asking = {
        let stop = std::sync::Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut stream = TcpStream::connect(address).unwrap();
            stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut answered = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let answer = get_on(&mut stream, "/lookup/1.1.1.1");
                assert_eq!(answer.status, 200, "the kept client was refused during the flood");
                answered += 1;
                std::thread::sleep(Duration::from_millis(200));
            }
            answered
        })
    };
    let flood = Instant::now();
    let idle: Vec<TcpStream> = (0..connections).filter_map(|_| TcpStream::connect(address).ok()).collect();
    let flood = flood.elapsed();
    let rss_during = served.rss_kib();
    std::thread::sleep(Duration::from_secs(3));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let answered = asking.join().unwrap();
    let log = served.log();
    let refused = log.iter().filter(|line| line.contains("refused: 256 connections open already")).count();
    let timed_out = log.iter().filter(|line| line.contains("connection closed")).count();
    eprintln!(
        "{} idle connections opened in {:.1} s: {refused} refused at once, {timed_out} closed at the header time; \
         the kept client had {answered} answers; RSS {rss_before} KiB before, {rss_during} KiB during",
        idle.len(),
        flood.as_secs_f64(),
    );
    // Each idle connection is refused, or takes a slot until the header
    // time is out (the last 256 may still hold theirs). The kept client
    // holds one of the 256 slots all along, so a flood shorter than the
    // header time leaves 255 to idle connections.
    assert!(refused + timed_out + 256 >= idle.len(), "{refused} refused, {timed_out} timed out");
    assert!(timed_out >= 255, "the idle connections holding the slots were not closed: {timed_out}");
    assert!(answered >= 10, "{answered}");
    assert!(rss_during < rss_before + 64 * 1024, "RSS grew from {rss_before} to {rss_during} KiB");
    drop(idle);
    still_serving(&served);
    let line = served.wait_for_log("connection closed", Duration::from_secs(1));
    assert!(line.contains("client 127.0.0.1:"), "{line}");
}

#[test]
fn malformed_requests_get_400_naming_the_problem() {
    let mut served = bounded("malformed");
    for (request, status, part) in [
        (&b"GET /lookup/1.2.3 HTTP/1.1\r\nHost: x\r\n\r\n"[..], 400, "\\\"1.2.3\\\" is not an address"),
        (b"GET /lookup/010.0.0.1 HTTP/1.1\r\nHost: x\r\n\r\n", 400, "leading zero"),
        (b"POST /lookup HTTP/1.1\r\nHost: x\r\nContent-Length: 24\r\n\r\n8.8.8.8\n1.1.1.1\nbanana!\n", 400, "line 3"),
        (b"POST /lookup/ipv4 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n12345", 400, "not a whole number"),
        (b"POST /lookup?format=xml HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\n8.8.8.8\n", 400, "format=json"),
        (b"GET /lookup/../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n", 400, "`..` is not allowed"),
        (b"GET /%2e%2e/etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n", 400, "`..` is not allowed"),
        (b"GET /etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n", 404, "no such resource"),
        (b"DELETE /lookup HTTP/1.1\r\nHost: x\r\n\r\n", 405, "not this method"),
    ] {
        let (answer, local) = ask(&served, request);
        assert_eq!(answer.status, status, "{}: {}", String::from_utf8_lossy(request), answer.text());
        assert!(answer.text().contains(part), "{}: {}", String::from_utf8_lossy(request), answer.text());
        logged(&mut served, local, &status.to_string());
    }
    // Not HTTP at all: the connection closes, and the log says why.
    let (answer, local) = ask(&served, b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 hello\r\n\r\n");
    assert!(answer.status == 0 || answer.status == 400, "{}", answer.text());
    logged(&mut served, local, "connection closed");
    still_serving(&served);
}
