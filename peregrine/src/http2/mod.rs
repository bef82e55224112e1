//! HTTP/2 wire format, sans-I/O (RFC 9113, RFC 7541): frames, HPACK, streams, flow control and
//! a connection state machine for both roles. Byte slices in, events and bytes out; no sockets,
//! no clock read implicitly (the caller passes `now`).

unstable_pub! {
    pub mod budget;
}
pub mod config;
pub mod conn;
pub mod error;
pub mod flow;
pub mod frame;
pub mod hpack;
unstable_pub! {
    pub mod slab;
}
pub mod stream;
mod stream_id;
pub mod upgrade;

pub use config::{Config, Limits, Rate};
pub use conn::{
    Closed, Conn, Event, FieldSection, HeaderBlock, HeadersKind, PeerSettings, RequestHead, Role,
    SendError,
};
pub use error::{Error, Reason};
pub use stream_id::StreamId;
