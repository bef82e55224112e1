//! The transport shared by the drivers: one type that is plain TCP or TLS, with the one
//! read/write loop every connection uses; and the TLS configuration (certificates, SNI, ALPN).
//!
//! Only drivers (`server`, and the client next) use this module; the wire formats never do.

pub(crate) mod tls;
pub(crate) mod transport;

pub use tls::{TlsConfig, TlsError};
pub(crate) use transport::{TlsStream, Transport};
