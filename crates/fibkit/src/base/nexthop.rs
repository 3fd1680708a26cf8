//! Next hops: route values interned to dense indexes.
//!
//! Engines store a [`NextHop`], a small dense index; the [`NextHopTable`]
//! maps it back to what the input said (an ASN, a next-hop address, ...).
//! Index [`NO_ROUTE`] (0) means "no route". With `--nexthops N` the values
//! are mapped onto `N` router-like next hops as `value % N + 1`, so that
//! tables carrying origin ASNs can stand in for a router's FIB.

use std::collections::HashMap;
use std::fmt;
use std::net::IpAddr;

use super::hash::FoldState;

/// A next-hop index as engines store it; [`NO_ROUTE`] (0) means no route.
/// [`NextHopTable`] maps indexes back to the input's values.
pub type NextHop = u32;

/// The next hop of an address no prefix covers.
pub const NO_ROUTE: NextHop = 0;

/// What a route's value was in the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Label {
    /// A number, such as an origin ASN.
    Number(u64),
    /// A next-hop address.
    Addr(IpAddr),
    /// A record: its row in the table's [`crate::records::RecordTable`].
    Record(u32),
}

impl Label {
    /// The label as a number, for `value % N` mappings (addresses fold to
    /// their numeric value).
    pub fn as_number(&self) -> u64 {
        match *self {
            Label::Number(value) => value,
            Label::Record(row) => u64::from(row),
            Label::Addr(IpAddr::V4(addr)) => u64::from(u32::from(addr)),
            Label::Addr(IpAddr::V6(addr)) => {
                let wide = u128::from(addr);
                (wide as u64) ^ ((wide >> 64) as u64)
            }
        }
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Label::Number(value) => write!(f, "{value}"),
            Label::Addr(addr) => write!(f, "{addr}"),
            Label::Record(row) => write!(f, "record #{row}"),
        }
    }
}

/// How input values become next-hop indexes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mapping {
    /// Every distinct value gets its own index, in order of first appearance.
    #[default]
    Distinct,
    /// Value `v` becomes index `v % n + 1` (`--nexthops n`).
    Modulo(u32),
}

impl fmt::Display for Mapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mapping::Distinct => write!(f, "distinct values"),
            Mapping::Modulo(n) => write!(f, "value % {n} + 1"),
        }
    }
}

/// Interns route values to dense [`NextHop`] indexes.
#[derive(Clone, Debug, Default)]
pub struct NextHopTable {
    mapping: Mapping,
    /// For `Distinct`: label of index `i + 1`.
    labels: Vec<Label>,
    /// Looked up at every announcement: hashed by [`FoldState`], not SipHash.
    index: HashMap<Label, NextHop, FoldState>,
    /// Indexes in use, for `Modulo` (distinct count of mapped hops).
    used: Vec<bool>,
}

impl NextHopTable {
    /// An empty table with the given mapping.
    pub fn new(mapping: Mapping) -> Self {
        if let Mapping::Modulo(n) = mapping {
            assert!(n > 0, "--nexthops must be at least 1");
        }
        NextHopTable { mapping, ..Default::default() }
    }

    /// The mapping in force.
    pub fn mapping(&self) -> Mapping {
        self.mapping
    }

    /// The index for `label`, assigning a new one if needed.
    pub fn intern(&mut self, label: Label) -> NextHop {
        match self.mapping {
            Mapping::Distinct => {
                if let Some(&hop) = self.index.get(&label) {
                    return hop;
                }
                self.labels.push(label);
                let hop = NextHop::try_from(self.labels.len()).expect("more than 2^32 next hops");
                self.index.insert(label, hop);
                hop
            }
            Mapping::Modulo(n) => {
                let hop = (label.as_number() % u64::from(n)) as NextHop + 1;
                if self.used.len() <= hop as usize {
                    self.used.resize(hop as usize + 1, false);
                }
                self.used[hop as usize] = true;
                hop
            }
        }
    }

    /// The index `label` has, without assigning one: with `Modulo` always
    /// its mapped index; with `Distinct` `None` for a label not seen yet
    /// (it would get `max_index() + 1`).
    pub fn get(&self, label: Label) -> Option<NextHop> {
        match self.mapping {
            Mapping::Distinct => self.index.get(&label).copied(),
            Mapping::Modulo(n) => Some((label.as_number() % u64::from(n)) as NextHop + 1),
        }
    }

    /// How many distinct next hops are in use.
    pub fn len(&self) -> usize {
        match self.mapping {
            Mapping::Distinct => self.labels.len(),
            Mapping::Modulo(_) => self.used.iter().filter(|&&used| used).count(),
        }
    }

    /// Whether no next hop is in use.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The largest index that may appear (engines size their fields by it).
    pub fn max_index(&self) -> NextHop {
        match self.mapping {
            Mapping::Distinct => self.labels.len() as NextHop,
            Mapping::Modulo(n) => n,
        }
    }

    /// The input's label that index `hop` stands for: `None` for
    /// [`NO_ROUTE`], and with `Modulo`, where an index stands for every
    /// value congruent to it.
    pub fn label(&self, hop: NextHop) -> Option<Label> {
        match self.mapping {
            Mapping::Distinct if hop != NO_ROUTE => self.labels.get(hop as usize - 1).copied(),
            _ => None,
        }
    }

    /// A label that [`NextHopTable::intern`] maps to `hop`: the input's
    /// label with `Distinct`, the value `hop - 1` with `Modulo`; `None` for
    /// [`NO_ROUTE`] and for an index no label maps to.
    pub fn label_for(&self, hop: NextHop) -> Option<Label> {
        match self.mapping {
            Mapping::Modulo(n) if hop != NO_ROUTE && hop <= n => Some(Label::Number(u64::from(hop) - 1)),
            Mapping::Modulo(_) => None,
            Mapping::Distinct => self.label(hop),
        }
    }

    /// The value of a route whose next hop is `hop`, as text that loads
    /// back to the same table: the input's label with `Distinct`, the index
    /// itself with `Modulo`; `None` for [`NO_ROUTE`] and for an index no
    /// label maps to.
    pub fn value_text(&self, hop: NextHop) -> Option<String> {
        match self.mapping {
            Mapping::Distinct => self.label(hop).map(|label| label.to_string()),
            Mapping::Modulo(n) => (hop != NO_ROUTE && hop <= n).then(|| hop.to_string()),
        }
    }

    /// What index `hop` stands for, for display: the input's label with
    /// `Distinct`, the index itself with `Modulo`.
    pub fn describe(&self, hop: NextHop) -> String {
        if hop == NO_ROUTE {
            return "none".to_string();
        }
        match self.mapping {
            Mapping::Distinct => self.label(hop).map_or_else(|| format!("#{hop}"), |label| label.to_string()),
            Mapping::Modulo(_) => format!("#{hop}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_values_get_dense_indexes() {
        let mut table = NextHopTable::new(Mapping::Distinct);
        assert_eq!(table.intern(Label::Number(15169)), 1);
        assert_eq!(table.intern(Label::Number(3356)), 2);
        assert_eq!(table.intern(Label::Number(15169)), 1);
        assert_eq!(table.len(), 2);
        assert_eq!(table.describe(2), "3356");
        assert_eq!(table.describe(NO_ROUTE), "none");
        assert_eq!(table.value_text(2).as_deref(), Some("3356"));
    }

    #[test]
    fn modulo_maps_onto_n_hops() {
        let mut table = NextHopTable::new(Mapping::Modulo(239));
        assert_eq!(table.intern(Label::Number(15169)), 15169 % 239 + 1);
        assert_eq!(table.intern(Label::Number(239)), 1);
        assert_eq!(table.intern(Label::Number(478)), 1);
        assert_eq!(table.len(), 2);
        assert_eq!(table.max_index(), 239);
        assert_eq!(table.value_text(1).as_deref(), Some("1"));
        let addr = Label::Addr("195.66.226.74".parse().unwrap());
        assert_eq!(table.intern(addr), (0xc342_e24au64 % 239) as u32 + 1);
    }

    #[test]
    fn a_label_for_every_index_interns_back_to_it() {
        let mut distinct = NextHopTable::new(Mapping::Distinct);
        distinct.intern(Label::Number(15169));
        distinct.intern(Label::Addr("195.66.226.74".parse().unwrap()));
        let mut modulo = NextHopTable::new(Mapping::Modulo(239));
        for table in [&mut distinct, &mut modulo] {
            for hop in 1..=table.max_index() {
                let label = table.label_for(hop).unwrap();
                assert_eq!(table.intern(label), hop);
            }
            assert_eq!(table.label_for(NO_ROUTE), None);
            assert_eq!(table.label_for(table.max_index() + 1), None);
            assert_eq!(table.value_text(NO_ROUTE), None);
            assert_eq!(table.value_text(table.max_index() + 1), None);
        }
    }
}
