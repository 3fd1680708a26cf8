//! Addresses and prefixes for IPv4 (`u32`) and IPv6 (`u128`).
//!
//! Addresses are plain unsigned integers in host byte order, most significant
//! bit first: bit 0 of an address in the sense of [`Address::bit`] is the
//! top bit. A [`Prefix`] is an address with its `prefix_len`; its host bits
//! must be zero (`10.0.0.1/8` is rejected, not silently masked).
//!
//! Everything in fibkit that works on addresses (the RIB, every engine, the
//! router, the benchmarks) is written once over [`Address`]; an engine that
//! serves one family implements [`crate::Fib`] for that address type only.

use std::any::Any;
use std::fmt;
use std::hash::Hash;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::ops::{BitAnd, BitOr, BitXor, Not, Shl, Shr};
use std::str::FromStr;

use super::quote::shorten;

/// An IP address as an unsigned integer: `u32` for IPv4, `u128` for IPv6.
pub trait Address:
    Copy
    + Eq
    + Ord
    + Hash
    + Default
    + fmt::Debug
    + Send
    + Sync
    + 'static
    + crate::mem::Plain
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
    + Shl<u32, Output = Self>
    + Shr<u32, Output = Self>
{
    /// Number of bits in the address (32 or 128).
    const BITS: u8;
    /// The all-zeros address.
    const ZERO: Self;
    /// The all-ones address.
    const MAX: Self;
    /// The address with value one.
    const ONE: Self;
    /// The family of these addresses.
    const FAMILY: Family;

    /// The network mask of a prefix of `prefix_len` bits (`prefix_len <= BITS`).
    #[inline]
    fn mask(prefix_len: u8) -> Self {
        if prefix_len == 0 {
            Self::ZERO
        } else {
            Self::MAX << u32::from(Self::BITS - prefix_len)
        }
    }

    /// Bit `index` counted from the most significant bit (index 0).
    #[inline]
    fn bit(self, index: u8) -> usize {
        debug_assert!(index < Self::BITS);
        usize::from((self >> u32::from(Self::BITS - 1 - index)) & Self::ONE != Self::ZERO)
    }

    /// Number of leading bits that `self` and `other` share.
    fn common_prefix_len(self, other: Self) -> u8;

    /// `self + 1`, or `None` past the last address.
    fn checked_next(self) -> Option<Self>;

    /// `self - 1`, or `None` below zero.
    fn checked_prev(self) -> Option<Self>;

    /// Formats the address in its usual notation (dotted quad or IPv6 text).
    fn display(self) -> String;

    /// Parses the usual notation of this address family.
    fn parse_addr(text: &str) -> Option<Self>;

    /// Widens to `u128` (IPv4 addresses keep their numeric value).
    fn to_u128(self) -> u128;

    /// An address from 32-bit words, most significant first (one word for
    /// IPv4, four for IPv6): random addresses from a 32-bit generator.
    fn from_words(next: impl FnMut() -> u32) -> Self;
}

/// An address family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// IPv4: 32-bit addresses (`u32`).
    Ipv4,
    /// IPv6: 128-bit addresses (`u128`).
    Ipv6,
}

impl Family {
    /// Both families, IPv4 first.
    pub const ALL: [Family; 2] = [Family::Ipv4, Family::Ipv6];

    /// The family's name in JSON and on the command line (`ipv4`, `ipv6`).
    pub fn key(self) -> &'static str {
        match self {
            Family::Ipv4 => "ipv4",
            Family::Ipv6 => "ipv6",
        }
    }

    /// The other family.
    pub fn other(self) -> Family {
        match self {
            Family::Ipv4 => Family::Ipv6,
            Family::Ipv6 => Family::Ipv4,
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Family::Ipv4 => "IPv4",
            Family::Ipv6 => "IPv6",
        })
    }
}

impl FromStr for Family {
    type Err = String;

    /// `ipv4` or `ipv6` (any case; `4` and `6` too).
    fn from_str(text: &str) -> Result<Self, String> {
        match text.to_ascii_lowercase().as_str() {
            "ipv4" | "4" => Ok(Family::Ipv4),
            "ipv6" | "6" => Ok(Family::Ipv6),
            _ => Err(format!("unknown address family {:?} (ipv4 or ipv6)", shorten(text))),
        }
    }
}

/// Implements [`Address`] for the unsigned integer `$address`, the
/// addresses of `$family` (`$ip` in the standard library), built from
/// 32-bit words by `$from_words`.
macro_rules! address {
    ($address:ty, $family:expr, $ip:ty, |$next:ident| $from_words:expr) => {
        impl Address for $address {
            const BITS: u8 = <$address>::BITS as u8;
            const ZERO: Self = 0;
            const MAX: Self = <$address>::MAX;
            const ONE: Self = 1;
            const FAMILY: Family = $family;

            #[inline]
            fn common_prefix_len(self, other: Self) -> u8 {
                (self ^ other).leading_zeros() as u8
            }
            #[inline]
            fn checked_next(self) -> Option<Self> {
                self.checked_add(1)
            }
            #[inline]
            fn checked_prev(self) -> Option<Self> {
                self.checked_sub(1)
            }
            fn display(self) -> String {
                <$ip>::from(self).to_string()
            }
            fn parse_addr(text: &str) -> Option<Self> {
                <$ip>::from_str(text).ok().map(<$address>::from)
            }
            fn to_u128(self) -> u128 {
                u128::from(self)
            }
            #[inline]
            fn from_words(mut $next: impl FnMut() -> u32) -> Self {
                $from_words
            }
        }
    };
}

address!(u32, Family::Ipv4, Ipv4Addr, |next| next());
address!(u128, Family::Ipv6, Ipv6Addr, |next| (0..4).fold(0u128, |bits, _| (bits << 32) | u128::from(next())));

/// Why a prefix could not be parsed or built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrefixError {
    /// The text has no `/` separating address and length.
    #[error("missing '/prefix_len' in {0:?}")]
    MissingLength(String),
    /// The address part is not a valid address of the family.
    #[error("malformed address {0:?}")]
    BadAddress(String),
    /// The length part is not a number.
    #[error("malformed prefix length {0:?}")]
    BadLength(String),
    /// The length has a leading zero (`/08`), refused as an address's
    /// octet with one is (`010.0.0.1`): octal to some readers.
    #[error("prefix length {0:?} has a leading zero")]
    LengthLeadingZero(String),
    /// The length is larger than the address has bits.
    #[error("prefix length {len} exceeds {max}")]
    LengthTooLarge {
        /// The length given.
        len: u32,
        /// The family's number of bits.
        max: u8,
    },
    /// Bits beyond the prefix length are set.
    #[error("host bits set in {0} (did you mean {1}?)")]
    HostBitsSet(String, String),
}

/// An IP prefix: an address whose bits past `prefix_len` are zero.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Prefix<A: Address> {
    addr: A,
    prefix_len: u8,
}

/// An IPv4 prefix.
pub type Prefix4 = Prefix<u32>;
/// An IPv6 prefix.
pub type Prefix6 = Prefix<u128>;

impl<A: Address> Prefix<A> {
    /// The prefix `addr/prefix_len`; host bits must be zero.
    pub fn new(addr: A, prefix_len: u8) -> Result<Self, PrefixError> {
        if prefix_len > A::BITS {
            return Err(PrefixError::LengthTooLarge { len: prefix_len.into(), max: A::BITS });
        }
        let masked = addr & A::mask(prefix_len);
        if masked != addr {
            return Err(PrefixError::HostBitsSet(
                format!("{}/{}", addr.display(), prefix_len),
                format!("{}/{}", masked.display(), prefix_len),
            ));
        }
        Ok(Prefix { addr, prefix_len })
    }

    /// `addr/prefix_len` from parts that already form a prefix (the RIB's
    /// nodes store the two apart); unchecked but in debug builds.
    #[inline]
    pub(crate) fn from_parts(addr: A, prefix_len: u8) -> Self {
        debug_assert!(prefix_len <= A::BITS && addr & !A::mask(prefix_len) == A::ZERO);
        Prefix { addr, prefix_len }
    }

    /// The prefix covering `addr` with `prefix_len` bits (host bits cleared).
    pub fn truncating(addr: A, prefix_len: u8) -> Self {
        assert!(prefix_len <= A::BITS, "prefix length out of range");
        Prefix { addr: addr & A::mask(prefix_len), prefix_len }
    }

    /// The prefix of the one address `addr` (`/32` for IPv4, `/128` for
    /// IPv6): what a covering query asks of an address
    /// ([`crate::Rib::covering`]).
    #[inline]
    pub fn host(addr: A) -> Self {
        Prefix { addr, prefix_len: A::BITS }
    }

    /// The whole address space (`0.0.0.0/0` or `::/0`).
    pub const fn default_route() -> Self {
        Prefix { addr: A::ZERO, prefix_len: 0 }
    }

    /// The network address.
    #[inline]
    pub fn addr(&self) -> A {
        self.addr
    }

    /// Number of leading bits that are fixed.
    #[inline]
    pub fn prefix_len(&self) -> u8 {
        self.prefix_len
    }

    /// The first address the prefix covers.
    #[inline]
    pub fn first(&self) -> A {
        self.addr
    }

    /// The last address the prefix covers.
    #[inline]
    pub fn last(&self) -> A {
        self.addr | !A::mask(self.prefix_len)
    }

    /// Whether `addr` lies inside the prefix.
    #[inline]
    pub fn contains(&self, addr: A) -> bool {
        addr & A::mask(self.prefix_len) == self.addr
    }

    /// Whether `other` lies entirely inside `self` (a prefix covers itself).
    #[inline]
    pub fn covers(&self, other: &Self) -> bool {
        self.prefix_len <= other.prefix_len && self.contains(other.addr)
    }
}

impl<A: Address> fmt::Display for Prefix<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr.display(), self.prefix_len)
    }
}

impl<A: Address> fmt::Debug for Prefix<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl<A: Address> FromStr for Prefix<A> {
    type Err = PrefixError;

    /// Strict parsing of `address/prefix_len`.
    fn from_str(text: &str) -> Result<Self, PrefixError> {
        let (addr_text, len_text) = text.split_once('/').ok_or_else(|| PrefixError::MissingLength(shorten(text)))?;
        let addr = A::parse_addr(addr_text).ok_or_else(|| PrefixError::BadAddress(shorten(addr_text)))?;
        if len_text.is_empty() || len_text.len() > 3 || !len_text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(PrefixError::BadLength(shorten(len_text)));
        }
        if len_text.len() > 1 && len_text.starts_with('0') {
            return Err(PrefixError::LengthLeadingZero(shorten(len_text)));
        }
        let len: u32 = len_text.parse().map_err(|_| PrefixError::BadLength(shorten(len_text)))?;
        if len > u32::from(A::BITS) {
            return Err(PrefixError::LengthTooLarge { len, max: A::BITS });
        }
        Prefix::new(addr, len as u8)
    }
}

/// An IPv4 or an IPv6 prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IpPrefix {
    /// An IPv4 prefix.
    V4(Prefix4),
    /// An IPv6 prefix.
    V6(Prefix6),
}

impl fmt::Display for IpPrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IpPrefix::V4(prefix) => prefix.fmt(f),
            IpPrefix::V6(prefix) => prefix.fmt(f),
        }
    }
}

impl IpPrefix {
    /// The prefix's address family.
    pub fn family(&self) -> Family {
        match self {
            IpPrefix::V4(_) => Family::Ipv4,
            IpPrefix::V6(_) => Family::Ipv6,
        }
    }

    /// The prefix if it is of family `A`.
    pub fn of<A: Address>(self) -> Option<Prefix<A>> {
        let prefix: &dyn Any = match &self {
            IpPrefix::V4(prefix) => prefix,
            IpPrefix::V6(prefix) => prefix,
        };
        prefix.downcast_ref::<Prefix<A>>().copied()
    }
}

impl<A: Address> From<Prefix<A>> for IpPrefix {
    fn from(prefix: Prefix<A>) -> Self {
        let any: &dyn Any = &prefix;
        match (any.downcast_ref::<Prefix4>(), any.downcast_ref::<Prefix6>()) {
            (Some(&v4), _) => IpPrefix::V4(v4),
            (_, Some(&v6)) => IpPrefix::V6(v6),
            _ => unreachable!("an address is IPv4 or IPv6"),
        }
    }
}

impl FromStr for IpPrefix {
    type Err = PrefixError;

    /// Strict parsing: IPv6 when the text has a `:`, IPv4 otherwise.
    fn from_str(text: &str) -> Result<Self, PrefixError> {
        if text.contains(':') {
            text.parse().map(IpPrefix::V6)
        } else {
            text.parse().map(IpPrefix::V4)
        }
    }
}

/// Test support: the prefix written `text` (panics if it is malformed).
#[cfg(test)]
pub(crate) fn p<A: Address>(text: &str) -> Prefix<A> {
    text.parse().unwrap_or_else(|error| panic!("{text}: {error}"))
}

/// Splits the inclusive range `[first, last]` into the fewest prefixes that
/// cover exactly it, in address order.
pub fn range_to_prefixes<A: Address>(first: A, last: A) -> Vec<Prefix<A>> {
    let mut out = Vec::new();
    let mut start = first;
    loop {
        if start > last {
            break;
        }
        // Largest aligned block starting at `start` that ends at or before `last`.
        let mut len = A::BITS;
        while len > 0 {
            let candidate = Prefix::truncating(start, len - 1);
            if candidate.first() != start || candidate.last() > last {
                break;
            }
            len -= 1;
        }
        let block = Prefix::truncating(start, len);
        out.push(block);
        match block.last().checked_next() {
            Some(next) => start = next,
            None => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_strictly() {
        let p: Prefix4 = "10.0.0.0/8".parse().unwrap();
        assert_eq!(p.addr(), 0x0a00_0000);
        assert_eq!(p.prefix_len(), 8);
        assert_eq!(p.last(), 0x0aff_ffff);
        assert!(matches!("10.0.0.1/8".parse::<Prefix4>(), Err(PrefixError::HostBitsSet(..))));
        assert!(matches!("10.0.0.0/33".parse::<Prefix4>(), Err(PrefixError::LengthTooLarge { .. })));
        assert!(matches!("10.0.0/8".parse::<Prefix4>(), Err(PrefixError::BadAddress(_))));
        assert!(matches!("10.0.0.0".parse::<Prefix4>(), Err(PrefixError::MissingLength(_))));
        assert!(matches!("10.0.0.0/+8".parse::<Prefix4>(), Err(PrefixError::BadLength(_))));
        assert!(matches!("10.0.0.0/".parse::<Prefix4>(), Err(PrefixError::BadLength(_))));
        assert!(matches!("010.0.0.0/8".parse::<Prefix4>(), Err(PrefixError::BadAddress(_))));
        let v6: Prefix6 = "2001:db8::/32".parse().unwrap();
        assert_eq!(v6.to_string(), "2001:db8::/32");
        assert!("2001:db8::1/32".parse::<Prefix6>().is_err());
        assert!("::/129".parse::<Prefix6>().is_err());
        assert_eq!("0.0.0.0/0".parse::<Prefix4>().unwrap(), Prefix4::default_route());
        assert_eq!("1.2.3.4/32".parse::<Prefix4>().unwrap().last(), 0x0102_0304);
    }

    #[test]
    fn prefix_lengths_with_a_leading_zero_are_refused_as_octets_are() {
        for text in ["10.0.0.0/08", "0.0.0.0/00", "10.0.0.0/008", "10.0.0.0/024"] {
            let error = text.parse::<Prefix4>().unwrap_err().to_string();
            assert!(error.contains("leading zero"), "{text}: {error}");
        }
        for text in ["2001:db8::/032", "::/00"] {
            let error = text.parse::<IpPrefix>().unwrap_err().to_string();
            assert!(error.contains("leading zero"), "{text}: {error}");
        }
        assert_eq!("0.0.0.0/0".parse::<Prefix4>().unwrap(), Prefix4::default_route());
        assert_eq!("10.0.0.0/10".parse::<Prefix4>().unwrap().prefix_len(), 10);
        assert_eq!("::/0".parse::<Prefix6>().unwrap().prefix_len(), 0);
    }

    #[test]
    fn bits_and_masks() {
        assert_eq!(u32::mask(0), 0);
        assert_eq!(u32::mask(32), u32::MAX);
        assert_eq!(u32::mask(24), 0xffff_ff00);
        assert_eq!(0x8000_0000u32.bit(0), 1);
        assert_eq!(0x8000_0000u32.bit(1), 0);
        assert_eq!(1u32.bit(31), 1);
        assert_eq!(u128::mask(128), u128::MAX);
        assert_eq!(0x0f00_0000u32.common_prefix_len(0x0e00_0000), 7);
    }

    #[test]
    fn families_parse_and_name_themselves() {
        assert_eq!("IPv6".parse::<Family>().unwrap(), Family::Ipv6);
        assert_eq!("4".parse::<Family>().unwrap(), Family::Ipv4);
        assert!("ipx".parse::<Family>().unwrap_err().contains("ipv4 or ipv6"));
        assert_eq!((u32::FAMILY, u128::FAMILY), (Family::Ipv4, Family::Ipv6));
        assert_eq!(Family::Ipv4.other().key(), "ipv6");
        let mut words = [1u32, 2, 3, 4].into_iter();
        assert_eq!(u128::from_words(|| words.next().unwrap()), 1 << 96 | 2 << 64 | 3 << 32 | 4);
    }

    #[test]
    fn covers_and_contains() {
        let a: Prefix4 = "10.0.0.0/8".parse().unwrap();
        let b: Prefix4 = "10.1.0.0/16".parse().unwrap();
        assert!(a.covers(&b) && !b.covers(&a) && a.covers(&a));
        assert!(a.contains(0x0a01_0203) && !b.contains(0x0a02_0000));
    }

    #[test]
    fn ranges_become_minimal_prefixes() {
        let got = range_to_prefixes(0x0a00_0001u32, 0x0a00_0006);
        let text: Vec<String> = got.iter().map(|p| p.to_string()).collect();
        assert_eq!(text, ["10.0.0.1/32", "10.0.0.2/31", "10.0.0.4/31", "10.0.0.6/32"]);
        assert_eq!(range_to_prefixes(0u32, u32::MAX), vec![Prefix4::default_route()]);
        assert_eq!(range_to_prefixes(5u32, 5).len(), 1);
        assert!(range_to_prefixes(6u32, 5).is_empty());
        let all6 = range_to_prefixes(0u128, u128::MAX);
        assert_eq!(all6, vec![Prefix6::default_route()]);
    }
}
