//! Inclusive range files `START END VALUE[ ...]` (iptoasn TSV,
//! ip-location-db CSV), converted to prefixes.

use std::collections::BTreeMap;
use std::path::Path;

use super::fields::{renumber, RecordColumns};
use super::text::{for_each_record, parse_range_addr, parse_value, RangeAddr, Separator};
use super::{report_conflicts, Conflict, LoadError, LoadOptions, Position, RouteTable};
use crate::addr::{range_to_prefixes, Address};
use crate::error::shorten;
use crate::nexthop::{Label, NextHopTable};
use crate::rib::Rib;

/// One parsed line; `value` is `None` for "not routed" (value 0).
#[derive(Clone, Copy, Debug)]
struct Span<A: Address> {
    first: A,
    last: A,
    value: Option<Label>,
    line: usize,
}

/// How a line wrote its addresses.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Notation {
    V4,
    V6,
    Decimal,
}

/// A parsed line before the family of decimal addresses is known.
struct RawSpan {
    notation: Notation,
    first: u128,
    last: u128,
    value: Option<Label>,
    line: usize,
}

/// The first line of each kind of decimal range seen: one that fits IPv4
/// (its END at most 2^32 - 1) and one beyond it.
#[derive(Default)]
struct DecimalFamilies {
    fits_v4: Option<usize>,
    beyond_v4: Option<usize>,
}

impl DecimalFamilies {
    /// Records the decimal range on `line` ending at `end`; refuses the file
    /// once both kinds appear, naming the line that made it a mix: a
    /// file's decimal ranges are all IPv4 or all IPv6, never guessed apart.
    fn record(&mut self, line: usize, end: u128) -> Result<(), String> {
        let beyond = end > u128::from(u32::MAX);
        let (this, other) =
            if beyond { (&mut self.beyond_v4, self.fits_v4) } else { (&mut self.fits_v4, self.beyond_v4) };
        this.get_or_insert(line);
        match other {
            Some(other) if beyond => Err(format!(
                "decimal range END {end} is beyond IPv4 (2^32 - 1), but line {other}'s decimal range fits IPv4: \
                 a file's decimal ranges are all IPv4 or all IPv6 (write IPv6 ranges as IPv6 addresses)"
            )),
            Some(other) => Err(format!(
                "decimal range END {end} fits IPv4, but line {other}'s decimal range is beyond IPv4 (2^32 - 1): \
                 a file's decimal ranges are all IPv4 or all IPv6 (write IPv6 ranges as IPv6 addresses)"
            )),
            None => Ok(()),
        }
    }

    /// Whether the file's decimal ranges are IPv6.
    fn are_v6(&self) -> bool {
        self.beyond_v4.is_some()
    }
}

/// Parses every line, resolves overlaps (the later line wins), merges
/// adjacent equal ranges and inserts their prefixes.
pub(crate) fn load(
    file: &Path,
    text: &str,
    separator: Separator,
    header: Option<usize>,
    options: &LoadOptions,
    table: &mut RouteTable,
) -> Result<(), LoadError> {
    let mut raw = Vec::new();
    let mut decimal = DecimalFamilies::default();
    let mut records = RecordColumns::for_options(file, text, separator, header, options, 2)?;
    for_each_record(file, text, separator, header, |line, fields| {
        let error = |message: String| LoadError::new(file, Position::Line(line), message);
        let field = |index: usize, name: &str| {
            fields.get(index).copied().ok_or_else(|| {
                error(format!("missing {name} column (expected START END VALUE, found {} column(s))", fields.len()))
            })
        };
        let first = parse_range_addr(field(0, "START")?).map_err(|problem| error(format!("START: {problem}")))?;
        let last = parse_range_addr(field(1, "END")?).map_err(|problem| error(format!("END: {problem}")))?;
        let value_text = field(2, "VALUE")?;
        let value = if value_text.bytes().all(|b| b == b'0') && !value_text.is_empty() {
            None
        } else if let Some(records) = &mut records {
            Some(records.read(file, line, fields)?)
        } else {
            Some(parse_value(value_text).map_err(error)?)
        };
        let (notation, start, end) = match (first, last) {
            (RangeAddr::V4(start), RangeAddr::V4(end)) => (Notation::V4, u128::from(start), u128::from(end)),
            (RangeAddr::V6(start), RangeAddr::V6(end)) => (Notation::V6, start, end),
            (RangeAddr::Number(start), RangeAddr::Number(end)) => (Notation::Decimal, start, end),
            _ => {
                return Err(error(format!(
                    "START {} and END {} are not of the same kind (both IPv4, both IPv6 or both decimal)",
                    shorten(fields[0]),
                    shorten(fields[1])
                )))
            }
        };
        if end < start {
            return Err(error(format!("range END {} is before its START {}", shorten(fields[1]), shorten(fields[0]))));
        }
        if notation == Notation::Decimal {
            decimal.record(line, end).map_err(error)?;
        }
        raw.push(RawSpan { notation, first: start, last: end, value, line });
        Ok(())
    })?;

    let mut v4: Vec<Span<u32>> = Vec::new();
    let mut v6: Vec<Span<u128>> = Vec::new();
    if let Some(records) = records {
        let (records, renumbered) = records.finish(file)?;
        for span in &mut raw {
            span.value = span.value.map(|label| renumber(label, &renumbered));
        }
        table.records = Some(records);
    }
    for span in raw {
        let is_v4 = match span.notation {
            Notation::V4 => true,
            Notation::V6 => false,
            Notation::Decimal => !decimal.are_v6(),
        };
        if is_v4 {
            // Dotted addresses fit by construction; decimal ones do because no
            // decimal END (nor so START) exceeds u32::MAX unless they are IPv6.
            v4.push(Span { first: span.first as u32, last: span.last as u32, value: span.value, line: span.line });
        } else {
            v6.push(Span { first: span.first, last: span.last, value: span.value, line: span.line });
        }
    }

    let mut conflicts = Vec::new();
    let v4 = resolve(v4, &mut conflicts);
    let v6 = resolve(v6, &mut conflicts);
    report_conflicts(file, conflicts, options, table)?;
    insert_merged(&v4, &mut table.v4, &mut table.next_hops);
    insert_merged(&v6, &mut table.v6, &mut table.next_hops);
    Ok(())
}

/// Makes the spans disjoint and sorted; where spans overlap, the later line
/// takes the shared addresses (each such overlap becomes a conflict).
fn resolve<A: Address>(spans: Vec<Span<A>>, conflicts: &mut Vec<Conflict>) -> Vec<Span<A>> {
    if spans.windows(2).all(|pair| pair[0].last < pair[1].first) {
        return spans;
    }
    let mut sorted = spans.clone();
    sorted.sort_by_key(|span| span.first);
    if sorted.windows(2).all(|pair| pair[0].last < pair[1].first) {
        return sorted;
    }
    drop(sorted);
    // Paint the spans in line order; the map holds disjoint spans by start.
    let mut painted: BTreeMap<A, Span<A>> = BTreeMap::new();
    for span in spans {
        let mut overlapped: Vec<A> = painted
            .range(..=span.last)
            .rev()
            .take_while(|(_, old)| old.last >= span.first)
            .map(|(&start, _)| start)
            .collect();
        overlapped.reverse();
        for start in overlapped {
            let old = painted.remove(&start).expect("key was just listed");
            let shared_first = old.first.max(span.first);
            let shared_last = old.last.min(span.last);
            let values = match (old.value == span.value, span.value) {
                (true, _) => "same value".to_string(),
                (false, Some(value)) => format!("value {value} replaces {}", describe(old.value)),
                (false, None) => format!("not routed replaces {}", describe(old.value)),
            };
            conflicts.push(Conflict {
                line: span.line,
                message: format!(
                    "range {}-{} overlaps line {} ({}-{}) on {}-{}: {values} (the later line wins)",
                    span.first.display(),
                    span.last.display(),
                    old.line,
                    old.first.display(),
                    old.last.display(),
                    shared_first.display(),
                    shared_last.display(),
                ),
            });
            if old.first < span.first {
                let last = span.first.checked_prev().expect("span.first > old.first >= 0");
                painted.insert(old.first, Span { last, ..old });
            }
            if old.last > span.last {
                let first = span.last.checked_next().expect("span.last < old.last <= MAX");
                painted.insert(first, Span { first, ..old });
            }
        }
        painted.insert(span.first, span);
    }
    painted.into_values().collect()
}

fn describe(value: Option<Label>) -> String {
    value.map_or_else(|| "not routed".to_string(), |value| value.to_string())
}

/// Merges adjacent spans with equal values and inserts each merged range as
/// its minimal set of prefixes. `spans` are disjoint and sorted.
fn insert_merged<A: Address>(spans: &[Span<A>], rib: &mut Rib<A>, next_hops: &mut NextHopTable) {
    let mut pending: Option<(A, A, Label)> = None;
    let mut flush = |pending: Option<(A, A, Label)>, rib: &mut Rib<A>| {
        if let Some((first, last, label)) = pending {
            let hop = next_hops.intern(label);
            for prefix in range_to_prefixes(first, last) {
                rib.insert(prefix, hop);
            }
        }
    };
    for span in spans {
        let Some(label) = span.value else {
            flush(pending.take(), rib);
            continue;
        };
        match pending {
            Some((first, last, pending_label)) if pending_label == label && last.checked_next() == Some(span.first) => {
                pending = Some((first, span.last, label));
            }
            _ => {
                flush(pending.take(), rib);
                pending = Some((span.first, span.last, label));
            }
        }
    }
    flush(pending, rib);
}
