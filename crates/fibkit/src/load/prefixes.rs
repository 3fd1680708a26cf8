//! `PREFIX VALUE` files: `.ipasn`, plain prefix/next-hop text, prefix CSV.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::fields::{renumber, RecordColumns};
use super::text::{for_each_record, parse_value, ExtraColumns, Separator};
use super::{report_conflicts, Conflict, LoadError, LoadOptions, Position, RouteTable};
use crate::addr::{Address, Prefix};
use crate::error::shorten;
use crate::nexthop::{Label, NextHopTable};
use crate::rib::Rib;
use crate::NextHop;

/// One parsed line.
struct Entry<A: Address> {
    prefix: Prefix<A>,
    label: Label,
    line: usize,
}

/// Parses every line, then inserts the routes in file order.
pub(crate) fn load(
    file: &Path,
    text: &str,
    separator: Separator,
    header: Option<usize>,
    options: &LoadOptions,
    table: &mut RouteTable,
) -> Result<(), LoadError> {
    let mut v4: Vec<Entry<u32>> = Vec::new();
    let mut v6: Vec<Entry<u128>> = Vec::new();
    let mut extra_columns = ExtraColumns::default();
    let mut records = RecordColumns::for_options(file, text, separator, header, options, 1)?;
    for_each_record(file, text, separator, header, |line, fields| {
        let error = |message: String| LoadError::new(file, Position::Line(line), message);
        let prefix_text = fields.first().copied().unwrap_or("");
        let value_text = fields.get(1).copied().ok_or_else(|| {
            error(format!("missing value column after {:?} (expected PREFIX VALUE)", shorten(prefix_text)))
        })?;
        let label = match &mut records {
            Some(records) => records.read(file, line, fields)?,
            None => {
                extra_columns.note(line, fields.get(2..).unwrap_or_default());
                parse_value(value_text).map_err(error)?
            }
        };
        if prefix_text.contains(':') {
            let prefix = prefix_text.parse::<Prefix<u128>>().map_err(|problem| error(problem.to_string()))?;
            v6.push(Entry { prefix, label, line });
        } else {
            let prefix = prefix_text.parse::<Prefix<u32>>().map_err(|problem| error(problem.to_string()))?;
            v4.push(Entry { prefix, label, line });
        }
        Ok(())
    })?;
    extra_columns.report(file, "PREFIX VALUE", options, &mut table.warnings)?;
    if let Some(records) = records {
        let (records, renumbered) = records.finish(file)?;
        for entry in &mut v4 {
            entry.label = renumber(entry.label, &renumbered);
        }
        for entry in &mut v6 {
            entry.label = renumber(entry.label, &renumbered);
        }
        table.records = Some(records);
    }

    let superseded4 = vec![false; v4.len()];
    let superseded6 = vec![false; v6.len()];
    let (duplicates4, duplicates6) = insert_in_file_order(&v4, &superseded4, &v6, &superseded6, table);
    if duplicates4.is_empty() && duplicates6.is_empty() {
        return Ok(());
    }
    let mut conflicts = Vec::new();
    let mut superseded4 = superseded4;
    let mut superseded6 = superseded6;
    for (earlier, later) in duplicate_pairs(&v4, &duplicates4) {
        superseded4[earlier] = true;
        conflicts.push(conflict(&v4[earlier], &v4[later]));
    }
    for (earlier, later) in duplicate_pairs(&v6, &duplicates6) {
        superseded6[earlier] = true;
        conflicts.push(conflict(&v6[earlier], &v6[later]));
    }
    report_conflicts(file, conflicts, options, table)?;
    // Rebuild without the replaced lines, so their values are not interned.
    table.v4 = Rib::new();
    table.v6 = Rib::new();
    table.next_hops = NextHopTable::new(options.mapping);
    insert_in_file_order(&v4, &superseded4, &v6, &superseded6, table);
    Ok(())
}

fn conflict<A: Address>(earlier: &Entry<A>, later: &Entry<A>) -> Conflict {
    let message = if earlier.label == later.label {
        format!("{} repeats line {} with the same value {}", later.prefix, earlier.line, later.label)
    } else {
        format!(
            "{} repeats line {}: value {} replaces {} (the later line wins)",
            later.prefix, earlier.line, later.label, earlier.label
        )
    };
    Conflict { line: later.line, message }
}

/// Inserts the entries not marked superseded, IPv4 and IPv6 interleaved in
/// line order (so next hops are interned in order of appearance); returns
/// the indexes of entries that replaced an earlier route.
fn insert_in_file_order(
    v4: &[Entry<u32>],
    superseded4: &[bool],
    v6: &[Entry<u128>],
    superseded6: &[bool],
    table: &mut RouteTable,
) -> (Vec<usize>, Vec<usize>) {
    let (mut duplicates4, mut duplicates6) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    // Neighbouring lines often share a value: skip the hash lookup then.
    let mut last: Option<(Label, NextHop)> = None;
    let mut intern = |next_hops: &mut NextHopTable, label: Label| match last {
        Some((last_label, hop)) if last_label == label => hop,
        _ => {
            let hop = next_hops.intern(label);
            last = Some((label, hop));
            hop
        }
    };
    while i < v4.len() || j < v6.len() {
        if j == v6.len() || (i < v4.len() && v4[i].line < v6[j].line) {
            if !superseded4[i] {
                let hop = intern(&mut table.next_hops, v4[i].label);
                if table.v4.insert(v4[i].prefix, hop).is_some() {
                    duplicates4.push(i);
                }
            }
            i += 1;
        } else {
            if !superseded6[j] {
                let hop = intern(&mut table.next_hops, v6[j].label);
                if table.v6.insert(v6[j].prefix, hop).is_some() {
                    duplicates6.push(j);
                }
            }
            j += 1;
        }
    }
    (duplicates4, duplicates6)
}

/// For each repeated prefix, the pairs (earlier index, later index) of
/// consecutive occurrences.
fn duplicate_pairs<A: Address>(entries: &[Entry<A>], duplicates: &[usize]) -> Vec<(usize, usize)> {
    let repeated: HashSet<Prefix<A>> = duplicates.iter().map(|&index| entries[index].prefix).collect();
    let mut last_seen: HashMap<Prefix<A>, usize> = HashMap::new();
    let mut pairs = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        if repeated.contains(&entry.prefix) {
            if let Some(earlier) = last_seen.insert(entry.prefix, index) {
                pairs.push((earlier, index));
            }
        }
    }
    pairs
}
