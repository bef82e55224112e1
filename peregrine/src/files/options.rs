//! The options of [`ServeDir`] beyond files and listings: header fields, CORS, Basic
//! authentication, the single-page-app fallback, a custom 404 page, compression.

use std::io;
use std::path::Path;
use std::sync::Arc;

use http::{HeaderName, HeaderValue};

use super::fallback::NotFoundPage;
use super::{BasicAuth, Compression, Cors, ServeDir, compress};

impl ServeDir {
    /// Adds a header field to every answer (files, listings, redirects, errors), after the
    /// fields the answer has of its own. Call once per field.
    ///
    /// # Examples
    /// ```
    /// use http::{HeaderName, HeaderValue};
    /// use peregrine::{Method, files::{FileRequest, ServeDir}};
    /// let files = ServeDir::new(std::env::temp_dir())?.header(
    ///     HeaderName::from_static("x-content-type-options"),
    ///     HeaderValue::from_static("nosniff"),
    /// );
    /// let reply = files.respond(&FileRequest::new(Method::Get, b"/no-such-file"));
    /// assert_eq!(reply.header("x-content-type-options").unwrap(), "nosniff");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> ServeDir {
        let mut all: Vec<_> = self.headers.as_deref().unwrap_or_default().to_vec();
        all.push((name, value));
        self.headers = Some(all.into());
        self
    }

    /// Answers cross-origin requests as `cors` says (see [`Cors`]; default: no CORS fields).
    pub fn cors(mut self, cors: Cors) -> ServeDir {
        self.cors = Some(Arc::new(cors));
        self
    }

    /// Requires HTTP Basic credentials on every request but CORS preflights (see
    /// [`BasicAuth`]; default: none).
    pub fn basic_auth(mut self, auth: BasicAuth) -> ServeDir {
        self.auth = Some(Arc::new(auth));
        self
    }

    /// Single-page-application fallback (default off): a GET or HEAD for a path that does
    /// not exist, from a client whose `Accept` lists `text/html` (a browser navigating), gets
    /// the root's `index.html` with 200 so a client-side router can take over. Requests for
    /// assets (scripts, images and `fetch()` send other `Accept` values) still get 404.
    ///
    /// # Examples
    /// ```
    /// use peregrine::{Method, files::{FileRequest, ServeDir}};
    /// let dir = std::env::temp_dir().join(format!("peregrine-spa-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// std::fs::write(dir.join("index.html"), "<div id=app>")?;
    /// let files = ServeDir::new(&dir)?.spa(true);
    /// let page = FileRequest {
    ///     accept: Some(b"text/html,application/xhtml+xml,*/*;q=0.8"),
    ///     ..FileRequest::new(Method::Get, b"/users/7")
    /// };
    /// assert_eq!(files.respond(&page).status(), 200);
    /// assert_eq!(files.respond(&FileRequest::new(Method::Get, b"/app.js")).status(), 404);
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn spa(mut self, on: bool) -> ServeDir {
        self.spa = on;
        self
    }

    /// Answers 404 with the contents of `file` (read now, and kept; its type from its name)
    /// instead of a short text.
    ///
    /// # Errors
    /// The error of reading `file`.
    pub fn not_found_page(mut self, file: impl AsRef<Path>) -> io::Result<ServeDir> {
        self.not_found_page = Some(Arc::new(NotFoundPage::read(file.as_ref())?));
        Ok(self)
    }

    /// Compresses compressible files on the fly as `settings` say (see [`Compression`];
    /// default off: only precompressed siblings).
    pub fn compression(mut self, settings: Compression) -> ServeDir {
        self.compress = settings.is_on().then(|| compress::Compressor::new(settings));
        self
    }
}
