//! `fibkit reproduce`: the papers' experiments rerun on this machine, side
//! by side with the published figures.
//!
//! ```text
//!  data/published.json ──► published ──┐
//!  shared data / default ─► lab ───────┼─► poptrie (+ cycles), dxr, ──► report ─► DIR/report.md
//!  (tables, rates, builds)             │   softcom, lulea, linux                  DIR/report.json
//!                                      │   (one module a paper)
//!                                      └─────────────────────────────── plots ──► DIR/*.png
//! ```
//!
//! Each paper's module reruns what this machine can run on the closest
//! data at hand and returns [`report::Experiment`]s: a row per published
//! number with fibkit's figure beside it, or a note saying why there is
//! none (more threads than cores, a table that is not at hand).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};

mod cycles;
mod dxr;
mod lab;
mod linux;
mod lulea;
mod plots;
mod poptrie;
mod published;
mod report;
mod softcom;

use lab::{Effort, Lab};
use published::Published;
use report::{Report, Section};

/// Arguments of `fibkit reproduce`.
#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// Which papers' experiments to rerun.
    #[arg(value_enum, required = true)]
    papers: Vec<Paper>,
    /// The short run (under two minutes): fewer keys, shorter rates.
    #[arg(long)]
    quick: bool,
    /// Where the report and plots go (created if need be).
    #[arg(long, value_name = "DIR", default_value = "reproduce")]
    out: PathBuf,
    /// The shared data directory (its tables stand in for the papers'):
    /// [default: $FIBKIT_DATA, else ../shared/data, if it exists; else the
    /// embedded default table and no IPv6 table or update trace].
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
    /// An IPv4 table (any input format) to stand in for the papers' IPv4
    /// tables in place of the shared 2014 table: e.g. the SoftCOM paper's
    /// Table I for that table.
    #[arg(long, value_name = "FILE")]
    table: Option<PathBuf>,
}

/// A paper whose experiments `reproduce` reruns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
enum Paper {
    /// Asai and Ohara, Poptrie (SIGCOMM 2015): Tables 1-6, Figures 7, 8,
    /// 10 and 11, sections 4.5 and 4.9.
    Poptrie,
    /// Zec, DXR's web page (2014): rt.stat, the chunk-length table, the
    /// SEQ, RND and REP tables.
    Dxr,
    /// Zec and Mikuc, DXR (SoftCOM 2017): Table I, the K sweep, the peak.
    Softcom,
    /// Degermark et al., Luleå (SIGCOMM 1997): Table 1, section 5.2.
    Lulea,
    /// Bernat, IPv4 route lookup on Linux (2017): its two scenarios.
    Linux,
    /// Every paper above.
    All,
}

impl Paper {
    fn key(self) -> &'static str {
        match self {
            Paper::Poptrie => "poptrie",
            Paper::Dxr => "dxr",
            Paper::Softcom => "softcom",
            Paper::Lulea => "lulea",
            Paper::Linux => "linux",
            Paper::All => "all",
        }
    }
}

/// The data folder without `--data`: the one `FIBKIT_DATA` names, else
/// `../shared/data` (beside the repository, run from its root).
fn default_data() -> PathBuf {
    std::env::var_os("FIBKIT_DATA")
        .filter(|dir| !dir.is_empty())
        .map_or_else(|| PathBuf::from("../shared/data"), PathBuf::from)
}

/// Runs `fibkit reproduce`.
pub fn run(args: &ReproduceArgs) -> Result<ExitCode> {
    let mut papers: Vec<Paper> = if args.papers.contains(&Paper::All) {
        Paper::value_variants().iter().copied().filter(|&paper| paper != Paper::All).collect()
    } else {
        args.papers.clone()
    };
    papers.sort();
    papers.dedup();
    // The plots need a font: fail before measuring if there is none.
    crate::bench::plot::font()?;
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    let data = match &args.data {
        Some(dir) if !dir.is_dir() => bail!("--data {}: no such directory", dir.display()),
        Some(dir) => Some(dir.clone()),
        None => Some(default_data()).filter(|dir| dir.is_dir()),
    };
    let effort = if args.quick { Effort::QUICK } else { Effort::FULL };
    if let Some(table) = args.table.as_ref().filter(|table| !table.is_file()) {
        bail!("--table {}: no such file", table.display());
    }
    let mut lab = Lab::new(effort, data.clone(), args.table.clone());
    let published = Published::get();
    let mut sections = Vec::new();
    for paper in papers {
        let source =
            published.source(paper.key()).with_context(|| format!("no source for {} in the data file", paper.key()))?;
        let experiments = match paper {
            Paper::Poptrie => {
                let mut experiments = poptrie::run(&mut lab)?;
                experiments.extend(cycles::run(&mut lab, &args.out)?);
                experiments
            }
            Paper::Dxr => dxr::run(&mut lab)?,
            Paper::Softcom => softcom::run(&mut lab)?,
            Paper::Lulea => lulea::run(&mut lab)?,
            Paper::Linux => linux::run(&mut lab)?,
            Paper::All => unreachable!("expanded above"),
        };
        sections.push(Section {
            paper: paper.key().to_string(),
            title: format!("{} ({}, {})", source.title, source.authors, source.venue),
            published_on: source.hardware.clone(),
            method: format!("{} (the paper's text: `{}`)", source.notes, source.file),
            experiments,
        });
    }
    let machine = &lab.machine;
    let report = Report {
        machine: format!(
            "{}, {} cores{}",
            machine.cpu_model,
            machine.cores,
            machine.cache_size.as_ref().map_or(String::new(), |cache| format!(", cache {cache}"))
        ),
        mode: if args.quick {
            "quick: rates over 0.04 s (3 runs), 2^20 keys timed one by one, the sequential sweep cut short".into()
        } else {
            "full: rates over 1 s (5 runs), 2^24 keys timed one by one, the whole 2^32 sequential sweep".into()
        },
        data: vec![match (&args.table, &data) {
            (Some(table), _) => format!("IPv4 table: `{}` (--table) stands in for every IPv4 table", table.display()),
            (None, Some(dir)) => format!("Data: the shared data directory `{}`", dir.display()),
            (None, None) => "Data: none found; the embedded default table stands in for every IPv4 table".into(),
        }],
        sections,
    };
    for row in report::unexplained(&report) {
        eprintln!("warning: no figure and no reason for {row}");
    }
    let markdown = args.out.join("report.md");
    std::fs::write(&markdown, report::markdown(&report)).with_context(|| format!("writing {}", markdown.display()))?;
    let json = args.out.join("report.json");
    let text = serde_json::to_string_pretty(&report)? + "\n";
    std::fs::write(&json, text).with_context(|| format!("writing {}", json.display()))?;
    lab.progress(format!("wrote {} and {}", markdown.display(), json.display()));
    Ok(ExitCode::SUCCESS)
}
