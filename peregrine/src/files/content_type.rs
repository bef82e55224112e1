//! `Content-Type` from the file name's extension (RFC 9110 §8.3), through `mime_guess`.

use std::borrow::Cow;
use std::path::Path;

/// The media type for a file name, with `charset=utf-8` for text types.
///
/// Unknown extensions get `application/octet-stream` (RFC 9110 §8.3: the recipient may then
/// sniff or treat the data as opaque, and with `nosniff` browsers download it). Textual types
/// (`text/*`, JavaScript, JSON, XML and the `+json`/`+xml` structured suffixes) carry
/// `charset=utf-8`, since without it browsers guess the charset of text (`text/*` defaulted to
/// ISO-8859-1 in older rules). The common types are static strings, so the usual case does not
/// allocate.
pub(crate) fn for_path(path: &Path) -> Cow<'static, str> {
    let raw = mime_guess::from_path(path).first_raw().unwrap_or("application/octet-stream");
    match raw {
        "text/html" => Cow::Borrowed("text/html; charset=utf-8"),
        "text/css" => Cow::Borrowed("text/css; charset=utf-8"),
        "text/plain" => Cow::Borrowed("text/plain; charset=utf-8"),
        "text/javascript" | "application/javascript" => {
            Cow::Borrowed("text/javascript; charset=utf-8")
        }
        "application/json" => Cow::Borrowed("application/json; charset=utf-8"),
        t if is_text(t) => Cow::Owned(format!("{t}; charset=utf-8")),
        t => Cow::Borrowed(t),
    }
}

/// [`for_path`] as a header value.
pub(crate) fn value_for_path(path: &Path) -> http::HeaderValue {
    match for_path(path) {
        Cow::Borrowed(s) => http::HeaderValue::from_static(s),
        Cow::Owned(s) => http::HeaderValue::try_from(s)
            .unwrap_or(http::HeaderValue::from_static("application/octet-stream")),
    }
}

fn is_text(t: &str) -> bool {
    t.starts_with("text/")
        || t.ends_with("+xml")
        || t.ends_with("+json")
        || matches!(t, "application/xml" | "application/x-javascript" | "application/ecmascript")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_rfc9110_8_3() {
        struct Case {
            input: &'static str,
            expect: &'static str,
        }
        let cases = [
            Case { input: "index.html", expect: "text/html; charset=utf-8" },
            Case { input: "A.HTM", expect: "text/html; charset=utf-8" },
            Case { input: "style.css", expect: "text/css; charset=utf-8" },
            Case { input: "app.js", expect: "text/javascript; charset=utf-8" },
            Case { input: "app.mjs", expect: "text/javascript; charset=utf-8" },
            Case { input: "data.json", expect: "application/json; charset=utf-8" },
            Case { input: "notes.md", expect: "text/markdown; charset=utf-8" },
            Case { input: "logo.svg", expect: "image/svg+xml; charset=utf-8" },
            Case { input: "a.txt", expect: "text/plain; charset=utf-8" },
            Case { input: "photo.png", expect: "image/png" },
            Case { input: "mod.wasm", expect: "application/wasm" },
            Case { input: "archive.gz", expect: "application/gzip" },
            Case { input: "noext", expect: "application/octet-stream" },
            Case { input: "x.unknownext", expect: "application/octet-stream" },
        ];
        for c in cases {
            assert_eq!(for_path(Path::new(c.input)), c.expect, "{}", c.input);
        }
    }
}
