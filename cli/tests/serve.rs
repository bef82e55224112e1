//! `peregrine serve` end to end: the real binary on a temporary directory, on 127.0.0.1 with a
//! port the kernel picks (`--addr 127.0.0.1:0`, the printed URL tells which), checked with a
//! small raw HTTP/1.1 client.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_peregrine");
const SECRET: &[u8] = b"TOP SECRET";

/// A temporary tree: `base/www` is served, `base/outside/secret.txt` must stay unreachable.
struct Tree {
    base: PathBuf,
    www: PathBuf,
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

fn tree() -> Tree {
    static N: AtomicUsize = AtomicUsize::new(0);
    let base = std::env::temp_dir().join(format!(
        "peregrine-cli-serve-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&base);
    let www = base.join("www");
    let w = |rel: &str, data: &[u8]| {
        let p = www.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, data).unwrap();
    };
    w("hello.txt", b"hello world\n");
    w("index-less/<script>&\"'.txt", b"escaped");
    w("index-less/b.txt", b"b");
    w("site/index.html", b"<h1>site</h1>");
    w("app.js", b"console.log(1)");
    w("app.js.gz", b"GZIPPED");
    w(".env", SECRET);
    w("big.bin", &(0..2_000_000u32).map(|i| (i % 251) as u8).collect::<Vec<_>>());
    std::fs::create_dir_all(base.join("outside")).unwrap();
    std::fs::write(base.join("outside/secret.txt"), SECRET).unwrap();
    std::os::unix::fs::symlink(base.join("outside/secret.txt"), www.join("link-out.txt")).unwrap();
    std::os::unix::fs::symlink("../outside", www.join("dir-out")).unwrap();
    Tree { base, www }
}

/// The running binary; killed when dropped if still running.
struct Served {
    child: Child,
    addr: SocketAddr,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Served {
    fn start(dir: &Path, extra: &[&str]) -> Served {
        let mut child = Command::new(BIN)
            .arg("serve")
            .arg(dir)
            .args(["--addr", "127.0.0.1:0"])
            // Tests that stop the server wait for no balancer (unless they set it).
            .args(["--drain-grace", "0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start peregrine");
        let mut line = String::new();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        stdout.read_line(&mut line).unwrap();
        // "Serving <dir> on http://127.0.0.1:PORT"
        let url = line.trim_end().rsplit(' ').next().unwrap_or_default();
        let addr = url.strip_prefix("http://").or_else(|| url.strip_prefix("https://"));
        let addr = addr.and_then(|a| a.parse().ok());
        let Some(addr) = addr else {
            let _ = child.kill();
            panic!("no URL in {line:?}");
        };
        assert!(line.starts_with("Serving "), "{line}");
        Served { child, addr, stdout }
    }

    /// The next line the server printed on stdout.
    fn next_line(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        line
    }

    /// Whatever else the server printed on stdout, once it has exited or closed it (reads
    /// only what is buffered now, without blocking on a live server).
    fn stdout_rest(&self, out: &mut String) -> std::io::Result<usize> {
        let buffered = String::from_utf8_lossy(self.stdout.buffer()).into_owned();
        out.push_str(&buffered);
        Ok(buffered.len())
    }

    /// Sends SIGTERM and waits for the exit; returns the status and everything on stderr.
    fn terminate(mut self) -> (ExitStatus, String) {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(sent.success());
        let status = wait_with_deadline(&mut self.child, Duration::from_secs(10));
        let mut err = String::new();
        let mut stderr: ChildStderr = self.child.stderr.take().unwrap();
        stderr.read_to_string(&mut err).unwrap();
        (status, err)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_with_deadline(child: &mut Child, limit: Duration) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(start.elapsed() < limit, "process did not exit within {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// A tiny HTTP/1.1 client: one keep-alive connection, Content-Length framing only (which is
/// all a static-file server sends).
struct Client {
    stream: TcpStream,
    buf: Vec<u8>,
}

/// `read`, retried when a signal interrupts it (`read` itself does not retry on EINTR; a CI run
/// saw one during the 1 GiB transfer).
fn read_some(stream: &mut TcpStream, buf: &mut [u8]) -> std::io::Result<usize> {
    loop {
        match stream.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

impl Client {
    fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        Client { stream, buf: Vec::new() }
    }

    fn fill(&mut self) -> usize {
        let mut chunk = vec![0; 64 * 1024];
        let n = read_some(&mut self.stream, &mut chunk).expect("read");
        self.buf.extend_from_slice(&chunk[..n]);
        n
    }

    fn request(&mut self, method: &str, target: &str, extra: &[(&str, &str)]) -> Reply {
        let mut req = format!("{method} {target} HTTP/1.1\r\nHost: localhost\r\n");
        for (n, v) in extra {
            req.push_str(&format!("{n}: {v}\r\n"));
        }
        req.push_str("\r\n");
        self.stream.write_all(req.as_bytes()).unwrap();
        let end = loop {
            if let Some(i) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i;
            }
            assert!(self.fill() > 0, "connection closed before a response head");
        };
        let head = String::from_utf8(self.buf[..end].to_vec()).unwrap();
        self.buf.drain(..end + 4);
        let mut lines = head.split("\r\n");
        let status: u16 = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
        let headers: Vec<(String, String)> = lines
            .map(|l| {
                let (n, v) = l.split_once(':').unwrap();
                (n.to_owned(), v.trim().to_owned())
            })
            .collect();
        let mut reply = Reply { status, headers, body: Vec::new() };
        if method == "HEAD" || method == "OPTIONS" || status == 304 || status == 204 {
            return reply;
        }
        let len: usize = reply.header("content-length").expect("content-length").parse().unwrap();
        while self.buf.len() < len {
            assert!(self.fill() > 0, "connection closed inside a body");
        }
        reply.body = self.buf.drain(..len).collect();
        reply
    }

    fn get(&mut self, target: &str) -> Reply {
        self.request("GET", target, &[])
    }
}

#[test]
fn serves_files_with_types_validators_and_head() {
    let t = tree();
    let s = Served::start(&t.www, &["--quiet", "--cache-control", "public, max-age=60"]);
    let mut c = Client::connect(s.addr);
    let r = c.get("/hello.txt");
    assert_eq!((r.status, r.body.as_slice()), (200, &b"hello world\n"[..]));
    assert_eq!(r.header("content-type"), Some("text/plain; charset=utf-8"));
    assert_eq!(r.header("cache-control"), Some("public, max-age=60"));
    assert_eq!(r.header("accept-ranges"), Some("bytes"));
    assert!(r.header("etag").is_some_and(|e| e.starts_with('"')));
    assert!(r.header("last-modified").is_some_and(|d| d.ends_with("GMT")));

    // RFC 9110 §9.3.2: HEAD, same headers, no body (the next answer on the connection would
    // be garbled if one were sent).
    let h = c.request("HEAD", "/big.bin", &[]);
    assert_eq!((h.status, h.header("content-length")), (200, Some("2000000")));

    // Large files arrive whole.
    let big = c.get("/big.bin");
    assert_eq!(big.body, std::fs::read(t.www.join("big.bin")).unwrap());

    // Directories: redirect to the slash form, index.html, listing.
    let r = c.get("/site");
    assert_eq!((r.status, r.header("location")), (301, Some("site/")));
    assert_eq!(c.get("/site/").body, b"<h1>site</h1>");

    // Only GET, HEAD and OPTIONS (RFC 9110 §15.5.6, §9.3.7).
    for m in ["POST", "PUT", "DELETE"] {
        let r = c.request(m, "/hello.txt", &[("Content-Length", "0")]);
        assert_eq!((r.status, r.header("allow")), (405, Some("GET, HEAD, OPTIONS")), "{m}");
    }
    let r = c.request("OPTIONS", "/hello.txt", &[]);
    assert_eq!((r.status, r.header("allow")), (204, Some("GET, HEAD, OPTIONS")));

    // Precompressed sibling (RFC 9110 §12.5.3), Content-Type of the original.
    let r = c.request("GET", "/app.js", &[("Accept-Encoding", "br;q=1, gzip;q=0.5")]);
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    assert_eq!(r.header("vary"), Some("accept-encoding"));
    assert_eq!(r.header("content-type"), Some("text/javascript; charset=utf-8"));
    assert_eq!(r.body, b"GZIPPED");
    let r = c.request("GET", "/app.js", &[("Accept-Encoding", "gzip;q=0")]);
    assert_eq!((r.header("content-encoding"), r.body.as_slice()), (None, &b"console.log(1)"[..]));
}

#[test]
fn traversal_attempts_never_reach_outside_files() {
    let t = tree();
    let s = Served::start(&t.www, &["--quiet"]);
    let targets = [
        "/../outside/secret.txt",
        "/index-less/../../outside/secret.txt",
        "/%2e%2e/outside/secret.txt",
        "/%2E%2E%2Foutside%2Fsecret.txt",
        "/..%2Foutside/secret.txt",
        "/..%5Coutside%5Csecret.txt",
        "/hello.txt%00.html",
        "/link-out.txt",
        "/dir-out/secret.txt",
        "/dir-out/",
        "/.env",
        "/%2Eenv",
    ];
    for target in targets {
        // A fresh connection each time: a 400 may close the connection.
        let r = Client::connect(s.addr).get(target);
        assert!(r.status == 400 || r.status == 404, "{target}: {}", r.status);
        assert!(!r.body.windows(SECRET.len()).any(|w| w == SECRET), "{target}");
    }
    // The root listing does not show what it would not serve.
    let listing = String::from_utf8(Client::connect(s.addr).get("/").body).unwrap();
    for hidden in [".env", "link-out", "dir-out"] {
        assert!(!listing.contains(hidden), "{hidden} in {listing}");
    }
}

#[test]
fn conditional_and_range_round_trips() {
    let t = tree();
    let s = Served::start(&t.www, &["--quiet"]);
    let mut c = Client::connect(s.addr);
    let first = c.get("/big.bin");
    let etag = first.header("etag").unwrap().to_owned();
    let date = first.header("last-modified").unwrap().to_owned();

    // RFC 9110 §13.1.2 / §13.1.3 → 304 with the validators and no body.
    let r = c.request("GET", "/big.bin", &[("If-None-Match", &format!("\"other\", {etag}"))]);
    assert_eq!((r.status, r.header("etag")), (304, Some(etag.as_str())));
    // RFC 9110 §8.6: a Content-Length on a 304 can only be the 200's.
    assert!(matches!(r.header("content-length"), None | Some("2000000")), "{r:?}");
    let r = c.request("GET", "/big.bin", &[("If-Modified-Since", &date)]);
    assert_eq!(r.status, 304);
    // §13.1.1 / §13.1.4 → 412.
    assert_eq!(c.request("GET", "/big.bin", &[("If-Match", "\"other\"")]).status, 412);
    let old = "Sun, 06 Nov 1994 08:49:37 GMT";
    assert_eq!(c.request("GET", "/big.bin", &[("If-Unmodified-Since", old)]).status, 412);

    // §14: 206 with Content-Range, the suffix form, If-Range, 416.
    let r = c.request("GET", "/big.bin", &[("Range", "bytes=100-199")]);
    assert_eq!((r.status, r.header("content-range")), (206, Some("bytes 100-199/2000000")));
    assert_eq!(r.body, &first.body[100..200]);
    let r = c.request("GET", "/big.bin", &[("Range", "bytes=-5")]);
    assert_eq!(r.body, &first.body[first.body.len() - 5..]);
    let r = c.request("GET", "/big.bin", &[("Range", "bytes=0-0"), ("If-Range", &etag)]);
    assert_eq!((r.status, r.body.len()), (206, 1));
    let r = c.request("GET", "/big.bin", &[("Range", "bytes=0-0"), ("If-Range", "\"stale\"")]);
    assert_eq!((r.status, r.body.len()), (200, 2_000_000));
    let r = c.request("GET", "/big.bin", &[("Range", "bytes=2000000-")]);
    assert_eq!((r.status, r.header("content-range")), (416, Some("bytes */2000000")));
}

#[test]
fn listing_escapes_names_and_links_work() {
    let t = tree();
    let s = Served::start(&t.www, &["--quiet"]);
    let mut c = Client::connect(s.addr);
    let r = c.get("/index-less/");
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    let html = String::from_utf8(r.body).unwrap();
    let href = "./%3Cscript%3E%26%22%27.txt";
    assert!(
        html.contains(&format!("<a href=\"{href}\">&lt;script&gt;&amp;&quot;&#39;.txt</a>")),
        "{html}"
    );
    assert!(!html.contains("<script>"), "{html}");
    // The link resolves to the file.
    let r = c.get(&format!("/index-less/{}", &href[2..]));
    assert_eq!((r.status, r.body.as_slice()), (200, &b"escaped"[..]));

    // --no-listing: 403 for the same directory, index.html still served.
    let quiet = Served::start(&t.www, &["--quiet", "--no-listing"]);
    let mut c = Client::connect(quiet.addr);
    assert_eq!(c.get("/index-less/").status, 403);
    assert_eq!(c.get("/site/").status, 200);
}

#[test]
fn access_log_and_graceful_shutdown() {
    let t = tree();
    let s = Served::start(&t.www, &[]);
    let mut c = Client::connect(s.addr);
    assert_eq!(c.get("/hello.txt").status, 200);
    assert_eq!(c.get("/missing").status, 404);
    drop(c);
    let (status, log) = s.terminate();
    assert!(status.success(), "{status:?}\n{log}");
    // The default format is nginx's and Apache's `combined`, one line per request.
    let lines: Vec<&str> = log.lines().filter(|l| l.contains("\"GET /")).collect();
    assert_eq!(lines.len(), 2, "{log}");
    assert!(lines[0].starts_with("127.0.0.1 - - ["), "{log}");
    assert!(lines[0].ends_with("\"GET /hello.txt HTTP/1.1\" 200 12 \"-\" \"-\""), "{log}");
    assert!(lines[1].contains("\"GET /missing HTTP/1.1\" 404 "), "{log}");

    // --quiet: no access log.
    let s = Served::start(&t.www, &["--quiet"]);
    assert_eq!(Client::connect(s.addr).get("/hello.txt").status, 200);
    let (status, log) = s.terminate();
    assert!(status.success());
    assert_eq!(log, "", "{log}");
}

#[test]
fn startup_errors_exit_2_with_one_line() {
    let t = tree();
    struct Case {
        args: Vec<String>,
        expect: &'static str,
    }
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let busy_addr = busy.local_addr().unwrap().to_string();
    let missing = t.base.join("nope").display().to_string();
    let file = t.www.join("hello.txt").display().to_string();
    let www = t.www.display().to_string();
    let tls = tls_files(&t.base);
    let cases = [
        Case { args: vec![missing.clone()], expect: "no such file or directory" },
        Case { args: vec![file], expect: "not a directory" },
        Case {
            args: vec![www.clone(), "--addr".into(), busy_addr],
            expect: "address already in use",
        },
        Case {
            args: vec![www.clone(), "--addr".into(), "nonsense".into()],
            expect: "cannot listen on nonsense",
        },
        Case { args: vec![www.clone(), "--bogus".into()], expect: "unexpected argument '--bogus'" },
        Case {
            args: vec![www.clone(), "--workers".into(), "0".into()],
            expect: "invalid value '0'",
        },
        Case {
            args: vec![www.clone(), "--cache-control".into(), "a\nb".into()],
            expect: "invalid value",
        },
        Case {
            args: tls_args(&www, &missing, &tls.key),
            expect: leak(format!("{missing}: cannot read: no such file or directory")),
        },
        Case {
            args: tls_args(&www, &tls.cert, &tls.other_key),
            expect: leak(format!("{}: private key does not match the certificate", tls.other_key)),
        },
        Case {
            args: tls_args(&www, &tls.key, &tls.key),
            expect: leak(format!("{}: no certificate (expected a PEM CERTIFICATE block)", tls.key)),
        },
    ];
    for c in cases {
        let out = Command::new(BIN).arg("serve").args(&c.args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{:?}: {err}", c.args);
        assert!(err.contains(c.expect), "{:?}: {err}", c.args);
        assert!(out.stdout.is_empty(), "{:?}", c.args);
        if !c
            .args
            .iter()
            .any(|a| a.starts_with("--bogus") || a == "--workers" || a == "--cache-control")
        {
            assert_eq!(err.lines().count(), 1, "one line: {err}");
        }
    }
    drop(busy);

    // A second `peregrine serve` on a port the first one holds (both SO_REUSEPORT) must fail
    // too, not share the port.
    let first = Served::start(&t.www, &["--quiet"]);
    let out = Command::new(BIN)
        .args(["serve", &t.www.display().to_string(), "--addr", &first.addr.to_string()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("address already in use"), "{err}");
}

/// Behind a balancer: the PROXY header names the client in the access log, health turns 503
/// at the first SIGTERM while the listener still accepts, metrics count, and a second SIGTERM
/// ends the drain at once.
#[test]
fn behind_a_balancer_proxy_health_metrics_and_two_signals() {
    let t = tree();
    let ops = [
        "--proxy-protocol",
        "--proxy-trust",
        "127.0.0.1,::1",
        "--health",
        "/healthz",
        "--metrics",
        "/metrics",
        "--drain-grace",
        "30s",
    ];
    let s = Served::start(&t.www, &ops);
    let proxied = |header: &str| {
        let mut c = Client::connect(s.addr);
        c.stream.write_all(header.as_bytes()).unwrap();
        c
    };
    let mut c = proxied("PROXY TCP4 203.0.113.7 192.0.2.1 40000 80\r\n");
    assert_eq!(c.get("/hello.txt").status, 200);
    assert_eq!(c.get("/healthz").status, 200);
    let metrics = String::from_utf8(c.get("/metrics").body).unwrap();
    assert!(metrics.contains("peregrine_requests_total{class=\"2xx\"} 2\n"), "{metrics}");
    // No header: closed unserved.
    let mut bare = Client::connect(s.addr);
    bare.stream.write_all(b"GET /hello.txt HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    assert_eq!(bare.fill(), 0);

    let pid = s.child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    std::thread::sleep(Duration::from_millis(300));
    let mut during = proxied("PROXY TCP4 198.51.100.1 192.0.2.1 40001 80\r\n");
    let health = during.get("/healthz");
    assert_eq!(health.status, 503);
    assert_eq!(health.header("connection"), Some("close"));
    let start = Instant::now();
    let (status, log) = s.terminate();
    assert!(start.elapsed() < Duration::from_secs(5), "the second SIGTERM waited");
    assert!(status.success(), "{status:?}\n{log}");
    assert!(
        log.lines()
            .any(|l| l.starts_with("203.0.113.7 ")
                && l.contains("\"GET /hello.txt HTTP/1.1\" 200 12 ")),
        "{log}"
    );
    assert!(log.lines().any(|l| l.starts_with("198.51.100.1 ")
        && l.contains("\"GET /healthz HTTP/1.1\" 503 ")), "{log}");
    assert!(log.contains("draining"), "{log}");
}

/// Under systemd socket activation (here `systemd-socket-activate`, which passes descriptor 3
/// with LISTEN_FDS and LISTEN_PID as systemd does), the inherited socket is served.
#[test]
fn socket_activation_serves_the_inherited_socket() {
    let Ok(activate) = which("systemd-socket-activate") else {
        eprintln!("systemd-socket-activate not installed: socket activation not tested");
        return;
    };
    let t = tree();
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = Command::new(activate)
        .args(["-l", &format!("127.0.0.1:{port}"), BIN, "serve"])
        .arg(&t.www)
        .args(["--quiet", "--drain-grace", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // systemd-socket-activate listens first and starts the server at the first connection.
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let mut c = client_once_listening(addr, &mut child);
    assert_eq!(c.get("/hello.txt").body, b"hello world\n");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert!(line.starts_with("Serving "), "{line}");
    assert!(line.contains(&format!("127.0.0.1:{port}")), "{line}");
    assert!(
        Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success()
    );
    let status = wait_with_deadline(&mut child, Duration::from_secs(10));
    assert!(status.success(), "{status:?}");
}

/// The path of `program` on PATH.
/// A stdout nobody reads any more (`| head -1`, a supervisor or a test that kept the first
/// line and closed the pipe) does not stop the server: its lines are dropped, and it serves and
/// drains as usual (`println!` panicked on EPIPE; the socket-activation test above, which reads
/// one line of two, lost the race to that now and then).
#[test]
fn a_closed_stdout_does_not_stop_the_server() {
    let t = tree();
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let mut child = Command::new(BIN)
        .arg("serve")
        .arg(&t.www)
        .args(["--addr", &addr.to_string(), "--drain-grace", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Closed before the server writes its first line.
    drop(child.stdout.take());
    let mut c = client_once_listening(addr, &mut child);
    assert_eq!(c.get("/hello.txt").body, b"hello world\n");
    drop(c);
    assert!(
        Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success()
    );
    let status = wait_with_deadline(&mut child, Duration::from_secs(10));
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(status.success(), "{status:?}\n{err}");
    assert!(err.contains("draining"), "{err}");
}

/// A client connected to `addr` once `child` listens there (polled for 10 s); panics with the
/// child's stderr if it exits first.
fn client_once_listening(addr: SocketAddr, child: &mut Child) -> Client {
    for _ in 0..200 {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            panic!("the server exited before serving: {status:?}\n{err}");
        }
        if let Ok(stream) = TcpStream::connect(addr) {
            stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            return Client { stream, buf: Vec::new() };
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("nothing listens on {addr}");
}

fn which(program: &str) -> Result<PathBuf, ()> {
    let path = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&path).map(|d| d.join(program)).find(|p| p.is_file()).ok_or(())
}

#[test]
fn operations_flags_are_checked() {
    let t = tree();
    let www = t.www.display().to_string();
    let cases: [(&[&str], &str); 5] = [
        (&["--proxy-protocol", "--proxy-trust", "10.0.0.1/8"], "invalid value '10.0.0.1/8'"),
        (&["--proxy-trust", "10.0.0.0/8"], "--proxy-protocol"),
        (&["--health", "healthz"], "invalid value 'healthz'"),
        (&["--metrics", "/m?x"], "invalid value '/m?x'"),
        (&["--drain-grace=-1"], "invalid value '-1'"),
    ];
    for (args, expect) in cases {
        let out = Command::new(BIN).arg("serve").arg(&www).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(expect), "{args:?}: {err}");
    }
}

#[test]
fn help_explains_every_flag_and_default() {
    let out = Command::new(BIN).args(["serve", "--help"]).output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "[DIR]",
        "[default: .]",
        "--addr",
        "[default: 127.0.0.1:8080]",
        "--workers",
        "available cores",
        "--no-listing",
        "--cache-control",
        "--quiet",
        "Operations:",
        "--proxy-protocol",
        "--proxy-trust",
        "[default: 127.0.0.0/8,::1]",
        "--health",
        "--metrics",
        "--drain-grace",
        "[default: 5s]",
        "--no-http2",
        "--no-h2c",
        "--h2-max-streams",
        "HTTP/2",
        "--reuse-port",
        "--log-format",
        "--access-log",
        "Site:",
        "--header <NAME: VALUE>",
        "--cors [<ORIGIN,...>]",
        "--spa",
        "--404 <FILE>",
        "--auth <USER:PASSWORD>",
        "TLS:",
        "Limits:",
        "Logging:",
        "--max-head-bytes <SIZE>",
        "[default: 32KiB]",
        "--header-read-timeout <DURATION>",
        "[default: 10s]",
        "[default: 75s]",
        "--shutdown-timeout",
        "--tls-handshake-timeout",
        "[default: combined]",
    ] {
        assert!(help.contains(needle), "{needle} missing from:\n{help}");
    }
}

/// Memory stays flat while a 1 GiB file is sent: the peak resident size of the server grows by
/// far less than the file (a sparse file, so the test costs no disk space).
#[test]
fn a_1_gib_file_streams_in_flat_memory() {
    let t = tree();
    let f = std::fs::File::create(t.www.join("huge.bin")).unwrap();
    f.set_len(1 << 30).unwrap();
    drop(f);
    let s = Served::start(&t.www, &["--quiet", "--workers", "1"]);
    let mut stream = TcpStream::connect(s.addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    stream.write_all(b"GET /huge.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let mut total = 0u64;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = read_some(&mut stream, &mut buf).unwrap();
        if n == 0 {
            break;
        }
        total += n as u64;
    }
    assert!(total > 1 << 30, "headers and 1 GiB, got {total}");
    let status = std::fs::read_to_string(format!("/proc/{}/status", s.child.id())).unwrap();
    let peak_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap();
    eprintln!("peak RSS while sending 1 GiB: {peak_kb} kB");
    assert!(peak_kb < 64 * 1024, "peak RSS {peak_kb} kB while sending 1 GiB");
}

/// Certificate files for the TLS tests, written under `dir`.
struct TlsFiles {
    cert: String,
    key: String,
    other_key: String,
}

fn tls_files(dir: &Path) -> TlsFiles {
    let make = || rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let (a, b) = (make(), make());
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    TlsFiles {
        cert: write("cert.pem", a.cert.pem()),
        key: write("key.pem", a.signing_key.serialize_pem()),
        other_key: write("other-key.pem", b.signing_key.serialize_pem()),
    }
}

fn tls_args(www: &str, cert: &str, key: &str) -> Vec<String> {
    vec![www.into(), "--tls-cert".into(), cert.into(), "--tls-key".into(), key.into()]
}

/// A test-lifetime string from a formatted one (the case table holds `&'static str`).
fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// One GET over TLS with a rustls client trusting exactly `cert_pem`; the raw response.
fn https_get(addr: SocketAddr, cert_pem: &[u8], name: &str, path: &str) -> String {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    roots.add(rustls::pki_types::CertificateDer::from_pem_slice(cert_pem).unwrap()).unwrap();
    let config =
        rustls::ClientConfig::builder().with_root_certificates(roots).with_no_client_auth();
    let server_name = rustls::pki_types::ServerName::try_from(name.to_owned()).unwrap();
    let conn = rustls::ClientConnection::new(std::sync::Arc::new(config), server_name).unwrap();
    let tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    let req = format!("GET {path} HTTP/1.1\r\nHost: {name}\r\nConnection: close\r\n\r\n");
    tls.write_all(req.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = tls.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn https_with_certificate_files() {
    let t = tree();
    let tls = tls_files(&t.base);
    let s = Served::start(&t.www, &["--tls-cert", &tls.cert, "--tls-key", &tls.key, "--quiet"]);
    let cert = std::fs::read(&tls.cert).unwrap();
    let res = https_get(s.addr, &cert, "localhost", "/hello.txt");
    assert!(res.starts_with("HTTP/1.1 200 OK\r\n"), "{res}");
    assert!(res.ends_with("hello world\n"), "{res}");
}

#[test]
fn https_with_a_self_signed_certificate() {
    let t = tree();
    let mut s = Served::start(&t.www, &["--tls-self-signed", "--quiet"]);
    let line = s.next_line();
    // "TLS: throw-away certificate for localhost and 127.0.0.1 in PATH; trust it with: ..."
    let path = line.split(" in ").nth(1).and_then(|rest| rest.split(';').next()).unwrap();
    let cert = std::fs::read(path).unwrap();
    assert!(line.contains(&format!("https://localhost:{}/", s.addr.port())), "{line}");
    for name in ["localhost", "127.0.0.1"] {
        let res = https_get(s.addr, &cert, name, "/hello.txt");
        assert!(res.starts_with("HTTP/1.1 200 OK\r\n"), "{name}: {res}");
    }
    // Plain HTTP on the TLS port: closed at once, nothing served.
    let mut plain = TcpStream::connect(s.addr).unwrap();
    plain.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    plain.write_all(b"GET /hello.txt HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut got = Vec::new();
    let start = Instant::now();
    let _ = plain.read_to_end(&mut got);
    assert!(start.elapsed() < Duration::from_secs(2));
    assert!(!String::from_utf8_lossy(&got).contains("hello world"));
    // The throw-away certificate goes with the server.
    let (status, _) = s.terminate();
    assert!(status.success());
    assert!(!Path::new(path).exists(), "{path} left behind");
}

/// A CLF date as Apache and nginx write it: `[10/Oct/2000:13:55:36 +0000]`.
fn is_clf_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 28
        && b[0] == b'['
        && b[3] == b'/'
        && b[7] == b'/'
        && b[12] == b':'
        && s.ends_with(" +0000]")
        && s[1..3].bytes().all(|c| c.is_ascii_digit())
        && ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
            .contains(&&s[4..7])
}

#[test]
fn log_formats_common_combined_json() {
    let t = tree();
    for format in ["common", "combined", "json"] {
        let s = Served::start(&t.www, &["--log-format", format]);
        let mut c = Client::connect(s.addr);
        let r = c.request(
            "GET",
            "/hello.txt?q=1",
            &[("User-Agent", "tester/1.0 \"quoted\""), ("Referer", "http://r/")],
        );
        assert_eq!(r.status, 200);
        assert_eq!(c.request("HEAD", "/missing", &[]).status, 404);
        // A request the parser refuses is logged too.
        let mut raw = TcpStream::connect(s.addr).unwrap();
        raw.write_all(b"GET /a\x01b HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut sink = Vec::new();
        raw.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = raw.read_to_end(&mut sink);
        drop(c);
        let (status, log) = s.terminate();
        assert!(status.success());
        let lines: Vec<&str> = log.lines().filter(|l| !l.starts_with("peregrine:")).collect();
        assert_eq!(lines.len(), 3, "{format}: {log}");
        match format {
            "json" => {
                let v: Vec<serde_json::Value> =
                    lines.iter().map(|l| serde_json::from_str(l).unwrap()).collect();
                assert_eq!(v[0]["method"], "GET");
                assert_eq!(v[0]["target"], "/hello.txt?q=1");
                assert_eq!(v[0]["version"], "HTTP/1.1");
                assert_eq!(v[0]["status"], 200);
                assert_eq!(v[0]["body_bytes"], 12);
                assert_eq!(v[0]["user_agent"], "tester/1.0 \"quoted\"");
                assert_eq!(v[0]["referer"], "http://r/");
                assert_eq!(v[0]["refused"], false);
                assert!(v[0]["duration_ms"].as_f64().is_some());
                assert!(v[0]["time"].as_str().unwrap().ends_with('Z'));
                assert!(v[0]["remote_addr"].as_str().unwrap().starts_with("127.0.0.1:"));
                assert_eq!(
                    (v[1]["method"].as_str(), v[1]["status"].as_u64()),
                    (Some("HEAD"), Some(404))
                );
                assert_eq!(v[1]["referer"], serde_json::Value::Null);
                assert_eq!(
                    (v[2]["status"].as_u64(), v[2]["refused"].as_bool()),
                    (Some(400), Some(true))
                );
            }
            _ => {
                let (host, rest) = lines[0].split_once(" - - ").unwrap();
                assert_eq!(host, "127.0.0.1");
                assert!(is_clf_date(&rest[..28]), "{rest}");
                let after = &rest[29..];
                let first = "\"GET /hello.txt?q=1 HTTP/1.1\" 200 12";
                let expect = if format == "combined" {
                    format!("{first} \"http://r/\" \"tester/1.0 \\\"quoted\\\"\"")
                } else {
                    first.to_owned()
                };
                assert_eq!(after, expect, "{format}");
                // HEAD: no content, `-` for %b.
                assert!(lines[1].contains("\"HEAD /missing HTTP/1.1\" 404 -"), "{}", lines[1]);
                assert!(lines[2].contains("\"GET /a\\x01b HTTP/1.1\" 400 "), "{}", lines[2]);
            }
        }
    }
}

/// `--access-log FILE` appends; after the file is renamed away (log rotation) and SIGHUP, new
/// lines go to a new file at the same path; the old file keeps what it had.
#[test]
fn access_log_file_is_reopened_on_sighup() {
    let t = tree();
    let path = t.base.join("access.log");
    std::fs::write(&path, "earlier line\n").unwrap();
    let s = Served::start(&t.www, &["--access-log", path.to_str().unwrap()]);
    let wait_for = |p: &Path, needle: &str| {
        let start = Instant::now();
        loop {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            if text.contains(needle) {
                return text;
            }
            assert!(start.elapsed() < Duration::from_secs(10), "{needle} not in {text}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let mut c = Client::connect(s.addr);
    assert_eq!(c.get("/hello.txt").status, 200);
    let text = wait_for(&path, "GET /hello.txt");
    assert!(text.starts_with("earlier line\n"), "appended: {text}");
    let rotated = t.base.join("access.log.1");
    std::fs::rename(&path, &rotated).unwrap();
    let sent = Command::new("kill").args(["-HUP", &s.child.id().to_string()]).status().unwrap();
    assert!(sent.success());
    // The reopen happens on the writer thread; requests until then may still reach the old
    // file, so ask until one reaches the new one.
    let start = Instant::now();
    loop {
        assert_eq!(c.get("/site/").status, 200);
        if std::fs::read_to_string(&path).is_ok_and(|t| t.contains("GET /site/")) {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "no new file after SIGHUP");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(c);
    let (status, stderr) = s.terminate();
    assert!(status.success());
    let old = std::fs::read_to_string(&rotated).unwrap();
    assert!(old.starts_with("earlier line\n") && old.contains("GET /hello.txt"), "{old}");
    let new = std::fs::read_to_string(&path).unwrap();
    assert!(!new.contains("GET /hello.txt"), "{new}");
    // Nothing of the log on stderr when it goes to a file.
    assert!(!stderr.contains("GET /"), "{stderr}");
}

#[test]
fn header_cors_spa_and_404_flags() {
    let t = tree();
    std::fs::write(t.www.join("index.html"), b"<div id=app>").unwrap();
    std::fs::write(t.base.join("gone.html"), b"<h1>gone</h1>").unwrap();
    let page = t.base.join("gone.html").display().to_string();
    let s = Served::start(
        &t.www,
        &[
            "--quiet",
            "--header",
            "X-Frame-Options: DENY",
            "--header",
            "Content-Security-Policy: default-src 'self'",
            "--spa",
            "--404",
            &page,
            "--cors",
            "https://app.example,https://other.example",
        ],
    );
    let mut c = Client::connect(s.addr);
    let browser = ("Accept", "text/html,application/xhtml+xml,*/*;q=0.8");
    let r = c.request("GET", "/users/7", &[browser]);
    assert_eq!((r.status, r.body.as_slice()), (200, &b"<div id=app>"[..]));
    assert_eq!(r.header("x-frame-options"), Some("DENY"));
    assert_eq!(r.header("content-security-policy"), Some("default-src 'self'"));
    let r = c.request("GET", "/missing.js", &[("Accept", "*/*")]);
    assert_eq!((r.status, r.body.as_slice()), (404, &b"<h1>gone</h1>"[..]));
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    assert_eq!(r.header("x-frame-options"), Some("DENY"));
    let r = c.request("GET", "/hello.txt", &[("Origin", "https://other.example")]);
    assert_eq!(r.header("access-control-allow-origin"), Some("https://other.example"));
    assert_eq!(r.header("vary"), Some("origin"));
    let r = c.request(
        "OPTIONS",
        "/hello.txt",
        &[("Origin", "https://app.example"), ("Access-Control-Request-Method", "GET")],
    );
    assert_eq!(r.status, 204);
    assert_eq!(r.header("access-control-allow-origin"), Some("https://app.example"));
    assert_eq!(r.header("access-control-allow-methods"), Some("GET, HEAD, OPTIONS"));
    assert_eq!(r.header("access-control-max-age"), Some("7200"));

    // --cors alone: any origin.
    let any = Served::start(&t.www, &["--quiet", "--cors"]);
    let r = Client::connect(any.addr).request("GET", "/hello.txt", &[("Origin", "https://x")]);
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));

    // Bad values: exit 2, one line naming the flag.
    let www = t.www.display().to_string();
    for (args, expect) in [
        (vec!["--header", "X-Bad"], "--header 'X-Bad': expected 'Name: value'"),
        (vec!["--header", "Bad Name: v"], "--header 'Bad Name: v': the name must be a token"),
        (vec!["--header", "Content-Length: 1"], "the server sets this field itself"),
        (vec!["--cors", "app.example"], "--cors: 'app.example' is not an origin"),
        (vec!["--404", "/nonexistent/page.html"], "--404 /nonexistent/page.html: no such file"),
    ] {
        let out = Command::new(BIN).arg("serve").arg(&www).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(expect), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
}

/// Basic auth over the wire: 401 with the challenge, the same answer whether the user or the
/// password was wrong, and the password never in the log or the CLI's output.
#[test]
fn auth_flag_plain_and_bcrypt() {
    let t = tree();
    let hash = bcrypt::hash("pa:ss", 4).unwrap();
    for auth in ["ann:pa:ss".to_owned(), format!("ann:{hash}")] {
        let s = Served::start(&t.www, &["--auth", &auth]);
        let mut c = Client::connect(s.addr);
        // base64 of ann:pa:ss, bob:pa:ss, ann:nope
        let good = ("Authorization", "Basic YW5uOnBhOnNz");
        let r = c.request("GET", "/hello.txt", &[good]);
        assert_eq!((r.status, r.body.as_slice()), (200, &b"hello world\n"[..]));
        let strip_date = |r: Reply| {
            let headers: Vec<_> =
                r.headers.into_iter().filter(|(n, _)| !n.eq_ignore_ascii_case("date")).collect();
            (r.status, headers, r.body)
        };
        let wrong_user =
            strip_date(c.request("GET", "/hello.txt", &[("Authorization", "Basic Ym9iOnBhOnNz")]));
        let wrong_password =
            strip_date(c.request("GET", "/hello.txt", &[("Authorization", "Basic YW5uOm5vcGU=")]));
        let missing = strip_date(c.request("GET", "/missing", &[]));
        assert_eq!(wrong_user.0, 401);
        assert!(
            wrong_user.1.contains(&(
                "www-authenticate".into(),
                "Basic realm=\"peregrine\", charset=\"UTF-8\"".into()
            )),
            "{:?}",
            wrong_user.1
        );
        assert_eq!(wrong_user, wrong_password);
        assert_eq!(wrong_user, missing);
        drop(c);
        let mut out = String::new();
        let mut rest = String::new();
        let _ = s.stdout_rest(&mut rest);
        out.push_str(&rest);
        let (status, log) = s.terminate();
        assert!(status.success());
        for secret in ["pa:ss", "YW5uOnBhOnNz", "Ym9iOnBhOnNz", "YW5uOm5vcGU=", &hash, "Basic"] {
            assert!(!log.contains(secret), "{secret} in the log: {log}");
            assert!(!out.contains(secret), "{secret} on stdout: {out}");
        }
        assert_eq!(log.lines().filter(|l| l.contains("\" 401 ")).count(), 3, "{log}");
    }
    // A bad hash: exit 2 without echoing it.
    let www = t.www.display().to_string();
    let bad = "ann:$2b$10$notahash";
    let out = Command::new(BIN).args(["serve", &www, "--auth", bad]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--auth: not a bcrypt hash") && !err.contains("notahash"), "{err}");
}

/// Compression on the fly through the real binary, decoded with the flate2, brotli and zstd
/// decoders.
#[test]
fn compress_flag_round_trips() {
    let t = tree();
    let js: String = (0..1000)
        .map(|i| format!("export const v{i} = {{ id: {i}, name: \"item {i}\" }};\n"))
        .collect();
    std::fs::write(t.www.join("lib.js"), &js).unwrap();
    let decode = |coding: &str, data: &[u8]| -> Vec<u8> {
        let mut out = Vec::new();
        match coding {
            "gzip" => drop(flate2::read::GzDecoder::new(data).read_to_end(&mut out).unwrap()),
            "br" => drop(brotli::Decompressor::new(data, 4096).read_to_end(&mut out).unwrap()),
            "zstd" => out = zstd::stream::decode_all(data).unwrap(),
            _ => out.extend_from_slice(data),
        }
        out
    };
    let s = Served::start(&t.www, &["--quiet"]);
    let mut c = Client::connect(s.addr);
    for (accept, coding, tag) in [
        ("gzip", "gzip", "-gz6\""),
        ("br", "br", "-br5\""),
        ("zstd", "zstd", "-zst3\""),
        ("gzip, deflate, br, zstd", "br", "-br5\""),
    ] {
        let r = c.request("GET", "/lib.js", &[("Accept-Encoding", accept)]);
        assert_eq!(r.header("content-encoding"), Some(coding), "{accept}");
        assert_eq!(r.header("vary"), Some("accept-encoding"), "{accept}");
        assert!(r.header("etag").unwrap().ends_with(tag), "{accept}: {:?}", r.header("etag"));
        assert!(r.body.len() < js.len() / 4, "{accept}: {}", r.body.len());
        assert_eq!(decode(coding, &r.body), js.as_bytes(), "{accept}");
    }
    let r = c.request("GET", "/lib.js", &[]);
    assert_eq!((r.header("content-encoding"), r.body.as_slice()), (None, js.as_bytes()));
    assert_eq!(r.header("vary"), Some("accept-encoding"));

    let off = Served::start(&t.www, &["--quiet", "--compress", "off"]);
    let r = Client::connect(off.addr).request("GET", "/lib.js", &[("Accept-Encoding", "gzip")]);
    assert_eq!((r.header("content-encoding"), r.header("vary")), (None, None));
    let one =
        Served::start(&t.www, &["--quiet", "--compress", "gzip=1", "--compress-max-size", "1KiB"]);
    let r = Client::connect(one.addr).request("GET", "/lib.js", &[("Accept-Encoding", "br, gzip")]);
    assert_eq!(r.header("content-encoding"), None, "larger than --compress-max-size");
    let one = Served::start(&t.www, &["--quiet", "--compress", "gzip=1"]);
    let r = Client::connect(one.addr).request("GET", "/lib.js", &[("Accept-Encoding", "br, gzip")]);
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    assert!(r.header("etag").unwrap().ends_with("-gz1\""));
    assert_eq!(decode("gzip", &r.body), js.as_bytes());
}
