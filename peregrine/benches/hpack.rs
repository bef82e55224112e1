//! HPACK benchmarks: every decoder decodes the same bytes, every encoder encodes the same
//! lists, in one process, timed by thread CPU time.
//!
//! Run: `cargo bench -p peregrine --bench hpack` (ends with the `summary ...` lines, in ns per
//! header field).
//!
//! Sets (each a list of connections, each connection a sequence of header blocks decoded on
//! one fresh decoder, as a server would):
//! - `corpus`: the 32 stories of hpack-test-case as nghttp2 encoded them (3,384 blocks,
//!   39,359 fields; one connection per story).
//! - `browser-get`: a browser's GET ×100 on one connection, encoded by nghttp2: the same
//!   navigation fields each time (indexed after the first request) plus a path and a
//!   ~300-byte cookie that change on every request (Huffman literals).
//! - `response`: a response head ×100 on one connection, encoded by nghttp2 (status,
//!   content-type/-length, date, etag, request id ...).
//!
//! Decoders: peregrine (`Decoder::decode` into a reused `FieldList`, then reading every
//! field), nghttp2 1.68 (`nghttp2_hd_inflate_hd2` through libnghttp2-sys, reading every
//! emitted field), httlib-hpack (`Decoder::decode` as its docs show: the block copied into a
//! reused `Vec`, fields into a reused `Vec` of owned pairs). Encoders (corpus raw-data lists
//! and the response set): peregrine `Encoder::encode` vs nghttp2 `nghttp2_hd_deflate_hd`,
//! with the output bytes of each.
//!
//! `HPACK_PROFILE=<who>:<set>:<iterations>` runs one pairing in a loop for callgrind, where
//! `who` is a decoder (`peregrine`, `nghttp2`, `httlib-hpack`) or an encoder
//! (`encode-peregrine`, `encode-nghttp2`); e.g.
//! `valgrind --tool=callgrind target/release/deps/hpack-* ` with
//! `HPACK_PROFILE=peregrine:browser-get:200`.
#![allow(unsafe_code)]

use criterion::{BenchmarkGroup, Criterion};
use peregrine::http2::hpack::{Decoder, Encoder, FieldList};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

mod cpu_time;
use cpu_time::CpuTime;
#[path = "../tests/support/hpack_corpus.rs"]
mod hpack_corpus;
#[path = "../tests/support/nghttp2_hd.rs"]
mod nghttp2_hd;

type Lists = Vec<Vec<(Vec<u8>, Vec<u8>)>>;
type Pairs = Vec<(&'static [u8], &'static [u8])>;

/// Connections of field lists and the blocks nghttp2 made of them.
struct Set {
    name: &'static str,
    lists: Vec<Lists>,
    blocks: Vec<Vec<Vec<u8>>>,
    fields: usize,
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn hex(&mut self, n: usize) -> String {
        (0..n).map(|_| char::from(b"0123456789abcdef"[(self.next() % 16) as usize])).collect()
    }
}

fn pairs(v: &[(&str, String)]) -> Vec<(Vec<u8>, Vec<u8>)> {
    v.iter().map(|(n, v)| (n.as_bytes().to_vec(), v.clone().into_bytes())).collect()
}

fn browser_gets() -> Lists {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let session = rng.hex(32);
    let csrf = rng.hex(32);
    let categories = ["shoes/running", "shoes/trail", "jackets", "socks", "bags/backpacks"];
    let mut prev = "/".to_string();
    (0..100)
        .map(|i| {
            let path = format!(
                "/products/{}/{}?color={}&size={}&sort=price_asc&ref=search_{i}",
                categories[(rng.next() % 5) as usize],
                10_000 + rng.next() % 90_000,
                ["blue", "black", "red", "grey"][(rng.next() % 4) as usize],
                36 + rng.next() % 12
            );
            let cookie = format!(
                "session_id={session}; csrftoken={csrf}; _ga=GA1.2.1234567890.1712345678; _gid=GA1.2.{}.1712{}; cart=%7B%22items%22%3A{}%2C%22total%22%3A{}.{}%7D; theme=dark; lang=en-US; last_seen=17123{}; consent=analytics%3Dtrue%26ads%3Dfalse",
                rng.next() % 1_000_000_000,
                rng.next() % 1_000_000,
                i % 7,
                rng.next() % 500,
                rng.next() % 100,
                rng.next() % 100_000
            );
            let list = pairs(&[
                (":method", "GET".into()),
                (":scheme", "https".into()),
                (":authority", "shop.example.com".into()),
                (":path", path.clone()),
                ("sec-ch-ua", "\"Chromium\";v=\"124\", \"Google Chrome\";v=\"124\", \"Not-A.Brand\";v=\"99\"".into()),
                ("sec-ch-ua-mobile", "?0".into()),
                ("sec-ch-ua-platform", "\"Linux\"".into()),
                ("upgrade-insecure-requests", "1".into()),
                ("user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36".into()),
                ("accept", "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8".into()),
                ("sec-fetch-site", "same-origin".into()),
                ("sec-fetch-mode", "navigate".into()),
                ("sec-fetch-user", "?1".into()),
                ("sec-fetch-dest", "document".into()),
                ("referer", format!("https://shop.example.com{prev}")),
                ("accept-encoding", "gzip, deflate, br, zstd".into()),
                ("accept-language", "en-US,en;q=0.9,de;q=0.8".into()),
                ("cookie", cookie),
                ("priority", "u=0, i".into()),
            ]);
            prev = path;
            list
        })
        .collect()
}

fn responses() -> Lists {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    (0..100)
        .map(|i| {
            pairs(&[
                (":status", if i % 10 == 9 { "304".into() } else { "200".into() }),
                ("date", format!("Mon, 24 Nov 2025 05:{:02}:{:02} GMT", 12 + i / 60, i % 60)),
                ("content-type", "text/html; charset=utf-8".into()),
                ("content-length", (1000 + rng.next() % 90_000).to_string()),
                ("server", "peregrine".into()),
                ("cache-control", "private, max-age=0, must-revalidate".into()),
                ("etag", format!("\"{}\"", rng.hex(16))),
                ("vary", "accept-encoding".into()),
                ("content-encoding", "br".into()),
                (
                    "strict-transport-security",
                    "max-age=63072000; includeSubDomains; preload".into(),
                ),
                ("x-content-type-options", "nosniff".into()),
                ("x-request-id", format!("{}-{}-{}", rng.hex(8), rng.hex(4), rng.hex(12))),
            ])
        })
        .collect()
}

fn nghttp2_blocks(lists: &Lists) -> Vec<Vec<u8>> {
    let mut d = nghttp2_hd::Deflater::new();
    let mut nvs = Vec::new();
    lists
        .iter()
        .map(|l| {
            let p: Vec<(&[u8], &[u8])> = l.iter().map(|(n, v)| (&n[..], &v[..])).collect();
            let mut out = Vec::new();
            d.deflate(&p, &mut nvs, &mut out);
            out
        })
        .collect()
}

fn sets() -> Vec<Set> {
    let raw = hpack_corpus::raw_stories();
    let stories = hpack_corpus::encoded_stories("nghttp2");
    let corpus = Set {
        name: "corpus",
        blocks: stories.iter().map(|s| s.cases.iter().map(|c| c.wire.clone()).collect()).collect(),
        lists: stories.iter().map(|s| raw[s.number].clone()).collect(),
        fields: 0,
    };
    let mut out = vec![corpus];
    for (name, lists) in [("browser-get", browser_gets()), ("response", responses())] {
        out.push(Set { name, blocks: vec![nghttp2_blocks(&lists)], lists: vec![lists], fields: 0 });
    }
    for s in &mut out {
        s.fields = s.lists.iter().flatten().map(Vec::len).sum();
    }
    out
}

/// A decoder under test: decodes every connection of a set, reading every field; returns a
/// checksum (the total name and value bytes).
struct Decoders {
    list: FieldList,
    buf: Vec<u8>,
    owned: Vec<(Vec<u8>, Vec<u8>, u8)>,
}

impl Decoders {
    fn peregrine(&mut self, set: &Set) -> usize {
        let mut acc = 0;
        for conn in &set.blocks {
            let mut d = Decoder::new(4096);
            for b in conn {
                d.decode(black_box(b), &mut self.list).expect("peregrine decodes nghttp2's blocks");
                for f in self.list.iter() {
                    acc += f.name.len() + f.value.len();
                }
            }
        }
        acc
    }

    fn nghttp2(&mut self, set: &Set) -> usize {
        let mut acc = 0;
        for conn in &set.blocks {
            let mut d = nghttp2_hd::Inflater::new();
            for b in conn {
                assert!(d.inflate(black_box(b), |n, v| acc += n.len() + v.len()));
            }
        }
        acc
    }

    fn httlib(&mut self, set: &Set) -> usize {
        let mut acc = 0;
        for conn in &set.blocks {
            let mut d = httlib_hpack::Decoder::default();
            for b in conn {
                self.buf.clear();
                self.buf.extend_from_slice(black_box(b));
                self.owned.clear();
                d.decode(&mut self.buf, &mut self.owned)
                    .expect("httlib-hpack decodes nghttp2's blocks");
                for (n, v, _) in &self.owned {
                    acc += n.len() + v.len();
                }
            }
        }
        acc
    }

    fn run(&mut self, who: &str, set: &Set) -> Option<usize> {
        Some(match who {
            "peregrine" => self.peregrine(set),
            "nghttp2" => self.nghttp2(set),
            "httlib-hpack" => self.httlib(set),
            _ => return None,
        })
    }
}

/// Encoders under test: encode every connection's lists; return the output bytes.
struct Encoders {
    dst: Vec<u8>,
    nvs: Vec<libnghttp2_sys::nghttp2_nv>,
    pairs: Vec<Vec<Pairs>>,
}

impl Encoders {
    fn new(set: &Set) -> Encoders {
        // The bench's inputs live for the whole process.
        let lists: &'static [Lists] = Box::leak(set.lists.clone().into_boxed_slice());
        let pairs = lists
            .iter()
            .map(|c| c.iter().map(|l| l.iter().map(|(n, v)| (&n[..], &v[..])).collect()).collect())
            .collect();
        Encoders { dst: Vec::with_capacity(1 << 16), nvs: Vec::new(), pairs }
    }

    fn peregrine(&mut self) -> usize {
        let mut bytes = 0;
        for conn in &self.pairs {
            let mut e = Encoder::new();
            for list in conn {
                self.dst.clear();
                e.encode(black_box(list).iter().copied(), &mut self.dst);
                bytes += self.dst.len();
            }
        }
        bytes
    }

    fn nghttp2(&mut self) -> usize {
        let mut bytes = 0;
        for conn in &self.pairs {
            let mut d = nghttp2_hd::Deflater::new();
            for list in conn {
                self.dst.clear();
                d.deflate(black_box(list), &mut self.nvs, &mut self.dst);
                bytes += self.dst.len();
            }
        }
        bytes
    }

    fn run(&mut self, who: &str) -> Option<usize> {
        Some(match who {
            "encode-peregrine" => self.peregrine(),
            "encode-nghttp2" => self.nghttp2(),
            _ => return None,
        })
    }
}

const DECODERS: [&str; 3] = ["peregrine", "nghttp2", "httlib-hpack"];
const ENCODE_SETS: [&str; 2] = ["corpus", "response"];

fn bench(c: &mut Criterion<CpuTime>, sets: &[Set]) -> Vec<(String, usize, usize)> {
    let mut decoders =
        Decoders { list: FieldList::new(1 << 20), buf: Vec::new(), owned: Vec::new() };
    for set in sets {
        let expect = decoders.peregrine(set);
        for who in DECODERS {
            assert_eq!(decoders.run(who, set), Some(expect), "{who} disagrees on {}", set.name);
        }
        let mut g = c.benchmark_group(format!("hpack-decode-{}", set.name));
        configure(&mut g);
        for who in DECODERS {
            g.bench_function(who, |b| b.iter(|| decoders.run(who, set)));
        }
        g.finish();
    }
    let mut sizes = Vec::new();
    for set in sets.iter().filter(|s| ENCODE_SETS.contains(&s.name)) {
        let mut enc = Encoders::new(set);
        let (ours, theirs) = (enc.peregrine(), enc.nghttp2());
        sizes.push((set.name.to_string(), ours, theirs));
        let mut g = c.benchmark_group(format!("hpack-encode-{}", set.name));
        configure(&mut g);
        g.bench_function("peregrine", |b| b.iter(|| enc.peregrine()));
        g.bench_function("nghttp2", |b| b.iter(|| enc.nghttp2()));
        g.finish();
    }
    sizes
}

fn configure(g: &mut BenchmarkGroup<'_, CpuTime>) {
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(3));
    g.sample_size(30);
}

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
        println!("summary {group}: peregrine {a:.1} ns, {peer} {b:.1} ns, speedup {:.2}x", b / a);
    }
}

fn profile(spec: &str, sets: &[Set]) -> Option<()> {
    let mut parts = spec.split(':');
    let who = parts.next()?;
    let set_name = parts.next()?;
    let set = sets.iter().find(|s| s.name == set_name)?;
    let n: usize = parts.next()?.parse().ok()?;
    let mut decoders =
        Decoders { list: FieldList::new(1 << 20), buf: Vec::new(), owned: Vec::new() };
    let mut encoders = Encoders::new(set);
    let mut acc = 0usize;
    let start = cpu_time::thread_cpu_ns();
    for _ in 0..n {
        acc = acc.wrapping_add(match decoders.run(who, set) {
            Some(x) => x,
            None => encoders.run(who)?,
        });
    }
    let ns =
        cpu_time::thread_cpu_ns().saturating_sub(start) as f64 / (n.max(1) * set.fields) as f64;
    println!(
        "profile {spec}: {acc} ({ns:.2} ns per field, thread CPU time; {} fields per iteration)",
        set.fields
    );
    Some(())
}

fn main() {
    let sets = sets();
    if let Ok(spec) = std::env::var("HPACK_PROFILE") {
        if profile(&spec, &sets).is_none() {
            eprintln!(
                "HPACK_PROFILE=<peregrine|nghttp2|httlib-hpack|encode-peregrine|encode-nghttp2>:<corpus|browser-get|response>:<n>"
            );
            std::process::exit(2);
        }
        return;
    }
    let since = SystemTime::now() - Duration::from_secs(1);
    let mut c =
        Criterion::default().with_measurement(CpuTime).without_plots().configure_from_args();
    let sizes = bench(&mut c, &sets);
    c.final_summary();
    for set in &sets {
        let g = format!("hpack-decode-{}", set.name);
        summary(&g, "nghttp2", set.fields as f64, since);
        summary(&g, "httlib-hpack", set.fields as f64, since);
    }
    for (name, ours, theirs) in sizes {
        let fields = sets.iter().find(|s| s.name == name).map_or(1, |s| s.fields);
        summary(&format!("hpack-encode-{name}"), "nghttp2", fields as f64, since);
        println!(
            "hpack-encode-{name} bytes: peregrine {ours}, nghttp2 {theirs}, ratio {:.4}",
            ours as f64 / theirs as f64
        );
    }
}
