//! WebSocket wire format, sans-I/O (RFC 6455; RFC 7692 permessage-deflate; RFC 8441 over
//! HTTP/2): the opening handshake's checks and fields, and a connection state machine for
//! both roles. Byte slices in, events and bytes out; no sockets, no clock read (the caller
//! passes `now`), no random source read (the caller passes entropy).
//!
//! | Module | Owns |
//! |---|---|
//! | [`handshake`] | the request's checks and the response's fields, both ends (HTTP/1.1 `Upgrade`, HTTP/2 extended CONNECT) |
//! | [`extension`] | `Sec-WebSocket-Extensions` parsing and the permessage-deflate negotiation |
//! | [`conn`] | [`Conn`]: frames in, [`Event`]s out, the closing handshake, pings, timers |
//! | [`frame`] | the frame header codec |
//! | [`mask`] | masking, word-wise |
//! | [`utf8`] | incremental UTF-8 validation of text |
//! | `close_code` | [`CloseCode`] |
//! | `close` | the Close payload |
//! | [`deflate`] | a message's compression and inflation (feature `ws-deflate`) |
//! | `limits`, `config` | [`Limits`], [`Config`] |
//!
//! # Examples
//!
//! A server's side: check the upgrade request, answer it, then run the connection on the
//! bytes that follow.
//! ```
//! use std::sync::Arc;
//! use std::time::Instant;
//! use bytes::BytesMut;
//! use peregrine::Version;
//! use peregrine::ws::handshake::check_request;
//! use peregrine::ws::{Config, Conn, Event, Role};
//!
//! let fields: [(&[u8], &[u8]); 4] = [
//!     (b"Upgrade", b"websocket"),
//!     (b"Connection", b"Upgrade"),
//!     (b"Sec-WebSocket-Key", b"dGhlIHNhbXBsZSBub25jZQ=="),
//!     (b"Sec-WebSocket-Version", b"13"),
//! ];
//! let config = Arc::new(Config::default());
//! let request = check_request(b"GET", Version::Http11, fields).unwrap();
//! let accept = request.accept(&[], config.deflate.as_ref());
//! assert_eq!(accept.status(), 101);
//! // The driver writes the 101 with `accept.fields()`, then:
//! let mut conn = Conn::new(Role::Server, config, accept.deflate(), [0; 32], Instant::now());
//! // RFC 6455 §5.7: a masked "Hello" from the client.
//! let mut input = BytesMut::from(&b"\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58"[..]);
//! assert_eq!(conn.recv(&mut input, Instant::now()), Some(Event::Text("Hello".into())));
//! ```

mod close;
mod close_code;
mod config;
pub mod conn;
pub mod deflate;
mod error;
pub mod extension;
pub mod frame;
pub mod handshake;
mod limits;
pub mod mask;
#[cfg(target_arch = "x86_64")]
mod mask_avx2;
mod transmit;
pub mod utf8;

pub use close::{MAX_REASON, parse_close};
pub use close_code::CloseCode;
pub use config::Config;
pub use conn::{Conn, Event, Role, State, Timeout};
pub use error::{Error, SendError};
pub use extension::{DeflateConfig, DeflateParams};
pub use limits::Limits;
pub use transmit::Transmit;
