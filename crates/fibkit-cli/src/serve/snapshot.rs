//! Snapshots: every `every_seconds`, the routes as they are (one
//! published state, copied under the shadow's lock) compiled with their
//! prefixes and written as a compiled FIB file, atomically: a temporary
//! file in the same folder, then a rename over the old one. A process
//! that maps the old file keeps its pages and its answers; one that opens
//! the path afterwards gets the new file, whole. `fibkit lookup`, Python's
//! `fibkit.open` and Dask workers read it as any compiled file.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use fibkit::compiled::CompileOptions;

use super::http::Server;
use crate::registered;

/// The snapshot policy.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    /// The file written.
    pub path: PathBuf,
    /// Between two snapshots.
    pub every: Duration,
    /// The engines (IPv4, IPv6).
    pub engines: [String; 2],
}

/// The thread that writes snapshots; stopped when dropped.
pub struct Snapshots {
    /// The policy it follows.
    pub policy: Policy,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Snapshots {
    /// Starts writing snapshots of `server`'s routes: the first at once,
    /// then one each period in which the routes changed.
    pub fn start(server: Arc<Server>, policy: Policy) -> Snapshots {
        let stop = Arc::new(AtomicBool::new(false));
        let (stopping, following) = (Arc::clone(&stop), policy.clone());
        let thread = std::thread::Builder::new()
            .name("fibkit-serve-snapshots".into())
            .spawn(move || {
                let mut written = None;
                while !stopping.load(Ordering::Relaxed) {
                    let routes = Arc::clone(&server.routes.read().expect("routes lock"));
                    let started = Instant::now();
                    // The routes' identity: a reload may replace them.
                    let identity = Arc::as_ptr(&routes) as usize;
                    let last = written.filter(|&(written, _)| written == identity).map(|(_, generation)| generation);
                    match write(&routes, &following, last) {
                        Ok(Some(generation)) => {
                            written = Some((identity, generation));
                            let took = started.elapsed();
                            server.counters.snapshots.fetch_add(1, Ordering::Relaxed);
                            server.counters.snapshot_micros.store(took.as_micros() as u64, Ordering::Relaxed);
                        }
                        Ok(None) => {}
                        Err(error) => {
                            server.counters.snapshot_failures.fetch_add(1, Ordering::Relaxed);
                            eprintln!("fibkit serve: snapshot {}: {error:#}", following.path.display());
                        }
                    }
                    drop(routes);
                    let next = started + following.every;
                    while !stopping.load(Ordering::Relaxed) && Instant::now() < next {
                        std::thread::sleep(Duration::from_millis(50).min(following.every));
                    }
                }
            })
            .expect("spawn the snapshot thread");
        Snapshots { policy, stop, thread: Some(thread) }
    }
}

impl Drop for Snapshots {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Writes a snapshot of `routes` unless they are still at generation
/// `last`, written already; the generation written.
fn write(routes: &super::routes::Routes, policy: &Policy, last: Option<u64>) -> Result<Option<u64>> {
    // Nothing copied while the routes are as written last.
    if last == Some(routes.generation()) {
        return Ok(None);
    }
    let (table, generation) = routes.table();
    if last == Some(generation) || (table.v4.is_empty() && table.v6.is_empty()) {
        // Unchanged, or no route yet (no file to write: a compiled file
        // holds at least one family).
        return Ok(None);
    }
    let options = CompileOptions { engines: policy.engines.to_vec(), prefixes: true, ..Default::default() };
    let compiled = registered::compile(table, &options).context("compiling")?;
    compiled.to_file()?.write(&policy.path)?;
    Ok(Some(generation))
}
