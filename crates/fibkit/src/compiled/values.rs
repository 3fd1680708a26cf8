//! The values behind a compiled table's next hops, kept as text ready to
//! write: built from a [`NextHopTable`], or read in place from a compiled
//! FIB file without building anything.
//!
//! ```text
//!  offsets: | 0 | 5 | 9 | 22 | ...     (max_index + 1 entries)
//!  text:    |15169|3356|195.66.226.74| ...
//!            hop 1 hop 2 hop 3         text of hop i: text[offsets[i - 1] .. offsets[i]]
//! ```

use std::borrow::Cow;

use crate::file::{FibFile, FileError, FileWriter, Problem};
use crate::mem::LookupArray;
use crate::nexthop::{Label, Mapping, NextHopTable};
use crate::records::{RecordTable, Records, RecordsError};
use crate::{NextHop, NO_ROUTE};

/// Section of the mapping: kind (0 distinct, 1 modulo) and `n`.
const MAPPING: &str = "values.mapping";
/// Section of the text offsets.
const OFFSETS: &str = "values.offsets";
/// Section of the texts.
const TEXT: &str = "values.text";

/// What each next hop of a compiled table stands for.
pub struct Values {
    mapping: Mapping,
    /// With records: next hop `h`'s record (its text is empty).
    records: Option<Records>,
    /// With [`Mapping::Distinct`]: `offsets[i]` ends the text of next hop
    /// `i` and starts that of `i + 1`; `offsets[0] == 0`.
    offsets: LookupArray<u32>,
    /// The values' texts, one after the other (ASCII).
    text: LookupArray<u8>,
}

impl Values {
    /// The values of `next_hops`, as their texts.
    ///
    /// # Panics
    /// If the texts exceed 4 GiB.
    pub fn new(next_hops: &NextHopTable) -> Self {
        let mut offsets = vec![0u32];
        let mut text = Vec::new();
        if next_hops.mapping() == Mapping::Distinct {
            for hop in 1..=next_hops.max_index() {
                // A record's text is empty: its fields are in the records.
                if let Some(label) = next_hops.label(hop).filter(|label| !matches!(label, Label::Record(_))) {
                    text.extend_from_slice(label.to_string().as_bytes());
                }
                offsets.push(u32::try_from(text.len()).expect("values of more than 4 GiB of text"));
            }
        }
        Values { mapping: next_hops.mapping(), records: None, offsets: offsets.into(), text: text.into() }
    }

    /// The values of `next_hops`, whose labels name rows of `records`
    /// ([`Label::Record`]); a label that is not a record keeps its text.
    ///
    /// # Errors
    /// [`RecordsError`] if a field's texts or lists pass 2^32 bytes or
    /// items.
    pub fn with_records(next_hops: &NextHopTable, records: &RecordTable) -> Result<Self, RecordsError> {
        let records = records.records(next_hops)?;
        Ok(Values { records: Some(records), ..Values::new(next_hops) })
    }

    /// The records next hops stand for, if the table's values are records.
    pub fn records(&self) -> Option<&Records> {
        self.records.as_ref()
    }

    /// The mapping from values to next hops.
    pub fn mapping(&self) -> Mapping {
        self.mapping
    }

    /// The largest next hop that has a value.
    pub fn max_index(&self) -> NextHop {
        match self.mapping {
            Mapping::Distinct => (self.offsets.len() - 1) as NextHop,
            Mapping::Modulo(n) => n,
        }
    }

    /// The input's text of next hop `hop` ([`Mapping::Distinct`] only):
    /// `None` for [`NO_ROUTE`] and for an index past the last.
    #[inline]
    pub fn text(&self, hop: NextHop) -> Option<&str> {
        let index = (hop as usize).checked_sub(1)?;
        let (&start, &end) = (self.offsets.get(index)?, self.offsets.get(index + 1)?);
        std::str::from_utf8(self.text.get(start as usize..end as usize)?).ok()
    }

    /// The value of a route whose next hop is `hop`, as text that loads
    /// back to the same table ([`NextHopTable::value_text`]).
    pub fn value_text(&self, hop: NextHop) -> Option<Cow<'_, str>> {
        match self.mapping {
            Mapping::Distinct => match self.label(hop)? {
                Label::Record(_) => self.records.as_ref()?.text(hop).map(Cow::Owned),
                _ => self.text(hop).map(Cow::Borrowed),
            },
            Mapping::Modulo(n) => (hop != NO_ROUTE && hop <= n).then(|| Cow::Owned(hop.to_string())),
        }
    }

    /// The input's label of next hop `hop` ([`NextHopTable::label`]):
    /// `None` for [`NO_ROUTE`], with [`Mapping::Modulo`], and for a text
    /// that is neither a number nor an address (only a hostile file has
    /// one).
    pub fn label(&self, hop: NextHop) -> Option<Label> {
        if self.mapping != Mapping::Distinct {
            return None;
        }
        let text = self.text(hop)?;
        if text.is_empty() && self.records.as_ref().is_some_and(|records| (hop as usize) <= records.len()) {
            return Some(Label::Record(hop - 1));
        }
        if let Ok(number) = text.parse::<u64>() {
            return Some(Label::Number(number));
        }
        text.parse().ok().map(Label::Addr)
    }

    /// Writes the values into `file`.
    pub(crate) fn save<'a>(&'a self, file: &mut FileWriter<'a>) {
        let mapping = match self.mapping {
            Mapping::Distinct => [0, 0],
            Mapping::Modulo(n) => [1, u64::from(n)],
        };
        file.owned_array(MAPPING, mapping.to_vec());
        file.array(OFFSETS, &self.offsets);
        file.array(TEXT, &self.text);
        if let Some(records) = &self.records {
            records.save(file);
        }
    }

    /// Reads the values of `file`, checking that every next hop's text
    /// lies inside the texts and that the texts are printable ASCII.
    pub(super) fn open(file: &FibFile) -> Result<Self, FileError> {
        let mapping = Self::mapping_in(file)?;
        let offsets = file.array::<u32>(OFFSETS)?;
        let text = file.array::<u8>(TEXT)?;
        let bad =
            |section: &str, size, index, value, problem| Err(file.element_error(section, size, index, value, problem));
        if offsets.first() != Some(&0) {
            return bad(
                OFFSETS,
                4,
                0,
                offsets.first().copied().unwrap_or_default().into(),
                "the first text does not start at 0",
            );
        }
        // Branch-free passes first (vectorised), positions only on failure.
        if offsets.windows(2).fold(false, |descending, pair| descending | (pair[1] < pair[0])) {
            let index = offsets.windows(2).position(|pair| pair[1] < pair[0]).unwrap_or_default();
            return bad(OFFSETS, 4, index + 1, offsets[index + 1].into(), "a text ends before it starts");
        }
        if offsets.last().map(|&end| end as usize) != Some(text.len()) {
            return bad(
                OFFSETS,
                4,
                offsets.len() - 1,
                offsets[offsets.len() - 1].into(),
                "the texts do not end with the text section",
            );
        }
        if mapping != Mapping::Distinct && offsets.len() > 1 {
            return bad(OFFSETS, 4, 1, offsets.len() as u64, "values % n + 1 have no texts");
        }
        if !text.iter().fold(true, |printable, byte| printable & byte.is_ascii_graphic()) {
            let index = text.iter().position(|byte| !byte.is_ascii_graphic()).unwrap_or_default();
            return bad(TEXT, 1, index, text[index].into(), "not printable ASCII");
        }
        let records = if Records::in_file(file) {
            if mapping != Mapping::Distinct {
                return bad(OFFSETS, 4, 0, 0, "values % n + 1 have no records");
            }
            Some(Records::open(file, offsets.len() - 1)?)
        } else {
            None
        };
        Ok(Values { mapping, records, offsets, text })
    }
}

impl Values {
    /// The mapping `file` stores.
    fn mapping_in(file: &FibFile) -> Result<Mapping, FileError> {
        let bytes = file.section(MAPPING)?.unwrap_or_default();
        let word = |index: usize| {
            bytes.get(index * 8..index * 8 + 8).map(|word| u64::from_le_bytes(word.try_into().unwrap_or_default()))
        };
        match (bytes.len(), word(0), word(1)) {
            (16, Some(0), Some(0)) => Ok(Mapping::Distinct),
            (16, Some(1), Some(n)) if n > 0 && n <= u64::from(u32::MAX) => Ok(Mapping::Modulo(n as u32)),
            (16, Some(kind), Some(n)) => {
                let problem = "neither distinct values (0, 0) nor value % n + 1 (1, n)";
                Err(file.element_error(MAPPING, 8, 0, kind << 32 | n, problem))
            }
            _ => Err(file
                .error(None, Problem::Section { name: MAPPING.to_string(), problem: "not two numbers".to_string() })),
        }
    }

    /// The largest next hop with a value in `file`, read from the section
    /// sizes alone (the sections are checked by [`Values::open`]), so that
    /// the engines' checks can run beside it.
    pub(super) fn max_index_in(file: &FibFile) -> Result<NextHop, FileError> {
        match Self::mapping_in(file)? {
            Mapping::Modulo(n) => Ok(n),
            Mapping::Distinct => {
                let texts = file.section_length(OFFSETS).unwrap_or_default() / 4;
                NextHop::try_from(texts.saturating_sub(1)).map_err(|_| {
                    file.error(
                        file.section_offset(OFFSETS),
                        Problem::Section { name: OFFSETS.to_string(), problem: "more than 2^32 values".to_string() },
                    )
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_answer_as_the_next_hop_table() {
        let mut next_hops = NextHopTable::new(Mapping::Distinct);
        next_hops.intern(Label::Number(15169));
        next_hops.intern(Label::Addr("2001:db8::1".parse().unwrap()));
        next_hops.intern(Label::Addr("192.0.2.1".parse().unwrap()));
        next_hops.intern(Label::Addr("::ffff:192.0.2.1".parse().unwrap()));
        let values = Values::new(&next_hops);
        assert_eq!(values.max_index(), 4);
        for hop in 0..=5 {
            assert_eq!(values.label(hop), next_hops.label(hop), "{hop}");
            assert_eq!(values.value_text(hop).map(String::from), next_hops.value_text(hop), "{hop}");
        }
        let modulo = NextHopTable::new(Mapping::Modulo(7));
        let values = Values::new(&modulo);
        assert_eq!((values.max_index(), values.label(3)), (7, None));
        assert_eq!(values.value_text(7).as_deref(), Some("7"));
        assert_eq!(values.value_text(8), None);
    }
}
