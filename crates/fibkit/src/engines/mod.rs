//! The forwarding structures (engines), one folder each.

pub mod dir24;
pub mod dxr;
pub mod dxr6;
pub mod lctrie;
pub mod lulea;
pub mod poptrie;
pub mod radix;
pub mod sail;
pub mod sail_runs;
pub mod treebitmap;
