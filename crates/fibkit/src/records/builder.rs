//! The records of a table being loaded: each distinct record kept once,
//! numbered in order of first appearance.

use std::collections::HashMap;

use super::column::{Records, RecordsError};
use super::spec::check_name;
use super::{Field, FieldValue};
use crate::base::hash::FoldState;
use crate::nexthop::{Label, NextHopTable};
use crate::NextHop;

/// The distinct records of a table being loaded. A route's value is
/// [`Label::Record`]`(row)`, interned in the [`NextHopTable`] as any
/// label; [`RecordTable::records`] lays them out in next-hop order.
#[derive(Clone, Debug)]
pub struct RecordTable {
    fields: Vec<Field>,
    rows: Vec<Box<[FieldValue]>>,
    /// A record's canonical bytes ([`encode`]) to its row.
    index: HashMap<Box<[u8]>, u32, FoldState>,
}

impl RecordTable {
    /// An empty table of records with `fields`.
    ///
    /// # Errors
    /// A message for no field, a name given twice, a bad name, or more
    /// than 4096 fields.
    pub fn new(fields: Vec<Field>) -> Result<Self, String> {
        if fields.is_empty() {
            return Err("a record needs at least one field".to_string());
        }
        if fields.len() > 4096 {
            return Err(format!("{} fields: at most 4096", fields.len()));
        }
        for (index, field) in fields.iter().enumerate() {
            check_name(&field.name)?;
            if fields[..index].iter().any(|earlier| earlier.name == field.name) {
                return Err(format!("field {:?} is named twice", field.name));
            }
        }
        Ok(RecordTable { fields, rows: Vec::new(), index: HashMap::default() })
    }

    /// The records' fields.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// How many distinct records there are.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there is no record.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Record `row`'s values, in field order.
    pub fn get(&self, row: u32) -> Option<&[FieldValue]> {
        self.rows.get(row as usize).map(|values| &values[..])
    }

    /// The row of the record `values` (one per field, in field order),
    /// adding it if it is new.
    ///
    /// # Errors
    /// A message for a value count other than the field count, a value of
    /// another type than its field's, or more than 2^32 - 2 records.
    pub fn intern(&mut self, values: Vec<FieldValue>) -> Result<u32, String> {
        if values.len() != self.fields.len() {
            return Err(format!("a record of {} values for {} fields", values.len(), self.fields.len()));
        }
        for (field, value) in self.fields.iter().zip(&values) {
            if let Some(kind) = value.kind().filter(|&kind| kind != field.kind) {
                return Err(format!("field {:?} is of type {}, not {kind}", field.name, field.kind));
            }
        }
        let key = encode(&values);
        if let Some(&row) = self.index.get(&key[..]) {
            return Ok(row);
        }
        let row = u32::try_from(self.rows.len())
            .ok()
            .filter(|&row| row < u32::MAX - 1)
            .ok_or("more than 2^32 - 2 records")?;
        self.rows.push(values.into_boxed_slice());
        self.index.insert(key.into_boxed_slice(), row);
        Ok(row)
    }

    /// The records of `next_hops`' indexes, in next-hop order: next hop
    /// `h` has the record its label [`Label::Record`] names, and a record
    /// of nulls where its label is not a record.
    ///
    /// # Errors
    /// [`RecordsError`] if a field's texts or lists pass 2^32 bytes or
    /// items.
    pub fn records(&self, next_hops: &NextHopTable) -> Result<Records, RecordsError> {
        let nulls: Vec<FieldValue> = vec![FieldValue::Null; self.fields.len()];
        let rows = || {
            (1..=next_hops.max_index()).map(|hop: NextHop| match next_hops.label(hop) {
                Some(Label::Record(row)) => self.get(row).unwrap_or(&nulls),
                _ => &nulls[..],
            })
        };
        Records::check_size(&self.fields, rows())?;
        Ok(Records::from_rows(self.fields.clone(), rows()))
    }
}

/// A record's values as bytes that two records share exactly when their
/// values are equal (floats by their bits, so a NaN equals itself).
fn encode(values: &[FieldValue]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 * values.len());
    for value in values {
        match value {
            FieldValue::Null => out.push(0),
            FieldValue::Int(number) => {
                out.push(1);
                out.extend_from_slice(&number.to_le_bytes());
            }
            FieldValue::Float(number) => {
                out.push(2);
                out.extend_from_slice(&number.to_bits().to_le_bytes());
            }
            FieldValue::Bool(flag) => out.extend_from_slice(&[3, u8::from(*flag)]),
            FieldValue::Text(text) => {
                out.push(4);
                out.extend_from_slice(&(text.len() as u64).to_le_bytes());
                out.extend_from_slice(text.as_bytes());
            }
            FieldValue::Addr(addr) => match addr {
                std::net::IpAddr::V4(v4) => {
                    out.push(5);
                    out.extend_from_slice(&v4.octets());
                }
                std::net::IpAddr::V6(v6) => {
                    out.push(6);
                    out.extend_from_slice(&v6.octets());
                }
            },
            FieldValue::Ints(numbers) => {
                out.push(7);
                out.extend_from_slice(&(numbers.len() as u64).to_le_bytes());
                for number in numbers {
                    out.extend_from_slice(&number.to_le_bytes());
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nexthop::Mapping;
    use crate::records::{FieldRef, FieldType};

    fn fields() -> Vec<Field> {
        vec![Field { name: "asn".into(), kind: FieldType::Int }, Field { name: "org".into(), kind: FieldType::Text }]
    }

    #[test]
    fn equal_records_share_a_row_and_types_are_checked() {
        let mut table = RecordTable::new(fields()).unwrap();
        let cloudflare = vec![FieldValue::Int(13335), FieldValue::Text("Cloudflare".into())];
        let first = table.intern(cloudflare.clone()).unwrap();
        let other = table.intern(vec![FieldValue::Int(13335), FieldValue::Null]).unwrap();
        assert_eq!((first, other, table.intern(cloudflare).unwrap()), (0, 1, 0));
        assert_eq!(table.len(), 2);
        let error = table.intern(vec![FieldValue::Text("13335".into()), FieldValue::Null]).unwrap_err();
        assert!(error.contains("\"asn\" is of type int, not text"), "{error}");
        assert!(table.intern(vec![FieldValue::Null]).unwrap_err().contains("1 values for 2 fields"));
        assert!(RecordTable::new(vec![fields()[0].clone(), fields()[0].clone()]).is_err());
    }

    #[test]
    fn records_are_laid_out_in_next_hop_order() {
        let mut table = RecordTable::new(fields()).unwrap();
        let a = table.intern(vec![FieldValue::Int(1), FieldValue::Text("a".into())]).unwrap();
        let b = table.intern(vec![FieldValue::Int(2), FieldValue::Null]).unwrap();
        let mut next_hops = NextHopTable::new(Mapping::Distinct);
        assert_eq!(next_hops.intern(Label::Record(b)), 1);
        assert_eq!(next_hops.intern(Label::Number(7)), 2);
        assert_eq!(next_hops.intern(Label::Record(a)), 3);
        let records = table.records(&next_hops).unwrap();
        assert_eq!(records.len(), 3);
        assert_eq!(records.get(1, 0), Some(FieldRef::Int(2)));
        assert_eq!(records.get(1, 1), Some(FieldRef::Null));
        assert_eq!(records.get(2, 0), Some(FieldRef::Null), "not a record");
        assert_eq!(records.get(3, 1), Some(FieldRef::Text("a")));
        assert_eq!(records.get(0, 0), None, "no route");
        assert_eq!(records.get(4, 0), None, "past the last");
    }
}
