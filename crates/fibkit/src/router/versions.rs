//! The generations a router has published: the one served now, which
//! readers load, and the ones it replaced, kept as weak references until
//! no reader holds them (the module docs of [`super`], "Single writer,
//! many readers").

use std::collections::VecDeque;
use std::sync::Arc as Shared;

use crate::live::sync::{fence, Arc, Current, Ordering, Weak};

/// One writer's published generations of `V`.
pub(super) struct Versions<V> {
    current: Shared<Current<V>>,
    /// Replaced generations, oldest first, until no reader holds them.
    retired: VecDeque<(u64, Weak<V>)>,
}

impl<V> Versions<V> {
    /// `first`, served from now on.
    pub(super) fn new(first: V) -> Self {
        Versions { current: Shared::new(Current::new(first)), retired: VecDeque::new() }
    }

    /// The cell readers load from.
    pub(super) fn current(&self) -> &Shared<Current<V>> {
        &self.current
    }

    /// Serves `next` from now on; the value it replaces, generation
    /// `replaced`, is retired.
    pub(super) fn publish(&mut self, replaced: u64, next: V) {
        let old = self.current.swap(Arc::new(next));
        self.retired.push_back((replaced, Arc::downgrade(&old)));
    }

    /// The oldest generation a reader may still hold, `served` (the one
    /// served now) if no retired one is held; forgets the retired ones no
    /// reader holds. What a reader read of a generation older than the
    /// answer happens before whatever the caller does next.
    pub(super) fn oldest_held(&mut self, served: u64) -> u64 {
        while let Some((_, version)) = self.retired.front() {
            if version.strong_count() > 0 {
                break;
            }
            self.retired.pop_front();
        }
        // Pairs with the release decrement of the readers' last references:
        // their reads of retired space happen before our reuse of it.
        fence(Ordering::Acquire);
        self.retired.front().map_or(served, |&(generation, _)| generation)
    }

    /// Retired generations some reader may still hold.
    pub(super) fn retired(&self) -> usize {
        self.retired.len()
    }
}
