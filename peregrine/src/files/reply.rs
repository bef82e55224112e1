//! The answer of the static-file decision: status, headers and a body source.

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderName, HeaderValue};

use super::conditional::Validators;
use super::encoding::Coding;
use crate::body::FileSpan;

/// Where the content of a [`FileReply`] comes from.
#[derive(Debug)]
pub enum FileBody {
    /// No content: HEAD, 304, 412, 416, redirects.
    Empty,
    /// Content held in memory: a directory listing or a short error message.
    Bytes(Bytes),
    /// A span of an open file, to be read in chunks with [`FileSpan::read_chunk`].
    File(FileSpan),
}

/// The decided answer to a static-file request: status, headers and body source.
///
/// Header values are [`HeaderValue`]s that a cached file shares between answers, so a cache
/// hit formats and allocates nothing for them; [`FileReply::for_each_header`] hands them to
/// whatever writes the response.
#[derive(Debug)]
pub struct FileReply {
    pub(crate) status: u16,
    pub(crate) content_type: Option<HeaderValue>,
    pub(crate) content_length: Option<u64>,
    pub(crate) validators: Option<Validators>,
    pub(crate) cache_control: Option<HeaderValue>,
    pub(crate) content_range: Option<HeaderValue>,
    pub(crate) content_encoding: Option<Coding>,
    pub(crate) vary_accept_encoding: bool,
    pub(crate) allow: bool,
    pub(crate) accept_ranges: bool,
    pub(crate) location: Option<HeaderValue>,
    /// `Vary: Origin` (CORS with a list of origins).
    pub(crate) vary_origin: bool,
    /// Fields decided per request (CORS, `WWW-Authenticate`).
    pub(crate) more: Vec<(HeaderName, HeaderValue)>,
    /// Fields configured for every answer ([`ServeDir::header`](super::ServeDir::header)).
    pub(crate) extra: Option<Arc<[(HeaderName, HeaderValue)]>>,
    /// Not an answer: a slow step is needed first (see `ServeDir::respond_on_worker`).
    pub(crate) deferred: bool,
    pub(crate) body: FileBody,
}

impl FileReply {
    pub(crate) fn new(status: u16) -> FileReply {
        FileReply {
            status,
            content_type: None,
            content_length: None,
            validators: None,
            cache_control: None,
            content_range: None,
            content_encoding: None,
            vary_accept_encoding: false,
            allow: false,
            accept_ranges: false,
            location: None,
            vary_origin: false,
            more: Vec::new(),
            extra: None,
            deferred: false,
            body: FileBody::Empty,
        }
    }

    /// A short plain-text answer (errors); for HEAD the same headers and no body.
    pub(crate) fn text(status: u16, message: &'static str, head: bool) -> FileReply {
        let mut r = FileReply::new(status);
        r.content_type = Some(HeaderValue::from_static("text/plain; charset=utf-8"));
        r.content_length = Some(message.len() as u64);
        if !head {
            r.body = FileBody::Bytes(Bytes::from_static(message.as_bytes()));
        }
        r
    }

    /// The status code.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The length of the content this answer describes, for `Content-Length`.
    ///
    /// For HEAD it is the length a GET would send (RFC 9110 §9.3.2) while the body is empty.
    /// For 304 likewise the length of the 200 (RFC 9110 §8.6: a 304 may carry Content-Length
    /// only with that value). `None` when unknown.
    pub fn content_length(&self) -> Option<u64> {
        self.content_length
    }

    /// Calls `f` with every header field of the answer, except `Content-Length` (see
    /// [`FileReply::content_length`]) and `Date` (the server's).
    pub fn for_each_header(&self, mut f: impl FnMut(HeaderName, &HeaderValue)) {
        use http::header;
        const BYTES: HeaderValue = HeaderValue::from_static("bytes");
        const ACCEPT_ENCODING: HeaderValue = HeaderValue::from_static("accept-encoding");
        const ORIGIN: HeaderValue = HeaderValue::from_static("origin");
        const BOTH: HeaderValue = HeaderValue::from_static("accept-encoding, origin");
        const ALLOWED: HeaderValue = HeaderValue::from_static("GET, HEAD, OPTIONS");
        if let Some(ct) = &self.content_type {
            f(header::CONTENT_TYPE, ct);
        }
        if let Some(v) = &self.validators {
            f(header::ETAG, &v.etag);
            if let Some(lm) = &v.last_modified_value {
                f(header::LAST_MODIFIED, lm);
            }
        }
        if let Some(cc) = &self.cache_control {
            f(header::CACHE_CONTROL, cc);
        }
        if let Some(cr) = &self.content_range {
            f(header::CONTENT_RANGE, cr);
        }
        if let Some(ce) = self.content_encoding {
            f(header::CONTENT_ENCODING, &HeaderValue::from_static(ce.as_str()));
        }
        match (self.vary_accept_encoding, self.vary_origin) {
            (true, true) => f(header::VARY, &BOTH),
            (true, false) => f(header::VARY, &ACCEPT_ENCODING),
            (false, true) => f(header::VARY, &ORIGIN),
            (false, false) => {}
        }
        if self.accept_ranges {
            f(header::ACCEPT_RANGES, &BYTES);
        }
        if self.allow {
            f(header::ALLOW, &ALLOWED);
        }
        if let Some(loc) = &self.location {
            f(header::LOCATION, loc);
        }
        for (name, value) in &self.more {
            f(name.clone(), value);
        }
        for (name, value) in self.extra.iter().flat_map(|e| e.iter()) {
            f(name.clone(), value);
        }
    }

    /// The value of one header field (name in lower case), for tests and logging.
    pub fn header(&self, name: &str) -> Option<HeaderValue> {
        let mut out = None;
        self.for_each_header(|n, v| {
            if out.is_none() && n.as_str() == name {
                out = Some(v.clone());
            }
        });
        out
    }

    /// The body source.
    pub fn body(&self) -> &FileBody {
        &self.body
    }

    /// Takes the body source out of the answer.
    pub fn into_body(self) -> FileBody {
        self.body
    }
}
