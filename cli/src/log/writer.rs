//! The access log's writer thread: workers append formatted lines to a bounded buffer and
//! never wait for the disk.
//!
//! A worker formats its line into a thread-local buffer, takes the lock for a `memcpy` and
//! wakes the writer only when the buffer was empty. The writer swaps the buffer out and writes
//! it with one `write` while workers fill the other. When the destination is slower than the
//! requests (a stalled disk, a full pipe), the pending buffer reaches [`MAX_PENDING`] and
//! further lines are **dropped and counted**, never waited for: serving goes on at full speed
//! and the writer reports `N lines dropped` on stderr once it catches up. (Blocking would
//! stall every worker behind the disk, the failure mode we want the log never to cause.) Lines
//! a write fails to store (a full disk) are dropped and counted the same way: the first error
//! is reported at once, the running count every [`REPORT_EVERY`] while writes keep failing,
//! and the total once a write succeeds again or at exit.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::console;

/// Bytes of formatted lines waiting for the writer at most (about 20,000 combined lines).
pub const MAX_PENDING: usize = 4 << 20;

/// While writes keep failing (the disk stays full), how often the running count of the lines
/// dropped is said on stderr: an operator watching sees the loss grow, not only its start and
/// its end.
pub const REPORT_EVERY: Duration = Duration::from_secs(10);

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
    /// Lines lost to failed writes, in all.
    lost: u64,
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
    let mut failed = Failed::new(REPORT_EVERY);
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
            match write_lines(&mut out, &batch) {
                Ok(()) if failed.lost > 0 => say(&failed.report("the log is writable again")),
                Ok(()) => {}
                Err((lost, e)) => failed.count(shared, lost, e),
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
            if let Err((lost, e)) = write_lines(&mut out, &rest) {
                failed.count(shared, lost, e);
            }
            if failed.lost > 0 {
                say(&failed.report("at exit"));
            }
            return;
        }
    }
}

/// Writes whole lines; on an error, the lines whose ending newline was not written, which are
/// lost (a line cut short by a full disk is one of them) and the error.
fn write_lines(out: &mut dyn Write, batch: &[u8]) -> Result<(), (u64, io::Error)> {
    let mut written = 0;
    while written < batch.len() {
        match out.write(&batch[written..]) {
            Ok(0) => {
                let lost = lines(&batch[written..]);
                return Err((lost, io::ErrorKind::WriteZero.into()));
            }
            Ok(n) => written += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                let lost = lines(&batch[written..]);
                return Err((lost, e));
            }
        }
    }
    out.flush().map_err(|e| (0, e))
}

fn lines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}

/// Lines lost to failed writes (a full disk, an I/O error) since writes last worked: the first
/// failure is said at once, the running count every `every` while writes keep failing, the
/// total when a write succeeds again or at exit; so a full disk costs a line on stderr every
/// `every`, not one per batch.
struct Failed {
    lost: u64,
    error: Option<io::Error>,
    every: Duration,
    /// When the failure or its running count was last said.
    said: Option<Instant>,
}

impl Failed {
    fn new(every: Duration) -> Failed {
        Failed { lost: 0, error: None, every, said: None }
    }

    fn count(&mut self, shared: &Shared, lost: u64, e: io::Error) {
        shared.state.lock().unwrap_or_else(PoisonError::into_inner).lost += lost;
        if let Some(line) = self.failed(lost, e, Instant::now()) {
            say(&line);
        }
    }

    /// Counts the `lost` lines of a write that failed with `e` at `now`; the line to say, if
    /// any.
    fn failed(&mut self, lost: u64, e: io::Error, now: Instant) -> Option<String> {
        self.lost += lost;
        let line = match self.said {
            None => Some(format!(
                "peregrine: access log: {e}: lines are dropped (and counted) until a write succeeds"
            )),
            Some(at) if now.duration_since(at) >= self.every => Some(format!(
                "peregrine: access log: still failing ({e}): {} lines dropped so far",
                self.lost
            )),
            Some(_) => None,
        };
        if line.is_some() {
            self.said = Some(now);
        }
        self.error = Some(e);
        line
    }

    /// The total since writes began to fail, said once they work again (or at exit).
    fn report(&mut self, when: &str) -> String {
        let e = self.error.take().map_or_else(String::new, |e| e.to_string());
        let line = format!("peregrine: access log: {} lines dropped: {e} ({when})", self.lost);
        self.lost = 0;
        self.said = None;
        line
    }
}

fn say(line: &str) {
    console::err(format_args!("{line}"));
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

    /// A disk that takes `room` more bytes, then fails with ENOSPC (as a full file system).
    struct Full {
        room: usize,
        got: Arc<Mutex<Vec<u8>>>,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::Error::from_raw_os_error(28)); // ENOSPC
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            self.got.lock().unwrap().extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A full disk loses lines, and every one is counted: the lines whose newline reached the
    /// file plus the lines counted as lost are all the lines appended, including a line the
    /// disk cut in the middle.
    #[test]
    fn a_full_disk_counts_every_line_it_loses() {
        for room in [0, 5, 40, 45, 1000] {
            let got = Arc::new(Mutex::new(Vec::new()));
            let dest = Dest::Custom(Box::new(Full { room, got: got.clone() }));
            let writer = LogWriter::start(dest).unwrap();
            let sink = writer.sink();
            for i in 0..30 {
                sink.append(format!("line {i:03}\n").as_bytes());
                if i % 7 == 0 {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
            }
            writer.finish();
            let written = lines(&got.lock().unwrap());
            let lost = sink.0.state.lock().unwrap().lost;
            assert_eq!(written, (room / 9).min(30) as u64, "room {room}");
            assert_eq!(written + lost, 30, "room {room}");
        }
    }

    /// What a failing log says on stderr as writes fail and then work again: the first failure
    /// at once, the running count each time `every` has passed since the last line said, the
    /// total when a write succeeds (after which a failure is a first one again).
    #[test]
    fn a_full_disk_says_the_running_count_while_it_stays_full() {
        /// At this second, a write fails and loses this many lines; `None`: a write works.
        type Step = Option<(u64, u64)>;
        const FIRST: &str = "peregrine: access log: No space left on device (os error 28): \
                             lines are dropped (and counted) until a write succeeds";
        fn so_far(n: u64) -> String {
            format!(
                "peregrine: access log: still failing (No space left on device (os error 28)): \
                 {n} lines dropped so far"
            )
        }
        fn total(n: u64) -> String {
            format!(
                "peregrine: access log: {n} lines dropped: No space left on device (os error 28) \
                 (the log is writable again)"
            )
        }
        let cases: [(&[Step], Vec<String>); 4] = [
            (&[Some((0, 3))], vec![FIRST.into()]),
            // Within the interval: counted, not said.
            (&[Some((0, 3)), Some((4, 5)), Some((9, 1))], vec![FIRST.into()]),
            (
                &[Some((0, 3)), Some((4, 5)), Some((10, 2)), Some((15, 1)), Some((21, 4))],
                vec![FIRST.into(), so_far(10), so_far(15)],
            ),
            (
                &[Some((0, 3)), Some((10, 2)), None, Some((11, 1)), None],
                vec![FIRST.into(), so_far(5), total(5), FIRST.into(), total(1)],
            ),
        ];
        let start = Instant::now();
        for (i, (steps, expect)) in cases.iter().enumerate() {
            let mut failed = Failed::new(Duration::from_secs(10));
            let mut said = Vec::new();
            for step in *steps {
                match *step {
                    Some((at, lost)) => {
                        let now = start + Duration::from_secs(at);
                        let enospc = io::Error::from_raw_os_error(28);
                        said.extend(failed.failed(lost, enospc, now));
                    }
                    None => said.push(failed.report("the log is writable again")),
                }
            }
            assert_eq!(&said, expect, "case {i}");
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
