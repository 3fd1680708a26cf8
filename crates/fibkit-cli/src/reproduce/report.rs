//! The report of `fibkit reproduce`: sections (one a paper) of experiments
//! (one a published table or figure) of rows (one a number), written as
//! `report.md` and `report.json`.
//!
//! A row pairs a published figure with fibkit's on this machine and their
//! ratio; a row whose experiment cannot run here says why in its note
//! instead of being left out. Nothing in the report is typed by hand: the
//! published side comes from [`super::published`], the other from the
//! measurements.

use std::fmt::Write;

use serde::Serialize;

use super::published::Figure;

/// One number: published, measured here, or both.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Row {
    /// What the number is (`poptrie18, 99th percentile`).
    pub(crate) label: String,
    /// The unit of the measured value.
    pub(crate) unit: String,
    /// The published figure compared against, if there is one.
    pub(crate) published: Option<Cited>,
    /// fibkit's figure on this machine, if measured.
    pub(crate) measured: Option<f64>,
    /// Where the comparison is not like for like, or why nothing was
    /// measured.
    pub(crate) note: String,
}

/// A published figure as the report cites it.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Cited {
    pub(crate) value: f64,
    pub(crate) unit: String,
    /// The data file's id of the figure.
    pub(crate) id: String,
    /// Table or figure, the dataset, and the algorithm as published.
    pub(crate) source: String,
    /// The data file's note on the figure (a conversion, an approximation).
    pub(crate) note: Option<String>,
}

impl Cited {
    pub(crate) fn of(figure: &Figure) -> Cited {
        let source = [Some(&figure.place), figure.dataset.as_ref(), figure.engine_as_published.as_ref()]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ");
        Cited {
            value: figure.value,
            unit: figure.unit.clone(),
            id: figure.id.clone(),
            source,
            note: figure.note.clone(),
        }
    }
}

impl Row {
    /// A row measured here, with `published` beside it if there is one.
    pub(crate) fn new(label: impl Into<String>, unit: &str, published: Option<&Figure>, measured: Option<f64>) -> Row {
        Row {
            label: label.into(),
            unit: unit.to_string(),
            published: published.map(Cited::of),
            measured,
            note: String::new(),
        }
    }

    /// The row with `note` (appended to any note it has).
    pub(crate) fn note(mut self, note: impl AsRef<str>) -> Row {
        if !self.note.is_empty() {
            self.note.push_str("; ");
        }
        self.note.push_str(note.as_ref());
        self
    }

    /// Measured over published, where both exist and the published one is
    /// not zero.
    pub(crate) fn ratio(&self) -> Option<f64> {
        let published = self.published.as_ref()?.value;
        (published != 0.0).then_some(self.measured? / published)
    }

    /// Whether the row is whole: a measured figure, or a note saying why
    /// there is none. [`unexplained`] lists the rows that are not.
    pub(crate) fn is_whole(&self) -> bool {
        self.measured.is_some() || !self.note.is_empty()
    }
}

/// One published table or figure, rerun.
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct Experiment {
    /// `Table 4: per-lookup CPU cycles, random keys`.
    pub(crate) title: String,
    /// Which table here stands in for which there, and how it was run.
    pub(crate) setup: String,
    pub(crate) rows: Vec<Row>,
    /// Plot files written, relative to the report's directory, with their
    /// captions.
    pub(crate) plots: Vec<(String, String)>,
}

/// A paper's experiments.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Section {
    /// The data file's key of the paper (`poptrie`).
    pub(crate) paper: String,
    /// `Poptrie (Asai and Ohara, SIGCOMM 2015)`.
    pub(crate) title: String,
    /// What the paper measured on.
    pub(crate) published_on: String,
    /// How the paper measured, and where its text is.
    pub(crate) method: String,
    pub(crate) experiments: Vec<Experiment>,
}

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Report {
    /// The machine the figures were measured on.
    pub(crate) machine: String,
    /// `quick` or `full`, and what that means.
    pub(crate) mode: String,
    /// The data at hand and what stands in for what.
    pub(crate) data: Vec<String>,
    pub(crate) sections: Vec<Section>,
}

/// `section / experiment / row` of every row with neither a figure nor a
/// note saying why not (a bug of the experiment that made it).
pub(crate) fn unexplained(report: &Report) -> Vec<String> {
    let mut rows = Vec::new();
    for section in &report.sections {
        for experiment in &section.experiments {
            for row in experiment.rows.iter().filter(|row| !row.is_whole()) {
                rows.push(format!("{} / {} / {}", section.paper, experiment.title, row.label));
            }
        }
    }
    rows
}

/// A number as the report prints it: integers plain, from 100 up one
/// decimal, from 1 up two, below 1 three significant digits.
pub(crate) fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else if value.abs() >= 100.0 {
        format!("{value:.1}")
    } else if value.abs() >= 1.0 {
        format!("{value:.2}")
    } else {
        let decimals = (2.0 - value.abs().log10().floor()) as usize;
        format!("{value:.decimals$}")
    }
}

/// `report.md`.
pub(crate) fn markdown(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# fibkit reproduce\n");
    let _ =
        writeln!(out, "Generated by `fibkit reproduce` (fibkit {}); not edited by hand.\n", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(out, "- Machine: {}", report.machine);
    let _ = writeln!(out, "- Mode: {}", report.mode);
    for line in &report.data {
        let _ = writeln!(out, "- {line}");
    }
    for section in &report.sections {
        let _ = writeln!(out, "\n## {}\n", section.title);
        let _ = writeln!(out, "Published on: {}\n", section.published_on);
        if !section.method.is_empty() {
            let _ = writeln!(out, "Method: {}\n", section.method);
        }
        for experiment in &section.experiments {
            let _ = writeln!(out, "### {}\n", experiment.title);
            if !experiment.setup.is_empty() {
                let _ = writeln!(out, "{}\n", experiment.setup);
            }
            if !experiment.rows.is_empty() {
                let _ = writeln!(out, "| figure | published | source | here | here / published | note |");
                let _ = writeln!(out, "|---|---:|---|---:|---:|---|");
                for row in &experiment.rows {
                    let published = row.published.as_ref();
                    let _ = writeln!(
                        out,
                        "| {} | {} | {} | {} | {} | {} |",
                        row.label,
                        published.map_or(String::new(), |cited| format!("{} {}", number(cited.value), cited.unit)),
                        published.map_or("", |cited| cited.source.as_str()),
                        row.measured.map_or(String::new(), |value| format!("{} {}", number(value), row.unit)),
                        row.ratio().map_or(String::new(), |ratio| format!("{ratio:.2}")),
                        [
                            row.note.clone(),
                            published
                                .and_then(|cited| cited.note.clone())
                                .map_or(String::new(), |note| format!("published: {note}"))
                        ]
                        .into_iter()
                        .filter(|note| !note.is_empty())
                        .collect::<Vec<_>>()
                        .join("; "),
                    );
                }
                let _ = writeln!(out);
            }
            for (file, caption) in &experiment.plots {
                let _ = writeln!(out, "![{caption}]({file})\n");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(value: f64) -> Figure {
        Figure {
            id: "poptrie-table-4-x".into(),
            paper: "poptrie".into(),
            place: "Table 4".into(),
            dataset: Some("REAL-Tier1-A".into()),
            engine: Some("poptrie18".into()),
            engine_as_published: None,
            test: "cycles".into(),
            threads: None,
            metric: "cycles_p99".into(),
            value,
            unit: "cycles".into(),
            note: None,
        }
    }

    #[test]
    fn rows_carry_their_ratio_and_say_when_they_are_whole() {
        let row = Row::new("poptrie18, 99th", "ticks", Some(&figure(169.0)), Some(84.5));
        assert_eq!(row.ratio(), Some(0.5));
        assert!(row.is_whole());
        let empty = Row::new("4 threads", "Mlps", Some(&figure(914.0)), None);
        assert!(!empty.is_whole() && empty.ratio().is_none());
        let explained = empty.note("2 cores here").note("not run");
        assert!(explained.is_whole());
        assert_eq!(explained.note, "2 cores here; not run");
        assert_eq!(Row::new("x", "s", Some(&figure(0.0)), Some(1.0)).ratio(), None);
    }

    #[test]
    fn numbers_print_as_the_tables_want() {
        assert_eq!(number(512621.0), "512621");
        assert_eq!(number(53.59), "53.59");
        assert_eq!(number(241.27), "241.3");
        assert_eq!(number(0.5331), "0.533");
        assert_eq!(number(0.000_312_4), "0.000312");
    }

    #[test]
    fn markdown_has_a_table_row_per_figure() {
        let experiment = Experiment {
            title: "Table 4".into(),
            setup: "2014 table for REAL-Tier1-A".into(),
            rows: vec![Row::new("poptrie18, 99th", "ticks", Some(&figure(169.0)), Some(84.5))],
            plots: vec![("fig10.png".into(), "Figure 10".into())],
        };
        let report = Report {
            machine: "test CPU".into(),
            mode: "quick".into(),
            data: vec!["2014 table".into()],
            sections: vec![Section {
                paper: "poptrie".into(),
                title: "Poptrie".into(),
                published_on: "i7".into(),
                method: String::new(),
                experiments: vec![experiment],
            }],
        };
        let text = markdown(&report);
        assert!(
            text.contains("| poptrie18, 99th | 169 cycles | Table 4, REAL-Tier1-A | 84.50 ticks | 0.50 |  |"),
            "{text}"
        );
        assert!(text.contains("![Figure 10](fig10.png)"));
        assert!(text.contains("## Poptrie") && text.contains("Published on: i7"));
    }
}
