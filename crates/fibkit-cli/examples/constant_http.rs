//! The ceiling of `fibkit serve`'s single-address requests: an HTTP/1.1
//! server on the same stack (hyper on tokio's multi-threaded runtime,
//! kept-alive connections) that answers every request with one constant
//! JSON line of the size of a lookup's answer, and looks nothing up.
//! `crates/fibkit-cli/bench_serve.py` runs wrk against both in one sitting.
//!
//!     cargo run --release -p fibkit-cli --example constant_http -- 127.0.0.1:8181

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

const ANSWER: &str = "{\"address\":\"8.8.8.8\",\"prefix\":\"8.8.8.0/24\",\"value\":15169}\n";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let address: SocketAddr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:8181".into()).parse()?;
    let listener = tokio::net::TcpListener::bind(address).await?;
    eprintln!("constant_http: listening on {}", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let service = service_fn(|_: Request<hyper::body::Incoming>| async {
                let mut response = Response::new(Full::new(Bytes::from_static(ANSWER.as_bytes())));
                response.headers_mut().insert("content-type", "application/json".parse().unwrap());
                Ok::<_, Infallible>(response)
            });
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}
