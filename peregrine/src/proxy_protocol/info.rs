//! What a connection keeps of its PROXY header once the buffer it was read from is reused: the
//! addresses and the TLVs a handler may want, owned.

use std::net::SocketAddr;

use super::tlv::{SSL_FIXED, TlvIter, TlvType};
use super::{Addresses, ProxyHeader, Version};

/// What a load balancer's PROXY protocol header said about a connection.
///
/// The server builds one per connection (shared by its requests) on a listener with the PROXY
/// protocol on; a handler reads it with [`Request::proxy`](crate::Request::proxy).
///
/// # Examples
/// ```
/// use peregrine::proxy_protocol::{parse, ProxyInfo, Status};
///
/// let bytes = b"PROXY TCP4 203.0.113.7 192.0.2.1 40000 443\r\n";
/// let Status::Complete(header) = parse(bytes).unwrap() else { unreachable!() };
/// let info = ProxyInfo::new(&header, "10.0.0.2:51000".parse().unwrap());
/// assert_eq!(info.client_addr().to_string(), "203.0.113.7:40000");
/// assert_eq!(info.peer_addr().to_string(), "10.0.0.2:51000");
/// assert_eq!(info.authority(), None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProxyInfo {
    version: Version,
    peer: SocketAddr,
    source: Option<SocketAddr>,
    destination: Option<SocketAddr>,
    authority: Option<Box<str>>,
    alpn: Option<Box<[u8]>>,
    unique_id: Option<Box<[u8]>>,
    tls: Option<TlsInfo>,
}

impl ProxyInfo {
    /// Keeps what `header` says, for a connection whose TCP peer (the balancer) is `peer`.
    pub fn new(header: &ProxyHeader<'_>, peer: SocketAddr) -> ProxyInfo {
        let tlvs = header.tlvs;
        let boxed = |kind| tlvs.get(kind).map(Box::<[u8]>::from);
        let destination = match header.addresses {
            Addresses::Inet { destination, .. } if header.source().is_some() => Some(destination),
            _ => None,
        };
        ProxyInfo {
            version: header.version,
            peer,
            source: header.source(),
            destination,
            authority: tlvs.get(TlvType::AUTHORITY).and_then(text),
            alpn: boxed(TlvType::ALPN),
            unique_id: boxed(TlvType::UNIQUE_ID),
            tls: tlvs.get(TlvType::SSL).map(TlsInfo::new),
        }
    }

    /// The client's address: the one the header reports, or the connection's own peer when it
    /// reports none (`UNKNOWN`, `LOCAL`, an unspecified or UNIX family).
    pub fn client_addr(&self) -> SocketAddr {
        self.source.unwrap_or(self.peer)
    }

    /// The connection's TCP peer: the balancer.
    pub fn peer_addr(&self) -> SocketAddr {
        self.peer
    }

    /// The client's address as the header reports it, if it does.
    pub fn source(&self) -> Option<SocketAddr> {
        self.source
    }

    /// The address the client connected to (the balancer's frontend), if reported.
    pub fn destination(&self) -> Option<SocketAddr> {
        self.destination
    }

    /// Which version of the protocol the header used.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The host name the client asked the balancer for (`PP2_TYPE_AUTHORITY`, usually TLS
    /// SNI), when sent and valid UTF-8.
    pub fn authority(&self) -> Option<&str> {
        self.authority.as_deref()
    }

    /// The application protocol negotiated with the client (`PP2_TYPE_ALPN`), if sent.
    pub fn alpn(&self) -> Option<&[u8]> {
        self.alpn.as_deref()
    }

    /// The balancer's id for the connection (`PP2_TYPE_UNIQUE_ID`, at most 128 bytes), if sent.
    pub fn unique_id(&self) -> Option<&[u8]> {
        self.unique_id.as_deref()
    }

    /// The client's TLS connection to the balancer (`PP2_TYPE_SSL`), if sent.
    pub fn tls(&self) -> Option<&TlsInfo> {
        self.tls.as_ref()
    }
}

/// The client's TLS connection as the balancer reports it (`PP2_TYPE_SSL`, spec §2.2.6).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsInfo {
    client: u8,
    verify: u32,
    version: Option<Box<str>>,
    cipher: Option<Box<str>>,
    sig_alg: Option<Box<str>>,
    key_alg: Option<Box<str>>,
    client_cn: Option<Box<str>>,
}

impl TlsInfo {
    /// `PP2_CLIENT_SSL`: the client connected over TLS.
    pub const CLIENT_SSL: u8 = 0x01;
    /// `PP2_CLIENT_CERT_CONN`: the client presented a certificate on this connection.
    pub const CLIENT_CERT_CONN: u8 = 0x02;
    /// `PP2_CLIENT_CERT_SESS`: the client presented a certificate in this TLS session.
    pub const CLIENT_CERT_SESS: u8 = 0x04;

    /// Reads an SSL TLV's value (checked by the parser: at least its fixed part).
    fn new(value: &[u8]) -> TlsInfo {
        let Some((&[client, a, b, c, d], _)) = value.split_first_chunk::<SSL_FIXED>() else {
            return TlsInfo::default();
        };
        let mut info =
            TlsInfo { client, verify: u32::from_be_bytes([a, b, c, d]), ..Default::default() };
        for sub in TlvIter::ssl_sub_tlvs(value) {
            let slot = match sub.kind {
                TlvType::SSL_VERSION => &mut info.version,
                TlvType::SSL_CIPHER => &mut info.cipher,
                TlvType::SSL_SIG_ALG => &mut info.sig_alg,
                TlvType::SSL_KEY_ALG => &mut info.key_alg,
                TlvType::SSL_CN => &mut info.client_cn,
                _ => continue,
            };
            if slot.is_none() {
                *slot = text(sub.value);
            }
        }
        info
    }

    /// The `client` bit field ([`TlsInfo::CLIENT_SSL`] and the others).
    pub fn client_flags(&self) -> u8 {
        self.client
    }

    /// Whether the client's certificate was presented and verified (`verify` is zero).
    pub fn verified(&self) -> bool {
        self.verify == 0 && self.client & (Self::CLIENT_CERT_CONN | Self::CLIENT_CERT_SESS) != 0
    }

    /// The TLS version, e.g. `TLSv1.3`.
    pub fn version(&self) -> Option<&str> {
        self.version.as_deref()
    }

    /// The cipher, e.g. `TLS_AES_256_GCM_SHA384`.
    pub fn cipher(&self) -> Option<&str> {
        self.cipher.as_deref()
    }

    /// The signature algorithm of the balancer's certificate, e.g. `RSA-SHA256`.
    pub fn sig_alg(&self) -> Option<&str> {
        self.sig_alg.as_deref()
    }

    /// The key algorithm of the balancer's certificate, e.g. `RSA2048`.
    pub fn key_alg(&self) -> Option<&str> {
        self.key_alg.as_deref()
    }

    /// The Common Name of the client certificate's subject.
    pub fn client_cn(&self) -> Option<&str> {
        self.client_cn.as_deref()
    }
}

/// A TLV value as text, when it is UTF-8.
fn text(value: &[u8]) -> Option<Box<str>> {
    std::str::from_utf8(value).ok().map(Box::from)
}

#[cfg(test)]
mod tests {
    use super::super::{Status, V2_SIGNATURE, parse};
    use super::*;

    #[test]
    fn keeps_the_tlvs_handlers_read() {
        let mut tlvs = Vec::new();
        tlvs.extend_from_slice(b"\x01\x00\x02h2\x02\x00\x0bexample.com\x05\x00\x03id7");
        let sub = b"\x21\x00\x07TLSv1.3\x22\x00\x05alice\x23\x00\x16TLS_AES_256_GCM_SHA384";
        tlvs.push(0x20);
        tlvs.extend_from_slice(&((5 + sub.len()) as u16).to_be_bytes());
        tlvs.extend_from_slice(&[0x07, 0, 0, 0, 0]);
        tlvs.extend_from_slice(sub);
        let mut h = V2_SIGNATURE.to_vec();
        h.extend_from_slice(&[0x21, 0x11]);
        h.extend_from_slice(&((12 + tlvs.len()) as u16).to_be_bytes());
        h.extend_from_slice(&[203, 0, 113, 7, 192, 0, 2, 1, 0x9c, 0x40, 0x01, 0xbb]);
        h.extend_from_slice(&tlvs);
        let Ok(Status::Complete(header)) = parse(&h) else { panic!() };
        let info = ProxyInfo::new(&header, "127.0.0.1:9".parse().unwrap());
        assert_eq!(info.client_addr().to_string(), "203.0.113.7:40000");
        assert_eq!(info.destination().map(|d| d.to_string()), Some("192.0.2.1:443".into()));
        assert_eq!(info.version(), Version::V2);
        assert_eq!(info.alpn(), Some(&b"h2"[..]));
        assert_eq!(info.authority(), Some("example.com"));
        assert_eq!(info.unique_id(), Some(&b"id7"[..]));
        let tls = info.tls().unwrap();
        assert_eq!(tls.version(), Some("TLSv1.3"));
        assert_eq!(tls.client_cn(), Some("alice"));
        assert_eq!(tls.cipher(), Some("TLS_AES_256_GCM_SHA384"));
        assert_eq!(tls.sig_alg(), None);
        assert!(tls.verified());
    }

    #[test]
    fn local_headers_keep_the_peer() {
        let Ok(Status::Complete(header)) = parse(b"PROXY UNKNOWN\r\n") else { panic!() };
        let info = ProxyInfo::new(&header, "127.0.0.2:7".parse().unwrap());
        assert_eq!(info.client_addr(), info.peer_addr());
        assert_eq!((info.source(), info.destination(), info.tls()), (None, None, None));
    }
}
