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
//! - **Methods**: GET and HEAD (same headers, no body); OPTIONS on a file or directory is 204
//!   with `Allow: GET, HEAD, OPTIONS` (RFC 9110 §9.3.7); anything else is 405 with that
//!   `Allow` (RFC 9110 §15.5.6).
//! - **Validators**: a strong ETag and Last-Modified on every file; preconditions evaluated in
//!   the order of RFC 9110 §13.2.2 (412 for If-Match / If-Unmodified-Since, 304 for
//!   If-None-Match / If-Modified-Since).
//! - **Ranges**: one `bytes` range → 206, unsatisfiable → 416, several → the whole file (200);
//!   If-Range honoured; `Accept-Ranges: bytes` always.
//! - **Precompressed siblings**: `NAME.br` / `NAME.zst` / `NAME.gz` served with
//!   `Content-Encoding` when Accept-Encoding allows; `Vary: Accept-Encoding` whenever a
//!   sibling exists.
//! - **Compression on the fly** ([`ServeDir::compression`], off by default): compressible
//!   files without a matching sibling, compressed once per version and coding and cached;
//!   see [`Compression`] for the size window, the ETags and ranges.
//! - **Options**: header fields on every answer ([`ServeDir::header`]), CORS ([`Cors`]),
//!   Basic authentication ([`BasicAuth`]), the single-page-app fallback ([`ServeDir::spa`]),
//!   a custom 404 page ([`ServeDir::not_found_page`]).
//!
//! # Blocking
//! [`ServeDir::respond`] makes blocking file-system calls (`open`, `fstat`, `readlink`, and for
//! listings `readdir`). On a local disk these take microseconds and the server may call it on
//! its worker thread; on a network file system run it on a blocking pool.

mod answer;
mod auth;
mod cache;
mod compress;
mod conditional;
mod content_type;
mod cors;
mod encoding;
mod fallback;
mod handler;
mod listing;
mod options;
mod range;
mod reply;
mod request;
mod resolve;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use http::{HeaderName, HeaderValue};

use crate::Method;
use crate::text::Text;
use cache::FileCache;
use fallback::NotFoundPage;
use resolve::{OpenError, Opened, PathError};

pub use crate::body::FileSpan;
pub use auth::{AuthError, BasicAuth};
pub use compress::Compression;
pub use cors::Cors;
pub use encoding::Coding;
pub use handler::ServeFuture;
pub use reply::{FileBody, FileReply};
pub use request::FileRequest;

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
    /// Fields added to every answer ([`ServeDir::header`]).
    headers: Option<Arc<[(HeaderName, HeaderValue)]>>,
    cors: Option<Arc<Cors>>,
    auth: Option<Arc<BasicAuth>>,
    spa: bool,
    not_found_page: Option<Arc<NotFoundPage>>,
    compress: Option<Arc<compress::Compressor>>,
    listings: Arc<listing::Listings>,
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
            headers: None,
            cors: None,
            auth: None,
            spa: false,
            not_found_page: None,
            compress: None,
            listings: Arc::default(),
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
        self.listings = Arc::default();
        self
    }

    /// Decides the answer to one request. Blocking (see the module docs); never panics and
    /// never names a file outside the root.
    ///
    /// The order: a CORS preflight is answered first (it carries no credentials), then
    /// [`BasicAuth`] is checked (401 before anything about the path is revealed), then the
    /// method (GET, HEAD, OPTIONS; else 405), then the path. A 404 falls back to the SPA
    /// `index.html`, then to the custom page. Configured fields and CORS fields are added to
    /// whatever the answer is.
    pub fn respond(&self, req: &FileRequest<'_>) -> FileReply {
        // With `may_block`, nothing is deferred.
        self.respond_in(req, Ctx { may_block: true, probe: false })
    }

    /// As [`ServeDir::respond`], but the answer is marked `deferred` when it needs a slow step
    /// (reading a directory for its listing): the caller then answers again on a thread where
    /// blocking is fine.
    #[inline]
    pub(crate) fn respond_on_worker(&self, req: &FileRequest<'_>) -> FileReply {
        self.respond_in(req, Ctx { may_block: false, probe: false })
    }

    #[inline]
    fn respond_in(&self, req: &FileRequest<'_>, ctx: Ctx) -> FileReply {
        let mut reply = self.decide(req, ctx);
        if reply.deferred {
            return reply;
        }
        if let Some(cors) = &self.cors {
            if reply.status != 204 || reply.more.is_empty() {
                cors.simple(req.origin, &mut reply.more);
            }
            reply.vary_origin = cors.varies();
        }
        if self.headers.is_some() {
            reply.extra = self.headers.clone();
        }
        reply
    }

    // Inlined into `respond_in`: the answer is built in place instead of copied (~250 bytes,
    // twice per request: measured with callgrind on the small-file benchmark).
    #[inline(always)]
    fn decide(&self, req: &FileRequest<'_>, ctx: Ctx) -> FileReply {
        // Fetch §4.8: a preflight is an OPTIONS with Origin and Access-Control-Request-Method.
        if let (Method::Options, Some(cors), Some(_)) =
            (req.method, &self.cors, req.access_control_request_method)
        {
            let mut r = FileReply::new(204);
            r.allow = true;
            if let Some(fields) = cors.preflight(req.origin, req.access_control_request_headers) {
                r.more = fields;
            }
            return r;
        }
        let head = matches!(req.method, Method::Head | Method::Options);
        if let Some(auth) = &self.auth {
            if !auth.check(req.authorization) {
                // RFC 7235 §3.1 / RFC 9110 §15.5.2: a 401 carries the challenge.
                let mut r = FileReply::text(401, "401 Unauthorized\n", head);
                r.more.push((http::header::WWW_AUTHENTICATE, auth.challenge_value().clone()));
                return r;
            }
        }
        match req.method {
            Method::Get | Method::Head => {}
            Method::Options => {
                // RFC 9110 §9.3.7: OPTIONS asks what the resource supports; a resource that
                // exists answers 204 with Allow (no content, so no Content-Length either).
                let probe =
                    FileRequest { query: Some(b""), ..FileRequest::new(Method::Head, req.path) };
                let r = self.lookup(&probe, true, Ctx { probe: true, ..ctx });
                if r.status >= 300 {
                    return r;
                }
                let mut ok = FileReply::new(204);
                ok.allow = true;
                return ok;
            }
            _ => {
                // RFC 9110 §15.5.6: a 405 must list the allowed methods.
                let mut r = FileReply::text(405, "405 Method Not Allowed\n", false);
                r.allow = true;
                return r;
            }
        }
        let reply = self.lookup(req, head, ctx);
        if reply.status != 404 {
            return reply;
        }
        if self.spa && fallback::accepts_html(req.accept) {
            let index = FileRequest { path: b"/index.html", query: Some(b""), ..*req };
            let r = self.lookup(&index, head, ctx);
            if r.status != 404 {
                return r;
            }
        }
        match &self.not_found_page {
            Some(page) => page.reply(head),
            None => reply,
        }
    }

    /// The answer for the path alone: a file, a redirect, a listing, or an error.
    fn lookup(&self, req: &FileRequest<'_>, head: bool, ctx: Ctx) -> FileReply {
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
        let full = self.root.join(path.rel_path());
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
                _ => {
                    let query = req.query.unwrap_or_else(|| {
                        let at = req.path.iter().position(|&b| b == b'?');
                        at.map_or(&b""[..], |i| &req.path[i + 1..])
                    });
                    return self.directory(head, &path.rel, &opened, query, ctx);
                }
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
    fn directory(
        &self,
        head: bool,
        rel: &[u8],
        opened: &Opened,
        query: &[u8],
        ctx: Ctx,
    ) -> FileReply {
        if !self.listing {
            return FileReply::text(403, "403 Forbidden\n", head);
        }
        if ctx.probe {
            return FileReply::new(200);
        }
        let mut shown = String::from("/");
        for seg in rel.split(|&b| b == b'/').filter(|s| !s.is_empty()) {
            listing::display_name(seg, &mut shown);
            shown.push('/');
        }
        let dir = listing::Dir {
            real: &opened.real,
            root: &self.root,
            hide_dotfiles: self.hide_dotfiles,
            modified: opened.meta.modified().ok(),
            shown: &shown,
        };
        match self.listings.page(&dir, query, ctx.may_block) {
            Ok(Some((body, json))) => {
                let mut r = FileReply::new(200);
                r.content_type = Some(HeaderValue::from_static(if json {
                    "application/json"
                } else {
                    "text/html; charset=utf-8"
                }));
                r.content_length = Some(body.len() as u64);
                r.cache_control = self.cache_control.clone();
                if !head {
                    r.body = FileBody::Bytes(body);
                }
                r
            }
            Ok(None) => {
                let mut r = FileReply::new(200);
                r.deferred = true;
                r
            }
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                open_error(OpenError::Forbidden, head)
            }
            Err(_) => not_found(head),
        }
    }
}

/// How far answering may go on the calling thread.
#[derive(Clone, Copy, Debug)]
struct Ctx {
    /// Whether a slow step (reading a directory) may run here.
    may_block: bool,
    /// Only whether the resource exists matters (OPTIONS): no listing is built.
    probe: bool,
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
    let mut t = Text::<64>::new();
    std::fmt::Write::write_fmt(&mut t, args).ok()?;
    HeaderValue::from_bytes(t.as_bytes()).ok()
}

#[cfg(test)]
mod tests;
