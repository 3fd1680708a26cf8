//! RIB -> D`K`R6: walk the RIB's ranges chunk by chunk.

use std::collections::HashMap;
use std::time::Instant;

use super::{DirectEntry, Dxr6, RangeEntry, BASE_MAX, SIZE_XL};
use crate::error::{BuildError, Limit, LimitExceeded};
use crate::mem::{try_copy_grown, try_reserve, try_reserve_map, try_with_capacity};
use crate::rib::Rib6;

/// Figures of a build, kept for the stats report.
#[derive(Clone, Debug, Default)]
pub(super) struct Summary {
    pub name: String,
    pub prefixes: usize,
    pub chunks_resolved: usize,
    pub chunks_with_ranges: usize,
    /// Chunks whose ranges equal an earlier chunk's and share them.
    pub chunks_shared: usize,
    /// Range entries, without headers.
    pub ranges: usize,
    pub headers: usize,
    pub largest_chunk: usize,
    pub build_ms: f64,
}

impl<const K: u32> Dxr6<K> {
    /// Builds D`K`R6 from `rib`.
    ///
    /// # Errors
    /// [`BuildError::Limit`] when a next hop or the range entries exceed
    /// the fields; [`BuildError::OutOfMemory`] when the system refuses an
    /// array.
    pub fn build(rib: &Rib6) -> Result<Self, BuildError> {
        const { assert!(K >= 1 && K <= 24, "direct table of 2 to 2^24 entries") };
        let start = Instant::now();
        let name = format!("d{K}r6");
        let refuse = |limit: Limit, field: String, value: u64, max: u64| -> BuildError {
            LimitExceeded::new(name.clone(), limit, field, value, max).instead("poptrie16 and poptrie18").into()
        };
        let refused = |array| {
            let name = &name;
            move |error| BuildError::out_of_memory(name, array, error)
        };
        let shift = 128 - K;
        let all = rib.ranges(0, u128::MAX);
        let mut direct = try_with_capacity(1 << K).map_err(refused("direct table"))?;
        let mut range: Vec<RangeEntry> = Vec::new();
        let mut shared: HashMap<Vec<RangeEntry>, u32> = HashMap::new();
        let mut summary = Summary { name: name.clone(), prefixes: rib.len(), ..Summary::default() };
        let mut fragments: Vec<(u128, u32)> = Vec::new();
        let mut cursor = 0;
        for chunk in 0..1u128 << K {
            let first = chunk << shift;
            let last = first | (u128::MAX >> K);
            while all[cursor].last < first {
                cursor += 1;
            }
            fragments.clear();
            loop {
                let piece = &all[cursor];
                if fragments.last().map(|&(_, next_hop)| next_hop) != Some(piece.next_hop) {
                    fragments.push((piece.first.max(first) - first, piece.next_hop));
                }
                if piece.last >= last {
                    break;
                }
                cursor += 1;
            }
            if let [(_, next_hop)] = fragments[..] {
                if next_hop > BASE_MAX {
                    let field = "the 19-bit base of a direct entry".to_string();
                    return Err(refuse(Limit::NextHop, field, next_hop.into(), BASE_MAX.into()));
                }
                direct.push(DirectEntry::resolved(next_hop));
                summary.chunks_resolved += 1;
                continue;
            }
            let mut entries = Vec::with_capacity(fragments.len());
            for &(offset, next_hop) in &fragments {
                if u128::from(next_hop) >= 1 << K {
                    let field = format!("the {K}-bit next-hop field of a range entry (chunk {chunk})");
                    return Err(refuse(Limit::NextHop, field, next_hop.into(), (1u64 << K) - 1));
                }
                entries.push(RangeEntry::new::<K>(offset, next_hop));
            }
            summary.chunks_with_ranges += 1;
            summary.largest_chunk = summary.largest_chunk.max(entries.len());
            if let Some(&base) = shared.get(&entries) {
                direct.push(DirectEntry::ranges(base, entries.len()));
                summary.chunks_shared += 1;
                continue;
            }
            let base = range.len();
            let needed = base + entries.len() + usize::from(entries.len() >= SIZE_XL as usize);
            if base > BASE_MAX as usize || needed > BASE_MAX as usize + 1 {
                let field = "the range entries the 19-bit base of a direct entry indexes".to_string();
                return Err(refuse(Limit::RangeEntries, field, needed as u64, u64::from(BASE_MAX) + 1));
            }
            try_reserve(&mut range, needed - base).map_err(refused("range table"))?;
            try_reserve_map(&mut shared, 1).map_err(refused("index of stored chunks"))?;
            if entries.len() >= SIZE_XL as usize {
                range.push(RangeEntry(entries.len() as u128));
                summary.headers += 1;
            }
            summary.ranges += entries.len();
            range.extend_from_slice(&entries);
            direct.push(DirectEntry::ranges(base as u32, entries.len()));
            shared.insert(entries, base as u32);
        }
        summary.build_ms = start.elapsed().as_secs_f64() * 1e3;
        let direct = try_copy_grown(&direct, 0, |&entry| entry, Default::default).map_err(refused("direct table"))?;
        let range = try_copy_grown(&range, 0, |&entry| entry, Default::default).map_err(refused("range table"))?;
        Ok(Dxr6 { direct, range, summary })
    }
}
