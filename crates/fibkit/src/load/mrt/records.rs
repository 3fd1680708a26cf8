//! Record framing: the MRT types and subtypes read, the common header, the
//! complete records of a file in order, and where truncated data ends.

use std::collections::BTreeMap;
use std::path::Path;

use super::cursor::Cursor;
use crate::addr::Family;
use crate::load::{warn, Decompressed, LoadError, LoadOptions, Position};

/// What a file holds, from its first `TABLE_DUMP*` or `BGP4MP*` record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Content {
    /// A RIB dump.
    Rib,
    /// An update stream.
    Updates,
}

impl Content {
    pub(super) fn of(bytes: &[u8]) -> Content {
        Records::new(bytes)
            .find_map(|record| match record.mrt_type {
                TABLE_DUMP | TABLE_DUMP_V2 => Some(Content::Rib),
                BGP4MP | BGP4MP_ET => Some(Content::Updates),
                _ => None,
            })
            .unwrap_or(Content::Rib)
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Content::Rib => "RIB dump",
            Content::Updates => "update stream",
        }
    }
}

/// `TABLE_DUMP` (RFC 6396 section 4.2): one route a record.
pub(super) const TABLE_DUMP: u16 = 12;
/// `TABLE_DUMP_V2` (section 4.3): a peer table, then a record a prefix.
pub(super) const TABLE_DUMP_V2: u16 = 13;
/// `BGP4MP` (section 4.4): BGP messages and state changes.
pub(super) const BGP4MP: u16 = 16;
/// `BGP4MP_ET`: `BGP4MP` with a microsecond timestamp.
pub(super) const BGP4MP_ET: u16 = 17;

/// Bytes of the MRT common header.
pub(super) const HEADER_LEN: usize = 12;
/// The largest record length a file may start with to be taken for MRT, and
/// the largest a record may announce before it is taken for corrupt rather
/// than cut off (RIB records of every peer of a collector stay well under).
const DETECT_MAX_LEN: u32 = 16 << 20;

/// What a record is, by type and subtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// `TABLE_DUMP_V2` `PEER_INDEX_TABLE`.
    PeerIndexTable,
    /// A `TABLE_DUMP_V2` unicast RIB record.
    Rib { family: Family, add_path: bool },
    /// A `TABLE_DUMP` record.
    TableDump { family: Family },
    /// A BGP message a peer sent, in `BGP4MP` or `BGP4MP_ET`.
    Message { as4: bool, add_path: bool },
    /// Known, and holds nothing a table takes (multicast, state changes,
    /// messages the collector sent).
    Ignored,
    /// Not read by fibkit: may hold routes.
    Unsupported,
}

pub(super) fn classify(mrt_type: u16, subtype: u16) -> Kind {
    match (mrt_type, subtype) {
        (TABLE_DUMP_V2, 1) => Kind::PeerIndexTable,
        (TABLE_DUMP_V2, 2) => Kind::Rib { family: Family::Ipv4, add_path: false },
        (TABLE_DUMP_V2, 4) => Kind::Rib { family: Family::Ipv6, add_path: false },
        (TABLE_DUMP_V2, 8) => Kind::Rib { family: Family::Ipv4, add_path: true },
        (TABLE_DUMP_V2, 10) => Kind::Rib { family: Family::Ipv6, add_path: true },
        (TABLE_DUMP_V2, 3 | 5 | 7 | 9 | 11) => Kind::Ignored,
        (TABLE_DUMP, 1) => Kind::TableDump { family: Family::Ipv4 },
        (TABLE_DUMP, 2) => Kind::TableDump { family: Family::Ipv6 },
        (BGP4MP | BGP4MP_ET, 1) => Kind::Message { as4: false, add_path: false },
        (BGP4MP | BGP4MP_ET, 4) => Kind::Message { as4: true, add_path: false },
        (BGP4MP | BGP4MP_ET, 8) => Kind::Message { as4: false, add_path: true },
        (BGP4MP | BGP4MP_ET, 9) => Kind::Message { as4: true, add_path: true },
        (BGP4MP | BGP4MP_ET, 0 | 5 | 6 | 7 | 10 | 11) => Kind::Ignored,
        _ => Kind::Unsupported,
    }
}

/// A name for a record type and subtype, for messages.
fn type_name(mrt_type: u16, subtype: u16) -> String {
    let name = match (mrt_type, subtype) {
        (TABLE_DUMP_V2, 6) => "TABLE_DUMP_V2 RIB_GENERIC",
        (TABLE_DUMP_V2, 12) => "TABLE_DUMP_V2 RIB_GENERIC_ADDPATH",
        (BGP4MP | BGP4MP_ET, 2) => "BGP4MP_ENTRY",
        (BGP4MP | BGP4MP_ET, 3) => "BGP4MP_SNAPSHOT",
        (TABLE_DUMP, _) => "TABLE_DUMP",
        (TABLE_DUMP_V2, _) => "TABLE_DUMP_V2",
        (BGP4MP, _) => "BGP4MP",
        (BGP4MP_ET, _) => "BGP4MP_ET",
        (11, _) => "OSPFv2",
        (32 | 33, _) => "ISIS",
        (48 | 49, _) => "OSPFv3",
        _ => "unknown",
    };
    format!("type {mrt_type} subtype {subtype} ({name})")
}

/// Whether `bytes` start with an MRT header of a type and subtype fibkit
/// knows and a sane length (see the [module docs](super)).
pub(crate) fn is_mrt(bytes: &[u8]) -> bool {
    let Some(header) = bytes.get(..HEADER_LEN) else { return false };
    let mrt_type = u16::from_be_bytes([header[4], header[5]]);
    let subtype = u16::from_be_bytes([header[6], header[7]]);
    let length = u32::from_be_bytes([header[8], header[9], header[10], header[11]]);
    classify(mrt_type, subtype) != Kind::Unsupported
        && length <= DETECT_MAX_LEN
        && (mrt_type != BGP4MP_ET || length >= 4)
}

/// One complete record.
#[derive(Clone, Copy, Debug)]
pub(super) struct Record<'a> {
    /// Offset of the header.
    pub(super) offset: usize,
    pub(super) seconds: u32,
    pub(super) mrt_type: u16,
    pub(super) subtype: u16,
    pub(super) body: Cursor<'a>,
}

/// Where the complete records end, when the data ends inside a record.
#[derive(Clone, Debug)]
pub(super) struct Truncation {
    /// Offset of the incomplete record (the end of the complete data).
    offset: usize,
    /// What is missing.
    message: String,
    /// The length the record's header announces, if the header is complete.
    announced: Option<u32>,
}

impl Truncation {
    /// Why a record that runs past the end of the data is corrupt rather
    /// than cut off: the compressed stream it came from is complete, or the
    /// length it announces is more than any record holds.
    fn corruption(&self, data: &Decompressed<'_>) -> Option<String> {
        let announced = self.announced?;
        if let (Some(compression), None) = (data.compression, &data.cut) {
            return Some(format!("but the {compression} stream they came from is complete"));
        }
        (announced > DETECT_MAX_LEN).then(|| format!("and no MRT record holds more than {DETECT_MAX_LEN} bytes"))
    }
}

/// The complete records of a file in order; the first incomplete one ends
/// the iteration and is described in `truncation`.
pub(super) struct Records<'a> {
    bytes: &'a [u8],
    offset: usize,
    count: usize,
    pub(super) truncation: Option<Truncation>,
}

impl<'a> Records<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Records { bytes, offset: 0, count: 0, truncation: None }
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Record<'a>;

    fn next(&mut self) -> Option<Record<'a>> {
        let rest = &self.bytes[self.offset..];
        if rest.is_empty() || self.truncation.is_some() {
            return None;
        }
        if rest.len() < HEADER_LEN {
            self.truncation = Some(Truncation {
                offset: self.offset,
                message: format!("an incomplete MRT header ({} of {HEADER_LEN} bytes)", rest.len()),
                announced: None,
            });
            return None;
        }
        let field = |at: usize| u16::from_be_bytes([rest[at], rest[at + 1]]);
        let length = u32::from_be_bytes([rest[8], rest[9], rest[10], rest[11]]);
        let available = rest.len() - HEADER_LEN;
        if u64::from(length) > available as u64 {
            self.truncation = Some(Truncation {
                offset: self.offset,
                message: format!(
                    "an incomplete MRT record ({}): its header announces {length} bytes, {available} follow",
                    type_name(field(4), field(6))
                ),
                announced: Some(length),
            });
            return None;
        }
        let length = length as usize;
        let record = Record {
            offset: self.offset,
            seconds: u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]),
            mrt_type: field(4),
            subtype: field(6),
            body: Cursor::new(&rest[HEADER_LEN..HEADER_LEN + length], self.offset + HEADER_LEN),
        };
        self.offset += HEADER_LEN + length;
        self.count += 1;
        Some(record)
    }
}

/// Warns (an error with `strict`) about a truncated file and skipped
/// records, once the records are read.
pub(super) fn report_reading(
    file: &Path,
    data: &Decompressed<'_>,
    records: &Records<'_>,
    skipped: &BTreeMap<(u16, u16), (usize, usize)>,
    content: Content,
    options: &LoadOptions,
    warnings: &mut Vec<String>,
) -> Result<(), LoadError> {
    for (&(mrt_type, subtype), &(count, first)) in skipped {
        let why = match (content, classify(mrt_type, subtype)) {
            (Content::Rib, Kind::Message { .. }) => "BGP messages in a RIB dump are not read",
            (Content::Updates, Kind::Rib { .. } | Kind::TableDump { .. } | Kind::PeerIndexTable) => {
                "RIB records in an update stream are not read"
            }
            _ => "fibkit does not read them",
        };
        warn(
            file,
            Position::Offset(first as u64),
            format!("skipped {count} MRT record(s) of {}, the first here: {why}", type_name(mrt_type, subtype)),
            options,
            warnings,
        )?;
    }
    if let Some(truncation) = &records.truncation {
        if let Some(why) = truncation.corruption(data) {
            return Err(LoadError::new(
                file,
                Position::Offset(truncation.offset as u64),
                format!("a corrupt record, not a cut-off file: {}, {why}", truncation.message),
            ));
        }
    }
    if let Some(trailing) = &data.trailing {
        warn(file, trailing.position(), trailing.message(), options, warnings)?;
    }
    let ended = match (&records.truncation, &data.cut) {
        (Some(truncation), cut) => {
            let cause = cut.as_ref().map_or_else(String::new, |cut| format!("; {cut}"));
            Some((truncation.offset, format!("{}{cause}", truncation.message)))
        }
        (None, Some(cut)) => Some((data.bytes.len(), format!("{cut}, at the end of a record"))),
        (None, None) => None,
    };
    if let Some((offset, message)) = ended {
        warn(
            file,
            Position::Offset(offset as u64),
            format!("the data ends here, in {message}; loaded the {} complete records before it", records.count),
            options,
            warnings,
        )?;
    }
    Ok(())
}
