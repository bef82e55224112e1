//! HTTP/1 wire-format benchmarks, every compared function in one process on the same inputs.
//!
//! Run: `cargo bench -p peregrine --bench http1` (ends with the `summary ...` lines).
//!
//! - `parse-plaintext`, `parse-browser`, `parse-post`: a whole request head. peregrine's
//!   `parse_request` (full strict validation, known-header identification) vs picohttpparser
//!   (`phr_parse_request` through picohttpparser-sys, built with its default `-msse4`) vs
//!   httparse `Request::parse`. Each is set up the way its own documentation shows a caller
//!   doing it, with a fresh 16-header array per request: peregrine and picohttpparser
//!   leave it uninitialised (`parse_request_uninit`, which the server uses; pico's
//!   `struct phr_header headers[N];`), httparse initialises it (`[httparse::EMPTY_HEADER; 16]`
//!   as in its README).
//! - `content-length-short` / `-long`: 65,536 values of 1-4 digits (random length) / 19 digits,
//!   iterated inside the measured routine, each value through `black_box`;
//!   `framing::parse_content_length` vs `str::from_utf8` + `parse::<u64>`, both inlined into the
//!   same generic loop; `loop` is that loop with no parsing (what every row pays). Reported per
//!   value.
//! - `parse-response`: a typical response head (status line and seven fields), peregrine's
//!   `parse_response_uninit` (the same strictness and known-header identification as requests)
//!   vs httparse `Response::parse`, set up as for the request heads.
//! - `encode-request`: the client's request head (`POST` with a path and four fields, Host and
//!   a User-Agent from the per-connection `RequestPrelude`) appended to a reused buffer by
//!   `encode::encode_request`. No peer: it feeds the client bench.
//! - `method-mix`: 65,536 request-line starts with a random standard method;
//!   `Method::recognize_prefix` vs finding the space and `match`ing the token slice (both
//!   return the tag and the token length). Reported per line.
//!
//! Time is the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), so time spent descheduled on a
//! shared machine is not counted.
#![allow(unsafe_code)]

use criterion::{BenchmarkGroup, Criterion, Throughput};
use peregrine::Method;
use peregrine::http1::encode::{RequestPrelude, Scheme, encode_request};
use peregrine::http1::{Limits, Status, framing, parse_request_uninit, parse_response_uninit};
use std::hint::black_box;
use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

mod cpu_time;
use cpu_time::CpuTime;

const PLAINTEXT: &[u8] = b"GET /plaintext HTTP/1.1\r\n\
Host: localhost:8080\r\n\
Accept: text/plain,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7\r\n\
Connection: keep-alive\r\n\
\r\n";

const BROWSER: &[u8] = b"GET /products/shoes/running?color=blue&size=42&sort=price_asc HTTP/1.1\r\n\
Host: shop.example.com\r\n\
User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36\r\n\
Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8\r\n\
Accept-Language: en-US,en;q=0.9,de;q=0.8\r\n\
Accept-Encoding: gzip, deflate, br, zstd\r\n\
Referer: https://shop.example.com/products/shoes?category=running\r\n\
Cookie: session_id=8f14e45fceea167a5a36dedd4bea2543; csrftoken=Zx8Lq3VnW2pRt7YkHs9JdF4gTbCm6NaE; _ga=GA1.2.1234567890.1712345678; _gid=GA1.2.987654321.1712345678; cart=%7B%22items%22%3A3%2C%22total%22%3A129.97%7D; theme=dark; lang=en-US; consent=analytics%3Dtrue%26ads%3Dfalse\r\n\
Connection: keep-alive\r\n\
Upgrade-Insecure-Requests: 1\r\n\
Sec-Fetch-Dest: document\r\n\
Sec-Fetch-Mode: navigate\r\n\
Sec-Fetch-Site: same-origin\r\n\
\r\n";

const POST: &[u8] = b"POST /api/v1/orders HTTP/1.1\r\n\
Host: api.example.com\r\n\
User-Agent: curl/8.5.0\r\n\
Accept: application/json\r\n\
Content-Type: application/json; charset=utf-8\r\n\
Content-Length: 47\r\n\
\r\n";

const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\n\
Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n\
Server: nginx/1.25.3\r\n\
Content-Type: application/json; charset=utf-8\r\n\
Content-Length: 1234\r\n\
Connection: keep-alive\r\n\
Cache-Control: no-cache, no-store, must-revalidate\r\n\
Vary: Accept-Encoding\r\n\
\r\n";

fn ours_response(resp: &[u8]) -> usize {
    let limits = Limits::default();
    let mut headers = [const { MaybeUninit::uninit() }; 16];
    match parse_response_uninit(black_box(resp), &mut headers, &limits) {
        Ok(Status::Complete(head)) => head.len + head.headers.len() + usize::from(head.status),
        _ => 0,
    }
}

fn httparse_response(resp: &[u8]) -> usize {
    let mut headers = [httparse::EMPTY_HEADER; 16];
    let mut r = httparse::Response::new(&mut headers);
    match r.parse(black_box(resp)) {
        Ok(httparse::Status::Complete(n)) => n + r.headers.len() + usize::from(r.code.unwrap_or(0)),
        _ => 0,
    }
}

/// The request of `encode-request`: method, path and four fields per request.
const ENCODE_FIELDS: &[(&str, &[u8])] = &[
    ("Accept", b"application/json"),
    ("Content-Type", b"application/json; charset=utf-8"),
    ("Authorization", b"Bearer 8f14e45fceea167a5a36dedd4bea2543"),
    ("X-Request-Id", b"0a1b2c3d4e5f6789"),
];

/// The per-connection part of `encode-request`, built once.
fn encode_prelude() -> RequestPrelude {
    RequestPrelude::new(Scheme::Https, "api.example.com", 443)
        .and_then(|p| p.with_field("User-Agent", b"peregrine/0.1"))
        .expect("valid prelude")
}

/// One request head into a reused buffer; returns its length.
fn encode_one(prelude: &RequestPrelude, out: &mut Vec<u8>) -> usize {
    out.clear();
    let body = framing::BodyLength::Length(black_box(47));
    match encode_request(
        prelude,
        Method::Post,
        black_box("/api/v1/orders"),
        ENCODE_FIELDS,
        body,
        out,
    ) {
        Ok(()) => out.len(),
        Err(_) => 0,
    }
}

fn bench_client(c: &mut Criterion<CpuTime>) {
    let expect = ours_response(RESPONSE);
    assert!(expect > RESPONSE.len(), "peregrine refused the response");
    assert_eq!(httparse_response(RESPONSE), expect, "httparse disagrees on the response");
    let mut g = c.benchmark_group("parse-response");
    configure(&mut g);
    g.bench_function("peregrine", |b| b.iter(|| ours_response(RESPONSE)));
    g.bench_function("httparse", |b| b.iter(|| httparse_response(RESPONSE)));
    g.finish();

    let prelude = encode_prelude();
    let mut out = Vec::with_capacity(1024);
    assert!(encode_one(&prelude, &mut out) > 0, "the request head encodes");
    let mut g = c.benchmark_group("encode-request");
    configure(&mut g);
    g.bench_function("peregrine", |b| b.iter(|| encode_one(&prelude, &mut out)));
    g.finish();
}

fn ours(req: &[u8]) -> usize {
    let limits = Limits::default();
    let mut headers = [const { MaybeUninit::uninit() }; 16];
    match parse_request_uninit(black_box(req), &mut headers, &limits) {
        Ok(Status::Complete(head)) => head.len + head.headers.len(),
        _ => 0,
    }
}

/// picohttpparser as a peer where it builds: picohttpparser-sys compiles its C with `-msse4`, so
/// it is an x86-64-only dev-dependency and elsewhere the bench compares with httparse alone.
#[cfg(target_arch = "x86_64")]
const PICO: Option<fn(&[u8]) -> usize> = Some(pico);
#[cfg(not(target_arch = "x86_64"))]
const PICO: Option<fn(&[u8]) -> usize> = None;

#[cfg(target_arch = "x86_64")]
fn pico(req: &[u8]) -> usize {
    use picohttpparser_sys::{phr_header, phr_parse_request};
    let req = black_box(req);
    let mut headers = [const { MaybeUninit::<phr_header>::uninit() }; 16];
    let mut num_headers = headers.len();
    let mut method = std::ptr::null();
    let mut method_len = 0;
    let mut path = std::ptr::null();
    let mut path_len = 0;
    let mut minor = 0;
    // SAFETY: `req` is valid for `req.len()` bytes for the whole call; every out pointer points
    // at a live local; `headers` has room for `num_headers`, which picohttpparser only writes
    // (`MaybeUninit<T>` has `T`'s layout). picohttpparser only reads `req`.
    let n = unsafe {
        phr_parse_request(
            req.as_ptr().cast(),
            req.len(),
            &mut method,
            &mut method_len,
            &mut path,
            &mut path_len,
            &mut minor,
            headers.as_mut_ptr().cast(),
            &mut num_headers,
            0,
        )
    };
    if n > 0 { n as usize + num_headers } else { 0 }
}

fn httparse_parse(req: &[u8]) -> usize {
    let mut headers = [httparse::EMPTY_HEADER; 16];
    let mut r = httparse::Request::new(&mut headers);
    match r.parse(black_box(req)) {
        Ok(httparse::Status::Complete(n)) => n + r.headers.len(),
        _ => 0,
    }
}

fn bench_heads(c: &mut Criterion<CpuTime>) {
    for (group, req) in
        [("parse-plaintext", PLAINTEXT), ("parse-browser", BROWSER), ("parse-post", POST)]
    {
        // All three must accept the input completely and agree on its length.
        let expect = ours(req);
        assert!(expect > req.len(), "{group}: peregrine refused its input");
        if let Some(pico) = PICO {
            assert_eq!(pico(req), expect, "{group}: picohttpparser disagrees");
        }
        assert_eq!(httparse_parse(req), expect, "{group}: httparse disagrees");
        let mut g = c.benchmark_group(group);
        configure(&mut g);
        g.bench_function("peregrine", |b| b.iter(|| ours(req)));
        if let Some(pico) = PICO {
            g.bench_function("picohttpparser", |b| b.iter(|| pico(req)));
        }
        g.bench_function("httparse", |b| b.iter(|| httparse_parse(req)));
        g.finish();
    }
}

/// A deterministic xorshift generator (the inputs must be the same for every peer and run).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

pub const SET: usize = 65_536;

/// `SET` decimal values packed in one buffer: (offset, length) per value.
fn number_set(rng: &mut Rng, digits: impl Fn(&mut Rng) -> usize) -> (Vec<u8>, Vec<(u32, u8)>) {
    let mut data = Vec::new();
    let mut spans = Vec::with_capacity(SET);
    for _ in 0..SET {
        let d = digits(rng);
        let start = data.len();
        for i in 0..d {
            // No leading zero (both parsers accept them; keep values realistic).
            let lo = if i == 0 && d > 1 { 1 } else { 0 };
            data.push(b'0' + lo + (rng.next() % (10 - u64::from(lo))) as u8);
        }
        spans.push((start as u32, d as u8));
    }
    (data, spans)
}

/// Sums every value of the set through `f`; generic so each parser is inlined into its own
/// loop, as at a real call site, and each value goes through `black_box` so the compiler
/// cannot vectorise across values.
#[inline(always)]
fn run_set(data: &[u8], spans: &[(u32, u8)], f: impl Fn(&[u8]) -> Option<u64>) -> u64 {
    let mut sum = 0u64;
    for &(o, l) in spans {
        let v = &data[o as usize..o as usize + usize::from(l)];
        sum = sum.wrapping_add(f(black_box(v)).unwrap_or(1));
    }
    sum
}

fn std_content_length(v: &[u8]) -> Option<u64> {
    std::str::from_utf8(v).ok()?.parse::<u64>().ok()
}

/// The loop alone: what every value costs before any parsing.
fn loop_alone(v: &[u8]) -> Option<u64> {
    Some(v.len() as u64)
}

fn bench_content_length(c: &mut Criterion<CpuTime>) {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let short = number_set(&mut rng, |r| 1 + (r.next() % 4) as usize);
    let long = number_set(&mut rng, |_| 19);
    for (group, (data, spans)) in [("content-length-short", &short), ("content-length-long", &long)]
    {
        for &(o, l) in spans {
            let v = &data[o as usize..o as usize + usize::from(l)];
            assert_eq!(framing::parse_content_length(v), std_content_length(v), "{v:?}");
        }
        let mut g = c.benchmark_group(group);
        configure(&mut g);
        g.throughput(Throughput::Elements(SET as u64));
        g.bench_function("peregrine", |b| {
            b.iter(|| run_set(data, spans, framing::parse_content_length))
        });
        g.bench_function("std", |b| b.iter(|| run_set(data, spans, std_content_length)));
        g.bench_function("loop", |b| b.iter(|| run_set(data, spans, loop_alone)));
        g.finish();
    }
}

/// The peer for method recognition: find the token end, then `match` the slice.
fn match_method(line: &[u8]) -> Option<(Method, usize)> {
    let end = line.iter().position(|&b| b == b' ')?;
    let m = match &line[..end] {
        b"GET" => Method::Get,
        b"HEAD" => Method::Head,
        b"POST" => Method::Post,
        b"PUT" => Method::Put,
        b"DELETE" => Method::Delete,
        b"CONNECT" => Method::Connect,
        b"OPTIONS" => Method::Options,
        b"TRACE" => Method::Trace,
        b"PATCH" => Method::Patch,
        _ => return None,
    };
    Some((m, end))
}

const LINE: usize = 24;

fn bench_methods(c: &mut Criterion<CpuTime>) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut data = Vec::with_capacity(SET * LINE);
    for _ in 0..SET {
        let m = peregrine::STANDARD_METHODS[(rng.next() % 9) as usize];
        let mut line = format!("{} /r/{} HTTP/1.1", m.as_str().unwrap_or("GET"), rng.next() % 1000)
            .into_bytes();
        line.resize(LINE, b' ');
        data.extend_from_slice(&line);
    }
    let lines = || data.chunks_exact(LINE);
    for l in lines() {
        assert_eq!(Method::recognize_prefix(l), match_method(l));
    }
    let mut g = c.benchmark_group("method-mix");
    configure(&mut g);
    g.throughput(Throughput::Elements(SET as u64));
    g.bench_function("peregrine", |b| {
        b.iter(|| {
            let mut acc = 0usize;
            for l in lines() {
                if let Some((m, n)) = Method::recognize_prefix(black_box(l)) {
                    acc = acc.wrapping_add(m as usize + n);
                }
            }
            acc
        })
    });
    g.bench_function("match", |b| {
        b.iter(|| {
            let mut acc = 0usize;
            for l in lines() {
                if let Some((m, n)) = match_method(black_box(l)) {
                    acc = acc.wrapping_add(m as usize + n);
                }
            }
            acc
        })
    });
    g.finish();
}

fn configure(g: &mut BenchmarkGroup<'_, CpuTime>) {
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(2));
    g.sample_size(60);
}

/// Where criterion writes its results (same rules as criterion's own lookup).
fn criterion_home() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return Path::new(&dir).join("criterion");
    }
    let mut dir = std::env::current_dir().unwrap_or_default();
    loop {
        let candidate = dir.join("target").join("criterion");
        if candidate.is_dir() || !dir.pop() {
            return candidate;
        }
    }
}

/// The median (ns per routine call) of `group/function` if it was measured by this process.
fn median(group: &str, function: &str, since: SystemTime) -> Option<f64> {
    let path = criterion_home().join(group).join(function).join("new").join("estimates.json");
    let fresh = std::fs::metadata(&path).ok()?.modified().ok()? >= since;
    if !fresh {
        return None;
    }
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
    json["median"]["point_estimate"].as_f64()
}

fn summary(group: &str, peer: &str, per: f64, since: SystemTime) {
    if let (Some(a), Some(b)) = (median(group, "peregrine", since), median(group, peer, since)) {
        let (a, b) = (a / per, b / per);
        println!("summary {group}: peregrine {a:.2} ns, {peer} {b:.2} ns, speedup {:.2}x", b / a);
    }
}

/// Profile mode for instruction counts (`valgrind --tool=callgrind`): with
/// `HTTP1_PROFILE=<parser>:<request>:<iterations>` (parser `peregrine`, `picohttpparser` or
/// `httparse`; request `plaintext`, `browser`, `post`, `tiny`, `bare`, `host` or `host+body`) the binary only runs that parse in a
/// loop and exits, so the count divided by the iterations is the cost of one call. The client's
/// side: `peregrine-response:response:<n>` and `httparse-response:response:<n>` parse the
/// `parse-response` head, `encode-request:post:<n>` encodes the `encode-request` head.
fn profile(spec: &str) -> Option<()> {
    let mut parts = spec.split(':');
    let parser = parts.next()?;
    if parser == "encode-request" {
        let (_, n) = (parts.next().filter(|&r| r == "post")?, parts.next()?.parse().ok()?);
        let prelude = encode_prelude();
        let mut out = Vec::with_capacity(1024);
        profile_loop(spec, n, || encode_one(&prelude, &mut out));
        return Some(());
    }
    let parse: fn(&[u8]) -> usize = match parser {
        "peregrine" => ours,
        "picohttpparser" => PICO?,
        "httparse" => httparse_parse,
        "peregrine-response" => ours_response,
        "httparse-response" => httparse_response,
        _ => return None,
    };
    let req = match parts.next()? {
        "response" if parser.ends_with("-response") => RESPONSE,
        _ if parser.ends_with("-response") => return None,
        "plaintext" => PLAINTEXT,
        "browser" => BROWSER,
        "post" => POST,
        // The smallest head: the fixed cost of a call.
        "tiny" => b"GET / HTTP/1.1\r\n\r\n",
        // No fields, but long enough (>= 32 bytes) for the vector kernels' block paths.
        "bare" => b"GET /plaintext/and/a/longer/path HTTP/1.1\r\n\r\n",
        // The plaintext request line and one short field: with `bare`, a line's cost.
        "host" => b"GET /plaintext HTTP/1.1\r\nHost: localhost:8080\r\n\r\n",
        // `host` followed by 32 bytes of body: its lines are not the input's last 32 bytes.
        "host+body" => b"GET /plaintext HTTP/1.1\r\nHost: localhost:8080\r\n\r\n0123456789abcdef0123456789abcdef",
        _ => return None,
    };
    let n: usize = parts.next()?.parse().ok()?;
    profile_loop(spec, n, || parse(black_box(req)));
    Some(())
}

/// Runs `call` `n` times and prints the mean thread CPU time per call.
fn profile_loop(spec: &str, n: usize, mut call: impl FnMut() -> usize) {
    let mut acc = 0usize;
    let start = cpu_time::thread_cpu_ns();
    for _ in 0..n {
        acc = acc.wrapping_add(call());
    }
    let ns = cpu_time::thread_cpu_ns().saturating_sub(start) as f64 / n.max(1) as f64;
    println!("profile {spec}: {acc} ({ns:.2} ns per call, thread CPU time)");
}

fn main() {
    if let Ok(spec) = std::env::var("HTTP1_PROFILE") {
        if profile(&spec).is_none() {
            eprintln!(
                "HTTP1_PROFILE=<peregrine|picohttpparser|httparse>:<plaintext|browser|post>:<n>, \
                 <peregrine-response|httparse-response>:response:<n> or encode-request:post:<n>"
            );
            std::process::exit(2);
        }
        return;
    }
    let since = SystemTime::now() - Duration::from_secs(1);
    let mut c =
        Criterion::default().with_measurement(CpuTime).without_plots().configure_from_args();
    bench_heads(&mut c);
    bench_client(&mut c);
    bench_content_length(&mut c);
    bench_methods(&mut c);
    c.final_summary();
    println!("scan kernel: {}", peregrine::http1::kernel_name());
    for g in ["parse-plaintext", "parse-browser", "parse-post"] {
        summary(g, "picohttpparser", 1.0, since);
        summary(g, "httparse", 1.0, since);
    }
    summary("parse-response", "httparse", 1.0, since);
    if let Some(ns) = median("encode-request", "peregrine", since) {
        println!("summary encode-request: peregrine {ns:.2} ns");
    }
    summary("content-length-short", "std", SET as f64, since);
    summary("content-length-long", "std", SET as f64, since);
    for g in ["content-length-short", "content-length-long"] {
        if let Some(ns) = median(g, "loop", since) {
            println!("({g}: the bench loop alone {:.2} ns per value)", ns / SET as f64);
        }
    }
    summary("method-mix", "match", SET as f64, since);
}
