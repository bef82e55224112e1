//! The PROXY protocol, versions 1 and 2 (HAProxy's `proxy-protocol.txt`), sans-I/O: the header a
//! load balancer sends before any byte of the proxied connection, saying who the client is.
//!
//! [`parse`] reads a header from the start of a buffer that may hold only part of it
//! ([`Status::Partial`]: read more and call again) and returns a [`ProxyHeader`] borrowing the
//! buffer, with the header's length so the caller can skip it. Everything is bounded: a version 1
//! line is at most [`V1_MAX_LEN`] bytes (spec §2.1), a version 2 header at most
//! [`V2_MAX_LEN`] bytes (the spec allows 65,551; this crate refuses more than real balancers
//! send), and its TLVs are checked whole before the header is returned.
//!
//! Per spec §2 the receiver "MUST not try to guess whether the protocol header is present": on a
//! listener that expects it, anything else is [`ProxyError::NotProxy`].
//!
//! # Examples
//! ```
//! use peregrine::http1::Status;
//! use peregrine::proxy_protocol::{parse, Addresses, Command};
//!
//! let bytes = b"PROXY TCP4 192.168.0.1 192.168.0.11 56324 443\r\nGET / HTTP/1.1\r\n";
//! let Status::Complete(header) = parse(bytes).unwrap() else { unreachable!() };
//! assert_eq!(header.command, Command::Proxy);
//! assert_eq!(header.len, 47);
//! let Addresses::Inet { source, destination } = header.addresses else { unreachable!() };
//! assert_eq!(source.to_string(), "192.168.0.1:56324");
//! assert_eq!(destination.port(), 443);
//! ```

mod crc32c;
mod info;
mod tlv;
mod v1;
mod v2;

use std::fmt;
use std::net::SocketAddr;

pub use crate::http1::Status;
pub use info::{ProxyInfo, TlsInfo};
pub use tlv::{Tlv, TlvType, Tlvs};

/// The longest version 1 line, CRLF included (spec §2.1: the worst case, `UNKNOWN` with two
/// IPv6 addresses and two ports).
pub const V1_MAX_LEN: usize = 107;

/// The longest version 2 header accepted: the 16 fixed bytes, the address block and the TLVs.
///
/// 1,536 bytes: what HAProxy sends with every TLV it knows (a 216-byte UNIX address block, the
/// authority (at most 255 bytes of SNI), a 128-byte unique id, the SSL TLV with version, cipher,
/// algorithms and client CN: under 900 bytes in all) with room for a cloud balancer's custom
/// TLVs, while bounding what a connection holds before it is served.
pub const V2_MAX_LEN: usize = 1536;

/// The longest header of either version: how much a reader needs to buffer at most.
pub const MAX_LEN: usize = V2_MAX_LEN;

/// The version 2 signature (spec §2.2): twelve bytes no other protocol starts with.
pub const V2_SIGNATURE: [u8; 12] = *b"\r\n\r\n\0\r\nQUIT\n";

/// The version 1 signature, the space included (spec §2.1).
pub const V1_SIGNATURE: &[u8; 6] = b"PROXY ";

/// A parsed PROXY protocol header, borrowing the buffer it was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProxyHeader<'a> {
    /// Which version of the protocol the header uses.
    pub version: Version,
    /// Whether the connection is relayed ([`Command::Proxy`]) or the balancer's own
    /// ([`Command::Local`], e.g. a health check).
    pub command: Command,
    /// The original connection's endpoints, when the header gives them.
    pub addresses: Addresses<'a>,
    /// The header's length in bytes: the proxied connection's bytes start here.
    pub len: usize,
    /// The version 2 TLVs, already checked (empty for version 1).
    pub tlvs: Tlvs<'a>,
}

/// The protocol version of a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Version {
    /// The human-readable line (spec §2.1).
    V1,
    /// The binary header (spec §2.2).
    V2,
}

/// What the header says about the connection (spec §2.2, the 13th byte's low nibble).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Command {
    /// Relayed on behalf of a client: the addresses are the client's.
    Proxy,
    /// Made by the balancer itself (health checks): "the receiver must ... use the real
    /// connection endpoints". Version 1 `UNKNOWN` lines are read as this too.
    Local,
}

/// The original connection's endpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Addresses<'a> {
    /// None given (`UNKNOWN`, `LOCAL`, an `UNSPEC` family or transport): use the real endpoints.
    Unspecified,
    /// TCP (or UDP, version 2) over IPv4 or IPv6.
    Inet {
        /// The client's address.
        source: SocketAddr,
        /// The address the client connected to.
        destination: SocketAddr,
    },
    /// UNIX sockets (version 2): the paths, each up to its first NUL byte.
    Unix {
        /// The client's socket path.
        source: &'a [u8],
        /// The socket path the client connected to.
        destination: &'a [u8],
    },
}

impl ProxyHeader<'_> {
    /// The client's address when the header gives one over IP: `None` means "use the
    /// connection's own peer" (spec §2.1 `UNKNOWN`, §2.2 `LOCAL` and `UNSPEC`).
    pub fn source(&self) -> Option<SocketAddr> {
        match (self.command, self.addresses) {
            (Command::Proxy, Addresses::Inet { source, .. }) => Some(source),
            _ => None,
        }
    }
}

/// Why a PROXY protocol header was refused. The connection must be closed (spec §2.1: "Any
/// sequence which does not exactly match the protocol must be discarded and cause the receiver
/// to abort the connection").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProxyError {
    /// The bytes start with neither signature: no PROXY header (spec §2.2, end of the version
    /// detection rules).
    NotProxy,
    /// Version 1: no CRLF within [`V1_MAX_LEN`] bytes, or a lone CR or LF.
    V1TooLong,
    /// Version 1: the protocol is not `TCP4`, `TCP6` or `UNKNOWN`.
    V1Protocol,
    /// Version 1: fields not separated by exactly one space, missing or extra fields.
    V1Syntax,
    /// Version 1: an address is not in the canonical form of its family (no leading zeros in
    /// IPv4, hex groups in IPv6), or its family is not the announced one.
    V1Address,
    /// Version 1: a port is not a decimal in 0..=65535 without leading zeros.
    V1Port,
    /// Version 2: the version nibble is not 2.
    V2Version,
    /// Version 2: the command nibble is neither `LOCAL` nor `PROXY`.
    V2Command,
    /// Version 2: an address family or transport protocol outside the spec.
    V2Family,
    /// Version 2: the length announces fewer bytes than the family's address block.
    V2AddressLength,
    /// Version 2: the header is longer than [`V2_MAX_LEN`].
    V2TooLong,
    /// Version 2: a TLV runs past the header's end, or one of its values is malformed (an SSL
    /// TLV shorter than its fixed part, a CRC32C value that is not four bytes, a unique id over
    /// 128 bytes, a sub-TLV past the SSL TLV's end).
    V2Tlv,
    /// Version 2: the CRC32C TLV does not match the header (spec §2.2.3: "the receiver MUST
    /// treat the TCP connection providing the header as invalid").
    V2Checksum,
}

impl ProxyError {
    /// A short description, for logs.
    pub fn reason(self) -> &'static str {
        match self {
            ProxyError::NotProxy => "no PROXY protocol header",
            ProxyError::V1TooLong => "PROXY v1 line without CRLF within 107 bytes",
            ProxyError::V1Protocol => "PROXY v1 protocol not TCP4, TCP6 or UNKNOWN",
            ProxyError::V1Syntax => "PROXY v1 line malformed",
            ProxyError::V1Address => "PROXY v1 address malformed",
            ProxyError::V1Port => "PROXY v1 port malformed",
            ProxyError::V2Version => "PROXY v2 version not 2",
            ProxyError::V2Command => "PROXY v2 command unknown",
            ProxyError::V2Family => "PROXY v2 address family or transport unknown",
            ProxyError::V2AddressLength => "PROXY v2 address block truncated",
            ProxyError::V2TooLong => "PROXY v2 header too long",
            ProxyError::V2Tlv => "PROXY v2 TLV malformed",
            ProxyError::V2Checksum => "PROXY v2 CRC32C mismatch",
        }
    }
}

impl fmt::Display for ProxyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason())
    }
}

impl std::error::Error for ProxyError {}

/// Parses a PROXY protocol header (either version) at the start of `buf`.
///
/// `Partial` until the whole header has arrived; a prefix that can no longer become a header
/// fails at once, so a client speaking another protocol is turned away on its first bytes. The
/// header's [`len`](ProxyHeader::len) tells where the proxied bytes start.
///
/// # Errors
/// A [`ProxyError`] saying what is wrong: the connection is to be closed.
///
/// # Examples
/// ```
/// use peregrine::proxy_protocol::{parse, ProxyError, Status};
/// assert_eq!(parse(b"PROXY TCP4 1.2"), Ok(Status::Partial));
/// assert_eq!(parse(b"GET / HTTP/1.1\r\n"), Err(ProxyError::NotProxy));
/// ```
pub fn parse(buf: &[u8]) -> Result<Status<ProxyHeader<'_>>, ProxyError> {
    // Spec §2.2, version detection: the v2 signature, else "PROXY", else not this protocol.
    // Compared over what has arrived, so a short prefix of either is still `Partial`.
    if starts_like(buf, &V2_SIGNATURE) {
        if buf.len() < V2_SIGNATURE.len() {
            return Ok(Status::Partial);
        }
        return v2::parse(buf);
    }
    if starts_like(buf, V1_SIGNATURE) {
        if buf.len() < V1_SIGNATURE.len() {
            return Ok(Status::Partial);
        }
        return v1::parse(buf);
    }
    Err(ProxyError::NotProxy)
}

/// Whether `buf` and `signature` agree on their common prefix.
fn starts_like(buf: &[u8], signature: &[u8]) -> bool {
    let n = buf.len().min(signature.len());
    buf[..n] == signature[..n]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_the_version_from_any_prefix() {
        struct Case {
            input: &'static [u8],
            expect: Result<bool, ProxyError>,
        }
        // `Ok(true)`: partial.
        let cases = [
            Case { input: b"", expect: Ok(true) },
            Case { input: b"P", expect: Ok(true) },
            Case { input: b"PROXY", expect: Ok(true) },
            Case { input: b"PROXY ", expect: Ok(true) },
            Case { input: b"\r", expect: Ok(true) },
            Case { input: b"\r\n\r\n\0\r\nQUI", expect: Ok(true) },
            Case { input: b"\r\n\r\n\0\r\nQUIT\n", expect: Ok(true) },
            Case { input: b"PROXX", expect: Err(ProxyError::NotProxy) },
            Case { input: b"PROXY\t", expect: Err(ProxyError::NotProxy) },
            Case { input: b"GET / HTTP/1.1\r\n", expect: Err(ProxyError::NotProxy) },
            Case { input: b"\x16\x03\x01\x02\x00", expect: Err(ProxyError::NotProxy) },
            Case { input: b"\r\n\r\nGET", expect: Err(ProxyError::NotProxy) },
            Case { input: b"\r\n\r\n\0\r\nQUIT\r", expect: Err(ProxyError::NotProxy) },
        ];
        for case in cases {
            let got = parse(case.input).map(|s| s.is_partial());
            assert_eq!(got, case.expect, "{:?}", case.input);
        }
    }
}
