//! The answers of `fibkit serve`'s lookup requests, in each form: one
//! address as JSON, a text batch, a binary batch, and the values a binary
//! answer's next hops stand for.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytes::Bytes;
use fibkit::address_text::{parse_address, AnyAddr};
use fibkit::nexthop::Label;
use fibkit::NextHop;
use http_body_util::Full;
use hyper::{Response, StatusCode};

use super::http::reply;
use super::metrics::Counters;
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
    let decoded = percent_decoded(text);
    let addr = parse_address(decoded.as_bytes())
        .map_err(|error| (StatusCode::BAD_REQUEST, format!("{decoded:?} is not an address: {error}")))?;
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

/// `%XX` escapes decoded (an IPv6 zone or a client that escapes `:`);
/// anything else kept as it is.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = |byte: u8| (byte as char).to_digit(16);
        match (bytes[at], bytes.get(at + 1).copied().and_then(hex), bytes.get(at + 2).copied().and_then(hex)) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                at += 3;
            }
            (byte, ..) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The addresses of a text body, a line each, split by family with each
/// line's place.
struct Parsed {
    v4: Vec<u32>,
    v6: Vec<u128>,
    /// Per line: the family (false: IPv4) and the index in its list.
    order: Vec<(bool, usize)>,
    /// The lines' text, trimmed.
    lines: Vec<(usize, usize)>,
}

fn parse_lines(body: &[u8]) -> Result<Parsed, Refusal> {
    let mut parsed = Parsed { v4: Vec::new(), v6: Vec::new(), order: Vec::new(), lines: Vec::new() };
    let mut start = 0;
    for (number, line) in body.split(|&byte| byte == b'\n').enumerate() {
        let line_start = start;
        start += line.len() + 1;
        let trimmed = line.trim_ascii();
        if trimmed.is_empty() {
            continue;
        }
        match parse_address(trimmed) {
            Ok(AnyAddr::V4(addr)) => {
                parsed.order.push((false, parsed.v4.len()));
                parsed.v4.push(addr);
            }
            Ok(AnyAddr::V6(addr)) => {
                parsed.order.push((true, parsed.v6.len()));
                parsed.v6.push(addr);
            }
            Err(error) => {
                let shown = String::from_utf8_lossy(&trimmed[..trimmed.len().min(64)]).into_owned();
                return Err((
                    StatusCode::BAD_REQUEST,
                    format!("line {}: {shown:?} is not an address: {error}", number + 1),
                ));
            }
        }
        let from = line_start + (line.len() - line.trim_ascii_start().len());
        parsed.lines.push((from, from + trimmed.len()));
    }
    Ok(parsed)
}

/// Looks `keys` up in one version of the family's FIB, on a blocking
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
    let as_json = match query {
        "" | "format=text" => false,
        "format=json" => true,
        _ => return Err((StatusCode::BAD_REQUEST, format!("query {query:?}: format=text or format=json"))),
    };
    let parsed = parse_lines(body)?;
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
    let width = usize::from(A::BITS / 8);
    if !body.len().is_multiple_of(width) {
        return Err((
            StatusCode::BAD_REQUEST,
            format!("a body of {} bytes is not a whole number of {width}-byte {} keys", body.len(), A::FAMILY),
        ));
    }
    let keys: Vec<A> = body
        .chunks_exact(width)
        .map(|key| {
            A::from_words({
                let mut words =
                    key.chunks_exact(4).map(|word| u32::from_be_bytes([word[0], word[1], word[2], word[3]]));
                move || words.next().unwrap_or(0)
            })
        })
        .collect();
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
