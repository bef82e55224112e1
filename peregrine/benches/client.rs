//! Client benchmarks, every contender against the same server (this crate's, one worker
//! thread, a static 13-byte response) in one process, timed by thread CPU time.
//!
//! Run: `cargo bench -p peregrine --bench client` (ends with the `summary ...` lines).
//!
//! 1. **Request creation**: from "a method, a path and 4 fields" to "the request's bytes are
//!    in the connection's send buffer", HPACK included for HTTP/2
//!    (`Connection::send_request`, batches of 64 pipelined or multiplexed requests, each batch
//!    answered between measurements). Peers: h2's `SendRequest::poll_ready` + `send_request`
//!    (HPACK is done later by its connection task, so not counted) and hyper's HTTP/1.1
//!    `SendRequest::send_request` (encoding done later by its connection task, not counted;
//!    one request at a time, so each call is timed alone and the cost of reading the clock,
//!    calibrated, is subtracted). Requests for the peers are built outside the timed part.
//! 2. **Sequential round trips** on one connection (HTTP/1.1 and h2c): p50 and p99 latency,
//!    the client thread's CPU time per request, and whole-process allocations per request
//!    (the server allocates none for this response), for `Connection`, `Client`, hyper's
//!    `client::conn` and reqwest; three rounds each, alternating, medians quoted.
//!
//! `peregrine-varying-path` repeats our creation with a different path each time (65,536 of
//! them), where the connection's copy of its last request never applies whole (only the bytes
//! around the target are reused): the figure for requests that differ.
//!
//! `CLIENT_PROFILE=create-h1:<n>` or `create-h2:<n>` (`create-h1-vary`, `create-h2-vary` for
//! varying paths) runs only `n` batches of 64 request creations (and their answers) for
//! callgrind: `callgrind_annotate --inclusive=yes` gives the instructions of
//! `Connection::send_request` per call (`Connection::start` ÷ 64n).
//! `CLIENT_PROFILE=rt:<h1|h2c>:<who>:<n>` (`who`: `peregrine-conn`, `peregrine-client`,
//! `hyper`, `floor-blocking` (h1), `reqwest`) runs only `n` round trips of one contender, for
//! `strace -c` (system calls per request; the client runs on the main thread) and callgrind.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Waker};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use criterion::Criterion;
use http::header::{self, HeaderValue};
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::{TokioExecutor, TokioIo};
use peregrine::client::Client;
use peregrine::client::conn::{Config, Connection, Event, Versions};
use peregrine::{Method, Request, Response, Server};

mod cpu_time;
use cpu_time::{CpuTime, thread_cpu_ns};

/// Counts every allocation of the process.
struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: delegates to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocs() -> u64 {
    ALLOCS.load(Ordering::Relaxed)
}

/// The four fields of every request.
const FIELDS: &[(&str, &[u8])] = &[
    ("accept", b"text/plain"),
    ("user-agent", b"peregrine-bench/1.0"),
    ("accept-encoding", b"gzip, br"),
    ("x-request-id", b"0123456789abcdef"),
];

const BATCH: u64 = 64;

async fn plaintext(_req: Request) -> Response {
    Response::new("Hello, World!")
        .with_header(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// Reads `n` whole responses.
async fn drain(conn: &mut Connection, n: u64) {
    let mut ended = 0;
    while ended < n {
        match conn.next_event().await.unwrap() {
            Event::Data { data, .. } => {
                black_box(data);
            }
            Event::End { .. } => ended += 1,
            Event::Failed { error, .. } => panic!("{error}"),
            _ => {}
        }
    }
}

/// How many distinct paths the varying-path case cycles through.
const PATHS: usize = 1 << 16;

/// 65,536 distinct paths (`/plaintext/` and a number of up to six digits), visited in a
/// scrambled order so neither the connection nor the branch predictor sees a repeat soon.
fn paths() -> Vec<String> {
    // An odd multiplier is a bijection modulo 2^16: every number once, not in order.
    (0..PATHS).map(|i| format!("/plaintext/{}", (i * 40_503) % PATHS * 7)).collect()
}

/// Times `iters` of our request creations in batches; returns (CPU ns, allocations). With
/// `vary`, each request takes the next of those paths (so none repeats its predecessor);
/// without, every request is `GET /plaintext`.
fn create_ours(
    rt: &tokio::runtime::Runtime,
    conn: &mut Connection,
    iters: u64,
    vary: Option<&[String]>,
) -> (u64, u64) {
    let (mut ns, mut n_allocs, mut left) = (0, 0, iters);
    let mut next = 0usize;
    while left > 0 {
        let k = left.min(BATCH);
        let a = allocs();
        let start = thread_cpu_ns();
        for _ in 0..k {
            let path = match vary {
                Some(ps) => {
                    next = (next + 1) % ps.len();
                    ps[next].as_str()
                }
                None => "/plaintext",
            };
            let id = conn.send_request(Method::Get, black_box(path), black_box(FIELDS), &[]);
            black_box(id.unwrap());
        }
        ns += thread_cpu_ns() - start;
        n_allocs += allocs() - a;
        rt.block_on(drain(conn, k));
        left -= k;
    }
    (ns, n_allocs)
}

fn connect(rt: &tokio::runtime::Runtime, addr: SocketAddr, versions: Versions) -> Connection {
    let config = Config::default().versions(versions);
    rt.block_on(Connection::connect(&format!("http://{addr}"), &config)).unwrap()
}

/// A request for the peers: absolute URI for HTTP/2 (`:authority`); for hyper's HTTP/1.1
/// connection, which sends the URI as it is, origin form and a Host field.
fn peer_request(addr: SocketAddr) -> http::Request<()> {
    let mut b = http::Request::get(format!("http://{addr}/plaintext"));
    for (n, v) in FIELDS {
        b = b.header(*n, *v);
    }
    b.body(()).unwrap()
}

fn peer_request_h1(addr: SocketAddr) -> http::Request<()> {
    let mut b = http::Request::get("/plaintext").header(header::HOST, addr.to_string());
    for (n, v) in FIELDS {
        b = b.header(*n, *v);
    }
    b.body(()).unwrap()
}

/// The cost of reading the thread CPU clock twice, subtracted from single-call timings.
fn clock_overhead() -> u64 {
    let mut v: Vec<u64> = (0..20_001)
        .map(|_| {
            let a = thread_cpu_ns();
            thread_cpu_ns() - a
        })
        .collect();
    v.sort_unstable();
    v[v.len() / 2]
}

fn bench_create(c: &mut Criterion<CpuTime>, addr: SocketAddr, counts: &mut Vec<(String, f64)>) {
    let rt = runtime();
    {
        let mut g = c.benchmark_group("client-create-h1");
        let mut conn = connect(&rt, addr, Versions::Http1Only);
        let (mut it, mut al) = (0u64, 0u64);
        g.bench_function("peregrine", |b| {
            b.iter_custom(|iters| {
                let (ns, a) = create_ours(&rt, &mut conn, iters, None);
                it += iters;
                al += a;
                ns
            })
        });
        counts.push(("create-h1 peregrine".into(), al as f64 / it.max(1) as f64));
        let ps = paths();
        let (mut it, mut al) = (0u64, 0u64);
        g.bench_function("peregrine-varying-path", |b| {
            b.iter_custom(|iters| {
                let (ns, a) = create_ours(&rt, &mut conn, iters, Some(&ps));
                it += iters;
                al += a;
                ns
            })
        });
        counts.push(("create-h1 peregrine-varying-path".into(), al as f64 / it.max(1) as f64));

        let overhead = clock_overhead();
        let (mut send, conn) = rt.block_on(async {
            let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
            tcp.set_nodelay(true).unwrap();
            hyper::client::conn::http1::handshake::<_, Empty<Bytes>>(TokioIo::new(tcp))
                .await
                .unwrap()
        });
        rt.spawn(conn);
        let (mut it, mut al) = (0u64, 0u64);
        g.bench_function("hyper", |b| {
            b.iter_custom(|iters| {
                let mut ns = 0;
                for _ in 0..iters {
                    rt.block_on(send.ready()).unwrap();
                    let req = peer_request_h1(addr).map(|()| Empty::<Bytes>::new());
                    let a = allocs();
                    let start = thread_cpu_ns();
                    let fut = send.send_request(black_box(req));
                    ns += (thread_cpu_ns() - start).saturating_sub(overhead);
                    al += allocs() - a;
                    rt.block_on(async {
                        let res = fut.await.unwrap();
                        black_box(res.into_body().collect().await.unwrap());
                    });
                }
                it += iters;
                ns
            })
        });
        counts.push(("create-h1 hyper".into(), al as f64 / it.max(1) as f64));
        g.finish();
    }
    {
        let mut g = c.benchmark_group("client-create-h2");
        let mut conn = connect(&rt, addr, Versions::Http2Only);
        let (mut it, mut al) = (0u64, 0u64);
        g.bench_function("peregrine", |b| {
            b.iter_custom(|iters| {
                let (ns, a) = create_ours(&rt, &mut conn, iters, None);
                it += iters;
                al += a;
                ns
            })
        });
        counts.push(("create-h2 peregrine".into(), al as f64 / it.max(1) as f64));
        let ps = paths();
        let (mut it, mut al) = (0u64, 0u64);
        g.bench_function("peregrine-varying-path", |b| {
            b.iter_custom(|iters| {
                let (ns, a) = create_ours(&rt, &mut conn, iters, Some(&ps));
                it += iters;
                al += a;
                ns
            })
        });
        counts.push(("create-h2 peregrine-varying-path".into(), al as f64 / it.max(1) as f64));

        let mut send = rt.block_on(async {
            let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
            tcp.set_nodelay(true).unwrap();
            let (send, conn) = h2::client::handshake(tcp).await.unwrap();
            tokio::spawn(async move {
                let _ = conn.await;
            });
            send.ready().await.unwrap()
        });
        let (mut it, mut al) = (0u64, 0u64);
        g.bench_function("h2", |b| {
            b.iter_custom(|iters| {
                let (mut ns, mut left) = (0, iters);
                let mut cx = Context::from_waker(Waker::noop());
                while left > 0 {
                    let k = left.min(BATCH);
                    let mut reqs: Vec<_> = (0..k).map(|_| peer_request(addr)).collect();
                    let mut futs = Vec::with_capacity(k as usize);
                    let a = allocs();
                    let start = thread_cpu_ns();
                    for req in reqs.drain(..) {
                        let _ = send.poll_ready(&mut cx);
                        futs.push(send.send_request(black_box(req), true).unwrap().0);
                    }
                    ns += thread_cpu_ns() - start;
                    al += allocs() - a;
                    rt.block_on(async {
                        for f in futs {
                            let mut body = f.await.unwrap().into_body();
                            while let Some(chunk) = body.data().await {
                                let chunk = chunk.unwrap();
                                let _ = body.flow_control().release_capacity(chunk.len());
                            }
                        }
                    });
                    left -= k;
                }
                it += iters;
                ns
            })
        });
        counts.push(("create-h2 h2".into(), al as f64 / it.max(1) as f64));
        g.finish();
    }
}

/// One contender's round trips: latencies (ns), client CPU ns, allocations.
struct Run {
    lat: Vec<u64>,
    cpu: u64,
    allocs: u64,
}

/// `n` sequential round trips through `one`, after `n / 10` of warm-up.
fn round_trips<F: FnMut() -> usize>(n: usize, mut one: F) -> Run {
    for _ in 0..n / 10 {
        assert_eq!(one(), 13);
    }
    let mut lat = Vec::with_capacity(n);
    let a = allocs();
    let cpu = thread_cpu_ns();
    for _ in 0..n {
        let t = Instant::now();
        black_box(one());
        lat.push(t.elapsed().as_nanos() as u64);
    }
    let cpu = thread_cpu_ns() - cpu;
    let allocs = allocs() - a;
    Run { lat, cpu, allocs }
}

type Contender = (&'static str, Box<dyn FnMut(usize) -> Run>);

fn contenders(addr: SocketAddr, h2: bool) -> Vec<Contender> {
    let url = format!("http://{addr}/plaintext");
    let versions = if h2 { Versions::Http2Only } else { Versions::Http1Only };
    let mut out: Vec<Contender> = Vec::new();

    let rt = runtime();
    let mut conn = connect(&rt, addr, versions);
    out.push((
        "peregrine-conn",
        Box::new(move |n| {
            let mut buf = [0u8; 64];
            round_trips(n, || {
                rt.block_on(async {
                    conn.send_request(Method::Get, "/plaintext", FIELDS, &[]).unwrap();
                    let mut len = 0;
                    loop {
                        match conn.next_event().await.unwrap() {
                            Event::Data { data, .. } => {
                                buf[len..len + data.len()].copy_from_slice(data);
                                len += data.len();
                            }
                            Event::End { .. } => return len,
                            _ => {}
                        }
                    }
                })
            })
        }),
    ));

    let rt = runtime();
    let client =
        if h2 { Client::builder().http2_prior_knowledge() } else { Client::builder().http1_only() }
            .build();
    let u = url.clone();
    out.push((
        "peregrine-client",
        Box::new(move |n| {
            round_trips(n, || {
                rt.block_on(async {
                    let mut req = http::Request::get(&u);
                    for (name, v) in FIELDS {
                        req = req.header(*name, *v);
                    }
                    let mut res = client.send(req.body(()).unwrap()).await.unwrap();
                    std::mem::take(res.body_mut()).to_bytes(1 << 20).await.unwrap().len()
                })
            })
        }),
    ));

    let rt = runtime();
    let u = url.clone();
    if h2 {
        let mut send = rt.block_on(async {
            let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
            tcp.set_nodelay(true).unwrap();
            let (send, conn) = hyper::client::conn::http2::handshake::<_, _, Empty<Bytes>>(
                TokioExecutor::new(),
                TokioIo::new(tcp),
            )
            .await
            .unwrap();
            tokio::spawn(conn);
            send
        });
        out.push((
            "hyper",
            Box::new(move |n| {
                round_trips(n, || {
                    rt.block_on(async {
                        send.ready().await.unwrap();
                        let mut req = http::Request::get(&u);
                        for (name, v) in FIELDS {
                            req = req.header(*name, *v);
                        }
                        let res = send.send_request(req.body(Empty::new()).unwrap()).await.unwrap();
                        res.into_body().collect().await.unwrap().to_bytes().len()
                    })
                })
            }),
        ));
    } else {
        let mut send = rt.block_on(async {
            let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
            tcp.set_nodelay(true).unwrap();
            let (send, conn) =
                hyper::client::conn::http1::handshake::<_, Empty<Bytes>>(TokioIo::new(tcp))
                    .await
                    .unwrap();
            tokio::spawn(conn);
            send
        });
        let host = addr.to_string();
        out.push((
            "hyper",
            Box::new(move |n| {
                round_trips(n, || {
                    rt.block_on(async {
                        send.ready().await.unwrap();
                        let mut req = http::Request::get("/plaintext").header(header::HOST, &host);
                        for (name, v) in FIELDS {
                            req = req.header(*name, *v);
                        }
                        let res = send.send_request(req.body(Empty::new()).unwrap()).await.unwrap();
                        res.into_body().collect().await.unwrap().to_bytes().len()
                    })
                })
            }),
        ));
        drop(u);
    }

    if !h2 {
        // The floor: a blocking socket writing the request's bytes (made once) and reading
        // the 13-byte response by its known length; two system calls and no parsing.
        use std::io::{Read, Write};
        let mut tcp = std::net::TcpStream::connect(addr).unwrap();
        tcp.set_nodelay(true).unwrap();
        let mut req = format!("GET /plaintext HTTP/1.1\r\nHost: {addr}\r\n").into_bytes();
        for (name, v) in FIELDS {
            req.extend_from_slice(name.as_bytes());
            req.extend_from_slice(b": ");
            req.extend_from_slice(v);
            req.extend_from_slice(b"\r\n");
        }
        req.extend_from_slice(b"\r\n");
        let mut buf = [0u8; 4096];
        let mut len = 0;
        out.push((
            "floor-blocking",
            Box::new(move |n| {
                round_trips(n, || {
                    tcp.write_all(&req).unwrap();
                    // Read until the response's end: the head, then 13 bytes of body.
                    loop {
                        let got = tcp.read(&mut buf[len..]).unwrap();
                        assert!(got > 0);
                        len += got;
                        let end = buf[..len].windows(4).position(|w| w == b"\r\n\r\n");
                        if let Some(i) = end.filter(|i| len >= i + 4 + 13) {
                            len -= i + 4 + 13;
                            return 13;
                        }
                    }
                })
            }),
        ));
    }

    let rt = runtime();
    let b = reqwest::Client::builder();
    let client = if h2 { b.http2_prior_knowledge() } else { b.http1_only() }.build().unwrap();
    out.push((
        "reqwest",
        Box::new(move |n| {
            round_trips(n, || {
                rt.block_on(async {
                    let mut req = client.get(&url);
                    for (name, v) in FIELDS {
                        req = req.header(*name, *v);
                    }
                    req.send().await.unwrap().bytes().await.unwrap().len()
                })
            })
        }),
    ));
    out
}

fn pct(sorted: &[u64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or(0) as f64 / 1000.0
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn bench_round_trips(addr: SocketAddr, n: usize) {
    for (proto, h2) in [("h1", false), ("h2c", true)] {
        let mut cs = contenders(addr, h2);
        let mut res: Vec<Vec<(f64, f64, f64, f64)>> = vec![Vec::new(); cs.len()];
        for _round in 0..3 {
            for (i, (_, f)) in cs.iter_mut().enumerate() {
                let mut r = f(n);
                r.lat.sort_unstable();
                let cpu = r.cpu as f64 / n as f64 / 1000.0;
                let allocs = r.allocs as f64 / n as f64;
                res[i].push((pct(&r.lat, 0.5), pct(&r.lat, 0.99), cpu, allocs));
            }
        }
        let row = |i: usize| {
            let m = |f: fn(&(f64, f64, f64, f64)) -> f64| median(res[i].iter().map(f).collect());
            (m(|r| r.0), m(|r| r.1), m(|r| r.2), m(|r| r.3))
        };
        println!("round trips, {proto}, {n} sequential requests x 3 rounds (medians):");
        for (i, (name, _)) in cs.iter().enumerate() {
            let (p50, p99, cpu, al) = row(i);
            println!(
                "  {name:17} p50 {p50:6.1} µs  p99 {p99:6.1} µs  client CPU {cpu:5.2} µs/req  allocations {al:5.1}/req"
            );
        }
        let ours = row(0).2;
        for (i, (name, _)) in cs.iter().enumerate().skip(1) {
            let (_, _, cpu, _) = row(i);
            println!(
                "summary client-roundtrip-{proto}: peregrine {ours:.2} µs, {name} {cpu:.2} µs, ratio {:.2}x",
                ours / cpu
            );
        }
    }
}

fn criterion_median(group: &str, function: &str, since: SystemTime) -> Option<f64> {
    let mut dir = std::env::current_dir().ok()?;
    let home = loop {
        let candidate = dir.join("target").join("criterion");
        if candidate.is_dir() || !dir.pop() {
            break candidate;
        }
    };
    let path = home.join(group).join(function).join("new").join("estimates.json");
    if std::fs::metadata(&path).ok()?.modified().ok()? < since {
        return None;
    }
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
    json["median"]["point_estimate"].as_f64()
}

fn summary(group: &str, peer: &str, since: SystemTime) {
    if let (Some(a), Some(b)) =
        (criterion_median(group, "peregrine", since), criterion_median(group, peer, since))
    {
        println!("summary {group}: peregrine {a:.1} ns, {peer} {b:.1} ns, speedup {:.2}x", b / a);
    }
}

fn main() {
    let server = Server::bind("127.0.0.1:0").workers(1).spawn(plaintext).unwrap();
    let addr = server.local_addr();
    if let Ok(spec) = std::env::var("CLIENT_PROFILE") {
        if let Some(rest) = spec.strip_prefix("rt:") {
            // rt:<h1|h2c>:<contender>:<n>: only those round trips, for strace and callgrind.
            let mut p = rest.split(':');
            let (proto, who, n) = (p.next().unwrap(), p.next().unwrap(), p.next().unwrap());
            let n: usize = n.parse().expect("a count");
            let mut cs = contenders(addr, proto == "h2c");
            let (_, f) = cs.iter_mut().find(|(name, _)| *name == who).expect("a contender");
            let r = f(n);
            println!(
                "profile {spec}: {:.2} µs client CPU per request",
                r.cpu as f64 / n as f64 / 1e3
            );
            return;
        }
        let (which, n) = spec.split_once(':').expect("CLIENT_PROFILE=create-h1:<n>|create-h2:<n>");
        let n: u64 = n.parse().expect("a count");
        let versions =
            if which.starts_with("create-h2") { Versions::Http2Only } else { Versions::Http1Only };
        let rt = runtime();
        let mut conn = connect(&rt, addr, versions);
        let ps = paths();
        let vary = which.ends_with("-vary").then_some(&ps[..]);
        let (ns, _) = create_ours(&rt, &mut conn, n * BATCH, vary);
        println!("profile {spec}: {:.1} ns per request creation", ns as f64 / (n * BATCH) as f64);
        return;
    }
    let since = SystemTime::now() - Duration::from_secs(1);
    let mut c =
        Criterion::default().with_measurement(CpuTime).without_plots().configure_from_args();
    let mut counts = Vec::new();
    bench_create(&mut c, addr, &mut counts);
    c.final_summary();
    for (name, n) in &counts {
        println!("allocations per request creation, {name}: {n:.2}");
    }
    let n = std::env::var("CLIENT_ROUND_TRIPS").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    bench_round_trips(addr, n);
    summary("client-create-h2", "h2", since);
    summary("client-create-h1", "hyper", since);
    for (g, peer) in [("client-create-h2", "h2"), ("client-create-h1", "hyper")] {
        let vary = criterion_median(g, "peregrine-varying-path", since);
        if let (Some(a), Some(b)) = (vary, criterion_median(g, peer, since)) {
            println!(
                "({g}, every path different: peregrine {a:.1} ns, {peer} {b:.1} ns, speedup {:.2}x)",
                b / a
            );
        }
    }
    server.shutdown_now();
}
