//! Heap accounting for peers that do not report their own size.
//!
//! [`CountingAllocator`] wraps the system allocator and keeps, per thread,
//! the bytes allocated minus the bytes freed. A binary that wants real
//! footprints for every peer installs it:
//!
//! ```
//! #[global_allocator]
//! static ALLOCATOR: fibkit_peers::heap::CountingAllocator = fibkit_peers::heap::CountingAllocator;
//! # fn main() {}
//! ```
//!
//! [`measure`] then tells how many heap bytes a closure left behind on the
//! calling thread (what a freshly built structure holds, including its
//! vectors' spare capacity). Without the allocator installed it answers
//! `None`, and peers fall back to the figure their crate reports, if any.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    /// Bytes allocated minus bytes freed by this thread.
    static LIVE_BYTES: Cell<isize> = const { Cell::new(0) };
}

fn account(delta: isize) {
    // `try_with`: never panic inside the allocator, even during thread
    // teardown (a `const` Cell has no destructor, so this always succeeds).
    let _ = LIVE_BYTES.try_with(|live| live.set(live.get().wrapping_add(delta)));
}

/// The system allocator plus a per-thread count of live heap bytes.
#[derive(Clone, Copy, Debug, Default)]
pub struct CountingAllocator;

// SAFETY: every call is forwarded unchanged to `System`, which upholds the
// `GlobalAlloc` contract; the bookkeeping touches only a thread-local Cell
// and never allocates.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as ours, forwarded.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            account(layout.size() as isize);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as ours, forwarded.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            account(layout.size() as isize);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours, forwarded.
        unsafe { System.dealloc(ptr, layout) };
        account(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as ours, forwarded.
        let new_ptr = unsafe { System.realloc(ptr, layout, new_size) };
        if !new_ptr.is_null() {
            account(new_size as isize - layout.size() as isize);
        }
        new_ptr
    }
}

fn live_bytes() -> isize {
    LIVE_BYTES.try_with(Cell::get).unwrap_or(0)
}

/// Whether [`CountingAllocator`] is the global allocator of this program.
pub fn counting() -> bool {
    let before = live_bytes();
    let probe = std::hint::black_box(Box::new([0u8; 64]));
    let after = live_bytes();
    drop(probe);
    after - before >= 64
}

/// Runs `build` and returns its value with the heap bytes it left allocated
/// on this thread, or `None` when the counting allocator is not installed.
pub fn measure<T>(build: impl FnOnce() -> T) -> (T, Option<usize>) {
    if !counting() {
        return (build(), None);
    }
    let before = live_bytes();
    let value = build();
    let after = live_bytes();
    (value, Some(after.saturating_sub(before).max(0) as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_the_allocator_nothing_is_measured() {
        // The unit-test binary does not install the counting allocator.
        assert!(!counting());
        let (vector, bytes) = measure(|| vec![0u64; 1000]);
        assert_eq!(vector.len(), 1000);
        assert_eq!(bytes, None);
    }
}
