//! `peregrine proxy` in front of backends that are not peregrine, over loopback: Python's
//! `http.server` (HTTP/1.0, a connection per response: lenient, as the smuggling checks
//! want it) and nginx (echoing the fields it received), each skipped with the reason printed
//! when its program is missing; and the requests a smuggler sends, refused by the proxy and
//! never passed to a backend that records every byte it receives.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod support;
use support::{Client, Foreign, Running, TempDir, free_port, get, installed};

/// Python's http.server behind the proxy: files and a listing, a 404, a request body it does
/// not take (501), each answer ending its connection and the next request opening another.
#[test]
fn python_http_server_behind_the_proxy() {
    if !installed("python3", "--version") {
        return;
    }
    let site = TempDir::new(&[("hello.txt", "hello from python\n")]);
    let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let port = addr.port().to_string();
    let dir = site.0.to_str().unwrap();
    let _python = Foreign::start(
        "python3",
        &["-m", "http.server", &port, "--bind", "127.0.0.1", "--directory", dir],
        addr,
    );
    let proxy = Running::proxy(&["--to", &format!("http://{addr}"), "--quiet", "--workers", "1"]);
    let mut client = Client::connect(proxy.addr);
    for _ in 0..3 {
        let (status, head, body) = client.get("/hello.txt");
        assert_eq!((status, body.as_str()), (200, "hello from python\n"), "{head}");
        // The backend's HTTP/1.0 close is its hop: the client's connection stays open.
        assert!(!head.to_ascii_lowercase().contains("connection: close"), "{head}");
    }
    let (status, _, listing) = client.get("/");
    assert_eq!(status, 200);
    assert!(listing.contains("hello.txt"), "{listing}");
    assert_eq!(client.get("/missing").0, 404);
    let (status, _, _) =
        client.send(b"POST /hello.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc");
    assert_eq!(status, 501, "http.server has no POST");
    assert_eq!(client.get("/hello.txt").0, 200);
}

/// nginx behind the proxy: a file, and an echo of the fields nginx received. Hop-by-hop fields
/// (Connection and those it names, Keep-Alive, TE, Upgrade) are gone, the forwarding fields
/// are the proxy's (a client's forged X-Forwarded-For replaced), Host is the client's.
#[test]
fn nginx_behind_the_proxy_sees_no_hop_by_hop_field() {
    if !installed("nginx", "-v") {
        return;
    }
    let site = TempDir::new(&[("index.html", "<h1>nginx</h1>")]);
    let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let root = site.0.display();
    let conf = format!(
        "daemon off; master_process off; worker_processes 1; pid {root}/nginx.pid;
         error_log {root}/error.log;
         events {{ worker_connections 64; }}
         http {{
           access_log off;
           client_body_temp_path {root}/body; proxy_temp_path {root}/proxy;
           fastcgi_temp_path {root}/fastcgi; uwsgi_temp_path {root}/uwsgi;
           scgi_temp_path {root}/scgi;
           server {{
             listen {addr};
             root {root};
             location = /echo {{
               default_type text/plain;
               return 200 'host=$http_host|xff=$http_x_forwarded_for|xfp=$http_x_forwarded_proto|xfh=$http_x_forwarded_host|via=$http_via|conn=$http_connection|ka=$http_keep_alive|te=$http_te|up=$http_upgrade|hop=$http_x_hop|keep=$http_x_keep';
             }}
           }}
         }}"
    );
    std::fs::write(site.0.join("nginx.conf"), conf).unwrap();
    let conf = site.0.join("nginx.conf");
    let prefix = format!("{root}/");
    let error_log = format!("{root}/error.log");
    let _nginx = Foreign::start(
        "nginx",
        &["-p", &prefix, "-e", &error_log, "-c", conf.to_str().unwrap()],
        addr,
    );
    let proxy = Running::proxy(&["--to", &format!("http://{addr}"), "--quiet", "--workers", "1"]);
    assert_eq!(get(proxy.addr, "/"), (200, "<h1>nginx</h1>".to_owned()));
    let mut client = Client::connect(proxy.addr);
    let (status, _, seen) = client.send(
        b"GET /echo HTTP/1.1\r\nHost: app.example\r\nConnection: keep-alive, X-Hop\r\n\
          X-Hop: secret\r\nX-Keep: kept\r\nKeep-Alive: timeout=5\r\nTE: trailers\r\n\
          Upgrade: websocket\r\nX-Forwarded-For: 6.6.6.6\r\n\r\n",
    );
    assert_eq!(status, 200);
    let fields: Vec<(&str, &str)> = seen.split('|').filter_map(|kv| kv.split_once('=')).collect();
    let field = |k: &str| fields.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
    assert_eq!(field("host"), Some("app.example"), "{seen}");
    assert_eq!(field("xff"), Some("127.0.0.1"), "{seen}");
    assert_eq!(field("xfp"), Some("http"), "{seen}");
    assert_eq!(field("xfh"), Some("app.example"), "{seen}");
    assert_eq!(field("via"), Some("1.1 peregrine"), "{seen}");
    assert_eq!(field("keep"), Some("kept"), "{seen}");
    for hop in ["ka", "up", "hop"] {
        assert_eq!(field(hop), Some(""), "{hop} passed on: {seen}");
    }
    // A TE that Connection does not name is not the client's hop's (RFC 9110 §10.1.4).
    assert_eq!(field("te"), Some(""), "{seen}");
    // The proxy's own connection to nginx may say keep-alive; never the client's list.
    assert!(matches!(field("conn"), Some("" | "keep-alive")), "{seen}");
    assert!(!seen.contains("6.6.6.6") && !seen.contains("secret") && !seen.contains("websocket"));
    // With Connection naming TE, trailers are asked for on the proxy's hop too, as its own
    // connection option.
    let (status, _, seen) = client.send(
        b"GET /echo HTTP/1.1\r\nHost: app.example\r\nConnection: TE, X-Hop\r\nTE: trailers\r\n\r\n",
    );
    assert_eq!(status, 200);
    assert!(seen.contains("|te=trailers|") && seen.contains("|conn=te|"), "{seen}");
}

/// A backend that records every byte it receives, per connection, and answers each request
/// head it reads with a fixed 200 (the requests it is sent here have no body).
struct Recorder {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<u8>>>,
    /// Connections the proxy ended.
    ended: Arc<AtomicUsize>,
}

impl Recorder {
    fn start() -> Recorder {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let ended = Arc::new(AtomicUsize::new(0));
        let (log, count) = (seen.clone(), ended.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let (log, count) = (log.clone(), count.clone());
                std::thread::spawn(move || {
                    let mut pending = Vec::new();
                    let mut buf = [0; 4096];
                    loop {
                        let n = match stream.read(&mut buf) {
                            Ok(0) | Err(_) => {
                                count.fetch_add(1, Ordering::SeqCst);
                                return;
                            }
                            Ok(n) => n,
                        };
                        log.lock().unwrap().extend_from_slice(&buf[..n]);
                        pending.extend_from_slice(&buf[..n]);
                        while let Some(i) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                            pending.drain(..i + 4);
                            let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nrecorded";
                            if stream.write_all(ok).is_err() {
                                return;
                            }
                        }
                    }
                });
            }
        });
        Recorder { addr, seen, ended }
    }

    fn seen(&self) -> String {
        String::from_utf8_lossy(&self.seen.lock().unwrap()).into_owned()
    }
}

/// What request smuggling sends (RFC 9112 §6.1, §6.3, §7.1; RFC 9110 §5.5), each on its own
/// connection to the proxy: refused with its status, and not a byte of it reaches the
/// backend; a good request then does (the recorder works).
#[test]
fn smuggling_attempts_are_refused_and_never_forwarded() {
    let backend = Recorder::start();
    let proxy =
        Running::proxy(&["--to", &format!("http://{}", backend.addr), "--quiet", "--workers", "1"]);
    struct Case {
        name: &'static str,
        request: &'static [u8],
        status: u16,
    }
    let cases = [
        Case {
            name: "CL.TE: Content-Length and Transfer-Encoding together",
            request: b"POST /cl-te HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\
                       Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
            status: 400,
        },
        Case {
            name: "TE.CL, the other order",
            request: b"POST /te-cl HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\
                       Content-Length: 4\r\n\r\n5c\r\nGPOST /smuggled HTTP/1.1\r\n\r\n0\r\n\r\n",
            status: 400,
        },
        Case {
            name: "a chunked coding that is not last",
            request: b"POST /te-order HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n",
            status: 400,
        },
        Case {
            name: "an obfuscated Transfer-Encoding",
            request: b"POST /te-x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n",
            status: 400,
        },
        Case {
            name: "a coding the server does not implement before chunked",
            request: b"POST /te-gzip HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
            status: 501,
        },
        Case {
            name: "whitespace before the colon",
            request: b"POST /ws HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n",
            status: 400,
        },
        Case {
            name: "two different Content-Lengths",
            request: b"POST /cl-cl HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
            status: 400,
        },
        Case {
            name: "a Content-Length list that disagrees",
            request: b"POST /cl-list HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 4\r\n\r\nabcd",
            status: 400,
        },
        Case {
            name: "an obsolete line folding",
            request: b"GET /fold HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n",
            status: 400,
        },
        Case {
            name: "a bare LF ending a field line",
            request: b"GET /lf HTTP/1.1\r\nHost: x\r\nX-A: a\nTransfer-Encoding: chunked\r\n\r\n",
            status: 400,
        },
        Case {
            name: "two Hosts",
            request: b"GET /hosts HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
            status: 400,
        },
    ];
    for c in &cases {
        let mut client = Client::connect(proxy.addr);
        let (status, head, _) = client.send(c.request);
        assert_eq!(status, c.status, "{}: {head}", c.name);
    }
    // Bad chunked bodies: refused, and no complete request (nor a byte of its body) reaches
    // the backend; the head may have gone ahead of the body, but the upstream connection ends
    // before the message does.
    let bad_bodies: [(&str, &[u8]); 3] = [
        ("a chunk size that is not hex", b"POST /bad-size HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nsmuggled\r\n0\r\n\r\n"),
        ("a chunk longer than its size", b"POST /bad-len HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nsmuggled\r\n0\r\n\r\n"),
        ("a chunk size that overflows", b"POST /bad-big HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\nsmuggled\r\n0\r\n\r\n"),
    ];
    for (name, request) in bad_bodies {
        let mut client = Client::connect(proxy.addr);
        client.stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let (status, head, _) = client.send(request);
        assert!(status == 400 || status == 502, "{name}: {head}");
    }
    std::thread::sleep(Duration::from_millis(200));
    let seen = backend.seen();
    // The bytes after the point each body broke never go: a chunk's valid prefix ("smu" of
    // the chunk of 3) may have been streamed ahead, the rest ("ggled") may not.
    assert!(!seen.contains("ggled"), "a smuggled request or body reached the backend:\n{seen}");
    if seen.contains("POST /bad-len ") {
        assert!(
            backend.ended.load(Ordering::SeqCst) >= 1,
            "the upstream connection of a broken body was not ended"
        );
    }
    for c in &cases {
        let path = std::str::from_utf8(c.request).unwrap().split(' ').nth(1).unwrap();
        assert!(!seen.contains(&format!(" {path} ")), "{}: reached the backend:\n{seen}", c.name);
    }
    // What reached it of the bad bodies: never a body's last chunk.
    assert!(!seen.contains("0\r\n\r\n"), "a whole chunked body reached the backend:\n{seen}");

    let (status, body) = get(proxy.addr, "/good");
    assert_eq!((status, body.as_str()), (200, "recorded"));
    assert!(backend.seen().contains("GET /good HTTP/1.1\r\n"), "{}", backend.seen());
}

/// A request with CR, LF or NUL in a field value over HTTP/2 never reaches an HTTP/1.1
/// backend as a split line: HPACK carries the bytes, the server refuses them (RFC 9113 §8.2.1:
/// the stream is reset or answered 400), and the recorder sees nothing of it. One row per
/// character, in a value and in a pseudo-header's.
#[test]
fn http2_field_values_with_cr_lf_nul_never_reach_an_http1_backend() {
    let backend = Recorder::start();
    let proxy = Running::proxy(&["--to", &format!("http://{}", backend.addr), "--quiet"]);
    let cases: [(&[u8], &[u8]); 6] = [
        (b"x-a", b"a\r\nX-Injected: smuggled"),
        (b"x-a", b"a\rX-Injected: smuggled"),
        (b"x-a", b"a\nX-Injected: smuggled"),
        (b"x-a", b"a\0X-Injected: smuggled"),
        (b":authority", b"x\r\nX-Injected: smuggled"),
        (b"x-a", b"a\r\n\r\nGET /smuggled HTTP/1.1"),
    ];
    for (name, value) in cases {
        // h2c by prior knowledge: the preface, an empty SETTINGS, then HEADERS (END_STREAM,
        // END_HEADERS) with literal fields without indexing (RFC 7541 §6.2.2).
        let mut block = Vec::new();
        let mut literal = |name: &[u8], value: &[u8]| {
            block.push(0x00);
            block.push(name.len() as u8);
            block.extend_from_slice(name);
            block.push(value.len() as u8);
            block.extend_from_slice(value);
        };
        literal(b":method", b"GET");
        literal(b":scheme", b"http");
        literal(b":path", b"/h2");
        if name != b":authority" {
            literal(b":authority", b"x");
        }
        literal(name, value);
        let mut wire = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        wire.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
        let len = block.len();
        wire.extend_from_slice(&[
            (len >> 16) as u8,
            (len >> 8) as u8,
            len as u8,
            1,
            0x05,
            0,
            0,
            0,
            1,
        ]);
        wire.extend_from_slice(&block);
        let mut stream = TcpStream::connect(proxy.addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        stream.write_all(&wire).unwrap();
        // Read what the server answers (SETTINGS, then a RST_STREAM, a GOAWAY or a 400) until
        // it goes quiet or closes.
        let mut answer = Vec::new();
        let mut buf = [0; 4096];
        while let Ok(n) = stream.read(&mut buf) {
            if n == 0 {
                break;
            }
            answer.extend_from_slice(&buf[..n]);
            if answer.len() > 9 && frames(&answer).iter().any(|&t| t == 3 || t == 7 || t == 1) {
                break;
            }
        }
        let what = String::from_utf8_lossy(value).into_owned();
        assert!(
            frames(&answer).iter().any(|&t| t == 3 || t == 7 || t == 1),
            "{what:?}: no RST_STREAM, GOAWAY or response: {answer:?}"
        );
    }
    std::thread::sleep(Duration::from_millis(200));
    let seen = backend.seen();
    assert!(!seen.contains("smuggled") && !seen.contains("/h2"), "{seen}");
    assert_eq!(get(proxy.addr, "/after").0, 200);
}

/// The types of the HTTP/2 frames in `bytes`.
fn frames(mut bytes: &[u8]) -> Vec<u8> {
    let mut types = Vec::new();
    while bytes.len() >= 9 {
        let len = usize::from(bytes[0]) << 16 | usize::from(bytes[1]) << 8 | usize::from(bytes[2]);
        types.push(bytes[3]);
        bytes = &bytes[(9 + len).min(bytes.len())..];
    }
    types
}
