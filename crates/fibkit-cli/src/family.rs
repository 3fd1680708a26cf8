//! The address family a command works on (`--family ipv4|ipv6`, `-4`,
//! `-6`), and the engines of that family, resolved in fibkit's registry.
//!
//! A loaded table has an IPv4 and an IPv6 RIB (a mixed file fills both).
//! Without a flag, commands work on IPv4, unless the table has IPv6 routes
//! only, in which case they pick IPv6 and say so on stderr. Each command is
//! written once over the address type and dispatched on the family here.

use std::time::Instant;

use anyhow::{bail, Result};
use clap::Args;
use fibkit::addr::Address;
use fibkit::fib::{BuildOptions, Calibration, Fib};
use fibkit::load::RouteTable;
use fibkit::registry::Engine;

use crate::registered;
use crate::table::TableArgs;
pub use fibkit::Family;

/// The family flags every table command takes.
#[derive(Args, Clone, Debug, Default)]
pub struct FamilyArgs {
    /// Address family to work on, ipv4 or ipv6 [default: ipv4, or ipv6
    /// when the table has IPv6 routes only].
    #[arg(long, value_name = "FAMILY")]
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
        let family = self.resolve_quietly(table)?;
        let other = family.other();
        if table.prefixes(other) > 0 {
            eprintln!(
                "note: {} also has {} {other} routes, left out here (--family {} works on them)",
                table.name,
                table.prefixes(other),
                other.key()
            );
        }
        Ok(family)
    }

    /// [`FamilyArgs::resolve`] without the note on the other family.
    fn resolve_quietly(&self, table: &RouteTable) -> Result<Family> {
        match self.explicit() {
            Some(family) => {
                let other = family.other();
                if table.prefixes(family) == 0 && table.prefixes(other) > 0 {
                    bail!(
                        "{}: no {family} routes (it has {} {other} routes: use --family {})",
                        table.name,
                        table.prefixes(other),
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

/// Loads `table` and resolves the family to work on ([`FamilyArgs::resolve`]).
/// With `ipv4_only`, an option given that works on IPv4 only (the reason
/// it does, as its error starts), IPv6 is refused: before loading when the
/// flags ask for it, after when the table has IPv6 routes only.
pub fn load_table(table: &TableArgs, family: &FamilyArgs, ipv4_only: Option<&str>) -> Result<(RouteTable, Family)> {
    if let Some(reason) = ipv4_only.filter(|_| family.explicit() == Some(Family::Ipv6)) {
        bail!("{reason} (drop -6 / --family ipv6)");
    }
    let table = table.load()?;
    let family = family.resolve(&table)?;
    if let Some(reason) = ipv4_only.filter(|_| family == Family::Ipv6) {
        bail!("{reason}, and {} has IPv6 routes only", table.name);
    }
    Ok((table, family))
}

/// Refuses, before anything loads, a name in `spec` (a comma-separated list
/// or `all`) that no engine of either family has.
pub fn check_names(spec: &str) -> Result<()> {
    if spec != "all" {
        for name in spec.split(',') {
            registered::find_any(name.trim()).map_err(|error| anyhow::anyhow!("{error}; or all"))?;
        }
    }
    Ok(())
}

/// The engines of family `A` that `spec` selects: a comma-separated list
/// or `all` (fibkit's engines, then the registered peers). A name of the
/// other family, or no engine's, is refused with the registry's reason.
pub fn select_engines<A: Address>(spec: &str) -> Result<Vec<&'static Engine>> {
    if spec == "all" {
        return Ok(registered::engines_of(A::FAMILY));
    }
    spec.split(',')
        .map(|name| registered::resolve::<A>(name.trim()).map_err(|error| anyhow::anyhow!("{error}; or all")))
        .collect()
}

/// Builds `engine` for family `A` from `table` and times it (ms); `auto`
/// measures its candidates on the keys of `calibration`.
pub fn build_timed<A: Address>(
    engine: &Engine,
    table: &RouteTable,
    calibration: &Calibration<A>,
) -> Result<(Box<dyn Fib<A>>, f64)> {
    let mut options = BuildOptions::new(table.next_hops.max_index());
    *options.calibration.of_mut::<A>() = calibration.clone();
    let start = Instant::now();
    let fib = engine.build(table.rib::<A>(), &options)?;
    Ok((fib, start.elapsed().as_secs_f64() * 1e3))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fibkit::nexthop::Mapping;

    fn names<A: Address>(spec: &str) -> Vec<&'static str> {
        select_engines::<A>(spec).unwrap().iter().map(|engine| engine.name).collect()
    }

    #[test]
    fn ipv6_names_resolve_and_ipv4_ones_say_why_not() {
        assert_eq!(names::<u128>("poptrie18, radix"), vec!["poptrie18", "radix"]);
        assert!(names::<u128>("all").contains(&"poptrie16"));
        let message = format!("{:#}", select_engines::<u128>("d16r").unwrap_err());
        assert!(message.contains("\"d16r\" is IPv4 only") && message.contains("poptrie18"), "{message}");
        let message = format!("{:#}", select_engines::<u128>("treebitmap").unwrap_err());
        assert!(message.contains("fibkit-peers is IPv4 only"), "{message}");
        let message = format!("{:#}", select_engines::<u128>("nonesuch").unwrap_err());
        assert!(message.contains("unknown IPv6 engine \"nonesuch\""), "{message}");
        assert!(names::<u32>("all").ends_with(&["prefix-trie", "treebitmap", "poptrie-crate"]));
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
