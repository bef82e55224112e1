//! Tower services on peregrine's server, and peregrine's handlers as tower services (feature
//! `tower`); axum apps unmodified (feature `axum`).
//!
//! - [`service`] makes any [`tower_service::Service`] of `http::Request<Body>` whose response
//!   is an `http::Response<B>` (`B` an [`http_body::Body`] of `Bytes`) a [`Handler`]: give it
//!   to [`Server::run`](crate::Server::run) or [`Server::spawn`](crate::Server::spawn), and it
//!   answers on every listener the server has (plain, TLS, h2c, PROXY protocol, systemd's
//!   sockets), with the server's limits, timeouts and graceful shutdown.
//! - [`into_service`] makes a [`Handler`] a tower service ([`HandlerService`]), and a
//!   [`Router`](crate::Router) is one itself: peregrine's router runs under hyper or inside a
//!   tower stack.
//! - [`WebSocketUpgrade`] accepts a WebSocket in a service or, as an extractor, in an axum
//!   handler, over HTTP/1.1 and HTTP/2 (axum's own works only on hyper).
//!
//! # Serving an axum app
//! An axum 0.8 `Router` is a tower service: [`service`] serves it as `axum::serve` would, its
//! routes prepared once (`Router::with_state(())`, as `axum::serve` does). Extractors see
//! what they see under hyper, and `ConnectInfo<SocketAddr>` (the client the PROXY protocol
//! header named, on a listener that reads it) without `into_make_service_with_connect_info`.
//!
//! ```no_run
//! use axum::extract::ConnectInfo;
//! use axum::routing::get;
//! use peregrine::Server;
//! use std::net::SocketAddr;
//!
//! async fn hello(ConnectInfo(client): ConnectInfo<SocketAddr>) -> String {
//!     format!("Hello, {client}!")
//! }
//!
//! fn main() -> std::io::Result<()> {
//!     let app = axum::Router::new().route("/", get(hello));
//!     Server::bind("0.0.0.0:8080").run(peregrine::tower::service(app))
//! }
//! ```
//!
//! # How the types map
//! A request reaches a service as an `http::Request<Body>`:
//!
//! | peregrine                                  | `http`                                       |
//! |--------------------------------------------|----------------------------------------------|
//! | [`Request::method_str`]                    | `Method` (extension methods too)             |
//! | [`Request::target`]                        | `Uri`: the target as sent, its bytes shared (origin or absolute form, `*`, a CONNECT's authority); one a `Uri` cannot hold is answered 400 |
//! | [`Request::version`]                       | `Version` (`HTTP/1.0`, `HTTP/1.1`, `HTTP/2.0`) |
//! | [`Request::headers`]                       | `HeaderMap`, in the order received (values shared, not copied); a field the `http` crate refuses is left out |
//! | [`Request::authority`] of HTTP/2           | a `Host` field, when the request has none (RFC 9113 §8.3.1) |
//! | [`Request::remote_addr`], [`Request::proxy`] | extensions: [`RemoteAddr`], and with `axum` `ConnectInfo<SocketAddr>` |
//! | [`Body`]                                   | the body itself: an [`http_body::Body`], its trailers a trailers frame |
//!
//! The service's `http::Response<B>` becomes a [`Response`](crate::Response): its status and
//! header fields as they are (the framing fields, Content-Length and Transfer-Encoding, are the
//! server's, as for any handler), its body streamed with [`Body::from_http_body`]. The body is
//! sent with Content-Length when its size hint is exact (else the response's Content-Length,
//! which also answers HEAD and 304 for the content they leave out), chunked on HTTP/1.1
//! otherwise; its trailers frame is sent as HTTP/2 trailers or the chunked trailer section, and
//! a `Trailer` field keeps that way open for a body of known size (RFC 9110 §6.6.2).
//!
//! # Readiness, errors and panics
//! Each request is answered by a clone of the service (as hyper-util's adapter does): it is
//! polled until [`poll_ready`](tower_service::Service::poll_ready) says `Ready`, then called
//! once; a service that is not ready holds the request (in order, on its connection) until it
//! is. The service is cloned per worker thread and its futures run on that thread: they need
//! not be `Send`. A service error, or a panic in the service or its future, is logged and
//! answered `500`, and the connection goes on.
//!
//! [`Handler`]: crate::Handler
//! [`Request::method_str`]: crate::Request::method_str
//! [`Request::target`]: crate::Request::target
//! [`Request::version`]: crate::Request::version
//! [`Request::headers`]: crate::Request::headers
//! [`Request::authority`]: crate::Request::authority
//! [`Request::remote_addr`]: crate::Request::remote_addr
//! [`Request::proxy`]: crate::Request::proxy

mod convert;
mod handler_service;
mod service_handler;
mod websocket;

use std::net::SocketAddr;

use crate::proxy_protocol::ProxyInfo;
use crate::request::Peer;

pub use handler_service::{HandlerFuture, HandlerService, into_service};
pub use service_handler::{ServiceFuture, ServiceHandler, service};
pub use websocket::WebSocketUpgrade;

use crate::body::Body;

/// The error type of the `http-body` and tower ecosystems: what a service's or a body's
/// error must convert into.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Who sent a request: in the extensions of the `http::Request` a service gets from the
/// server ([`service`]), and read from those a [`HandlerService`] gets.
///
/// # Examples
/// ```
/// use peregrine::tower::RemoteAddr;
///
/// async fn who(req: http::Request<peregrine::Body>) -> String {
///     match req.extensions().get::<RemoteAddr>() {
///         Some(remote) => format!("from {}", remote.addr()),
///         None => "from nowhere".to_owned(),
///     }
/// }
/// # let _ = who;
/// ```
#[derive(Clone, Debug)]
pub struct RemoteAddr(Peer);

impl RemoteAddr {
    /// The connection's peer `addr`, for a request made elsewhere (a test, another server).
    pub fn new(addr: SocketAddr) -> RemoteAddr {
        RemoteAddr(Peer::Direct(addr))
    }

    /// The client's address, as [`Request::remote_addr`](crate::Request::remote_addr) says:
    /// the connection's peer, or the client a trusted PROXY protocol header named.
    pub fn addr(&self) -> SocketAddr {
        self.0.addr()
    }

    /// What the PROXY protocol header said, as [`Request::proxy`](crate::Request::proxy).
    pub fn proxy(&self) -> Option<&ProxyInfo> {
        match &self.0 {
            Peer::Proxied(info) => Some(info),
            Peer::Direct(_) => None,
        }
    }
}

/// The answer to a service that failed or panicked.
fn internal_error() -> crate::Response {
    crate::Response::with_status(
        http::StatusCode::INTERNAL_SERVER_ERROR,
        Body::from_static(b"internal server error"),
    )
}
