//! `fibkit bench`'s command line: [`BenchArgs`], the [`TestName`]s, the
//! value parsers, and the default thread counts and engines.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use fibkit::addr::Prefix6;
use fibkit::error::shorten;
use fibkit::measure::workload::MAX_BATCH;

use fibkit::registry::Engine;

use crate::family::{Family, FamilyArgs};
use crate::numbers::{self, number_in};
use crate::registered;
use crate::table::TableArgs;

/// The DXR configurations run by default; the other K are for `--plot`.
const DEFAULT_DXR: [&str; 3] = ["d16r", "d18r", "d20r"];

/// Arguments of `fibkit bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(flatten)]
    pub(crate) table: TableArgs,
    #[command(flatten)]
    pub(super) family: FamilyArgs,
    /// IPv6: random keys (SEQ, RND, REP, REP16) are drawn, and SWEEP
    /// counts, inside this prefix
    /// [default: 2000::/3, global unicast; the Poptrie paper uses 2000::/8].
    #[arg(long, value_name = "PREFIX", value_parser = parse_space)]
    pub(super) space: Option<Prefix6>,
    /// Engines, comma-separated, or `all` [default: d16r,d18r,d20r, every
    /// other engine except the rest of the DXR family, and the peers; for
    /// IPv6 every IPv6 engine].
    #[arg(long, value_name = "LIST")]
    pub(super) engines: Option<String>,
    /// Tests to run, comma-separated: seq, rnd, rep (DXR's), sweep, rep16
    /// (the Poptrie paper's sequential and repeated), keys (needs --keys;
    /// --keys adds it).
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_values = ["seq", "rnd", "rep"])]
    pub(super) tests: Vec<TestName>,
    /// Thread counts, comma-separated [default: 1 and powers of two up to
    /// the core count, and the core count].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = numbers::bench_threads)]
    pub(super) threads: Vec<usize>,
    /// Seconds each run lasts (about; calibrated on one thread) [default:
    /// 0.25, with --long 2].
    #[arg(long, value_name = "S", value_parser = numbers::seconds)]
    pub(super) seconds: Option<f64>,
    /// Runs per configuration (median, minimum and maximum are reported)
    /// [default: 3, with --long 5].
    #[arg(long, value_name = "R", value_parser = numbers::runs)]
    pub(super) runs: Option<usize>,
    /// The long run: 5 runs of 2 s per configuration (instead of 3 of
    /// 0.25 s), for figures to publish; --seconds and --runs still apply.
    #[arg(long)]
    pub(super) long: bool,
    /// File of addresses to replay in order (`-`: standard input; text, one address a line, or
    /// raw little-endian u32; IPv6: text, or raw 16-byte addresses in
    /// network byte order; or a pcap/pcapng capture, whose packets'
    /// destinations of the family are the keys); adds the `keys` test.
    #[arg(long, value_name = "FILE")]
    pub(super) keys: Option<PathBuf>,
    /// Batch lengths for RND, REP and keys, comma-separated; 0 is the
    /// scalar path (SEQ always runs scalar).
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_values = ["0"], value_parser = parse_batch)]
    pub(super) batch: Vec<usize>,
    /// Write every figure as JSON to this file (`-`: to standard output,
    /// in place of the text tables).
    #[arg(long, value_name = "OUT.json")]
    pub(super) json: Option<PathBuf>,
    /// Draw throughput against threads into this PNG, and the DXR family
    /// against K into OUT-dxr-k.png (runs the DXR configurations needed).
    #[arg(long, value_name = "OUT.png")]
    pub(super) plot: Option<PathBuf>,
}

/// A test as named on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
pub(super) enum TestName {
    /// Dependent keys.
    Seq,
    /// Independent random keys.
    Rnd,
    /// Each random key 8 times in a short window.
    Rep,
    /// Every address from the first of the key space up, in order (the
    /// Poptrie paper's "sequential").
    Sweep,
    /// Each random key 16 times in a row (the Poptrie paper's "repeated").
    Rep16,
    /// Keys from --keys FILE.
    Keys,
}

impl TestName {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            TestName::Seq => "seq",
            TestName::Rnd => "rnd",
            TestName::Rep => "rep",
            TestName::Sweep => "sweep",
            TestName::Rep16 => "rep16",
            TestName::Keys => "keys",
        }
    }

    /// Title as the papers print it.
    pub(super) fn title(self) -> &'static str {
        match self {
            TestName::Seq => "SEQ",
            TestName::Rnd => "RND",
            TestName::Rep => "REP",
            TestName::Sweep => "SWEEP",
            TestName::Rep16 => "REP16",
            TestName::Keys => "KEYS",
        }
    }
}

fn parse_batch(text: &str) -> Result<usize, String> {
    number_in(text, "a batch length", 0, MAX_BATCH)
}

fn parse_space(text: &str) -> Result<Prefix6, String> {
    text.trim().parse::<Prefix6>().map_err(|error| format!("{:?} is not an IPv6 prefix: {error}", shorten(text)))
}

/// Default thread counts: 1, powers of two below the core count, the core count.
pub(super) fn default_threads(cores: usize) -> Vec<usize> {
    let mut counts: Vec<usize> =
        std::iter::successors(Some(1usize), |&n| Some(n * 2)).take_while(|&n| n < cores).collect();
    counts.push(cores.max(1));
    counts.dedup();
    counts
}

/// Whether `name` is a DXR configuration (`d<K>r`), and its K.
pub(super) fn dxr_k(name: &str) -> Option<u32> {
    name.strip_prefix('d')?.strip_suffix('r')?.parse().ok()
}

/// The engines run without `--engines`: D16R, D18R, D20R, every other
/// engine of the registry outside the DXR family (the registered peers
/// last); for IPv6 every IPv6 engine; in both, no variant of another
/// engine (the Poptrie paper's Table 2 rows, `sail-wide`).
pub(super) fn default_engines(family: Family) -> Vec<&'static Engine> {
    let engines = registered::engines_of(family).into_iter().filter(|engine| engine.variant_of.is_none());
    if family == Family::Ipv6 {
        return engines.collect();
    }
    engines.filter(|engine| dxr_k(engine.name).is_none() || DEFAULT_DXR.contains(&engine.name)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_threads_reach_the_core_count() {
        assert_eq!(default_threads(1), vec![1]);
        assert_eq!(default_threads(2), vec![1, 2]);
        assert_eq!(default_threads(6), vec![1, 2, 4, 6]);
        assert_eq!(default_threads(8), vec![1, 2, 4, 8]);
        assert_eq!(dxr_k("d18r"), Some(18));
        assert_eq!(dxr_k("dir24-8"), None);
    }
}
