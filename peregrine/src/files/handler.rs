//! [`ServeDir`] as a server [`Handler`]: a request in, a streamed [`Response`] out.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::StatusCode;

use super::{FileBody, FileReply, FileRequest, ServeDir};
use crate::{Body, Handler, IntoResponse, Request, Response};

/// The request fields the decision reads, in [`FileRequest`] order after `method` and `path`.
const FIELDS: [&str; 12] = [
    "if-match",
    "if-none-match",
    "if-modified-since",
    "if-unmodified-since",
    "range",
    "if-range",
    "accept-encoding",
    "accept",
    "authorization",
    "origin",
    "access-control-request-method",
    "access-control-request-headers",
];

/// The position of `name` in [`FIELDS`]: candidates by length first, so a request's other
/// fields cost one comparison of lengths (most names differ in length).
fn field_index(name: &str) -> Option<usize> {
    let candidates: &[usize] = match name.len() {
        5 => &[4],
        6 => &[7, 9],
        8 => &[0, 5],
        13 => &[1, 8],
        15 => &[6],
        17 => &[2],
        19 => &[3],
        29 => &[10],
        30 => &[11],
        _ => return None,
    };
    candidates.iter().copied().find(|&i| FIELDS[i].eq_ignore_ascii_case(name))
}

impl Handler for ServeDir {
    type Output = Response;
    type Future = ServeFuture;

    /// Answers for the request's path. The decision runs here, on the worker thread (its
    /// file-system calls block briefly; see the module docs), and file bodies are read chunk by
    /// chunk as the connection sends them. Reading a directory for a listing that is not
    /// cached goes to tokio's blocking pool instead, so a huge directory does not stall the
    /// worker's other connections.
    fn call(&self, req: Request) -> ServeFuture {
        let path = req.path().as_bytes();
        let reply = self.with_file_request(&req, path, |fr| self.respond_on_worker(fr));
        if !reply.deferred {
            return ServeFuture(Inner::Ready(Some(reply.into_response())));
        }
        self.off_the_worker(req)
    }
}

impl ServeDir {
    /// Answers `req` on tokio's blocking pool (or here, without a runtime to hand it to).
    #[cold]
    fn off_the_worker(&self, req: Request) -> ServeFuture {
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                let files = self.clone();
                ServeFuture(Inner::Blocking(rt.spawn_blocking(move || files.serve(&req))))
            }
            Err(_) => ServeFuture(Inner::Ready(Some(self.serve(&req)))),
        }
    }
}

/// The future of [`ServeDir`]'s [`Handler::call`]: ready at once, or waiting for a directory
/// to be read on the blocking pool.
#[derive(Debug)]
pub struct ServeFuture(Inner);

// The large variant is the usual one (as `Ready<Response>` was); boxing it would allocate on
// every request to spare the rare listing build a few hundred bytes.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Inner {
    Ready(Option<Response>),
    Blocking(tokio::task::JoinHandle<Response>),
}

impl Future for ServeFuture {
    type Output = Response;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Response> {
        match &mut self.0 {
            Inner::Ready(r) => Poll::Ready(r.take().unwrap_or_else(|| {
                Response::with_status(StatusCode::INTERNAL_SERVER_ERROR, Body::empty())
            })),
            Inner::Blocking(task) => Pin::new(task).poll(cx).map(|done| {
                done.unwrap_or_else(|_| {
                    Response::with_status(StatusCode::INTERNAL_SERVER_ERROR, Body::empty())
                })
            }),
        }
    }
}

impl ServeDir {
    /// Answers a server request for the path of its target.
    ///
    /// # Examples
    /// ```no_run
    /// use peregrine::{Server, files::ServeDir};
    /// let files = ServeDir::new("./public")?;
    /// Server::bind("127.0.0.1:8080").run(files)
    /// # ; Ok::<(), std::io::Error>(())
    /// ```
    pub fn serve(&self, req: &Request) -> Response {
        self.serve_path(req, req.path().as_bytes())
    }

    /// Answers for `path` (percent-encoded, relative to the root) with the method and header
    /// fields of `req`: for a mount under a prefix, e.g. a route capturing the rest of the path.
    ///
    /// # Examples
    /// ```
    /// use peregrine::{Request, files::ServeDir};
    /// let files = ServeDir::new(std::env::temp_dir())?;
    /// let static_files = move |req: Request| {
    ///     let rest = req.path().strip_prefix("/static").unwrap_or("").to_owned();
    ///     std::future::ready(files.serve_path(&req, rest.as_bytes()))
    /// };
    /// # fn is_handler<H: peregrine::Handler>(_: &H) {}
    /// # is_handler(&static_files);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn serve_path(&self, req: &Request, path: &[u8]) -> Response {
        self.with_file_request(req, path, |fr| self.respond(fr)).into_response()
    }

    /// Calls `f` with the [`FileRequest`] for `path` and the fields of `req`.
    fn with_file_request<R>(
        &self,
        req: &Request,
        path: &[u8],
        f: impl FnOnce(&FileRequest<'_>) -> R,
    ) -> R {
        // One pass over the fields. RFC 9110 §5.3: a field sent on several lines is one
        // comma-separated list; join such values (rare, so the allocation is too).
        let mut first: [Option<&[u8]>; FIELDS.len()] = [None; FIELDS.len()];
        // Fields sent on several lines, joined (rare: empty, so nothing to allocate or drop).
        let mut joined: Vec<(usize, Vec<u8>)> = Vec::new();
        for (name, value) in req.headers().iter() {
            let Some(i) = field_index(name) else {
                continue;
            };
            match (first[i], joined.iter_mut().find(|(j, _)| *j == i)) {
                (None, _) => first[i] = Some(value),
                (Some(v), None) => joined.push((i, [v, &b", "[..], value].concat())),
                (Some(_), Some((_, j))) => {
                    j.extend_from_slice(b", ");
                    j.extend_from_slice(value);
                }
            }
        }
        let field = |i: usize| {
            if joined.is_empty() {
                return first[i];
            }
            joined.iter().find(|(j, _)| *j == i).map(|(_, v)| v.as_slice()).or(first[i])
        };
        let file_req = FileRequest {
            method: req.method(),
            path,
            if_match: field(0),
            if_none_match: field(1),
            if_modified_since: field(2),
            if_unmodified_since: field(3),
            range: field(4),
            if_range: field(5),
            accept_encoding: field(6),
            accept: field(7),
            authorization: field(8),
            origin: field(9),
            access_control_request_method: field(10),
            access_control_request_headers: field(11),
            query: Some(req.query().unwrap_or_default().as_bytes()),
        };
        f(&file_req)
    }
}

impl IntoResponse for FileReply {
    /// Headers as decided; the body framed with `Content-Length` (for HEAD the length alone,
    /// RFC 9110 §9.3.2) and, for a file, sent by the server with `sendfile(2)` on Linux or in
    /// 64 KiB chunks elsewhere: never read whole into memory.
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let len = self.content_length();
        let mut res = Response::with_status(status, Body::empty());
        self.for_each_header(|name, value| res.headers_mut().append(name, value.clone()));
        *res.body_mut() = match self.into_body() {
            FileBody::Bytes(b) => Body::from(b),
            // Sent with sendfile(2) on Linux, in 64 KiB chunks elsewhere.
            FileBody::File(span) => Body::from(span),
            // HEAD and 304: the length a 200 would have, and nothing to send (the server never
            // polls the body of either).
            FileBody::Empty => match len {
                Some(n) if n > 0 => Body::from_poll_fn_sized(n, |_cx| Poll::Ready(None)),
                _ => Body::empty(),
            },
        };
        res
    }
}

impl From<FileReply> for Response {
    fn from(reply: FileReply) -> Response {
        reply.into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Method;

    #[test]
    fn every_field_is_found_by_its_length() {
        for (i, f) in FIELDS.iter().enumerate() {
            assert_eq!(field_index(f), Some(i), "{f}");
            assert_eq!(field_index(&f.to_ascii_uppercase()), Some(i), "{f}");
        }
        for other in ["host", "user-agent", "x-if-match", "cookie", "content-length", ""] {
            assert_eq!(field_index(other), None, "{other}");
        }
    }

    #[test]
    fn repeated_fields_are_joined_rfc9110_5_3() {
        let dir =
            std::env::temp_dir().join(format!("peregrine-files-handler-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.txt"), b"abc").unwrap();
        let files = ServeDir::new(&dir).unwrap();
        let etag = files.respond(&FileRequest::new(Method::Get, b"/a.txt")).header("etag").unwrap();
        struct Case {
            fields: Vec<(&'static str, Vec<u8>)>,
            expect: StatusCode,
        }
        let cases = [
            Case { fields: vec![], expect: StatusCode::OK },
            // The matching tag is on the second line of If-None-Match.
            Case {
                fields: vec![
                    ("If-None-Match", b"\"x\"".to_vec()),
                    ("if-none-match", etag.as_bytes().to_vec()),
                ],
                expect: StatusCode::NOT_MODIFIED,
            },
            Case {
                fields: vec![
                    ("Range", b"bytes=0-0".to_vec()),
                    ("If-Match", etag.as_bytes().to_vec()),
                ],
                expect: StatusCode::PARTIAL_CONTENT,
            },
            // Two Range lines make an invalid range set: ignored (RFC 9110 §14.2).
            Case {
                fields: vec![("Range", b"bytes=0-0".to_vec()), ("Range", b"bytes=1-1".to_vec())],
                expect: StatusCode::OK,
            },
        ];
        for c in cases {
            let mut builder = http::Request::builder().uri("/a.txt");
            for (n, v) in &c.fields {
                builder = builder.header(*n, v.as_slice());
            }
            let req: Request = builder.body(()).unwrap().into();
            assert_eq!(files.serve(&req).status(), c.expect, "{:?}", c.fields);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
