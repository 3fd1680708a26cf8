//! IPv4-mapped IPv6 routes (`::ffff:a.b.c.d`): the rule every loader,
//! compiled table, `fibkit lookup`, Python and C share.
//!
//! An address written `::ffff:a.b.c.d` is looked up as the IPv4 address
//! `a.b.c.d` ([`crate::address_text::ipv4_mapped`]), among the IPv4 routes. So an IPv6
//! route inside `::ffff:0:0/96` (length 96 or more) is an IPv4 route
//! written in IPv6: [`fold_ipv4_mapped`] moves it to the IPv4 routes, its
//! length less 96 (`::ffff:1.2.3.0/120` becomes `1.2.3.0/24`), with a
//! warning; an IPv4 route given for the same prefix keeps its value. An
//! IPv6 route that only covers `::ffff:0:0/96` (`::/0`, `::/64`) stays an
//! IPv6 route: it answers for IPv6 addresses, never for a mapped one (an
//! IPv6 default route does not route IPv4).

use super::RouteTable;
use crate::address_text::ipv4_mapped_prefix;

/// Moves the IPv6 routes of `table` inside `::ffff:0:0/96` to its IPv4
/// routes, each its length less 96 (an IPv4 route given for the same
/// prefix keeps its value; a route that only covers the /96, such as
/// `::/0`, stays IPv6); the warning says how many, and names the first.
/// `None` when there are none.
pub fn fold_ipv4_mapped(table: &mut RouteTable) -> Option<String> {
    let mapped: Vec<_> =
        table.v6.iter().filter_map(|(prefix, hop)| ipv4_mapped_prefix(prefix).map(|v4| (prefix, v4, hop))).collect();
    let &(first, first4, _) = mapped.first()?;
    let mut kept = 0;
    for &(prefix, v4, hop) in &mapped {
        table.v6.remove(prefix);
        if table.v4.get(v4).is_some() {
            kept += 1;
        } else {
            table.v4.insert(v4, hop);
        }
    }
    let kept = match kept {
        0 => String::new(),
        _ => format!("; {kept} of them had an IPv4 route of their own, which keeps its value"),
    };
    Some(format!(
        "{} IPv6 route(s) inside ::ffff:0:0/96 (IPv4-mapped, the first {first}) are IPv4 routes (the first \
         {first4}): a mapped address is looked up as IPv4{kept}",
        mapped.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::Prefix;
    use crate::nexthop::{Label, Mapping};

    #[test]
    fn mapped_routes_become_ipv4_routes_and_covering_ones_stay() {
        let mut table = RouteTable::new("t", Mapping::Distinct);
        let [default6, mapped, native, clash] =
            [64600, 64601, 64500, 64602].map(|asn| table.next_hops.intern(Label::Number(asn)));
        table.v6.insert("::/0".parse().unwrap(), default6);
        table.v6.insert("::ffff:1.2.3.0/120".parse().unwrap(), mapped);
        table.v6.insert("::ffff:10.0.0.0/104".parse().unwrap(), clash);
        table.v4.insert("10.0.0.0/8".parse().unwrap(), native);
        let warning = fold_ipv4_mapped(&mut table).unwrap();
        assert!(warning.starts_with("2 IPv6 route(s) inside ::ffff:0:0/96"), "{warning}");
        assert!(warning.ends_with("1 of them had an IPv4 route of their own, which keeps its value"), "{warning}");
        assert_eq!(table.v6.iter().collect::<Vec<_>>(), [("::/0".parse().unwrap(), default6)]);
        assert_eq!(table.v4.lookup(0x0102_0304), mapped);
        assert_eq!(table.v4.lookup(0x0a01_0101), native);
        assert_eq!(table.v4.get("1.2.3.0/24".parse().unwrap()), Some(mapped));
        assert_eq!(fold_ipv4_mapped(&mut table), None, "once folded, nothing is left to fold");
        let mut whole = RouteTable::new("t", Mapping::Distinct);
        whole.v6.insert("::ffff:0:0/96".parse().unwrap(), default6);
        fold_ipv4_mapped(&mut whole).unwrap();
        assert_eq!(whole.v4.get(Prefix::default_route()), Some(default6));
        assert!(whole.v6.is_empty());
    }
}
