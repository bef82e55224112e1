//! WebSockets for applications: a handler accepts one with [`WebSocketUpgrade`], the client
//! opens one with [`Client::websocket`](../client/struct.Client.html#method.websocket), and both talk
//! through a [`WebSocket`].
//!
//! The wire rules are [`ws`](crate::ws)'s (RFC 6455 framing, masking, UTF-8, the closing
//! handshake, permessage-deflate and the limits); this module runs them over a connection:
//! over HTTP/1.1 the connection's own transport after the `101`, over HTTP/2 an extended
//! CONNECT stream (RFC 8441) among the connection's others. Received messages share the
//! read buffer where the wire allows it, and a steady stream of uncompressed messages
//! allocates nothing per message over HTTP/1.1.
//!
//! # Examples
//! An echo server, over HTTP/1.1 and HTTP/2 alike:
//! ```no_run
//! use peregrine::websocket::{Message, WebSocketUpgrade};
//! use peregrine::{IntoResponse, Request, Response, Server};
//!
//! async fn echo(mut req: Request) -> Response {
//!     match WebSocketUpgrade::from_request(&mut req) {
//!         Ok(upgrade) => upgrade.deflate(true).on_upgrade(|mut ws| async move {
//!             while let Some(Ok(msg)) = ws.recv().await {
//!                 if matches!(msg, Message::Text(_) | Message::Binary(_)) {
//!                     if ws.send(msg).await.is_err() {
//!                         break;
//!                     }
//!                 }
//!             }
//!         }),
//!         Err(refused) => refused.into_response(),
//!     }
//! }
//!
//! fn main() -> std::io::Result<()> {
//!     Server::bind("127.0.0.1:8080").run(echo)
//! }
//! ```

mod io;
mod message;
mod socket;
mod text;
mod upgrade;

pub(crate) use io::{BufferPool, Drain, Handoff, OnUpgrade};
pub use message::{CloseFrame, Message};
pub use socket::{Error, WebSocket};
pub use text::Utf8Bytes;
pub use upgrade::{UpgradeRefused, WebSocketUpgrade};

pub use crate::ws::{CloseCode, Config, DeflateConfig, Limits};
