//! `peregrine serve`: a directory over HTTP/1.1 or HTTPS, with an access log.

use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use peregrine::Server;
use peregrine::files::ServeDir;
use peregrine::server::{LogEntry, TlsConfig};

/// Arguments of `peregrine serve`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  peregrine serve                      serve the current directory on http://127.0.0.1:8080
  peregrine serve ./public --addr 0.0.0.0:80 --cache-control 'public, max-age=3600'
  peregrine serve --addr 127.0.0.1:0   pick a free port (the printed URL shows it)
  peregrine serve --tls-cert cert.pem --tls-key key.pem --addr 0.0.0.0:8443
  peregrine serve --tls-self-signed    HTTPS on 127.0.0.1:8080 with a throw-away certificate

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

    /// Do not print the access log (one line per request on stderr, refused requests
    /// included).
    #[arg(long)]
    quiet: bool,

    /// Serve HTTPS with this PEM certificate chain (end-entity certificate first); needs
    /// --tls-key. TLS 1.3 and 1.2, ALPN http/1.1, session resumption.
    #[arg(long, value_name = "FILE", requires = "tls_key", help_heading = "TLS")]
    tls_cert: Option<PathBuf>,

    /// The PEM private key of --tls-cert (PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "FILE", requires = "tls_cert", help_heading = "TLS")]
    tls_key: Option<PathBuf>,

    /// Serve HTTPS with a throw-away certificate for localhost and 127.0.0.1, generated at
    /// start; the path of its PEM file is printed, for `curl --cacert`. For local use only.
    #[arg(long, conflicts_with_all = ["tls_cert", "tls_key"], help_heading = "TLS")]
    tls_self_signed: bool,
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
        .cache_control(args.cache_control.clone())
        .cache_ttl(Some(Duration::from_millis(args.file_cache_ms)));
    let root = files.root().to_owned();
    let tls = match tls_config(&args) {
        Ok(tls) => tls,
        Err(msg) => return fail(format_args!("{msg}")),
    };
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
    if !args.quiet {
        server = server.access_log(log_line);
    }
    let scheme = if tls.is_some() { "https" } else { "http" };
    let mut generated = None;
    if let Some((tls, cert)) = tls {
        server = server.tls(tls);
        generated = cert;
    }
    let handle = match server.spawn(files) {
        Ok(handle) => handle,
        Err(e) => return fail(format_args!("cannot listen on {}: {}", args.addr, describe(&e))),
    };
    let addr = handle.local_addr();
    println!("Serving {} on {scheme}://{addr}", root.display());
    if let Some(cert) = &generated {
        println!(
            "TLS: throw-away certificate for localhost and 127.0.0.1 in {}; trust it with: \
             curl --cacert {} https://localhost:{}/",
            cert.display(),
            cert.display(),
            addr.port()
        );
    }

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
    let joined = handle.join();
    if let Some(dir) = generated.as_deref().and_then(Path::parent) {
        // Throw-away: the certificate and key go with the server.
        let _ = std::fs::remove_dir_all(dir);
    }
    match joined {
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

/// One access-log line: client, method, target, status, content bytes sent, time to answer.
fn log_line(e: &LogEntry<'_>) {
    tracing::info!(
        "{} {} {} {} {} {:?}",
        e.remote_addr.ip(),
        e.method,
        e.target,
        e.status,
        e.body_bytes,
        e.duration
    );
}

/// The TLS configuration the flags ask for (with the path of a generated certificate), or a
/// one-line reason naming the file at fault.
fn tls_config(args: &ServeArgs) -> Result<Option<(TlsConfig, Option<PathBuf>)>, String> {
    if args.tls_self_signed {
        let (cert, key) = self_signed()?;
        let tls = TlsConfig::from_pem_files(&cert, &key).map_err(|e| e.to_string())?;
        return Ok(Some((tls, Some(cert))));
    }
    match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            let tls = TlsConfig::from_pem_files(cert, key).map_err(|e| e.to_string())?;
            Ok(Some((tls, None)))
        }
        _ => Ok(None),
    }
}

/// Writes a throw-away certificate and key for localhost / 127.0.0.1 / ::1 into a new private
/// directory under the system's temp dir; returns their paths.
fn self_signed() -> Result<(PathBuf, PathBuf), String> {
    let names = vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "::1".to_owned()];
    let generated = rcgen::generate_simple_self_signed(names)
        .map_err(|e| format!("cannot generate a certificate: {e}"))?;
    let dir = std::env::temp_dir().join(format!("peregrine-tls-{}", std::process::id()));
    let write = |dir: &Path| -> io::Result<(PathBuf, PathBuf)> {
        std::fs::create_dir_all(dir)?;
        let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
        std::fs::write(&cert, generated.cert.pem())?;
        write_private(&key, generated.signing_key.serialize_pem().as_bytes())?;
        Ok((cert, key))
    };
    write(&dir)
        .map_err(|e| format!("{}: cannot write the certificate: {}", dir.display(), describe(&e)))
}

/// Writes a file only its owner can read (a private key).
fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)
}
