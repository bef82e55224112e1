//! `peregrine serve`: a directory over HTTP/1.1 and HTTP/2, plain or HTTPS (and HTTP/3 with
//! `--h3`), with an access log.

mod args;
mod site;

use std::process::ExitCode;
use std::time::Duration;

use peregrine::files::ServeDir;

use crate::console;
use crate::frontend::{Frontend, fail};
use crate::io_error::describe;

pub use args::ServeArgs;

/// Runs the server until SIGINT or SIGTERM. Start-up failures print one line and exit 2.
pub fn run(args: ServeArgs) -> ExitCode {
    let files = match files(&args) {
        Ok(files) => files,
        Err(code) => return code,
    };
    let root = files.root().to_owned();
    let mut frontend = match Frontend::start(&args.tls, &args.log, &args.ops) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let server =
        frontend.server(&args.addr, &args.ops, args.config(), args.workers, args.log.log_format);
    let server = match server {
        Ok(server) => server,
        Err(code) => return code,
    };
    if args.h3 && frontend.scheme() != "https" {
        return fail(format_args!(
            "--h3 needs TLS (--tls-cert and --tls-key, or --tls-self-signed)"
        ));
    }
    let server = server.http3(args.h3);
    let handle = match server.spawn(files) {
        Ok(handle) => handle,
        Err(e) => return fail(format_args!("cannot listen on {}: {}", args.addr, describe(&e))),
    };
    let (scheme, addr) = (frontend.scheme(), handle.local_addr());
    console::out(format_args!("Serving {} on {scheme}://{addr}", root.display()));
    if args.h3 {
        console::out(format_args!("HTTP/3 on udp://{addr}"));
    }
    frontend.announce(&handle);
    frontend.run(handle, || {})
}

/// The directory handler the site flags describe.
pub fn files(args: &ServeArgs) -> Result<ServeDir, ExitCode> {
    let files = match ServeDir::new(&args.dir) {
        Ok(files) => files,
        Err(e) => {
            return Err(fail(format_args!(
                "cannot serve {}: {}",
                args.dir.display(),
                describe(&e)
            )));
        }
    };
    let files = files
        .listing(!args.no_listing)
        .cache_control(args.cache_control.clone())
        .cache_ttl(Some(Duration::from_millis(args.file_cache_ms)))
        .spa(args.spa)
        .compression(args.compression());
    site::configure(files, args).map_err(|msg| fail(format_args!("{msg}")))
}
