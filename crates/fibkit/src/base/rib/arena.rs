//! The RIB's node arena: a growable array that, once it is large, sits on
//! transparent huge pages ([`LookupArray`]). A walk or an update reads
//! nodes scattered over the megabytes of a full table's trie: on 4 KiB
//! pages nearly every one of those reads misses the TLB as well as the
//! cache, a page walk on top of the miss.

use std::ops::{Index, IndexMut};

use crate::mem::LookupArray;

/// A growable array of `Copy` elements on huge pages when large (module
/// docs). Indexing past the length but within the capacity reads a
/// default element: the arena is only indexed by the links it hands out.
pub(super) struct Arena<T> {
    elements: LookupArray<T>,
    len: usize,
}

impl<T: Copy + Default> Arena<T> {
    /// An arena holding `first` alone.
    pub(super) fn with(first: T) -> Self {
        let mut arena = Arena { elements: LookupArray::from_fn(0, |_| T::default()), len: 0 };
        arena.push(first);
        arena
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn capacity(&self) -> usize {
        self.elements.len()
    }

    /// Appends `element` (doubling the capacity, copied into a new array,
    /// when it is full).
    pub(super) fn push(&mut self, element: T) {
        if self.len == self.elements.len() {
            self.elements = self.copied((2 * self.len).max(16));
        }
        self.elements[self.len] = element;
        self.len += 1;
    }

    /// The elements in an array of `capacity`.
    fn copied(&self, capacity: usize) -> LookupArray<T> {
        LookupArray::from_fn(capacity, |index| if index < self.len { self.elements[index] } else { T::default() })
    }
}

impl<T: Copy + Default> Clone for Arena<T> {
    fn clone(&self) -> Self {
        Arena { elements: self.copied(self.elements.len()), len: self.len }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Arena<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.elements[..self.len]).finish()
    }
}

impl<T> Index<usize> for Arena<T> {
    type Output = T;

    #[inline(always)]
    fn index(&self, index: usize) -> &T {
        debug_assert!(index < self.len, "node {index} of {}", self.len);
        &self.elements[index]
    }
}

impl<T> IndexMut<usize> for Arena<T> {
    #[inline(always)]
    fn index_mut(&mut self, index: usize) -> &mut T {
        debug_assert!(index < self.len, "node {index} of {}", self.len);
        &mut self.elements[index]
    }
}
