//! Base types every other module builds on: addresses and prefixes, the
//! reference RIB, next-hop interning, huge-page lookup arrays and the SIMD
//! kernels. Nothing here imports a module above it.

pub mod addr;
pub mod mem;
pub mod nexthop;
pub mod random;
pub mod rib;
pub mod simd;
pub mod update;
