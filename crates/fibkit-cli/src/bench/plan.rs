//! What a bench run measures: the validated [`Plan`] (engines, tests,
//! thread counts, batch lengths, per-engine [`Config`]s) and the workloads
//! it hands the workers.

use std::collections::BTreeSet;
use std::sync::Arc;

use anyhow::{bail, Result};
use fibkit::addr::Prefix6;
use fibkit::workload::{self, Test, Test6, Workload, Workload6};

use super::args::{default_engines, default_threads, dxr_k, BenchArgs, TestName};
use crate::family::{select_engines_in, Family};

/// One measured configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Config {
    pub(super) test: TestName,
    pub(super) batch: usize,
    pub(super) threads: usize,
}

/// What to run, validated.
#[derive(Debug)]
pub(super) struct Plan {
    /// Engines the user asked for (or the default list).
    pub(super) engines: Vec<&'static str>,
    /// Per engine to run (the selection, then DXR engines only `--plot`
    /// needs), the configurations to measure.
    pub(super) work: Vec<(&'static str, Vec<Config>)>,
    pub(super) tests: Vec<TestName>,
    pub(super) threads: Vec<usize>,
    pub(super) batches: Vec<usize>,
    pub(super) seconds: f64,
    pub(super) runs: usize,
    keys: Option<Arc<[u32]>>,
    /// The family the run works on.
    family: Family,
    /// IPv6: where random keys are drawn.
    pub(super) space: Prefix6,
    /// IPv6: the `--keys` file's addresses.
    keys6: Option<Arc<[u128]>>,
}

/// A workload of either family (the plan's).
pub(super) enum AnyWorkload {
    V4(Workload),
    V6(Workload6),
}

impl Plan {
    /// Checks the arguments and loads the key file for `family`; touches
    /// no table.
    pub(super) fn new(args: &BenchArgs, cores: usize, family: Family) -> Result<Plan> {
        let mut engines = match &args.engines {
            Some(spec) => select_engines_in(family, spec)?,
            None => default_engines(family),
        };
        if args.space.is_some() && family == Family::Ipv4 {
            bail!("--space sets where random IPv6 keys are drawn; this run is IPv4 (add -6)");
        }
        let space = args.space.unwrap_or_else(|| workload::key_space(workload::GLOBAL_UNICAST));
        let mut seen = BTreeSet::new();
        engines.retain(|name| seen.insert(*name));
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
        let mut keys6 = None;
        let keys = match &args.keys {
            Some(path) if family == Family::Ipv6 => {
                keys6 = Some(Arc::from(fibkit::load::load_keys6(path)?));
                None
            }
            Some(path) => {
                let keys = fibkit::load::load_keys(path)?;
                if keys.is_empty() {
                    bail!("{}: no addresses in the key file", path.display());
                }
                Some(Arc::from(keys))
            }
            None => None,
        };
        let mut work: Vec<(&'static str, Vec<Config>)> = Vec::new();
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
        if args.plot.is_some() && family == Family::Ipv4 {
            let sweep = [TestName::Seq, TestName::Rnd, TestName::Rep].map(|test| Config { test, batch: 0, threads: 1 });
            for spec in fibkit::engine::ENGINES.iter().filter(|spec| dxr_k(spec.name).is_some()) {
                match work.iter_mut().find(|(engine, _)| *engine == spec.name) {
                    Some((_, configs)) => {
                        for config in sweep {
                            if !configs.contains(&config) {
                                configs.push(config);
                            }
                        }
                        configs.sort();
                    }
                    None => work.push((spec.name, sweep.to_vec())),
                }
            }
        }
        Ok(Plan {
            engines,
            work,
            tests,
            threads,
            batches,
            seconds: args.seconds,
            runs: args.runs,
            keys,
            family,
            space,
            keys6,
        })
    }

    pub(super) fn measurements(&self) -> u64 {
        self.work.iter().map(|(_, configs)| configs.len() as u64 * self.runs as u64).sum()
    }

    pub(super) fn workload(&self, test: TestName, batch: usize, seed: u64) -> AnyWorkload {
        if self.family == Family::Ipv6 {
            let test = match test {
                TestName::Seq => Test6::Seq,
                TestName::Rnd => Test6::Rnd,
                TestName::Rep => Test6::Rep,
                TestName::Keys => Test6::Keys(self.keys6.clone().expect("the plan checked --keys")),
            };
            return AnyWorkload::V6(Workload6 { test, batch, seed, space: self.space });
        }
        let test = match test {
            TestName::Seq => Test::Seq,
            TestName::Rnd => Test::Rnd,
            TestName::Rep => Test::Rep,
            TestName::Keys => Test::Keys(self.keys.clone().expect("the plan checked --keys")),
        };
        AnyWorkload::V4(Workload { test, batch, seed })
    }

    /// How many keys the `--keys` file had.
    pub(super) fn key_count(&self) -> usize {
        self.keys.as_ref().map(|keys| keys.len()).or(self.keys6.as_ref().map(|keys| keys.len())).unwrap_or(0)
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

    fn plan(line: &[&str]) -> Result<Plan> {
        Plan::new(&parse(line)?, 2, Family::Ipv4)
    }

    fn plan6(line: &[&str]) -> Result<Plan> {
        Plan::new(&parse(line)?, 2, Family::Ipv6)
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
        assert!(message.contains("thread count must be at least 1"), "{message}");
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
        assert!(error_of(&["--seconds", "0"]).contains("positive"));
        assert!(error_of(&["--seconds", "nan"]).contains("positive"));
        assert!(error_of(&["--runs", "0"]).contains("at least one run"));
        assert!(error_of(&["--batch", "0,100000"]).contains("exceeds"));
    }

    #[test]
    fn default_plan_runs_the_default_dxr_and_every_peer() {
        let plan = plan(&[]).unwrap();
        for name in ["d16r", "d18r", "d20r", "radix", "prefix-trie", "treebitmap", "poptrie-crate"] {
            assert!(plan.engines.contains(&name), "{name} missing from {:?}", plan.engines);
        }
        for name in ["d17r", "d19r", "d21r", "d22r"] {
            assert!(!plan.engines.contains(&name), "{name} is run by default");
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
        assert_eq!(plan.measurements(), 10 * 3);
    }

    #[test]
    fn plot_adds_the_dxr_sweep() {
        let plan =
            plan(&["--engines", "radix,d18r,radix", "--tests", "rnd", "--threads", "2", "--plot", "x.png"]).unwrap();
        assert_eq!(plan.engines, vec!["radix", "d18r"]);
        let names: Vec<&str> = plan.work.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, vec!["radix", "d18r", "d16r", "d17r", "d19r", "d20r", "d21r", "d22r"]);
        let (_, d18r) = &plan.work[1];
        // Its own rnd at 2 threads plus single-thread seq, rnd, rep.
        assert_eq!(d18r.len(), 4);
        let (_, d17r) = &plan.work[3];
        assert!(d17r.iter().all(|c| c.threads == 1 && c.batch == 0));
    }

    #[test]
    fn ipv6_plans_use_the_ipv6_registry_and_key_space() {
        let six = plan6(&["--plot", "x.png"]).unwrap();
        let names: Vec<&str> = fibkit::engine::ENGINES6.iter().map(|spec| spec.name).collect();
        assert_eq!(six.engines, names);
        assert_eq!(six.work.len(), names.len(), "no IPv4 DXR sweep for --plot");
        assert_eq!(six.space.to_string(), "2000::/3");
        match six.workload(TestName::Rnd, 64, 9) {
            AnyWorkload::V6(workload) => {
                assert_eq!((workload.test, workload.batch, workload.seed), (Test6::Rnd, 64, 9));
                assert_eq!(workload.space.to_string(), "2000::/3");
            }
            AnyWorkload::V4(_) => panic!("an IPv6 plan made an IPv4 workload"),
        }
        let paper = plan6(&["--space", "2000::/8", "--engines", "poptrie18"]).unwrap();
        assert_eq!((paper.engines.clone(), paper.space.to_string()), (vec!["poptrie18"], "2000::/8".to_string()));
        assert!(matches!(plan(&[]).unwrap().workload(TestName::Seq, 0, 1), AnyWorkload::V4(_)));
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
