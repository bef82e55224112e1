//! The transport shared by the drivers: one type that is plain TCP or TLS, with the one
//! read/write loop every connection uses; and the TLS configuration (certificates, SNI, ALPN).
//! Every socket call of the crate is here: the server's listeners (`listen`) and what it does
//! with a new connection before the transport wraps it (`accept`), the client's connect
//! (`connect`, and `quic_connect` for QUIC), and every read and write of a connection (`transport`, `write`, `sendfile`,
//! `linger`).
//!
//! Only drivers (`server`, the client) use this module; the wire formats never do.

pub(crate) mod accept;
pub(crate) mod connect;
pub(crate) mod linger;
pub(crate) mod listen;
#[cfg(feature = "http3")]
pub(crate) mod quic;
#[cfg(feature = "http3")]
pub(crate) mod quic_connect;
#[cfg(target_os = "linux")]
mod sendfile;
mod timer;
pub(crate) mod tls;
pub(crate) mod transport;
mod write;

pub(crate) use timer::Timer;
pub use tls::{TlsConfig, TlsError};
pub(crate) use transport::{TlsStream, Transport};
pub(crate) use write::WriteStall;
