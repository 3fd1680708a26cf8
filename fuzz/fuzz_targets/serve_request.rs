//! `fibkit serve`'s requests: the input's first line is a request target
//! (path and query), the rest its body. The path goes to the single
//! lookup's reader when it is under `/lookup/`, the query to the text
//! batch's, the body to the text batch's and to both binary ones; every
//! address read is looked up in a small table. The server's request reader
//! is included as it is from fibkit-cli (a binary crate: no library to
//! depend on), without sockets, tokio or hyper.
//!
//! Checks: no panic; an address read back from its text is the same
//! address; a text batch's lines lie inside the body, in order, and each
//! reads as the address kept for it; a binary body is accepted exactly
//! when its length is a whole number of keys, and its keys written back
//! are the body; every answer is a next hop the table has.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use fibkit::address_text::{parse_address, AnyAddr};
use fibkit::compiled::{CompileOptions, CompiledFamily, CompiledTable};
use fibkit::load::{self, LoadOptions};
use fibkit::{Address, NextHop};
use libfuzzer_sys::fuzz_target;

#[path = "../../crates/fibkit-cli/src/serve/request.rs"]
#[allow(dead_code)]
mod request;

/// The table answered from: both families, nested routes.
fn table() -> &'static CompiledTable {
    static TABLE: OnceLock<CompiledTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        let text =
            b"0.0.0.0/0 1\n10.0.0.0/8 2\n10.1.0.0/16 3\n192.0.2.1/32 4\n::/0 5\n2001:db8::/32 6\n2001:db8::1/128 7\n";
        let loaded =
            load::load_bytes(Path::new("serve.table"), text, &LoadOptions::default()).expect("the table loads");
        CompiledTable::build(loaded, &CompileOptions::default()).expect("the table compiles")
    })
}

/// Looks the addresses up: each answer a next hop of the table (the
/// default routes leave none without one).
fn looked_up(v4: &[u32], v6: &[u128]) {
    let table = table();
    answered(table.v4.as_ref().expect("IPv4 routes"), v4, table.values.max_index());
    answered(table.v6.as_ref().expect("IPv6 routes"), v6, table.values.max_index());
}

fn answered<A: Address>(family: &CompiledFamily<A>, keys: &[A], max: NextHop) {
    let mut out = vec![0; keys.len()];
    family.lookup_batch(keys, &mut out);
    for (&key, &answer) in keys.iter().zip(&out) {
        let hop = family.next_hop(answer);
        assert!(hop != 0 && hop <= max && hop == family.lookup(key));
    }
}

fuzz_target!(|data: &[u8]| {
    let (target, body) = match data.iter().position(|&byte| byte == b'\n') {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let target = String::from_utf8_lossy(target);
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));

    if let Some(text) = path.strip_prefix("/lookup/") {
        if let Ok((decoded, addr)) = request::single_address(text) {
            assert_eq!(parse_address(decoded.as_bytes()).ok(), Some(addr));
            let shown = match addr {
                AnyAddr::V4(v4) => std::net::Ipv4Addr::from(v4).to_string(),
                AnyAddr::V6(v6) => std::net::Ipv6Addr::from(v6).to_string(),
            };
            assert_eq!(parse_address(shown.as_bytes()).ok(), Some(addr), "{decoded:?} shown as {shown}");
            match addr {
                AnyAddr::V4(v4) => looked_up(&[v4], &[]),
                AnyAddr::V6(v6) => looked_up(&[], &[v6]),
            }
        }
    }
    let _ = request::text_format_is_json(query);

    if let Ok(parsed) = request::text_lines(body) {
        assert_eq!(parsed.order.len(), parsed.lines.len());
        assert_eq!(parsed.order.len(), parsed.v4.len() + parsed.v6.len());
        let mut end = 0;
        for (&(ipv6, index), &(from, to)) in parsed.order.iter().zip(&parsed.lines) {
            assert!(end <= from && from < to && to <= body.len());
            end = to;
            let expected = if ipv6 { AnyAddr::V6(parsed.v6[index]) } else { AnyAddr::V4(parsed.v4[index]) };
            assert_eq!(parse_address(&body[from..to]).ok(), Some(expected));
        }
        looked_up(&parsed.v4, &parsed.v6);
    }

    let v4 = request::binary_keys::<u32>(body);
    assert_eq!(v4.is_ok(), body.len() % 4 == 0);
    let v6 = request::binary_keys::<u128>(body);
    let mapped = body.chunks_exact(16).any(|key| key[..12] == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]);
    assert_eq!(v6.is_ok(), body.len() % 16 == 0 && !mapped);
    if let Ok(keys) = &v4 {
        assert_eq!(keys.iter().flat_map(|key| key.to_be_bytes()).collect::<Vec<u8>>(), body);
    }
    if let Ok(keys) = &v6 {
        assert_eq!(keys.iter().flat_map(|key| key.to_be_bytes()).collect::<Vec<u8>>(), body);
    }
    looked_up(v4.as_deref().unwrap_or(&[]), v6.as_deref().unwrap_or(&[]));
});
