//! What every experiment of `fibkit reproduce` draws on: the tables at
//! hand (the shared data, else the embedded default table), the engines
//! built on them, rates measured as `fibkit bench` measures them, and the
//! progress lines.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

use anyhow::{Context, Result};
use fibkit::addr::Address;
use fibkit::fib::{Calibration, Fib, Figure};
use fibkit::load::{self, LoadOptions, RouteTable};
use fibkit::measure::workload::Workload;
use fibkit::nexthop::Mapping;
use fibkit::random::{worker_seed, Keyed};

use crate::bench::machine::Machine;
use crate::bench::run::{calibrate, run_once, Rate};
use crate::registered;

/// The IPv4 table of the papers' era in the shared data.
pub(crate) const IPV4_TABLE: &str = "routeviews-2014-05-13.ipasn.gz";
/// The IPv6 table of the Poptrie paper's size.
pub(crate) const IPV6_TABLE: &str = "linx-p69-2014-12-25.rib6.gz";
/// The Poptrie paper's update trace.
pub(crate) const UPDATE_TRACE: &str = "linx-p52-2014-12-17.updates.gz";

/// How long and how often things are measured.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Effort {
    /// Seconds a rate measurement lasts (about).
    pub(crate) seconds: f64,
    /// Runs of each rate measurement (median, min and max reported).
    pub(crate) runs: usize,
    /// Keys timed one by one for the cycle distributions.
    pub(crate) cycle_keys: usize,
    /// Addresses sampled for the heat map of Figure 7.
    pub(crate) heat_samples: usize,
}

impl Effort {
    /// `--quick`: the whole report in under two minutes.
    pub(crate) const QUICK: Effort = Effort { seconds: 0.04, runs: 3, cycle_keys: 1 << 20, heat_samples: 1 << 20 };
    /// The full run: the papers' key counts, rates over 1 s, 5 runs.
    pub(crate) const FULL: Effort = Effort { seconds: 1.0, runs: 5, cycle_keys: 1 << 24, heat_samples: 1 << 26 };
}

/// A table loaded for an experiment, and what it is.
pub(crate) struct Table {
    pub(crate) table: RouteTable,
    /// How the report names it: file (or "embedded default"), prefixes,
    /// next hops and mapping.
    pub(crate) description: String,
}

/// The experiments' shared state.
pub(crate) struct Lab {
    pub(crate) effort: Effort,
    pub(crate) machine: Machine,
    cores: Vec<core_affinity::CoreId>,
    data: Option<PathBuf>,
    /// `--table`: the IPv4 table that stands in, in place of the shared one.
    table: Option<PathBuf>,
    started: Instant,
    tables: HashMap<(String, u32), Rc<Table>>,
}

impl Lab {
    pub(crate) fn new(effort: Effort, data: Option<PathBuf>, table: Option<PathBuf>) -> Lab {
        Lab {
            effort,
            machine: Machine::detect(),
            cores: core_affinity::get_core_ids().unwrap_or_default(),
            data,
            table,
            started: Instant::now(),
            tables: HashMap::new(),
        }
    }

    /// A progress line on standard error, with the time since the start.
    pub(crate) fn progress(&self, message: impl AsRef<str>) {
        eprintln!("[{:>4.0} s] {}", self.started.elapsed().as_secs_f64(), message.as_ref());
    }

    /// The shared data file `name`, if the data directory has it.
    pub(crate) fn data_file(&self, name: &str) -> Option<PathBuf> {
        self.data.as_ref().map(|dir| dir.join(name)).filter(|path| path.is_file())
    }

    /// The IPv4 table mapped onto `next_hops` next hops (`value % N + 1`):
    /// `--table`'s, else the shared 2014 table, else the embedded default
    /// table.
    pub(crate) fn ipv4(&mut self, next_hops: u32) -> Result<Rc<Table>> {
        if let Some(path) = self.table.clone() {
            let table = self.load(&path, next_hops)?;
            if table.table.v4.is_empty() {
                anyhow::bail!("--table {}: no IPv4 route to stand in for the papers' tables", path.display());
            }
            return Ok(table);
        }
        match self.data_file(IPV4_TABLE) {
            Some(path) => self.load(&path, next_hops),
            None => {
                let key = ("default".to_string(), next_hops);
                if let Some(table) = self.tables.get(&key) {
                    return Ok(table.clone());
                }
                let table = load::synthetic::default_table(Mapping::Modulo(next_hops));
                let description = format!(
                    "the embedded default table ({} prefixes, synthetic; {} not found), values mapped onto {next_hops} next hops",
                    table.prefixes(fibkit::addr::Family::Ipv4),
                    IPV4_TABLE
                );
                let table = Rc::new(Table { table, description });
                self.tables.insert(key, table.clone());
                Ok(table)
            }
        }
    }

    /// The shared IPv6 table with one next hop per distinct next hop, if
    /// the data directory has it.
    pub(crate) fn ipv6(&mut self) -> Result<Option<Rc<Table>>> {
        match self.data_file(IPV6_TABLE) {
            Some(path) => self.load(&path, 0).map(Some),
            None => Ok(None),
        }
    }

    /// `path` loaded with `next_hops` next hops (0: one per distinct
    /// value), once.
    fn load(&mut self, path: &Path, next_hops: u32) -> Result<Rc<Table>> {
        let key = (path.display().to_string(), next_hops);
        if let Some(table) = self.tables.get(&key) {
            return Ok(table.clone());
        }
        self.progress(format!("loading {}", path.display()));
        let mapping = if next_hops == 0 { Mapping::Distinct } else { Mapping::Modulo(next_hops) };
        let options = LoadOptions { mapping, ..Default::default() };
        let table = load::load_path(path, &options).with_context(|| format!("loading {}", path.display()))?;
        let name = load::table_name(path);
        let family = if table.v4.is_empty() { fibkit::addr::Family::Ipv6 } else { fibkit::addr::Family::Ipv4 };
        let description = format!(
            "{name} ({} {family} prefixes, {} next hops{})",
            table.prefixes(family),
            table.next_hops_of(family),
            if next_hops == 0 { String::new() } else { format!(", values mapped onto {next_hops}") }
        );
        let table = Rc::new(Table { table, description });
        self.tables.insert(key, table.clone());
        Ok(table)
    }

    /// Engine `name` built on `table`, with its build time in seconds.
    pub(crate) fn build<A: Address>(&self, name: &str, table: &RouteTable) -> Result<(Box<dyn Fib<A>>, f64)> {
        let engine = registered::find(name).with_context(|| format!("engine {name} is not registered"))?;
        let (fib, build_ms) = crate::family::build_timed::<A>(engine, table, &Calibration::Default)?;
        Ok((fib, build_ms / 1e3))
    }

    /// The rate of each `(fib, workload)` on `threads` threads (worker `t`
    /// seeded with [`worker_seed`]`(t)`), each worker doing `lookups` lookups
    /// or, without, as many as last the effort's seconds; the effort's runs
    /// in interleaved rounds, as `fibkit bench` does.
    pub(crate) fn rates<A: Keyed>(
        &self,
        slots: &[(&dyn Fib<A>, Workload<A>)],
        threads: usize,
        lookups: Option<u64>,
    ) -> Vec<Rate> {
        let lookups: Vec<u64> = slots
            .iter()
            .map(|(fib, workload)| {
                lookups.unwrap_or_else(|| calibrate(*fib, workload, self.effort.seconds, &self.cores))
            })
            .collect();
        let mut runs = vec![Vec::with_capacity(self.effort.runs); slots.len()];
        for _ in 0..self.effort.runs {
            for (slot, (fib, workload)) in slots.iter().enumerate() {
                let workload_of = |thread| Workload { seed: worker_seed(thread), ..workload.clone() };
                let (mlps, _, _) = run_once(*fib, &workload_of, threads, lookups[slot], &self.cores);
                runs[slot].push(mlps);
            }
        }
        runs.into_iter().map(Rate::of).collect()
    }

    /// How many cores the OS lets the lookups run on.
    pub(crate) fn cores(&self) -> usize {
        self.cores.len().max(1)
    }
}

/// A numeric figure of an engine's statistics, by key.
pub(crate) fn stat(fib: &dyn Fib<impl Address>, key: &str) -> Option<f64> {
    fib.stats().figures.into_iter().find(|(name, _)| name == key).and_then(|(_, figure)| match figure {
        Figure::Count(value) => Some(value as f64),
        Figure::Real(value) => Some(value),
        Figure::Text(_) => None,
    })
}
