//! One block of input lines, answered: the fields parsed, every address of
//! the block looked up in one batch per family, and the output lines
//! written in input order. Blocks are independent, so the threads of
//! `fibkit lookup` answer them in parallel.
//!
//! ```text
//!  block (complete lines) --parse--> keys4 | keys6 + one Row per line
//!                         --lookup_batch per family--> answers4 | answers6
//!                         --format each Row in order--> output bytes
//! ```

use std::ops::Range;

use fibkit::compiled::{CompiledFamily, CompiledTable};
use fibkit::load::{parse_address_in, AnyAddr};
use fibkit::{Address, NO_ROUTE};

use super::fields::{field_at, Layout};
use super::output::{Format, Style, Values, Writer};

/// What answers a block needs besides the block.
pub struct Context<'a> {
    pub table: &'a CompiledTable,
    pub values: &'a Values,
    pub layout: Layout,
    pub format: Format,
    /// Whether to write the matched prefix and its length.
    pub prefix: bool,
    /// Whether to write every covering route (`--all-matches`).
    pub all_matches: bool,
}

impl<'a> Context<'a> {
    /// How the answers are written (every route with its prefix, with
    /// `--all-matches`).
    pub fn style(&self) -> Style<'a> {
        let prefix = self.prefix || self.all_matches;
        Style { values: self.values, layout: self.layout, format: self.format, prefix }
    }
}

/// A line that holds no address, and why.
#[derive(Debug)]
pub struct Problem {
    /// Its line number in the source (1-based).
    pub line: u64,
    /// The line as it stands.
    pub text: String,
    /// Why it is not an address.
    pub reason: String,
}

/// A block answered.
#[derive(Debug, Default)]
pub struct Answered {
    /// The output lines.
    pub output: Vec<u8>,
    /// Lines skipped because they hold no address.
    pub problems: Vec<Problem>,
    /// IPv4 and IPv6 addresses answered.
    pub counts: [u64; 2],
    /// Addresses without a route.
    pub unrouted: u64,
}

/// A line with an address: where the line and the field (white space
/// trimmed) are in the block, and which key it became (`V6_BIT` set: an
/// IPv6 key).
struct Row {
    line: (u32, u32),
    field: (u32, u32),
    key: u32,
}

const V6_BIT: u32 = 1 << 31;

/// Answers the complete lines of `block`, the first being line
/// `first_line` of its source.
pub fn answer(block: &[u8], first_line: u64, context: &Context<'_>) -> Answered {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("ssse3") {
        // SAFETY: the CPU has SSSE3 (checked).
        return unsafe { answer_ssse3(block, first_line, context) };
    }
    answer_lines(block, first_line, context)
}

/// The lines of `block`, without their line breaks (`\n` or `\r\n`).
#[inline(always)]
fn lines(block: &[u8]) -> impl Iterator<Item = Range<usize>> + '_ {
    let breaks = memchr::memchr_iter(b'\n', block).chain((block.last() != Some(&b'\n')).then_some(block.len()));
    let mut start = 0;
    breaks.map(move |end| {
        let line_end = if end > start && block[end - 1] == b'\r' { end - 1 } else { end };
        let line = start..line_end;
        start = end + 1;
        line
    })
}

/// The address of `line` of `block` under `layout`, with where its field
/// stands (white space trimmed), or why the line has none.
#[inline(always)]
fn line_address(block: &[u8], line: Range<usize>, layout: Layout) -> Result<(Range<usize>, AnyAddr), String> {
    let field = match layout {
        Layout::Lines => Ok(trimmed(block, line)),
        Layout::Column { index, delimiter } => field_at(&block[line.clone()], delimiter, index)
            .map(|(from, to)| trimmed(block, line.start + from..line.start + to)),
    };
    field.map_err(|error| error.to_string()).and_then(|field| {
        parse_address_in(block, field.clone()).map(|addr| (field, addr)).map_err(|error| error.to_string())
    })
}

/// The addresses of `block`'s lines under `layout`, the first `limit` of
/// them, by family: a sample of what a source looks up, for `auto` to
/// measure its candidates on. Lines without an address are passed over
/// (answering reports them).
pub fn addresses(block: &[u8], layout: Layout, limit: usize) -> (Vec<u32>, Vec<u128>) {
    let (mut keys4, mut keys6) = (Vec::new(), Vec::new());
    for line in lines(block) {
        if keys4.len() + keys6.len() >= limit {
            break;
        }
        match line_address(block, line, layout) {
            Ok((_, AnyAddr::V4(addr))) => keys4.push(addr),
            Ok((_, AnyAddr::V6(addr))) => keys6.push(addr),
            Err(_) => {}
        }
    }
    (keys4, keys6)
}

/// [`answer_lines`] compiled for SSSE3, so that the address parser's SSSE3
/// octet reader inlines into the loop over the lines.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
fn answer_ssse3(block: &[u8], first_line: u64, context: &Context<'_>) -> Answered {
    answer_lines(block, first_line, context)
}

#[inline(always)]
fn answer_lines(block: &[u8], first_line: u64, context: &Context<'_>) -> Answered {
    let mut answered = Answered { output: Vec::with_capacity(block.len() * 2 + 4096), ..Answered::default() };
    let mut rows = Vec::with_capacity(block.len() / 12);
    let mut keys4 = Vec::with_capacity(block.len() / 12);
    let mut keys6 = Vec::new();
    for (line_number, line) in (first_line..).zip(lines(block)) {
        match line_address(block, line.clone(), context.layout) {
            Ok((field, addr)) => {
                let key = match addr {
                    AnyAddr::V4(addr) => push(&mut keys4, addr),
                    AnyAddr::V6(addr) => push(&mut keys6, addr) | V6_BIT,
                };
                let line = (line.start as u32, line.end as u32);
                rows.push(Row { line, field: (field.start as u32, field.end as u32), key });
            }
            Err(_) if block[line.clone()].trim_ascii().is_empty() => {}
            Err(reason) => {
                let text = String::from_utf8_lossy(&block[line]).into_owned();
                answered.problems.push(Problem { line: line_number, text, reason });
            }
        }
    }
    answered.counts = [keys4.len() as u64, keys6.len() as u64];
    let (v4, v6) = (context.table.family_fib::<u32>(), context.table.family_fib::<u128>());
    let mut writer = Writer { style: context.style(), out: &mut answered.output, unrouted: 0 };
    if context.all_matches {
        for row in &rows {
            let index = (row.key & !V6_BIT) as usize;
            let (line, field) = (row.line.0 as usize..row.line.1 as usize, row.field.0 as usize..row.field.1 as usize);
            if row.key & V6_BIT == 0 {
                writer.covering_rows(block, line, field, v4, keys4[index]);
            } else {
                writer.covering_rows(block, line, field, v6, keys6[index]);
            }
        }
        answered.unrouted = writer.unrouted;
        return answered;
    }
    let answers4 = lookup_all(v4, &keys4);
    let answers6 = lookup_all(v6, &keys6);
    for row in &rows {
        let index = (row.key & !V6_BIT) as usize;
        let (line, field) = (row.line.0 as usize..row.line.1 as usize, row.field.0 as usize..row.field.1 as usize);
        if row.key & V6_BIT == 0 {
            writer.row(block, line, field, v4, answers4[index]);
        } else {
            writer.row(block, line, field, v6, answers6[index]);
        }
    }
    answered.unrouted = writer.unrouted;
    answered
}

/// Appends `key` and returns its index.
fn push<A>(keys: &mut Vec<A>, key: A) -> u32 {
    keys.push(key);
    (keys.len() - 1) as u32
}

/// `field` without the white space around it.
#[inline]
fn trimmed(block: &[u8], field: Range<usize>) -> Range<usize> {
    let text = &block[field.clone()];
    let lead = text.len() - text.trim_ascii_start().len();
    let trail = text.len() - text.trim_ascii_end().len();
    field.start + lead..(field.end - trail).max(field.start + lead)
}

/// The answers for `keys` (all [`NO_ROUTE`] in a family without routes).
fn lookup_all<A: Address>(family: Option<&CompiledFamily<A>>, keys: &[A]) -> Vec<u32> {
    let mut answers = vec![NO_ROUTE; keys.len()];
    if let Some(family) = family {
        family.lookup_batch(keys, &mut answers);
    }
    answers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_is_the_first_addresses_of_either_family() {
        let block = b"10.0.0.1\nnope\n  2001:db8::1\r\n::ffff:10.0.0.2\n\n10.0.0.3";
        let (keys4, keys6) = addresses(block, Layout::Lines, 10);
        assert_eq!((keys4, keys6), (vec![0x0a00_0001, 0x0a00_0002, 0x0a00_0003], vec![0x2001_0db8_u128 << 96 | 1]));
        assert_eq!(addresses(block, Layout::Lines, 2), (vec![0x0a00_0001], vec![0x2001_0db8_u128 << 96 | 1]));
        let rows = b"1,10.0.0.1\n2,bad\n3,10.0.0.9\n";
        assert_eq!(addresses(rows, Layout::Column { index: 1, delimiter: b',' }, 10).0, vec![0x0a00_0001, 0x0a00_0009]);
    }
    use fibkit::compiled::CompileOptions;
    use fibkit::load::RouteTable;
    use fibkit::nexthop::{Label, Mapping};
    use fibkit::random::XorShift32;

    fn table() -> CompiledTable {
        let mut routes = RouteTable::new("t", Mapping::Distinct);
        let hop = routes.next_hops.intern(Label::Number(64500));
        routes.v4.insert("10.0.0.0/8".parse().unwrap(), hop);
        let hop = routes.next_hops.intern(Label::Addr("2001:db8::9".parse().unwrap()));
        routes.v6.insert("2001:db8::/32".parse().unwrap(), hop);
        crate::registered::compile(
            routes,
            &CompileOptions { engines: Vec::new(), prefixes: true, ..Default::default() },
        )
        .unwrap()
    }

    #[test]
    fn every_line_is_answered_skipped_as_blank_or_reported_whatever_its_bytes() {
        let table = table();
        let values = Values::new(&table.values, None).unwrap();
        let alphabet = b"0123456789.:,\"\t \r\nabcdef/\xff";
        let mut random = XorShift32::new(9);
        for round in 0..3000 {
            let len = (random.next() % 200) as usize;
            let block: Vec<u8> = (0..len).map(|_| alphabet[random.next() as usize % alphabet.len()]).collect();
            let layout = match round % 3 {
                0 => Layout::Lines,
                1 => Layout::Column { index: 1, delimiter: b',' },
                _ => Layout::Column { index: 0, delimiter: b'\t' },
            };
            for format in [Format::Text, Format::Csv, Format::Json] {
                let prefix = round % 2 == 0;
                let context =
                    Context { table: &table, values: &values, layout, format, prefix, all_matches: round % 4 == 1 };
                let answered = answer(&block, 1, &context);
                let lines = block.split(|&byte| byte == b'\n').count() - usize::from(block.ends_with(b"\n"));
                let blank = block.split(|&byte| byte == b'\n').take(lines).filter(|line| line.trim_ascii().is_empty());
                let written = answered.output.iter().filter(|&&byte| byte == b'\n').count();
                let shown = String::from_utf8_lossy(&block);
                assert_eq!(written + answered.problems.len() + blank.count(), lines, "{shown:?}");
                assert_eq!(written as u64, answered.counts[0] + answered.counts[1]);
                assert!(answered.problems.iter().all(|problem| (1..=lines as u64).contains(&problem.line)));
            }
        }
    }

    #[test]
    fn values_prefixes_and_json_are_written_as_documented() {
        let table = table();
        let values = Values::new(&table.values, None).unwrap();
        let block = b"10.1.2.3\n 2001:db8::1\r\n11.0.0.0\n";
        let (layout, format) = (Layout::Lines, Format::Json);
        let context = Context { table: &table, values: &values, layout, format, prefix: true, all_matches: false };
        let answered = answer(block, 1, &context);
        let expected = "{\"address\":\"10.1.2.3\",\"value\":64500,\"prefix\":\"10.0.0.0/8\",\"prefix_len\":8}\n\
                        {\"address\":\"2001:db8::1\",\"value\":\"2001:db8::9\",\
                        \"prefix\":\"2001:db8::/32\",\"prefix_len\":32}\n\
                        {\"address\":\"11.0.0.0\",\"value\":null,\"prefix\":null,\"prefix_len\":null}\n";
        assert_eq!(String::from_utf8(answered.output).unwrap(), expected);
        assert_eq!((answered.counts, answered.unrouted), ([2, 1], 1));
        let context = Context { format: Format::Text, ..context };
        let answered = answer(block, 1, &context);
        let expected = "10.1.2.3\t64500\t10.0.0.0/8\n2001:db8::1\t2001:db8::9\t2001:db8::/32\n11.0.0.0\t\t\n";
        assert_eq!(String::from_utf8(answered.output).unwrap(), expected);
    }

    #[test]
    fn all_matches_writes_a_row_per_covering_route_least_specific_first() {
        let mut routes = RouteTable::new("t", Mapping::Distinct);
        for (prefix, asn) in [("10.0.0.0/8", 64500), ("10.1.0.0/16", 64501), ("10.1.2.0/24", 64502)] {
            let hop = routes.next_hops.intern(Label::Number(asn));
            routes.v4.insert(prefix.parse().unwrap(), hop);
        }
        let table = crate::registered::compile(
            routes,
            &CompileOptions { engines: Vec::new(), prefixes: true, ..Default::default() },
        )
        .unwrap();
        let values = Values::new(&table.values, None).unwrap();
        let (layout, format) = (Layout::Column { index: 1, delimiter: b';' }, Format::Csv);
        let context = Context { table: &table, values: &values, layout, format, prefix: false, all_matches: true };
        let answered = answer(b"a;10.1.2.3\nb;10.2.0.1\nc;2001:db8::1\n", 1, &context);
        let expected =
            "a;10.1.2.3;64500;10.0.0.0/8;8\na;10.1.2.3;64501;10.1.0.0/16;16\na;10.1.2.3;64502;10.1.2.0/24;24\n\
                        b;10.2.0.1;64500;10.0.0.0/8;8\nc;2001:db8::1;;;\n";
        assert_eq!(String::from_utf8(answered.output).unwrap(), expected);
        assert_eq!((answered.counts, answered.unrouted), ([2, 1], 1));
    }
}
