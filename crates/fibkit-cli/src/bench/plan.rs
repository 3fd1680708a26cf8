//! What a bench run measures: the validated [`Plan`] (engines, tests,
//! thread counts, batch lengths, per-engine [`Config`]s) and the workloads
//! it hands the workers.

use std::collections::BTreeSet;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use fibkit::addr::{Address, Family, IpPrefix, Prefix};
use fibkit::fib::Calibration;
use fibkit::measure::workload::{Test, Workload};
use fibkit::random::{KeyGen, Keyed};
use fibkit::registry::Engine;

use super::args::{default_engines, default_threads, dxr_k, BenchArgs, TestName};
use crate::family::select_engines;
use crate::registered;

/// One measured configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Config {
    pub(super) test: TestName,
    pub(super) batch: usize,
    pub(super) threads: usize,
}

/// What to run on addresses of type `A`, validated.
#[derive(Debug)]
pub(super) struct Plan<A: Address> {
    /// Engines the user asked for (or the default list).
    pub(super) engines: Vec<&'static Engine>,
    /// Per engine to run (the selection, then DXR engines only `--plot`
    /// needs), the configurations to measure.
    pub(super) work: Vec<(&'static Engine, Vec<Config>)>,
    pub(super) tests: Vec<TestName>,
    pub(super) threads: Vec<usize>,
    pub(super) batches: Vec<usize>,
    pub(super) seconds: f64,
    pub(super) runs: usize,
    /// The `--keys` file's addresses.
    keys: Option<Arc<[A]>>,
    /// Where random keys are drawn (`--space`, IPv6 only).
    pub(super) space: Prefix<A>,
}

impl<A: Keyed> Plan<A> {
    /// Checks the arguments and loads the key file; touches no table.
    pub(super) fn new(args: &BenchArgs, cores: usize) -> Result<Self> {
        let mut engines = match &args.engines {
            Some(spec) => select_engines::<A>(spec)?,
            None => default_engines(A::FAMILY),
        };
        let space = match args.space {
            Some(space) => IpPrefix::from(space)
                .of::<A>()
                .with_context(|| "--space sets where random IPv6 keys are drawn; this run is IPv4 (add -6)")?,
            None => A::Keys::default_space(),
        };
        let mut seen = BTreeSet::new();
        engines.retain(|engine| seen.insert(engine.name));
        let mut tests: Vec<TestName> = args.tests.clone();
        if args.keys.is_some() && !tests.contains(&TestName::Keys) {
            tests.push(TestName::Keys);
        }
        if tests.contains(&TestName::Keys) && args.keys.is_none() {
            bail!("the keys test needs --keys FILE");
        }
        tests.sort();
        tests.dedup();
        let mut threads = if args.threads.is_empty() { default_threads(cores) } else { args.threads.clone() };
        threads.sort_unstable();
        threads.dedup();
        let mut batches = args.batch.clone();
        batches.sort_unstable();
        batches.dedup();
        let keys = match &args.keys {
            Some(path) => {
                let file = fibkit::load::load_keys_for::<A>(path)?;
                if let Some(capture) = file.capture {
                    eprintln!("{}: {capture}", path.display());
                }
                Some(Arc::from(file.keys))
            }
            None => None,
        };
        let mut work: Vec<(&'static Engine, Vec<Config>)> = Vec::new();
        for &engine in &engines {
            let mut configs = BTreeSet::new();
            for &test in &tests {
                let test_batches: &[usize] = if test == TestName::Seq { &[0] } else { &batches };
                for &batch in test_batches {
                    for &threads in &threads {
                        configs.insert(Config { test, batch, threads });
                    }
                }
            }
            work.push((engine, configs.into_iter().collect()));
        }
        if args.plot.is_some() && A::FAMILY == Family::Ipv4 {
            let sweep = [TestName::Seq, TestName::Rnd, TestName::Rep].map(|test| Config { test, batch: 0, threads: 1 });
            for spec in registered::engines_of(Family::Ipv4).into_iter().filter(|spec| dxr_k(spec.name).is_some()) {
                match work.iter_mut().find(|(engine, _)| engine.name == spec.name) {
                    Some((_, configs)) => {
                        for config in sweep {
                            if !configs.contains(&config) {
                                configs.push(config);
                            }
                        }
                        configs.sort();
                    }
                    None => work.push((spec, sweep.to_vec())),
                }
            }
        }
        Ok(Plan {
            engines,
            work,
            tests,
            threads,
            batches,
            seconds: args.seconds.unwrap_or(if args.long { 2.0 } else { 0.25 }),
            runs: args.runs.unwrap_or(if args.long { 5 } else { 3 }),
            keys,
            space,
        })
    }

    pub(super) fn workload(&self, test: TestName, batch: usize, seed: u64) -> Workload<A> {
        let test = match test {
            TestName::Seq => Test::Seq,
            TestName::Rnd => Test::Rnd,
            TestName::Rep => Test::Rep,
            TestName::Sweep => Test::Sweep,
            TestName::Rep16 => Test::Rep16,
            TestName::Keys => Test::Keys(self.keys.clone().expect("the plan checked --keys")),
        };
        Workload { test, batch, seed, space: self.space }
    }

    /// The keys `auto` measures its candidates on: the `--keys` file's,
    /// else random keys in the space of the random tests.
    pub(super) fn calibration(&self) -> Calibration<A> {
        match &self.keys {
            Some(keys) => Calibration::Keys(keys.clone()),
            None => Calibration::Space(self.space),
        }
    }

    /// How many keys the `--keys` file had.
    pub(super) fn key_count(&self) -> usize {
        self.keys.as_ref().map_or(0, |keys| keys.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn parse(line: &[&str]) -> Result<BenchArgs, clap::Error> {
        let mut argv = vec!["fibkit", "bench"];
        argv.extend_from_slice(line);
        match crate::Cli::try_parse_from(argv)?.command {
            crate::Command::Bench(args) => Ok(args),
            _ => unreachable!("parsed as bench"),
        }
    }

    fn plan(line: &[&str]) -> Result<Plan<u32>> {
        Plan::new(&parse(line)?, 2)
    }

    fn plan6(line: &[&str]) -> Result<Plan<u128>> {
        Plan::new(&parse(line)?, 2)
    }

    fn names(engines: &[&'static Engine]) -> Vec<&'static str> {
        engines.iter().map(|engine| engine.name).collect()
    }

    fn error_of(line: &[&str]) -> String {
        match plan(line) {
            Ok(plan) => panic!("{line:?} was accepted: {plan:?}"),
            Err(error) => format!("{error:#}"),
        }
    }

    #[test]
    fn thread_count_zero_is_refused_clearly() {
        let message = error_of(&["--threads", "1,0"]);
        assert!(message.contains("a thread count must be from 1 to 4096, not 0"), "{message}");
        assert!(error_of(&["--threads", "two"]).contains("not a thread count"));
    }

    #[test]
    fn unknown_engine_is_named_with_the_known_ones() {
        let message = error_of(&["--engines", "d18r,nonesuch"]);
        assert!(message.contains("unknown engine \"nonesuch\""), "{message}");
        assert!(message.contains("radix") && message.contains("treebitmap"), "{message}");
    }

    #[test]
    fn missing_key_file_is_named() {
        let message = error_of(&["--keys", "no/such/keys.txt"]);
        assert!(message.contains("no/such/keys.txt"), "{message}");
    }

    #[test]
    fn other_argument_errors() {
        assert!(error_of(&["--tests", "seq,fast"]).contains("fast"));
        assert!(error_of(&["--tests", "keys"]).contains("needs --keys"));
        assert!(error_of(&["--seconds", "0"]).contains("a number of seconds must be from 0.001 to 86400"));
        assert!(error_of(&["--seconds", "nan"]).contains("must be from"));
        assert!(error_of(&["--runs", "0"]).contains("a run count must be from 1 to 1000"));
        assert!(error_of(&["--batch", "0,100000"]).contains("a batch length must be from 0 to"));
    }

    #[test]
    fn default_plan_runs_the_default_dxr_and_every_peer() {
        let plan = plan(&[]).unwrap();
        let engines = names(&plan.engines);
        for name in ["d16r", "d18r", "d20r", "radix", "prefix-trie", "treebitmap", "poptrie-crate"] {
            assert!(engines.contains(&name), "{name} missing from {engines:?}");
        }
        for name in ["d17r", "d19r", "d21r", "d22r"] {
            assert!(!engines.contains(&name), "{name} is run by default");
        }
        assert_eq!(plan.threads, vec![1, 2]);
        assert_eq!(plan.tests, vec![TestName::Seq, TestName::Rnd, TestName::Rep]);
        // 3 tests x 2 thread counts, batch 0 only.
        assert!(plan.work.iter().all(|(_, configs)| configs.len() == 6));
        assert_eq!(plan.work.len(), plan.engines.len());
    }

    #[test]
    fn seq_runs_scalar_only_and_batches_multiply_the_rest() {
        let plan = plan(&["--engines", "radix", "--batch", "0,64", "--threads", "2,1,2"]).unwrap();
        assert_eq!(plan.threads, vec![1, 2]);
        let (_, configs) = &plan.work[0];
        assert_eq!(configs.iter().filter(|c| c.test == TestName::Seq).count(), 2);
        assert!(configs.iter().filter(|c| c.test == TestName::Seq).all(|c| c.batch == 0));
        assert_eq!(configs.iter().filter(|c| c.test == TestName::Rnd).count(), 4);
        assert_eq!(configs.len(), 10);
    }

    #[test]
    fn the_default_run_is_short_and_the_long_one_a_flag_away() {
        let short = plan(&[]).unwrap();
        assert_eq!((short.runs, short.seconds), (3, 0.25));
        let long = plan(&["--long"]).unwrap();
        assert_eq!((long.runs, long.seconds), (5, 2.0));
        let given = plan(&["--long", "--runs", "2"]).unwrap();
        assert_eq!((given.runs, given.seconds), (2, 2.0));
    }

    #[test]
    fn plot_adds_the_dxr_sweep() {
        let plan =
            plan(&["--engines", "radix,d18r,radix", "--tests", "rnd", "--threads", "2", "--plot", "x.png"]).unwrap();
        assert_eq!(names(&plan.engines), vec!["radix", "d18r"]);
        let work: Vec<&str> = plan.work.iter().map(|(engine, _)| engine.name).collect();
        assert_eq!(work, vec!["radix", "d18r", "d16r", "d17r", "d19r", "d20r", "d21r", "d22r"]);
        let (_, d18r) = &plan.work[1];
        // Its own rnd at 2 threads plus single-thread seq, rnd, rep.
        assert_eq!(d18r.len(), 4);
        let (_, d17r) = &plan.work[3];
        assert!(d17r.iter().all(|c| c.threads == 1 && c.batch == 0));
    }

    #[test]
    fn ipv6_plans_use_the_ipv6_registry_and_key_space() {
        let six = plan6(&["--plot", "x.png"]).unwrap();
        let ipv6 = names(
            &registered::engines_of(Family::Ipv6)
                .into_iter()
                .filter(|engine| engine.variant_of.is_none())
                .collect::<Vec<_>>(),
        );
        assert_eq!(names(&six.engines), ipv6);
        assert!(!ipv6.iter().any(|name| name.ends_with("-basic")), "variants only with --engines all");
        assert_eq!(six.work.len(), ipv6.len(), "no IPv4 DXR sweep for --plot");
        assert_eq!(six.space.to_string(), "2000::/3");
        let workload = six.workload(TestName::Rnd, 64, 9);
        assert_eq!((workload.test, workload.batch, workload.seed), (Test::Rnd, 64, 9));
        assert_eq!(workload.space.to_string(), "2000::/3");
        let paper = plan6(&["--space", "2000::/8", "--engines", "poptrie18"]).unwrap();
        assert_eq!((names(&paper.engines), paper.space.to_string()), (vec!["poptrie18"], "2000::/8".to_string()));
        assert_eq!(plan(&[]).unwrap().workload(TestName::Seq, 0, 1).space.to_string(), "0.0.0.0/0");
    }

    #[test]
    fn ipv6_argument_errors_say_what_is_ipv4_only() {
        let message = format!("{:#}", plan6(&["--engines", "poptrie16,d18r"]).unwrap_err());
        assert!(message.contains("\"d18r\" is IPv4 only"), "{message}");
        let message = format!("{:#}", plan6(&["--engines", "prefix-trie"]).unwrap_err());
        assert!(message.contains("fibkit-peers is IPv4 only"), "{message}");
        assert!(error_of(&["--space", "2000::/8"]).contains("this run is IPv4"));
        let message = parse(&["--space", "2000::1/8"]).expect_err("host bits refused").to_string();
        assert!(message.contains("host bits set"), "{message}");
        assert!(parse(&["-4", "-6"]).is_err(), "-4 and -6 together");
    }
}
