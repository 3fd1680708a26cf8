//! Records from the columns of a text table (`--fields`): the columns
//! after a line's address(es) become named, typed fields.
//!
//! With a header line, fields are chosen by the header's names (`*`: every
//! column after the addresses); without one, the field list names the
//! columns after the addresses in order. A field's type is the one given
//! (`asn:int`) or the one every value of its column reads as
//! ([`crate::records::infer`]). Each distinct row of texts is kept once
//! while the file is read; types are decided, and values parsed, at the
//! end.

use std::collections::HashMap;
use std::path::Path;

use super::text::{numbered_lines, Separator};
use super::{LoadError, Position};
use crate::base::hash::FoldState;
use crate::error::shorten;
use crate::nexthop::Label;
use crate::records::{infer, Field, FieldSpec, FieldType, RecordTable};

/// The records of a text table being read.
pub(crate) struct RecordColumns {
    /// Each field's name, given type and column index in a line.
    fields: Vec<(String, Option<FieldType>, usize)>,
    /// Distinct rows of texts (one per field), numbered as read.
    index: HashMap<Vec<String>, u32, FoldState>,
    rows: Vec<(Vec<String>, usize)>,
}

impl RecordColumns {
    /// The fields `spec` chooses among a line's columns from `first`
    /// (after the addresses), named by the `header` line's fields if the
    /// file has one.
    pub(crate) fn new(
        file: &Path,
        spec: &FieldSpec,
        header: Option<(usize, Vec<String>)>,
        first: usize,
    ) -> Result<Self, LoadError> {
        let mut fields = Vec::new();
        match header {
            Some((line, names)) => {
                let error = |message: String| LoadError::new(file, Position::Line(line), message);
                let columns = names.get(first..).unwrap_or_default();
                for (name, kind) in &spec.fields {
                    let column = columns.iter().position(|column| column == name).ok_or_else(|| {
                        error(format!(
                            "--fields names {name:?}, which the header's columns after the addresses ({}) do not",
                            columns.join(", ")
                        ))
                    })?;
                    fields.push((name.clone(), *kind, first + column));
                }
                if spec.all {
                    for (column, name) in columns.iter().enumerate() {
                        if !fields.iter().any(|(taken, _, _)| taken == name) {
                            crate::records::FieldSpec::parse(name).map_err(|problem| error(problem.to_string()))?;
                            fields.push((name.clone(), None, first + column));
                        }
                    }
                }
            }
            None if spec.all => {
                return Err(LoadError::new(file, Position::File, "--fields '*' takes the names of a header line, which the file does not have: name its columns after the addresses in order"));
            }
            None => {
                for (column, (name, kind)) in spec.fields.iter().enumerate() {
                    fields.push((name.clone(), *kind, first + column));
                }
            }
        }
        Ok(RecordColumns { fields, index: HashMap::default(), rows: Vec::new() })
    }

    /// The record columns `options.fields` asks for (`None`: values, not
    /// records), in a file whose addresses take the columns before `first`.
    pub(crate) fn for_options(
        file: &Path,
        text: &str,
        separator: Separator,
        header: Option<usize>,
        options: &super::LoadOptions,
        first: usize,
    ) -> Result<Option<Self>, LoadError> {
        let Some(spec) = &options.fields else { return Ok(None) };
        let header = header.map(|line| (line, header_fields(text, separator, line)));
        Self::new(file, spec, header, first).map(Some)
    }

    /// The record of data line `line` (its `columns`), as a provisional
    /// label: [`RecordColumns::finish`] renumbers it.
    pub(crate) fn read(&mut self, file: &Path, line: usize, columns: &[&str]) -> Result<Label, LoadError> {
        let mut texts = Vec::with_capacity(self.fields.len());
        for (name, _, column) in &self.fields {
            let text = columns.get(*column).ok_or_else(|| {
                LoadError::new(
                    file,
                    Position::Line(line),
                    format!("no column for field {name:?} (the line has {} columns)", columns.len()),
                )
            })?;
            texts.push(text.to_string());
        }
        if let Some(&row) = self.index.get(&texts) {
            return Ok(Label::Record(row));
        }
        let row = u32::try_from(self.rows.len())
            .map_err(|_| LoadError::new(file, Position::Line(line), "more than 2^32 records"))?;
        self.rows.push((texts.clone(), line));
        self.index.insert(texts, row);
        Ok(Label::Record(row))
    }

    /// The records, types decided and values parsed, and for each
    /// provisional row its row in them.
    pub(crate) fn finish(self, file: &Path) -> Result<(RecordTable, Vec<u32>), LoadError> {
        let kinds: Vec<FieldType> = (0..self.fields.len())
            .map(|index| {
                self.fields[index]
                    .1
                    .unwrap_or_else(|| infer::infer(self.rows.iter().map(|(texts, _)| texts[index].as_str())))
            })
            .collect();
        let fields =
            self.fields.iter().zip(&kinds).map(|((name, _, _), &kind)| Field { name: name.clone(), kind }).collect();
        let mut table = RecordTable::new(fields).map_err(|problem| LoadError::new(file, Position::File, problem))?;
        let mut renumbered = Vec::with_capacity(self.rows.len());
        for (texts, line) in &self.rows {
            let mut values = Vec::with_capacity(texts.len());
            for ((text, &kind), (name, _, _)) in texts.iter().zip(&kinds).zip(&self.fields) {
                let value = infer::parse(kind, text).map_err(|problem| {
                    LoadError::new(file, Position::Line(*line), format!("field {name:?}: {problem}"))
                })?;
                values.push(value);
            }
            let row = table.intern(values).map_err(|problem| LoadError::new(file, Position::Line(*line), problem))?;
            renumbered.push(row);
        }
        Ok((table, renumbered))
    }
}

/// The fields of header line `line` of `text`, split as the data lines are.
pub(crate) fn header_fields(text: &str, separator: Separator, line: usize) -> Vec<String> {
    let Some((_, header)) = numbered_lines(text).find(|&(number, _)| number == line) else { return Vec::new() };
    match separator {
        Separator::Blank => header.split_ascii_whitespace().map(String::from).collect(),
        Separator::Tab => header.split('\t').map(|field| field.trim().to_string()).collect(),
        Separator::Comma => {
            let mut reader =
                csv::ReaderBuilder::new().has_headers(false).trim(csv::Trim::All).from_reader(header.as_bytes());
            let mut record = csv::StringRecord::new();
            match reader.read_record(&mut record) {
                Ok(true) => record.iter().map(String::from).collect(),
                _ => Vec::new(),
            }
        }
    }
}

/// Refuses `--fields` with a `--nexthops` mapping, whatever the format: a
/// record is not a number to take modulo N of.
pub(crate) fn check_mapping(file: &Path, options: &super::LoadOptions) -> Result<(), LoadError> {
    if options.fields.is_some() && options.mapping != crate::nexthop::Mapping::Distinct {
        return Err(LoadError::new(
            file,
            Position::File,
            format!(
                "--fields {} makes values records, which --nexthops cannot map onto next hops",
                shorten(&options.fields.as_ref().map(ToString::to_string).unwrap_or_default())
            ),
        ));
    }
    Ok(())
}

/// Renumbers a provisional record label ([`RecordColumns::read`]).
pub(crate) fn renumber(label: Label, renumbered: &[u32]) -> Label {
    match label {
        Label::Record(row) => Label::Record(renumbered[row as usize]),
        label => label,
    }
}
