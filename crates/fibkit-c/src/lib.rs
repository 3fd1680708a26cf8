//! # libfibkit: fibkit for C programs
//!
//! The same engines, files and live updates as the Rust crate, behind a C
//! ABI: `libfibkit.so` and `libfibkit.a`, declared by `include/fibkit.h`
//! (generated from this crate by cbindgen; a test fails when it is stale).
//!
//! ```text
//!  fibkit_table  (routes of both families: a file, or added one by one)
//!     |  fibkit_fib_build(table, "d18r")       fibkit_router_new(table, "poptrie18")
//!     v                                           v
//!  fibkit_fib (frozen; or fibkit_fib_open)     fibkit_router (one writer) --> fibkit_reader (per thread)
//!     fibkit_lookup4/6, _bulk                     announce/withdraw/apply       fibkit_reader_lookup4/6, _bulk
//! ```
//!
//! The rules every function follows (handles and ownership, status codes
//! and [`error::fibkit_last_error`], byte orders, threads) open the header;
//! they come from `cbindgen.toml`. Arguments are checked in [`args`] before
//! they are trusted, and no panic crosses the boundary ([`error::guard`]).

#![deny(missing_docs)]

pub mod args;
pub mod error;
pub mod fib;
pub mod records;
pub mod router;
pub mod source;
pub mod table;

use std::ffi::{c_char, c_int, CString};
use std::sync::OnceLock;

use fibkit_core::registry;

pub use args::{Addr6, FIBKIT_IPV4, FIBKIT_IPV6, FIBKIT_NO_ROUTE};

/// fibkit's version (`"0.1.0"`), a static string.
#[no_mangle]
pub extern "C" fn fibkit_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The registry's engine names, as C strings, in registry order.
fn engine_names() -> &'static [CString] {
    static NAMES: OnceLock<Vec<CString>> = OnceLock::new();
    NAMES.get_or_init(|| registry::engines().iter().map(|engine| table::c_string(engine.name)).collect())
}

/// The name of engine `index` (from 0) in the registry, a static string
/// (`"d16r"`, `"poptrie18"`, ...), NULL past the last: the names
/// `fibkit_fib_build` and `fibkit_router_new` take.
#[no_mangle]
pub extern "C" fn fibkit_engine_name(index: usize) -> *const c_char {
    error::guard_value(std::ptr::null(), || {
        Ok(engine_names().get(index).map_or(std::ptr::null(), |name| name.as_ptr()))
    })
}

/// 1 if the engine named `name` serves `family` (`FIBKIT_IPV4` or
/// `FIBKIT_IPV6`), 0 if not, or if no engine has that name.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn fibkit_engine_serves(name: *const c_char, family: c_int) -> c_int {
    error::guard_value(0, || {
        // SAFETY: the contract above.
        let name = unsafe { args::text(name, "name") }?;
        let family = match family {
            FIBKIT_IPV4 => fibkit_core::Family::Ipv4,
            FIBKIT_IPV6 => fibkit_core::Family::Ipv6,
            _ => return Ok(0),
        };
        Ok(c_int::from(registry::find(name).is_some_and(|engine| engine.serves(family))))
    })
}

#[cfg(test)]
mod header {
    use std::path::Path;

    /// The checked-in header, regenerated: a test that fails when a change
    /// to the API was not carried into `include/fibkit.h` (set
    /// `FIBKIT_BLESS=1` to rewrite it).
    #[test]
    fn the_header_is_current() {
        let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).unwrap();
        let bindings = cbindgen::Builder::new().with_crate(crate_dir).with_config(config).generate().unwrap();
        let mut generated = Vec::new();
        bindings.write(&mut generated);
        let path = crate_dir.join("include/fibkit.h");
        if std::env::var_os("FIBKIT_BLESS").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let checked_in = std::fs::read(&path).unwrap_or_default();
        assert!(
            checked_in == generated,
            "include/fibkit.h is stale: run `FIBKIT_BLESS=1 cargo test -p fibkit-c header` and commit it"
        );
    }
}
