//! `fibkit serve` started by a test: its configuration written to a
//! folder of the test's own, its log collected, its HTTP address read from
//! the log, and requests sent by a real client (curl) or, for the hostile
//! cases, byte by byte over a TCP socket.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running `fibkit serve`, stopped with SIGTERM when dropped.
pub struct Served {
    child: Child,
    /// Its HTTP address.
    pub address: SocketAddr,
    /// The lines it logged so far.
    log: Arc<Mutex<Vec<String>>>,
    /// The folder of its configuration (and of whatever the test puts
    /// beside it).
    pub folder: PathBuf,
    /// The command its clients run through (`ip netns exec NAME` for a
    /// server in a network namespace), or nothing.
    via: Vec<String>,
}

impl Served {
    /// Writes `config` to `folder/serve.toml` and starts `fibkit serve`
    /// with it; returns once it listens.
    pub fn start(folder: &Path, config: &str) -> Served {
        Served::start_via(folder, config, &[])
    }

    /// [`Served::start`] through `via` (`["ip", "netns", "exec", NAME]`),
    /// which [`Served::curl`] runs through too.
    pub fn start_via(folder: &Path, config: &str, via: &[&str]) -> Served {
        std::fs::create_dir_all(folder).unwrap();
        let path = folder.join("serve.toml");
        std::fs::write(&path, config).unwrap();
        let via: Vec<String> = via.iter().map(ToString::to_string).collect();
        let mut command = match via.split_first() {
            Some((program, args)) => {
                let mut command = Command::new(program);
                command.args(args).arg(env!("CARGO_BIN_EXE_fibkit"));
                command
            }
            None => Command::new(env!("CARGO_BIN_EXE_fibkit")),
        };
        let mut child = command
            .arg("serve")
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start fibkit serve");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (collected, stderr) = (Arc::clone(&log), child.stderr.take().unwrap());
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if std::env::var_os("FIBKIT_SERVE_LOG").is_some() {
                    eprintln!("{line}");
                }
                collected.lock().unwrap().push(line);
            }
        });
        let address = SocketAddr::from(([127, 0, 0, 1], 0));
        let mut served = Served { child, address, log, folder: folder.into(), via };
        let line = served.wait_for_log("HTTP: listening on ", Duration::from_secs(120));
        served.address = line.rsplit(' ').next().unwrap().parse().unwrap();
        served
    }

    /// The log's lines so far.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    /// Waits until a log line contains `part`; that line. Panics after
    /// `limit`, or if the server ended.
    pub fn wait_for_log(&mut self, part: &str, limit: Duration) -> String {
        let start = Instant::now();
        loop {
            if let Some(line) = self.log().into_iter().find(|line| line.contains(part)) {
                return line;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("fibkit serve ended ({status}) before logging {part:?}:\n{}", self.log().join("\n"));
            }
            assert!(start.elapsed() < limit, "no log line with {part:?}:\n{}", self.log().join("\n"));
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Runs curl with `args` as [`curl`] does, through the server's `via`.
    pub fn curl(&self, args: &[&str]) -> Answer {
        let via: Vec<&str> = self.via.iter().map(String::as_str).chain(["curl"]).collect();
        curl_via(&via, args)
    }

    /// The URL of `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` to the server.
    pub fn signal(&self, signal: libc::c_int) {
        // SAFETY: kill has no memory preconditions; the pid is our child's.
        assert_eq!(unsafe { libc::kill(self.child.id() as libc::pid_t, signal) }, 0);
    }

    /// Its resident memory, in KiB.
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|line| line.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// Stops it with SIGTERM and waits; its exit status's success.
    pub fn stop(mut self) -> bool {
        self.signal(libc::SIGTERM);
        let status = self.child.wait().unwrap();
        status.success()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        // SAFETY: as in `signal`; the child may have ended already.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An answer: its status and body, and whether it says the connection
/// closes.
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
    pub closes: bool,
}

impl Answer {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Whether curl is installed; says `skipped` when not.
pub fn have_curl() -> bool {
    let installed = Command::new("curl").arg("--version").output().is_ok_and(|output| output.status.success());
    if !installed {
        eprintln!("skipped: curl is not installed (apt-get install curl)");
    }
    installed
}

/// Runs curl with `args` (a real HTTP client); its answer.
pub fn curl(args: &[&str]) -> Answer {
    curl_via(&["curl"], args)
}

/// Runs `command` (curl, or a command that runs it) with `args`.
fn curl_via(command: &[&str], args: &[&str]) -> Answer {
    let output = Command::new(command[0])
        .args(&command[1..])
        .args(["-sS", "-w", "\n%{http_code}"])
        .args(args)
        .output()
        .expect("run curl");
    assert!(output.status.success(), "curl {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    let mut body = output.stdout;
    let at = body.iter().rposition(|&byte| byte == b'\n').unwrap();
    let status = std::str::from_utf8(&body[at + 1..]).unwrap().parse().unwrap();
    body.truncate(at);
    Answer { status, body, closes: false }
}

/// Runs curl with `args`; what it printed (the bodies, one after the
/// other).
pub fn curl_output(args: &[&str]) -> String {
    let output = Command::new("curl").arg("-sS").args(args).output().expect("run curl");
    assert!(output.status.success(), "curl {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Sends `request` (the whole request, as bytes) on a new connection and
/// reads until the server closes it or `limit` passes; the status (0 if
/// no answer came) and what was read.
pub fn raw(address: SocketAddr, request: &[u8], limit: Duration) -> Answer {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(limit)).unwrap();
    let _ = stream.write_all(request);
    read_answer(&mut stream)
}

/// Reads from `stream` until it closes or its read timeout passes.
pub fn read_answer(stream: &mut TcpStream) -> Answer {
    let mut read = Vec::new();
    let mut buffer = [0u8; 65536];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(count) => read.extend_from_slice(&buffer[..count]),
        }
        if let Some(answer) = whole_answer(&read) {
            return answer;
        }
    }
    whole_answer(&read).unwrap_or(Answer { status: 0, body: read, closes: false })
}

/// The first answer in `read`, once its body is whole.
fn whole_answer(read: &[u8]) -> Option<Answer> {
    let end = read.windows(4).position(|window| window == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&read[..end]).ok()?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    let length: usize = head
        .lines()
        .find_map(|line| {
            line.to_ascii_lowercase().strip_prefix("content-length:").map(|value| value.trim().to_string())
        })?
        .parse()
        .ok()?;
    let body = read.get(end + 4..end + 4 + length)?;
    let closes = head.lines().any(|line| line.eq_ignore_ascii_case("connection: close"));
    Some(Answer { status, body: body.to_vec(), closes })
}

/// One `GET path` on `stream` (kept alive); its answer.
pub fn get_on(stream: &mut TcpStream, path: &str) -> Answer {
    stream.write_all(format!("GET {path} HTTP/1.1\r\nHost: fibkit\r\n\r\n").as_bytes()).unwrap();
    read_answer(stream)
}
