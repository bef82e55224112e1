//! Safe mapping from a request path to a file beneath the served root.
//!
//! Two steps, each of which may only narrow what is reachable:
//! 1. [`decode`] turns the percent-encoded request path into checked segments (pure, no I/O).
//! 2. [`open_beneath`] opens the joined path and then asks the kernel where the *opened* file
//!    really lives; anything whose real path is not under the canonical root (a symlink out of
//!    the root, a hard-to-spot `..` the first step somehow missed) is refused. The check runs on
//!    the open file descriptor, not on a path, so swapping a symlink between check and use does
//!    not help an attacker.

use std::fs::{File, Metadata};
use std::io;
use std::path::{Path, PathBuf};

use crate::router::percent::decode_into;

/// Why a request path was refused before touching the file system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PathError {
    /// Malformed or hostile: bad percent-encoding, invalid UTF-8, NUL, a dot-segment, a
    /// backslash or an encoded slash. Answered with 400.
    BadRequest,
    /// Well-formed but names something we never serve (a hidden dotfile). Answered with 404.
    NotFound,
}

/// A request path after percent-decoding and checking.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct DecodedPath {
    /// The decoded segments joined with `/`, without a leading slash; empty for the root.
    /// On Unix any bytes (file names need not be UTF-8); elsewhere UTF-8.
    pub(crate) rel: Vec<u8>,
    /// Whether the request path ended with `/` (a directory is asked for as such).
    pub(crate) trailing_slash: bool,
    /// The last non-empty segment as sent (still percent-encoded), for a relative redirect.
    pub(crate) last_raw: String,
}

/// Decodes and checks a request path (`/a/b%20c`, no query).
///
/// Rules, each answering the attack named beside it:
/// - Percent-encoding is decoded per segment (RFC 3986 §2.1) and must be `%` followed by two
///   hex digits, else 400. On Unix the result may be any bytes, as file names may: a listing
///   links a name that is not UTF-8 by its percent-encoded bytes, and that link must work.
///   Elsewhere it must be UTF-8 (400).
/// - A decoded segment equal to `.` or `..` is refused with 400, whether it was sent literally
///   or encoded (`%2e%2e`): clients remove dot-segments before sending (RFC 3986 §5.2.4), so
///   one arriving here is a traversal attempt, never a legitimate request.
/// - A decoded NUL (`%00`) is refused with 400: it would truncate the path in C APIs.
/// - A decoded `/` (`%2F`) inside a segment is refused with 400: no file name holds a slash,
///   and decoding it into a separator would let `..%2F` slip past the segment check.
/// - A backslash (raw or `%5C`) is refused with 400: it is a separator on Windows, where
///   `..\` would escape, and such names are not worth the ambiguity on Unix.
/// - Bytes outside visible ASCII in the raw path (which a request parser already rejects) are
///   refused with 400, so the path can be echoed into a `Location` header safely.
/// - With `hide_dotfiles`, a segment starting with `.` answers 404, as if it did not exist.
/// - Empty segments (`//`) are skipped.
pub(crate) fn decode(raw: &[u8], hide_dotfiles: bool) -> Result<DecodedPath, PathError> {
    if raw.iter().any(|&b| !(0x21..=0x7e).contains(&b)) {
        return Err(PathError::BadRequest);
    }
    let mut rel: Vec<u8> = Vec::with_capacity(raw.len());
    let mut last_raw: &[u8] = b"";
    let mut hidden = false;
    for seg in raw.split(|&b| b == b'/') {
        if seg.is_empty() {
            continue;
        }
        let start = rel.len();
        if start != 0 {
            rel.push(b'/');
        }
        let body = rel.len();
        decode_into(seg, &mut rel).map_err(|_| PathError::BadRequest)?;
        let decoded = &rel[body..];
        if decoded == b"." || decoded == b".." {
            return Err(PathError::BadRequest);
        }
        if decoded.iter().any(|&b| b == 0 || b == b'/' || b == b'\\') {
            return Err(PathError::BadRequest);
        }
        // Keep checking later segments: a dotfile followed by `..` is still a 400, so the
        // answer never depends on which rule happens to run first.
        hidden |= hide_dotfiles && decoded.first() == Some(&b'.');
        last_raw = seg;
    }
    if hidden {
        return Err(PathError::NotFound);
    }
    if !cfg!(unix) && std::str::from_utf8(&rel).is_err() {
        return Err(PathError::BadRequest);
    }
    // The raw path is visible ASCII (checked above), hence UTF-8.
    let last_raw = String::from_utf8_lossy(last_raw).into_owned();
    Ok(DecodedPath { rel, trailing_slash: raw.last() == Some(&b'/'), last_raw })
}

impl DecodedPath {
    /// The decoded path as a relative file-system path.
    pub(crate) fn rel_path(&self) -> &Path {
        bytes_path(&self.rel)
    }
}

/// Bytes as a path: any bytes on Unix; elsewhere UTF-8 (checked by [`decode`]), else empty.
#[cfg(unix)]
pub(crate) fn bytes_path(b: &[u8]) -> &Path {
    Path::new(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(b))
}

/// Bytes as a path: any bytes on Unix; elsewhere UTF-8 (checked by [`decode`]), else empty.
#[cfg(not(unix))]
pub(crate) fn bytes_path(b: &[u8]) -> &Path {
    Path::new(std::str::from_utf8(b).unwrap_or_default())
}

/// Why opening a file beneath the root failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OpenError {
    /// Missing, outside the root, hidden, or not something we serve. Answered with 404.
    NotFound,
    /// The operating system refused access. Answered with 403.
    Forbidden,
}

/// A file or directory opened beneath the root.
#[derive(Debug)]
pub(crate) struct Opened {
    pub(crate) file: File,
    pub(crate) meta: Metadata,
    /// Where the opened file really is (symlinks resolved); under the root.
    pub(crate) real: PathBuf,
}

/// Opens `path` and checks that the opened file really lives beneath `root` (canonical).
///
/// Blocking: one `open`, one `fstat` and one `readlink` (of `/proc/self/fd/N`; elsewhere a
/// `realpath`). The file is opened with `O_NONBLOCK` so a FIFO planted in the root cannot
/// stall the caller in `open`; anything but a regular file or a directory is then refused.
/// With `hide_dotfiles`, a real path with a dot-component below the root is refused too, so a
/// symlink cannot expose a hidden file under a visible name.
pub(crate) fn open_beneath(
    root: &Path,
    path: &Path,
    hide_dotfiles: bool,
) -> Result<Opened, OpenError> {
    let file = open_nonblocking(path).map_err(map_io)?;
    let meta = file.metadata().map_err(map_io)?;
    if !(meta.is_file() || meta.is_dir()) {
        return Err(OpenError::NotFound);
    }
    let real = real_path(&file, path).map_err(map_io)?;
    let below = real.strip_prefix(root).map_err(|_| OpenError::NotFound)?;
    if hide_dotfiles
        && below.components().any(|c| c.as_os_str().as_encoded_bytes().first() == Some(&b'.'))
    {
        return Err(OpenError::NotFound);
    }
    Ok(Opened { file, meta, real })
}

fn map_io(e: io::Error) -> OpenError {
    match e.kind() {
        io::ErrorKind::PermissionDenied => OpenError::Forbidden,
        // NotFound, NotADirectory (a file used as a directory), symlink loops, names too long:
        // all mean "no such resource here".
        _ => OpenError::NotFound,
    }
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

/// The real path of an open file: `/proc/self/fd/N` names exactly the file we hold.
#[cfg(target_os = "linux")]
fn real_path(file: &File, path: &Path) -> io::Result<PathBuf> {
    use std::os::fd::AsRawFd;
    let mut link = String::with_capacity(24);
    {
        use std::fmt::Write;
        let _ = write!(link, "/proc/self/fd/{}", file.as_raw_fd());
    }
    match std::fs::read_link(&link) {
        Ok(real) => Ok(real),
        // No /proc (a minimal chroot): fall back to resolving the path again.
        Err(_) => std::fs::canonicalize(path),
    }
}

#[cfg(not(target_os = "linux"))]
fn real_path(_file: &File, path: &Path) -> io::Result<PathBuf> {
    std::fs::canonicalize(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(rel: &str, trailing_slash: bool, last_raw: &str) -> Result<DecodedPath, PathError> {
        Ok(DecodedPath { rel: rel.as_bytes().to_vec(), trailing_slash, last_raw: last_raw.into() })
    }

    fn ok_bytes(rel: &[u8], last_raw: &str) -> Result<DecodedPath, PathError> {
        Ok(DecodedPath { rel: rel.to_vec(), trailing_slash: false, last_raw: last_raw.into() })
    }

    #[test]
    fn decode_rules_rfc3986_2_1_and_5_2_4() {
        struct Case {
            input: &'static [u8],
            expect: Result<DecodedPath, PathError>,
        }
        use PathError::*;
        let cases = [
            Case { input: b"/", expect: ok("", true, "") },
            Case { input: b"", expect: ok("", false, "") },
            Case { input: b"/a.txt", expect: ok("a.txt", false, "a.txt") },
            // A router catch-all hands over the rest of the path without its leading slash.
            Case { input: b"docs/a.txt", expect: ok("docs/a.txt", false, "a.txt") },
            Case { input: b"docs/", expect: ok("docs", true, "docs") },
            Case { input: b"/dir/", expect: ok("dir", true, "dir") },
            Case { input: b"/a//b", expect: ok("a/b", false, "b") },
            Case { input: b"/b%20c", expect: ok("b c", false, "b%20c") },
            Case { input: b"/%C3%A9t%C3%A9", expect: ok("\u{e9}t\u{e9}", false, "%C3%A9t%C3%A9") },
            Case { input: b"/a%2eb", expect: ok("a.b", false, "a%2eb") },
            // Traversal, literal and encoded (RFC 3986 §5.2.4 dot-segments).
            Case { input: b"/../etc/passwd", expect: Err(BadRequest) },
            Case { input: b"/a/..", expect: Err(BadRequest) },
            Case { input: b"/./a", expect: Err(BadRequest) },
            Case { input: b"/%2e%2e/etc/passwd", expect: Err(BadRequest) },
            Case { input: b"/%2E%2E%2Fetc%2Fpasswd", expect: Err(BadRequest) },
            Case { input: b"/.%2e/x", expect: Err(BadRequest) },
            Case { input: b"/a%2Fb", expect: Err(BadRequest) },
            // NUL and backslash.
            Case { input: b"/a%00.txt", expect: Err(BadRequest) },
            Case { input: b"/..\\etc", expect: Err(BadRequest) },
            Case { input: b"/..%5Cetc", expect: Err(BadRequest) },
            Case { input: b"/a%5cb", expect: Err(BadRequest) },
            // Malformed percent-encoding (RFC 3986 §2.1) and invalid UTF-8.
            Case { input: b"/a%2", expect: Err(BadRequest) },
            Case { input: b"/a%zz", expect: Err(BadRequest) },
            Case { input: b"/%", expect: Err(BadRequest) },
            // Names that are not UTF-8 are reachable on Unix (a listing links them so).
            Case {
                input: b"/%FF",
                expect: if cfg!(unix) { ok_bytes(b"\xff", "%FF") } else { Err(BadRequest) },
            },
            Case {
                input: b"/a%C3",
                expect: if cfg!(unix) { ok_bytes(b"a\xc3", "a%C3") } else { Err(BadRequest) },
            },
            // Raw bytes outside visible ASCII never reach a Location header.
            Case { input: b"/a b", expect: Err(BadRequest) },
            Case { input: b"/a\r\nb", expect: Err(BadRequest) },
            Case { input: "/\u{e9}".as_bytes(), expect: Err(BadRequest) },
            // Dotfiles are hidden (404); a later `..` still makes it a 400.
            Case { input: b"/.env", expect: Err(NotFound) },
            Case { input: b"/.git/config", expect: Err(NotFound) },
            Case { input: b"/%2egit/config", expect: Err(NotFound) },
            Case { input: b"/.git/../x", expect: Err(BadRequest) },
        ];
        for c in cases {
            assert_eq!(decode(c.input, true), c.expect, "{:?}", String::from_utf8_lossy(c.input));
        }
        assert_eq!(decode(b"/.env", false), ok(".env", false, ".env"));
    }

    proptest::proptest! {
        /// Whatever the input, a decoded path has no dot-segment, NUL, backslash or absolute
        /// start: joined to the root it cannot climb out.
        #[test]
        fn decoded_paths_stay_relative(raw in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64)) {
            if let Ok(p) = decode(&raw, true) {
                proptest::prop_assert!(!p.rel.starts_with(b"/"));
                // The empty path is the root itself.
                for seg in p.rel.split(|&b| b == b'/').filter(|_| !p.rel.is_empty()) {
                    proptest::prop_assert!(!seg.is_empty() && seg != b"." && seg != b"..");
                    proptest::prop_assert!(!seg.contains(&0) && !seg.contains(&b'\\') && !seg.starts_with(b"."));
                }
            }
        }

        /// Dot-segments survive any mix of literal and encoded dots and slashes as a 400.
        #[test]
        fn encoded_traversal_is_refused(parts in proptest::collection::vec(
            proptest::sample::select(vec!["..", "%2e%2e", "%2E.", ".%2e", "%2F", "/", "a", "%2f"]), 1..8)) {
            let raw = format!("/{}", parts.concat());
            if let Ok(p) = decode(raw.as_bytes(), false) {
                proptest::prop_assert!(p.rel.split(|&b| b == b'/').all(|s| s != b".." && s != b"."), "{raw} -> {:?}", p.rel);
            }
        }
    }
}
