//! Lines for the terminal or whoever reads our stdout and stderr, written without panicking.
//!
//! `println!` and `eprintln!` panic when the stream is gone (EPIPE: `| head -1`, a supervisor
//! or a test that kept the first line and closed the pipe). A server that is already serving
//! must not stop for that, nor a load run lose its report for a closed stderr, so these drop
//! the error: there is nowhere left to report it.

use std::fmt::Arguments;
use std::io::Write;

/// One line on stdout.
pub(crate) fn out(line: Arguments<'_>) {
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

/// One line on stderr.
pub(crate) fn err(line: Arguments<'_>) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}
