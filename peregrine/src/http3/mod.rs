//! HTTP/3 wire format, sans-I/O (RFC 9114, RFC 9204): frames, QPACK with its dynamic table, and
//! a connection state machine for both roles over streams a QUIC library (quinn-proto) owns.
//! Stream bytes in, events and stream bytes out; no sockets, no clock read (the caller passes
//! `now`).
//!
//! - [`varint`]: QUIC variable-length integers (RFC 9000 §16).
//! - [`frame`]: the frame layer (RFC 9114 §7): header, one file per type, placement rules.
//! - [`qpack`]: field compression (RFC 9204): static and dynamic tables, the encoder and
//!   decoder with their instruction streams, blocked streams.
//! - [`conn`]: one connection, both roles: control, QPACK and request streams, GOAWAY,
//!   errors with their codes, flood budgets. [`Conn`](conn::Conn)'s docs state the driver's contract.

pub mod conn;
pub mod error;
pub mod frame;
pub mod qpack;
mod stream_id;
pub mod stream_type;
pub mod varint;

pub use error::{Code, Error};
pub use stream_id::StreamId;
pub use stream_type::StreamType;

pub use crate::role::Role;
