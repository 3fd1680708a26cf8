//! Answers to Polars columns: a record's fields as a struct column (one
//! field a column of its type), or a plain value as a number or text
//! column. A row without a route, or a record without the field, is null.

use polars::prelude::*;
use pyo3_polars::export::polars_arrow::bitmap::Bitmap;

use fibkit::records::{ColumnData, ColumnView, FieldType, Records};
use fibkit::NextHop;

use crate::tables::{Plain, Table};

/// What a lookup answers: the value, or some of a record's fields.
pub enum Choice {
    /// The route's value (a table without records).
    Plain,
    /// These fields of the route's record, by index.
    Fields(Vec<usize>),
}

/// The answer `fields` asks of `table`: every field for `None` on a table
/// of records (also `"*"` in the list), else those named, in order.
///
/// # Errors
/// `ComputeError` for fields asked of a table without records, or a name
/// the table lacks (the message lists its fields).
pub fn choose(table: &Table, fields: Option<&[String]>) -> PolarsResult<Choice> {
    let Some(records) = table.compiled.values.records() else {
        if let Some(fields) = fields {
            polars_bail!(
                ComputeError: "fibkit: fields {fields:?} asked of {}, whose values are not records \
                 (compile it with --fields, or leave fields out for its values)",
                table.compiled.name
            );
        }
        return Ok(Choice::Plain);
    };
    let all = || (0..records.fields().len()).collect::<Vec<_>>();
    let Some(names) = fields else { return Ok(Choice::Fields(all())) };
    let mut chosen = Vec::new();
    for name in names {
        if name == "*" {
            chosen.extend(all().into_iter().filter(|index| !chosen.contains(index)).collect::<Vec<_>>());
            continue;
        }
        let Some(index) = records.field_index(name) else {
            let known: Vec<&str> = records.fields().map(|field| field.name.as_str()).collect();
            polars_bail!(
                ComputeError: "fibkit: {} has no field {name:?} (its fields: {})",
                table.compiled.name,
                known.join(", ")
            );
        };
        chosen.push(index);
    }
    Ok(Choice::Fields(chosen))
}

/// The Polars type of a field of `kind` (an address as its text).
fn field_dtype(kind: FieldType) -> DataType {
    match kind {
        FieldType::Int => DataType::Int64,
        FieldType::Float => DataType::Float64,
        FieldType::Bool => DataType::Boolean,
        FieldType::Text | FieldType::Addr => DataType::String,
        FieldType::Ints => DataType::List(Box::new(DataType::Int64)),
    }
}

/// The type of the column `choice` answers from `table`.
pub fn dtype(table: &Table, choice: &Choice) -> DataType {
    match (choice, table.compiled.values.records()) {
        (Choice::Fields(chosen), Some(records)) => DataType::Struct(
            chosen
                .iter()
                .filter_map(|&index| records.fields().nth(index))
                .map(|field| Field::new(field.name.as_str().into(), field_dtype(field.kind)))
                .collect(),
        ),
        _ => match table.plain {
            Plain::Numbers(_) => DataType::UInt64,
            Plain::Texts => DataType::String,
            Plain::NextHops => DataType::UInt32,
        },
    }
}

/// The column named `name` of `choice`'s answers for `hops` (one a row;
/// [`fibkit::NO_ROUTE`] where none): a struct is null in the rows that
/// held no address (`present` false), and its fields null where no route.
///
/// # Errors
/// Only Polars' own, building the struct.
pub fn answers(
    name: PlSmallStr,
    table: &Table,
    choice: &Choice,
    hops: &[NextHop],
    present: &[bool],
) -> PolarsResult<Series> {
    let records = match (choice, table.compiled.values.records()) {
        (Choice::Fields(chosen), Some(records)) => (chosen, records),
        _ => return Ok(plain(name, table, hops)),
    };
    let (chosen, records) = records;
    let fields: Vec<Series> = chosen.iter().filter_map(|&index| field(records, index, hops)).collect();
    let answers = StructChunked::from_series(name, hops.len(), fields.iter())?;
    let answers = match present.contains(&false) {
        true => answers.rechunk().into_owned().with_outer_validity(Some(Bitmap::from_iter(present.iter().copied()))),
        false => answers,
    };
    Ok(answers.into_series())
}

/// Row `hop - 1` of a column, where next hop `hop` has a value there.
#[inline]
fn row(valid: &[u8], hop: NextHop) -> Option<usize> {
    let row = (hop as usize).checked_sub(1)?;
    (*valid.get(row)? != 0).then_some(row)
}

/// The values of field `index` at `hops`, as a column named after it.
fn field(records: &Records, index: usize, hops: &[NextHop]) -> Option<Series> {
    let name: PlSmallStr = records.fields().nth(index)?.name.as_str().into();
    let ColumnView { valid, offsets, data } = records.column(index)?;
    let span = |hop: NextHop| {
        let row = row(valid, hop)?;
        Some(*offsets.get(row)? as usize..*offsets.get(row + 1)? as usize)
    };
    let series = match data {
        ColumnData::Int(values) => {
            Int64Chunked::from_iter_options(name, hops.iter().map(|&hop| values.get(row(valid, hop)?).copied()))
                .into_series()
        }
        ColumnData::Float(values) => {
            Float64Chunked::from_iter_options(name, hops.iter().map(|&hop| values.get(row(valid, hop)?).copied()))
                .into_series()
        }
        ColumnData::Bool(values) => BooleanChunked::from_iter_options(
            name,
            hops.iter().map(|&hop| values.get(row(valid, hop)?).map(|&flag| flag != 0)),
        )
        .into_series(),
        // The opener checked that every row's text is UTF-8.
        ColumnData::Text(bytes) => StringChunked::from_iter_options(
            name,
            hops.iter().map(|&hop| std::str::from_utf8(bytes.get(span(hop)?)?).ok()),
        )
        .into_series(),
        ColumnData::Addr(values) => StringChunked::from_iter_options(
            name,
            hops.iter().map(|&hop| {
                let row = (hop as usize).checked_sub(1)?;
                let value = *values.get(row)?;
                match valid.get(row)? {
                    4 => Some(std::net::Ipv4Addr::from(value as u32).to_string()),
                    6 => Some(std::net::Ipv6Addr::from(value).to_string()),
                    _ => None,
                }
            }),
        )
        .into_series(),
        ColumnData::Ints(items) => {
            let mut list =
                ListPrimitiveChunkedBuilder::<Int64Type>::new(name, hops.len(), hops.len() * 4, DataType::Int64);
            for &hop in hops {
                match span(hop).and_then(|span| items.get(span)) {
                    Some(items) => list.append_slice(items),
                    None => list.append_null(),
                }
            }
            list.finish().into_series()
        }
    };
    Some(series)
}

/// The values of a table without records at `hops`.
fn plain(name: PlSmallStr, table: &Table, hops: &[NextHop]) -> Series {
    let values = &table.compiled.values;
    match &table.plain {
        Plain::Numbers(numbers) => {
            UInt64Chunked::from_iter_options(name, hops.iter().map(|&hop| numbers.get(hop as usize).copied().flatten()))
                .into_series()
        }
        Plain::Texts => StringChunked::from_iter_options(name, hops.iter().map(|&hop| values.text(hop))).into_series(),
        Plain::NextHops => UInt32Chunked::from_iter_options(
            name,
            hops.iter().map(|&hop| (hop != fibkit::NO_ROUTE && hop <= values.max_index()).then_some(hop)),
        )
        .into_series(),
    }
}
