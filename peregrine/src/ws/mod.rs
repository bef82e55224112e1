//! WebSocket wire format, sans-I/O (RFC 6455; RFC 7692 permessage-deflate; RFC 8441 over
//! HTTP/2): byte slices in, values out; no sockets, no
//! clock read.
//!
//! | Module | Owns |
//! |---|---|
//! | [`handshake`] | the request's checks and the response's fields, both ends (HTTP/1.1 `Upgrade`, HTTP/2 extended CONNECT) |
//! | [`extension`] | `Sec-WebSocket-Extensions` parsing and the permessage-deflate negotiation |
//! | [`frame`] | the frame header codec |
//! | [`mask`] | masking, word-wise |
//! | [`utf8`] | incremental UTF-8 validation of text |
//! | [`deflate`] | a message's compression and inflation (feature `ws-deflate`) |
//! | `close` | [`CloseCode`] and the Close payload |
//! | `error` | [`Error`]: what fails a connection, with its close code |
//! | `limits` | [`Limits`] |

mod close;
pub mod deflate;
mod error;
pub mod extension;
pub mod frame;
pub mod handshake;
mod limits;
pub mod mask;
pub mod utf8;

pub use close::{CloseCode, MAX_REASON, parse_close};
pub use error::Error;
pub use extension::{DeflateConfig, DeflateParams};
pub use limits::Limits;
