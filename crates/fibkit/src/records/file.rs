//! Records in a compiled FIB file ([`crate::file`]): one section naming
//! the fields, then each field's arrays, read in place and checked whole
//! on opening.
//!
//! | section | elements | what |
//! |---|---|---|
//! | `r.fields` | UTF-8 | one line `name:type` per field, in order |
//! | `r.I.valid` | `u8` | field `I`'s row `r` (next hop `r + 1`): 0 missing, 1 present (an address: 4 or 6, its family) |
//! | `r.I.values` | `i64`, `f64`, `u8` (bool: 0 or 1), `u128` (address), `u8` (text: UTF-8), `i64` (list items) | the values |
//! | `r.I.offsets` | `u32` (text and lists) | row `r`'s values are `values[offsets[r] .. offsets[r + 1]]`; `offsets[0] == 0`, never descending, the last is the values' length |
//!
//! Every array has one element per record (`offsets` one more), and the
//! records are as many as the values' next hops.

use super::column::{Column, Data};
use super::spec::check_name;
use super::{Field, FieldType, Records};
use crate::file::{FibFile, FileError, FileWriter, Problem};
use crate::mem::{LookupArray, Plain};

/// Section of the field list.
const FIELDS: &str = "r.fields";

impl Records {
    /// Writes the records into `file`.
    pub(crate) fn save<'a>(&'a self, file: &mut FileWriter<'a>) {
        let list: String = self.columns.iter().map(|column| format!("{}\n", column.field)).collect();
        file.section(FIELDS, list.into_bytes());
        for (index, column) in self.columns.iter().enumerate() {
            let name = |part: &str| format!("r.{index}.{part}");
            file.array(&name("valid"), &column.valid);
            match &column.data {
                Data::Int(values) => file.array(&name("values"), values),
                Data::Float(values) => file.array(&name("values"), values),
                Data::Bool(values) => file.array(&name("values"), values),
                Data::Addr(values) => file.array(&name("values"), values),
                Data::Text { offsets, bytes } => {
                    file.array(&name("offsets"), offsets);
                    file.array(&name("values"), bytes);
                }
                Data::Ints { offsets, values } => {
                    file.array(&name("offsets"), offsets);
                    file.array(&name("values"), values);
                }
            }
        }
    }

    /// Whether `file` holds records.
    pub(crate) fn in_file(file: &FibFile) -> bool {
        file.section_length(FIELDS).is_some()
    }

    /// Reads the records of `file`, `rows` of them, checking every array's
    /// length, every flag, every offset and every text's UTF-8.
    pub(crate) fn open(file: &FibFile, rows: usize) -> Result<Self, FileError> {
        let list = file.section(FIELDS)?.ok_or_else(|| file.error(None, Problem::MissingSection(FIELDS.into())))?;
        let fields = parse_fields(list).map_err(|problem| {
            file.error(file.section_offset(FIELDS), Problem::Section { name: FIELDS.to_string(), problem })
        })?;
        let mut columns = Vec::with_capacity(fields.len());
        for (index, field) in fields.into_iter().enumerate() {
            columns.push(open_column(file, index, field, rows)?);
        }
        Ok(Records { columns, rows })
    }
}

/// Parses the field list: `name:type` lines, names valid and distinct.
fn parse_fields(list: &[u8]) -> Result<Vec<Field>, String> {
    let text = std::str::from_utf8(list).map_err(|_| "not UTF-8".to_string())?;
    let mut fields: Vec<Field> = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let (name, kind) = line.rsplit_once(':').ok_or_else(|| format!("line {}: not name:type", number + 1))?;
        check_name(name).map_err(|problem| format!("line {}: {problem}", number + 1))?;
        let kind = FieldType::from_name(kind).ok_or_else(|| format!("line {}: unknown type", number + 1))?;
        if fields.iter().any(|field| field.name == name) {
            return Err(format!("line {}: field {name:?} is named twice", number + 1));
        }
        fields.push(Field { name: name.to_string(), kind });
    }
    if fields.is_empty() || fields.len() > 4096 {
        return Err(format!("{} fields (1 to 4096)", fields.len()));
    }
    Ok(fields)
}

/// Reads and checks field `index`'s arrays.
fn open_column(file: &FibFile, index: usize, field: Field, rows: usize) -> Result<Column, FileError> {
    let name = |part: &str| format!("r.{index}.{part}");
    let valid: LookupArray<u8> = sized_array(file, &name("valid"), rows, rows)?;
    let flags: &[u8] = if field.kind == FieldType::Addr { &[0, 4, 6] } else { &[0, 1] };
    check_each(file, &name("valid"), &valid, |flag| flags.contains(&flag), "not a valid flag")?;
    let data = match field.kind {
        FieldType::Int => Data::Int(sized_array(file, &name("values"), rows, rows)?),
        FieldType::Float => Data::Float(sized_array(file, &name("values"), rows, rows)?),
        FieldType::Bool => {
            let values = sized_array(file, &name("values"), rows, rows)?;
            check_each(file, &name("values"), &values, |value| value <= 1, "a bool neither 0 nor 1")?;
            Data::Bool(values)
        }
        FieldType::Addr => {
            let values: LookupArray<u128> = sized_array(file, &name("values"), rows, rows)?;
            let fits =
                valid.iter().zip(values.iter()).position(|(&flag, &value)| flag == 4 && value > u128::from(u32::MAX));
            if let Some(row) = fits {
                return Err(file.element_error(&name("values"), 16, row, 0, "an IPv4 address past 32 bits"));
            }
            Data::Addr(values)
        }
        FieldType::Text => {
            let offsets = sized_array(file, &name("offsets"), rows + 1, rows)?;
            let bytes = file.array::<u8>(&name("values"))?;
            check_offsets(file, &name("offsets"), &offsets, bytes.len())?;
            for row in 0..rows {
                let span = &bytes[offsets[row] as usize..offsets[row + 1] as usize];
                if std::str::from_utf8(span).is_err() {
                    let at = offsets[row] as usize;
                    return Err(file.element_error(&name("values"), 1, at, at as u64, "a text that is not UTF-8"));
                }
            }
            Data::Text { offsets, bytes }
        }
        FieldType::Ints => {
            let offsets = sized_array(file, &name("offsets"), rows + 1, rows)?;
            let values = file.array::<i64>(&name("values"))?;
            check_offsets(file, &name("offsets"), &offsets, values.len())?;
            Data::Ints { offsets, values }
        }
    };
    Ok(Column { field, valid, data })
}

/// Section `section` as an array of `expected` elements (for `rows` records).
fn sized_array<T: Plain>(
    file: &FibFile,
    section: &str,
    expected: usize,
    rows: usize,
) -> Result<LookupArray<T>, FileError> {
    let array = file.array(section)?;
    if array.len() != expected {
        let problem = format!("{} elements for {rows} records", array.len());
        let name = section.to_string();
        return Err(file.error(file.section_offset(section), Problem::Section { name, problem }));
    }
    Ok(array)
}

/// Checks that every element of `array` passes `good`.
fn check_each<T: Plain + Copy + Into<u64>>(
    file: &FibFile,
    section: &str,
    array: &[T],
    good: impl Fn(T) -> bool,
    problem: &'static str,
) -> Result<(), FileError> {
    match array.iter().position(|&element| !good(element)) {
        Some(index) => Err(file.element_error(section, size_of::<T>(), index, array[index].into(), problem)),
        None => Ok(()),
    }
}

/// Checks offsets into `len` values: from 0, never descending, ending at
/// `len`.
fn check_offsets(file: &FibFile, section: &str, offsets: &[u32], len: usize) -> Result<(), FileError> {
    if offsets.first() != Some(&0) {
        let first = offsets.first().copied().unwrap_or_default();
        return Err(file.element_error(section, 4, 0, first.into(), "the first values do not start at 0"));
    }
    if let Some(index) = offsets.windows(2).position(|pair| pair[1] < pair[0]) {
        return Err(file.element_error(
            section,
            4,
            index + 1,
            offsets[index + 1].into(),
            "values end before they start",
        ));
    }
    let last = offsets.len() - 1;
    if offsets[last] as usize != len {
        return Err(file.element_error(
            section,
            4,
            last,
            offsets[last].into(),
            "the values do not end with their section",
        ));
    }
    Ok(())
}
