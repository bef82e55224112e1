//! The `peregrine` command line.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod serve;
mod units;

/// A fast, strict HTTP/1.1 server, with HTTPS.
#[derive(Debug, Parser)]
#[command(name = "peregrine", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve a directory over HTTP/1.1 or HTTPS: static files, listings, ranges, conditional
    /// requests.
    Serve(serve::ServeArgs),
}

fn main() -> ExitCode {
    // clap prints usage errors and exits with status 2 itself.
    match Cli::parse().command {
        Command::Serve(args) => serve::run(args),
    }
}
