//! Arbitrary route sets (inserts, replacements, removals; any next hop) are
//! built by an engine of the registry (the input picks which: building all
//! of them per input, the D22R direct table of 2^22 entries among them,
//! runs at a few inputs a second), whose answers must match the RIB's.
#![no_main]

use arbitrary::Arbitrary;
use fibkit::addr::{Family, Prefix4, Prefix6};
use fibkit::fib::BuildOptions;
use fibkit::measure::verify::{self, Space};
use fibkit::registry;
use fibkit::rib::{Rib4, Rib6};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Op {
    Insert4 { addr: u32, prefix_len: u8, next_hop: u32 },
    Remove4 { addr: u32, prefix_len: u8 },
    Insert6 { addr: u128, prefix_len: u8, next_hop: u32 },
}

#[derive(Arbitrary, Debug)]
struct Input {
    /// Which engine of each family's in the registry to build.
    engine: u8,
    ops: Vec<Op>,
    /// Caps next hops (small caps make many equal neighbours to merge).
    hop_bits: u8,
    seed: u64,
}

fuzz_target!(|input: Input| {
    let hop_mask = if input.hop_bits >= 32 { u32::MAX } else { (1u32 << input.hop_bits) - 1 };
    let mut rib4 = Rib4::new();
    let mut rib6 = Rib6::new();
    for op in input.ops.iter().take(4096) {
        match *op {
            Op::Insert4 { addr, prefix_len, next_hop } => {
                let hop = (next_hop & hop_mask).max(1);
                rib4.insert(Prefix4::truncating(addr, prefix_len % 33), hop);
            }
            Op::Remove4 { addr, prefix_len } => {
                rib4.remove(Prefix4::truncating(addr, prefix_len % 33));
            }
            Op::Insert6 { addr, prefix_len, next_hop } => {
                let hop = (next_hop & hop_mask).max(1);
                rib6.insert(Prefix6::truncating(addr, prefix_len % 129), hop);
            }
        }
    }
    let max_next_hop = rib4.iter().map(|(_, hop)| hop).max().unwrap_or(0);
    let options = BuildOptions::new(max_next_hop);
    let engines = registry::engines_of(Family::Ipv4);
    let spec = engines[usize::from(input.engine) % engines.len()];
    match spec.build(&rib4, &options) {
        Ok(fib) => {
            let report = verify::boundaries(&*fib, &rib4);
            assert!(report.passed(), "{}: {:?}", spec.name, report.first);
            let report = verify::random(&*fib, &rib4, Space::Anywhere, 2000, input.seed);
            assert!(report.passed(), "{}: {:?}", spec.name, report.first);
        }
        // Refusing a table past a structural limit is allowed; no engine has
        // limits that a few thousand routes with next hops below 256 reach.
        Err(error) => assert!(max_next_hop >= 256, "{}: refused a small table: {error}", spec.name),
    }
    let max6 = rib6.iter().map(|(_, hop)| hop).max().unwrap_or(0);
    let engines6 = registry::engines_of(Family::Ipv6);
    let spec = engines6[usize::from(input.engine) % engines6.len()];
    match spec.build(&rib6, &BuildOptions::new(max6)) {
        Ok(fib) => {
            for (prefix, _) in rib6.iter() {
                let around =
                    [prefix.first(), prefix.last(), prefix.first().wrapping_sub(1), prefix.last().wrapping_add(1)];
                for addr in around {
                    assert_eq!(fib.lookup(addr), rib6.lookup(addr), "{} at {addr:#x}", spec.name);
                }
            }
        }
        Err(error) => assert!(max6 >= 256, "{}: refused a small table: {error}", spec.name),
    }
});
