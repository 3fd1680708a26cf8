//! The address family a command works on (`--family ipv4|ipv6`, `-4`,
//! `-6`), and the engines of each family behind one type.
//!
//! A loaded table has an IPv4 and an IPv6 RIB (a mixed file fills both).
//! Without a flag, commands work on IPv4, unless the table has IPv6 routes
//! only, in which case they pick IPv6 and say so on stderr. IPv6 engine
//! names resolve against [`fibkit::engine::ENGINES6`]; the third-party
//! peers (`fibkit-peers`) are IPv4 only.

use std::fmt;
use std::time::Instant;

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use fibkit::engine::{self, BuildOptions, Fib4, Fib6, Stats};
use fibkit::load::RouteTable;

/// An address family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Family {
    /// IPv4 (32-bit keys).
    Ipv4,
    /// IPv6 (128-bit keys).
    Ipv6,
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Family::Ipv4 => "IPv4",
            Family::Ipv6 => "IPv6",
        })
    }
}

impl Family {
    /// The family's name in JSON (`ipv4`, `ipv6`).
    pub fn key(self) -> &'static str {
        match self {
            Family::Ipv4 => "ipv4",
            Family::Ipv6 => "ipv6",
        }
    }

    /// How many routes `table` has in this family.
    pub fn prefixes(self, table: &RouteTable) -> usize {
        match self {
            Family::Ipv4 => table.v4.len(),
            Family::Ipv6 => table.v6.len(),
        }
    }
}

/// The family flags every table command takes.
#[derive(Args, Clone, Debug, Default)]
pub struct FamilyArgs {
    /// Address family to work on [default: ipv4, or ipv6 when the table
    /// has IPv6 routes only].
    #[arg(long, value_enum, value_name = "FAMILY")]
    family: Option<Family>,
    /// Short for --family ipv6.
    #[arg(short = '6', conflicts_with_all = ["family", "ipv4"])]
    ipv6: bool,
    /// Short for --family ipv4.
    #[arg(short = '4', conflicts_with = "family")]
    ipv4: bool,
}

impl FamilyArgs {
    /// The family the flags name, if any.
    pub fn explicit(&self) -> Option<Family> {
        match (self.family, self.ipv4, self.ipv6) {
            (Some(family), _, _) => Some(family),
            (None, true, _) => Some(Family::Ipv4),
            (None, _, true) => Some(Family::Ipv6),
            (None, false, false) => None,
        }
    }

    /// The family to work on with `table`: the flags', else IPv6 for a
    /// table of IPv6 routes only, else IPv4. A family the table has no
    /// route of, while it has routes of the other, is an error.
    pub fn resolve(&self, table: &RouteTable) -> Result<Family> {
        match self.explicit() {
            Some(family) => {
                let other = match family {
                    Family::Ipv4 => Family::Ipv6,
                    Family::Ipv6 => Family::Ipv4,
                };
                if family.prefixes(table) == 0 && other.prefixes(table) > 0 {
                    bail!(
                        "{}: no {family} routes (it has {} {other} routes: use --family {})",
                        table.name,
                        other.prefixes(table),
                        other.key()
                    );
                }
                Ok(family)
            }
            None if table.v4.is_empty() && !table.v6.is_empty() => {
                eprintln!("note: {} has IPv6 routes only: working on IPv6 (--family ipv6)", table.name);
                Ok(Family::Ipv6)
            }
            None => Ok(Family::Ipv4),
        }
    }
}

/// Names of the IPv6 engines, comma-separated.
pub fn engine_names6() -> String {
    engine::ENGINES6.iter().map(|spec| spec.name).collect::<Vec<_>>().join(", ")
}

/// Names of the IPv6 engines `spec` selects: a comma-separated list or
/// `all`. An IPv4-only name is refused with the reason.
pub fn select_engines6(spec: &str) -> Result<Vec<&'static str>> {
    if spec == "all" {
        return Ok(engine::ENGINES6.iter().map(|spec| spec.name).collect());
    }
    spec.split(',')
        .map(|name| {
            let name = name.trim();
            if let Some(spec) = engine::ENGINES6.iter().find(|spec| spec.name == name) {
                return Ok(spec.name);
            }
            let known = engine_names6();
            if engine::engine(name).is_some() {
                bail!("engine {name:?} is IPv4 only (IPv6 engines: {known}, or all)")
            } else if fibkit_peers::find(name).is_some() {
                bail!("engine {name:?} is a third-party peer; fibkit-peers is IPv4 only (IPv6 engines: {known}, or all)")
            } else {
                bail!("unknown IPv6 engine {name:?} (known: {known}, or all)")
            }
        })
        .collect()
}

/// Names of the engines of `family` that `spec` selects.
pub fn select_engines_in(family: Family, spec: &str) -> Result<Vec<&'static str>> {
    match family {
        Family::Ipv4 => crate::select_engines(spec),
        Family::Ipv6 => select_engines6(spec),
    }
}

/// The one-line summary of engine `name` of `family`.
pub fn summary(family: Family, name: &str) -> &'static str {
    match family {
        Family::Ipv4 => fibkit_peers::find(name).map_or("", |spec| spec.summary),
        Family::Ipv6 => engine::ENGINES6.iter().find(|spec| spec.name == name).map_or("", |spec| spec.summary),
    }
}

/// A built engine of either family.
pub enum AnyFib {
    /// An IPv4 engine.
    V4(Box<dyn Fib4>),
    /// An IPv6 engine.
    V6(Box<dyn Fib6>),
}

impl AnyFib {
    /// Bytes of the lookup structure.
    pub fn footprint(&self) -> usize {
        match self {
            AnyFib::V4(fib) => fib.footprint(),
            AnyFib::V6(fib) => fib.footprint(),
        }
    }

    /// The engine's statistics report.
    pub fn stats(&self) -> Stats {
        match self {
            AnyFib::V4(fib) => fib.stats(),
            AnyFib::V6(fib) => fib.stats(),
        }
    }
}

/// Builds engine `name` of `family` from `table` and times it (ms).
pub fn build_timed_in(family: Family, name: &str, table: &RouteTable) -> Result<(AnyFib, f64)> {
    match family {
        Family::Ipv4 => crate::build_timed(name, table).map(|(fib, ms)| (AnyFib::V4(fib), ms)),
        Family::Ipv6 => {
            let options = BuildOptions { max_next_hop: table.next_hops.max_index() };
            let start = Instant::now();
            let fib = engine::build6(name, &table.v6, &options)?;
            Ok((AnyFib::V6(fib), start.elapsed().as_secs_f64() * 1e3))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fibkit::nexthop::Mapping;

    #[test]
    fn ipv6_names_resolve_and_ipv4_ones_say_why_not() {
        assert_eq!(select_engines6("poptrie18, radix").unwrap(), vec!["poptrie18", "radix"]);
        assert!(select_engines6("all").unwrap().contains(&"poptrie16"));
        let message = format!("{:#}", select_engines6("d16r").unwrap_err());
        assert!(message.contains("\"d16r\" is IPv4 only") && message.contains("poptrie18"), "{message}");
        let message = format!("{:#}", select_engines6("treebitmap").unwrap_err());
        assert!(message.contains("fibkit-peers is IPv4 only"), "{message}");
        let message = format!("{:#}", select_engines6("nonesuch").unwrap_err());
        assert!(message.contains("unknown IPv6 engine \"nonesuch\""), "{message}");
    }

    #[test]
    fn family_follows_the_flags_then_the_table() {
        let mut only6 = RouteTable::new("six", Mapping::Distinct);
        only6.v6.insert("2001:db8::/32".parse().unwrap(), 1);
        let mut only4 = RouteTable::new("four", Mapping::Distinct);
        only4.v4.insert("10.0.0.0/8".parse().unwrap(), 1);
        let mut mixed = only4.clone();
        mixed.v6.insert("2001:db8::/32".parse().unwrap(), 1);
        let none = FamilyArgs::default();
        assert_eq!(none.resolve(&only6).unwrap(), Family::Ipv6);
        assert_eq!(none.resolve(&only4).unwrap(), Family::Ipv4);
        assert_eq!(none.resolve(&mixed).unwrap(), Family::Ipv4);
        let six = FamilyArgs { ipv6: true, ..Default::default() };
        assert_eq!(six.resolve(&mixed).unwrap(), Family::Ipv6);
        let message = format!("{:#}", six.resolve(&only4).unwrap_err());
        assert!(message.contains("four: no IPv6 routes") && message.contains("--family ipv4"), "{message}");
        let four = FamilyArgs { family: Some(Family::Ipv4), ..Default::default() };
        assert!(four.resolve(&only6).is_err());
    }
}
