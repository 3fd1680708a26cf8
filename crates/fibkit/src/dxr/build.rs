//! Building a DXR structure from the RIB.
//!
//! One in-order walk of the RIB yields the change points of the whole
//! address space (where the effective next hop changes). They are cut at
//! chunk boundaries; each chunk becomes a direct next hop (one range) or a
//! short or long fragment array, looked up first in the table of chunks
//! already stored so identical chunks are shared.

use std::collections::HashMap;

use super::stats::Summary;
use super::{Dxr, BASE_MAX, BASE_SHIFT, FRAGS_MASK, FRAGS_XL, SHORT_FLAG};
use crate::engine::BuildError;
use crate::rib::Rib4;
use crate::{NextHop, NO_ROUTE};

/// Build bookkeeping: the arrays being filled and the index of chunks
/// already stored (for sharing). Never touched by lookups.
pub(super) struct Builder<const K: u32> {
    direct: Vec<u32>,
    range_long: Vec<u32>,
    range_short: Vec<u16>,
    /// Long chunks stored so far: fragments -> first index.
    long_chunks: HashMap<Box<[u32]>, u32>,
    /// Short chunks stored so far: fragments -> first index.
    short_chunks: HashMap<Box<[u16]>, u32>,
    summary: Summary,
    /// Fragments of the chunk being cut: (offset in chunk, next hop).
    fragments: Vec<(u32, NextHop)>,
    /// Encoding scratch space.
    long_scratch: Vec<u32>,
    short_scratch: Vec<u16>,
    /// Next hops seen, for the unique next-hop count.
    seen_hops: Vec<bool>,
}

impl<const K: u32> Builder<K> {
    pub(super) fn new() -> Self {
        Builder {
            direct: Vec::with_capacity(1 << K),
            range_long: Vec::new(),
            range_short: Vec::new(),
            long_chunks: HashMap::new(),
            short_chunks: HashMap::new(),
            summary: Summary::default(),
            fragments: Vec::with_capacity(256),
            long_scratch: Vec::with_capacity(256),
            short_scratch: Vec::with_capacity(256),
            seen_hops: Vec::new(),
        }
    }

    pub(super) fn build(mut self, rib: &Rib4) -> Result<Dxr<K>, BuildError> {
        let shift = Dxr::<K>::SHIFT;
        let mut chunk = 0u32;
        let mut last_hop = NO_ROUTE;
        let mut failure = None;
        rib.for_each_run(0, u32::MAX, |start, next_hop| {
            if failure.is_some() {
                return;
            }
            let start_chunk = start >> shift;
            if start_chunk != chunk {
                if let Err(error) = self.finish_chunk() {
                    failure = Some(error);
                    return;
                }
                // Chunks entirely inside the previous run.
                for _ in chunk + 1..start_chunk {
                    self.fragments.push((0, last_hop));
                    if let Err(error) = self.finish_chunk() {
                        failure = Some(error);
                        return;
                    }
                }
                chunk = start_chunk;
                if start & Dxr::<K>::OFFSET_MASK != 0 {
                    self.fragments.push((0, last_hop));
                }
            }
            self.fragments.push((start & Dxr::<K>::OFFSET_MASK, next_hop));
            last_hop = next_hop;
        });
        if let Some(error) = failure {
            return Err(error);
        }
        self.finish_chunk()?;
        while self.direct.len() < 1 << K {
            self.fragments.push((0, last_hop));
            self.finish_chunk()?;
        }
        self.summary.prefixes = rib.len();
        self.summary.next_hops = self.seen_hops.iter().filter(|&&seen| seen).count();
        Ok(Dxr {
            direct: self.direct.into_boxed_slice(),
            range_long: self.range_long.into_boxed_slice(),
            range_short: self.range_short.into_boxed_slice(),
            summary: self.summary,
        })
    }

    fn note_hop(&mut self, next_hop: NextHop) {
        let index = next_hop as usize;
        if self.seen_hops.len() <= index {
            self.seen_hops.resize(index + 1, false);
        }
        self.seen_hops[index] = next_hop != NO_ROUTE;
    }

    fn error(message: String) -> BuildError {
        BuildError { engine: Dxr::<K>::engine_name().to_string(), message }
    }

    /// Encodes the fragments gathered for the next chunk into a direct
    /// entry, storing (or sharing) its fragment array.
    fn finish_chunk(&mut self) -> Result<(), BuildError> {
        debug_assert!(!self.fragments.is_empty() && self.fragments[0].0 == 0);
        let fragments = std::mem::take(&mut self.fragments);
        for &(_, next_hop) in &fragments {
            self.note_hop(next_hop);
        }
        let entry = if let [(_, next_hop)] = fragments[..] {
            if next_hop > BASE_MAX {
                return Err(Self::error(format!(
                    "next hop {next_hop} exceeds the direct table's {BASE_MAX}"
                )));
            }
            self.summary.direct_chunks += 1;
            next_hop << BASE_SHIFT
        } else {
            self.summary.longest_chunk = self.summary.longest_chunk.max(fragments.len());
            let short = fragments.iter().all(|&(offset, next_hop)| offset & 0xff == 0 && next_hop <= 0xff);
            if short {
                self.store_short(&fragments)?
            } else {
                self.store_long(&fragments)?
            }
        };
        self.direct.push(entry);
        self.fragments = fragments;
        self.fragments.clear();
        Ok(())
    }

    fn store_short(&mut self, fragments: &[(u32, NextHop)]) -> Result<u32, BuildError> {
        self.short_scratch.clear();
        self.short_scratch
            .extend(fragments.iter().map(|&(offset, next_hop)| ((offset >> 8) << 8 | next_hop) as u16));
        let count = fragments.len() as u32;
        // A short chunk has at most 2^(24-K) <= 256 fragments: no header.
        debug_assert!(count < FRAGS_XL);
        self.summary.aggregated_short_chunks += 1;
        self.summary.aggregated_short_fragments += fragments.len();
        let base = match self.short_chunks.get(self.short_scratch.as_slice()) {
            Some(&base) => base,
            None => {
                let base = self.range_short.len();
                if base + fragments.len() > BASE_MAX as usize + 1 {
                    return Err(Self::error(format!(
                        "short range table exceeds {} entries; use a larger K",
                        BASE_MAX as usize + 1
                    )));
                }
                self.range_short.extend_from_slice(&self.short_scratch);
                self.short_chunks.insert(self.short_scratch.clone().into_boxed_slice(), base as u32);
                self.summary.physical_short_chunks += 1;
                self.summary.physical_short_fragments += fragments.len();
                base as u32
            }
        };
        Ok(base << BASE_SHIFT | SHORT_FLAG | count)
    }

    fn store_long(&mut self, fragments: &[(u32, NextHop)]) -> Result<u32, BuildError> {
        let hop_mask = Dxr::<K>::LONG_HOP_MASK;
        self.long_scratch.clear();
        for &(offset, next_hop) in fragments {
            if next_hop > hop_mask {
                return Err(Self::error(format!(
                    "next hop {next_hop} does not fit the {K}-bit next-hop field of long fragments \
                     (at most {hop_mask}); map the values onto fewer next hops (--nexthops) or use \
                     a larger K"
                )));
            }
            self.long_scratch.push(offset << K | next_hop);
        }
        let count = fragments.len() as u32;
        self.summary.aggregated_long_chunks += 1;
        self.summary.aggregated_long_fragments += fragments.len();
        let base = match self.long_chunks.get(self.long_scratch.as_slice()) {
            Some(&base) => base,
            None => {
                let header = usize::from(count >= FRAGS_XL);
                let base = self.range_long.len();
                if base + header + fragments.len() > BASE_MAX as usize + 1 {
                    return Err(Self::error(format!(
                        "long range table exceeds {} entries; use a smaller K",
                        BASE_MAX as usize + 1
                    )));
                }
                if header == 1 {
                    self.range_long.push(count);
                }
                self.range_long.extend_from_slice(&self.long_scratch);
                self.long_chunks.insert(self.long_scratch.clone().into_boxed_slice(), base as u32);
                self.summary.physical_long_chunks += 1;
                self.summary.physical_long_fragments += fragments.len();
                base as u32
            }
        };
        Ok(base << BASE_SHIFT | count.min(FRAGS_MASK))
    }
}
