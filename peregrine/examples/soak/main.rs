//! The soak (bench/soak.sh, issue 32): well-behaved clients whose every response is verified
//! byte for byte, mixed with hostile ones, against `peregrine serve` (plain and TLS) and
//! `peregrine proxy` in front of examples/soak_backend.rs, with the servers' memory, file
//! descriptors, threads and the good clients' latency sampled every 10 s.
//!
//! ```text
//! soak gen DIR        the served files (DIR/site) and a certificate (DIR/cert.pem, key.pem)
//! soak run --dir DIR --plain ADDR --tls ADDR --proxy ADDR --serve-pid PID --tls-pid PID
//!          --log FILE --pid NAME=PID[:SLACK]... [--seconds S] [--idle-seconds S] [--warmup-seconds S]
//!          [--rate PER_S] [--header-timeout S] [--out FILE.json]
//! ```
//!
//! Phases: the good clients alone for `--idle-seconds` (their idle latency); then the hostile
//! clients too for `--seconds`, with the serve log renamed and SIGHUP sent halfway; then every
//! client stops and the file descriptors must come back to their baseline (plus SLACK, the
//! proxy's and backend's idle pooled connections); then good clients run against the plain
//! server (HTTP/1.1, h2c) and the TLS server (h2, HTTP/3) again and both get SIGTERM: the
//! drain must fail none of their requests.

mod bad;
mod batch;
mod ctx;
mod h1;
mod h2;
mod h3;
mod sample;
mod site;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use serde_json::json;
use tokio::task::JoinHandle;

use ctx::{BAD, Bad, Ctx, GOOD, Good, Target};
use sample::{Proc, percentile};

struct Args {
    dir: PathBuf,
    addrs: [String; 3],
    serve_pid: u32,
    tls_pid: u32,
    log: PathBuf,
    pids: Vec<(String, u32, u64)>,
    seconds: u64,
    idle_seconds: u64,
    warmup_seconds: u64,
    rate: f64,
    header_timeout: u64,
    out: Option<PathBuf>,
}

fn usage(why: &str) -> ! {
    eprintln!(
        "soak: {why}\nusage: soak gen DIR | soak run --dir DIR --plain ADDR --tls ADDR --proxy ADDR --serve-pid PID --tls-pid PID --log FILE --pid NAME=PID[:SLACK]... [--seconds S] [--idle-seconds S] [--warmup-seconds S] [--rate PER_S] [--header-timeout S] [--out FILE]"
    );
    std::process::exit(2)
}

fn parse(mut args: impl Iterator<Item = String>) -> Args {
    let mut a = Args {
        dir: PathBuf::new(),
        addrs: Default::default(),
        serve_pid: 0,
        tls_pid: 0,
        log: PathBuf::new(),
        pids: Vec::new(),
        seconds: 180,
        idle_seconds: 20,
        warmup_seconds: 60,
        rate: 10.0,
        header_timeout: 2,
        out: None,
    };
    while let Some(flag) = args.next() {
        let v = args.next().unwrap_or_else(|| usage(&format!("{flag} needs a value")));
        let num = |v: &str| v.parse::<u64>().unwrap_or_else(|_| usage(&format!("{flag}: {v}")));
        match flag.as_str() {
            "--dir" => a.dir = v.into(),
            "--plain" => a.addrs[0] = v,
            "--tls" => a.addrs[1] = v,
            "--proxy" => a.addrs[2] = v,
            "--serve-pid" => a.serve_pid = num(&v) as u32,
            "--tls-pid" => a.tls_pid = num(&v) as u32,
            "--log" => a.log = v.into(),
            "--seconds" => a.seconds = num(&v),
            "--idle-seconds" => a.idle_seconds = num(&v),
            "--warmup-seconds" => a.warmup_seconds = num(&v),
            "--header-timeout" => a.header_timeout = num(&v),
            "--rate" => a.rate = v.parse().unwrap_or_else(|_| usage("--rate")),
            "--out" => a.out = Some(v.into()),
            "--pid" => {
                let (name, rest) = v.split_once('=').unwrap_or_else(|| usage("--pid NAME=PID"));
                let (pid, slack) = rest.split_once(':').unwrap_or((rest, "0"));
                a.pids.push((name.to_owned(), num(pid) as u32, num(slack)));
            }
            _ => usage(&format!("unknown flag {flag}")),
        }
    }
    if a.addrs.iter().any(String::is_empty)
        || a.serve_pid == 0
        || a.tls_pid == 0
        || a.pids.is_empty()
    {
        usage("--plain, --tls, --proxy, --serve-pid, --tls-pid and --pid are required");
    }
    a
}

fn main() {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("gen") => {
            let dir = args.next().unwrap_or_else(|| usage("gen DIR"));
            site::generate(dir.as_ref()).expect("writing the site");
        }
        Some("run") => {
            let args = parse(args);
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            let passed = rt.block_on(run(args));
            std::process::exit(if passed { 0 } else { 1 });
        }
        _ => usage("gen or run"),
    }
}

fn signal(sig: &str, pid: u32) {
    let ok = std::process::Command::new("kill").args([sig, &pid.to_string()]).status();
    if !ok.is_ok_and(|s| s.success()) {
        eprintln!("soak: kill {sig} {pid} failed");
    }
}

/// The TLS clients' settings (HTTP/1.1 and h2 by ALPN) and the HTTP/3 client's, all trusting
/// the soak's certificate.
fn connectors(dir: &std::path::Path) -> ([tokio_rustls::TlsConnector; 2], quinn::ClientConfig) {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(dir.join("cert.pem")).expect("cert.pem") {
        roots.add(cert.expect("cert.pem")).expect("cert.pem");
    }
    let tcp = [b"http/1.1".as_slice(), b"h2"].map(|alpn| {
        let mut c = rustls::ClientConfig::builder()
            .with_root_certificates(roots.clone())
            .with_no_client_auth();
        c.alpn_protocols = vec![alpn.to_vec()];
        tokio_rustls::TlsConnector::from(Arc::new(c))
    });
    (tcp, h3::client_config(roots))
}

fn spawn_good(ctx: &Arc<Ctx>, rate: f64, drain_only: bool) -> Vec<JoinHandle<()>> {
    let mut t = Vec::new();
    let c = || ctx.clone();
    t.push(tokio::spawn(h1::one_at_a_time(c(), Good::H1, 1, rate)));
    t.push(tokio::spawn(h1::one_at_a_time(c(), Good::H1, 2, rate)));
    t.push(tokio::spawn(h1::pipelined(c(), 3, rate / 4.0, 8)));
    t.push(tokio::spawn(h2::client(c(), false, 4, rate / 2.0, 4)));
    t.push(tokio::spawn(h2::client(c(), true, 9, rate / 2.0, 4)));
    t.push(tokio::spawn(h3::client(c(), 13, rate / 4.0, 4)));
    if drain_only {
        return t;
    }
    t.push(tokio::spawn(h1::one_at_a_time(c(), Good::Range, 5, rate)));
    t.push(tokio::spawn(h1::one_at_a_time(c(), Good::Conditional, 6, rate)));
    t.push(tokio::spawn(h1::one_at_a_time(c(), Good::Compressed, 7, rate)));
    t.push(tokio::spawn(h1::one_at_a_time(c(), Good::H1Tls, 8, rate)));
    t.push(tokio::spawn(h1::one_at_a_time(c(), Good::Upload, 10, rate)));
    t.push(tokio::spawn(h2::ws(c(), 11, rate)));
    t.push(tokio::spawn(h1::panics(c(), 12, 5.0)));
    t
}

fn spawn_bad(ctx: &Arc<Ctx>, rt: &tokio::runtime::Handle) -> Vec<JoinHandle<()>> {
    let plan: [(Bad, usize, f64); 7] = [
        (Bad::Slowloris, 4, 1.0),
        (Bad::AbandonedUpload, 1, 2.0),
        (Bad::StoppedReader, 2, 1.0),
        (Bad::Reset, 1, 2.0),
        (Bad::RapidReset, 1, 0.5),
        (Bad::H2Frame, 1, 1.0),
        (Bad::H1Head, 1, 1.0),
    ];
    let mut t = Vec::new();
    for (class, tasks, per_s) in plan {
        for i in 0..tasks {
            let seed = 100 + class as u64 * 10 + i as u64;
            t.push(rt.spawn(bad::run(ctx.clone(), class, seed, per_s)));
        }
    }
    t
}

async fn join_all(tasks: Vec<JoinHandle<()>>, limit: Duration) -> bool {
    tokio::time::timeout(limit, futures_util::future::join_all(tasks)).await.is_ok()
}

struct Sampler {
    pids: Vec<(String, u32, u64)>,
    last: Vec<Option<Proc>>,
    last_at: Instant,
    start: Instant,
    rows: Vec<serde_json::Value>,
}

impl Sampler {
    /// One sample of every process and of the latencies since the last; returns the figures.
    fn take(&mut self, ctx: &Ctx, phase: &str, phase_lat: &mut Vec<u32>) -> Vec<Option<Proc>> {
        let mut lat = std::mem::take(&mut *ctx.latency.lock().unwrap());
        lat.sort_unstable();
        let (p50, p99) = (percentile(&lat, 0.5), percentile(&lat, 0.99));
        phase_lat.extend_from_slice(&lat);
        let secs = self.last_at.elapsed().as_secs_f64();
        self.last_at = Instant::now();
        let now: Vec<Option<Proc>> =
            self.pids.iter().map(|(_, pid, _)| sample::read(*pid)).collect();
        let mut procs = serde_json::Map::new();
        let mut line = format!(
            "[{:>5.0}s {phase:<5}] good {:>5.0} req/s p50 {:>6} µs p99 {:>7} µs |",
            self.start.elapsed().as_secs_f64(),
            lat.len() as f64 / secs,
            p50,
            p99
        );
        for (((name, _, _), p), last) in self.pids.iter().zip(&now).zip(&self.last) {
            let Some(p) = p else {
                line += &format!(" {name}: exited |");
                continue;
            };
            let cpu = last
                .map_or(0.0, |l| (p.cpu_ticks - l.cpu_ticks) as f64 / sample::TICKS / secs * 100.0);
            line += &format!(
                " {name}: {} KiB {} fds {} thr {:.0}% cpu |",
                p.rss_kib, p.fds, p.threads, cpu
            );
            let mut j = p.json();
            j["cpu_percent"] = json!((cpu * 10.0).round() / 10.0);
            procs.insert(name.clone(), j);
        }
        eprintln!("{line}");
        self.rows.push(json!({
            "t_s": self.start.elapsed().as_secs(), "phase": phase,
            "good_requests": lat.len(), "p50_us": p50, "p99_us": p99, "processes": procs,
        }));
        self.last = now.clone();
        now
    }
}

async fn run(a: Args) -> bool {
    let files = site::load(&a.dir).expect("reading DIR/site (run `soak gen DIR` first)");
    let (tls, quic) = connectors(&a.dir);
    let ctx = Arc::new(Ctx::new(
        files,
        a.addrs.clone(),
        tls,
        quic,
        Duration::from_secs(a.header_timeout),
    ));
    // The servers' file caches keep a resolved file's descriptor open: each file is asked for
    // once (plain and TLS) before the baseline, so it counts them.
    for (name, _) in site::FILES {
        for (class, target) in [(Good::H1, Target::Plain), (Good::H1Tls, Target::Tls)] {
            let started = Instant::now();
            match h1::exchange(&ctx, target, &mut None, &h1::get(name, "Connection: close\r\n"))
                .await
            {
                Ok(h1::Sent::Answered(resp)) => {
                    match h1::verify(&ctx, &resp, &h1::Expect::File(name)) {
                        Ok(n) => ctx.ok(class, n, started),
                        Err(why) => ctx.fail(class, why),
                    }
                }
                _ => ctx.fail(class, "the first request for a file was not answered"),
            }
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    ctx.latency.lock().unwrap().clear();
    let baseline: Vec<Option<Proc>> = a.pids.iter().map(|(_, pid, _)| sample::read(*pid)).collect();
    let mut s = Sampler {
        pids: a.pids.clone(),
        last: baseline.clone(),
        last_at: Instant::now(),
        start: Instant::now(),
        rows: Vec::new(),
    };
    let tick = Duration::from_secs(10);

    // Idle: the good clients alone, their first 5 s (handshakes, first compressions) left out.
    let good = spawn_good(&ctx, a.rate, false);
    tokio::time::sleep(Duration::from_secs(5)).await;
    ctx.latency.lock().unwrap().clear();
    s.start = Instant::now();
    s.last_at = s.start;
    let mut idle_lat = Vec::new();
    let mut next = Instant::now();
    while s.start.elapsed() < Duration::from_secs(a.idle_seconds) {
        next += tick.min(Duration::from_secs(a.idle_seconds));
        tokio::time::sleep_until(next.into()).await;
        s.take(&ctx, "idle", &mut idle_lat);
    }

    // Soak: hostile clients too; the log renamed and SIGHUP halfway.
    let soak_start = Instant::now();
    // The hostile clients on a thread of their own, so their work in this process does not
    // delay the good clients' tasks (whose latency is measured).
    let bad_rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let bad = spawn_bad(&ctx, bad_rt.handle());
    let mut soak_lat = Vec::new();
    let (mut warm, mut hup_done) = (None, false);
    let end = soak_start + Duration::from_secs(a.seconds);
    let mut next = soak_start;
    loop {
        let warm_at = soak_start + Duration::from_secs(a.warmup_seconds);
        next = (next + tick).min(end);
        if warm.is_none() && warm_at < next {
            next = warm_at;
        }
        tokio::time::sleep_until(next.into()).await;
        if !hup_done && soak_start.elapsed() >= Duration::from_secs(a.seconds / 2) {
            let rotated = a.log.with_extension("log.1");
            std::fs::rename(&a.log, &rotated).expect("renaming the access log");
            signal("-HUP", a.serve_pid);
            eprintln!("soak: {} renamed to {}, SIGHUP sent", a.log.display(), rotated.display());
            hup_done = true;
        }
        let now = s.take(&ctx, "soak", &mut soak_lat);
        if warm.is_none() && Instant::now() >= warm_at {
            warm = Some(now.clone());
        }
        if Instant::now() >= end {
            break;
        }
    }
    let at_end = s.last.clone();
    let warm = warm.unwrap_or_else(|| at_end.clone());

    // Every client leaves; the descriptors must come back.
    ctx.stop_bad.store(true, Ordering::Relaxed);
    let bad_ended = join_all(bad, Duration::from_secs(a.header_timeout + 30)).await;
    // (Dropping a runtime inside another's task would panic.)
    bad_rt.shutdown_background();
    ctx.stop_good.store(true, Ordering::Relaxed);
    let good_ended = join_all(good, Duration::from_secs(30)).await;
    let fd_deadline = Instant::now() + Duration::from_secs(a.header_timeout + 20);
    let fds_back = |now: &[Option<Proc>]| {
        a.pids.iter().zip(now).zip(&baseline).all(|(((_, _, slack), n), b)| match (n, b) {
            (Some(n), Some(b)) => n.fds <= b.fds + slack,
            _ => false,
        })
    };
    let mut after: Vec<Option<Proc>> = Vec::new();
    while Instant::now() < fd_deadline {
        after = a.pids.iter().map(|(_, pid, _)| sample::read(*pid)).collect();
        if fds_back(&after) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let fds_ok = fds_back(&after);

    // Drain: good clients on the plain and TLS servers, SIGTERM under them.
    let before_drain = counts(&ctx);
    ctx.stop_good.store(false, Ordering::Relaxed);
    let drain_clients = spawn_good(&ctx, a.rate, true);
    tokio::time::sleep(Duration::from_secs(3)).await;
    ctx.draining.store(true, Ordering::Relaxed);
    signal("-TERM", a.serve_pid);
    signal("-TERM", a.tls_pid);
    eprintln!("soak: SIGTERM sent to the plain and TLS servers under their good clients");
    let drain_ended = join_all(drain_clients, Duration::from_secs(40)).await;
    ctx.stop_good.store(true, Ordering::Relaxed);
    let exited = {
        let deadline = Instant::now() + Duration::from_secs(30);
        let running = || [a.serve_pid, a.tls_pid].iter().any(|p| sample::read(*p).is_some());
        while running() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        !running()
    };
    let during_drain = counts(&ctx);

    report(
        &a,
        &ctx,
        Report {
            idle_lat,
            soak_lat,
            baseline,
            warm,
            at_end,
            after,
            fds_ok,
            ended: bad_ended && good_ended,
            drain_ended,
            exited,
            before_drain,
            during_drain,
            samples: s.rows,
        },
    )
}

/// (ok, failed) of the good clients, summed.
fn counts(ctx: &Ctx) -> (u64, u64) {
    ctx.good.iter().fold((0, 0), |(o, f), c| {
        (o + c.ok.load(Ordering::Relaxed), f + c.failed.load(Ordering::Relaxed))
    })
}

struct Report {
    idle_lat: Vec<u32>,
    soak_lat: Vec<u32>,
    baseline: Vec<Option<Proc>>,
    warm: Vec<Option<Proc>>,
    at_end: Vec<Option<Proc>>,
    after: Vec<Option<Proc>>,
    fds_ok: bool,
    ended: bool,
    drain_ended: bool,
    exited: bool,
    before_drain: (u64, u64),
    during_drain: (u64, u64),
    samples: Vec<serde_json::Value>,
}

fn report(a: &Args, ctx: &Ctx, mut r: Report) -> bool {
    let secs = (a.idle_seconds + a.seconds) as f64;
    let mut good = BTreeMap::new();
    let (mut ok, mut failed, mut bytes) = (0, 0, 0);
    let mut by_target = [0u64; 3];
    let classes = [
        Good::H1,
        Good::Pipelined,
        Good::Range,
        Good::Conditional,
        Good::Compressed,
        Good::H2c,
        Good::H2Tls,
        Good::H1Tls,
        Good::H3,
        Good::Upload,
        Good::Ws,
        Good::Panic,
    ];
    let mut idle_classes = Vec::new();
    for class in classes {
        let c = &ctx.good[class as usize];
        let (o, f, b) = (
            c.ok.load(Ordering::Relaxed),
            c.failed.load(Ordering::Relaxed),
            c.bytes.load(Ordering::Relaxed),
        );
        let retried = c.retried.load(Ordering::Relaxed);
        (ok, failed, bytes) = (ok + o, failed + f, bytes + b);
        by_target[class.target() as usize] += o;
        if o == 0 {
            idle_classes.push(GOOD[class as usize]);
        }
        println!(
            "good {:<15} ok {o:>8} ({:>6.1}/s) failed {f} retried {retried} bytes verified {b}",
            GOOD[class as usize],
            o as f64 / secs
        );
        good.insert(
            GOOD[class as usize],
            json!({ "ok": o, "failed": f, "retried": retried, "bytes_verified": b }),
        );
    }
    let mut bad = BTreeMap::new();
    let mut unexpected = 0;
    for (i, name) in BAD.iter().enumerate() {
        let c = &ctx.bad[i];
        let (n, h, u) = (
            c.attempts.load(Ordering::Relaxed),
            c.handled.load(Ordering::Relaxed),
            c.unexpected.load(Ordering::Relaxed),
        );
        unexpected += u;
        println!("bad  {name:<18} attempts {n:>6} handled {h:>6} unexpected {u}");
        bad.insert(*name, json!({ "attempts": n, "handled": h, "unexpected": u }));
    }
    r.idle_lat.sort_unstable();
    r.soak_lat.sort_unstable();
    let idle_p99 = percentile(&r.idle_lat, 0.99);
    let soak_p99 = percentile(&r.soak_lat, 0.99);
    let mut procs = BTreeMap::new();
    let mut rss_ok = true;
    for (i, (name, _, slack)) in a.pids.iter().enumerate() {
        let get = |v: &[Option<Proc>]| v[i].map(|p| p.json());
        let (w, e) = (r.warm[i].map_or(0, |p| p.rss_kib), r.at_end[i].map_or(0, |p| p.rss_kib));
        let growth = e as f64 / w.max(1) as f64 - 1.0;
        rss_ok &= w > 0 && growth <= 0.10;
        println!(
            "proc {name:<8} baseline {:?} warm-up RSS {w} KiB, end {e} KiB ({:+.1}%), fds: baseline {:?} after {:?} (+{slack} allowed)",
            r.baseline[i].map(|p| p.rss_kib),
            growth * 100.0,
            r.baseline[i].map(|p| p.fds),
            r.after.get(i).and_then(|p| p.map(|p| p.fds)),
        );
        procs.insert(name.clone(), json!({
            "baseline": get(&r.baseline), "warm": get(&r.warm), "end": get(&r.at_end),
            "after_clients": r.after.get(i).and_then(|p| p.map(|p| p.json())), "fd_slack": slack,
            "rss_growth_percent": (growth * 1000.0).round() / 10.0,
        }));
    }
    let drain_failed = r.during_drain.1 - r.before_drain.1;
    let drain_ok = r.during_drain.0 - r.before_drain.0;
    let checks = [
        ("good requests failed: 0", failed == 0, format!("{failed} failed of {}", ok + failed)),
        (
            "every good class ran",
            idle_classes.is_empty(),
            format!("without a success: {idle_classes:?}"),
        ),
        (
            "every byte of every good response correct",
            failed == 0,
            format!("{bytes} bytes verified"),
        ),
        (
            "hostile clients handled as required",
            unexpected == 0,
            format!("{unexpected} unexpected"),
        ),
        (
            "RSS at the end within 10% of the warm-up's",
            rss_ok,
            format!("warm-up at {} s of the soak", a.warmup_seconds),
        ),
        ("fds back to the baseline once the clients left", r.fds_ok, String::new()),
        ("clients stopped in time", r.ended, String::new()),
        (
            "good p99 under load within 2x of idle",
            soak_p99 <= 2 * idle_p99.max(1),
            format!("idle p99 {idle_p99} µs, soak p99 {soak_p99} µs"),
        ),
        (
            "SIGTERM drain: 0 good requests failed",
            drain_failed == 0 && r.drain_ended,
            format!("{drain_ok} answered during the drain, {drain_failed} failed"),
        ),
        ("the plain and TLS servers exited after SIGTERM", r.exited, String::new()),
    ];
    let mut pass = true;
    for (name, ok, detail) in &checks {
        pass &= ok;
        println!("check {}: {name} ({detail})", if *ok { "PASS" } else { "FAIL" });
    }
    let out = json!({
        "seconds": a.seconds, "idle_seconds": a.idle_seconds, "warmup_seconds": a.warmup_seconds,
        "rate_per_client": a.rate,
        "good": good, "bad": bad,
        "good_ok_by_target": { "plain": by_target[Target::Plain as usize], "tls": by_target[Target::Tls as usize], "proxy": by_target[Target::Proxy as usize] },
        "slowloris_cut": ctx.bad[Bad::Slowloris as usize].handled.load(Ordering::Relaxed),
        "latency_us": { "idle_p50": percentile(&r.idle_lat, 0.5), "idle_p99": idle_p99, "soak_p50": percentile(&r.soak_lat, 0.5), "soak_p99": soak_p99 },
        "drain": { "answered": drain_ok, "failed": drain_failed },
        "processes": procs, "samples": r.samples, "failures": ctx.failures(),
        "checks": checks.iter().map(|(n, ok, d)| json!({ "check": n, "pass": ok, "detail": d })).collect::<Vec<_>>(),
        "pass": pass,
    });
    if let Some(path) = &a.out {
        std::fs::write(path, serde_json::to_string_pretty(&out).unwrap()).expect("writing --out");
    }
    pass
}
