//! Safe memory reclamation for structures updated in place: space an
//! update stops using waits in a [`Limbo`] until no reader can still be
//! reading it.
//!
//! ```text
//!   batch in generation g           later batch, oldest_held > g
//!   ---------------------           ----------------------------
//!   retire(g, segment) --> [ (g, segment), (g', ...), ... ] --> reclaim(oldest_held) --> free space
//!                            oldest first                        every (g, _) with g < oldest_held
//! ```
//!
//! The router serves generation `published` while a batch is applied, and
//! knows the oldest generation some reader still holds (`oldest_held`,
//! [`super::ApplyContext`]). Space retired while `g` was served was
//! reachable in `g` and earlier generations only: once every reader has
//! moved past `g` (`oldest_held > g`), no lookup can reach it, and it may be
//! overwritten. A relocation (a copy of the structure into new arrays)
//! frees everything at once: readers never see the copy's space before it
//! is published.

use std::collections::VecDeque;

/// Retired items (segments, groups) tagged with the generation that was
/// served while they were live, oldest first.
#[derive(Debug)]
pub struct Limbo<T> {
    retired: VecDeque<(u64, T)>,
}

impl<T> Default for Limbo<T> {
    fn default() -> Self {
        Limbo { retired: VecDeque::new() }
    }
}

impl<T> Limbo<T> {
    /// Retires `item`, live while `generation` was served.
    pub fn retire(&mut self, generation: u64, item: T) {
        debug_assert!(self.retired.back().is_none_or(|&(last, _)| last <= generation), "generations go forward");
        self.retired.push_back((generation, item));
    }

    /// Hands every item no reader can still reach (retired while a
    /// generation older than `oldest_held` was served) to `free`.
    pub fn reclaim(&mut self, oldest_held: u64, mut free: impl FnMut(T)) {
        while self.retired.front().is_some_and(|&(generation, _)| generation < oldest_held) {
            let (_, item) = self.retired.pop_front().expect("front checked");
            free(item);
        }
    }

    /// Hands every item to `free`, whatever readers hold: for a relocated
    /// copy, which no reader has seen yet.
    pub fn drain(&mut self, free: impl FnMut(T)) {
        self.retired.drain(..).map(|(_, item)| item).for_each(free);
    }

    /// Items waiting.
    pub fn len(&self) -> usize {
        self.retired.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.retired.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_wait_until_readers_move_past_their_generation() {
        let mut limbo = Limbo::default();
        limbo.retire(3, 'a');
        limbo.retire(3, 'b');
        limbo.retire(5, 'c');
        let mut freed = Vec::new();
        limbo.reclaim(3, |item| freed.push(item));
        assert!(freed.is_empty(), "a reader may still hold generation 3");
        limbo.reclaim(4, |item| freed.push(item));
        assert_eq!(freed, ['a', 'b']);
        assert_eq!(limbo.len(), 1);
        limbo.drain(|item| freed.push(item));
        assert_eq!(freed, ['a', 'b', 'c']);
        assert!(limbo.is_empty());
    }
}
