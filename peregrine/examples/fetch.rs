//! Fetches a URL and prints the response like `curl -i`: the status line, the header fields,
//! a blank line, the body. Exits with status 1 and the error on failure.
//!
//! ```text
//! cargo run --release --example fetch -- URL [-X METHOD] [-H 'Name: value']...
//!                                        [--http2-prior-knowledge] [--http3] [--cacert FILE]
//! ```
//!
//! It uses the client's one-connection API ([`peregrine::client::conn::Connection`]): one
//! connection to the URL's origin (TLS with ALPN choosing HTTP/2 or HTTP/1.1 for `https`, or
//! QUIC with `--http3`), one request, the response streamed to standard output; trailers, if
//! any, follow the body after a blank line.

use std::io::Write;
use std::process::ExitCode;

use peregrine::client::conn::{Config, Connection, Event, Versions};
use peregrine::client::{Origin, TlsConfig};

struct Args {
    url: String,
    method: String,
    headers: Vec<(String, String)>,
    prior_knowledge: bool,
    http3: bool,
    cacert: Option<String>,
}

const USAGE: &str = "usage: fetch URL [-X METHOD] [-H 'Name: value']... \
     [--http2-prior-knowledge] [--http3] [--cacert FILE]";

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let mut out = Args {
        url: String::new(),
        method: "GET".to_owned(),
        headers: Vec::new(),
        prior_knowledge: false,
        http3: false,
        cacert: None,
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-X" | "--request" => out.method = args.next().ok_or("-X needs a method")?,
            "-H" | "--header" => {
                let h = args.next().ok_or("-H needs 'Name: value'")?;
                let (name, value) = h.split_once(':').ok_or(format!("not 'Name: value': {h}"))?;
                out.headers.push((name.trim().to_owned(), value.trim().to_owned()));
            }
            "--http2-prior-knowledge" => out.prior_knowledge = true,
            "--http3" => out.http3 = true,
            "--cacert" => out.cacert = Some(args.next().ok_or("--cacert needs a file")?),
            "-h" | "--help" => return Err(USAGE.to_owned()),
            _ if out.url.is_empty() && !arg.starts_with('-') => out.url = arg,
            _ => return Err(format!("unexpected argument {arg:?}\n{USAGE}")),
        }
    }
    if out.url.is_empty() {
        return Err(USAGE.to_owned());
    }
    Ok(out)
}

async fn fetch(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let mut config = Config::default();
    if args.prior_knowledge {
        config = config.versions(Versions::Http2Only);
    }
    if args.http3 {
        config = config.versions(Versions::Http3Only);
    }
    if let Some(file) = &args.cacert {
        config = config.tls(TlsConfig::webpki_roots().add_ca_pem_file(file)?);
    }
    let (origin, target) = Origin::parse(&args.url)?;
    let mut conn = Connection::connect_origin(&origin, &config).await?;
    let fields: Vec<(&str, &[u8])> =
        args.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())).collect();
    conn.send_request(&args.method, target, &fields, &[])?;
    let mut out = std::io::stdout().lock();
    loop {
        match conn.next_event().await? {
            Event::Head { head, .. } => {
                // HTTP/2 and HTTP/3 have no reason phrase (RFC 9113 §8.3.2, RFC 9114 §4.3.2);
                // curl prints none either.
                let reason = http::StatusCode::from_u16(head.status())
                    .ok()
                    .and_then(|s| s.canonical_reason())
                    .unwrap_or("");
                match head.version() {
                    peregrine::Version::Http2 => writeln!(out, "HTTP/2 {}", head.status())?,
                    peregrine::Version::Http3 => writeln!(out, "HTTP/3 {}", head.status())?,
                    v => writeln!(out, "{} {} {reason}", v.as_str(), head.status())?,
                }
                for (name, value) in head.headers() {
                    write!(out, "{name}: ")?;
                    out.write_all(value)?;
                    writeln!(out)?;
                }
                writeln!(out)?;
            }
            Event::Data { data, .. } => out.write_all(data)?,
            Event::End { trailers, .. } => {
                if let Some(trailers) = trailers {
                    writeln!(out)?;
                    for (name, value) in &trailers {
                        write!(out, "{name}: ")?;
                        out.write_all(value.as_bytes())?;
                        writeln!(out)?;
                    }
                }
                break;
            }
            Event::Failed { error, .. } => return Err(error.into()),
            Event::Writable { .. } => {}
        }
    }
    out.flush()?;
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build();
    let result = match rt {
        Ok(rt) => rt.block_on(fetch(args)),
        Err(e) => Err(e.into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fetch: {e}");
            ExitCode::from(1)
        }
    }
}
