//! TEMPORARY: stands in for `http1::encode`, `http1::chunked` (encoder) and `date` until the
//! framing branch lands; deleted when the server switches to them. Not for merging.

use http::StatusCode;

use crate::response::HeaderList;

/// How the response body is framed on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    /// No body and no framing header (1xx, 204, or 304).
    None,
    /// `Content-Length: n`.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Neither: the body ends when the connection closes.
    Close,
}

/// The `Connection` header to send, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ConnectionHeader {
    None,
    Close,
    KeepAlive,
}

pub(crate) fn encode_head(
    out: &mut Vec<u8>,
    status: StatusCode,
    headers: &HeaderList,
    framing: Framing,
    connection: ConnectionHeader,
) {
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(status.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(status.canonical_reason().unwrap_or("").as_bytes());
    out.extend_from_slice(b"\r\n");
    for (name, value) in headers.iter() {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"Date: Thu, 01 Jan 1970 00:00:00 GMT\r\n");
    match framing {
        Framing::Length(n) => {
            out.extend_from_slice(b"Content-Length: ");
            out.extend_from_slice(n.to_string().as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        Framing::Chunked => out.extend_from_slice(b"Transfer-Encoding: chunked\r\n"),
        Framing::None | Framing::Close => {}
    }
    match connection {
        ConnectionHeader::Close => out.extend_from_slice(b"Connection: close\r\n"),
        ConnectionHeader::KeepAlive => out.extend_from_slice(b"Connection: keep-alive\r\n"),
        ConnectionHeader::None => {}
    }
    out.extend_from_slice(b"\r\n");
}

pub(crate) fn encode_chunk(out: &mut Vec<u8>, data: &[u8]) {
    out.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

pub(crate) fn encode_last_chunk(out: &mut Vec<u8>) {
    out.extend_from_slice(b"0\r\n\r\n");
}

/// Stand-in for the parse branch's `http1::HeadScanner` (same signature, no pre-scan).
#[derive(Debug, Default)]
pub(crate) struct HeadScanner;

impl HeadScanner {
    pub(crate) fn new() -> Self {
        HeadScanner
    }

    pub(crate) fn parse<'b, 'h>(
        &mut self,
        buf: &'b [u8],
        headers: &'h mut [crate::http1::Header<'b>],
        limits: &crate::http1::Limits,
    ) -> Result<crate::http1::Status<crate::http1::RequestHead<'b, 'h>>, crate::http1::ParseError>
    {
        crate::http1::parse_request(buf, headers, limits)
    }
}
