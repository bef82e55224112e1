//! The client's response path without a socket, for the fuzz target and tests: built only
//! with `--cfg fuzzing` or the `unstable` feature, and not a stable API.

use std::sync::Arc;

use bytes::BytesMut;

use super::h1::H1;
use super::h2::H2;
use super::{Event, Proto, Protocol, RequestId, decode, event, h1_config, settle};
use crate::Method;
use crate::client::error::{Error, Kind};
use crate::http1::Limits;
use crate::http1::encode::{RequestPrelude, Scheme};

/// The client's response path without a socket: bytes a server sent, through the decoding a
/// [`Connection`](super::Connection) runs, for the fuzz target.
#[derive(Debug)]
pub struct ResponseReader {
    proto: Proto,
    rbuf: BytesMut,
    consume: usize,
    eof: bool,
    /// When the last bytes were fed.
    fed_at: std::time::Instant,
    /// Bytes the client would send (discarded).
    out: Vec<u8>,
}

impl ResponseReader {
    /// A reader for a connection speaking `protocol` that sent one request with `method`.
    pub fn new(protocol: Protocol, method: &str, limits: Limits, max_body: u64) -> ResponseReader {
        let prelude = RequestPrelude::new(Scheme::Http, "example.com", 80).expect("a valid host");
        let now = std::time::Instant::now();
        let proto = match protocol {
            Protocol::Http1 => {
                let config = Arc::new(h1_config(limits, max_body, None));
                Proto::H1(H1::new(prelude, config, now))
            }
            // HTTP/3 reads QUIC streams, not one byte stream: read as HTTP/2 here.
            Protocol::Http2 | Protocol::Http3 => {
                let config = crate::http2::Config::default();
                Proto::H2(Box::new(H2::new(false, prelude.host(), config, max_body, now)))
            }
        };
        let mut reader = ResponseReader {
            proto,
            rbuf: BytesMut::new(),
            consume: 0,
            eof: false,
            fed_at: now,
            out: Vec::new(),
        };
        let _ = reader.send(method);
        reader
    }

    /// Sends another request (pipelined, or another stream).
    ///
    /// # Errors
    /// When the connection cannot take it.
    pub fn send(&mut self, method: &str) -> Result<RequestId, Error> {
        let tag = Method::from_token(method.as_bytes());
        let id = match &mut self.proto {
            Proto::H1(h) => h.send_request(tag, method, "/", &[], &[], Some(0), &mut self.out),
            Proto::H2(h) => {
                let id = h.send_request(method.as_bytes(), "/", &[], &[], Some(0));
                h.conn.poll_transmit(&mut self.out);
                id
            }
            // The reader is made for HTTP/1.1 or HTTP/2 only (`new`).
            #[cfg(feature = "http3")]
            Proto::H3(_) => Err(Error::new(Kind::Request, "the reader does not speak HTTP/3")),
        };
        self.out.clear();
        id
    }

    /// Bytes from the server.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.rbuf.extend_from_slice(bytes);
        self.fed_at = std::time::Instant::now();
    }

    /// The server closed the connection.
    pub fn finish(&mut self) {
        self.eof = true;
    }

    /// The next event, or `None` when more input is needed.
    ///
    /// # Errors
    /// The connection's errors.
    pub fn next_event(&mut self) -> Result<Option<Event<'_>>, Error> {
        settle(&mut self.proto, &mut self.rbuf, &mut self.consume);
        let (proto, rbuf) = (&mut self.proto, &mut self.rbuf);
        let ready = decode(proto, rbuf, &mut self.consume, self.eof, self.fed_at)?;
        if let Proto::H2(h) = &mut self.proto {
            h.conn.poll_transmit(&mut self.out);
            self.out.clear();
        }
        Ok(ready.map(|r| event(&self.proto, &self.rbuf, r)))
    }
}
