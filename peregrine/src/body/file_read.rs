//! Positioned reads of a file into a buffer's spare capacity, left uninitialised: a file
//! body's chunk is read straight into a fresh buffer, without zeroing it first. Zeroing is
//! what `BytesMut::zeroed` (`calloc`) costs otherwise: about a million instructions per MiB
//! served, 12% of an HTTP/3 server's user-space instructions for a 1 MiB file
//! (BENCHMARKS.md, HTTP/3), and the same on every other path that reads a file in chunks
//! (HTTP/1.1 over TLS, the proxy). std's read into uninitialised memory (`read_buf_at`) is not
//! stable; this is `pread(2)` itself.
#![allow(unsafe_code)]

use std::fs::File;
use std::io;

use bytes::BytesMut;

/// Reads at most `want` bytes of `file` at `offset` into `buf`'s spare capacity (at most what
/// it has), after its length; returns how many (0 at the end of the file).
///
/// # Errors
/// The read's; `InvalidInput` for an offset past `off_t`.
#[cfg(unix)]
pub(super) fn read_at_spare(
    file: &File,
    buf: &mut BytesMut,
    want: usize,
    offset: u64,
) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    let offset = libc::off_t::try_from(offset).map_err(|_| io::ErrorKind::InvalidInput)?;
    let spare = buf.spare_capacity_mut();
    let len = want.min(spare.len());
    // SAFETY: `spare` is `len` or more bytes of writable memory owned by `buf` and borrowed
    // here alone; pread writes at most `len` bytes into it and nothing else.
    let n = unsafe { libc::pread(file.as_raw_fd(), spare.as_mut_ptr().cast(), len, offset) };
    let n = usize::try_from(n).map_err(|_| io::Error::last_os_error())?;
    // SAFETY: the kernel initialised the first `n` (≤ `len`) bytes after the length.
    unsafe { buf.set_len(buf.len() + n) };
    Ok(n)
}

/// Elsewhere: zeroed, then read (no positioned read into uninitialised memory).
#[cfg(not(unix))]
pub(super) fn read_at_spare(
    file: &File,
    buf: &mut BytesMut,
    want: usize,
    offset: u64,
) -> io::Result<usize> {
    let at = buf.len();
    let len = want.min(buf.capacity() - at);
    buf.resize(at + len, 0);
    let n = std::os::windows::fs::FileExt::seek_read(file, &mut buf[at..], offset);
    buf.truncate(at + *n.as_ref().unwrap_or(&0));
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads land after what the buffer holds, at the offset asked, never past its capacity;
    /// the end of the file reads 0.
    #[test]
    #[cfg_attr(miri, ignore = "pread(2) is a system call Miri does not emulate")]
    fn reads_at_the_offset_into_spare_capacity() {
        let path = std::env::temp_dir().join(format!("peregrine-read-at-{}", std::process::id()));
        let content: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
        std::fs::write(&path, &content).unwrap();
        let file = File::open(&path).unwrap();
        struct Case {
            held: &'static [u8],
            capacity: usize,
            want: usize,
            offset: u64,
            read: usize,
        }
        let cases = [
            Case { held: b"", capacity: 100, want: 100, offset: 0, read: 100 },
            Case { held: b"ab", capacity: 100, want: 50, offset: 9_000, read: 50 },
            // The capacity bounds the read, not `want`.
            Case { held: b"", capacity: 64, want: 4_096, offset: 1, read: 64 },
            // The end of the file.
            Case { held: b"", capacity: 100, want: 100, offset: 9_950, read: 50 },
            Case { held: b"x", capacity: 100, want: 100, offset: 10_000, read: 0 },
        ];
        for c in cases {
            let mut buf = BytesMut::with_capacity(c.capacity);
            buf.extend_from_slice(c.held);
            let room = buf.capacity() - buf.len();
            let n = read_at_spare(&file, &mut buf, c.want, c.offset).unwrap();
            assert_eq!(n, c.read.min(room), "offset {}", c.offset);
            assert_eq!(&buf[..c.held.len()], c.held);
            let at = c.offset as usize;
            assert_eq!(&buf[c.held.len()..], &content[at..at + n], "offset {}", c.offset);
        }
        std::fs::remove_file(&path).unwrap();
    }
}
