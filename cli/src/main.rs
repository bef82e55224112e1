//! The `peregrine` command line.
#![deny(unsafe_code)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod console;
mod flags;
mod frontend;
mod io_error;
mod load;
mod log;
mod proxy;
mod serve;
mod tls;
mod units;

/// A fast, strict HTTP/1.1 and HTTP/2 server, with HTTPS, a reverse proxy and a load
/// generator.
#[derive(Debug, Parser)]
#[command(name = "peregrine", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per run
enum Command {
    /// Serve a directory over HTTP/1.1 or HTTPS: static files, listings, ranges, conditional
    /// requests.
    Serve(serve::ServeArgs),
    /// Forward requests to HTTP/1.1 or HTTP/2 backends: a reverse proxy and load balancer
    /// with health checks and retries, from flags or a TOML file reloaded on SIGHUP.
    Proxy(proxy::ProxyArgs),
    /// Load an HTTP/1.1 or HTTP/2 server and report throughput, latency percentiles
    /// (coordinated omission corrected with --rate), status codes and errors.
    Load(load::LoadArgs),
}

fn main() -> ExitCode {
    // clap prints usage errors and exits with status 2 itself.
    match Cli::parse().command {
        Command::Serve(args) => serve::run(args),
        Command::Proxy(args) => proxy::run(args),
        Command::Load(args) => load::run(args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// clap's own consistency checks over every subcommand's flags.
    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
