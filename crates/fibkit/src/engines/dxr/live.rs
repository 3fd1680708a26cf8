//! Incremental updates of a live DXR structure (see the module docs of
//! [`super`] for the protocol that keeps concurrent readers right).
//!
//! After the router has applied a batch of route changes to the RIB, the
//! updater recomputes only the chunks that an interval whose answer changed
//! overlaps ([`changed_spans`]: for a default route under a full table, the
//! gaps between the more specific routes, not every chunk); a chunk keeps
//! its fragments outside the intervals and takes each interval's one next
//! hop inside it, without a walk of the RIB. It encodes each as the
//! builder does, and shares identical chunks through
//! reference-counted stores. New fragments go into free segments of the
//! range table (best fit, neighbouring free segments coalesce); the direct
//! entries of the whole batch are stored (`Release`) only once every new
//! chunk is written, so a batch that fails leaves the structure as it was.
//! Old segments wait in a limbo, tagged with the generation readers were
//! served while they were live, until the router reports that no reader
//! holds that generation any more.
//!
//! A chunk that finds no free segment large enough moves the batch to a
//! copy of the structure with larger range tables in which every retired
//! segment is free (a relocation, published as a new structure); a full
//! rebuild from the RIB happens when even that copy has no room, and when
//! the chunks in use fill less than half of a range table (compaction). A
//! copy whose memory the system refuses fails the batch
//! ([`BuildError::OutOfMemory`]) with no direct entry stored; a compaction
//! refused leaves the batch as written in place.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;

use super::build::{header_word, range_entry, range_table, Bookkeeping, Builder, Encoder, Encoding, StoredChunk};
use super::{
    Cell, DirectEntry, Dxr, LongEntry, ShortEntry, WideEntry, BASE_MAX, BASE_SHIFT, FORMAT_LONG, FORMAT_SHIFT,
    FORMAT_SHORT, FORMAT_WIDE, FRAGS_MASK, FRAGS_XL,
};
use crate::addr::Prefix4;
use crate::error::{BuildError, LimitExceeded};
use crate::fib::{BuildOptions, Fib};
use crate::live::{changed_spans, replace_updater, Applied, ApplyContext, FreeSpace, Limbo, Updater, WithDefault};
use crate::mem::{try_copy_cells_grown, try_filled, try_reserve, try_reserve_map, LookupArray};
use crate::rib::{Range, Rib4};
use crate::NextHop;

/// A 64-bit hash of a chunk's fragments (and their count), the key under
/// which the updater finds identical chunks to share.
fn content_hash<W: Copy + Into<u64>>(words: impl Iterator<Item = W>) -> u64 {
    const MULTIPLIER: u64 = 0x517c_c1b7_2722_0a95;
    let mut hash = 0u64;
    let mut count = 0u64;
    for word in words {
        hash = (hash.rotate_left(5) ^ word.into()).wrapping_mul(MULTIPLIER);
        count += 1;
    }
    (hash.rotate_left(5) ^ count).wrapping_mul(MULTIPLIER)
}

/// A hasher for keys that already are hashes ([`content_hash`]).
#[derive(Default)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }
    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

/// One live range table's bookkeeping: the chunks it holds (by content
/// hash, with a reference count per base), its free space and the segments
/// waiting for readers to move on.
struct LiveStore<W> {
    /// Content hash -> (base, fragment count) of a stored chunk with that
    /// content (one per hash: on a collision the later chunk is not shared).
    by_hash: HashMap<u64, (u32, u32), BuildHasherDefault<PassThrough>>,
    /// Direct entries referring to the chunk stored at each base.
    references: Vec<u32>,
    /// Content hash of the chunk stored at each base.
    hashes: Vec<u64>,
    free: FreeSpace,
    /// Retired segments (base, len), until no reader can be searching them.
    limbo: Limbo<(u32, u32)>,
    /// Entries referenced by direct entries (headers included).
    live: usize,
    capacity: usize,
    /// The engine (`d16r` ...) and the table (`short`, `long`, `wide`), for errors.
    engine: &'static str,
    name: &'static str,
    _word: std::marker::PhantomData<W>,
}

/// The array of an error of memory refused to a range table's
/// bookkeeping (its chunks' references and hashes).
const BOOKKEEPING: &str = "range-table bookkeeping";

impl<W: Copy + Eq + Hash + TryFrom<usize> + Into<u64>> LiveStore<W> {
    /// The bookkeeping of a range table of `capacity` entries whose first
    /// `used` hold the chunks `stored`.
    ///
    /// # Errors
    /// [`BuildError::OutOfMemory`] when the system refuses its arrays.
    fn new(
        stored: HashMap<Box<[W]>, StoredChunk>,
        used: usize,
        capacity: usize,
        engine: &'static str,
        name: &'static str,
    ) -> Result<Self, BuildError> {
        let refused = |error| BuildError::out_of_memory(engine, BOOKKEEPING, error);
        let mut free = FreeSpace::default();
        if capacity > used {
            free.free(used as u32, (capacity - used) as u32);
        }
        let mut by_hash = HashMap::default();
        try_reserve_map(&mut by_hash, stored.len() * 2).map_err(refused)?;
        // Written out (not calloc'd) so that their pages fault in here, at
        // build time, rather than on the update path.
        let mut references = try_filled(capacity, 0).map_err(refused)?;
        let mut hashes = try_filled(capacity, 0).map_err(refused)?;
        for (content, chunk) in stored {
            let hash = content_hash(content.iter().copied());
            by_hash.entry(hash).or_insert((chunk.base, content.len() as u32));
            references[chunk.base as usize] = chunk.references;
            hashes[chunk.base as usize] = hash;
        }
        Ok(LiveStore {
            by_hash,
            references,
            hashes,
            free,
            limbo: Limbo::default(),
            live: used,
            capacity,
            engine,
            name,
            _word: std::marker::PhantomData,
        })
    }

    /// Frees the retired segments no reader can still be searching.
    fn reclaim(&mut self, oldest_held: u64) {
        let free = &mut self.free;
        self.limbo.reclaim(oldest_held, |(base, len)| free.free(base, len));
    }

    /// The base of a stored chunk equal to `fragments` (one more reference),
    /// or of a fresh copy written into free space; `Ok(None)` when no free
    /// segment is large enough.
    fn acquire<C: Cell<Word = W>>(
        &mut self,
        fragments: &[W],
        table: &[C],
        bytes_written: &mut u64,
    ) -> Result<Option<u32>, LimitExceeded> {
        let header = fragments.len() >= FRAGS_XL as usize;
        let skip = usize::from(header);
        let hash = content_hash(fragments.iter().copied());
        let found = self.by_hash.get(&hash).copied();
        if let Some((base, count)) = found {
            let first = base as usize + skip;
            if count as usize == fragments.len()
                && table[first..first + fragments.len()].iter().map(Cell::get).eq(fragments.iter().copied())
            {
                self.references[base as usize] += 1;
                return Ok(Some(base));
            }
        }
        let len = fragments.len() + skip;
        let Some(base) = self.free.allocate(len as u32) else {
            return Ok(None);
        };
        let mut cells = table[base as usize..base as usize + len].iter();
        if header {
            cells.next().expect("segment holds the header").set(header_word(fragments.len(), self.engine, self.name)?);
        }
        for (cell, &word) in cells.zip(fragments) {
            cell.set(word);
        }
        *bytes_written += (len * std::mem::size_of::<W>()) as u64;
        self.live += len;
        self.references[base as usize] = 1;
        self.hashes[base as usize] = hash;
        if found.is_none() {
            self.by_hash.insert(hash, (base, fragments.len() as u32));
        }
        Ok(Some(base))
    }

    /// Drops one reference to the chunk `entry` points to; its last
    /// reference retires the segment, tagged with `generation`.
    fn release<C: Cell<Word = W>>(&mut self, entry: DirectEntry, table: &[C], generation: u64) {
        let base = (entry >> BASE_SHIFT) as usize;
        let references = &mut self.references[base];
        debug_assert!(*references > 0, "a direct entry points at a stored chunk");
        *references -= 1;
        if *references > 0 {
            return;
        }
        let (first, count) = if entry & FRAGS_MASK == FRAGS_XL {
            (base + 1, table[base].get().into() as usize)
        } else {
            (base, (entry & FRAGS_MASK) as usize)
        };
        let hash = self.hashes[base];
        debug_assert_eq!(hash, content_hash(table[first..first + count].iter().map(Cell::get)));
        if self.by_hash.get(&hash).is_some_and(|&(stored, _)| stored as usize == base) {
            self.by_hash.remove(&hash);
        }
        let len = first + count - base;
        self.live -= len;
        self.limbo.retire(generation, (base as u32, len as u32));
    }

    /// A copy of `table` with room to grow (as many entries as are in use,
    /// plus 8,192: a default route flapping under a full table rewrites the
    /// chunks of two thirds of them in one batch, while the old ones wait
    /// for readers), and room for its bookkeeping; the bookkeeping takes
    /// the copy with [`LiveStore::grown`].
    ///
    /// # Errors
    /// [`BuildError::OutOfMemory`] when the system refuses the copy or its
    /// bookkeeping's room; the bookkeeping is as it was then.
    ///
    /// # Safety
    /// No thread but the caller's may write `table` meanwhile: the
    /// updater, its only writer, calls this
    /// ([`crate::mem::try_copy_cells_grown`]).
    unsafe fn copy_grown<C: Cell<Word = W>>(&mut self, table: &[C]) -> Result<LookupArray<C>, BuildError> {
        let capacity = (2 * self.live + 8192).max(self.capacity).min(BASE_MAX as usize + 1);
        let engine = self.engine;
        let refused = |array| move |error| BuildError::out_of_memory(engine, array, error);
        // SAFETY: this function's caller excludes other writers.
        let cells =
            unsafe { try_copy_cells_grown(table, capacity, C::empty) }.map_err(refused(range_table(self.name)))?;
        let more = capacity - self.references.len();
        try_reserve(&mut self.references, more).map_err(refused(BOOKKEEPING))?;
        try_reserve(&mut self.hashes, more).map_err(refused(BOOKKEEPING))?;
        Ok(cells)
    }

    /// Takes a copy of the table [`LiveStore::copy_grown`] made, in which
    /// every retired segment is free: no reader will search the copy before
    /// the updater publishes it, and its direct entries never point at
    /// retired segments.
    fn grown(&mut self, capacity: usize) {
        let free = &mut self.free;
        self.limbo.drain(|(base, len)| free.free(base, len));
        if capacity > self.capacity {
            self.free.free(self.capacity as u32, (capacity - self.capacity) as u32);
        }
        self.references.resize(capacity, 0);
        self.hashes.resize(capacity, 0);
        self.capacity = capacity;
    }

    /// Whether the chunks in use fill less than a third of a table worth
    /// compacting (a relocated table starts half full).
    fn sparse(&self) -> bool {
        self.capacity > 65_536 && self.live * 3 < self.capacity
    }
}

/// Why recomputing a chunk stopped.
enum Stop {
    /// No free segment is large enough: rebuild.
    Full,
    /// The chunk cannot be encoded, or the system refused the memory of a
    /// larger copy of the structure.
    Error(BuildError),
}

impl From<LimitExceeded> for Stop {
    fn from(limit: LimitExceeded) -> Self {
        Stop::Error(limit.into())
    }
}

/// The DXR engine's updater: owns the live structure's bookkeeping and
/// rewrites the chunks that route changes touch (module docs above).
pub struct DxrUpdater<const K: u32> {
    fib: Arc<WithDefault<Dxr<K>>>,
    long: LiveStore<LongEntry>,
    short: LiveStore<ShortEntry>,
    wide: LiveStore<WideEntry>,
    encoder: Encoder<K>,
    fragments: Vec<(u32, NextHop)>,
    /// Scratch of [`DxrUpdater::patch`].
    patched: Vec<(u32, NextHop)>,
    /// Address intervals a batch changed, with their next hop.
    spans: Vec<Range<u32>>,
    /// Direct entries to store once the batch's chunks are all written.
    pending: Vec<(u32, DirectEntry)>,
    /// The bookkeeping no longer matches the structure (after a failed
    /// batch): the next batch starts with a full rebuild.
    stale: bool,
    /// The batch being applied moved to a larger copy of the structure.
    relocated: bool,
}

impl<const K: u32> DxrUpdater<K> {
    /// Builds the structure from `rib` with free space for updates.
    ///
    /// # Errors
    /// As [`Dxr::build`]: a table beyond the fields, or memory the system
    /// refuses (to the structure or to the updater's bookkeeping).
    pub fn new(rib: &Rib4) -> Result<Self, BuildError> {
        let (fib, bookkeeping) = Self::build(rib)?;
        Self::from_parts(fib, bookkeeping)
    }

    fn build(rib: &Rib4) -> Result<(Dxr<K>, Bookkeeping), BuildError> {
        #[allow(clippy::let_unit_value)]
        let () = Dxr::<K>::VALID_K;
        Builder::<K>::new().build(rib, true)
    }

    fn from_parts(fib: Dxr<K>, bookkeeping: Bookkeeping) -> Result<Self, BuildError> {
        let [long_used, short_used, wide_used] = bookkeeping.used;
        let engine = Dxr::<K>::engine_name();
        Ok(DxrUpdater {
            long: LiveStore::new(bookkeeping.long, long_used, fib.range_long.len(), engine, "long")?,
            short: LiveStore::new(bookkeeping.short, short_used, fib.range_short.len(), engine, "short")?,
            wide: LiveStore::new(bookkeeping.wide, wide_used, fib.range_wide.len(), engine, "wide")?,
            fib: Arc::new(WithDefault::new(fib)),
            encoder: Encoder::new(),
            fragments: Vec::with_capacity(256),
            patched: Vec::with_capacity(256),
            spans: Vec::new(),
            pending: Vec::new(),
            stale: false,
            relocated: false,
        })
    }

    /// The live structure.
    pub fn dxr(&self) -> &Arc<WithDefault<Dxr<K>>> {
        &self.fib
    }

    /// Free entries in the range tables (long, short, wide), retired
    /// segments included once reclaimed.
    pub fn free_entries(&self) -> [usize; 3] {
        [self.long.free.entries(), self.short.free.entries(), self.wide.free.entries()]
    }

    fn rebuild(&mut self, rib: &Rib4) -> Result<Applied, BuildError> {
        let fresh = Self::build(rib).and_then(|(fib, bookkeeping)| Self::from_parts(fib, bookkeeping));
        replace_updater(self, fresh, |updater| updater.fib.footprint(), |updater| updater.stale = true)
    }

    /// Moves to a copy of the structure with larger range tables and every
    /// retired segment free (published at the end of the batch).
    ///
    /// # Errors
    /// [`BuildError::OutOfMemory`] when the system refuses the copy; the
    /// updater and its structure are as they were then.
    fn relocate(&mut self, bytes_written: &mut u64) -> Result<(), BuildError> {
        let fib = &*self.fib;
        // Every array of the copy first: nothing changes if one is refused.
        // SAFETY: the updater is the structure's only writer (so for the
        // three copies below).
        let direct = unsafe { try_copy_cells_grown(&fib.direct, 0, || AtomicU32::new(0)) }
            .map_err(|error| BuildError::out_of_memory(self.name(), "direct table", error))?;
        let relocated = Dxr {
            direct,
            // SAFETY: as above.
            range_long: unsafe { self.long.copy_grown(&fib.range_long) }?,
            // SAFETY: as above.
            range_short: unsafe { self.short.copy_grown(&fib.range_short) }?,
            // SAFETY: as above.
            range_wide: unsafe { self.wide.copy_grown(&fib.range_wide) }?,
            prefixes: AtomicUsize::new(fib.prefixes.load(Ordering::Relaxed)),
        };
        self.long.grown(relocated.range_long.len());
        self.short.grown(relocated.range_short.len());
        self.wide.grown(relocated.range_wide.len());
        *bytes_written += relocated.footprint() as u64;
        self.fib = Arc::new(WithDefault::like(relocated, &self.fib));
        self.relocated = true;
        Ok(())
    }

    /// Encodes chunk `chunk` anew and queues its direct entry if it changed.
    fn update_chunk(
        &mut self,
        chunk: u32,
        fragments: &[(u32, NextHop)],
        generation: u64,
        bytes_written: &mut u64,
    ) -> Result<(), Stop> {
        let count = fragments.len();
        let encoding = self.encoder.encode(fragments)?;
        let entry = loop {
            let fib = &*self.fib;
            let (format, base) = match encoding {
                Encoding::Direct(next_hop) => break next_hop << BASE_SHIFT,
                Encoding::Short => {
                    (FORMAT_SHORT, self.short.acquire(&self.encoder.short, &fib.range_short, bytes_written))
                }
                Encoding::Long => (FORMAT_LONG, self.long.acquire(&self.encoder.long, &fib.range_long, bytes_written)),
                Encoding::Wide => (FORMAT_WIDE, self.wide.acquire(&self.encoder.wide, &fib.range_wide, bytes_written)),
            };
            match base? {
                Some(base) => break range_entry(format, base, count),
                // Out of space (readers still hold retired segments): move
                // to a larger copy once per batch, then rebuild.
                None if !self.relocated => self.relocate(bytes_written).map_err(Stop::Error)?,
                None => return Err(Stop::Full),
            }
        };
        let fib = &*self.fib;
        let old = fib.direct[chunk as usize].load(Ordering::Relaxed);
        if old & FRAGS_MASK != 0 {
            match (old >> FORMAT_SHIFT) & 3 {
                FORMAT_SHORT => self.short.release(old, &fib.range_short, generation),
                FORMAT_LONG => self.long.release(old, &fib.range_long, generation),
                _ => self.wide.release(old, &fib.range_wide, generation),
            }
        }
        if entry != old {
            self.pending.push((chunk, entry));
        }
        Ok(())
    }
    /// Recomputes the chunks that the changed intervals `spans` touch
    /// (sorted and disjoint, each with its one next hop): a chunk an
    /// interval covers whole takes its next hop; a chunk intervals cover in
    /// part keeps its fragments outside them and takes their next hops
    /// inside.
    fn update_spans(
        &mut self,
        spans: &mut [Range<u32>],
        fragments: &mut Vec<(u32, NextHop)>,
        generation: u64,
        bytes_written: &mut u64,
    ) -> Result<(), Stop> {
        let (shift, offset_mask) = (Dxr::<K>::SHIFT, Dxr::<K>::OFFSET_MASK);
        let mut index = 0;
        while index < spans.len() {
            let span = spans[index];
            let chunk = span.first >> shift;
            let chunk_first = chunk << shift;
            let chunk_last = chunk_first | offset_mask;
            if span.first == chunk_first && span.last >= chunk_last {
                fragments.clear();
                fragments.push((0, span.next_hop));
                self.update_chunk(chunk, fragments, generation, bytes_written)?;
                if span.last == chunk_last {
                    index += 1;
                } else {
                    spans[index].first = chunk_last + 1;
                }
                continue;
            }
            self.decode_chunk(chunk, fragments);
            while index < spans.len() && spans[index].first <= chunk_last {
                let span = spans[index];
                self.patch(fragments, span.first - chunk_first, span.last.min(chunk_last) - chunk_first, span.next_hop);
                if span.last > chunk_last {
                    spans[index].first = chunk_last + 1;
                    break;
                }
                index += 1;
            }
            self.update_chunk(chunk, fragments, generation, bytes_written)?;
        }
        Ok(())
    }

    /// The fragments (offset, next hop) of `chunk` as the structure holds
    /// them now.
    fn decode_chunk(&self, chunk: u32, fragments: &mut Vec<(u32, NextHop)>) {
        fragments.clear();
        let fib = &*self.fib;
        let entry = fib.direct[chunk as usize].load(Ordering::Relaxed);
        if entry & FRAGS_MASK == 0 {
            fragments.push((0, entry >> BASE_SHIFT));
            return;
        }
        let base = (entry >> BASE_SHIFT) as usize;
        let header = entry & FRAGS_MASK == FRAGS_XL;
        let range = |table_count: usize| {
            if header {
                base + 1..base + 1 + table_count
            } else {
                base..base + (entry & FRAGS_MASK) as usize
            }
        };
        match (entry >> FORMAT_SHIFT) & 3 {
            FORMAT_SHORT => {
                let count = if header { usize::from(fib.range_short[base].get()) } else { 0 };
                fragments.extend(fib.range_short[range(count)].iter().map(|cell| {
                    let word = u32::from(cell.get());
                    ((word >> 8) << 8, word & 0xff)
                }));
            }
            FORMAT_LONG => {
                let count = if header { fib.range_long[base].get() as usize } else { 0 };
                fragments.extend(
                    fib.range_long[range(count)]
                        .iter()
                        .map(|cell| (cell.get() >> K, cell.get() & Dxr::<K>::LONG_HOP_MASK)),
                );
            }
            _ => {
                let count = if header { fib.range_wide[base].get() as usize } else { 0 };
                fragments.extend(fib.range_wide[range(count)].iter().map(|cell| {
                    let word = cell.get();
                    ((word >> 32) as u32, word as NextHop)
                }));
            }
        }
    }

    /// Gives offsets `low..=high` of a chunk's fragments `next_hop`.
    fn patch(&mut self, fragments: &mut Vec<(u32, NextHop)>, low: u32, high: u32, next_hop: NextHop) {
        let patched = &mut self.patched;
        patched.clear();
        let before = fragments.partition_point(|&(offset, _)| offset < low);
        patched.extend_from_slice(&fragments[..before]);
        let push = |patched: &mut Vec<(u32, NextHop)>, offset: u32, next_hop: NextHop| {
            if patched.last().is_none_or(|&(_, last_hop)| last_hop != next_hop) {
                patched.push((offset, next_hop));
            }
        };
        push(patched, low, next_hop);
        if high < Dxr::<K>::OFFSET_MASK {
            let after = fragments.partition_point(|&(offset, _)| offset <= high + 1);
            push(patched, high + 1, fragments[after - 1].1);
            patched.extend_from_slice(&fragments[after..]);
        }
        std::mem::swap(fragments, patched);
    }
}

impl<const K: u32> Updater<u32> for DxrUpdater<K> {
    fn name(&self) -> &str {
        Dxr::<K>::engine_name()
    }

    fn fib(&self) -> Arc<dyn Fib<u32>> {
        self.fib.clone()
    }

    fn set_default(&mut self, next_hop: NextHop) -> bool {
        self.fib.set_default(next_hop);
        true
    }

    fn max_next_hop(&self) -> NextHop {
        BASE_MAX
    }

    fn copy_for_batch(&mut self) -> Result<u64, BuildError> {
        // A stale structure is rebuilt by the batch anyway.
        let mut bytes_written = 0;
        if !self.stale {
            self.relocate(&mut bytes_written)?;
        }
        Ok(bytes_written)
    }

    fn apply(&mut self, rib: &Rib4, changed: &[Prefix4], context: ApplyContext) -> Result<Applied, BuildError> {
        if self.stale {
            return self.rebuild(rib);
        }
        self.relocated = false;
        self.long.reclaim(context.oldest_held);
        self.short.reclaim(context.oldest_held);
        self.wide.reclaim(context.oldest_held);
        changed_spans(rib, changed, &mut self.spans);
        self.pending.clear();
        let mut bytes_written = 0;
        let mut fragments = std::mem::take(&mut self.fragments);
        let mut spans = std::mem::take(&mut self.spans);
        let outcome = self.update_spans(&mut spans, &mut fragments, context.published, &mut bytes_written);
        self.fragments = fragments;
        self.spans = spans;
        match outcome {
            Err(Stop::Full) => return self.rebuild(rib),
            Err(Stop::Error(error)) => {
                // Nothing of the batch is published (the direct entries
                // wait in `pending`).
                self.stale = true;
                return Err(error);
            }
            Ok(()) => {}
        }
        for &(chunk, entry) in &self.pending {
            self.fib.direct[chunk as usize].store(entry, Ordering::Release);
        }
        bytes_written += 4 * self.pending.len() as u64;
        self.fib.prefixes.store(rib.len(), Ordering::Relaxed);
        if self.long.sparse() || self.short.sparse() || self.wide.sparse() {
            // Compaction, once the batch is published in place: a rebuild
            // the system refuses memory for leaves the batch as written.
            if let Ok(compacted) = Self::new(rib) {
                *self = compacted;
                return Ok(Applied { rebuilt: true, bytes_written: self.fib.footprint() as u64, ..Applied::default() });
            }
        }
        Ok(Applied { rebuilt: false, relocated: self.relocated, bytes_written })
    }
}

/// Registry updater for `d16r` ... `d22r`: in place, with free space in
/// the range tables.
pub fn updater<const K: u32>(rib: &Rib4, _options: &BuildOptions) -> Result<Box<dyn Updater<u32>>, BuildError> {
    Ok(Box::new(DxrUpdater::<K>::new(rib)?))
}
