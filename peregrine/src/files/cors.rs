//! Cross-origin requests (the Fetch standard's CORS protocol) for [`ServeDir`](super::ServeDir).

use std::time::Duration;

use http::{HeaderName, HeaderValue, header};

use crate::http1::field_syntax::{is_token, trim_ows};

/// Which origins may read the files from scripts, and how long a preflight answer lasts.
///
/// A CORS request (one with `Origin`) from an allowed origin gets
/// `Access-Control-Allow-Origin`: `*` when any origin is allowed, else the request's origin
/// with `Vary: Origin` (the answer then depends on it, so caches must key on it). A preflight
/// (`OPTIONS` with `Access-Control-Request-Method`) is answered `204` with the methods served
/// (`GET, HEAD, OPTIONS`), the request headers the browser asked for, and
/// `Access-Control-Max-Age`; it needs no credentials (Fetch §4.8 sends preflights without
/// them), so it is answered before any [`BasicAuth`](super::BasicAuth) check.
///
/// # Examples
/// ```
/// use peregrine::Method;
/// use peregrine::files::{Cors, FileRequest, ServeDir};
/// let files = ServeDir::new(std::env::temp_dir())?
///     .cors(Cors::origins(["https://app.example"]));
/// let preflight = FileRequest {
///     origin: Some(b"https://app.example"),
///     access_control_request_method: Some(b"GET"),
///     access_control_request_headers: Some(b"range"),
///     ..FileRequest::new(Method::Options, b"/")
/// };
/// let reply = files.respond(&preflight);
/// assert_eq!(reply.status(), 204);
/// assert_eq!(reply.header("access-control-allow-origin").unwrap(), "https://app.example");
/// assert_eq!(reply.header("access-control-allow-headers").unwrap(), "range");
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Cors {
    /// `None`: any origin (`*`).
    origins: Option<Vec<Box<[u8]>>>,
    max_age: HeaderValue,
}

/// Chromium caps `Access-Control-Max-Age` at two hours; a longer value buys nothing there.
const DEFAULT_MAX_AGE: Duration = Duration::from_secs(7200);

/// Response fields a script may read besides the CORS-safelisted ones (Fetch §3.2.3): what a
/// client of a file server uses for caching, ranges and decoding.
const EXPOSE: HeaderValue =
    HeaderValue::from_static("etag, content-range, accept-ranges, content-encoding");

impl Cors {
    /// Any origin may read (`Access-Control-Allow-Origin: *`).
    pub fn any() -> Cors {
        Cors { origins: None, max_age: max_age_value(DEFAULT_MAX_AGE) }
    }

    /// Only these origins (`scheme://host[:port]`, compared exactly, as the Fetch standard
    /// serializes them, e.g. `https://app.example`).
    pub fn origins<I, S>(origins: I) -> Cors
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let list = origins.into_iter().map(|o| o.as_ref().as_bytes().into()).collect();
        Cors { origins: Some(list), max_age: max_age_value(DEFAULT_MAX_AGE) }
    }

    /// How long a browser may reuse a preflight answer (default 2 hours).
    pub fn max_age(mut self, age: Duration) -> Cors {
        self.max_age = max_age_value(age);
        self
    }

    /// The `Access-Control-Allow-Origin` value for a request from `origin`, if it is allowed.
    fn allow_origin(&self, origin: Option<&[u8]>) -> Option<HeaderValue> {
        match &self.origins {
            None => Some(HeaderValue::from_static("*")),
            Some(list) => {
                let origin = origin?;
                list.iter()
                    .any(|o| **o == *origin)
                    .then(|| HeaderValue::from_bytes(origin).ok())
                    .flatten()
            }
        }
    }

    /// Whether the answer depends on `Origin` (a list of origins: `Vary: Origin`).
    pub(crate) fn varies(&self) -> bool {
        self.origins.is_some()
    }

    /// The fields of an actual (non-preflight) answer.
    pub(crate) fn simple(&self, origin: Option<&[u8]>, out: &mut Vec<(HeaderName, HeaderValue)>) {
        // Fetch §3.2.5: only a request with `Origin` is a CORS request; with `*` the field is
        // the same for every request, so it is sent regardless (cheap, and caches stay right).
        if origin.is_none() && self.origins.is_some() {
            return;
        }
        if let Some(allow) = self.allow_origin(origin) {
            out.push((header::ACCESS_CONTROL_ALLOW_ORIGIN, allow));
            out.push((header::ACCESS_CONTROL_EXPOSE_HEADERS, EXPOSE));
        }
    }

    /// The fields of a preflight answer (Fetch §3.2.3, §4.8), or `None` when the origin is not
    /// allowed (the answer is then a plain `OPTIONS` answer and the browser fails the
    /// preflight).
    pub(crate) fn preflight(
        &self,
        origin: Option<&[u8]>,
        request_headers: Option<&[u8]>,
    ) -> Option<Vec<(HeaderName, HeaderValue)>> {
        let allow = self.allow_origin(origin)?;
        let mut out = vec![
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, allow),
            (header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, HEAD, OPTIONS")),
            (header::ACCESS_CONTROL_MAX_AGE, self.max_age.clone()),
        ];
        // Fetch §4.8 step 7: the browser checks every name it asked for against
        // Access-Control-Allow-Headers. A file server reads no header that could do harm, so
        // the names asked for are allowed, once checked to be a list of tokens.
        if let Some(names) = request_headers.filter(|v| is_token_list(v)) {
            if let Ok(v) = HeaderValue::from_bytes(trim_ows(names)) {
                out.push((header::ACCESS_CONTROL_ALLOW_HEADERS, v));
            }
        }
        Some(out)
    }
}

fn max_age_value(age: Duration) -> HeaderValue {
    HeaderValue::from(age.as_secs())
}

/// `#field-name` (RFC 9110 §5.6.1): tokens separated by commas and optional whitespace.
fn is_token_list(v: &[u8]) -> bool {
    let mut any = false;
    for element in v.split(|&b| b == b',') {
        let name = trim_ows(element);
        if name.is_empty() {
            continue;
        }
        if !is_token(name) {
            return false;
        }
        any = true;
    }
    any
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_origins_fetch_3_2_5() {
        struct Case {
            cors: Cors,
            origin: Option<&'static [u8]>,
            expect: Option<&'static str>,
        }
        let list = || Cors::origins(["https://a.example", "http://b.example:8080"]);
        let cases = [
            Case { cors: Cors::any(), origin: Some(b"https://x"), expect: Some("*") },
            Case { cors: Cors::any(), origin: None, expect: Some("*") },
            Case {
                cors: list(),
                origin: Some(b"https://a.example"),
                expect: Some("https://a.example"),
            },
            Case {
                cors: list(),
                origin: Some(b"http://b.example:8080"),
                expect: Some("http://b.example:8080"),
            },
            Case { cors: list(), origin: Some(b"https://a.example.evil"), expect: None },
            Case { cors: list(), origin: Some(b"HTTPS://A.EXAMPLE"), expect: None },
            Case { cors: list(), origin: Some(b"null"), expect: None },
            Case { cors: list(), origin: None, expect: None },
        ];
        for c in cases {
            let mut out = Vec::new();
            c.cors.simple(c.origin, &mut out);
            let got = out
                .iter()
                .find(|(n, _)| n == header::ACCESS_CONTROL_ALLOW_ORIGIN)
                .map(|(_, v)| v.to_str().unwrap().to_owned());
            assert_eq!(got.as_deref(), c.expect, "{:?}", c.origin.map(String::from_utf8_lossy));
        }
    }

    #[test]
    fn preflight_allow_headers_fetch_4_8() {
        struct Case {
            input: Option<&'static [u8]>,
            expect: Option<&'static str>,
        }
        let cases = [
            Case { input: None, expect: None },
            Case { input: Some(b"range"), expect: Some("range") },
            Case { input: Some(b" range, if-none-match "), expect: Some("range, if-none-match") },
            Case { input: Some(b"x-a,,x-b"), expect: Some("x-a,,x-b") },
            Case { input: Some(b""), expect: None },
            Case { input: Some(b"bad name"), expect: None },
            Case { input: Some(b"a\"b"), expect: None },
        ];
        for c in cases {
            let out = Cors::any().preflight(Some(b"https://x"), c.input).unwrap();
            let got = out
                .iter()
                .find(|(n, _)| n == header::ACCESS_CONTROL_ALLOW_HEADERS)
                .map(|(_, v)| v.to_str().unwrap().to_owned());
            assert_eq!(got.as_deref(), c.expect, "{:?}", c.input.map(String::from_utf8_lossy));
        }
        assert!(Cors::origins(["https://a"]).preflight(Some(b"https://b"), None).is_none());
        let out = Cors::any().max_age(Duration::from_secs(60)).preflight(None, None).unwrap();
        assert!(out.contains(&(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("60"))));
    }
}
