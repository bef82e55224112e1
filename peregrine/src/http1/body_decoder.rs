//! Decoding a message body from the bytes that follow its head (RFC 9112 §6.3, §7.1): by
//! Content-Length, by the chunked coding, or until the connection closes. Sans-I/O and
//! zero-copy: the decoder says where the body's data sits in the input it is given; the caller
//! owns the buffer. The server reads request bodies with it, the client response bodies.

use std::fmt;
use std::ops::Range;

use http::{HeaderMap, HeaderName, HeaderValue};

use super::chunked::{ChunkedDecoder, ChunkedError, ChunkedLimits, trailer_fields};
use super::framing::BodyLength;

/// Why a body could not be decoded. After any of them the message's end is unknown: the
/// connection must close.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BodyDecodeError {
    /// The body is longer than the limit given to the decoder (RFC 9110 §15.5.14). → 413
    TooLarge,
    /// The input ended (the connection closed) before the body did (RFC 9112 §8). → 400
    Incomplete,
    /// The chunked framing is malformed or over one of its limits.
    Chunked(ChunkedError),
}

impl BodyDecodeError {
    /// The status a server answers this error with.
    pub const fn status(self) -> u16 {
        match self {
            BodyDecodeError::TooLarge => 413,
            BodyDecodeError::Incomplete => 400,
            BodyDecodeError::Chunked(e) => e.status(),
        }
    }
}

impl fmt::Display for BodyDecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BodyDecodeError::TooLarge => f.write_str("body too large"),
            BodyDecodeError::Incomplete => {
                f.write_str("connection closed before the end of the body")
            }
            BodyDecodeError::Chunked(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for BodyDecodeError {}

/// The outcome of one [`BodyDecoder::decode`] call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BodyChunk {
    /// Bytes of the input taken (framing and data). Once `done`, the rest of the input belongs
    /// to whatever follows the body (a pipelined message).
    pub consumed: usize,
    /// Where body data sits in the input; empty when the input held none (then either the body
    /// is `done` or the whole input was framing and more input is needed).
    pub data: Range<usize>,
    /// The body is complete.
    pub done: bool,
}

#[derive(Clone, Debug)]
enum Kind {
    /// Bytes still to come.
    Length(u64),
    Chunked(ChunkedDecoder),
    /// Everything until the connection closes (responses only, RFC 9112 §6.3 rule 8).
    Close,
    Done,
}

/// An incremental decoder for one message body, with a size limit and the trailer fields of a
/// chunked body.
///
/// Feed it the bytes after the head, as they arrive; each call returns at most one span of
/// data (zero-copy: a range of its input), skipping framing. Input split at any byte decodes as
/// the whole input does.
///
/// # Examples
/// ```
/// use peregrine::http1::body_decoder::BodyDecoder;
/// use peregrine::http1::framing::BodyLength;
/// let mut dec = BodyDecoder::new(BodyLength::Chunked, 1024);
/// let mut input: &[u8] = b"5\r\nhello\r\n0\r\nX-Sum: 5\r\n\r\nGET /next";
/// let mut body = Vec::new();
/// while !dec.is_done() {
///     let out = dec.decode(input)?;
///     body.extend_from_slice(&input[out.data.clone()]);
///     input = &input[out.consumed..];
/// }
/// assert_eq!(body, b"hello");
/// assert_eq!(input, b"GET /next");
/// assert_eq!(dec.take_trailers().unwrap()["x-sum"], "5");
/// # Ok::<(), peregrine::http1::body_decoder::BodyDecodeError>(())
/// ```
#[derive(Clone, Debug)]
pub struct BodyDecoder {
    kind: Kind,
    received: u64,
    max: u64,
    /// Trailer field lines of a chunked body read so far (no capacity unless the body has
    /// trailers; bounded by the chunked decoder's trailer limit).
    trailer_bytes: Vec<u8>,
}

impl BodyDecoder {
    /// A decoder for a body delimited as `length`, refusing more than `max_bytes` of data.
    pub fn new(length: BodyLength, max_bytes: u64) -> BodyDecoder {
        BodyDecoder::with_chunked_limits(length, max_bytes, ChunkedLimits::default())
    }

    /// [`BodyDecoder::new`] with limits for the chunked coding's extensions and trailers.
    pub fn with_chunked_limits(
        length: BodyLength,
        max_bytes: u64,
        limits: ChunkedLimits,
    ) -> BodyDecoder {
        let kind = match length {
            BodyLength::Length(0) => Kind::Done,
            BodyLength::Length(n) => Kind::Length(n),
            BodyLength::Chunked => Kind::Chunked(ChunkedDecoder::with_limits(limits)),
            BodyLength::CloseDelimited => Kind::Close,
        };
        BodyDecoder { kind, received: 0, max: max_bytes, trailer_bytes: Vec::new() }
    }

    /// Whether the body is complete.
    pub fn is_done(&self) -> bool {
        matches!(self.kind, Kind::Done)
    }

    /// Data bytes still to come, when known: a Content-Length body's rest, 0 once done.
    pub fn remaining(&self) -> Option<u64> {
        match &self.kind {
            Kind::Length(n) => Some(*n),
            Kind::Done => Some(0),
            Kind::Chunked(_) | Kind::Close => None,
        }
    }

    /// Data bytes decoded so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Decodes from `input`, the bytes after what earlier calls consumed.
    ///
    /// Returns the first span of data found (framing before it consumed), or, when `input`
    /// holds only framing, consumes all of it with an empty span. Once the body is done every
    /// call consumes nothing.
    ///
    /// # Errors
    /// [`BodyDecodeError::TooLarge`] when the data passes the limit; the chunked coding's
    /// errors. Every later call returns the error again only for the chunked coding: after an
    /// error the caller must stop using the body.
    pub fn decode(&mut self, input: &[u8]) -> Result<BodyChunk, BodyDecodeError> {
        let chunk = match &mut self.kind {
            Kind::Done => BodyChunk { consumed: 0, data: 0..0, done: true },
            Kind::Length(left) => {
                let n = (*left).min(input.len() as u64);
                *left -= n;
                let done = *left == 0;
                if done {
                    self.kind = Kind::Done;
                }
                // `n` is at most `input.len()`.
                BodyChunk { consumed: n as usize, data: 0..n as usize, done }
            }
            Kind::Close => BodyChunk { consumed: input.len(), data: 0..input.len(), done: false },
            Kind::Chunked(decoder) => {
                let mut at = 0;
                loop {
                    let out = decoder.decode(&input[at..]).map_err(BodyDecodeError::Chunked)?;
                    if !out.trailers.is_empty() {
                        let t = at + out.trailers.start..at + out.trailers.end;
                        self.trailer_bytes.extend_from_slice(&input[t]);
                    }
                    let data = at + out.data.start..at + out.data.end;
                    at += out.consumed;
                    // Framing only (a size line, a CRLF, trailer lines): go on while input
                    // remains. The decoder takes at least one byte of non-empty input.
                    if data.is_empty() && !out.done && at < input.len() && out.consumed > 0 {
                        continue;
                    }
                    break BodyChunk { consumed: at, data, done: out.done };
                }
            }
        };
        if chunk.done {
            self.kind = Kind::Done;
        }
        self.received += chunk.data.len() as u64;
        if self.received > self.max {
            self.kind = Kind::Done;
            return Err(BodyDecodeError::TooLarge);
        }
        Ok(chunk)
    }

    /// The input ended (the peer closed the connection). Completes a close-delimited body.
    ///
    /// # Errors
    /// [`BodyDecodeError::Incomplete`] for a body that was not done.
    pub fn finish(&mut self) -> Result<(), BodyDecodeError> {
        match self.kind {
            Kind::Done => Ok(()),
            Kind::Close => {
                self.kind = Kind::Done;
                Ok(())
            }
            _ => Err(BodyDecodeError::Incomplete),
        }
    }

    /// The trailer fields of a chunked body, once it is done (RFC 9112 §7.1.2); taken, so a
    /// second call gets `None`. `None` too for a body without trailers.
    ///
    /// Trailer fields stay apart from the header section: a recipient must not merge them into
    /// it unless the field is defined as mergeable (RFC 9110 §6.5.1).
    ///
    /// Inlined, its parsing not: at the end of each body the caller then sees a `None` as one
    /// (the usual answer) rather than moving a whole map's worth of bytes through its event.
    #[inline]
    pub fn take_trailers(&mut self) -> Option<HeaderMap> {
        if !self.is_done() || self.trailer_bytes.is_empty() {
            return None;
        }
        Some(self.trailer_map())
    }

    /// The trailer fields kept, parsed into a map.
    #[cold]
    fn trailer_map(&mut self) -> HeaderMap {
        let bytes = std::mem::take(&mut self.trailer_bytes);
        let mut map = HeaderMap::new();
        for (name, value) in trailer_fields(&bytes) {
            // Both were checked with the header rules (token name, no CTL in the value), which
            // is what these constructors check too.
            if let (Ok(name), Ok(value)) =
                (HeaderName::from_bytes(name), HeaderValue::from_bytes(value))
            {
                map.append(name, value);
            }
        }
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes `input` delivered in pieces of `step` bytes (the unconsumed rest of a piece is
    /// kept, as a connection's buffer keeps it); returns the body, the bytes after it, whether
    /// it finished, or the error.
    fn run(
        length: BodyLength,
        max: u64,
        input: &[u8],
        step: usize,
    ) -> Result<Out, BodyDecodeError> {
        let mut dec = BodyDecoder::new(length, max);
        let (mut body, mut buf, mut fed) = (Vec::new(), Vec::new(), 0);
        loop {
            // Decode what the buffer holds, then deliver the next piece.
            while !dec.is_done() {
                let out = dec.decode(&buf)?;
                body.extend_from_slice(&buf[out.data.clone()]);
                buf.drain(..out.consumed);
                if out.consumed == 0 {
                    break;
                }
            }
            if dec.is_done() || fed == input.len() {
                break;
            }
            let end = fed.saturating_add(step).min(input.len());
            buf.extend_from_slice(&input[fed..end]);
            fed = end;
        }
        buf.extend_from_slice(&input[fed..]);
        let done = dec.is_done();
        Ok(Out { body, rest: buf, done, trailers: dec.take_trailers().map(|t| t.len()) })
    }

    #[derive(Debug, PartialEq)]
    struct Out {
        body: Vec<u8>,
        rest: Vec<u8>,
        done: bool,
        trailers: Option<usize>,
    }

    struct Case {
        name: &'static str,
        length: BodyLength,
        max: u64,
        input: &'static [u8],
        expect: Result<(&'static [u8], &'static [u8], bool), BodyDecodeError>,
    }

    #[test]
    fn decodes_every_framing_at_every_split() {
        let cases = [
            Case {
                name: "length",
                length: BodyLength::Length(5),
                max: 10,
                input: b"helloGET",
                expect: Ok((b"hello", b"GET", true)),
            },
            Case {
                name: "length, short input",
                length: BodyLength::Length(8),
                max: 10,
                input: b"hello",
                expect: Ok((b"hello", b"", false)),
            },
            Case {
                name: "length over the limit",
                length: BodyLength::Length(20),
                max: 4,
                input: b"hello",
                expect: Err(BodyDecodeError::TooLarge),
            },
            Case {
                name: "zero length",
                length: BodyLength::Length(0),
                max: 0,
                input: b"GET",
                expect: Ok((b"", b"GET", true)),
            },
            Case {
                name: "chunked",
                length: BodyLength::Chunked,
                max: 100,
                input: b"3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\nNEXT",
                expect: Ok((b"abcde", b"NEXT", true)),
            },
            Case {
                name: "chunked over the limit",
                length: BodyLength::Chunked,
                max: 4,
                input: b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
                expect: Err(BodyDecodeError::TooLarge),
            },
            Case {
                name: "chunked, bad size",
                length: BodyLength::Chunked,
                max: 100,
                input: b"3\r\nabc\r\nzz\r\n",
                expect: Err(BodyDecodeError::Chunked(ChunkedError::InvalidChunkSize)),
            },
            Case {
                name: "chunked, data longer than its size",
                length: BodyLength::Chunked,
                max: 100,
                input: b"3\r\nabcd\r\n0\r\n\r\n",
                expect: Err(BodyDecodeError::Chunked(ChunkedError::MissingCrlfAfterData)),
            },
            Case {
                name: "close-delimited",
                length: BodyLength::CloseDelimited,
                max: 100,
                input: b"all of it",
                expect: Ok((b"all of it", b"", false)),
            },
        ];
        for case in cases {
            for step in [1, 2, 3, 7, usize::MAX] {
                let got = run(case.length, case.max, case.input, step);
                let got = got.map(|o| (o.body, o.rest, o.done));
                let want = case.expect.map(|(b, r, d)| (b.to_vec(), r.to_vec(), d));
                assert_eq!(got, want, "{} (step {step})", case.name);
            }
        }
    }

    #[test]
    fn trailers_are_collected_once_done() {
        let input = b"1\r\na\r\n0\r\nA: 1\r\nB: 2\r\n\r\n";
        for step in [1, 5, usize::MAX] {
            let out = run(BodyLength::Chunked, 10, input, step).unwrap();
            assert_eq!(out.trailers, Some(2), "step {step}");
        }
        let none = run(BodyLength::Chunked, 10, b"0\r\n\r\n", 1).unwrap();
        assert_eq!(none.trailers, None);
    }

    #[test]
    fn finish_completes_only_a_close_delimited_body() {
        let mut close = BodyDecoder::new(BodyLength::CloseDelimited, 10);
        assert_eq!(close.finish(), Ok(()));
        assert!(close.is_done());
        let mut length = BodyDecoder::new(BodyLength::Length(3), 10);
        assert_eq!(length.finish(), Err(BodyDecodeError::Incomplete));
        let mut chunked = BodyDecoder::new(BodyLength::Chunked, 10);
        assert_eq!(chunked.finish(), Err(BodyDecodeError::Incomplete));
    }

    #[test]
    fn remaining_and_received() {
        let mut dec = BodyDecoder::new(BodyLength::Length(10), 100);
        assert_eq!(dec.remaining(), Some(10));
        dec.decode(b"abcd").unwrap();
        assert_eq!((dec.remaining(), dec.received()), (Some(6), 4));
        assert_eq!(BodyDecoder::new(BodyLength::Chunked, 1).remaining(), None);
    }
}
