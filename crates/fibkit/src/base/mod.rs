//! Base types every other module builds on: addresses and prefixes, the
//! reference RIB, next-hop interning, huge-page lookup arrays, the SIMD
//! kernels, key generators and the benchmark workloads they drive. Nothing
//! here imports a module above it.

pub mod addr;
pub mod address_text;
pub(crate) mod hash;
pub mod mem;
pub mod nexthop;
pub(crate) mod quote;
pub mod random;
pub mod rib;
pub mod simd;
pub mod update;
pub mod workload;
