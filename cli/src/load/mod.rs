//! `peregrine load`: an HTTP/1.1 and HTTP/2 load generator on the client's one-connection API,
//! and a WebSocket echo load generator on the client's WebSockets (`--ws`), thread per core
//! (each thread a current-thread runtime with its share of the connections).
//!
//! The run: check the flags, open one connection (a bad URL, an unreachable host, a TLS
//! failure or a refused WebSocket handshake ends the command here, with one line and status 2), start the threads, show the
//! progress, stop at the deadline, the count or Ctrl-C, merge the threads' figures, report.

#[cfg(test)]
mod alloc_tests;
mod args;
mod report;
mod stats;
mod thread;
mod worker;
mod ws;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use peregrine::client::TlsConfig;
use peregrine::client::conn::{Config, Connection, Protocol};

use crate::console;
pub use args::LoadArgs;
use args::{Stop, one_line};
use stats::{Live, Stats};
use thread::Shared;
use worker::Job;

/// How often the progress line is redrawn.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

fn fail(msg: &str) -> ExitCode {
    console::err(format_args!("peregrine load: {}", one_line(msg)));
    ExitCode::from(2)
}

/// Runs `peregrine load`.
pub fn run(args: LoadArgs) -> ExitCode {
    let json_to = args.json.clone();
    let progress = !args.no_progress && std::io::stdout().is_terminal();
    let plan = match args.plan() {
        Ok(plan) => plan,
        Err(e) => return fail(&e),
    };
    let tls = if plan.insecure {
        TlsConfig::webpki_roots().danger_accept_invalid_certs()
    } else {
        TlsConfig::webpki_roots()
    };
    let config = Config::default()
        .versions(plan.versions)
        .tls(tls)
        .connect_timeout(plan.timeout)
        .tls_handshake_timeout(plan.timeout)
        .read_timeout(Some(plan.timeout));
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(&format!("cannot start a runtime: {e}")),
    };
    let (protocol, ws) = match &plan.ws {
        // One WebSocket first: the URL, the host, TLS and the handshake are checked before
        // any load.
        Some(ws) => match rt.block_on(ws::probe(&plan, ws, &config)) {
            Ok(deflate) => {
                let meta = report::WsMeta { size: ws.size, text: ws.text, deflate };
                ("WebSocket", Some(meta))
            }
            Err(e) => return fail(&format!("{}: {e}", args_url(&plan))),
        },
        None => match probe(&rt, &plan, &config) {
            Ok(protocol) => (protocol, None),
            Err(e) => return fail(&e),
        },
    };
    let shared = Arc::new(Shared { plan, config });
    let plan = &shared.plan;
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let threads = u32::from(plan.threads);
    let start = Arc::new(Barrier::new(threads as usize));
    let mut handles = Vec::with_capacity(threads as usize);
    let mut lives = Vec::with_capacity(threads as usize);
    let mut first = 0;
    for t in 0..threads {
        // Connections and the count shared out as evenly as they go.
        let conns = plan.connections / threads + u32::from(t < plan.connections % threads);
        let budget = match plan.stop {
            Stop::Count(n) => {
                let share = |upto: u32| {
                    (u128::from(n) * u128::from(upto) / u128::from(plan.connections)) as u64
                };
                Some(share(first + conns) - share(first))
            }
            Stop::After(_) => None,
        };
        let live = Arc::new(Live::default());
        lives.push(live.clone());
        let job = Job { first, conns, budget, live, start: start.clone(), stop: stop_rx.clone() };
        first += conns;
        let shared = shared.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("load-{t}"))
            .spawn(move || worker::run(shared, job));
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => {
                let _ = stop_tx.send(true);
                return fail(&format!("cannot start a thread: {e}"));
            }
        }
    }
    let interrupted = rt.block_on(watch(&handles, &lives, plan, progress, &stop_tx));
    let mut total = Stats::new();
    let (mut from, mut to) = (None::<tokio::time::Instant>, None::<tokio::time::Instant>);
    for h in handles {
        match h.join() {
            Ok(Ok(out)) => {
                total.merge(&out.stats);
                from = Some(from.map_or(out.measure_from, |f| f.min(out.measure_from)));
                to = Some(to.map_or(out.ended, |t| t.max(out.ended)));
            }
            Ok(Err(e)) => return fail(&e),
            Err(_) => return fail("a load thread panicked"),
        }
    }
    let duration_s = match (from, to) {
        (Some(f), Some(t)) => t.saturating_duration_since(f).as_secs_f64(),
        _ => 0.0,
    };
    let url = args_url(plan);
    let meta = report::Meta {
        url: &url,
        protocol,
        ws,
        connections: plan.connections,
        threads: plan.threads,
        streams: plan.streams,
        pipeline: plan.pipeline,
        rate: plan.rate,
        duration_s,
        interrupted,
    };
    let text = report::text(&meta, &total);
    // Written, not printed: a stdout closed early (`| head`) is a failure to report, not a
    // panic.
    let mut stdout = std::io::stdout().lock();
    let written = match json_to.as_deref().map(|p| p.to_str() == Some("-")) {
        Some(true) => {
            let _ = std::io::stderr().lock().write_all(text.as_bytes());
            writeln!(stdout, "{:#}", report::json(&meta, &total))
        }
        Some(false) => {
            let written = stdout.write_all(text.as_bytes());
            let path = json_to.unwrap_or_default();
            let body = format!("{:#}\n", report::json(&meta, &total));
            if let Err(e) = std::fs::write(&path, body) {
                return fail(&format!("{}: cannot write the JSON report: {e}", path.display()));
            }
            written
        }
        None => stdout.write_all(text.as_bytes()),
    };
    if let Err(e) = written.and_then(|()| stdout.flush()) {
        return fail(&format!("cannot write the report to stdout: {e}"));
    }
    ExitCode::SUCCESS
}

/// One connection first: the URL, the host and TLS are checked before any load, and the
/// request is encoded once (a field HTTP/2 refuses, say), then dropped unsent. Returns the
/// protocol it speaks.
fn probe(
    rt: &tokio::runtime::Runtime,
    plan: &args::Plan,
    config: &Config,
) -> Result<&'static str, String> {
    let mut probe = rt
        .block_on(Connection::connect(&plan.url, config))
        .map_err(|e| format!("{}: {e}", plan.url))?;
    let fields: Vec<(&str, &[u8])> =
        plan.headers.iter().map(|(n, v)| (n.as_str(), v.as_slice())).collect();
    probe
        .send_request(&plan.method, &plan.target, &fields, &plan.body)
        .map_err(|e| format!("{}: {e}", plan.url))?;
    Ok(match probe.protocol() {
        Protocol::Http1 => "HTTP/1.1",
        Protocol::Http2 => "HTTP/2",
        Protocol::Http3 => "HTTP/3",
    })
}

/// The URL as the report shows it: a WebSocket's with its `ws`/`wss` scheme.
fn args_url(plan: &args::Plan) -> String {
    match (&plan.ws, plan.url.split_once("://")) {
        (Some(_), Some(("https", rest))) => format!("wss://{rest}"),
        (Some(_), Some((_, rest))) => format!("ws://{rest}"),
        _ => plan.url.clone(),
    }
}

/// Waits for the threads to finish, drawing the progress line and turning Ctrl-C into a stop;
/// returns whether the run was interrupted.
async fn watch(
    handles: &[std::thread::JoinHandle<Result<worker::Outcome, String>>],
    lives: &[Arc<Live>],
    plan: &args::Plan,
    progress: bool,
    stop: &tokio::sync::watch::Sender<bool>,
) -> bool {
    let started = Instant::now();
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let mut interrupted = false;
    let mut tick = tokio::time::interval(Duration::from_millis(50));
    let (mut last_at, mut last_done) = (started, 0u64);
    loop {
        tokio::select! {
            r = &mut ctrl_c, if !interrupted => {
                interrupted = r.is_ok();
                let _ = stop.send(true);
            }
            _ = tick.tick() => {
                if handles.iter().all(|h| h.is_finished()) {
                    break;
                }
                if progress && last_at.elapsed() >= PROGRESS_EVERY {
                    let sum = |f: fn(&Live) -> u64| lives.iter().map(|l| f(l)).sum::<u64>();
                    let done = sum(|l| l.completed.load(std::sync::atomic::Ordering::Relaxed));
                    let errors = sum(|l| l.errors.load(std::sync::atomic::Ordering::Relaxed));
                    let now = Instant::now();
                    let rate = (done - last_done.min(done)) as f64
                        / now.duration_since(last_at).as_secs_f64().max(1e-9);
                    (last_at, last_done) = (now, done);
                    let (what, per) =
                        if plan.ws.is_some() { ("messages", "msg/s") } else { ("requests", "req/s") };
                    let total = match plan.stop {
                        Stop::After(d) => format!("{:.0}s", (d + plan.warmup).as_secs_f64()),
                        Stop::Count(n) => format!("{n} {what}"),
                    };
                    let mut err = std::io::stderr().lock();
                    let _ = write!(
                        err,
                        "\r\x1b[2K  {:.1}s / {total}   {rate:.0} {per}   {done} done   {errors} errors",
                        started.elapsed().as_secs_f64()
                    );
                    let _ = err.flush();
                }
            }
        }
    }
    if progress {
        let _ = std::io::stderr().lock().write_all(b"\r\x1b[2K");
    }
    interrupted
}
