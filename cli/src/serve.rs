//! `peregrine serve`: a directory over HTTP/1.1, with an access log.

use std::future::{Ready, ready};
use std::io;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use peregrine::files::ServeDir;
use peregrine::{Handler, Method, Request, Response, Server};

/// Arguments of `peregrine serve`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  peregrine serve                      serve the current directory on http://127.0.0.1:8080
  peregrine serve ./public --addr 0.0.0.0:80 --cache-control 'public, max-age=3600'
  peregrine serve --addr 127.0.0.1:0   pick a free port (the printed URL shows it)

Dotfiles (names starting with '.') are never served. NAME.br / NAME.gz next to a file are
sent instead when the client accepts that encoding. Ctrl-C or SIGTERM stops the server
gracefully, letting requests in flight finish.")]
pub struct ServeArgs {
    /// Directory to serve.
    #[arg(default_value = ".")]
    dir: PathBuf,

    /// Address to listen on, as HOST:PORT. Port 0 picks a free port.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8080")]
    addr: String,

    /// Worker threads, each with its own event loop [default: the number of available cores].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    workers: Option<u16>,

    /// Answer 403 for a directory without index.html instead of listing its contents.
    #[arg(long)]
    no_listing: bool,

    /// Cache-Control value sent with every file and listing, e.g. 'public, max-age=3600'
    /// [default: none].
    #[arg(long, value_name = "VALUE", value_parser = parse_cache_control)]
    cache_control: Option<String>,

    /// How long, in milliseconds, a resolved file (open descriptor, validators, contents up to
    /// 32 KiB) is reused before the file system is checked again; 0 checks on every request.
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    file_cache_ms: u64,

    /// Do not print the access log (one line per request on stderr).
    #[arg(long)]
    quiet: bool,
}

fn parse_cache_control(v: &str) -> Result<String, String> {
    if v.bytes().all(|b| b == b'\t' || (b' '..=b'~').contains(&b)) {
        Ok(v.to_owned())
    } else {
        Err("must be visible ASCII, spaces and tabs (no line breaks)".to_owned())
    }
}

/// Runs the server until SIGINT or SIGTERM. Start-up failures print one line and exit 2.
pub fn run(args: ServeArgs) -> ExitCode {
    let files = match ServeDir::new(&args.dir) {
        Ok(files) => files,
        Err(e) => {
            return fail(format_args!("cannot serve {}: {}", args.dir.display(), describe(&e)));
        }
    };
    let files = files
        .listing(!args.no_listing)
        .cache_control(args.cache_control)
        .cache_ttl(Some(Duration::from_millis(args.file_cache_ms)));
    let root = files.root().to_owned();
    if !args.quiet {
        tracing_subscriber::fmt()
            .with_writer(io::stderr)
            .with_target(false)
            .with_level(false)
            .init();
    }

    // Signal handlers go in before the server starts, so a signal is never fatal once the
    // URL is printed.
    let signals = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(format_args!("cannot start: {e}")),
    };
    let waiting = {
        let _guard = signals.enter();
        use tokio::signal::unix::{SignalKind, signal};
        match (signal(SignalKind::interrupt()), signal(SignalKind::terminate())) {
            (Ok(i), Ok(t)) => (i, t),
            (Err(e), _) | (_, Err(e)) => return fail(format_args!("cannot handle signals: {e}")),
        }
    };

    let mut server = Server::bind(args.addr.as_str());
    if let Some(n) = args.workers {
        server = server.workers(usize::from(n));
    }
    let handle = match server.spawn(AccessLog { files, log: !args.quiet }) {
        Ok(handle) => handle,
        Err(e) => return fail(format_args!("cannot listen on {}: {}", args.addr, describe(&e))),
    };
    println!("Serving {} on http://{}", root.display(), handle.local_addr());

    let (mut interrupt, mut terminate) = waiting;
    signals.block_on(async {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    });
    if !args.quiet {
        eprintln!("peregrine: shutting down, letting requests in flight finish");
    }
    handle.shutdown();
    match handle.join() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("peregrine: {e}");
            ExitCode::FAILURE
        }
    }
}

fn fail(msg: std::fmt::Arguments<'_>) -> ExitCode {
    eprintln!("peregrine: {msg}");
    ExitCode::from(2)
}

/// An error in words, without the "(os error N)" suffix.
fn describe(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file or directory".to_owned(),
        io::ErrorKind::NotADirectory => "not a directory".to_owned(),
        io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        io::ErrorKind::AddrInUse => "address already in use".to_owned(),
        io::ErrorKind::AddrNotAvailable => "address not available on this machine".to_owned(),
        _ => {
            let text = e.to_string();
            match text.find(" (os error") {
                Some(i) => text[..i].to_owned(),
                None => text,
            }
        }
    }
}

/// The file handler with one access-log line per request (method, target, status, bytes of
/// content sent, time to answer).
#[derive(Clone, Debug)]
struct AccessLog {
    files: ServeDir,
    log: bool,
}

impl Handler for AccessLog {
    type Output = Response;
    type Future = Ready<Response>;

    fn call(&self, req: Request) -> Ready<Response> {
        if !self.log {
            return ready(self.files.serve(&req));
        }
        let start = Instant::now();
        let mut res = self.files.serve(&req);
        let status = res.status().as_u16();
        // Bytes of content this answer carries (the body streams after the log line).
        let bytes = match (req.method(), status) {
            (Method::Head, _) | (_, 304) => 0,
            _ => res.body_mut().size_hint().unwrap_or(0),
        };
        let peer = req.remote_addr().map_or_else(|| "-".to_owned(), |a| a.ip().to_string());
        tracing::info!(
            "{} {} {} {} {} {:?}",
            peer,
            req.method().as_str().unwrap_or_else(|| req.method_str()),
            req.target(),
            status,
            bytes,
            start.elapsed()
        );
        ready(res)
    }
}
