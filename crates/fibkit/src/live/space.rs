//! Free space in a live structure's arrays: segments of a range table, a
//! node array or a leaf array that an updater may write new data into.

use std::collections::{BTreeMap, BTreeSet};

/// Segments of up to this many entries are kept apart by exact length when
/// freed, and handed out again as they are.
const EXACT_MAX: usize = 512;

/// Free segments of a range table (or of a node or leaf array).
///
/// A freed segment of up to `EXACT_MAX` (512) entries goes to the list of its
/// exact length: updates rewrite the same chunks again and again, so a
/// later allocation of that length takes it back in O(1). Longer segments,
/// and the short ones once an allocation finds nothing, live in two trees:
/// by start (to coalesce neighbours) and by length (best fit).
#[derive(Debug, Default)]
pub struct FreeSpace {
    by_base: BTreeMap<u32, u32>,
    by_len: BTreeSet<(u32, u32)>,
    /// `exact[len]`: free segments of exactly `len` entries, not coalesced.
    exact: Vec<Vec<u32>>,
    entries: usize,
}

impl FreeSpace {
    /// Free entries, in all segments.
    pub fn entries(&self) -> usize {
        self.entries
    }

    fn insert(&mut self, base: u32, len: u32) {
        self.by_base.insert(base, len);
        self.by_len.insert((len, base));
    }

    fn remove(&mut self, base: u32, len: u32) {
        self.by_base.remove(&base);
        self.by_len.remove(&(len, base));
    }

    /// The start of `len` free entries (a freed segment of that length, else
    /// the smallest segment that fits), or `None` if no segment is large
    /// enough even with all free neighbours merged.
    pub fn allocate(&mut self, len: u32) -> Option<u32> {
        if let Some(base) = self.exact.get_mut(len as usize).and_then(Vec::pop) {
            self.entries -= len as usize;
            return Some(base);
        }
        let found = self.by_len.range((len, 0)..).next().copied();
        let (segment_len, base) = match found {
            Some(segment) => segment,
            None => {
                self.merge_exact();
                *self.by_len.range((len, 0)..).next()?
            }
        };
        self.remove(base, segment_len);
        if segment_len > len {
            self.insert(base + len, segment_len - len);
        }
        self.entries -= len as usize;
        Some(base)
    }

    /// Returns `len` entries at `base`.
    pub fn free(&mut self, base: u32, len: u32) {
        self.entries += len as usize;
        if (len as usize) <= EXACT_MAX {
            if self.exact.len() <= len as usize {
                self.exact.resize_with(len as usize + 1, Vec::new);
            }
            self.exact[len as usize].push(base);
        } else {
            self.coalesce(base, len);
        }
    }

    /// Puts `len` entries at `base` into the trees, merged with free
    /// neighbours there.
    fn coalesce(&mut self, mut base: u32, mut len: u32) {
        if let Some((&before, &before_len)) = self.by_base.range(..base).next_back() {
            if before + before_len == base {
                self.remove(before, before_len);
                base = before;
                len += before_len;
            }
        }
        if let Some(&after_len) = self.by_base.get(&(base + len)) {
            self.remove(base + len, after_len);
            len += after_len;
        }
        self.insert(base, len);
    }

    /// Moves every exact-length segment into the trees, coalescing.
    fn merge_exact(&mut self) {
        let mut exact = std::mem::take(&mut self.exact);
        for (len, bases) in exact.iter_mut().enumerate() {
            for base in bases.drain(..) {
                self.coalesce(base, len as u32);
            }
        }
        self.exact = exact;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_space_exact_reuse_best_fit_and_coalescing() {
        let mut free = FreeSpace::default();
        free.free(100, 1000);
        assert_eq!(free.allocate(10), Some(100));
        assert_eq!(free.allocate(10), Some(110));
        free.free(100, 10);
        // A freed segment of the length asked for comes back first.
        assert_eq!(free.allocate(10), Some(100));
        free.free(100, 10);
        free.free(110, 10);
        // Best fit in the trees: the 980-entry tail, split.
        assert_eq!(free.allocate(8), Some(120));
        free.free(120, 8);
        // Nothing of 1,000 entries in the trees: the short segments merge
        // back with the tail into one.
        assert_eq!(free.allocate(1000), Some(100));
        assert_eq!((free.entries, free.by_base.len()), (0, 0));
        assert_eq!(free.allocate(1), None);
    }
}
