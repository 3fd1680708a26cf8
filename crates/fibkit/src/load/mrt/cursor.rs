//! Bounds-checked reading of record fields ([`Cursor`]), problems located
//! by byte offset ([`Malformed`]), and the address families.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::Path;

use crate::addr::{Family, IpPrefix, Prefix};
use crate::load::{LoadError, Position};

/// Address family numbers (AFI).
pub(super) const AFI_IPV4: u16 = 1;
pub(super) const AFI_IPV6: u16 = 2;
/// Subsequent address family: unicast.
pub(super) const SAFI_UNICAST: u8 = 1;

/// The address family an AFI number names.
pub(super) fn family_of_afi(afi: u16) -> Option<Family> {
    match afi {
        AFI_IPV4 => Some(Family::Ipv4),
        AFI_IPV6 => Some(Family::Ipv6),
        _ => None,
    }
}

/// Bytes of an address of `family`.
fn address_len(family: Family) -> usize {
    match family {
        Family::Ipv4 => 4,
        Family::Ipv6 => 16,
    }
}

/// A problem at a byte offset of the decompressed data.
#[derive(Debug)]
pub(super) struct Malformed {
    pub(super) offset: u64,
    pub(super) message: String,
}

impl Malformed {
    pub(super) fn into_error(self, file: &Path) -> LoadError {
        LoadError::new(file, Position::Offset(self.offset), self.message)
    }
}

/// Reads big-endian fields from a slice of the file, knowing the slice's
/// offset in the file for error messages. Every read checks the bytes are
/// there; lengths read from the file only ever slice what is present.
#[derive(Clone, Copy, Debug)]
pub(super) struct Cursor<'a> {
    pub(super) bytes: &'a [u8],
    position: usize,
    /// Offset of `bytes[0]` in the file.
    base: usize,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(bytes: &'a [u8], base: usize) -> Self {
        Cursor { bytes, position: 0, base }
    }

    /// The file offset of the next byte.
    pub(super) fn offset(&self) -> u64 {
        (self.base + self.position) as u64
    }

    pub(super) fn remaining(&self) -> usize {
        self.bytes.len() - self.position
    }

    pub(super) fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    pub(super) fn malformed(&self, message: String) -> Malformed {
        Malformed { offset: self.offset(), message }
    }

    /// The next `len` bytes as a cursor of their own.
    pub(super) fn take(&mut self, len: usize, what: &str) -> Result<Cursor<'a>, Malformed> {
        if len > self.remaining() {
            return Err(self.malformed(format!("{what} needs {len} bytes, but only {} are left", self.remaining())));
        }
        let taken = Cursor::new(&self.bytes[self.position..self.position + len], self.base + self.position);
        self.position += len;
        Ok(taken)
    }

    pub(super) fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], Malformed> {
        let taken = self.take(N, what)?;
        let mut out = [0; N];
        out.copy_from_slice(taken.bytes);
        Ok(out)
    }

    pub(super) fn u8(&mut self, what: &str) -> Result<u8, Malformed> {
        Ok(self.array::<1>(what)?[0])
    }

    pub(super) fn u16(&mut self, what: &str) -> Result<u16, Malformed> {
        self.array(what).map(u16::from_be_bytes)
    }

    pub(super) fn u32(&mut self, what: &str) -> Result<u32, Malformed> {
        self.array(what).map(u32::from_be_bytes)
    }

    /// A 2- or 4-byte ASN.
    pub(super) fn asn(&mut self, as4: bool, what: &str) -> Result<u32, Malformed> {
        if as4 {
            self.u32(what)
        } else {
            self.u16(what).map(u32::from)
        }
    }

    pub(super) fn address(&mut self, family: Family, what: &str) -> Result<IpAddr, Malformed> {
        Ok(match family {
            Family::Ipv4 => IpAddr::V4(Ipv4Addr::from(self.array::<4>(what)?)),
            Family::Ipv6 => IpAddr::V6(Ipv6Addr::from(self.array::<16>(what)?)),
        })
    }

    /// A prefix in NLRI encoding: a length in bits, then just enough bytes.
    /// Bits past the length are cleared (RFC 4271: they are irrelevant).
    pub(super) fn nlri_prefix(&mut self, family: Family, what: &str) -> Result<IpPrefix, Malformed> {
        let at = self.offset();
        let prefix_len = self.u8(what)?;
        let max = 8 * address_len(family) as u8;
        if prefix_len > max {
            return Err(Malformed { offset: at, message: format!("{what}: prefix length {prefix_len} exceeds {max}") });
        }
        let bytes = self.take(usize::from(prefix_len).div_ceil(8), what)?.bytes;
        Ok(prefix_from_bytes(family, bytes, prefix_len))
    }

    /// A whole address and a prefix length byte after it (`TABLE_DUMP`).
    pub(super) fn full_prefix(&mut self, family: Family) -> Result<IpPrefix, Malformed> {
        let bytes = self.take(address_len(family), "prefix")?.bytes;
        let at = self.offset();
        let prefix_len = self.u8("prefix length")?;
        let max = 8 * address_len(family) as u8;
        if prefix_len > max {
            return Err(Malformed { offset: at, message: format!("prefix length {prefix_len} exceeds {max}") });
        }
        Ok(prefix_from_bytes(family, bytes, prefix_len))
    }
}

/// The prefix of `prefix_len` bits whose leading bytes are `bytes`.
fn prefix_from_bytes(family: Family, bytes: &[u8], prefix_len: u8) -> IpPrefix {
    let mut wide = [0u8; 16];
    wide[..bytes.len()].copy_from_slice(bytes);
    match family {
        Family::Ipv4 => {
            let addr = u32::from_be_bytes([wide[0], wide[1], wide[2], wide[3]]);
            IpPrefix::V4(Prefix::truncating(addr, prefix_len))
        }
        Family::Ipv6 => IpPrefix::V6(Prefix::truncating(u128::from_be_bytes(wide), prefix_len)),
    }
}
