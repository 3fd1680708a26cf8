//! The answers of `fibkit serve`'s lookup requests, in each form: one
//! address as JSON, a text batch, a binary batch, and the values a binary
//! answer's next hops stand for.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytes::Bytes;
use fibkit::address_text::AnyAddr;
use fibkit::nexthop::Label;
use fibkit::NextHop;
use http_body_util::Full;
use hyper::{Response, StatusCode};

use super::http::reply;
use super::metrics::Counters;
use super::request;
use super::routes::{Family, Matched, Routes};

/// A refusal: its status and what was wrong.
pub type Refusal = (StatusCode, String);

/// Batches at least this large are looked up on a blocking thread, not
/// on the connections' runtime.
const BLOCKING_KEYS: usize = 1 << 16;

fn json(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    reply(status, "application/json", body)
}

/// A value as JSON: a number, or an address as a string.
fn value_json(label: Option<Label>) -> serde_json::Value {
    match label {
        Some(Label::Number(number)) => number.into(),
        Some(Label::Addr(addr)) => addr.to_string().into(),
        // A served table is loaded without --fields: no record reaches here.
        Some(label @ Label::Record(_)) => label.to_string().into(),
        None => serde_json::Value::Null,
    }
}

/// `GET /lookup/ADDRESS`: the route's prefix and value, from the shadow.
///
/// # Errors
/// 400 when `text` is not an address.
pub fn single(routes: &Routes, counters: &Counters, text: &str) -> Result<Response<Full<Bytes>>, Refusal> {
    let (decoded, addr) = request::single_address(text).map_err(|problem| (StatusCode::BAD_REQUEST, problem))?;
    let matched: Matched = match addr {
        AnyAddr::V4(addr) => routes.matched(addr),
        AnyAddr::V6(addr) => routes.matched(addr),
    };
    counters.lookups_single.fetch_add(1, Ordering::Relaxed);
    let (prefix, value) = match matched {
        Some((prefix, value)) => (serde_json::Value::from(prefix.to_string()), value_json(Some(value))),
        None => (serde_json::Value::Null, serde_json::Value::Null),
    };
    let body = serde_json::json!({ "address": decoded, "prefix": prefix, "value": value });
    Ok(json(StatusCode::OK, body.to_string() + "\n"))
}

/// Looks `keys` up in the family's FIB ([`Routes::lookup_batch`]), on a blocking
/// thread when they are many.
async fn looked_up<A: Family>(routes: &Arc<Routes>, keys: Vec<A>) -> Vec<NextHop> {
    if keys.len() < BLOCKING_KEYS {
        let mut out = vec![0; keys.len()];
        routes.lookup_batch(&keys, &mut out);
        return out;
    }
    let routes = Arc::clone(routes);
    tokio::task::spawn_blocking(move || {
        let mut out = vec![0; keys.len()];
        routes.lookup_batch(&keys, &mut out);
        out
    })
    .await
    .expect("a lookup batch panicked")
}

/// `POST /lookup`: a line an address in, `ADDRESS<TAB>VALUE` a line out
/// (`?format=json`: JSON lines), in the input's order.
///
/// # Errors
/// 400 naming the first line that is not an address.
pub async fn text(
    routes: &Arc<Routes>,
    counters: &Counters,
    body: &Bytes,
    query: &str,
) -> Result<Response<Full<Bytes>>, Refusal> {
    let bad = |problem| (StatusCode::BAD_REQUEST, problem);
    let as_json = request::text_format_is_json(query).map_err(bad)?;
    let parsed = request::text_lines(body).map_err(bad)?;
    let hops4 = looked_up::<u32>(routes, parsed.v4).await;
    let hops6 = looked_up::<u128>(routes, parsed.v6).await;
    let mut out = String::with_capacity(parsed.order.len() * 24);
    for (&(ipv6, index), &(from, to)) in parsed.order.iter().zip(&parsed.lines) {
        let address = std::str::from_utf8(&body[from..to]).unwrap_or("?");
        let value = if ipv6 { routes.value::<u128>(hops6[index]) } else { routes.value::<u32>(hops4[index]) };
        if as_json {
            let line = serde_json::json!({ "address": address, "value": value_json(value) });
            let _ = writeln!(out, "{line}");
        } else {
            match value {
                Some(value) => {
                    let _ = writeln!(out, "{address}\t{value}");
                }
                None => {
                    let _ = writeln!(out, "{address}\t");
                }
            }
        }
    }
    counters.lookups_text.fetch_add(parsed.order.len() as u64, Ordering::Relaxed);
    let kind = if as_json { "application/x-ndjson" } else { "text/plain" };
    Ok(reply(StatusCode::OK, kind, out))
}

/// `POST /lookup/ipv4` or `/lookup/ipv6`: keys packed in network order in,
/// a little-endian `u32` next hop per key out (0: no route; `/values/...`
/// gives what each stands for).
///
/// # Errors
/// 400 when the body's length is not a whole number of keys.
pub async fn binary<A: Family>(
    routes: &Arc<Routes>,
    counters: &Counters,
    body: Bytes,
) -> Result<Response<Full<Bytes>>, Refusal> {
    let keys: Vec<A> = request::binary_keys(&body).map_err(|problem| (StatusCode::BAD_REQUEST, problem))?;
    let count = keys.len();
    let hops = looked_up(routes, keys).await;
    let mut out = Vec::with_capacity(count * 4);
    for hop in hops {
        out.extend_from_slice(&hop.to_le_bytes());
    }
    counters.lookups_binary.fetch_add(count as u64, Ordering::Relaxed);
    Ok(reply(StatusCode::OK, "application/octet-stream", out))
}

/// `GET /values/ipv4` or `/values/ipv6`: the values of next hops 1, 2, ...
/// as a JSON array (numbers, or addresses as strings). The list only
/// grows while the server runs: a client keeps it and asks again when an
/// answer has a next hop beyond it.
pub fn values<A: Family>(routes: &Routes) -> Response<Full<Bytes>> {
    let values: Vec<serde_json::Value> =
        routes.values::<A>().into_iter().map(|label| value_json(Some(label))).collect();
    json(StatusCode::OK, serde_json::Value::from(values).to_string() + "\n")
}
