//! The HTTP side of `fibkit serve` (HTTP/1.1, hyper on tokio): the accept
//! loop with its bounds, and the request router.
//!
//! | request | answer |
//! |---|---|
//! | `GET /lookup/ADDRESS` | JSON: `{"address", "prefix", "value"}` (nulls for no route) |
//! | `POST /lookup`, addresses a line | text: `ADDRESS<TAB>VALUE` a line (`?format=json`: JSON lines) |
//! | `POST /lookup/ipv4`, `/lookup/ipv6` | binary: keys of 4 or 16 bytes in network order in, a little-endian `u32` next hop per key out |
//! | `GET /values/ipv4`, `/values/ipv6` | JSON: the values of next hops 1, 2, ... of the family |
//! | `GET /metrics` | Prometheus' text format |
//! | `GET /` | `fibkit serve` and the version |
//!
//! Bounds: at most `max_connections` connections (more are closed at
//! once); headers within `header_timeout_seconds` of the connection's
//! start or of the previous answer (an idle connection is closed then), at
//! most 64 KiB of them; a body of at most `max_body_bytes` (413 past it,
//! from its `Content-Length` or as it arrives), within
//! `body_timeout_seconds` (408). Each refusal is logged with the client's
//! address.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONNECTION, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};

use super::answer;
use super::config::Http;
use super::metrics::Counters;
use super::routes::Routes;

/// What every connection shares.
pub struct Server {
    /// The routes answered from (replaced whole by a reload that changes
    /// them).
    pub routes: RwLock<Arc<Routes>>,
    /// The bounds.
    pub limits: RwLock<Limits>,
    /// Counts for `/metrics`.
    pub counters: Counters,
    /// Connections open.
    pub open: AtomicU64,
}

/// The bounds of `[http]`.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Connections open at once.
    pub max_connections: usize,
    /// The largest body.
    pub max_body: u64,
    /// Time for a request's headers.
    pub header_timeout: Duration,
    /// Time for a request's body.
    pub body_timeout: Duration,
}

impl From<&Http> for Limits {
    fn from(http: &Http) -> Self {
        Limits {
            max_connections: http.max_connections,
            max_body: http.max_body_bytes,
            header_timeout: Duration::from_secs(http.header_timeout_seconds),
            body_timeout: Duration::from_secs(http.body_timeout_seconds),
        }
    }
}

impl Server {
    fn routes(&self) -> Arc<Routes> {
        Arc::clone(&self.routes.read().expect("routes lock"))
    }

    fn limits(&self) -> Limits {
        *self.limits.read().expect("limits lock")
    }
}

/// Accepts connections on `listener` until `stop` turns true, each served
/// on a task of its own within the bounds.
pub async fn accept(server: Arc<Server>, listener: TcpListener, mut stop: watch::Receiver<bool>) {
    let slots = Arc::new(Semaphore::new(0));
    let mut granted = 0usize;
    loop {
        let (stream, client) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // EMFILE and the like: wait rather than spin.
                    eprintln!("fibkit serve: accept: {error}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = stop.changed() => return,
        };
        let limits = server.limits();
        // The semaphore follows `max_connections` (a reload may change it;
        // a slot in use is taken back when its connection ends).
        if granted < limits.max_connections {
            slots.add_permits(limits.max_connections - granted);
            granted = limits.max_connections;
        } else if granted > limits.max_connections {
            granted -= slots.forget_permits(granted - limits.max_connections);
        }
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            server.counters.connections_refused.fetch_add(1, Ordering::Relaxed);
            eprintln!("fibkit serve: client {client}: refused: {} connections open already", limits.max_connections);
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let server = Arc::clone(&server);
        tokio::spawn(async move {
            server.open.fetch_add(1, Ordering::Relaxed);
            let service = {
                let server = Arc::clone(&server);
                service_fn(move |request| {
                    let server = Arc::clone(&server);
                    async move { Ok::<_, Infallible>(respond(&server, client, request).await) }
                })
            };
            let connection = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .max_buf_size(64 << 10)
                .serve_connection(TokioIo::new(stream), service);
            if let Err(error) = connection.await {
                server.counters.connections_failed.fetch_add(1, Ordering::Relaxed);
                eprintln!("fibkit serve: client {client}: connection closed: {error}");
            }
            server.open.fetch_sub(1, Ordering::Relaxed);
            drop(slot);
        });
    }
}

/// An answer with `status`, a content type and a body.
pub(super) fn reply(status: StatusCode, kind: &'static str, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(kind));
    response
}

/// A refusal: JSON naming the problem, logged with the client. After a
/// body refused unread (413, 408) the connection closes: what the client
/// still sends is not a request.
fn refuse(server: &Server, client: SocketAddr, status: StatusCode, problem: &str) -> Response<Full<Bytes>> {
    eprintln!("fibkit serve: client {client}: {} {problem}", status.as_u16());
    server.counters.count_status(status);
    let body = serde_json::json!({ "error": problem }).to_string() + "\n";
    let mut response = reply(status, "application/json", body);
    if matches!(status, StatusCode::PAYLOAD_TOO_LARGE | StatusCode::REQUEST_TIMEOUT) {
        response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// Answers one request.
async fn respond(server: &Server, client: SocketAddr, request: Request<Incoming>) -> Response<Full<Bytes>> {
    let path = request.uri().path().to_string();
    let query = request.uri().query().unwrap_or("").to_string();
    if path.split('/').any(|segment| segment == ".." || segment.eq_ignore_ascii_case("%2e%2e")) {
        return refuse(server, client, StatusCode::BAD_REQUEST, &format!("path {path:?}: `..` is not allowed"));
    }
    let method = request.method().clone();
    let routes = server.routes();
    let answered = match (&method, path.as_str()) {
        (&Method::GET, "/") => {
            Ok(reply(StatusCode::OK, "text/plain", concat!("fibkit serve ", env!("CARGO_PKG_VERSION"), "\n")))
        }
        (&Method::GET, "/metrics") => Ok(reply(
            StatusCode::OK,
            "text/plain; version=0.0.4",
            super::metrics::render(&routes, &server.counters, server.open.load(Ordering::Relaxed)),
        )),
        (&Method::GET, "/values/ipv4") => Ok(answer::values::<u32>(&routes)),
        (&Method::GET, "/values/ipv6") => Ok(answer::values::<u128>(&routes)),
        (&Method::GET, single) if single.starts_with("/lookup/") => {
            answer::single(&routes, &server.counters, &single["/lookup/".len()..])
        }
        (&Method::POST, "/lookup" | "/lookup/ipv4" | "/lookup/ipv6") => match body(server, request).await {
            Ok(body) => match path.as_str() {
                "/lookup" => answer::text(&routes, &server.counters, &body, &query).await,
                "/lookup/ipv4" => answer::binary::<u32>(&routes, &server.counters, body).await,
                _ => answer::binary::<u128>(&routes, &server.counters, body).await,
            },
            Err(refusal) => Err(refusal),
        },
        (_, "/" | "/metrics" | "/values/ipv4" | "/values/ipv6" | "/lookup" | "/lookup/ipv4" | "/lookup/ipv6") => {
            Err((StatusCode::METHOD_NOT_ALLOWED, format!("{method} {path}: not this method")))
        }
        (_, single) if single.starts_with("/lookup/") => {
            Err((StatusCode::METHOD_NOT_ALLOWED, format!("{method} {path}: GET only")))
        }
        _ => Err((StatusCode::NOT_FOUND, format!("{method} {path}: no such resource"))),
    };
    match answered {
        Ok(response) => {
            server.counters.count_status(response.status());
            response
        }
        Err((status, problem)) => refuse(server, client, status, &problem),
    }
}

/// A request's whole body, within the bounds.
async fn body(server: &Server, request: Request<Incoming>) -> Result<Bytes, (StatusCode, String)> {
    let limits = server.limits();
    let declared = request.headers().get(CONTENT_LENGTH).and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    if let Some(length) = declared.filter(|&length| length > limits.max_body) {
        return Err((
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("a body of {length} bytes: the limit is {} (max_body_bytes)", limits.max_body),
        ));
    }
    let limited = Limited::new(request.into_body(), usize::try_from(limits.max_body).unwrap_or(usize::MAX));
    match tokio::time::timeout(limits.body_timeout, limited.collect()).await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(error)) if error.downcast_ref::<LengthLimitError>().is_some() => Err((
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("a body over the limit of {} bytes (max_body_bytes)", limits.max_body),
        )),
        Ok(Err(error)) => Err((StatusCode::BAD_REQUEST, format!("the body could not be read: {error}"))),
        Err(_) => Err((
            StatusCode::REQUEST_TIMEOUT,
            format!("the body took more than {} s (body_timeout_seconds)", limits.body_timeout.as_secs()),
        )),
    }
}
