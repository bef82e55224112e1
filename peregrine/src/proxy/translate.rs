//! What an HTTP/1.1 upstream cannot be sent safely, whatever the client's protocol: the proxy
//! forwards nothing that peregrine itself would refuse, and a request that came over HTTP/2
//! (where a field value is a length-prefixed string) is checked again for the bytes that would
//! end or split an HTTP/1.1 line (RFC 9113 §8.2.1, §8.3.1), before a byte of it is written.
//!
//! The server's own checks already refuse these (HPACK's decoder refuses CR, LF and NUL in
//! values; `http2::conn` refuses a `:path` not in origin form and a content-length that
//! disagrees with the DATA): this is the second line, at the point where HTTP/2's framing
//! becomes HTTP/1.1's, so a future path around the first cannot smuggle a request. A
//! content-length that disagrees with the DATA as it is streamed ends the upstream
//! connection before its message is complete (`send_data` refuses the excess, the end refuses
//! a short body), so the backend never sees a whole request built from it.

use crate::Method;
use crate::request::Request;

/// Why a request is not forwarded; each is answered with its status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A field name or value that HTTP/1.1 cannot carry (CR, LF, NUL; a name that is not a
    /// token): 400.
    Field,
    /// A target that is not in origin form (`/path?query`), nor `*` for OPTIONS: 400.
    Target,
    /// CONNECT (a tunnel, not a request this proxy forwards): 405.
    Connect,
}

impl Refusal {
    /// The status answered.
    pub(crate) fn status(self) -> http::StatusCode {
        match self {
            Refusal::Field | Refusal::Target => http::StatusCode::BAD_REQUEST,
            Refusal::Connect => http::StatusCode::METHOD_NOT_ALLOWED,
        }
    }

    /// Why, in a few words (the response body and the log).
    pub(crate) fn reason(self) -> &'static str {
        match self {
            Refusal::Field => "a header field HTTP/1.1 cannot carry",
            Refusal::Target => "a request-target not in origin form",
            Refusal::Connect => "CONNECT is not forwarded",
        }
    }
}

/// Checks that `target` and the fields of `req` can be written as an HTTP/1.1 request.
///
/// RFC 9113 §8.2.1: "A field value MUST NOT contain the zero value (ASCII NUL, 0x00), line
/// feed (ASCII LF, 0x0a), or carriage return (ASCII CR, 0x0d) at any position"; §8.3.1:
/// `:path` "MUST NOT be empty" and is origin-form or `*` for OPTIONS; RFC 9112 §3.2: the same
/// forms on the HTTP/1.1 side.
pub(crate) fn check(req: &Request, target: &str) -> Result<(), Refusal> {
    if req.method() == Method::Connect && req.protocol().is_none() {
        return Err(Refusal::Connect);
    }
    check_target(req.method(), target)?;
    if req.version() == crate::Version::Http2 {
        // HTTP/1.1 requests were parsed by the rules that refuse these bytes already.
        for (name, value) in req.headers().iter() {
            check_field(name, value)?;
        }
    }
    Ok(())
}

/// The target's form (RFC 9112 §3.2.1, §3.2.4) and bytes (RFC 3986, as the parser checks).
pub(crate) fn check_target(method: Method, target: &str) -> Result<(), Refusal> {
    let origin_form = target.starts_with('/');
    let asterisk = target == "*" && method == Method::Options;
    if !(origin_form || asterisk) {
        return Err(Refusal::Target);
    }
    if !crate::http1::field_syntax::is_target(target.as_bytes()) {
        return Err(Refusal::Target);
    }
    Ok(())
}

/// A field's name is a token (RFC 9110 §5.1) and its value holds no CR, LF, NUL or other
/// control byte but HTAB (RFC 9110 §5.5).
pub(crate) fn check_field(name: &str, value: &[u8]) -> Result<(), Refusal> {
    let name_ok = !name.is_empty() && name.bytes().all(crate::http1::field_syntax::is_tchar);
    if !name_ok || crate::http1::field_syntax::has_value_ctl(value) {
        return Err(Refusal::Field);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 9113 §8.2.1 and RFC 9110 §5.5: the bytes that would split an HTTP/1.1 line.
    #[test]
    fn field_values_http1_cannot_carry() {
        struct Case {
            name: &'static str,
            value: &'static [u8],
            ok: bool,
        }
        let cases = [
            Case { name: "x-a", value: b"plain value", ok: true },
            Case { name: "x-a", value: b"tab\there", ok: true },
            Case { name: "x-a", value: b"obs-text \xff", ok: true },
            Case { name: "x-a", value: b"a\r\nx-injected: 1", ok: false },
            Case { name: "x-a", value: b"a\rb", ok: false },
            Case { name: "x-a", value: b"a\nb", ok: false },
            Case { name: "x-a", value: b"a\0b", ok: false },
            Case { name: "x-a", value: b"a\x7fb", ok: false },
            Case { name: "x a", value: b"v", ok: false },
            Case { name: "x:a", value: b"v", ok: false },
            Case { name: "", value: b"v", ok: false },
        ];
        for case in cases {
            assert_eq!(check_field(case.name, case.value).is_ok(), case.ok, "{:?}", case.value);
        }
    }

    /// RFC 9113 §8.3.1 and RFC 9112 §3.2: origin form, or `*` for OPTIONS only.
    #[test]
    fn targets_in_origin_form() {
        struct Case {
            method: Method,
            target: &'static str,
            ok: bool,
        }
        let cases = [
            Case { method: Method::Get, target: "/", ok: true },
            Case { method: Method::Get, target: "/a/b?c=d&e", ok: true },
            Case { method: Method::Options, target: "*", ok: true },
            Case { method: Method::Get, target: "*", ok: false },
            Case { method: Method::Get, target: "", ok: false },
            Case { method: Method::Get, target: "http://h/", ok: false },
            Case { method: Method::Get, target: "/a b", ok: false },
            Case { method: Method::Get, target: "/a\r\nHost: x", ok: false },
            Case { method: Method::Get, target: "/a#frag", ok: false },
        ];
        for case in cases {
            assert_eq!(check_target(case.method, case.target).is_ok(), case.ok, "{}", case.target);
        }
    }
}
