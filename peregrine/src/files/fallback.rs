//! What a 404 can turn into: the single-page-application `index.html`, or a custom page.

use std::io;
use std::path::Path;

use bytes::Bytes;
use http::HeaderValue;

use super::{FileBody, FileReply, content_type};
use crate::http1::field_syntax::trim_ows;

/// Whether an `Accept` value lists `text/html` with a non-zero weight (RFC 9110 §12.5.1): a
/// browser navigating. Scripts, images and `fetch()` send `*/*` or their own types.
pub(crate) fn accepts_html(accept: Option<&[u8]>) -> bool {
    let Some(accept) = accept else { return false };
    accept.split(|&b| b == b',').any(|element| {
        let mut parts = element.split(|&b| b == b';');
        let range = trim_ows(parts.next().unwrap_or_default());
        range.eq_ignore_ascii_case(b"text/html")
            && !parts.any(|p| {
                let p = trim_ows(p);
                p.len() >= 2
                    && p[..2].eq_ignore_ascii_case(b"q=")
                    && p[2..].iter().all(|&b| b == b'0' || b == b'.')
            })
    })
}

/// A custom 404 page, read once.
#[derive(Debug)]
pub(crate) struct NotFoundPage {
    body: Bytes,
    content_type: HeaderValue,
}

impl NotFoundPage {
    pub(crate) fn read(path: &Path) -> io::Result<NotFoundPage> {
        let body = Bytes::from(std::fs::read(path)?);
        Ok(NotFoundPage { body, content_type: content_type::value_for_path(path) })
    }

    pub(crate) fn reply(&self, head: bool) -> FileReply {
        let mut r = FileReply::new(404);
        r.content_type = Some(self.content_type.clone());
        r.content_length = Some(self.body.len() as u64);
        if !head {
            r.body = FileBody::Bytes(self.body.clone());
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_lists_html_rfc9110_12_5_1() {
        struct Case {
            input: Option<&'static [u8]>,
            expect: bool,
        }
        let cases = [
            Case { input: None, expect: false },
            Case {
                input: Some(b"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
                expect: true,
            },
            Case { input: Some(b"TEXT/HTML"), expect: true },
            Case { input: Some(b"text/html;q=0.5"), expect: true },
            Case { input: Some(b"text/html;q=0"), expect: false },
            Case { input: Some(b"text/html ; q=0.000"), expect: false },
            Case { input: Some(b"*/*"), expect: false },
            Case { input: Some(b"image/avif,image/webp,*/*"), expect: false },
            Case { input: Some(b"text/html-fragment"), expect: false },
        ];
        for c in cases {
            assert_eq!(
                accepts_html(c.input),
                c.expect,
                "{:?}",
                c.input.map(String::from_utf8_lossy)
            );
        }
    }
}
