//! The PROXY protocol on a listener: which peers may send it, and reading it off a new
//! connection before anything else (before TLS, before any HTTP byte).
//!
//! The header tells the address of the client a load balancer relays; a peer outside the
//! trusted networks could claim any address with it, so such a peer is closed unserved (spec
//! §5: the receiver "SHOULD ensure proper access filtering so that only trusted proxies are
//! allowed to use this protocol"), and so is a connection whose header is missing, malformed,
//! oversized or slow (it must arrive within `Config::header_read_timeout` of the accept).

use std::fmt;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;

use bytes::{Buf, BytesMut};
use tokio::net::TcpStream;

use crate::net;
use crate::proxy_protocol::{self, ProxyError, ProxyInfo, Status};

/// Reads the PROXY protocol on every listener of a [`Server`](crate::Server), from peers in
/// trusted networks only.
///
/// Once on, a listener expects the header on every connection (spec §2: the receiver "MUST
/// not try to guess whether the protocol header is present or not"): a connection from outside
/// the trusted networks, without a header, or with a malformed or oversized one is closed
/// without an answer, and the access log does not see it. Versions 1 and 2 are both read.
///
/// # Examples
/// ```
/// use peregrine::server::{Network, ProxyProtocol};
/// use peregrine::{Request, Server};
///
/// let proxy = ProxyProtocol::new().trust("10.0.0.0/8".parse::<Network>().unwrap());
/// let server = Server::bind("0.0.0.0:8080").proxy_protocol(proxy);
/// # let _ = server;
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProxyProtocol {
    trusted: Vec<Network>,
}

impl ProxyProtocol {
    /// The PROXY protocol, trusting no peer yet (add networks with [`ProxyProtocol::trust`]).
    pub fn new() -> ProxyProtocol {
        ProxyProtocol::default()
    }

    /// Also accepts the header from peers in `network`.
    pub fn trust(mut self, network: Network) -> ProxyProtocol {
        self.trusted.push(network);
        self
    }

    /// The trusted networks.
    pub fn trusted(&self) -> &[Network] {
        &self.trusted
    }

    /// Whether a peer at `ip` may send the header.
    pub fn is_trusted(&self, ip: IpAddr) -> bool {
        self.trusted.iter().any(|n| n.contains(ip))
    }
}

/// An IP network: an address and a prefix length, written `10.0.0.0/8`, `::1/128`, or a
/// bare address for a single host.
///
/// # Examples
/// ```
/// use peregrine::server::Network;
/// let net: Network = "192.168.0.0/16".parse().unwrap();
/// assert!(net.contains("192.168.4.2".parse().unwrap()));
/// assert!(net.contains("::ffff:192.168.4.2".parse().unwrap()));
/// assert!(!net.contains("10.0.0.1".parse().unwrap()));
/// assert!("192.168.0.1/16".parse::<Network>().is_err()); // host bits set
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Network {
    addr: IpAddr,
    prefix: u8,
}

impl Network {
    /// The network of `addr` with a prefix of `prefix` bits.
    ///
    /// # Errors
    /// A prefix longer than the address, or bits set in `addr` past the prefix.
    pub fn new(addr: IpAddr, prefix: u8) -> Result<Network, InvalidNetwork> {
        let bits = if addr.is_ipv4() { 32 } else { 128 };
        if prefix > bits || mask(addr, prefix) != addr {
            return Err(InvalidNetwork);
        }
        Ok(Network { addr, prefix })
    }

    /// Whether `ip` is in this network. An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, as a
    /// dual-stack socket reports IPv4 peers) counts as its IPv4 address.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        ip.is_ipv4() == self.addr.is_ipv4() && mask(ip, self.prefix) == self.addr
    }
}

/// `addr` with the bits past `prefix` cleared.
fn mask(addr: IpAddr, prefix: u8) -> IpAddr {
    match addr {
        IpAddr::V4(a) => {
            let m = u32::MAX.checked_shl(32 - u32::from(prefix.min(32))).unwrap_or(0);
            IpAddr::V4((u32::from(a) & m).into())
        }
        IpAddr::V6(a) => {
            let m = u128::MAX.checked_shl(128 - u32::from(prefix.min(128))).unwrap_or(0);
            IpAddr::V6((u128::from(a) & m).into())
        }
    }
}

impl FromStr for Network {
    type Err = InvalidNetwork;

    fn from_str(s: &str) -> Result<Network, InvalidNetwork> {
        let (addr, prefix) = match s.split_once('/') {
            Some((addr, prefix)) => (addr, Some(prefix)),
            None => (s, None),
        };
        let addr: IpAddr = addr.parse().map_err(|_| InvalidNetwork)?;
        let prefix = match prefix {
            // Decimal digits only: no sign, no spaces.
            Some(p) if !p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit()) => {
                p.parse().map_err(|_| InvalidNetwork)?
            }
            Some(_) => return Err(InvalidNetwork),
            None if addr.is_ipv4() => 32,
            None => 128,
        };
        Network::new(addr, prefix)
    }
}

impl fmt::Display for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// A network that is not an address with an optional `/prefix` in range and no host bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidNetwork;

impl fmt::Display for InvalidNetwork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a network (ADDRESS or ADDRESS/PREFIX, no bits set past the prefix)")
    }
}

impl std::error::Error for InvalidNetwork {}

/// Why a PROXY header could not be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The bytes are not a valid header.
    Proxy(ProxyError),
    /// The peer closed before the header was whole, or the socket failed.
    Io(io::Error),
}

/// Reads a PROXY header from `stream` into `buf` (empty at first), for a connection whose TCP
/// peer is `peer`. On success the header is consumed from `buf`, which keeps whatever bytes
/// followed it (the start of the request, or of the TLS handshake).
///
/// Reads are bounded: the parser refuses a header longer than
/// [`proxy_protocol::MAX_LEN`] as soon as it can tell, so `buf` never holds more than that
/// plus one read of what follows.
///
/// # Cancel safety
/// Not cancel safe; the caller times it and drops the connection on timeout.
pub(crate) async fn read_header(
    stream: &TcpStream,
    buf: &mut BytesMut,
    peer: SocketAddr,
) -> Result<ProxyInfo, ReadError> {
    loop {
        match proxy_protocol::parse(buf) {
            Ok(Status::Complete(header)) => {
                let (info, len) = (ProxyInfo::new(&header, peer), header.len);
                buf.advance(len);
                return Ok(info);
            }
            Ok(Status::Partial) => {}
            Err(e) => return Err(ReadError::Proxy(e)),
        }
        if buf.capacity() - buf.len() < proxy_protocol::MAX_LEN {
            buf.reserve(proxy_protocol::MAX_LEN);
        }
        match net::accept::read_some(stream, buf).await {
            Ok(0) => return Err(ReadError::Io(io::ErrorKind::UnexpectedEof.into())),
            Ok(_) => {}
            Err(e) => return Err(ReadError::Io(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn networks() {
        struct Case {
            input: &'static str,
            expect: Option<&'static str>,
        }
        let cases = [
            Case { input: "10.0.0.0/8", expect: Some("10.0.0.0/8") },
            Case { input: "127.0.0.1", expect: Some("127.0.0.1/32") },
            Case { input: "0.0.0.0/0", expect: Some("0.0.0.0/0") },
            Case { input: "::1", expect: Some("::1/128") },
            Case { input: "fd00::/8", expect: Some("fd00::/8") },
            Case { input: "::/0", expect: Some("::/0") },
            Case { input: "10.0.0.1/8", expect: None },
            Case { input: "10.0.0.0/33", expect: None },
            Case { input: "::/129", expect: None },
            Case { input: "10.0.0.0/", expect: None },
            Case { input: "10.0.0.0/+8", expect: None },
            Case { input: "10.0.0.0/ 8", expect: None },
            Case { input: "10.0.0/8", expect: None },
            Case { input: "example.com", expect: None },
            Case { input: "", expect: None },
        ];
        for case in cases {
            let got = case.input.parse::<Network>().ok().map(|n| n.to_string());
            assert_eq!(got.as_deref(), case.expect, "{}", case.input);
        }
    }

    #[test]
    fn membership() {
        struct Case {
            network: &'static str,
            ip: &'static str,
            expect: bool,
        }
        let cases = [
            Case { network: "10.0.0.0/8", ip: "10.255.0.1", expect: true },
            Case { network: "10.0.0.0/8", ip: "11.0.0.1", expect: false },
            Case { network: "10.0.0.0/8", ip: "::ffff:10.1.2.3", expect: true },
            Case { network: "127.0.0.2", ip: "127.0.0.2", expect: true },
            Case { network: "127.0.0.2", ip: "127.0.0.1", expect: false },
            Case { network: "0.0.0.0/0", ip: "203.0.113.9", expect: true },
            Case { network: "0.0.0.0/0", ip: "2001:db8::1", expect: false },
            Case { network: "::/0", ip: "2001:db8::1", expect: true },
            Case { network: "2001:db8::/32", ip: "2001:db8:ffff::1", expect: true },
            Case { network: "2001:db8::/32", ip: "2001:db9::1", expect: false },
        ];
        for case in cases {
            let net: Network = case.network.parse().unwrap();
            let ip: IpAddr = case.ip.parse().unwrap();
            assert_eq!(net.contains(ip), case.expect, "{} in {}", case.ip, case.network);
        }
        let proxy = ProxyProtocol::new().trust("10.0.0.0/8".parse().unwrap());
        assert!(proxy.is_trusted("10.1.1.1".parse().unwrap()));
        assert!(!ProxyProtocol::new().is_trusted("10.1.1.1".parse().unwrap()));
    }
}
