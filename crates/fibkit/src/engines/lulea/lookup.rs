//! The lookup: the paper's Figure 10 on each level.

use super::{
    maptable, BaseIndex, ChunkLevel, CodeWord, Lulea, PointerWord, SparseChunk, KIND_DENSE, KIND_NEXT_HOP,
    KIND_SPARSE,
};
use crate::NextHop;

impl<P: PointerWord, B: BaseIndex> Lulea<P, B> {
    /// Longest-prefix match, as in the paper's Figure 10 on each level.
    #[inline]
    pub fn lookup(&self, addr: u32) -> NextHop {
        let code = CodeWord(self.code[(addr >> 20) as usize]);
        let ten = code.ten();
        let pointer = if ten >= maptable::DIRECT_ROW {
            match code.direct_next_hop() {
                Some(next_hop) => return next_hop,
                None => self.level1_escape(addr, code),
            }
        } else {
            let pix = usize::from(self.base[(addr >> 22) as usize])
                + code.six()
                + maptable::offset(ten, (addr >> 16) & 15);
            self.pointers[pix]
        };
        if pointer.kind() == KIND_NEXT_HOP {
            return pointer.index();
        }
        let pointer = self.level2.search(pointer, (addr >> 8) as u8);
        if pointer.kind() == KIND_NEXT_HOP {
            return pointer.index();
        }
        self.level3.search(pointer, addr as u8).index()
    }

    #[cold]
    fn level1_escape(&self, addr: u32, code: CodeWord) -> P {
        self.pointers[usize::from(self.base[(addr >> 22) as usize]) + code.six()]
    }
}

impl<P: PointerWord, B: BaseIndex> ChunkLevel<P, B> {
    /// Searches the chunk `pointer` designates for position `key`; returns
    /// the pointer found there (a next hop or a chunk of the next level).
    #[inline(always)]
    fn search(&self, pointer: P, key: u8) -> P {
        let index = pointer.index() as usize;
        match pointer.kind() {
            KIND_SPARSE => self.sparse[index].search(key),
            KIND_DENSE => {
                let chunk = &self.dense[index];
                let code = CodeWord(u16::from_le_bytes(chunk.code[usize::from(key >> 4)]));
                self.resolve(code, chunk.base.get(), u32::from(key & 15))
            }
            _ => {
                let chunk = &self.very_dense[index];
                let code = CodeWord(u16::from_le_bytes(chunk.code[usize::from(key >> 4)]));
                self.resolve(code, chunk.base[usize::from(key >> 6)].get(), u32::from(key & 15))
            }
        }
    }

    /// Figure 10 inside a chunk: code word, base index, maptable, pointer.
    #[inline(always)]
    fn resolve(&self, code: CodeWord, base: usize, bit: u32) -> P {
        let ten = code.ten();
        if ten >= maptable::DIRECT_ROW {
            return match code.direct_next_hop() {
                Some(next_hop) => P::pack(KIND_NEXT_HOP, next_hop),
                None => self.pointers[base + code.six()],
            };
        }
        self.pointers[base + code.six() + maptable::offset(ten, bit)]
    }
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
