//! A request on its way out through the [`Client`](super::Client): the crate's [`Request`]
//! with its absolute URL split once, its fields filtered for the protocol, and its body either
//! whole (replayable on a retry) or streamed.

use std::ops::Range;

use bytes::Bytes;

use super::error::{Error, Kind};
use super::origin::UrlParts;
use crate::body::Body;
use crate::request::Request;

/// The body to send.
pub(crate) enum OutBody {
    /// All of it, known now: sent with its length, and sent again on a retry.
    Full(Bytes),
    /// A stream, sent as it comes (no retry once it started).
    Stream(Body),
}

impl OutBody {
    /// The same body for a second attempt, when it can be sent again.
    pub(crate) fn replay(&self) -> Option<OutBody> {
        match self {
            OutBody::Full(b) => Some(OutBody::Full(b.clone())),
            OutBody::Stream(_) => None,
        }
    }
}

/// A request whose URL was checked and split.
pub(crate) struct Outgoing {
    req: Request,
    host: Range<usize>,
    target: Range<usize>,
    scheme: crate::http1::encode::Scheme,
    port: u16,
}

impl Outgoing {
    /// Splits `req`'s URL and takes its body.
    ///
    /// # Errors
    /// [`Error::is_request`] when the request's target is not an absolute `http` or `https`
    /// URL.
    pub(crate) fn new(mut req: Request) -> Result<(Outgoing, OutBody), Error> {
        let body = match req.take_body().into_full() {
            Ok(bytes) => OutBody::Full(bytes),
            Err(body) => OutBody::Stream(body),
        };
        let url = req.target();
        if url.starts_with('/') || url == "*" {
            return Err(Error::new(Kind::Request, "the request's URI has no scheme and host"));
        }
        let parts = UrlParts::parse(url)?;
        let base = url.as_ptr() as usize;
        let range = |s: &str| {
            let start = (s.as_ptr() as usize).wrapping_sub(base);
            start..start + s.len()
        };
        // "/" for a URL without a path is a constant, not a part of the URL.
        let t = parts.target.as_ptr() as usize;
        let inside = t >= base && t + parts.target.len() <= base + url.len();
        let target = if inside { range(parts.target) } else { 0..0 };
        let (host, scheme, port) = (range(parts.host), parts.scheme, parts.port);
        Ok((Outgoing { req, host, target, scheme, port }, body))
    }

    /// The URL's parts.
    pub(crate) fn parts(&self) -> UrlParts<'_> {
        let url = self.req.target();
        UrlParts {
            scheme: self.scheme,
            host: url.get(self.host.clone()).unwrap_or_default(),
            port: self.port,
            target: self.target(),
        }
    }

    /// The method's token.
    pub(crate) fn method(&self) -> &str {
        self.req.method_str()
    }

    /// Whether repeating the request is harmless (RFC 9110 §9.2.2).
    pub(crate) fn idempotent(&self) -> bool {
        self.req.method().is_idempotent()
    }

    /// Path and query.
    pub(crate) fn target(&self) -> &str {
        if self.target.is_empty() {
            return "/";
        }
        self.req.target().get(self.target.clone()).unwrap_or("/")
    }

    /// The fields to send: Host, Content-Length and Transfer-Encoding are left out (the
    /// connection writes the authority and the framing), and for HTTP/2 the
    /// connection-specific fields too (RFC 9113 §8.2.2: an intermediary "MUST remove" them,
    /// as this client does when it translates a generic request).
    pub(crate) fn fields(&self, h2: bool) -> Vec<(&str, &[u8])> {
        self.req
            .headers()
            .iter()
            .filter(|&(name, value)| {
                let is = |s: &str| name.eq_ignore_ascii_case(s);
                let framing = is("host") || is("content-length") || is("transfer-encoding");
                let hop = is("connection")
                    || is("keep-alive")
                    || is("proxy-connection")
                    || is("upgrade")
                    || (is("te") && !value.eq_ignore_ascii_case(b"trailers"));
                !(framing || (h2 && hop))
            })
            .collect()
    }
}
