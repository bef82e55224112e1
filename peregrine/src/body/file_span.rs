//! A span of an open file as a body: sent with `sendfile(2)` where the driver can, read in
//! chunks with positioned reads anywhere else.

use std::fs::File;
use std::io;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};

/// A byte span of an open file: the content of a 200 or 206 answer.
///
/// The file is never read whole: [`FileSpan::read_chunk`] reads at most one chunk per call
/// with positioned reads (`pread`), so memory stays flat whatever the file size.
#[derive(Debug)]
pub struct FileSpan {
    file: Arc<File>,
    offset: u64,
    remaining: u64,
}

impl FileSpan {
    /// The `len` bytes of `file` from `offset` on. The file should hold them: if it is
    /// shorter when read, the body fails (and the server closes the connection).
    ///
    /// # Examples
    /// ```
    /// use std::sync::Arc;
    /// use peregrine::{Body, FileSpan};
    /// let path = std::env::temp_dir().join(format!("peregrine-span-{}", std::process::id()));
    /// std::fs::write(&path, b"0123456789")?;
    /// let span = FileSpan::new(Arc::new(std::fs::File::open(&path)?), 2, 5);
    /// assert_eq!(Body::from(span).size_hint(), Some(5));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn new(file: Arc<File>, offset: u64, len: u64) -> FileSpan {
        FileSpan { file, offset, remaining: len }
    }

    /// Marks `n` bytes as sent by other means (the server's `sendfile(2)`).
    pub(crate) fn advance(&mut self, n: u64) {
        let n = n.min(self.remaining);
        self.offset += n;
        self.remaining -= n;
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> u64 {
        self.remaining
    }

    /// The offset of the next byte to read.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The open file (for `sendfile` and similar zero-copy paths).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Reads the next chunk of at most `max` bytes; `Ok(None)` once the span is done.
    ///
    /// Blocking (a positioned read on the file).
    ///
    /// # Errors
    /// An I/O error from the read, or `UnexpectedEof` when the file shrank after the answer
    /// was decided: its length was already promised, so the caller must end the connection
    /// rather than finish the message.
    pub fn read_chunk(&mut self, max: usize) -> io::Result<Option<Bytes>> {
        if self.remaining == 0 {
            return Ok(None);
        }
        let want = usize::try_from(self.remaining).unwrap_or(usize::MAX).min(max.max(1));
        // Read into uninitialised capacity: zeroing it first would cost as much as the copy.
        let mut buf = BytesMut::with_capacity(want);
        self.fill(want, |file, filled, at| {
            super::file_read::read_at_spare(file, &mut buf, want - filled, at)
        })?;
        Ok(Some(buf.freeze()))
    }

    /// Reads the next `buf.len()` bytes of the span into `buf` (a driver's own buffer, e.g.
    /// the payload of a DATA frame), and moves past them.
    ///
    /// Blocking (positioned reads on the file).
    ///
    /// # Errors
    /// `InvalidInput` when `buf` is longer than what remains of the span; otherwise as
    /// [`FileSpan::read_chunk`]. The span does not move on an error.
    pub(crate) fn read_into(&mut self, buf: &mut [u8]) -> io::Result<()> {
        let want = buf.len();
        if want as u64 > self.remaining {
            return Err(io::ErrorKind::InvalidInput.into());
        }
        self.fill(want, |file, filled, at| read_at(file, &mut buf[filled..], at))
    }

    /// Reads the next `want` octets of the span through `read(file, filled, offset)` (one
    /// positioned read at `offset`, after the `filled` octets already read; it returns how many
    /// it read), retrying interrupted reads, then moves past them. The span does not move on
    /// an error.
    fn fill(
        &mut self,
        want: usize,
        mut read: impl FnMut(&File, usize, u64) -> io::Result<usize>,
    ) -> io::Result<()> {
        let mut filled = 0;
        while filled < want {
            match read(&self.file, filled, self.offset + filled as u64) {
                Ok(0) => return Err(shrank()),
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.offset += want as u64;
        self.remaining -= want as u64;
        Ok(())
    }
}

/// The file ended before the span: its length was already promised.
fn shrank() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "file shrank while being served")
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, offset)
}
