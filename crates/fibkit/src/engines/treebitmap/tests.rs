use super::build::{chunk_at, index_of};
use super::*;
use crate::addr::Prefix;
use crate::error::Limit;
use crate::fib::Figure;
use crate::random::XorShift32;
use crate::rib::rib_of;
use crate::NO_ROUTE;

type Tb<A, const S: u32> = TreeBitmap<A, Stride<S>>;

/// Both ends of every range of `rib` and the addresses just outside them.
fn probes<A: Address>(rib: &Rib<A>) -> Vec<A> {
    let mut addrs = Vec::new();
    rib.for_each_range(A::ZERO, A::MAX, |range| {
        addrs.extend([range.first, range.last]);
        addrs.extend(range.first.checked_prev());
        addrs.extend(range.last.checked_next());
    });
    addrs
}

/// Builds stride `S` from `rib` and checks it against the RIB at every
/// probe.
fn checked<A: Address, const S: u32>(rib: &Rib<A>) -> Tb<A, S>
where
    Stride<S>: Layout,
{
    let fib = Tb::<A, S>::build(rib).unwrap();
    for addr in probes(rib) {
        assert_eq!(fib.lookup(addr), rib.lookup(addr), "{} at {}", <Stride<S>>::NAME, addr.display());
    }
    assert_eq!(fib.footprint(), fib.nodes().len() * Tb::<A, S>::NODE_BYTES + fib.results().len() * 4);
    fib
}

fn figure(stats: &crate::fib::Stats, key: &str) -> u64 {
    match stats.get(key) {
        Some(Figure::Count(value)) => *value,
        other => panic!("{key}: {other:?}"),
    }
}

#[test]
fn positions_are_breadth_first() {
    assert_eq!(position(0, 0), 0);
    assert_eq!((position(1, 0), position(1, 1)), (1, 2));
    assert_eq!((position(2, 0), position(2, 3)), (3, 6));
    assert_eq!(position(3, 7), 14);
    assert_eq!(position(5, 31), 62);
    assert_eq!(chunk_at(0xa000_0001u32, 0, 4), 0xa);
    assert_eq!(chunk_at(0xa000_0001u32, 30, 6), 0b01_0000, "zeros past the last bit");
    assert_eq!(chunk_at(0xa000_0001u32, 32, 4), 0);
    assert_eq!(chunk_at(u128::MAX, 126, 6), 0b11_0000);
    assert_eq!(chunk_at(u128::MAX, 3, 0), 0);
}

#[test]
fn node_searches_its_internal_bitmap_longest_first() {
    // `*` at 0, `1*` at 2, `010*` at 3 + ... : 7 + 2 = 9.
    let node = Node::<u16> { internal: 1 | 1 << 2 | 1 << 9, external: 1 << 0b0101, children: 40, results: 10 };
    assert_eq!(node.longest_match(0b0100, 4), Some(12), "010* is the third result");
    assert_eq!(node.longest_match(0b0101, 4), Some(12));
    assert_eq!(node.longest_match(0b0110, 4), Some(10), "only * covers 0110");
    assert_eq!(node.longest_match(0b1111, 4), Some(11), "1*");
    assert!(node.has_child(0b0101) && !node.has_child(0b0100));
    assert_eq!(node.child_index(0b0101), 40);
    assert_eq!((node.child_count(), node.result_count()), (1, 3));
    let empty = Node::<u64>::default();
    assert_eq!(empty.longest_match(63, 6), None);
    let full = Node::<u64> { internal: u64::MAX >> 1, external: u64::MAX, children: 0, results: 1 };
    assert_eq!(full.longest_match(0b10_1101, 6), Some(1 + position(5, 0b10110)));
    assert_eq!(full.child_index(63), 63);
}

#[test]
fn the_root_holds_short_prefixes_in_bit_order() {
    let rib = rib_of::<u32>(&[("64.0.0.0/3", 3), ("0.0.0.0/0", 1), ("128.0.0.0/1", 2), ("10.0.0.0/8", 4)]);
    let fib = checked::<u32, 4>(&rib);
    let nodes = fib.nodes();
    assert_eq!(nodes[0].internal, 1 | 1 << 2 | 1 << 9);
    assert_eq!(nodes[0].external, 1, "10/8 is below chunk 0000");
    assert_eq!(fib.results(), vec![NO_ROUTE, 1, 2, 3, 4]);
    // 10/8: chunk 1010 of the child's, relative length 4 = S: the `*` of
    // a grandchild.
    assert_eq!(nodes.len(), 3);
    assert_eq!((nodes[2].internal, nodes[2].external), (1, 0));
    assert_eq!((nodes[1].internal, nodes[1].external), (0, 1 << 0b1010));
    assert_eq!(fib.lookup(0x0a01_0203), 4);
    assert_eq!(fib.lookup(0x4000_0000), 3);
    assert_eq!(fib.lookup(0x2000_0000), 1);
}

#[test]
fn empty_and_default_only_tables() {
    for rib in [Rib::<u32>::new(), rib_of(&[("0.0.0.0/0", 7)])] {
        let want = rib.lookup(0);
        let small = checked::<u32, 4>(&rib);
        let wide = checked::<u32, 6>(&rib);
        for addr in [0, 1, 0x0a00_0000, u32::MAX] {
            assert_eq!((small.lookup(addr), wide.lookup(addr)), (want, want));
        }
        assert_eq!((small.levels(), small.nodes().len(), small.results().len()), (1, 1, 1 + rib.len()));
        assert_eq!(wide.footprint(), 24 + 4 * (1 + rib.len()));
    }
    let rib = rib_of::<u128>(&[("::/0", 9)]);
    assert_eq!(checked::<u128, 6>(&rib).lookup(u128::MAX), 9);
    assert_eq!(checked::<u128, 4>(&Rib::new()).lookup(5), NO_ROUTE);
}

#[test]
fn host_routes_live_in_the_last_partial_level() {
    let rib = rib_of::<u32>(&[
        ("10.0.0.0/8", 1),
        ("10.1.2.0/30", 2),
        ("10.1.2.2/31", 3),
        ("10.1.2.3/32", 4),
        ("10.1.2.0/32", 5),
        ("255.255.255.255/32", 6),
        ("0.0.0.0/32", 7),
    ]);
    // Stride 4: a /32 is the `*` of a node of depth 8, the ninth level.
    let small = checked::<u32, 4>(&rib);
    assert_eq!(small.levels(), 9);
    assert_eq!(small.nodes_per_level.last(), Some(&4), "one node per /32");
    assert_eq!(small.lookup(0x0a01_0203), 4);
    assert_eq!(small.lookup(0x0a01_0202), 3);
    assert_eq!(small.lookup(0x0a01_0201), 2);
    assert_eq!(small.lookup(0x0a01_0200), 5);
    assert_eq!(small.lookup(0x0a01_0204), 1);
    // Stride 6: /30, /31, /32 in the depth-5 node, which reads 2 bits.
    let wide = checked::<u32, 6>(&rib);
    assert_eq!(wide.levels(), 6);
    let last = wide.nodes().into_iter().find(|node| node.internal.count_ones() == 4).unwrap();
    // /30 at 0, /31 (1) at 2, /32 00 at 3 and 11 at 6.
    assert_eq!((last.internal, last.external), (1 | 1 << 2 | 1 << 3 | 1 << 6, 0));
    for addr in [0x0a01_0200, 0x0a01_0201, 0x0a01_0202, 0x0a01_0203, 0xffff_ffff, 0, 1] {
        assert_eq!(wide.lookup(addr), small.lookup(addr));
    }
}

#[test]
fn ipv6_full_length_routes_in_both_strides() {
    let rib = rib_of::<u128>(&[
        ("2001:db8::/32", 1),
        ("2001:db8::/126", 2),
        ("2001:db8::2/127", 3),
        ("2001:db8::3/128", 4),
        ("2001:db8::/128", 5),
        ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128", 6),
        ("::/128", 7),
        ("::/1", 8),
    ]);
    let small = checked::<u128, 4>(&rib);
    assert_eq!(small.levels(), 33);
    let wide = checked::<u128, 6>(&rib);
    assert_eq!(wide.levels(), 22);
    let base = 0x2001_0db8_u128 << 96;
    for (addr, want) in
        [(base, 5), (base + 1, 2), (base + 2, 3), (base + 3, 4), (base + 4, 1), (u128::MAX, 6), (0, 7), (1, 8)]
    {
        assert_eq!((small.lookup(addr), wide.lookup(addr)), (want, want), "{}", addr.display());
    }
}

#[test]
fn nested_prefixes_at_every_length() {
    // A chain of nested prefixes of every length along one address, each
    // with its own next hop, and the siblings that leave it at each bit.
    let addr = 0b1011_0110_0101_1100_1010_0011_1101_0110u32;
    let mut rib = Rib::<u32>::new();
    for len in 0..=32u8 {
        rib.insert(Prefix::truncating(addr, len), u32::from(len) + 1);
        if len > 0 && len % 3 == 0 {
            rib.insert(Prefix::truncating(addr ^ 1 << (32 - len), len), 100 + u32::from(len));
        }
    }
    let small = checked::<u32, 4>(&rib);
    let wide = checked::<u32, 6>(&rib);
    assert_eq!((small.levels(), wide.levels()), (9, 6));
    assert_eq!((small.lookup(addr), wide.lookup(addr)), (33, 33));
    let mut rib6 = Rib::<u128>::new();
    let addr6 = u128::from(addr) << 96 | 0x0123_4567_89ab_cdef_0011_2233;
    for len in 0..=128u8 {
        rib6.insert(Prefix::truncating(addr6, len), u32::from(len) + 1);
    }
    assert_eq!(checked::<u128, 4>(&rib6).lookup(addr6), 129);
    assert_eq!(checked::<u128, 6>(&rib6).lookup(addr6 ^ 1), 128);
}

/// Random tables of nested prefixes, every length, both families.
#[test]
fn random_tables_match_the_rib() {
    let mut rng = XorShift32::new(2004);
    for round in 0..40 {
        let mut rib4 = Rib::<u32>::new();
        let mut rib6 = Rib::<u128>::new();
        let tops = [0u32, 0x0a00_0000, 0xc0a8_0000, 0xffff_ff00];
        for _ in 0..(round * 7 + 1) {
            let top = tops[rng.next() as usize % tops.len()];
            let addr = top | rng.next() >> (rng.next() % 32);
            let len = (rng.next() % 33) as u8;
            rib4.insert(Prefix::truncating(addr, len), rng.next() % 5 + 1);
            let addr6 = u128::from(addr) << 96 | u128::from(rng.next()) << (rng.next() % 64);
            let len6 = match rng.next() % 4 {
                0 => 128,
                1 => (rng.next() % 129) as u8,
                _ => (rng.next() % 33) as u8 + 32,
            };
            rib6.insert(Prefix::truncating(addr6, len6), rng.next() % 5 + 1);
        }
        checked::<u32, 4>(&rib4);
        checked::<u32, 6>(&rib4);
        checked::<u128, 4>(&rib6);
        checked::<u128, 6>(&rib6);
    }
}

#[test]
fn report_and_registry_names() {
    let rib = rib_of::<u32>(&[("10.0.0.0/8", 1), ("10.1.0.0/16", 2), ("10.1.2.3/32", 3)]);
    let small: Box<dyn Fib<u32>> = build::<u32, 4>(&rib, &BuildOptions::default()).unwrap();
    let wide: Box<dyn Fib<u32>> = build::<u32, 6>(&rib, &BuildOptions::default()).unwrap();
    assert_eq!((small.name(), wide.name()), ("treebitmap16", "treebitmap64"));
    for fib in [&small, &wide] {
        let stats = fib.stats();
        assert_eq!(figure(&stats, "prefixes"), 3);
        assert_eq!(figure(&stats, "results"), 4);
        assert_eq!(figure(&stats, "bytes_total"), fib.footprint() as u64);
        assert_eq!(figure(&stats, "bytes_nodes") + figure(&stats, "bytes_results"), figure(&stats, "bytes_total"));
        assert_eq!(figure(&stats, "bytes_nodes"), figure(&stats, "nodes") * figure(&stats, "node_bytes"));
        assert!(stats.report.starts_with("Tree BitMap"), "{}", stats.report);
    }
    assert_eq!(figure(&small.stats(), "node_bytes"), 12);
    assert_eq!(figure(&wide.stats(), "node_bytes"), 24);
    assert_eq!(figure(&small.stats(), "levels"), 9);
    assert_eq!(figure(&wide.stats(), "levels"), 6);
    let v6: Box<dyn Fib<u128>> = build::<u128, 6>(&rib_of(&[("2001:db8::/32", 4)]), &BuildOptions::default()).unwrap();
    assert_eq!((v6.name(), v6.lookup(0x2001_0db8u128 << 96)), ("treebitmap64", 4));
}

#[test]
fn indexes_past_32_bits_are_a_typed_limit() {
    assert_eq!(index_of("treebitmap16", "the 32-bit child index of a node", 12), Ok(12));
    assert_eq!(index_of("x", "f", u32::MAX as usize), Ok(u32::MAX));
    let error = index_of("treebitmap64", "the 32-bit child index of a node", 1 << 32).unwrap_err();
    assert_eq!((error.limit, error.value, error.max), (Limit::Nodes, 1 << 32, u64::from(u32::MAX)));
    let shown = BuildError::from(error).to_string();
    assert!(
        shown.starts_with("treebitmap64: node and leaf count 4294967296 exceeds the 32-bit child index"),
        "{shown}"
    );
    assert!(shown.ends_with("the radix engine has no such limit"), "{shown}");
}
