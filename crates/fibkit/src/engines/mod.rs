//! The forwarding structures (engines), one folder each.
//!
//! Every engine folder is laid out the same way, with each file where the
//! engine has that part:
//!
//! | file | holds |
//! |---|---|
//! | `mod.rs` | the layout (a diagram of the arrays and their bits), the lookup struct, the registry's builder (`build`), and the re-exports of the other registry functions |
//! | `build.rs` | the RIB -> arrays builder |
//! | `lookup.rs` | the scalar and batch lookups |
//! | `stats.rs` | the statistics report |
//! | `file.rs` | the compiled-file sections, saving, and the registry's opener (`open`) |
//! | `live.rs` | the updater (the registry's `updater`): the structure kept current under readers |
//! | `tests.rs` | unit tests too long to sit beside their code |
//!
//! A concept of its own keeps a named file (poptrie's `expanded.rs`, the
//! two-stage direct pointing with its builder; luleå's `maptable.rs`;
//! dir24's `rules.rs`, the table with its own rules as `rte_lpm` keeps
//! them). An engine of one small file is a file (`radix.rs`). An engine
//! imports only base types, the trait, errors, `live/` and the file format
//! (`lib.rs` lists the layers).

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
