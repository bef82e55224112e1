//! Router lookups: peregrine vs matchit 0.9 vs path-tree 0.8, same routes, same paths, one run.
//!
//! Scenarios (each lookup goes through the router's idiomatic "match with parameters" call and
//! its whole result is passed to `black_box`):
//! - `github`: the GitHub REST API templates in `benches/github_routes.txt`, one concrete path
//!   per template, every path once per pass;
//! - `synthetic-N` for N = 64, 4,096, 32,768: generated templates (static and parameter
//!   segments, shared prefixes, depth 2–6, fixed seed), every route once per pass, in random
//!   order.
//!
//! The paths of a pass are stored back to back in one buffer, in visiting order, and each
//! lookup borrows its slice of it. A server looks up the path of the request it has just parsed,
//! bytes that are hot in its read buffer; 32,768 separately allocated `String`s visited in
//! random order instead put a cache miss (and often a TLB miss) on the path itself before the
//! router reads a byte, which measured as about half of peregrine's time per lookup at
//! 32,768 routes. The order, the paths and the buffer are the same for every router.
//!
//! Time is thread CPU time (`CLOCK_THREAD_CPUTIME_ID`), so descheduling on a shared machine
//! does not count. Memory: live heap bytes after building each router at 32,768 routes, from a
//! counting global allocator (switched off while timing).
//!
//! Run: `cargo bench --bench router`. The last lines are the summary, from criterion's medians.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::{HashMap, HashSet};
use std::hint::black_box;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};
use std::time::Duration;

use criterion::{Criterion, Throughput};
use peregrine::router::Tree;

// ---------------------------------------------------------------- counting allocator

struct Counting;
static COUNTING: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts live bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        }
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_add(new_size as isize - layout.size() as isize, Ordering::Relaxed);
        }
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Heap bytes still live after `build` returns, with what it returns kept alive.
fn live_bytes<R>(build: impl FnOnce() -> R) -> (R, usize) {
    LIVE.store(0, Ordering::Relaxed);
    COUNTING.store(true, Ordering::Relaxed);
    let r = build();
    COUNTING.store(false, Ordering::Relaxed);
    (r, LIVE.load(Ordering::Relaxed).max(0) as usize)
}

// ---------------------------------------------------------------- thread CPU time

mod cpu_time;
use cpu_time::{CpuTime, thread_cpu_ns};

// ---------------------------------------------------------------- inputs

/// splitmix64: a fixed, dependency-free pseudo-random sequence.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i + 1));
        }
    }
}

const RESOURCES: &[&str] = &[
    "users",
    "orders",
    "items",
    "accounts",
    "projects",
    "teams",
    "invoices",
    "products",
    "carts",
    "payments",
    "shipments",
    "reviews",
    "tickets",
    "events",
    "files",
    "reports",
    "settings",
    "sessions",
    "messages",
    "comments",
    "tags",
    "groups",
    "devices",
    "regions",
    "catalog",
    "billing",
    "auth",
    "admin",
    "search",
    "metrics",
    "webhooks",
    "exports",
    "imports",
    "jobs",
    "queues",
    "builds",
    "releases",
    "deployments",
    "clusters",
    "nodes",
    "volumes",
    "networks",
    "secrets",
    "keys",
    "policies",
    "roles",
    "audit",
    "notifications",
];
const SYLLABLES: &[&str] = &[
    "ba", "ko", "ri", "tu", "me", "sa", "lo", "ve", "ni", "da", "pe", "zu", "ga", "fi", "mo", "ra",
];

fn word(rng: &mut Rng) -> String {
    let n = 2 + rng.below(3);
    (0..n).map(|_| SYLLABLES[rng.below(SYLLABLES.len())]).collect()
}

/// `n` distinct templates of depth 2–6: a resource, then static words from pools that grow
/// with depth (so prefixes are shared near the root), and 30% parameter segments named by
/// position (`{p3}`), so no two templates conflict in any of the routers.
fn synthetic(n: usize, seed: u64) -> Vec<(String, String)> {
    let mut rng = Rng(seed);
    let pools: Vec<Vec<String>> = [64usize, 256, 2048, 2048, 2048]
        .iter()
        .map(|&size| (0..size).map(|_| word(&mut rng)).collect())
        .collect();
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let depth = 2 + rng.below(5);
        let mut template = format!("/{}", RESOURCES[rng.below(RESOURCES.len())]);
        let mut path = template.clone();
        for level in 1..depth {
            if rng.below(100) < 30 {
                template.push_str(&format!("/{{p{level}}}"));
                path.push_str(&format!("/{}", 1000 + rng.below(1_000_000)));
            } else {
                let pool = &pools[level - 1];
                let w = &pool[rng.below(pool.len())];
                template.push('/');
                template.push_str(w);
                path.push('/');
                path.push_str(w);
            }
        }
        if seen.insert(template.clone()) {
            out.push((template, path));
        }
    }
    rng.shuffle(&mut out);
    out
}

/// A realistic concrete value for a GitHub template parameter.
fn github_value(name: &str, catch_all: bool) -> String {
    let v = match (name, catch_all) {
        ("ref", true) => "heads/feature/router",
        ("path", true) => "src/router/tree.rs",
        ("owner" | "repo_owner", _) => "rust-lang",
        ("repo" | "repo_name", _) => "rust",
        ("org", _) => "tokio-rs",
        ("username" | "assignee" | "target_user", _) => "octocat",
        ("enterprise", _) => "acme-corp",
        ("team_slug", _) => "core-team",
        ("branch", _) => "main",
        ("basehead", _) => "main...feature",
        ("tag", _) => "v1.2.3",
        ("name" | "secret_name" | "custom_property_name", _) => "NPM_TOKEN",
        ("language", _) => "rust",
        ("archive_format", _) => "zip",
        ("package_type", _) => "container",
        ("package_name", _) => "web-app",
        ("dir", _) => "docs",
        ("key", _) => "contributor_covenant",
        ("license", _) => "mit",
        ("code", _) => "a1b2c3",
        ("app_slug", _) => "dependabot",
        ("client_id", _) => "Iv1.8a61f9b3a7aba766",
        ("codespace_name", _) => "monalisa-octocat-hello-world-g4wpq6h95q",
        ("environment_name", _) => "production",
        ("workflow_id", _) => "ci.yml",
        ("ghsa_id", _) => "GHSA-abcd-1234-efgh",
        ("subject_digest", _) => "sha256:123abc",
        ("security_product", _) => "secret_scanning",
        ("enablement", _) => "enable_all",
        ("actor_type", _) => "installation",
        ("ref" | "sha" | "commit_sha" | "file_sha" | "tag_sha" | "tree_sha", _) => {
            "6dcb09b5b57875f334f61aebed695e2e4193db5e"
        }
        _ => "1296269",
    };
    v.to_owned()
}

/// (template, path) per line of the GitHub route file.
fn github() -> Vec<(String, String)> {
    let text = include_str!("github_routes.txt");
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let path: String = line
            .split('/')
            .skip(1)
            .map(|seg| match seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                Some(name) => match name.strip_prefix('*') {
                    Some(name) => format!("/{}", github_value(name, true)),
                    None => format!("/{}", github_value(name, false)),
                },
                None => format!("/{seg}"),
            })
            .collect();
        out.push((line.to_owned(), path));
    }
    out
}

/// path-tree syntax: `{name}` becomes `:name`, `{*name}` becomes `:name+` (one or more bytes,
/// slashes included).
fn path_tree_syntax(template: &str) -> String {
    template
        .split('/')
        .map(|seg| match seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            Some(name) => match name.strip_prefix('*') {
                Some(name) => format!(":{name}+"),
                None => format!(":{name}"),
            },
            None => seg.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

struct Routers {
    peregrine: Tree<usize>,
    matchit: matchit::Router<usize>,
    path_tree: path_tree::PathTree<usize>,
}

fn build(routes: &[(String, String)]) -> Routers {
    let mut r = Routers {
        peregrine: Tree::new(),
        matchit: matchit::Router::new(),
        path_tree: path_tree::PathTree::new(),
    };
    for (i, (t, _)) in routes.iter().enumerate() {
        r.peregrine.insert(t, i).expect("filtered");
        r.matchit.insert(t.as_str(), i).expect("filtered");
        let _ = r.path_tree.insert(&path_tree_syntax(t), i);
    }
    r
}

/// Keeps the routes every router accepts and resolves correctly (its own path gives its own
/// value in all three); reports what was dropped.
fn agree(name: &str, routes: Vec<(String, String)>) -> Vec<(String, String)> {
    let total = routes.len();
    let mut probe = Routers {
        peregrine: Tree::new(),
        matchit: matchit::Router::new(),
        path_tree: path_tree::PathTree::new(),
    };
    let (mut rejected, mut kept) = ([0usize; 3], Vec::new());
    for (t, p) in routes {
        let i = kept.len();
        let ours = probe.peregrine.insert(&t, i).is_ok();
        let theirs = probe.matchit.insert(t.as_str(), i).is_ok();
        let pt = probe.path_tree.insert(&path_tree_syntax(&t), i) == i;
        rejected[0] += usize::from(!ours);
        rejected[1] += usize::from(!theirs);
        rejected[2] += usize::from(!pt);
        if ours && theirs && pt {
            kept.push((t, p));
        } else {
            // Rebuild without it so the probes stay in step.
            probe = build(&kept);
        }
    }
    let r = build(&kept);
    let before = kept.len();
    let kept: Vec<_> = kept
        .into_iter()
        .enumerate()
        .filter(|(i, (_, p))| {
            r.peregrine.at(p).map(|m| *m.value) == Ok(*i)
                && r.matchit.at(p).map(|m| *m.value).ok() == Some(*i)
                && r.path_tree.find(p).map(|(v, _)| *v) == Some(*i)
        })
        .map(|(_, r)| r)
        .collect();
    println!(
        "routes {name}: {total} templates, rejected by peregrine {}, matchit {}, path-tree {}; \
         {} resolved differently by some router; {} used",
        rejected[0],
        rejected[1],
        rejected[2],
        before - kept.len(),
        kept.len()
    );
    kept
}

// ---------------------------------------------------------------- benchmark

/// The lookup paths of one pass, back to back in one buffer in visiting order (see the module
/// docs for why).
struct Paths {
    text: String,
    ends: Vec<usize>,
}

impl Paths {
    fn new(routes: &[(String, String)]) -> Self {
        let mut text = String::with_capacity(routes.iter().map(|(_, p)| p.len()).sum());
        let ends = routes
            .iter()
            .map(|(_, p)| {
                text.push_str(p);
                text.len()
            })
            .collect();
        Paths { text, ends }
    }

    fn slices(&self) -> Vec<&str> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let p = &self.text[start..end];
                start = end;
                p
            })
            .collect()
    }
}

const PEERS: [&str; 3] = ["peregrine", "matchit", "path-tree"];
/// Not routers (see [`Floors`]); measured on the synthetic sets only.
const FLOORS: [&str; 2] = ["floor-hashmap", "floor-line"];

fn bench_scenario(c: &mut Criterion<CpuTime>, name: &str, routes: &[(String, String)]) -> usize {
    let r = build(routes);
    let buffer = Paths::new(routes);
    let paths = buffer.slices();
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(paths.len() as u64));
    g.bench_function(PEERS[0], |b| {
        b.iter(|| {
            for p in &paths {
                let _ = black_box(r.peregrine.at(black_box(p)));
            }
        })
    });
    g.bench_function(PEERS[1], |b| {
        b.iter(|| {
            for p in &paths {
                let _ = black_box(r.matchit.at(black_box(p)));
            }
        })
    });
    g.bench_function(PEERS[2], |b| {
        b.iter(|| {
            for p in &paths {
                let _ = black_box(r.path_tree.find(black_box(p)));
            }
        })
    });
    if name.starts_with("synthetic-") {
        let floors = Floors::new(routes);
        g.bench_function(FLOORS[0], |b| {
            b.iter(|| {
                for p in &paths {
                    let _ = black_box(floors.map.get(black_box(p)));
                }
            })
        });
        g.bench_function(FLOORS[1], |b| {
            b.iter(|| {
                for p in &paths {
                    let _ = black_box(floors.line.get(black_box(p)));
                }
            })
        });
    }
    g.finish();
    paths.len()
}

fn output_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return home.into();
    }
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(t) => PathBuf::from(t).join("criterion"),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/criterion"),
    }
}

/// This run's median time per iteration (ns) from criterion's estimates.
fn median_ns(dir: &std::path::Path, group: &str, function: &str) -> Option<f64> {
    let file = dir.join(group).join(function).join("new/estimates.json");
    let text = std::fs::read_to_string(file).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json["median"]["point_estimate"].as_f64()
}

/// Floors, not routers: the concrete paths of a synthetic set as keys of a hash map, so that a
/// lookup is one hash, one probe and one key compare, with no routing at all. What they cost at
/// 32,768 keys against 64 is what the cache hierarchy alone charges for a table that size.
struct Floors<'a> {
    /// std's `HashMap` (SipHash), keys borrowed: the probe, then the key's bytes.
    map: HashMap<&'a str, usize>,
    /// The least a lookup can touch: its key inline in the slot it hashes to.
    line: LineMap,
}

impl<'a> Floors<'a> {
    fn new(routes: &'a [(String, String)]) -> Self {
        let keys: Vec<&str> = routes.iter().map(|(_, p)| p.as_str()).collect();
        let map = keys.iter().enumerate().map(|(i, k)| (*k, i)).collect();
        Floors { map, line: LineMap::new(&keys) }
    }
}

/// The `floor-line` floor: concrete paths in an open-addressed table of 64-byte lines, each
/// holding its key inline (up to 59 bytes), so a lookup is one hash and, at the home slot of a
/// half-empty table, one cache line.
struct LineMap {
    lines: Vec<Line>,
    mask: usize,
}

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line {
    len: u8,
    value: u32,
    key: [u8; 59],
}

/// One multiply per 8 bytes.
fn word_hash(bytes: &[u8]) -> u64 {
    bytes.chunks(8).fold(0u64, |h, chunk| {
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    })
}

impl LineMap {
    fn new(keys: &[&str]) -> Self {
        let size = (keys.len() * 2).next_power_of_two();
        let empty = Line { len: u8::MAX, value: 0, key: [0; 59] };
        let mut lines = vec![empty; size];
        for (value, k) in keys.iter().enumerate() {
            let k = k.as_bytes();
            assert!(k.len() <= 59, "key too long for the line floor");
            let mut i = (word_hash(k) >> 32) as usize & (size - 1);
            while lines[i].len != u8::MAX {
                i = (i + 1) & (size - 1);
            }
            lines[i].len = k.len() as u8;
            lines[i].value = value as u32;
            lines[i].key[..k.len()].copy_from_slice(k);
        }
        LineMap { lines, mask: size - 1 }
    }

    fn get(&self, k: &str) -> Option<u32> {
        let k = k.as_bytes();
        let mut i = (word_hash(k) >> 32) as usize & self.mask;
        loop {
            let line = &self.lines[i];
            if line.len == u8::MAX {
                return None;
            }
            if usize::from(line.len) == k.len() && &line.key[..k.len()] == k {
                return Some(line.value);
            }
            i = (i + 1) & self.mask;
        }
    }
}

/// `ROUTER_PROFILE=<scenario>:<router>:<passes>` runs only those lookups, without criterion,
/// for `valgrind --tool=callgrind` (instruction counts are stable on a loaded machine).
///
/// A diagnostic: `<scenario>x<k>` (`synthetic-64x512`) makes one pass look every route up `k`
/// times, each round in a new random order. The table and its cache footprint stay the same,
/// but the sequence of lookups is too long for the branch predictor to learn, as it does the 64
/// lookups of `synthetic-64` repeated pass after pass.
fn profile(spec: &str) {
    let mut parts = spec.split(':');
    let (Some(name), Some(router), Some(passes)) = (parts.next(), parts.next(), parts.next())
    else {
        panic!("ROUTER_PROFILE=<scenario>[x<rounds>]:<router>:<passes>");
    };
    let passes: usize = passes.parse().expect("passes");
    let scenario = name;
    let (name, rounds) = match name.split_once('x') {
        Some((name, k)) => (name, k.parse().expect("rounds")),
        None => (name, 1),
    };
    let routes = match name.strip_prefix("synthetic-") {
        Some(n) => {
            let n: usize = n.parse().expect("size");
            synthetic(n, 0x5EED_0000 + n as u64)
        }
        None => agree("github", github()),
    };
    let r = build(&routes);
    let mut rng = Rng(0x0DE5_0000);
    let order: Vec<(String, String)> = (0..rounds)
        .flat_map(|round| {
            let mut v = routes.clone();
            if round > 0 {
                rng.shuffle(&mut v);
            }
            v
        })
        .collect();
    let buffer = Paths::new(&order);
    let paths = buffer.slices();
    let floors = Floors::new(&routes);
    let start = thread_cpu_ns();
    for _ in 0..passes {
        for p in &paths {
            match router {
                "peregrine" => drop(black_box(r.peregrine.at(black_box(p)))),
                "matchit" => drop(black_box(r.matchit.at(black_box(p)))),
                "floor-hashmap" => drop(black_box(floors.map.get(black_box(p)))),
                "floor-line" => drop(black_box(floors.line.get(black_box(p)))),
                _ => drop(black_box(r.path_tree.find(black_box(p)))),
            }
        }
    }
    let ns = (thread_cpu_ns() - start) as f64 / (passes * paths.len()) as f64;
    println!("profile {scenario} {router}: {ns:.1} ns/lookup over {passes} passes");
}

fn main() {
    if let Ok(spec) = std::env::var("ROUTER_PROFILE") {
        return profile(&spec);
    }
    let dir = output_dir();
    let mut c = Criterion::default()
        .with_measurement(CpuTime)
        .output_directory(&dir)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
        .without_plots()
        .configure_from_args();

    let mut scenarios = vec![("github".to_owned(), agree("github", github()))];
    for n in [64usize, 4096, 32768] {
        let name = format!("synthetic-{n}");
        let routes = agree(&name, synthetic(n, 0x5EED_0000 + n as u64));
        scenarios.push((name, routes));
    }

    // Memory at 32,768 routes (and for the GitHub set), each router built alone.
    let mut memory = Vec::new();
    for (name, routes) in scenarios.iter().filter(|(n, _)| n == "github" || n == "synthetic-32768")
    {
        let n = routes.len() as f64;
        let (a, ours) = live_bytes(|| {
            let mut t = Tree::new();
            routes.iter().enumerate().for_each(|(i, (r, _))| t.insert(r, i).unwrap());
            t
        });
        let (b, theirs) = live_bytes(|| {
            let mut t = matchit::Router::new();
            routes.iter().enumerate().for_each(|(i, (r, _))| t.insert(r.as_str(), i).unwrap());
            t
        });
        let (d, pt) = live_bytes(|| {
            let mut t = path_tree::PathTree::new();
            for (i, (r, _)) in routes.iter().enumerate() {
                let _ = t.insert(&path_tree_syntax(r), i);
            }
            t
        });
        drop((a, b, d));
        memory.push(format!(
            "memory {name}: peregrine {:.0} B/route, matchit {:.0} B/route, path-tree {:.0} B/route",
            ours as f64 / n,
            theirs as f64 / n,
            pt as f64 / n
        ));
    }

    let mut counts = Vec::new();
    for (name, routes) in &scenarios {
        counts.push((name.clone(), bench_scenario(&mut c, name, routes)));
    }
    c.final_summary();

    println!();
    for (name, n) in &counts {
        let per = |f: &str| median_ns(&dir, name, f).map(|v| v / *n as f64);
        let Some(ours) = per(PEERS[0]) else {
            continue;
        };
        for peer in &PEERS[1..] {
            if let Some(theirs) = per(peer) {
                println!(
                    "summary {name}: peregrine {ours:.1} ns, {peer} {theirs:.1} ns, speedup {:.2}x",
                    theirs / ours
                );
            }
        }
    }
    for m in &memory {
        println!("{m}");
    }
    // How cost grows from 64 to 32,768 routes, next to what a bare hash probe of the concrete
    // paths pays for the same growth (issue 4's goal: within 2x).
    let per = |name: &str, f: &str| {
        let n = counts.iter().find(|(s, _)| s == name)?.1 as f64;
        median_ns(&dir, name, f).map(|v| v / n)
    };
    let growth: Vec<String> = PEERS
        .iter()
        .chain(&FLOORS)
        .filter_map(|f| {
            let ratio = per("synthetic-32768", f)? / per("synthetic-64", f)?;
            Some(format!("{f} {ratio:.2}x"))
        })
        .collect();
    println!("growth synthetic-64 to synthetic-32768: {}", growth.join(", "));
    for name in ["synthetic-64", "synthetic-32768"] {
        let floors: Vec<String> =
            FLOORS.iter().filter_map(|f| Some(format!("{f} {:.1} ns", per(name, f)?))).collect();
        println!("floor {name}: {}", floors.join(", "));
    }
}
