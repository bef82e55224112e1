//! The transport shared by the drivers: one type that is plain TCP or TLS, with the one
//! read/write loop every connection uses; and the TLS configuration (certificates, SNI, ALPN).
//! Here too: the server's listening sockets (`listen`) and the client's connect (`connect`).
//!
//! Only drivers (`server`, the client) use this module; the wire formats never do.

pub(crate) mod connect;
pub(crate) mod linger;
pub(crate) mod listen;
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
