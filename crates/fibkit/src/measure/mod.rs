//! Measuring engines: benchmark workloads and checks against the RIB.

pub mod ceiling;
pub mod cycles;
pub mod verify;
pub use crate::base::workload;
