//! Static files: serve a directory safely, with validators, ranges and precompressed siblings.
//!
//! [`ServeDir`] decides the answer to a GET or HEAD for a path beneath its root; it knows
//! nothing about sockets. The server glue turns a request into a [`FileRequest`], calls
//! [`ServeDir::respond`], writes the [`FileReply`] headers and streams its [`FileBody`].
//!
//! ```
//! use peregrine::Method;
//! use peregrine::files::{FileRequest, ServeDir};
//!
//! let dir = std::env::temp_dir().join(format!("peregrine-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! std::fs::write(dir.join("hello.txt"), "hello")?;
//!
//! let files = ServeDir::new(&dir)?.cache_control(Some("max-age=60".into()));
//! let reply = files.respond(&FileRequest::new(Method::Get, b"/hello.txt"));
//! assert_eq!(reply.status(), 200);
//! assert_eq!(reply.content_length(), Some(5));
//! assert_eq!(reply.header("content-type").unwrap(), "text/plain; charset=utf-8");
//!
//! // A conditional request with the same ETag is answered 304.
//! let etag = reply.header("etag").unwrap();
//! let again = FileRequest {
//!     if_none_match: Some(etag.as_bytes()),
//!     ..FileRequest::new(Method::Get, b"/hello.txt")
//! };
//! assert_eq!(files.respond(&again).status(), 304);
//!
//! // Traversal never leaves the root.
//! assert_eq!(files.respond(&FileRequest::new(Method::Get, b"/../etc/passwd")).status(), 400);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! # The rules
//! - **Paths** (see `resolve.rs`): percent-decoded per segment, UTF-8 only; `.`/`..` segments
//!   (literal or encoded), NUL, backslashes and encoded slashes are 400; a dotfile anywhere
//!   in the path is 404 unless [`ServeDir::hidden_dotfiles`] is turned off; the opened file's
//!   real path must lie beneath the canonical root, so symlinks cannot leave it (404).
//! - **Directories**: `/dir` redirects with 301 to `dir/` (a relative `Location`, so it works
//!   wherever the handler is mounted); `/dir/` serves `dir/index.html` if present, else an
//!   HTML listing, or 403 when listings are disabled.
//! - **Methods**: GET and HEAD (same headers, no body); anything else is 405 with
//!   `Allow: GET, HEAD` (RFC 9110 §15.5.6).
//! - **Validators**: a strong ETag and Last-Modified on every file; preconditions evaluated in
//!   the order of RFC 9110 §13.2.2 (412 for If-Match / If-Unmodified-Since, 304 for
//!   If-None-Match / If-Modified-Since).
//! - **Ranges**: one `bytes` range → 206, unsatisfiable → 416, several → the whole file (200);
//!   If-Range honoured; `Accept-Ranges: bytes` always.
//! - **Precompressed siblings**: `NAME.br` / `NAME.gz` served with `Content-Encoding` when
//!   Accept-Encoding allows; `Vary: Accept-Encoding` whenever a sibling exists.
//!
//! # Blocking
//! [`ServeDir::respond`] makes blocking file-system calls (`open`, `fstat`, `readlink`, and for
//! listings `readdir`). On a local disk these take microseconds and the server may call it on
//! its worker thread; on a network file system run it on a blocking pool.

mod cache;
mod conditional;
mod content_type;
mod encoding;
mod handler;
mod listing;
mod range;
mod reply;
mod resolve;
mod text;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::HeaderValue;

use crate::Method;
use cache::{FileCache, Repr, Resolved};
use conditional::{Conditions, Precondition, Validators};
use range::RangeOutcome;
use resolve::{OpenError, Opened, PathError};

pub use crate::body::FileSpan;
pub use encoding::Coding;
pub use reply::{FileBody, FileReply};

/// The parts of a request the static-file decision reads.
///
/// Header values are the raw field values; when a field was sent several times, join the
/// values with `", "` (RFC 9110 §5.3) before handing them over.
#[derive(Clone, Copy, Debug)]
pub struct FileRequest<'a> {
    /// The request method; only GET and HEAD are served.
    pub method: Method,
    /// The path beneath the root, still percent-encoded, without the query (e.g. `/a%20b.txt`;
    /// the leading slash is optional, so a router's catch-all capture `a%20b.txt` works too).
    /// Anything from a `?` on is ignored.
    pub path: &'a [u8],
    /// `If-Match` (RFC 9110 §13.1.1).
    pub if_match: Option<&'a [u8]>,
    /// `If-None-Match` (RFC 9110 §13.1.2).
    pub if_none_match: Option<&'a [u8]>,
    /// `If-Modified-Since` (RFC 9110 §13.1.3).
    pub if_modified_since: Option<&'a [u8]>,
    /// `If-Unmodified-Since` (RFC 9110 §13.1.4).
    pub if_unmodified_since: Option<&'a [u8]>,
    /// `Range` (RFC 9110 §14.2).
    pub range: Option<&'a [u8]>,
    /// `If-Range` (RFC 9110 §13.1.5).
    pub if_range: Option<&'a [u8]>,
    /// `Accept-Encoding` (RFC 9110 §12.5.3).
    pub accept_encoding: Option<&'a [u8]>,
}

impl<'a> FileRequest<'a> {
    /// A request with no conditional, range or encoding headers.
    ///
    /// # Examples
    /// ```
    /// use peregrine::{Method, files::FileRequest};
    /// let req = FileRequest { range: Some(b"bytes=0-9"), ..FileRequest::new(Method::Get, b"/a.bin") };
    /// assert_eq!(req.path, b"/a.bin");
    /// ```
    pub fn new(method: Method, path: &'a [u8]) -> FileRequest<'a> {
        FileRequest {
            method,
            path,
            if_match: None,
            if_none_match: None,
            if_modified_since: None,
            if_unmodified_since: None,
            range: None,
            if_range: None,
            accept_encoding: None,
        }
    }
}

/// Serves the files beneath one directory.
///
/// Cloning is cheap and clones share the open-file cache.
///
/// # Examples
/// ```
/// use peregrine::files::ServeDir;
/// let files = ServeDir::new(std::env::temp_dir())?.listing(false).hidden_dotfiles(true);
/// assert!(files.root().is_absolute());
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ServeDir {
    root: PathBuf,
    listing: bool,
    hide_dotfiles: bool,
    precompressed: bool,
    cache_control: Option<HeaderValue>,
    cache: Option<Arc<FileCache>>,
}

/// Resolutions kept by the open-file cache at most (see [`ServeDir::cache_ttl`]).
const CACHE_ENTRIES: usize = 512;

impl ServeDir {
    /// Serves `root`, which is resolved to its canonical path now.
    ///
    /// Defaults: listings on, dotfiles hidden, precompressed siblings on, no Cache-Control,
    /// no open-file cache.
    ///
    /// # Errors
    /// The error of resolving `root` (e.g. `NotFound`), or `NotADirectory` when it is not a
    /// directory.
    pub fn new(root: impl AsRef<Path>) -> io::Result<ServeDir> {
        let root = std::fs::canonicalize(root)?;
        if !std::fs::metadata(&root)?.is_dir() {
            return Err(io::Error::new(io::ErrorKind::NotADirectory, "not a directory"));
        }
        Ok(ServeDir {
            root,
            listing: true,
            hide_dotfiles: true,
            precompressed: true,
            cache_control: None,
            cache: None,
        })
    }

    /// Whether a directory without `index.html` gets an HTML listing (default) or 403.
    pub fn listing(mut self, on: bool) -> ServeDir {
        self.listing = on;
        self
    }

    /// Whether names starting with `.` are hidden: answered 404 and left out of listings
    /// (default `true`; turn off to serve e.g. `.well-known/`).
    pub fn hidden_dotfiles(mut self, hide: bool) -> ServeDir {
        self.hide_dotfiles = hide;
        self.reset_cache()
    }

    /// Whether `NAME.br` / `NAME.gz` siblings are looked for (default `true`). Off saves the
    /// lookups when no such files exist.
    pub fn precompressed(mut self, on: bool) -> ServeDir {
        self.precompressed = on;
        self.reset_cache()
    }

    /// A `Cache-Control` value sent with every file and listing (default none).
    ///
    /// A value that is not a valid field value (CR, LF, NUL or other controls) is dropped.
    pub fn cache_control(mut self, value: Option<String>) -> ServeDir {
        self.cache_control = value.and_then(|v| HeaderValue::try_from(v).ok());
        self
    }

    /// Keeps resolved files (open descriptors, validators, and the contents of files up to
    /// 32 KiB) for `ttl`, like nginx's `open_file_cache` with `open_file_cache_valid` (default
    /// `None`: every request resolves the path afresh).
    ///
    /// A cache hit answers without any system call. The cost: a file changed, replaced or
    /// removed within `ttl` of its last resolution is still answered from the snapshot taken
    /// then (contents, length and validators stay consistent with each other). At most 512
    /// paths are kept; when full, paths new within the time-to-live go uncached.
    pub fn cache_ttl(mut self, ttl: Option<Duration>) -> ServeDir {
        self.cache =
            ttl.filter(|t| !t.is_zero()).map(|t| Arc::new(FileCache::new(t, CACHE_ENTRIES)));
        self
    }

    /// The canonical root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A configuration change may change resolutions: start from an empty cache.
    fn reset_cache(mut self) -> ServeDir {
        self.cache = self.cache.as_ref().map(|c| Arc::new(c.emptied()));
        self
    }

    /// Decides the answer to one request. Blocking (see the module docs); never panics and
    /// never names a file outside the root.
    pub fn respond(&self, req: &FileRequest<'_>) -> FileReply {
        let head = match req.method {
            Method::Get => false,
            Method::Head => true,
            _ => {
                // RFC 9110 §15.5.6: a 405 must list the allowed methods.
                let mut r = FileReply::text(405, "405 Method Not Allowed\n", false);
                r.allow = true;
                return r;
            }
        };
        let raw = req.path.split(|&b| b == b'?').next().unwrap_or_default();
        let now = self.cache.as_ref().map(|_| Instant::now());
        if let (Some(cache), Some(now)) = (&self.cache, now) {
            if let Some(resolved) = cache.get(raw, now) {
                let (reply, changed) = self.answer(req, head, &resolved, true);
                if changed {
                    cache.remove(raw);
                }
                return reply;
            }
        }
        let path = match resolve::decode(raw, self.hide_dotfiles) {
            Ok(p) => p,
            Err(PathError::BadRequest) => return FileReply::text(400, "400 Bad Request\n", head),
            Err(PathError::NotFound) => return not_found(head),
        };
        let full = self.root.join(&path.rel);
        let opened = match resolve::open_beneath(&self.root, &full, self.hide_dotfiles) {
            Ok(o) => o,
            Err(e) => return open_error(e, head),
        };
        let resolved = if opened.meta.is_file() {
            // `/file.txt/` names a directory that does not exist.
            if path.trailing_slash {
                return not_found(head);
            }
            self.resolve_file(&full, opened)
        } else {
            // A directory. Relative references in it (listing links, index.html assets) only
            // resolve under a URL ending in "/": redirect (RFC 9110 §15.4.2).
            if !path.trailing_slash && !path.rel.is_empty() {
                let mut r = FileReply::new(301);
                r.location = HeaderValue::try_from(format!("{}/", path.last_raw)).ok();
                r.content_length = Some(0);
                return r;
            }
            let index = full.join("index.html");
            match resolve::open_beneath(&self.root, &index, self.hide_dotfiles) {
                Ok(o) if o.meta.is_file() => self.resolve_file(&index, o),
                _ => return self.directory(head, &path.rel, &opened),
            }
        };
        let resolved = Arc::new(resolved);
        if let (Some(cache), Some(now)) = (&self.cache, now) {
            cache.insert(raw, resolved.clone(), now);
        }
        // Just opened: its metadata is current.
        self.answer(req, head, &resolved, false).0
    }

    /// The listing of a directory without `index.html`, or 403 when listings are off.
    fn directory(&self, head: bool, rel: &str, opened: &Opened) -> FileReply {
        if !self.listing {
            return FileReply::text(403, "403 Forbidden\n", head);
        }
        let shown = if rel.is_empty() { "/".to_owned() } else { format!("/{rel}/") };
        match listing::render(&opened.real, &self.root, &shown, self.hide_dotfiles) {
            Ok(html) => {
                let mut r = FileReply::new(200);
                r.content_type = Some(HeaderValue::from_static("text/html; charset=utf-8"));
                r.content_length = Some(html.len() as u64);
                r.cache_control = self.cache_control.clone();
                if !head {
                    r.body = FileBody::Bytes(html);
                }
                r
            }
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                open_error(OpenError::Forbidden, head)
            }
            Err(_) => not_found(head),
        }
    }

    /// Gathers what answering needs about a regular file: its representations and type.
    fn resolve_file(&self, full: &Path, opened: Opened) -> Resolved {
        let inline = self.cache.is_some();
        let mut siblings = [None, None];
        if self.precompressed {
            for (slot, c) in siblings.iter_mut().zip(Coding::ALL) {
                let mut p = full.as_os_str().to_owned();
                p.push(c.extension());
                *slot = match resolve::open_beneath(&self.root, Path::new(&p), self.hide_dotfiles) {
                    Ok(o) if o.meta.is_file() => Some(repr(o, Some(c), inline)),
                    _ => None,
                };
            }
        }
        Resolved {
            content_type: content_type::value_for_path(full),
            identity: repr(opened, None, inline),
            siblings,
        }
    }

    /// Answers from a resolved file: sibling choice, preconditions, range. With `check` (the
    /// resolution came from the cache), true with the answer when the file turned out to have
    /// changed since.
    fn answer(
        &self,
        req: &FileRequest<'_>,
        head: bool,
        resolved: &Resolved,
        check: bool,
    ) -> (FileReply, bool) {
        // RFC 9110 §12.5.3: the best acceptable coding that has a sibling, else identity.
        let (coding, rep) = encoding::preferred(req.accept_encoding)
            .into_iter()
            .flatten()
            .find_map(|c| resolved.sibling(c).map(|r| (Some(c), r)))
            .unwrap_or((None, &resolved.identity));
        // A file sent from its descriptor is checked against it (one fstat): a file changed in
        // place since it was resolved (truncated, appended to, rewritten) goes out with its
        // current length and validators rather than stale ones, which would cut the response
        // short or promise bytes that are not there. Only a file that changes while it is sent
        // can still end the connection early.
        let current = rep.file.as_ref().filter(|_| check).and_then(|file| {
            let meta = file.metadata().ok()?;
            let same = meta.len() == rep.len && meta.modified().ok() == rep.modified;
            (!same).then(|| Repr {
                file: Some(file.clone()),
                len: meta.len(),
                modified: meta.modified().ok(),
                validators: Validators::from_meta(&meta, coding),
                contents: None,
            })
        });
        let changed = current.is_some();
        let rep = current.as_ref().unwrap_or(rep);
        (self.answer_with(req, head, resolved, coding, rep), changed)
    }

    fn answer_with(
        &self,
        req: &FileRequest<'_>,
        head: bool,
        resolved: &Resolved,
        coding: Option<Coding>,
        rep: &Repr,
    ) -> FileReply {
        let len = rep.len;

        let mut r = FileReply::new(200);
        r.validators = Some(rep.validators.clone());
        r.cache_control = self.cache_control.clone();
        // RFC 9110 §12.5.5: the answer varies with Accept-Encoding whenever a sibling exists,
        // whether or not it was chosen this time.
        r.vary_accept_encoding = resolved.has_siblings();
        r.accept_ranges = true;

        let conditions = Conditions {
            if_match: req.if_match,
            if_unmodified_since: req.if_unmodified_since,
            if_none_match: req.if_none_match,
            if_modified_since: req.if_modified_since,
        };
        match conditional::evaluate(&conditions, &rep.validators) {
            Precondition::Proceed => {}
            Precondition::NotModified => {
                // RFC 9110 §15.4.5: a 304 carries the validators, Cache-Control and Vary a 200
                // would, and no content. §8.6: its Content-Length, if any, must be the 200's,
                // which is what the length reported here is.
                r.status = 304;
                r.content_length = Some(len);
                return r;
            }
            Precondition::Failed => {
                r.status = 412;
                r.content_length = Some(0);
                return r;
            }
        }
        r.content_type = Some(resolved.content_type.clone());
        r.content_encoding = coding;

        // RFC 9110 §14.2: range handling is defined for GET only; a Range on HEAD is ignored.
        // §13.1.5: a false If-Range means the whole representation is sent.
        let outcome = match req.range {
            Some(range)
                if !head
                    && req
                        .if_range
                        .is_none_or(|ir| conditional::if_range_holds(ir, &rep.validators)) =>
            {
                range::evaluate(range, len)
            }
            _ => RangeOutcome::Full,
        };
        let (offset, count) = match outcome {
            RangeOutcome::Full => (0, len),
            RangeOutcome::Partial { start, end } => {
                r.status = 206;
                r.content_range = content_range(format_args!("bytes {start}-{end}/{len}"));
                (start, end - start + 1)
            }
            RangeOutcome::Unsatisfiable => {
                // RFC 9110 §15.5.17: 416 with the current length in `Content-Range: bytes */len`.
                r.status = 416;
                r.content_range = content_range(format_args!("bytes */{len}"));
                r.content_type = None;
                r.content_encoding = None;
                r.content_length = Some(0);
                return r;
            }
        };
        r.content_length = Some(count);
        if head || count == 0 {
            return r;
        }
        r.body = match (&rep.contents, &rep.file) {
            (Some(all), _) => {
                // Offsets are below `len`, which is the length of `all`.
                let (a, b) = (offset as usize, (offset + count) as usize);
                FileBody::Bytes(all.slice(a..b.min(all.len())))
            }
            (None, Some(file)) => FileBody::File(FileSpan::new(file.clone(), offset, count)),
            (None, None) => FileBody::Empty,
        };
        r
    }
}

/// A representation from an opened file; with `inline` (the cache is on), a small file is
/// read into memory now and its descriptor closed.
fn repr(o: Opened, coding: Option<Coding>, inline: bool) -> Repr {
    let validators = Validators::from_meta(&o.meta, coding);
    let len = o.meta.len();
    let modified = o.meta.modified().ok();
    let file = Arc::new(o.file);
    if inline && len <= cache::INLINE_MAX {
        let contents = if len == 0 {
            Ok(Some(Bytes::new()))
        } else {
            FileSpan::new(file.clone(), 0, len).read_chunk(len as usize)
        };
        if let Ok(Some(all)) = contents {
            return Repr { file: None, len, modified, validators, contents: Some(all) };
        }
        // A read error, or a file that shrank meanwhile: read at answer time instead, where
        // the error ends the connection.
    }
    Repr { file: Some(file), len, modified, validators, contents: None }
}

fn not_found(head: bool) -> FileReply {
    FileReply::text(404, "404 Not Found\n", head)
}

fn open_error(e: OpenError, head: bool) -> FileReply {
    match e {
        OpenError::NotFound => not_found(head),
        OpenError::Forbidden => FileReply::text(403, "403 Forbidden\n", head),
    }
}

fn content_range(args: std::fmt::Arguments<'_>) -> Option<HeaderValue> {
    let mut t = text::Text::<64>::new();
    std::fmt::Write::write_fmt(&mut t, args).ok()?;
    HeaderValue::from_bytes(t.as_bytes()).ok()
}

#[cfg(test)]
mod tests;
