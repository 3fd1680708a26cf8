//! A deterministic synthetic IPv4 table shaped like a current (2025) full
//! BGP table: the embedded default of every `fibkit` command.
//!
//! # The histogram
//!
//! [`HISTOGRAM_PER_MILLION`] gives, per million prefixes, how many have each
//! prefix length. What it rests on:
//!
//! - totals read from bgp.potaroo.net's AS65000 BGP table report, 2025
//!   (March, July and November snapshots): 1.00-1.04 million active IPv4
//!   entries, an average prefix length of 22.90-22.93, 72.2-72.5% of the
//!   address space advertised;
//! - the shape the CIDR report and potaroo's prefix-length plots show for
//!   today's table: /24 about 60% of all entries, /22 and /23 next, a few
//!   thousand routes longer than /24 (where collectors accept them), a few
//!   dozen /8-/10;
//! - the measured per-length counts of the 2014 RouteViews table in
//!   `shared/data` (512,621 prefixes), whose /8../21 proportions changed
//!   little since; the growth since then sits mostly in /22-/24, as the RIRs'
//!   run-out policies made small blocks the norm.
//!
//! The per-length counts are our calibration of the 2014 shape to the 2025
//! totals, not a copy of one published snapshot: /24 is 60.0%, the average
//! prefix length is 22.91 and 4,000 per million are longer than /24. No
//! prefix is shorter than /8: real default-free tables carry none (operators
//! filter them; the 2014 table has none either).
//!
//! | prefix_len | per million | | prefix_len | per million |
//! |---:|---:|---|---:|---:|
//! | /8  |     16 | | /21 |  51,000 |
//! | /9  |     13 | | /22 | 132,770 |
//! | /10 |     36 | | /23 | 105,000 |
//! | /11 |    105 | | /24 | 600,000 |
//! | /12 |    300 | | /25 |     900 |
//! | /13 |    560 | | /26 |   1,000 |
//! | /14 |  1,100 | | /27 |     600 |
//! | /15 |  1,900 | | /28 |     400 |
//! | /16 | 13,600 | | /29 |     400 |
//! | /17 |  7,900 | | /30 |     350 |
//! | /18 | 13,200 | | /31 |      50 |
//! | /19 | 25,500 | | /32 |     300 |
//! | /20 | 43,000 | |     |         |
//!
//! For `n` prefixes each count is scaled by `n / 1e6` and rounded so the
//! counts add up to `n` exactly ([`target_counts`]).
//!
//! # How the prefixes are placed
//!
//! ```text
//!  unicast space minus reserved ranges, as /8 (and smaller) blocks, shuffled
//!        │  buddy allocator: best fit, last-freed first, so consecutive
//!        ▼  allocations are adjacent, as an RIR hands out a /8 in order
//!  ┌──────────────────────── 37.0.0.0/8 ────────────────────────┐
//!  │ /16 AS a │ /22 b │/24 c│/24 c│/24 c│ gap │ /20 d │ /19 e ...│  standalone runs
//!  └──────────┴───────┴─────┴─────┴─────┴─────┴───────┴──────────┘
//!      │  more specifics inside announced prefixes (same origin mostly,
//!      ▼  else a customer's): /24 a, /24 a, /23 x inside the /16 ...
//! ```
//!
//! 1. Per length, the share of prefixes that are more specifics of another
//!    announced prefix is the one measured in the 2014 RouteViews table
//!    ([`nested_per_mille`]: 0% of /8s, 24% of /16s, 55% of /24s, 98% of
//!    those longer than /24); the rest are *standalone*.
//! 2. Standalone prefixes come in runs (1 for short prefixes, up to 16
//!    adjacent /21../24s, as an AS announcing a deaggregated block; one /24
//!    run in a hundred is a "swamp" of 64-256 /24s whose origin changes
//!    every other prefix, as in legacy class C space); runs of
//!    /12 and shorter are allocated first, the rest in shuffled order, from
//!    the buddy allocator. After a run, some space of its size is left
//!    unannounced, so holes are scattered as in the real table. A run has one
//!    origin: a fresh ASN on a schedule that uses every one of
//!    [`SynthParams::next_hops`] values, else the previous run's (neighbours
//!    often belong to one AS), else a popular one.
//! 3. More specifics, from /9 to /32: each run picks a covering prefix 1..8
//!    (sometimes 9..16) bits shorter, a random position inside it, and adds
//!    adjacent sub-prefixes there; its origin is the cover's (80% up to /23,
//!    70% for /24, 60% beyond, close to the 2014 table's shares) or a
//!    customer's. Covers include earlier more specifics, so nesting goes
//!    several levels deep.
//!
//! Origins are ASN-like numbers (16-bit 1..64495, 32-bit from 131072),
//! chosen with a heavy-tailed popularity (a few ASes announce thousands of
//! prefixes, most a handful), so `--nexthops N` (`value % N + 1`) applies
//! as to a real table. Randomness is a SplitMix64 generator and all
//! arithmetic is integer, so the table is identical on every machine and
//! Rust version.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use super::RouteTable;
use crate::addr::{range_to_prefixes, Prefix4};
use crate::nexthop::{Label, Mapping};
use crate::NextHop;

/// Prefixes per million of each prefix length, `(prefix_len, count)`; the
/// counts add up to 1,000,000. See the [module docs](self) for the sources.
pub const HISTOGRAM_PER_MILLION: [(u8, u32); 25] = [
    (8, 16),
    (9, 13),
    (10, 36),
    (11, 105),
    (12, 300),
    (13, 560),
    (14, 1_100),
    (15, 1_900),
    (16, 13_600),
    (17, 7_900),
    (18, 13_200),
    (19, 25_500),
    (20, 43_000),
    (21, 51_000),
    (22, 132_770),
    (23, 105_000),
    (24, 600_000),
    (25, 900),
    (26, 1_000),
    (27, 600),
    (28, 400),
    (29, 400),
    (30, 350),
    (31, 50),
    (32, 300),
];

const _: () = {
    let mut sum = 0;
    let mut index = 0;
    while index < HISTOGRAM_PER_MILLION.len() {
        sum += HISTOGRAM_PER_MILLION[index].1;
        index += 1;
    }
    assert!(sum == 1_000_000);
};

/// The default seed of the embedded table.
pub const DEFAULT_SEED: u64 = 0x00f1_6c17_2025;

/// Parameters of the generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SynthParams {
    /// Seed of the pseudo-random generator; same seed, same table.
    pub seed: u64,
    /// Number of IPv4 prefixes.
    pub prefixes: usize,
    /// Number of distinct route values (origin ASNs); at most `prefixes`
    /// of them can be used, and at least one is.
    pub next_hops: u32,
}

impl Default for SynthParams {
    /// One million prefixes (a 2025 full table) and 75,000 origins: our
    /// estimate of the origin ASes of a 2025 table, scaled from the 46,823
    /// distinct origins of the 512,621-prefix 2014 table in `shared/data`
    /// (ASes grew more slowly than prefixes).
    fn default() -> Self {
        SynthParams { seed: DEFAULT_SEED, prefixes: 1_000_000, next_hops: 75_000 }
    }
}

/// The embedded default table: [`generate_with_mapping`] of
/// [`SynthParams::default`].
pub fn default_table(mapping: Mapping) -> RouteTable {
    generate_with_mapping(&SynthParams::default(), mapping)
}

/// Generates a table with distinct values as next hops.
pub fn generate(params: &SynthParams) -> RouteTable {
    generate_with_mapping(params, Mapping::Distinct)
}

/// The name of a generated table.
pub fn synthetic_name(params: &SynthParams) -> String {
    format!("synthetic(seed={}, prefixes={}, next_hops={})", params.seed, params.prefixes, params.next_hops)
}

/// The number of prefixes of each length (index = prefix_len) for a table
/// of `prefixes`: the histogram scaled, rounded by largest remainder so the
/// counts add up to `prefixes`.
pub fn target_counts(prefixes: usize) -> [usize; 33] {
    let mut counts = [0usize; 33];
    let mut remainders = Vec::with_capacity(HISTOGRAM_PER_MILLION.len());
    let mut assigned = 0usize;
    for &(len, per_million) in &HISTOGRAM_PER_MILLION {
        let scaled = u128::from(per_million) * prefixes as u128;
        counts[usize::from(len)] = (scaled / 1_000_000) as usize;
        assigned += counts[usize::from(len)];
        remainders.push((scaled % 1_000_000, len));
    }
    // Largest remainder first; ties to the more common (longer, up to /24) lengths.
    remainders.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    for &(_, len) in remainders.iter().cycle().take(prefixes - assigned) {
        counts[usize::from(len)] += 1;
    }
    counts
}

/// Per mille of the prefixes of length `len` that are more specifics of
/// another announced prefix, as measured in the 2014 RouteViews table.
pub fn nested_per_mille(len: u8) -> u32 {
    match len {
        0..=8 => 0,
        9..=11 => 60,
        12 => 90,
        13 => 160,
        14 => 110,
        15 => 200,
        16 => 240,
        17 => 410,
        18 => 420,
        19 => 430,
        20 => 480,
        21 => 470,
        22 => 540,
        23 => 580,
        24 => 550,
        _ => 980,
    }
}

/// Per mille of more specifics that keep their cover's origin (2014 table:
/// 74-94% up to /23, 70% for /24, 56-95% beyond).
fn same_origin_per_mille(len: u8) -> u32 {
    match len {
        0..=23 => 800,
        24 => 700,
        _ => 600,
    }
}

/// The shortest run of a "swamp" block of /24s of mixed origins.
const SWAMP_MIN_RUN: usize = 64;

/// Per mille of standalone runs followed by an unannounced block of their
/// size (scatters the 28% of unannounced space through the allocations).
const GAP_PER_MILLE: u32 = 150;

/// Generates a table; route values are ASN-like numbers interned with
/// `mapping`.
pub fn generate_with_mapping(params: &SynthParams, mapping: Mapping) -> RouteTable {
    let mut generator = Generator::new(params);
    let routes = generator.run();
    let mut table = RouteTable::new(synthetic_name(params), mapping);
    // Each origin is interned once, at its first route in address order.
    let mut hops: Vec<Option<NextHop>> = vec![None; generator.origins.asns.len()];
    for route in routes {
        let hop = *hops[route.origin as usize].get_or_insert_with(|| {
            table.next_hops.intern(Label::Number(u64::from(generator.origins.asns[route.origin as usize])))
        });
        table.v4.insert(Prefix4::truncating(route.addr, route.len), hop);
    }
    table
}

/// SplitMix64 (Steele, Lea, Flood 2014): small, fast, and fully specified.
#[derive(Clone, Debug)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..bound` (`bound > 0`), by multiply-shift.
    fn below(&mut self, bound: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
    }

    fn chance(&mut self, per_mille: u32) -> bool {
        self.below(1000) < u64::from(per_mille)
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for index in (1..items.len()).rev() {
            let other = self.below(index as u64 + 1) as usize;
            items.swap(index, other);
        }
    }
}

/// One generated route.
#[derive(Clone, Copy, Debug)]
struct Route {
    addr: u32,
    len: u8,
    origin: u32,
}

/// Ranges never announced: RFC 6890 special-purpose space and 224/3.
const RESERVED: [(u32, u32); 14] = [
    (0x0000_0000, 0x00ff_ffff), // 0.0.0.0/8
    (0x0a00_0000, 0x0aff_ffff), // 10.0.0.0/8
    (0x6440_0000, 0x647f_ffff), // 100.64.0.0/10
    (0x7f00_0000, 0x7fff_ffff), // 127.0.0.0/8
    (0xa9fe_0000, 0xa9fe_ffff), // 169.254.0.0/16
    (0xac10_0000, 0xac1f_ffff), // 172.16.0.0/12
    (0xc000_0000, 0xc000_00ff), // 192.0.0.0/24
    (0xc000_0200, 0xc000_02ff), // 192.0.2.0/24
    (0xc058_6300, 0xc058_63ff), // 192.88.99.0/24
    (0xc0a8_0000, 0xc0a8_ffff), // 192.168.0.0/16
    (0xc612_0000, 0xc613_ffff), // 198.18.0.0/15
    (0xc633_6400, 0xc633_64ff), // 198.51.100.0/24
    (0xcb00_7100, 0xcb00_71ff), // 203.0.113.0/24
    (0xe000_0000, 0xffff_ffff), // 224.0.0.0/3: multicast and class E
];

/// The announceable space as aligned blocks of /8 or longer.
fn address_pool() -> Vec<Prefix4> {
    let mut blocks = Vec::new();
    let mut next_free = 0u32;
    for &(first, last) in &RESERVED {
        if first > next_free {
            blocks.extend(range_to_prefixes(next_free, first - 1));
        }
        next_free = last.wrapping_add(1);
    }
    let mut pool = Vec::new();
    for block in blocks {
        if block.prefix_len() >= 8 {
            pool.push(block);
        } else {
            let eights = 1u32 << (8 - block.prefix_len());
            pool.extend((0..eights).map(|index| Prefix4::truncating(block.addr() + (index << 24), 8)));
        }
    }
    pool
}

/// Buddy allocator of aligned blocks: best fit, most recently freed first.
struct Allocator {
    free: Vec<Vec<u32>>,
}

impl Allocator {
    fn new(pool: &[Prefix4]) -> Self {
        let mut free = vec![Vec::new(); 33];
        for block in pool {
            free[usize::from(block.prefix_len())].push(block.addr());
        }
        Allocator { free }
    }

    fn allocate(&mut self, len: u8) -> Option<u32> {
        for from in (0..=len).rev() {
            if let Some(block) = self.free[usize::from(from)].pop() {
                for split in from..len {
                    self.free[usize::from(split) + 1].push(block | (1u32 << (31 - split)));
                }
                return Some(block);
            }
        }
        None
    }
}

/// The origin ASNs and who has been used.
struct Origins {
    asns: Vec<u32>,
    fresh: usize,
}

impl Origins {
    fn new(count: usize, rng: &mut SplitMix64) -> Self {
        let mut seen = HashSet::with_capacity(count);
        let mut asns = Vec::with_capacity(count);
        let wide_span = (2 * count as u64).max(270_000);
        while asns.len() < count {
            let asn = if rng.chance(550) { 1 + rng.below(64_495) } else { 131_072 + rng.below(wide_span) };
            let asn = asn as u32;
            if asn != 23_456 && seen.insert(asn) {
                asns.push(asn);
            }
        }
        Origins { asns, fresh: 0 }
    }

    fn take_fresh(&mut self) -> Option<u32> {
        (self.fresh < self.asns.len()).then(|| {
            self.fresh += 1;
            (self.fresh - 1) as u32
        })
    }

    /// A used origin, index drawn log-uniformly (offset 32, so the most
    /// popular origin has a fraction of a percent of the picks).
    fn popular(&mut self, rng: &mut SplitMix64) -> u32 {
        if self.fresh == 0 {
            return self.take_fresh().expect("at least one origin");
        }
        const OFFSET: u64 = 32;
        let high = self.fresh as u64 + OFFSET;
        let top_bit = 63 - high.leading_zeros() as u64; // high in [2^top_bit, 2^(top_bit+1))
        loop {
            let bucket = 5 + rng.below(top_bit - 5 + 1);
            let low = 1u64 << bucket;
            let end = (low << 1).min(high);
            if end <= low {
                continue;
            }
            return (low + rng.below(end - low) - OFFSET) as u32;
        }
    }
}

/// Fast hashing of prefix keys for the collision set.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }
    fn write_u64(&mut self, value: u64) {
        let mixed = (self.0 ^ value).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = mixed ^ (mixed >> 29);
    }
}

type KeySet = HashSet<u64, BuildHasherDefault<KeyHasher>>;

fn key(addr: u32, len: u8) -> u64 {
    (u64::from(addr) << 6) | u64::from(len)
}

struct Generator {
    rng: SplitMix64,
    counts: [usize; 33],
    origins: Origins,
    allocator: Allocator,
    /// Routes placed so far, by prefix length.
    placed: Vec<Vec<Route>>,
}

impl Generator {
    fn new(params: &SynthParams) -> Self {
        let mut rng = SplitMix64(params.seed);
        let origin_count = (params.next_hops.max(1) as usize).min(params.prefixes.max(1));
        let origins = Origins::new(origin_count, &mut rng);
        let mut pool = address_pool();
        rng.shuffle(&mut pool);
        Generator {
            rng,
            counts: target_counts(params.prefixes),
            origins,
            allocator: Allocator::new(&pool),
            placed: vec![Vec::new(); 33],
        }
    }

    /// How many adjacent prefixes of length `len` one announcement run has.
    fn run_length(&mut self, len: u8) -> usize {
        match len {
            0..=15 => 1,
            16..=20 => {
                if self.rng.chance(700) {
                    1
                } else {
                    2 + self.rng.below(3) as usize
                }
            }
            21..=24 => match self.rng.below(100) {
                0..=44 => 1,
                45..=69 => 2,
                70..=84 => 4,
                85..=94 => 8,
                _ => 16,
            },
            _ => 1 + self.rng.below(2) as usize,
        }
    }

    fn run(&mut self) -> Vec<Route> {
        // Split each length's count into standalone runs and more specifics.
        let mut nested = [0usize; 33];
        let mut jobs: Vec<(u8, usize)> = Vec::new();
        for len in 8..=32u8 {
            let count = self.counts[usize::from(len)];
            let inner = count * nested_per_mille(len) as usize / 1000;
            nested[usize::from(len)] = inner;
            let mut standalone = count - inner;
            while standalone > 0 {
                // One /24 run in a hundred is a "swamp" block: up to a whole
                // /16 of /24s, many of them of different origins (legacy
                // class C space, address leasing).
                let run = if len == 24 && self.rng.chance(10) {
                    SWAMP_MIN_RUN + self.rng.below(257 - SWAMP_MIN_RUN as u64) as usize
                } else {
                    self.run_length(len)
                };
                let run = run.min(standalone);
                jobs.push((len, run));
                standalone -= run;
            }
        }
        let short = jobs.iter().filter(|&&(len, _)| len <= 12).count();
        let (big, rest) = jobs.split_at_mut(short);
        self.rng.shuffle(big);
        self.rng.shuffle(rest);

        let total_jobs = jobs.len().max(1);
        let origin_total = self.origins.asns.len();
        let mut previous_origin = None;
        for (index, &(len, run)) in jobs.iter().enumerate() {
            let due = self.origins.fresh * total_jobs < (index + 1) * origin_total;
            let origin = match (due, previous_origin) {
                (true, _) => self.origins.take_fresh(),
                (false, Some(previous)) if self.rng.chance(350) => Some(previous),
                _ => None,
            };
            let origin = origin.unwrap_or_else(|| self.origins.popular(&mut self.rng));
            previous_origin = Some(origin);
            let mut origin = origin;
            for index in 0..run {
                if run >= SWAMP_MIN_RUN && index > 0 && self.rng.chance(500) {
                    origin = self.origins.popular(&mut self.rng);
                }
                match self.allocator.allocate(len) {
                    Some(addr) => self.placed[usize::from(len)].push(Route { addr, len, origin }),
                    None => nested[usize::from(len)] += 1,
                }
            }
            if self.rng.chance(GAP_PER_MILLE) {
                self.allocator.allocate(len);
            }
        }

        self.place_more_specifics(nested);
        let mut routes: Vec<Route> = self.placed.iter().flatten().copied().collect();
        routes.sort_unstable_by_key(|route| (route.addr, route.len));
        routes
    }

    /// Places `nested[len]` more specifics of each length inside shorter
    /// routes; what cannot be placed is allocated standalone, and what the
    /// address space cannot hold moves on to the next length.
    fn place_more_specifics(&mut self, mut nested: [usize; 33]) {
        let mut taken = KeySet::default();
        for len in 9..=32u8 {
            let mut need = nested[usize::from(len)];
            let mut failures = 0;
            while need > 0 && failures < 256 {
                let Some(cover) = self.pick_cover(len) else { break };
                let slots = 1u64 << (len - cover.len);
                let start = self.rng.below(slots);
                let run = self.run_length(len).min(need);
                let origin = if self.rng.chance(same_origin_per_mille(len)) {
                    cover.origin
                } else if self.rng.chance(300) {
                    self.origins.take_fresh().unwrap_or_else(|| self.origins.popular(&mut self.rng))
                } else {
                    self.origins.popular(&mut self.rng)
                };
                let mut placed = 0;
                for slot in start..(start + run as u64).min(slots) {
                    let addr = cover.addr | ((slot as u32) << (32 - u32::from(len)));
                    if !taken.insert(key(addr, len)) {
                        break;
                    }
                    self.placed[usize::from(len)].push(Route { addr, len, origin });
                    placed += 1;
                }
                need -= placed;
                failures = if placed == 0 { failures + 1 } else { 0 };
            }
            while need > 0 {
                let Some(addr) = self.allocator.allocate(len) else { break };
                let origin = self.origins.popular(&mut self.rng);
                self.placed[usize::from(len)].push(Route { addr, len, origin });
                need -= 1;
            }
            if len < 32 {
                nested[usize::from(len) + 1] += need;
            }
        }
    }

    /// A route 1..8 (one time in seven 9..16) bits shorter than `len` to
    /// nest a more specific in.
    fn pick_cover(&mut self, len: u8) -> Option<Route> {
        for _ in 0..8 {
            let distance = if self.rng.chance(860) { 1 + self.rng.below(8) } else { 9 + self.rng.below(8) } as u8;
            let Some(cover_len) = len.checked_sub(distance) else { continue };
            let candidates = &self.placed[usize::from(cover_len)];
            if !candidates.is_empty() {
                return Some(candidates[self.rng.below(candidates.len() as u64) as usize]);
            }
        }
        // Fall back to any shorter route, weighted by count.
        let total: usize = self.placed[..usize::from(len)].iter().map(Vec::len).sum();
        if total == 0 {
            return None;
        }
        let mut pick = self.rng.below(total as u64) as usize;
        for candidates in &self.placed[..usize::from(len)] {
            if pick < candidates.len() {
                return Some(candidates[pick]);
            }
            pick -= candidates.len();
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::Prefix4;
    use crate::NO_ROUTE;

    fn small(seed: u64, prefixes: usize) -> RouteTable {
        generate(&SynthParams { seed, prefixes, next_hops: 5_000 })
    }

    fn routes(table: &RouteTable) -> Vec<(Prefix4, String)> {
        table.v4.iter().map(|(prefix, hop)| (prefix, table.next_hops.describe(hop))).collect()
    }

    fn histogram(table: &RouteTable) -> [usize; 33] {
        let mut counts = [0; 33];
        for (prefix, _) in table.v4.iter() {
            counts[usize::from(prefix.prefix_len())] += 1;
        }
        counts
    }

    #[test]
    fn counts_follow_the_histogram_and_add_up() {
        let million = target_counts(1_000_000);
        for &(len, per_million) in &HISTOGRAM_PER_MILLION {
            assert_eq!(million[usize::from(len)], per_million as usize);
        }
        for prefixes in [0, 1, 7, 999, 123_457, 3_000_000] {
            assert_eq!(target_counts(prefixes).iter().sum::<usize>(), prefixes);
        }
        assert_eq!(target_counts(1)[24], 1);
        let average: f64 =
            HISTOGRAM_PER_MILLION.iter().map(|&(len, count)| f64::from(len) * f64::from(count)).sum::<f64>() / 1e6;
        assert!((22.85..22.95).contains(&average), "{average}");
    }

    #[test]
    fn same_seed_same_table_other_seed_other_table() {
        let first = small(7, 20_000);
        assert_eq!(routes(&first), routes(&small(7, 20_000)));
        let other = small(8, 20_000);
        assert_ne!(routes(&first), routes(&other));
        assert_eq!(first.v4.len(), 20_000);
        assert_eq!(other.v4.len(), 20_000);
        assert_eq!(first.name, "synthetic(seed=7, prefixes=20000, next_hops=5000)");
    }

    #[test]
    fn histogram_is_met_and_a_sixty_percent_are_slash_24() {
        let table = small(DEFAULT_SEED, 200_000);
        assert_eq!(histogram(&table), target_counts(200_000));
        let share = histogram(&table)[24] as f64 / table.v4.len() as f64;
        assert!((0.59..0.61).contains(&share), "{share}");
        assert!(histogram(&table)[25..].iter().sum::<usize>() >= 600);
    }

    #[test]
    fn prefixes_nest_and_neighbours_share_origins() {
        let table = small(3, 200_000);
        // Walk in address order with a stack of enclosing routes.
        let mut enclosing: Vec<Prefix4> = Vec::new();
        let mut nested = 0usize;
        let mut deepest = 0usize;
        for (prefix, _) in table.v4.iter() {
            while enclosing.last().is_some_and(|cover| !cover.covers(&prefix)) {
                enclosing.pop();
            }
            nested += usize::from(!enclosing.is_empty());
            enclosing.push(prefix);
            deepest = deepest.max(enclosing.len());
        }
        let nested_share = nested as f64 / table.v4.len() as f64;
        assert!((0.45..0.65).contains(&nested_share), "{nested_share}");
        assert!(deepest >= 3, "nesting depth {deepest}");
        // Adjacent /24s (consecutive in address space) mostly share an origin.
        let slash24: Vec<(u32, NextHop)> =
            table.v4.iter().filter(|(prefix, _)| prefix.prefix_len() == 24).map(|(p, hop)| (p.addr(), hop)).collect();
        let adjacent: Vec<bool> =
            slash24.windows(2).filter(|pair| pair[1].0 == pair[0].0 + 256).map(|pair| pair[0].1 == pair[1].1).collect();
        let same = adjacent.iter().filter(|&&same| same).count() as f64 / adjacent.len() as f64;
        assert!(adjacent.len() > 20_000 && same > 0.5, "{} adjacent, {same} same", adjacent.len());
    }

    #[test]
    fn reserved_space_stays_unrouted() {
        let table = small(11, 200_000);
        for addr in ["10.1.2.3", "127.0.0.1", "192.168.1.1", "172.20.0.1", "100.64.0.1", "224.0.0.1", "240.1.1.1"] {
            let key = u32::from(addr.parse::<std::net::Ipv4Addr>().unwrap());
            assert_eq!(table.v4.lookup(key), NO_ROUTE, "{addr}");
        }
    }

    #[test]
    fn next_hop_count_and_mapping_apply() {
        let table = generate(&SynthParams { seed: 1, prefixes: 50_000, next_hops: 777 });
        assert_eq!(table.next_hops.len(), 777);
        for (_, hop) in table.v4.iter() {
            let asn: u64 = table.next_hops.describe(hop).parse().unwrap();
            assert!((1..=64_495).contains(&asn) || asn >= 131_072, "{asn}");
        }
        let mapped =
            generate_with_mapping(&SynthParams { seed: 1, prefixes: 50_000, next_hops: 777 }, Mapping::Modulo(13));
        assert_eq!(mapped.next_hops.max_index(), 13);
        assert!(mapped.v4.iter().all(|(_, hop)| (1..=13).contains(&hop)));
        assert_eq!(mapped.v4.len(), 50_000);
    }

    #[test]
    fn tiny_and_degenerate_parameters_work() {
        assert!(generate(&SynthParams { seed: 0, prefixes: 0, next_hops: 0 }).v4.is_empty());
        let one = generate(&SynthParams { seed: 0, prefixes: 1, next_hops: 0 });
        assert_eq!(one.v4.len(), 1);
        assert_eq!(one.next_hops.len(), 1);
        let dense = generate(&SynthParams { seed: 5, prefixes: 3_000, next_hops: u32::MAX });
        assert_eq!(dense.v4.len(), 3_000);
    }

    #[test]
    fn the_pool_excludes_reserved_space() {
        let pool = address_pool();
        let size: u64 = pool.iter().map(|block| 1u64 << (32 - block.prefix_len())).sum();
        // 224 /8s below 224/3, minus 0/8, 10/8, 127/8 and the smaller holes.
        assert!(size < 221 << 24 && size > 219 << 24, "{size}");
        assert!(pool.iter().all(|block| block.prefix_len() >= 8));
        assert!(!pool.iter().any(|block| block.contains(0x0a00_0001) || block.contains(0xc0a8_0101)));
    }
}
