//! The default route kept aside from an in-place structure: how a batch
//! is written around its word (the module docs of [`super`], "The default
//! route").

use super::Router;
use crate::addr::{Address, Prefix};
use crate::error::BuildError;
use crate::live::{Applied, ApplyContext, Updater};
use crate::rib::Rib;
use crate::{NextHop, NO_ROUTE};

impl<A: Address> Router<A> {
    /// [`Router::apply_checked`]'s engine update with the default route
    /// aside, `default` its next hop before the batch; on error the
    /// structure answers as before and the default is unchanged.
    pub(super) fn apply_aside(&mut self, default: NextHop, context: ApplyContext) -> Result<Applied, BuildError> {
        let root = Prefix::<A>::default_route();
        if !self.changed.contains(&root) {
            return self.apply_without_default(default, context);
        }
        let new_default = self.rib.get(root).unwrap_or(NO_ROUTE);
        if new_default == default {
            // The default route withdrawn and announced back alike: the
            // other prefixes only.
            let changed = std::mem::take(&mut self.changed);
            self.changed.extend(changed.iter().copied().filter(|&prefix| prefix != root));
            let outcome = self.apply_without_default(default, context);
            self.changed = changed;
            return outcome;
        }
        self.split_batch(root);
        // 1. What the batch announces, over the RIB after it with what it
        // withdraws still in: for every address, as before or as after.
        let mut applied = Applied::default();
        if !self.announced.is_empty() {
            for &(prefix, old) in &self.withdrawn {
                self.rib.insert(prefix, old);
            }
            let (updater, announced) = (&mut self.updater, &self.announced);
            let outcome = without_default(&mut self.rib, new_default, |rib| updater.apply(rib, announced, context));
            for &(prefix, _) in &self.withdrawn {
                self.rib.remove(prefix);
            }
            applied = outcome?;
        }
        // 2. The default.
        self.updater.set_default(new_default);
        applied.bytes_written += 8;
        // 3. What it withdraws.
        if !self.withdrawn.is_empty() {
            let withdrawn: Vec<Prefix<A>> = self.withdrawn.iter().map(|&(prefix, _)| prefix).collect();
            let updater = &mut self.updater;
            match without_default(&mut self.rib, new_default, |rib| updater.apply(rib, &withdrawn, context)) {
                Ok(last) => {
                    if last.rebuilt {
                        self.updater.set_default(new_default);
                    }
                    merge(&mut applied, last);
                }
                Err(error) => {
                    self.undo_announced(default, context);
                    return Err(error);
                }
            }
        }
        self.aside = Some(new_default);
        Ok(applied)
    }

    /// The batch's changed prefixes (`self.changed`) over the RIB without
    /// its default route `default`, unchanged.
    fn apply_without_default(&mut self, default: NextHop, context: ApplyContext) -> Result<Applied, BuildError> {
        let (updater, changed) = (&mut self.updater, &self.changed);
        let applied = without_default(&mut self.rib, default, |rib| updater.apply(rib, changed, context))?;
        if applied.rebuilt {
            self.updater.set_default(default);
        }
        Ok(applied)
    }

    /// Splits the batch's changes but the default route's (`root`) into
    /// the prefixes routed after it (`self.announced`) and those withdrawn
    /// by it, with their next hop before it (`self.withdrawn`).
    fn split_batch(&mut self, root: Prefix<A>) {
        self.announced.clear();
        let mut withdrawn: Vec<(Prefix<A>, Option<NextHop>)> = Vec::new();
        // Undone in reverse, a prefix's first change comes last: its next
        // hop before the batch.
        for &(prefix, old) in self.undo.iter().rev() {
            if prefix == root {
                continue;
            }
            if self.rib.get(prefix).is_some() {
                self.announced.push(prefix);
            } else if let Some(seen) = withdrawn.iter_mut().find(|(seen, _)| *seen == prefix) {
                seen.1 = old;
            } else {
                withdrawn.push((prefix, old));
            }
        }
        self.announced.sort_unstable();
        self.announced.dedup();
        // Announced and withdrawn again by the batch: no change.
        self.withdrawn.clear();
        self.withdrawn.extend(withdrawn.into_iter().filter_map(|(prefix, old)| Some((prefix, old?))));
    }

    /// After step 3 of [`Router::apply_aside`] failed (the structure holds
    /// the RIB after the batch with its withdrawn routes still in, and the
    /// new default): the old default back, and the announced routes undone
    /// over the RIB before the batch, so that the structure answers as
    /// before it (failing that too, the updater rebuilds at its next batch).
    #[cold]
    fn undo_announced(&mut self, default: NextHop, context: ApplyContext) {
        self.updater.set_default(default);
        for &(prefix, old) in self.undo.iter().rev() {
            match old {
                Some(next_hop) => self.rib.insert(prefix, next_hop),
                None => self.rib.remove(prefix),
            };
        }
        let (updater, announced) = (&mut self.updater, &self.announced);
        if let Ok(applied) = without_default(&mut self.rib, default, |rib| updater.apply(rib, announced, context)) {
            if applied.rebuilt {
                self.updater.set_default(default);
            }
        }
    }
}

/// Calls `apply` with `rib` without its default route, whose next hop is
/// `default` ([`NO_ROUTE`]: none; else taken out of the root for the
/// call, and put back).
fn without_default<A: Address, T>(rib: &mut Rib<A>, default: NextHop, apply: impl FnOnce(&Rib<A>) -> T) -> T {
    if default == NO_ROUTE {
        debug_assert_eq!(rib.get(Prefix::default_route()), None);
        return apply(rib);
    }
    let root = Prefix::<A>::default_route();
    debug_assert_eq!(rib.get(root), Some(default));
    rib.remove(root);
    let outcome = apply(rib);
    rib.insert(root, default);
    outcome
}

/// Adds what a later step of the same batch did to `applied`.
fn merge(applied: &mut Applied, later: Applied) {
    applied.rebuilt |= later.rebuilt;
    applied.relocated |= later.relocated;
    applied.bytes_written += later.bytes_written;
}

/// Asks `updater`, built from `rib`, to keep the default route aside;
/// where it does, takes the default route out of its structure (no reader
/// yet) and stores its word. The default route's next hop if kept aside.
pub(super) fn set_default_aside<A: Address>(
    updater: &mut dyn Updater<A>,
    rib: &mut Rib<A>,
    max_next_hop: NextHop,
) -> Option<NextHop> {
    if !updater.set_default(NO_ROUTE) {
        return None;
    }
    let root = Prefix::<A>::default_route();
    let Some(default) = rib.get(root) else {
        return Some(NO_ROUTE);
    };
    let context = ApplyContext { published: 0, oldest_held: 0, max_next_hop };
    match without_default(rib, default, |rib| updater.apply(rib, &[root], context)) {
        Ok(_) => {
            updater.set_default(default);
            Some(default)
        }
        // The structure keeps the default route: the updater gets it as
        // any other route.
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::addr::Prefix4;
    use crate::nexthop::{Label, Mapping, NextHopTable};
    use crate::rib::Rib4;
    use crate::router::{Router, Update, Window};

    fn p(text: &str) -> Prefix4 {
        text.parse().unwrap()
    }

    #[test]
    fn a_batch_changing_the_default_splits_into_what_it_announces_and_what_it_withdraws() {
        let mut rib = Rib4::new();
        let mut hops = NextHopTable::new(Mapping::Modulo(1000));
        for (prefix, value) in [("10.0.0.0/8", 1), ("11.0.0.0/8", 2), ("12.0.0.0/8", 3)] {
            rib.insert(p(prefix), hops.intern(Label::Number(value)));
        }
        let mut router = Router::new("d16r", rib, hops, Window::Count(1)).unwrap();
        let announce = |prefix: &str, value: u64| Update::Announce { prefix: p(prefix), value: Label::Number(value) };
        let withdraw = |prefix: &str| Update::Withdraw { prefix: p(prefix) };
        let batch = [
            announce("0.0.0.0/0", 7),
            withdraw("10.0.0.0/8"),
            announce("11.0.0.0/8", 5),
            // Announced, then withdrawn: no route before or after.
            announce("13.0.0.0/8", 4),
            withdraw("13.0.0.0/8"),
            // Withdrawn, then announced back with another next hop.
            withdraw("12.0.0.0/8"),
            announce("12.0.0.0/8", 6),
        ];
        router.apply(&batch).unwrap();
        assert_eq!(router.announced, [p("11.0.0.0/8"), p("12.0.0.0/8")]);
        let ten = router.next_hops().get(Label::Number(1)).unwrap();
        assert_eq!(router.withdrawn, [(p("10.0.0.0/8"), ten)], "with its next hop before the batch");
        assert_eq!(router.aside, router.next_hops().get(Label::Number(7)));
        let reader = router.reader();
        for addr in [0x0a00_0001, 0x0b00_0001, 0x0c00_0001, 0x0d00_0001, 0xc000_0000] {
            assert_eq!(reader.lookup(addr), router.rib().lookup(addr), "{addr:#010x}");
        }
        // The default withdrawn: no route where no other route is.
        router.withdraw(p("0.0.0.0/0")).unwrap();
        assert_eq!((reader.lookup(0x0a00_0001), router.aside), (0, Some(0)));
    }
}
