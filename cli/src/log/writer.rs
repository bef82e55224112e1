//! The access log's writer thread: workers append formatted lines to a bounded buffer and
//! never wait for the disk.
//!
//! A worker formats its line into a thread-local buffer, takes the lock for a `memcpy` and
//! wakes the writer only when the buffer was empty. The writer swaps the buffer out and writes
//! it with one `write` while workers fill the other. When the destination is slower than the
//! requests (a stalled disk, a full pipe), the pending buffer reaches [`MAX_PENDING`] and
//! further lines are **dropped and counted**, never waited for: serving goes on at full speed
//! and the writer reports `N lines dropped` on stderr once it catches up. (Blocking would
//! stall every worker behind the disk, the failure mode we want the log never to cause.)

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;

use crate::console;

/// Bytes of formatted lines waiting for the writer at most (about 20,000 combined lines).
pub const MAX_PENDING: usize = 4 << 20;

/// Where the lines go.
pub enum Dest {
    /// Standard error.
    Stderr,
    /// A file opened for appending, reopened by [`LogWriter::reopen`].
    File(PathBuf),
    /// Anything else (tests).
    #[cfg(test)]
    Custom(Box<dyn Write + Send>),
}

#[derive(Default)]
struct State {
    pending: Vec<u8>,
    dropped: u64,
    reopen: bool,
    closing: bool,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    max_pending: usize,
}

/// The handle workers append through; cheap to clone.
#[derive(Clone)]
pub struct LogSink(Arc<Shared>);

impl LogSink {
    /// Queues one formatted line (or drops it, counted, when the writer is behind).
    pub fn append(&self, line: &[u8]) {
        let mut s = self.0.state.lock().unwrap_or_else(PoisonError::into_inner);
        if s.pending.len() + line.len() > self.0.max_pending {
            s.dropped += 1;
            return;
        }
        let was_empty = s.pending.is_empty();
        s.pending.extend_from_slice(line);
        drop(s);
        if was_empty {
            self.0.wake.notify_one();
        }
    }
}

/// The writer thread and the way to reach it.
pub struct LogWriter {
    sink: LogSink,
    thread: Option<JoinHandle<()>>,
}

impl LogWriter {
    /// Opens the destination (a file is created if needed and appended to) and starts the
    /// writer thread.
    ///
    /// # Errors
    /// The error of opening the file.
    pub fn start(dest: Dest) -> io::Result<LogWriter> {
        LogWriter::with_capacity(dest, MAX_PENDING)
    }

    fn with_capacity(dest: Dest, max_pending: usize) -> io::Result<LogWriter> {
        let (out, path): (Box<dyn Write + Send>, Option<PathBuf>) = match dest {
            Dest::Stderr => (Box::new(io::stderr()), None),
            Dest::File(path) => (Box::new(open(&path)?), Some(path)),
            #[cfg(test)]
            Dest::Custom(w) => (w, None),
        };
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            max_pending,
        });
        let sink = LogSink(shared.clone());
        let thread = std::thread::Builder::new()
            .name("peregrine-log".into())
            .spawn(move || write_loop(&shared, out, path))?;
        Ok(LogWriter { sink, thread: Some(thread) })
    }

    /// The handle workers append through.
    pub fn sink(&self) -> LogSink {
        self.sink.clone()
    }

    /// Asks the writer to reopen its file before its next write (after a log rotation moved
    /// it away: SIGHUP).
    pub fn reopen(&self) {
        let mut s = self.sink.0.state.lock().unwrap_or_else(PoisonError::into_inner);
        s.reopen = true;
        drop(s);
        self.sink.0.wake.notify_one();
    }

    /// Writes what is pending and stops the thread.
    pub fn finish(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        let mut s = self.sink.0.state.lock().unwrap_or_else(PoisonError::into_inner);
        s.closing = true;
        drop(s);
        self.sink.0.wake.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for LogWriter {
    fn drop(&mut self) {
        self.stop();
    }
}

fn open(path: &Path) -> io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

fn write_loop(shared: &Shared, mut out: Box<dyn Write + Send>, path: Option<PathBuf>) {
    let mut batch = Vec::new();
    let mut reported = 0;
    loop {
        let (reopen, closing, dropped) = {
            let mut s = shared.state.lock().unwrap_or_else(PoisonError::into_inner);
            while s.pending.is_empty() && !s.reopen && !s.closing {
                s = shared.wake.wait(s).unwrap_or_else(PoisonError::into_inner);
            }
            std::mem::swap(&mut s.pending, &mut batch);
            (std::mem::take(&mut s.reopen), s.closing, s.dropped)
        };
        if let (true, Some(path)) = (reopen, &path) {
            match open(path) {
                Ok(f) => out = Box::new(f),
                Err(e) => {
                    console::err(format_args!("peregrine: cannot reopen {}: {e}", path.display()))
                }
            }
        }
        if !batch.is_empty() {
            if let Err(e) = out.write_all(&batch).and_then(|()| out.flush()) {
                console::err(format_args!("peregrine: access log: {e}"));
            }
            batch.clear();
        }
        if dropped > reported {
            console::err(format_args!(
                "peregrine: access log: {} lines dropped: the log is written slower than \
                 requests arrive",
                dropped - reported
            ));
            reported = dropped;
        }
        if closing {
            // What arrived while writing goes out too.
            let mut s = shared.state.lock().unwrap_or_else(PoisonError::into_inner);
            let rest = std::mem::take(&mut s.pending);
            drop(s);
            let _ = out.write_all(&rest).and_then(|()| out.flush());
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// A destination that blocks every write until the test lets it go (a stalled disk), and
    /// then records what it was given.
    struct Stalled {
        go: mpsc::Receiver<()>,
        got: Arc<Mutex<Vec<u8>>>,
    }

    impl Write for Stalled {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let _ = self.go.recv();
            self.got.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A stalled destination never blocks `append`: lines past the cap are dropped and
    /// counted, and everything queued is written once the destination moves again.
    #[test]
    fn a_stalled_destination_drops_lines_and_never_blocks() {
        let (go, wait) = mpsc::channel();
        let got = Arc::new(Mutex::new(Vec::new()));
        let dest = Dest::Custom(Box::new(Stalled { go: wait, got: got.clone() }));
        let writer = LogWriter::with_capacity(dest, 100).unwrap();
        let sink = writer.sink();
        sink.append(b"first line\n");
        // The writer takes the first line and stalls in write; wait for it to be taken.
        let start = std::time::Instant::now();
        while !sink.0.state.lock().unwrap().pending.is_empty() {
            assert!(start.elapsed() < std::time::Duration::from_secs(5));
            std::thread::yield_now();
        }
        for i in 0..50 {
            sink.append(format!("line {i:02}\n").as_bytes());
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(5), "append waited");
        // 100 bytes hold 12 lines of 8 bytes.
        assert_eq!(sink.0.state.lock().unwrap().dropped, 38);
        for _ in 0..10 {
            let _ = go.send(());
        }
        writer.finish();
        let got = String::from_utf8(got.lock().unwrap().clone()).unwrap();
        assert!(got.starts_with("first line\nline 00\n"), "{got}");
        assert_eq!(got.lines().count(), 13, "{got}");
    }
}
