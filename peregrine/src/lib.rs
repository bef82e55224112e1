//! # peregrine
//!
//! A fast, strict HTTP server, router and client: HTTP/1.1 and HTTP/2 (h2 over TLS by ALPN,
//! h2c by prior knowledge or `Upgrade`), plain or HTTPS; and HTTP/3 over QUIC (quinn, feature
//! `http3`) beside HTTPS with `Server::http3`.
//!
//! The wire formats ([`http1`], [`http2`], [`http3`], [`ws`], [`router`]) are sans-I/O: plain values and
//! state machines over byte slices, fuzzable and testable without sockets. Only the drivers,
//! `server` and [`client`], touch sockets, and every socket call of theirs is in one private
//! module. [`ws`] is the WebSocket layer (RFC 6455, permessage-deflate): the opening
//! handshake's checks and a connection state machine for both roles.
//!
//! ```
//! use peregrine::http1::{parse_request, EMPTY_HEADER, Limits, Status};
//! let mut headers = [EMPTY_HEADER; 16];
//! let req = b"GET /hello HTTP/1.1\r\nHost: example.com\r\n\r\n";
//! let Status::Complete(head) = parse_request(req, &mut headers, &Limits::default()).unwrap() else {
//!     panic!("complete request");
//! };
//! assert_eq!(head.target, "/hello");
//! ```
//!
//! ## Routing
//!
//! A [`Router`] maps methods and URI templates to handlers and is itself a [`Handler`]: give it
//! to the server. Parameters reach the handler through [`Request::param`]; see [`routing`].
//!
//! ```
//! use peregrine::routing::get;
//! use peregrine::{Request, Router, Server};
//!
//! async fn show_user(req: Request) -> String {
//!     format!("user {}", req.param("id").unwrap_or_default())
//! }
//!
//! let app = Router::new().route("/users/{id}", get(show_user));
//! let server = Server::bind("127.0.0.1:0").workers(1).spawn(app)?;
//! println!("listening on {}", server.local_addr());
//! server.shutdown();
//! server.join()?;
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! ## Calling
//!
//! A [`client::Client`] sends requests over pooled HTTP/1.1 and HTTP/2 connections;
//! [`client::conn::Connection`] is one connection, driven by its owner, for load generators.
//!
//! ```
//! use peregrine::client::Client;
//! use peregrine::{Request, Server};
//!
//! let server = Server::bind("127.0.0.1:0").workers(1).spawn(|_req: Request| async { "hi" })?;
//! let url = format!("http://{}/", server.local_addr());
//! let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! rt.block_on(async {
//!     let mut response = Client::new().get(&url).await?;
//!     let body = std::mem::take(response.body_mut()).to_bytes(1024).await?;
//!     assert_eq!(body, "hi");
//!     Ok::<(), Box<dyn std::error::Error>>(())
//! })
//! .map_err(|e| std::io::Error::other(e.to_string()))?;
//! server.shutdown();
//! server.join()?;
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! ## Tower and axum
//!
//! With the `tower` feature, any tower service of `http::Request<Body>` is a handler
//! (`peregrine::tower::service`), and a handler or a [`Router`] is a tower service
//! (`peregrine::tower::into_service`); with `axum`, an axum 0.8 `Router` is served unmodified,
//! on every listener the server has. [`Body`] is an `http_body::Body`, and the `http` crate's
//! requests and responses convert to and from [`Request`] and [`Response`]: the `tower`
//! module's docs tabulate how the types map.
//!
//! ```no_run
//! let app = axum::Router::new().route("/", axum::routing::get(|| async { "Hello, World!" }));
//! peregrine::Server::bind("0.0.0.0:8080").run(peregrine::tower::service(app))?;
//! # Ok::<(), std::io::Error>(())
//! ```
#![deny(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

/// Declares functions (or a module) `pub` with the `unstable` feature (or under `cfg(fuzzing)`)
/// and `pub(crate)` otherwise: what the crate uses itself but its API does not promise, reached
/// by its own benches, tests and fuzz targets.
macro_rules! unstable_pub {
    ($($(#[$attr:meta])* pub fn $name:ident($($args:tt)*) $(-> $ret:ty)? $body:block)*) => {$(
        #[cfg(any(fuzzing, feature = "unstable"))]
        $(#[$attr])*
        pub fn $name($($args)*) $(-> $ret)? $body
        #[cfg(not(any(fuzzing, feature = "unstable")))]
        $(#[$attr])*
        pub(crate) fn $name($($args)*) $(-> $ret)? $body
    )*};
    ($(#[$attr:meta])* pub mod $name:ident;) => {
        #[cfg(any(fuzzing, feature = "unstable"))]
        $(#[$attr])*
        pub mod $name;
        #[cfg(not(any(fuzzing, feature = "unstable")))]
        $(#[$attr])*
        pub(crate) mod $name;
    };
}

mod ascii;
mod base64;
mod body;
mod byte_word;
pub mod client;
pub mod date;
mod decimal;
mod field_codec;
pub mod files;
mod handler;
mod headers;
mod hexdig;
pub mod http1;
pub mod http2;
pub mod http3;
mod method;
mod net;
pub mod proxy;
pub mod proxy_protocol;
mod request;
mod response;
mod role;
pub mod router;
pub mod routing;
pub mod server;
mod text;
#[cfg(feature = "tower")]
pub mod tower;
mod version;
pub mod websocket;
pub mod ws;

pub use body::{Body, BodyError, BodySender, FileSpan};
pub use handler::Handler;
pub use headers::{Headers, HeadersIter};
pub use method::{AsMethod, Method, STANDARD_METHODS};
pub use request::Request;
pub use response::{HeaderList, IntoResponse, Response};
pub use routing::Router;
pub use server::{Server, ServerHandle};
pub use version::Version;

// The README's Rust examples are compiled (and the runnable ones run) as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;
