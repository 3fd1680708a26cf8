//! Records in next-hop order, one array per field (built, or mapped from a
//! compiled FIB file): what lookups read a field from.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::{Field, FieldRef, FieldType, FieldValue};
use crate::mem::LookupArray;
use crate::NextHop;

/// A field's values, one per record; `valid[row]` is 0 for a missing value
/// (an address's is 4 or 6, its family).
pub(crate) struct Column {
    pub(crate) field: Field,
    pub(crate) valid: LookupArray<u8>,
    pub(crate) data: Data,
}

/// A column's values by type; text and lists as Arrow lays them out:
/// row `r`'s are `bytes[offsets[r] .. offsets[r + 1]]`.
pub(crate) enum Data {
    Int(LookupArray<i64>),
    Float(LookupArray<f64>),
    Bool(LookupArray<u8>),
    Addr(LookupArray<u128>),
    Text { offsets: LookupArray<u32>, bytes: LookupArray<u8> },
    Ints { offsets: LookupArray<u32>, values: LookupArray<i64> },
}

/// A column's arrays, borrowed: what a caller gathers a field from in
/// bulk (Python builds Arrow arrays from them). Row `r` is next hop
/// `r + 1`.
#[derive(Clone, Copy, Debug)]
pub struct ColumnView<'a> {
    /// Per row: 0 where the value is missing, else 1 (an address: 4 or 6,
    /// its family).
    pub valid: &'a [u8],
    /// For text and lists: row `r`'s are `data[offsets[r] .. offsets[r + 1]]`;
    /// empty for the other types.
    pub offsets: &'a [u32],
    /// The values.
    pub data: ColumnData<'a>,
}

/// A column's values by type.
#[derive(Clone, Copy, Debug)]
pub enum ColumnData<'a> {
    /// [`FieldType::Int`]: one per row.
    Int(&'a [i64]),
    /// [`FieldType::Float`]: one per row.
    Float(&'a [f64]),
    /// [`FieldType::Bool`]: one per row, 0 or 1.
    Bool(&'a [u8]),
    /// [`FieldType::Addr`]: one per row, an IPv4 address in the low 32 bits.
    Addr(&'a [u128]),
    /// [`FieldType::Text`]: UTF-8, cut by the offsets.
    Text(&'a [u8]),
    /// [`FieldType::Ints`]: items, cut by the offsets.
    Ints(&'a [i64]),
}

/// The records of a compiled table, in next-hop order: next hop `h`'s
/// record is row `h - 1` of every column.
pub struct Records {
    pub(crate) columns: Vec<Column>,
    pub(crate) rows: usize,
}

/// Records too large to lay out: a column's text or lists past 4 GiB of
/// offsets.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("field {field:?}: more than 2^32 bytes or list items in all")]
pub struct RecordsError {
    /// The field whose values overflow.
    pub field: String,
}

impl std::fmt::Debug for Records {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let fields: Vec<String> = self.columns.iter().map(|column| column.field.to_string()).collect();
        f.debug_struct("Records").field("fields", &fields).field("rows", &self.rows).finish()
    }
}

impl Records {
    /// Lays out `rows` (each one value per field, of the field's type or
    /// null) as columns.
    ///
    /// # Panics
    /// If a row's length or a value's type does not match `fields`
    /// ([`super::RecordTable::intern`] checks both), or a column's text or
    /// lists pass 4 GiB ([`Records::check_size`] tells beforehand).
    pub(crate) fn from_rows<'a>(fields: Vec<Field>, rows: impl Iterator<Item = &'a [FieldValue]>) -> Self {
        let mut builders: Vec<Builder> = fields.iter().map(|field| Builder::new(field.kind)).collect();
        let mut count = 0;
        for row in rows {
            assert_eq!(row.len(), builders.len(), "a record of another field count");
            for (builder, value) in builders.iter_mut().zip(row) {
                builder.push(value);
            }
            count += 1;
        }
        let columns = fields.into_iter().zip(builders).map(|(field, builder)| builder.finish(field)).collect();
        Records { columns, rows: count }
    }

    /// The fields, in order.
    pub fn fields(&self) -> impl ExactSizeIterator<Item = &Field> + '_ {
        self.columns.iter().map(|column| &column.field)
    }

    /// The index of field `name`.
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|column| column.field.name == name)
    }

    /// How many records there are (the largest next hop).
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Whether there is no record.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Field `field` of next hop `hop`'s record: `None` for
    /// [`crate::NO_ROUTE`], a next hop past the last record or a field
    /// past the last; [`FieldRef::Null`] for a missing value.
    #[inline]
    pub fn get(&self, hop: NextHop, field: usize) -> Option<FieldRef<'_>> {
        let row = (hop as usize).checked_sub(1)?;
        let column = self.columns.get(field)?;
        let valid = *column.valid.get(row)?;
        if valid == 0 {
            return Some(FieldRef::Null);
        }
        let span = |offsets: &[u32]| Some(*offsets.get(row)? as usize..*offsets.get(row + 1)? as usize);
        Some(match &column.data {
            Data::Int(values) => FieldRef::Int(*values.get(row)?),
            Data::Float(values) => FieldRef::Float(*values.get(row)?),
            Data::Bool(values) => FieldRef::Bool(*values.get(row)? != 0),
            Data::Addr(values) => FieldRef::Addr(addr(valid, *values.get(row)?)),
            Data::Text { offsets, bytes } => FieldRef::Text(std::str::from_utf8(bytes.get(span(offsets)?)?).ok()?),
            Data::Ints { offsets, values } => FieldRef::Ints(values.get(span(offsets)?)?),
        })
    }

    /// Next hop `hop`'s record as one line of CSV: its fields' texts
    /// separated by commas, quoted where they hold a comma, a quote or a
    /// line break; `None` where [`Records::get`] has no record.
    pub fn text(&self, hop: NextHop) -> Option<String> {
        let mut out = String::new();
        for field in 0..self.columns.len() {
            if field > 0 {
                out.push(',');
            }
            write_csv_cell(&self.get(hop, field)?.to_string(), &mut out);
        }
        Some(out)
    }

    /// Appends next hop `hop`'s `fields` as a JSON object (`null` for no
    /// record: [`crate::NO_ROUTE`]); each of `fields` must be an index of
    /// [`Records::fields`].
    pub fn write_json(&self, hop: NextHop, fields: &[usize], out: &mut Vec<u8>) {
        if hop == crate::NO_ROUTE || hop as usize > self.rows {
            out.extend_from_slice(b"null");
            return;
        }
        out.push(b'{');
        for (position, &field) in fields.iter().enumerate() {
            if position > 0 {
                out.push(b',');
            }
            let name = self.columns.get(field).map_or("", |column| column.field.name.as_str());
            crate::base::quote::json_string(out, name);
            out.push(b':');
            self.get(hop, field).unwrap_or(FieldRef::Null).write_json(out);
        }
        out.push(b'}');
    }

    /// Field `field`'s arrays, to gather from in bulk.
    pub fn column(&self, field: usize) -> Option<ColumnView<'_>> {
        let column = self.columns.get(field)?;
        let (offsets, data): (&[u32], _) = match &column.data {
            Data::Int(values) => (&[], ColumnData::Int(values)),
            Data::Float(values) => (&[], ColumnData::Float(values)),
            Data::Bool(values) => (&[], ColumnData::Bool(values)),
            Data::Addr(values) => (&[], ColumnData::Addr(values)),
            Data::Text { offsets, bytes } => (offsets, ColumnData::Text(bytes)),
            Data::Ints { offsets, values } => (offsets, ColumnData::Ints(values)),
        };
        Some(ColumnView { valid: &column.valid, offsets, data })
    }

    /// Checks that `rows` can be laid out: no column's text or lists past
    /// 2^32 bytes or items.
    ///
    /// # Errors
    /// [`RecordsError`] naming the first field too large.
    pub fn check_size<'a>(fields: &[Field], rows: impl Iterator<Item = &'a [FieldValue]>) -> Result<(), RecordsError> {
        let mut sizes = vec![0u64; fields.len()];
        for row in rows {
            for (size, value) in sizes.iter_mut().zip(row) {
                *size += match value {
                    FieldValue::Text(text) => text.len() as u64,
                    FieldValue::Ints(values) => values.len() as u64,
                    _ => 0,
                };
            }
        }
        match sizes.iter().position(|&size| size > u64::from(u32::MAX)) {
            Some(index) => Err(RecordsError { field: fields[index].name.clone() }),
            None => Ok(()),
        }
    }
}

/// Appends `text` as a CSV cell (RFC 4180): quoted, quotes doubled, where
/// it holds a comma, a quote or a line break.
pub fn write_csv_cell(text: &str, out: &mut String) {
    if text.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&text.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(text);
    }
}

/// The address a column holds as `value`, of family `valid` (4 or 6).
#[inline]
fn addr(valid: u8, value: u128) -> IpAddr {
    if valid == 4 {
        IpAddr::V4(Ipv4Addr::from(value as u32))
    } else {
        IpAddr::V6(Ipv6Addr::from(value))
    }
}

/// A column being built.
enum Builder {
    Int(Vec<u8>, Vec<i64>),
    Float(Vec<u8>, Vec<f64>),
    Bool(Vec<u8>, Vec<u8>),
    Addr(Vec<u8>, Vec<u128>),
    Text(Vec<u8>, Vec<u32>, Vec<u8>),
    Ints(Vec<u8>, Vec<u32>, Vec<i64>),
}

impl Builder {
    fn new(kind: FieldType) -> Self {
        match kind {
            FieldType::Int => Builder::Int(Vec::new(), Vec::new()),
            FieldType::Float => Builder::Float(Vec::new(), Vec::new()),
            FieldType::Bool => Builder::Bool(Vec::new(), Vec::new()),
            FieldType::Addr => Builder::Addr(Vec::new(), Vec::new()),
            FieldType::Text => Builder::Text(Vec::new(), vec![0], Vec::new()),
            FieldType::Ints => Builder::Ints(Vec::new(), vec![0], Vec::new()),
        }
    }

    fn push(&mut self, value: &FieldValue) {
        let valid = u8::from(*value != FieldValue::Null);
        match (self, value) {
            (Builder::Int(valids, values), value) => {
                valids.push(valid);
                values.push(if let FieldValue::Int(number) = value { *number } else { 0 });
            }
            (Builder::Float(valids, values), value) => {
                valids.push(valid);
                values.push(if let FieldValue::Float(number) = value { *number } else { 0.0 });
            }
            (Builder::Bool(valids, values), value) => {
                valids.push(valid);
                values.push(u8::from(matches!(value, FieldValue::Bool(true))));
            }
            (Builder::Addr(valids, values), value) => match value {
                FieldValue::Addr(IpAddr::V4(v4)) => {
                    valids.push(4);
                    values.push(u128::from(u32::from(*v4)));
                }
                FieldValue::Addr(IpAddr::V6(v6)) => {
                    valids.push(6);
                    values.push(u128::from(*v6));
                }
                _ => {
                    valids.push(0);
                    values.push(0);
                }
            },
            (Builder::Text(valids, offsets, bytes), value) => {
                valids.push(valid);
                if let FieldValue::Text(text) = value {
                    bytes.extend_from_slice(text.as_bytes());
                }
                offsets.push(u32::try_from(bytes.len()).expect("text of a field past 4 GiB (check_size)"));
            }
            (Builder::Ints(valids, offsets, items), value) => {
                valids.push(valid);
                if let FieldValue::Ints(numbers) = value {
                    items.extend_from_slice(numbers);
                }
                offsets.push(u32::try_from(items.len()).expect("lists of a field past 2^32 items (check_size)"));
            }
        }
    }

    fn finish(self, field: Field) -> Column {
        let (valid, data) = match self {
            Builder::Int(valid, values) => (valid, Data::Int(values.into())),
            Builder::Float(valid, values) => (valid, Data::Float(values.into())),
            Builder::Bool(valid, values) => (valid, Data::Bool(values.into())),
            Builder::Addr(valid, values) => (valid, Data::Addr(values.into())),
            Builder::Text(valid, offsets, bytes) => {
                (valid, Data::Text { offsets: offsets.into(), bytes: bytes.into() })
            }
            Builder::Ints(valid, offsets, values) => {
                (valid, Data::Ints { offsets: offsets.into(), values: values.into() })
            }
        };
        Column { field, valid: valid.into(), data }
    }
}
