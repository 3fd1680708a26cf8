//! The lookup: the paper's Figure 10 on each level; and the batch path,
//! which runs the same steps as a software pipeline sorted by chunk kind.

use super::{
    maptable, BaseIndex, ChunkLevel, CodeWord, Lulea, PointerWord, SparseChunk, DIRECT_LIMIT, KIND_DENSE,
    KIND_NEXT_HOP, KIND_SPARSE,
};
use crate::simd::GROUP;
use crate::NextHop;

/// Where a chunk sends a key: a pointer already in hand (a sparse chunk's,
/// or the next hop of a direct code word), or the slot of the level's
/// pointer array that holds it.
#[derive(Clone, Copy)]
enum Located<P> {
    Pointer(P),
    Slot(usize),
}

impl<P: PointerWord, B: BaseIndex> Lulea<P, B> {
    /// Longest-prefix match, as in the paper's Figure 10 on each level.
    #[inline]
    pub fn lookup(&self, addr: u32) -> NextHop {
        let pointer = self.level1(addr);
        if pointer.kind() == KIND_NEXT_HOP {
            return pointer.index();
        }
        let pointer = self.level2.search(pointer, (addr >> 8) as u8);
        if pointer.kind() == KIND_NEXT_HOP {
            return pointer.index();
        }
        self.level3.search(pointer, addr as u8).index()
    }

    /// Level 1: code word, base index, maptable, pointer.
    ///
    /// Written without a branch on the code word: a direct code word
    /// selects its next hop, and the pointer at `base + six` (an escape
    /// code word's) is read in any case, if it exists.
    #[inline(always)]
    fn level1(&self, addr: u32) -> P {
        let code = CodeWord(self.code[(addr >> 20) as usize]);
        let ten = code.ten();
        let direct = ten >= maptable::DIRECT_ROW;
        let offset = maptable::offset(ten.min(maptable::DIRECT_ROW - 1), (addr >> 16) & 15);
        let pix = usize::from(self.base[(addr >> 22) as usize]) + code.six() + if direct { 0 } else { offset };
        let stored = self.pointers.get(pix).copied().unwrap_or_default();
        let next_hop = u32::from(ten.wrapping_sub(maptable::DIRECT_ROW)) << 6 | code.six() as u32;
        if direct && next_hop < DIRECT_LIMIT {
            P::pack(KIND_NEXT_HOP, next_hop)
        } else {
            stored
        }
    }

    /// Looks up every key; `out[i]` gets the next hop of `keys[i]`.
    ///
    /// Keys go in groups of 32 through three stages, each a group behind
    /// the one before:
    ///
    /// 1. level 1 for every key; the keys it leaves pending are sorted into
    ///    one lane mask per chunk kind;
    /// 2. the level-2 sparse search or code word, kind by kind (so the
    ///    branch on the kind is a loop's, not a guess per key);
    /// 3. the pointer the code word selects, and level 3 for the rare key
    ///    that needs it.
    ///
    /// A stage's loads overlap the next group's. Nothing is prefetched:
    /// prefetching each pending key's level-2 chunk (and, for a resolved
    /// key, some harmless line) in stage 1 made the batch path slower in
    /// alternated runs (see docs/decisions.md), and the pointer's
    /// prefetch in stage 2 changed nothing. A pending key's state between the stages is kept
    /// in its answer slot (`state`). Nothing is allocated.
    ///
    /// # Panics
    /// If `out` is shorter than `keys`.
    pub fn lookup_batch(&self, keys: &[u32], out: &mut [NextHop]) {
        assert!(out.len() >= keys.len(), "output shorter than keys");
        let groups = keys.len().div_ceil(GROUP);
        // Per group (at `group % 3`): the lanes pending after stage 1 by
        // chunk kind (sparse, dense, very dense), then after stage 2.
        let mut kinds = [[0u32; 3]; 3];
        let mut pending = [0u32; 3];
        for group in 0..groups + 2 {
            if group < groups {
                let start = group * GROUP;
                let end = keys.len().min(start + GROUP);
                kinds[group % 3] = self.level1_group(&keys[start..end], &mut out[start..end]);
            }
            if let Some(previous) = group.checked_sub(1).filter(|&previous| previous < groups) {
                let start = previous * GROUP;
                let end = keys.len().min(start + GROUP);
                pending[previous % 3] = self.level2_group(&keys[start..end], &mut out[start..end], kinds[previous % 3]);
            }
            if let Some(oldest) = group.checked_sub(2).filter(|&oldest| oldest < groups) {
                let start = oldest * GROUP;
                let mut lanes = pending[oldest % 3];
                while lanes != 0 {
                    let index = start + lanes.trailing_zeros() as usize;
                    lanes &= lanes - 1;
                    out[index] = self.finish(keys[index], out[index]);
                }
            }
        }
    }

    /// Stage 1 for up to 32 keys: answers the keys level 1 resolves and
    /// leaves the others' level-1 pointer as their [`state`]; returns their
    /// lane masks by chunk kind (sparse, dense, very dense).
    #[inline(always)]
    fn level1_group(&self, keys: &[u32], out: &mut [NextHop]) -> [u32; 3] {
        // Bit 0 and bit 1 of each lane's pointer kind.
        let (mut low, mut high) = (0u32, 0u32);
        for (lane, (&key, answer)) in keys.iter().zip(out.iter_mut()).enumerate() {
            let pointer = self.level1(key);
            *answer = state(pointer);
            let kind = pointer.kind();
            low |= (kind & 1) << lane;
            high |= (kind >> 1) << lane;
        }
        [low & !high, high & !low, high & low]
    }

    /// Stage 2 for a group's pending keys, kind by kind: answers the keys
    /// level 2 resolves in the chunk; leaves the others' level-2 pointer
    /// slot (or level-3 chunk pointer) as their state, and returns their
    /// lane mask.
    #[inline(always)]
    fn level2_group(&self, keys: &[u32], out: &mut [NextHop], [sparse, dense, very_dense]: [u32; 3]) -> u32 {
        let level = &self.level2;
        let mut pending = 0;
        for_lanes(sparse, |lane| {
            let pointer = level.sparse[from_state::<P>(out[lane]).index() as usize].search((keys[lane] >> 8) as u8);
            out[lane] = state(pointer);
            pending |= u32::from(pointer.kind() != KIND_NEXT_HOP) << lane;
        });
        for_lanes(dense, |lane| {
            let key = (keys[lane] >> 8) as u8;
            let chunk = &level.dense[from_state::<P>(out[lane]).index() as usize];
            let (answer, slot) = level.code_word(&chunk.code, chunk.base.get(), key);
            out[lane] = answer;
            pending |= u32::from(slot) << lane;
        });
        for_lanes(very_dense, |lane| {
            let key = (keys[lane] >> 8) as u8;
            let chunk = &level.very_dense[from_state::<P>(out[lane]).index() as usize];
            let (answer, slot) = level.code_word(&chunk.code, chunk.base[usize::from(key >> 6)].get(), key);
            out[lane] = answer;
            pending |= u32::from(slot) << lane;
        });
        pending
    }

    /// Stage 3 for one key of `state`: a level-2 pointer slot, or a level-3
    /// chunk's pointer.
    #[inline(always)]
    fn finish(&self, key: u32, state: u32) -> NextHop {
        let pointer = if state >> 30 == 0 { self.level2.pointers[state as usize] } else { from_state(state) };
        if pointer.kind() == KIND_NEXT_HOP {
            return pointer.index();
        }
        self.level3.search(pointer, key as u8).index()
    }
}

/// Calls `body` for each set bit of `lanes`, lowest first.
#[inline(always)]
fn for_lanes(mut lanes: u32, mut body: impl FnMut(usize)) {
    while lanes != 0 {
        body(lanes.trailing_zeros() as usize);
        lanes &= lanes - 1;
    }
}

/// A pointer of either width as a batch key's state, `kind << 30 | index`.
/// A pending key's state never holds a next hop, so kind 0 marks a slot
/// of level 2's pointer array (below 2^30: base indices have 24 bits).
#[inline(always)]
fn state<P: PointerWord>(pointer: P) -> u32 {
    pointer.kind() << 30 | pointer.index()
}

/// The pointer of a chunk's [`state`].
#[inline(always)]
fn from_state<P: PointerWord>(state: u32) -> P {
    P::pack(state >> 30, state & ((1 << 30) - 1))
}

impl<P: PointerWord, B: BaseIndex> ChunkLevel<P, B> {
    /// Searches the chunk `pointer` designates for position `key`; returns
    /// the pointer found there (a next hop or a chunk of the next level).
    #[inline(always)]
    fn search(&self, pointer: P, key: u8) -> P {
        let index = pointer.index() as usize;
        let located = match pointer.kind() {
            KIND_SPARSE => Located::Pointer(self.sparse[index].search(key)),
            KIND_DENSE => {
                let chunk = &self.dense[index];
                Self::resolve(code_word(&chunk.code, key), chunk.base.get(), key)
            }
            _ => {
                let chunk = &self.very_dense[index];
                Self::resolve(code_word(&chunk.code, key), chunk.base[usize::from(key >> 6)].get(), key)
            }
        };
        match located {
            Located::Pointer(pointer) => pointer,
            Located::Slot(slot) => self.pointers[slot],
        }
    }

    /// Figure 10 inside a chunk: code word, base index, maptable.
    #[inline(always)]
    fn resolve(code: CodeWord, base: usize, key: u8) -> Located<P> {
        let ten = code.ten();
        if ten >= maptable::DIRECT_ROW {
            return match code.direct_next_hop() {
                Some(next_hop) => Located::Pointer(P::pack(KIND_NEXT_HOP, next_hop)),
                None => Located::Slot(base + code.six()),
            };
        }
        Located::Slot(base + code.six() + maptable::offset(ten, u32::from(key & 15)))
    }

    /// [`Self::resolve`] without a branch, for the batch path: the next hop
    /// of a direct code word and `false`, or the pointer slot and `true`.
    #[inline(always)]
    fn code_word(&self, code: &[[u8; 2]; 16], base: usize, key: u8) -> (u32, bool) {
        let code = code_word(code, key);
        let ten = code.ten();
        let direct = ten >= maptable::DIRECT_ROW;
        let offset = maptable::offset(ten.min(maptable::DIRECT_ROW - 1), u32::from(key & 15));
        let slot = base + code.six() + if direct { 0 } else { offset };
        let next_hop = u32::from(ten.wrapping_sub(maptable::DIRECT_ROW)) << 6 | code.six() as u32;
        let resolved = direct && next_hop < DIRECT_LIMIT;
        (if resolved { next_hop } else { slot as u32 }, !resolved)
    }
}

/// The code word of `key`'s 16 positions in a dense chunk.
#[inline(always)]
fn code_word(code: &[[u8; 2]; 16], key: u8) -> CodeWord {
    CodeWord(u16::from_le_bytes(code[usize::from(key >> 4)]))
}

impl<P: PointerWord> SparseChunk<P> {
    /// The pointer of the last head at or before `key`. The heads
    /// decrease and the last is 0 (unused slots repeat it), so that head's
    /// slot is the number of heads above `key`: eight byte compares and a
    /// sum, without the data-dependent branches of a scan.
    #[inline(always)]
    pub(super) fn search(&self, key: u8) -> P {
        let slot = self.heads.iter().fold(0, |above, &head| above + usize::from(head > key));
        self.pointers[slot]
    }
}
