//! The synchronisation the reclamation protocol is made of, swappable for
//! loom's: the cell that holds the generation being served ([`Current`]),
//! the references that pin a generation ([`Arc`], [`Weak`]), and the
//! atomics and fences of [`super::WithDefault`].
//!
//! In a normal build these are `arc_swap::ArcSwap` and `std::sync`'s types,
//! and this module compiles away. Under `--cfg loom` (`make test-loom`) they
//! are loom's, so that loom's model checker runs the router's publish and
//! retire, [`super::Limbo`]'s rule and the default route's word through
//! every interleaving of a writer and its readers (`router::model`):
//! - loom's atomics and fences stand for std's;
//! - loom has no `Weak`: [`Arc`] and [`Weak`] are modelled here on a loom
//!   atomic count, with the orderings std's `Arc` uses (an increment
//!   `Relaxed`, a decrement `Release`, a strong count read `Relaxed`);
//! - `ArcSwap` is modelled by its contract, a cell whose loads and swaps
//!   are atomic (here a loom mutex around an [`Arc`]); after a swap, every
//!   reader's hold on the old value counts as a strong reference, which
//!   `arc_swap` ensures by paying its readers' debts. arc_swap's own tests
//!   check its implementation; this model checks what fibkit builds on it.

#[cfg(not(loom))]
pub use std::sync::atomic::{fence, AtomicU64, Ordering};
#[cfg(not(loom))]
pub use std::sync::{Arc, Weak};

#[cfg(loom)]
pub use loom::sync::atomic::{fence, AtomicU64, Ordering};
#[cfg(loom)]
pub use model::{Arc, Weak};

/// A reader's hold on the value a [`Current`] held when it was loaded: the
/// value is not dropped, and counts as strongly referenced once the cell
/// has moved on, while the hold lives.
#[cfg(not(loom))]
pub type Hold<T> = arc_swap::Guard<Arc<T>>;
/// A reader's hold (see the normal build's): a strong reference.
#[cfg(loom)]
pub type Hold<T> = Arc<T>;

/// The cell holding the value readers load now; one writer swaps in the
/// next.
#[derive(Debug)]
pub struct Current<T> {
    #[cfg(not(loom))]
    cell: arc_swap::ArcSwap<T>,
    #[cfg(loom)]
    cell: loom::sync::Mutex<Arc<T>>,
}

impl<T> Current<T> {
    /// A cell holding `value`.
    pub fn new(value: T) -> Self {
        #[cfg(not(loom))]
        let cell = arc_swap::ArcSwap::from_pointee(value);
        #[cfg(loom)]
        let cell = loom::sync::Mutex::new(Arc::new(value));
        Current { cell }
    }

    /// A hold on the value held now: lock-free, and in the common case
    /// without a write to the value's reference count.
    #[inline]
    pub fn load(&self) -> Hold<T> {
        #[cfg(not(loom))]
        return self.cell.load();
        #[cfg(loom)]
        return self.cell.lock().expect("the model's cell").clone();
    }

    /// Puts `value` in the cell and returns the value it replaces.
    pub fn swap(&self, value: Arc<T>) -> Arc<T> {
        #[cfg(not(loom))]
        return self.cell.swap(value);
        #[cfg(loom)]
        return std::mem::replace(&mut *self.cell.lock().expect("the model's cell"), value);
    }
}

/// `Arc` and `Weak` for loom, which has no `Weak`: a strong count on a loom
/// atomic, kept as std's `Arc` keeps it, over storage that lives while any
/// handle does (the value is never dropped early: the model checks the
/// count, not the drop).
#[cfg(loom)]
mod model {
    use std::ops::Deref;

    use loom::sync::atomic::{fence, AtomicUsize, Ordering};

    #[derive(Debug)]
    struct Counted<T> {
        strong: AtomicUsize,
        value: T,
    }

    /// A strong reference.
    #[derive(Debug)]
    pub struct Arc<T> {
        counted: std::sync::Arc<Counted<T>>,
    }

    /// A reference that does not keep the value, only tells whether some
    /// strong one does.
    #[derive(Debug)]
    pub struct Weak<T> {
        counted: std::sync::Arc<Counted<T>>,
    }

    impl<T> Arc<T> {
        /// `value`, strongly referenced once.
        pub fn new(value: T) -> Self {
            Arc { counted: std::sync::Arc::new(Counted { strong: AtomicUsize::new(1), value }) }
        }

        /// A weak reference to `this`'s value.
        pub fn downgrade(this: &Self) -> Weak<T> {
            Weak { counted: this.counted.clone() }
        }
    }

    impl<T> Clone for Arc<T> {
        fn clone(&self) -> Self {
            self.counted.strong.fetch_add(1, Ordering::Relaxed);
            Arc { counted: self.counted.clone() }
        }
    }

    impl<T> Drop for Arc<T> {
        fn drop(&mut self) {
            if self.counted.strong.fetch_sub(1, Ordering::Release) == 1 {
                fence(Ordering::Acquire);
            }
        }
    }

    impl<T> Deref for Arc<T> {
        type Target = T;
        fn deref(&self) -> &T {
            &self.counted.value
        }
    }

    impl<T> Weak<T> {
        /// The strong references left, read `Relaxed` as std reads it.
        pub fn strong_count(&self) -> usize {
            self.counted.strong.load(Ordering::Relaxed)
        }
    }
}
