//! Addresses as logs write them: one parser for IPv4 and IPv6 text, fast
//! enough to sit in front of a batch lookup (`fibkit lookup`, the Python
//! string-array path).
//!
//! [`parse_address`] takes the bytes of one field and returns an
//! [`AnyAddr`]:
//!
//! | input                          | result                      |
//! |--------------------------------|-----------------------------|
//! | `192.0.2.1`                    | `V4(0xc000_0201)`           |
//! | `2001:db8::1`                  | `V6(...)`                   |
//! | `::ffff:192.0.2.1` (IPv4-mapped, as dual-stack sockets log IPv4 peers) | `V4(0xc000_0201)` |
//! | ` 192.0.2.1\r` (spaces, tabs, CR around it) | `V4(0xc000_0201)` |
//! | `192.000.2.1`, `010.0.0.1`     | [`AddressError::LeadingZero`]: octal to `inet_aton`, decimal to others, so refused as Python's `ipaddress` refuses it |
//! | `256.0.0.1`, `1.2.3`, `1.2.3.4.5`, `10.0.0.0/8`, `x` | [`AddressError::Malformed`] |
//! | empty or blank                 | [`AddressError::Empty`]     |
//!
//! Dotted quads are parsed by hand from one 16-byte load (SSE2 on x86-64:
//! the bytes classified at once, the octets read with no branch on their
//! lengths); IPv6 goes through the standard library's parser.

use std::fmt;
use std::net::Ipv6Addr;
use std::ops::Range;

use crate::addr::{Address, Family, Prefix};
use crate::NextHop;

/// An address of either family, as parsed from text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AnyAddr {
    /// An IPv4 address (IPv4-mapped IPv6 addresses included).
    V4(u32),
    /// An IPv6 address.
    V6(u128),
}

/// Why a field is not an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    /// Nothing but white space.
    #[error("no address (empty field)")]
    Empty,
    /// A dotted quad with an octet such as `010`, which `inet_aton` reads as
    /// octal and most other parsers as decimal.
    #[error("an octet has a leading zero (octal or decimal?)")]
    LeadingZero,
    /// Neither a dotted quad nor IPv6 text.
    #[error("not an IPv4 or IPv6 address")]
    Malformed,
}

/// Parses one address field (see the module docs for what is accepted).
///
/// # Errors
/// [`AddressError`] says why the field is not an address.
#[inline]
pub fn parse_address(field: &[u8]) -> Result<AnyAddr, AddressError> {
    parse_address_in(field, 0..field.len())
}

/// Parses the field `bytes[field]`: [`parse_address`], faster when 16
/// bytes of `bytes` follow the field's start (a field inside a block of
/// lines): then a dotted quad is read with one 16-byte load.
///
/// # Errors
/// As [`parse_address`].
///
/// # Panics
/// If `field` is not a range of `bytes`.
#[inline(always)]
pub fn parse_address_in(bytes: &[u8], field: Range<usize>) -> Result<AnyAddr, AddressError> {
    let raw = &bytes[field.clone()];
    let lead = raw.len() - raw.trim_ascii_start().len();
    let text = raw[lead..].trim_ascii_end();
    if text.is_empty() {
        return Err(AddressError::Empty);
    }
    if text.len() < WINDOW {
        let start = field.start + lead;
        let window: [u8; WINDOW] = match bytes.get(start..start + WINDOW) {
            Some(window) => window.try_into().unwrap_or_default(),
            None => {
                let mut window = [0; WINDOW];
                window[..text.len()].copy_from_slice(text);
                window
            }
        };
        if let Some(result) = ipv4_in_window(&window, text.len()) {
            return result.map(AnyAddr::V4);
        }
    }
    parse_ipv6(text)
}

/// The bytes a dotted quad is read from at once (it has at most 15).
const WINDOW: usize = 16;

/// The dotted quad in `window[..len]` (`len < 16`): `None` if a byte other
/// than a digit or a dot is among them (the field may be IPv6), else the
/// address or why it is not one.
///
/// The dots give the octets' lengths; their combination gives where each
/// octet's hundreds, tens and ones stand, so that the octets are read with
/// no branch on their lengths ([`octets_ssse3`]).
#[inline(always)]
fn ipv4_in_window(window: &[u8; WINDOW], len: usize) -> Option<Result<u32, AddressError>> {
    debug_assert!(len < WINDOW);
    let region = (1u32 << len) - 1;
    let (digit_mask, dot_mask, values) = classify(window);
    if (digit_mask | dot_mask) & region != region {
        return None;
    }
    let dots = dot_mask & region;
    if dots.count_ones() != 3 {
        return Some(Err(AddressError::Malformed));
    }
    let after_first = dots & (dots - 1);
    let after_second = after_first & (after_first - 1);
    let [first, second, third] = [dots, after_first, after_second].map(|mask| mask.trailing_zeros() as usize);
    let lengths = [first, second - first - 1, third - second - 1, len - third - 1];
    if lengths.iter().any(|&digits| !(1..=3).contains(&digits)) {
        return Some(Err(AddressError::Malformed));
    }
    let combination = lengths.iter().fold(0, |index, &digits| index * 3 + digits - 1);
    #[cfg(target_arch = "x86_64")]
    let (addr, too_big, leading_zero) = if std::arch::is_x86_feature_detected!("ssse3") {
        // SAFETY: the CPU has SSSE3 (checked).
        unsafe { octets_ssse3(window, combination) }
    } else {
        octets(&values, combination)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let (addr, too_big, leading_zero) = octets(&values, combination);
    Some(match (too_big, leading_zero) {
        (true, _) => Err(AddressError::Malformed),
        (false, true) => Err(AddressError::LeadingZero),
        (false, false) => Ok(addr),
    })
}

/// The octets' lengths (1 to 3 digits each) in one of 81 combinations,
/// numbered in base 3 (first octet most significant); for each, where an
/// octet's places stand in the window.
struct Combination {
    /// Window index of each octet's hundreds, tens and ones, and 0x80 (no
    /// digit) for a place before its first digit and for a fourth, empty
    /// place: the `pshufb` pattern that sets each octet in a 32-bit lane.
    places: [u8; WINDOW],
    /// The least value each octet may have without a leading zero (0, 10
    /// or 100).
    minimums: [i32; 4],
}

/// Every [`Combination`].
static COMBINATIONS: [Combination; 81] = combinations();

const fn combinations() -> [Combination; 81] {
    let mut all = [const { Combination { places: [0x80; WINDOW], minimums: [0; 4] } }; 81];
    let mut index = 0;
    while index < 81 {
        let mut start = 0;
        let mut octet = 0;
        while octet < 4 {
            let digits = (index / [27, 9, 3, 1][octet]) % 3 + 1;
            let end = start + digits;
            let mut place = 0;
            while place < digits {
                all[index].places[4 * octet + 2 - place] = (end - 1 - place) as u8;
                place += 1;
            }
            all[index].minimums[octet] = [0, 10, 100][digits - 1];
            start = end + 1;
            octet += 1;
        }
        index += 1;
    }
    all
}

/// The address, whether an octet is above 255, and whether one has a
/// leading zero, from the digit values of the window.
fn octets(values: &[u8; WINDOW], combination: usize) -> (u32, bool, bool) {
    let combination = &COMBINATIONS[combination];
    let (mut addr, mut too_big, mut leading_zero) = (0u32, false, false);
    for octet in 0..4 {
        let place = |index: usize| match combination.places[4 * octet + index] {
            0x80 => 0,
            at => u32::from(values[usize::from(at) % WINDOW]),
        };
        let value = 100 * place(0) + 10 * place(1) + place(2);
        too_big |= value > 255;
        leading_zero |= (value as i32) < combination.minimums[octet];
        addr = addr << 8 | (value & 255);
    }
    (addr, too_big, leading_zero)
}

/// [`octets`] in six SSSE3 instructions and two table loads: the digits
/// shuffled into one 32-bit lane per octet, weighted 100, 10, 1 and summed
/// (`pmaddubsw`, `pmaddwd`), compared with 255 and the minimums, packed.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
#[inline]
fn octets_ssse3(window: &[u8; WINDOW], combination: usize) -> (u32, bool, bool) {
    use std::arch::x86_64::{
        _mm_cmpgt_epi32, _mm_cvtsi128_si32, _mm_loadu_si128, _mm_madd_epi16, _mm_maddubs_epi16, _mm_movemask_epi8,
        _mm_set1_epi16, _mm_set1_epi32, _mm_set1_epi8, _mm_setr_epi8, _mm_shuffle_epi8, _mm_sub_epi8,
    };
    let combination = &COMBINATIONS[combination];
    // SAFETY: the loads read the 16 bytes of `window` and of the
    // combination's two arrays, unaligned.
    unsafe {
        let digits = _mm_sub_epi8(_mm_loadu_si128(window.as_ptr().cast()), _mm_set1_epi8(b'0' as i8));
        let placed = _mm_shuffle_epi8(digits, _mm_loadu_si128(combination.places.as_ptr().cast()));
        let weights = _mm_setr_epi8(100, 10, 1, 0, 100, 10, 1, 0, 100, 10, 1, 0, 100, 10, 1, 0);
        let values = _mm_madd_epi16(_mm_maddubs_epi16(placed, weights), _mm_set1_epi16(1));
        let too_big = _mm_movemask_epi8(_mm_cmpgt_epi32(values, _mm_set1_epi32(255))) != 0;
        let minimums = _mm_loadu_si128(combination.minimums.as_ptr().cast());
        let leading_zero = _mm_movemask_epi8(_mm_cmpgt_epi32(minimums, values)) != 0;
        let order = _mm_setr_epi8(12, 8, 4, 0, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
        (_mm_cvtsi128_si32(_mm_shuffle_epi8(values, order)) as u32, too_big, leading_zero)
    }
}

/// Bit masks of the window's digits and dots (bit i: byte i), and every
/// byte minus `'0'` (a digit's value).
#[inline]
fn classify(window: &[u8; WINDOW]) -> (u32, u32, [u8; WINDOW]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_set1_epi8, _mm_storeu_si128,
            _mm_sub_epi8,
        };
        let mut values = [0u8; WINDOW];
        // SAFETY: SSE2 is part of x86-64; the load reads the 16 bytes of
        // `window` and the store writes the 16 of `values`, unaligned.
        unsafe {
            let bytes = _mm_loadu_si128(window.as_ptr().cast());
            let digits = _mm_sub_epi8(bytes, _mm_set1_epi8(b'0' as i8));
            _mm_storeu_si128(values.as_mut_ptr().cast(), digits);
            let is_digit = _mm_cmpeq_epi8(_mm_min_epu8(digits, _mm_set1_epi8(9)), digits);
            let is_dot = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'.' as i8));
            (_mm_movemask_epi8(is_digit) as u32 & 0xffff, _mm_movemask_epi8(is_dot) as u32 & 0xffff, values)
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut masks = (0, 0, [0; WINDOW]);
        for (index, &byte) in window.iter().enumerate() {
            masks.0 |= u32::from(byte.is_ascii_digit()) << index;
            masks.1 |= u32::from(byte == b'.') << index;
            masks.2[index] = byte.wrapping_sub(b'0');
        }
        masks
    }
}

/// IPv6 text; an IPv4-mapped address (`::ffff:a.b.c.d`) is its IPv4 address.
#[cold]
fn parse_ipv6(field: &[u8]) -> Result<AnyAddr, AddressError> {
    let text = std::str::from_utf8(field).map_err(|_| AddressError::Malformed)?;
    let addr: Ipv6Addr = text.parse().map_err(|_| AddressError::Malformed)?;
    Ok(match ipv4_mapped(addr.into()) {
        Some(v4) => AnyAddr::V4(v4),
        None => AnyAddr::V6(addr.into()),
    })
}

/// The IPv4 address that the IPv4-mapped IPv6 address `addr`
/// (`::ffff:a.b.c.d`) maps, or `None` for another IPv6 address. The rule
/// every lookup shares (text, `fibkit lookup`, Python and C): a mapped
/// address is looked up as IPv4, among the IPv4 routes, and a table's IPv6
/// routes inside `::ffff:0:0/96` are IPv4 routes
/// ([`crate::load::fold_ipv4_mapped`]).
#[inline]
pub fn ipv4_mapped(addr: u128) -> Option<u32> {
    (addr >> 32 == 0xffff).then_some(addr as u32)
}

/// Looks each IPv4-mapped key among `keys` up again, as IPv4, through
/// `lookup4`, once a lookup of them all as IPv6 has written `next_hops`:
/// [`ipv4_mapped`]'s rule for a batch.
pub fn answer_mapped_as_ipv4<K: Copy + Into<u128>>(
    keys: &[K],
    next_hops: &mut [NextHop],
    mut lookup4: impl FnMut(u32) -> NextHop,
) {
    for (&key, next_hop) in keys.iter().zip(next_hops) {
        if let Some(addr) = ipv4_mapped(key.into()) {
            *next_hop = lookup4(addr);
        }
    }
}

/// The IPv4 prefix that an IPv6 prefix inside `::ffff:0:0/96` (of length
/// 96 or more) is written for (`::ffff:1.2.3.0/120`: `1.2.3.0/24`), or
/// `None` for any other prefix, an IPv4 one included.
pub fn ipv4_mapped_prefix<A: Address>(prefix: Prefix<A>) -> Option<Prefix<u32>> {
    if A::FAMILY != Family::Ipv6 || prefix.prefix_len() < 96 {
        return None;
    }
    let addr = ipv4_mapped(prefix.addr().to_u128())?;
    Some(Prefix::truncating(addr, prefix.prefix_len() - 96))
}

impl fmt::Display for AnyAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            AnyAddr::V4(addr) => fmt::Display::fmt(&std::net::Ipv4Addr::from(addr), f),
            AnyAddr::V6(addr) => fmt::Display::fmt(&Ipv6Addr::from(addr), f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::XorShift32;

    #[test]
    fn dotted_quads_and_ipv6_text_parse_with_white_space_around() {
        assert_eq!(parse_address(b"192.0.2.1"), Ok(AnyAddr::V4(0xc000_0201)));
        assert_eq!(parse_address(b" \t0.0.0.0\r"), Ok(AnyAddr::V4(0)));
        assert_eq!(parse_address(b"255.255.255.255"), Ok(AnyAddr::V4(u32::MAX)));
        assert_eq!(parse_address(b"2001:db8::1"), Ok(AnyAddr::V6(0x2001_0db8 << 96 | 1)));
        assert_eq!(parse_address(b"::"), Ok(AnyAddr::V6(0)));
        assert_eq!(parse_address(b" ::ffff:192.0.2.1 "), Ok(AnyAddr::V4(0xc000_0201)));
        assert_eq!(parse_address(b"::192.0.2.1"), Ok(AnyAddr::V6(0xc000_0201)));
        assert_eq!(parse_address(b"0.10.100.200"), Ok(AnyAddr::V4(0x000a_64c8)));
    }

    #[test]
    fn everything_else_is_refused_with_its_reason() {
        for blank in [&b""[..], b"  ", b"\r", b"\t \r"] {
            assert_eq!(parse_address(blank), Err(AddressError::Empty));
        }
        for zero in [&b"010.0.0.1"[..], b"1.2.3.04", b"192.000.2.1"] {
            assert_eq!(parse_address(zero), Err(AddressError::LeadingZero), "{:?}", String::from_utf8_lossy(zero));
        }
        let malformed = [
            &b"256.0.0.1"[..],
            b"1.2.3",
            b"1.2.3.4.5",
            b"1..2.3",
            b".1.2.3",
            b"1.2.3.",
            b"1.2.3.4/24",
            b"1.2.3.1000",
            b"1.2.3.4 5",
            b"x",
            b"2001:db8::g",
            b"1:2:3:4:5:6:7:8:9",
            b"\xff\xfe",
            b"::ffff:1.2.3.256",
        ];
        for text in malformed {
            assert_eq!(parse_address(text), Err(AddressError::Malformed), "{:?}", String::from_utf8_lossy(text));
        }
    }

    #[test]
    fn digits_and_dots_in_any_order_read_as_the_standard_parser_reads_them() {
        let mut random = XorShift32::new(11);
        for _ in 0..300_000 {
            let len = 1 + random.next() as usize % 15;
            let mut character = || match random.next() % 40 {
                digit @ 0..=9 => char::from(b'0' + digit as u8),
                _ if random.next().is_multiple_of(3) => '.',
                other => char::from(b'0' + (other % 10) as u8),
            };
            let text: String = (0..len).map(|_| character()).collect();
            let standard = text.parse::<std::net::Ipv4Addr>().ok().map(|addr| AnyAddr::V4(addr.into()));
            // In a block (the 16-byte load) and alone (the copy).
            let block = format!("{text}\n0123456789abcdef");
            for parsed in [parse_address_in(block.as_bytes(), 0..len), parse_address(text.as_bytes())] {
                assert_eq!(parsed.ok(), standard, "{text}");
            }
        }
    }

    #[test]
    fn both_octet_readers_agree_on_every_combination() {
        let mut random = XorShift32::new(3);
        for (combination, places) in COMBINATIONS.iter().enumerate() {
            for _ in 0..2000 {
                let mut window = [0u8; WINDOW];
                for (index, byte) in window.iter_mut().enumerate() {
                    let digit = places.places.contains(&(index as u8));
                    *byte = if digit { b'0' + (random.next() % 10) as u8 } else { b'.' };
                }
                let values = window.map(|byte| byte.wrapping_sub(b'0'));
                let scalar = octets(&values, combination);
                let text = String::from_utf8_lossy(&window);
                let text = text.split('.').filter(|part| !part.is_empty()).collect::<Vec<_>>().join(".");
                let standard = text.parse::<std::net::Ipv4Addr>().ok().map(u32::from);
                assert_eq!((!scalar.1 && !scalar.2).then_some(scalar.0), standard, "{text}");
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("ssse3") {
                    // SAFETY: the CPU has SSSE3 (checked).
                    assert_eq!(unsafe { octets_ssse3(&window, combination) }, scalar, "{text}");
                }
            }
        }
    }

    #[test]
    fn the_fast_path_agrees_with_the_standard_parser() {
        let mut random = XorShift32::new(7);
        for _ in 0..100_000 {
            let addr = random.next() >> (random.next() % 32);
            let text = std::net::Ipv4Addr::from(addr).to_string();
            assert_eq!(parse_address(text.as_bytes()), Ok(AnyAddr::V4(addr)), "{text}");
            assert_eq!(AnyAddr::V4(addr).to_string(), text);
        }
    }
}
