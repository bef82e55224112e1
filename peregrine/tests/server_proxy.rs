//! The PROXY protocol on a listener, over loopback: the client the balancer names reaches
//! handlers and the access log; every bad input (untrusted peer, no header, malformed,
//! oversized, slow) closes the connection unserved; without the option a header is a bad
//! request.

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use peregrine::server::{Config, ProxyProtocol, TlsConfig};
use peregrine::{Request, Server, ServerHandle};
use support::{RawClient, get, test_config, tls};

const SIG: &[u8; 12] = b"\r\n\r\n\0\r\nQUIT\n";

/// A v2 header: PROXY, TCP over IPv4, 203.0.113.7:40000 → 192.0.2.1:443, then `tlvs`.
fn v2(tlvs: &[u8]) -> Vec<u8> {
    let mut h = SIG.to_vec();
    h.extend_from_slice(&[0x21, 0x11]);
    h.extend_from_slice(&((12 + tlvs.len()) as u16).to_be_bytes());
    h.extend_from_slice(&[203, 0, 113, 7, 192, 0, 2, 1, 0x9c, 0x40, 0x01, 0xbb]);
    h.extend_from_slice(tlvs);
    h
}

/// Answers with what the request knows of its client.
async fn whoami(req: Request) -> String {
    let proxy = req.proxy();
    format!(
        "{:?} peer={:?} authority={:?} tls={:?}",
        req.remote_addr(),
        proxy.map(|p| p.peer_addr().ip()),
        proxy.and_then(|p| p.authority()),
        proxy.and_then(|p| p.tls()).and_then(|t| t.version()),
    )
}

/// A server reading the PROXY protocol from `trusted`, logging the client of each request.
fn proxied(trusted: &str, config: Config) -> (ServerHandle, Arc<Mutex<Vec<String>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = log.clone();
    let server = Server::bind("127.0.0.1:0")
        .workers(1)
        .config(config)
        .proxy_protocol(ProxyProtocol::new().trust(trusted.parse().unwrap()))
        .access_log(move |e| sink.lock().unwrap().push(format!("{} {}", e.remote_addr, e.status)))
        .spawn(whoami)
        .unwrap();
    (server, log)
}

/// A connection to `addr` from the loopback address `from`.
fn connect_from(from: &str, addr: SocketAddr) -> RawClient {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let local: SocketAddr = format!("{from}:0").parse().unwrap();
    socket.bind(&local.into()).unwrap();
    socket.connect(&addr.into()).unwrap();
    let stream: TcpStream = socket.into();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    RawClient::over(stream)
}

#[test]
fn v1_and_v2_clients_reach_handlers_and_the_access_log() {
    let (server, log) = proxied("127.0.0.0/8", test_config());
    let addr = server.local_addr();

    let mut c = RawClient::connect(addr);
    c.send(b"PROXY TCP4 198.51.100.9 192.0.2.1 51000 80\r\n");
    c.send(&get("/"));
    let res = c.response();
    assert_eq!(res.status, 200);
    let body = String::from_utf8(res.body).unwrap();
    assert_eq!(body, "Some(198.51.100.9:51000) peer=Some(127.0.0.1) authority=None tls=None");
    // The same connection's next request sees the same client.
    c.send(&get("/"));
    assert!(String::from_utf8(c.response().body).unwrap().starts_with("Some(198.51.100.9:51000)"));

    // v2 with an authority and an SSL TLV, the header and the request in one write.
    let ssl = b"\x20\x00\x0f\x01\0\0\0\0\x21\x00\x07TLSv1.3";
    let mut bytes = v2(&[&b"\x02\x00\x0bexample.com"[..], ssl].concat());
    bytes.extend_from_slice(&get("/"));
    let mut c = RawClient::connect(addr);
    c.send(&bytes);
    let body = String::from_utf8(c.response().body).unwrap();
    assert_eq!(
        body,
        "Some(203.0.113.7:40000) peer=Some(127.0.0.1) authority=Some(\"example.com\") \
         tls=Some(\"TLSv1.3\")"
    );

    // A header arriving a byte at a time is read whole.
    let mut c = RawClient::connect(addr);
    for b in v2(b"") {
        c.send(&[b]);
        std::thread::sleep(Duration::from_millis(2));
    }
    c.send(&get("/"));
    assert!(String::from_utf8(c.response().body).unwrap().starts_with("Some(203.0.113.7:40000)"));

    // LOCAL (a balancer's health check) and UNKNOWN: the connection's own peer.
    for header in [[&SIG[..], b"\x20\x00\x00\x00"].concat(), b"PROXY UNKNOWN\r\n".to_vec()] {
        let mut c = RawClient::connect(addr);
        c.send(&[header, get("/")].concat());
        let own = c.tcp().local_addr().unwrap();
        let body = String::from_utf8(c.response().body).unwrap();
        assert!(body.starts_with(&format!("Some({own}) peer=Some(127.0.0.1)")), "{body}");
    }

    let lines = log.lock().unwrap().clone();
    assert_eq!(
        lines[..4],
        [
            "198.51.100.9:51000 200",
            "198.51.100.9:51000 200",
            "203.0.113.7:40000 200",
            "203.0.113.7:40000 200"
        ]
    );
    server.shutdown();
    server.join().unwrap();
}

/// Every bad input closes the connection without a byte of answer, and logs nothing.
#[test]
fn bad_headers_close_the_connection_unserved() {
    let config = Config { header_read_timeout: Duration::from_millis(400), ..test_config() };
    let (server, log) = proxied("127.0.0.1", config);
    let addr = server.local_addr();
    let mut crc = v2(b"\x03\x00\x04\0\0\0\0");
    let n = crc.len();
    crc[n - 1] = 1; // not the checksum of the header
    let long_v1 = [&b"PROXY UNKNOWN "[..], &[b'x'; 120]].concat();
    let mut oversized = v2(b"");
    oversized[14..16].copy_from_slice(&2000u16.to_be_bytes());
    let cases: [(&str, Vec<u8>); 9] = [
        ("no header", get("/")),
        ("TLS without header", b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03".to_vec()),
        ("malformed v1", b"PROXY TCP4 1.2.3.4 5.6.7.8 01 2\r\n".to_vec()),
        ("v1 with LF only", b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\nGET / HTTP/1.1\r\n\r\n".to_vec()),
        ("v1 without CRLF in 107 bytes", long_v1),
        ("v2 oversized", oversized),
        ("v2 bad version", [&SIG[..], b"\x11\x11\x00\x00"].concat()),
        ("v2 truncated address", [&SIG[..], b"\x21\x11\x00\x04\x01\x02\x03\x04"].concat()),
        ("v2 CRC32C mismatch", crc),
    ];
    for (name, bytes) in cases {
        let mut c = RawClient::connect(addr);
        let _ = c.try_send(&bytes);
        let start = Instant::now();
        assert!(c.read_to_close().is_empty(), "{name}: answered");
        assert!(start.elapsed() < Duration::from_millis(300), "{name}: not closed at once");
    }
    // A partial header then silence: closed at the header timeout.
    let mut c = RawClient::connect(addr);
    c.send(b"PROXY TCP4 1.2.3.4 ");
    let start = Instant::now();
    assert!(c.read_to_close().is_empty());
    let waited = start.elapsed();
    assert!(waited >= Duration::from_millis(300) && waited < Duration::from_secs(3), "{waited:?}");
    // An untrusted peer (127.0.0.2; only 127.0.0.1 is trusted) with a valid header.
    let mut c = connect_from("127.0.0.2", addr);
    let _ = c.try_send(&[&b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n"[..], &get("/")].concat());
    assert!(c.read_to_close().is_empty(), "untrusted peer answered");
    assert!(log.lock().unwrap().is_empty(), "{:?}", log.lock().unwrap());
    // The server still serves a good one.
    let mut c = RawClient::connect(addr);
    c.send(&[&b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n"[..], &get("/")].concat());
    assert_eq!(c.response().status, 200);
    server.shutdown();
    server.join().unwrap();
}

/// Without the option, a PROXY header is an ordinary bad request.
#[test]
fn without_the_option_a_header_is_a_bad_request() {
    // As any malformed first line: 400 on an HTTP/1.1-only port; on a port that also speaks
    // h2c, closed unanswered (it could be an HTTP/2 client's broken preface).
    for h2c in [false, true] {
        let config = peregrine::server::Config { h2c, ..test_config() };
        let server = support::spawn_with(config, whoami);
        for header in [b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n".to_vec(), v2(b"")] {
            let mut c = RawClient::connect(server.local_addr());
            let _ = c.try_send(&[header, get("/")].concat());
            if h2c {
                assert!(c.closed_within(Duration::from_secs(2)));
                assert!(c.buffered().is_empty(), "served: {:?}", c.buffered());
            } else {
                assert_eq!(c.response().status, 400);
                assert!(c.closed_within(Duration::from_secs(2)));
            }
        }
        server.shutdown();
        server.join().unwrap();
    }
}

/// The header comes before TLS; the handshake bytes that arrive with it are not lost.
#[test]
fn tls_after_the_header() {
    let cert = tls::self_signed(&["localhost"]);
    let config = TlsConfig::from_pem(cert.cert_pem.as_bytes(), cert.key_pem.as_bytes()).unwrap();
    let server = Server::bind("127.0.0.1:0")
        .workers(1)
        .config(test_config())
        .tls(config)
        .proxy_protocol(ProxyProtocol::new().trust("127.0.0.1".parse().unwrap()))
        .spawn(whoami)
        .unwrap();
    let client = tls::client_config(&[&cert], &[b"http/1.1"]);
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let mut conn = rustls::ClientConnection::new(client, name).unwrap();
    // The ClientHello, sent in the same write as the PROXY header.
    let mut hello = Vec::new();
    conn.write_tls(&mut hello).unwrap();
    let mut tcp = support::tcp(server.local_addr());
    tcp.write_all(&[v2(b""), hello].concat()).unwrap();
    let mut stream = rustls::StreamOwned::new(conn, tcp);
    stream.write_all(&get("/")).unwrap();
    let mut got = Vec::new();
    let mut buf = [0; 1024];
    while !got.ends_with(b"tls=None") {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "closed: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8(got).unwrap();
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(text.contains("Some(203.0.113.7:40000) peer=Some(127.0.0.1)"), "{text}");
    server.shutdown();
    server.join().unwrap();
}
