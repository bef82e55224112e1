//! The access log: formats ([`Format`]) and the writer thread ([`LogWriter`]).

mod format;
mod writer;

use std::cell::RefCell;
use std::time::SystemTime;

use peregrine::server::LogEntry;

pub use format::Format;
pub use writer::{Dest, LogWriter};

/// The function the server calls once per request: formats the line on the worker (into a
/// reused per-thread buffer) and queues it for the writer thread.
pub fn logger(
    format: Format,
    writer: &LogWriter,
) -> impl Fn(&LogEntry<'_>) + Send + Sync + 'static {
    let sink = writer.sink();
    move |e: &LogEntry<'_>| {
        thread_local! {
            static LINE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
        }
        LINE.with_borrow_mut(|line| {
            line.clear();
            format::write_line(format, e, SystemTime::now(), line);
            sink.append(line);
        });
    }
}
