//! The chunked transfer coding (RFC 9112 §7.1): an incremental, zero-copy decoder and the
//! matching encoder.
//!
//! ```text
//! chunked-body   = *chunk last-chunk trailer-section CRLF
//! chunk          = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
//! chunk-size     = 1*HEXDIG
//! last-chunk     = 1*("0") [ chunk-ext ] CRLF
//! chunk-ext      = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
//! chunk-ext-val  = token / quoted-string
//! trailer-section = *( field-line CRLF )
//! ```
//!
//! The decoder is a byte-driven state machine over the framing only: chunk data is never
//! copied, [`ChunkedDecoder::decode`] returns where it sits in the input. It keeps no buffer, so
//! input split at any byte boundary decodes exactly as the whole input does.

use std::fmt;
use std::ops::Range;

use super::encode::{EncodeError, check_field};
use super::field_syntax::{is_ows, is_tchar, is_value_ctl, trim_ows};
use crate::hexdig;

/// Why a chunked body was refused. After any of them the body's end is unknown: the connection
/// must close.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChunkedError {
    /// A chunk-size that is empty or not hexadecimal, or junk after it (RFC 9112 §7.1). → 400
    InvalidChunkSize,
    /// A chunk-size of more than 16 hex digits: it would overflow u64 (RFC 9112 §7.1: "a
    /// recipient MUST anticipate potentially large hexadecimal numerals and prevent parsing
    /// errors due to integer conversion overflows"). Leading zeros count. → 400
    ChunkSizeOverflow,
    /// A chunk extension that is not `;name[=token|quoted-string]` (RFC 9112 §7.1.1). → 400
    InvalidExtension,
    /// More chunk-extension bytes in one body than the limit (RFC 9112 §7.1.1: "generate an
    /// appropriate 4xx (Client Error) response if that amount is exceeded"). → 413
    ExtensionsTooLarge,
    /// A chunk line or trailer line not ended by CRLF: a bare CR or a bare LF
    /// (RFC 9112 §7.1, §2.2). → 400
    InvalidLineEnding,
    /// Chunk data not followed by CRLF: the chunk holds more data than its size said
    /// (RFC 9112 §7.1). → 400
    MissingCrlfAfterData,
    /// A trailer field name that is empty or not a token, or whitespace before its colon
    /// (RFC 9110 §5.1, RFC 9112 §5.1). → 400
    InvalidTrailerName,
    /// A trailer field value holding CR, LF, NUL or another control byte (RFC 9110 §5.5). → 400
    InvalidTrailerValue,
    /// A trailer line starting with whitespace: obs-fold, which we reject (RFC 9112 §5.2). → 400
    TrailerObsFold,
    /// A trailer section larger than the limit (RFC 6585 §5 by analogy with headers). → 431
    TrailersTooLarge,
}

impl ChunkedError {
    /// The response status this error maps to.
    pub const fn status(self) -> u16 {
        match self {
            ChunkedError::ExtensionsTooLarge => 413,
            ChunkedError::TrailersTooLarge => 431,
            _ => 400,
        }
    }

    /// A short human-readable reason.
    pub const fn reason(self) -> &'static str {
        match self {
            ChunkedError::InvalidChunkSize => "invalid chunk size",
            ChunkedError::ChunkSizeOverflow => "chunk size too long",
            ChunkedError::InvalidExtension => "invalid chunk extension",
            ChunkedError::ExtensionsTooLarge => "chunk extensions too large",
            ChunkedError::InvalidLineEnding => "chunk line not ended by CRLF",
            ChunkedError::MissingCrlfAfterData => "chunk data not followed by CRLF",
            ChunkedError::InvalidTrailerName => "invalid trailer field name",
            ChunkedError::InvalidTrailerValue => "invalid trailer field value",
            ChunkedError::TrailerObsFold => "obsolete line folding in trailer",
            ChunkedError::TrailersTooLarge => "trailer section too large",
        }
    }
}

impl fmt::Display for ChunkedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.reason(), self.status())
    }
}

impl std::error::Error for ChunkedError {}

/// Limits of the chunked decoder, each with its own error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkedLimits {
    /// Chunk-extension bytes allowed over the whole body (everything after the hex digits of
    /// every size line). Bounds the work a client can make us do per data byte by sending tiny
    /// chunks with long extensions. Default 16 KiB (hyper uses the same budget).
    pub max_extension_bytes: usize,
    /// Bytes of the trailer section, final CRLF included. Default 16 KiB, as the head limit.
    pub max_trailer_bytes: usize,
}

impl Default for ChunkedLimits {
    fn default() -> Self {
        ChunkedLimits { max_extension_bytes: 16 * 1024, max_trailer_bytes: 16 * 1024 }
    }
}

/// The outcome of one [`ChunkedDecoder::decode`] call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// Bytes of the input taken (framing and data). The rest is for the next call, or, once
    /// `done`, belongs to whatever follows the body (a pipelined request).
    pub consumed: usize,
    /// Where body data sits in the input; empty when this call found none.
    pub data: Range<usize>,
    /// The last chunk and the trailer section have been read: the body is complete.
    pub done: bool,
    /// Where bytes of the trailer section's field lines (CRLFs included, the final empty
    /// line excluded) sit in the input; empty when this call found none. The decoder has
    /// validated them with the header rules; a caller that keeps trailers collects these
    /// bytes until `done` (at most `max_trailer_bytes` in all). Bytes collected before an
    /// error belong to a failed body: drop them.
    pub trailers: Range<usize>,
}

/// Where the decoder is in the chunked grammar. Size-line states come first, then data, then
/// the trailer section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Expecting the first hex digit of a chunk-size.
    Size,
    /// Inside the chunk-size digits.
    SizeDigits,
    /// BWS after the digits: only `;` may follow.
    SizeWs,
    /// After `;`: BWS, then an extension name.
    ExtNameStart,
    ExtName,
    /// After an extension item: BWS, `;`, `=` (only after a name), or CR (only without BWS).
    ExtAfter {
        ws: bool,
        after_name: bool,
    },
    /// After `=`: BWS, then a token or a quoted-string.
    ExtValStart,
    ExtValToken,
    ExtQuoted,
    ExtQuotedEscape,
    /// CR of the size line seen, LF expected.
    SizeLf,
    /// Inside chunk data; `remaining` bytes left.
    Data,
    DataCr,
    DataLf,
    /// At the start of a trailer line (or of the final CRLF).
    TrailerStart,
    TrailerName,
    TrailerValue,
    TrailerLf,
    FinalLf,
    Done,
}

/// An incremental decoder for a chunked body (RFC 9112 §7.1), sans-I/O and zero-copy.
///
/// Feed it whatever bytes have arrived; it returns how many it took and where the body data
/// sits in them. Chunk extensions are validated and skipped; trailer fields are validated with
/// the header rules and their bytes reported in [`Decoded::trailers`], for the caller to keep
/// or discard (RFC 9112 §7.1.2 allows either).
///
/// # Examples
/// ```
/// use peregrine::http1::chunked::ChunkedDecoder;
/// let mut dec = ChunkedDecoder::new();
/// let mut input: &[u8] = b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Sum: 1\r\n\r\nNEXT";
/// let mut body = Vec::new();
/// loop {
///     let out = dec.decode(input)?;
///     body.extend_from_slice(&input[out.data.clone()]);
///     input = &input[out.consumed..];
///     if out.done {
///         break;
///     }
/// }
/// assert_eq!(body, b"hello world");
/// assert_eq!(input, b"NEXT");
/// # Ok::<(), peregrine::http1::chunked::ChunkedError>(())
/// ```
#[derive(Clone, Debug)]
pub struct ChunkedDecoder {
    state: State,
    /// The chunk-size being read, then the data bytes left in the chunk.
    size: u64,
    digits: u8,
    ext_bytes: usize,
    trailer_bytes: usize,
    limits: ChunkedLimits,
    /// The error that stopped decoding; every later call returns it.
    failed: Option<ChunkedError>,
}

impl Default for ChunkedDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl ChunkedDecoder {
    /// A decoder at the start of a body, with the default limits.
    pub fn new() -> Self {
        Self::with_limits(ChunkedLimits::default())
    }

    /// A decoder at the start of a body, with the given limits.
    pub fn with_limits(limits: ChunkedLimits) -> Self {
        ChunkedDecoder {
            state: State::Size,
            size: 0,
            digits: 0,
            ext_bytes: 0,
            trailer_bytes: 0,
            limits,
            failed: None,
        }
    }

    /// Whether the whole body, trailers included, has been read.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Decodes from the start of `input`.
    ///
    /// Takes framing bytes and at most one run of body data, and stops before the data of the
    /// next chunk, so one call per chunk suffices. Call again with `&input[consumed..]` (plus
    /// whatever arrives next) until `done`. Once done it takes nothing more. An empty input, or
    /// one that ends inside a size line, returns what it could take: partial input is never an
    /// error.
    ///
    /// # Errors
    /// A [`ChunkedError`] at the first byte that breaks the grammar or a limit. When body data
    /// precedes that byte in the same input, this call returns the data (not consuming the bad
    /// byte) and the next call the error. The error is sticky: the connection must close.
    pub fn decode(&mut self, input: &[u8]) -> Result<Decoded, ChunkedError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        let mut i = 0;
        let mut data = 0..0;
        let mut trailers = 0..0;
        while let Some(&b) = input.get(i) {
            match self.state {
                State::Data => {
                    if !data.is_empty() {
                        break; // one data run per call
                    }
                    let avail = (input.len() - i) as u64;
                    let take = self.size.min(avail) as usize; // <= avail, fits usize
                    self.size -= take as u64;
                    data = i..i + take;
                    i += take;
                    if self.size == 0 {
                        self.state = State::DataCr;
                    }
                }
                State::Done => break,
                state => match self.step(b) {
                    Ok(()) => {
                        // Field-line bytes of the trailer section; the CR that opens the final
                        // empty line is not one of them. They are contiguous: nothing but the
                        // trailer section follows them in a body.
                        let field_line = match state {
                            State::TrailerName | State::TrailerValue | State::TrailerLf => true,
                            State::TrailerStart => b != b'\r',
                            _ => false,
                        };
                        if field_line {
                            if trailers.is_empty() {
                                trailers = i..i;
                            }
                            trailers.end = i + 1;
                        }
                        i += 1;
                    }
                    Err(e) => {
                        self.failed = Some(e);
                        // Hand out the data before the bad byte first, so the caller sees the
                        // same bytes and the same error however the input was split.
                        if data.is_empty() {
                            return Err(e);
                        }
                        break;
                    }
                },
            }
        }
        Ok(Decoded { consumed: i, data, done: self.state == State::Done, trailers })
    }

    /// Advances the state machine over one framing byte.
    #[inline]
    fn step(&mut self, b: u8) -> Result<(), ChunkedError> {
        use State::*;
        let s = self.state;
        if matches!(s, SizeWs | ExtNameStart | ExtName | ExtAfter { .. } | ExtValStart)
            || matches!(s, ExtValToken | ExtQuoted | ExtQuotedEscape)
        {
            // Extension bytes: everything after the digits up to the line's CR.
            self.ext_bytes += usize::from(b != b'\r');
            if self.ext_bytes > self.limits.max_extension_bytes {
                return Err(ChunkedError::ExtensionsTooLarge);
            }
        } else if matches!(s, TrailerStart | TrailerName | TrailerValue | TrailerLf | FinalLf) {
            self.trailer_bytes += 1;
            if self.trailer_bytes > self.limits.max_trailer_bytes {
                return Err(ChunkedError::TrailersTooLarge);
            }
        }
        // RFC 9112 §7.1: each line ends in CRLF; a bare LF anywhere in a size line or a trailer
        // line is refused (RFC 9112 §2.2 allows accepting it; we do not).
        if b == b'\n' && !matches!(s, SizeLf | DataLf | TrailerLf | FinalLf) {
            return Err(match s {
                DataCr => ChunkedError::MissingCrlfAfterData,
                TrailerValue => ChunkedError::InvalidTrailerValue,
                _ => ChunkedError::InvalidLineEnding,
            });
        }
        self.state = match s {
            Size | SizeDigits => match hexdig::value(b) {
                Some(d) => {
                    if self.digits == 16 {
                        return Err(ChunkedError::ChunkSizeOverflow);
                    }
                    self.digits += 1;
                    self.size = self.size << 4 | u64::from(d);
                    SizeDigits
                }
                None if s == Size => return Err(ChunkedError::InvalidChunkSize),
                None => match b {
                    b'\r' => SizeLf,
                    b';' => self.ext_start()?,
                    b' ' | b'\t' => SizeWs,
                    _ => return Err(ChunkedError::InvalidChunkSize),
                },
            },
            // chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
            SizeWs => match b {
                b' ' | b'\t' => SizeWs,
                b';' => ExtNameStart,
                _ => return Err(ChunkedError::InvalidChunkSize),
            },
            ExtNameStart => match b {
                b' ' | b'\t' => ExtNameStart,
                _ if is_tchar(b) => ExtName,
                _ => return Err(ChunkedError::InvalidExtension),
            },
            ExtName => match b {
                _ if is_tchar(b) => ExtName,
                _ => self.after_item(b, false, true)?,
            },
            ExtAfter { ws, after_name } => self.after_item(b, ws, after_name)?,
            ExtValStart => match b {
                b' ' | b'\t' => ExtValStart,
                b'"' => ExtQuoted,
                _ if is_tchar(b) => ExtValToken,
                _ => return Err(ChunkedError::InvalidExtension),
            },
            ExtValToken => match b {
                _ if is_tchar(b) => ExtValToken,
                _ => self.after_item(b, false, false)?,
            },
            // quoted-string = DQUOTE *( qdtext / quoted-pair ) DQUOTE   (RFC 9110 §5.6.4)
            ExtQuoted => match b {
                b'"' => ExtAfter { ws: false, after_name: false },
                b'\\' => ExtQuotedEscape,
                _ if !is_value_ctl(b) => ExtQuoted,
                _ => return Err(ChunkedError::InvalidExtension),
            },
            ExtQuotedEscape if !is_value_ctl(b) => ExtQuoted,
            ExtQuotedEscape => return Err(ChunkedError::InvalidExtension),
            SizeLf => match b {
                // last-chunk = 1*("0") [ chunk-ext ] CRLF, then the trailer section.
                b'\n' if self.size == 0 => TrailerStart,
                b'\n' => Data,
                _ => return Err(ChunkedError::InvalidLineEnding),
            },
            DataCr if b == b'\r' => DataLf,
            DataLf if b == b'\n' => {
                (self.size, self.digits) = (0, 0);
                Size
            }
            DataCr | DataLf => return Err(ChunkedError::MissingCrlfAfterData),
            // trailer-section = *( field-line CRLF ), field-line = field-name ":" OWS
            // field-value OWS, with the header rules (RFC 9112 §5, §7.1.2).
            TrailerStart => match b {
                b'\r' => FinalLf,
                b' ' | b'\t' => return Err(ChunkedError::TrailerObsFold),
                _ if is_tchar(b) => TrailerName,
                _ => return Err(ChunkedError::InvalidTrailerName),
            },
            TrailerName => match b {
                b':' => TrailerValue,
                _ if is_tchar(b) => TrailerName,
                _ => return Err(ChunkedError::InvalidTrailerName),
            },
            TrailerValue => match b {
                b'\r' => TrailerLf,
                _ if is_value_ctl(b) => return Err(ChunkedError::InvalidTrailerValue),
                _ => TrailerValue,
            },
            TrailerLf if b == b'\n' => TrailerStart,
            FinalLf if b == b'\n' => Done,
            TrailerLf | FinalLf => return Err(ChunkedError::InvalidLineEnding),
            // `decode` handles these without calling `step`.
            Data | Done => s,
        };
        Ok(())
    }

    /// The `;` that opens the extensions of a size line.
    fn ext_start(&mut self) -> Result<State, ChunkedError> {
        self.ext_bytes += 1;
        if self.ext_bytes > self.limits.max_extension_bytes {
            return Err(ChunkedError::ExtensionsTooLarge);
        }
        Ok(State::ExtNameStart)
    }

    /// A byte after an extension name or value (`ws`: BWS already seen after it).
    fn after_item(&mut self, b: u8, ws: bool, after_name: bool) -> Result<State, ChunkedError> {
        Ok(match b {
            _ if is_ows(b) => State::ExtAfter { ws: true, after_name },
            b';' => State::ExtNameStart,
            b'=' if after_name => State::ExtValStart,
            // No BWS before the line's CRLF: the grammar has none there.
            b'\r' if !ws => State::SizeLf,
            _ => return Err(ChunkedError::InvalidExtension),
        })
    }
}

/// The fields in trailer bytes collected from [`Decoded::trailers`]: `(name, value)` pairs in
/// order, the value without surrounding whitespace (RFC 9112 §5.1, §7.1.2).
///
/// Meant for bytes the decoder has validated; a line without a colon (which such bytes never
/// hold) is skipped rather than misread.
///
/// # Examples
/// ```
/// use peregrine::http1::chunked::trailer_fields;
/// let fields: Vec<_> = trailer_fields(b"Grpc-Status: 0\r\nX-Sum:\tab \r\n").collect();
/// assert_eq!(fields, [(&b"Grpc-Status"[..], &b"0"[..]), (&b"X-Sum"[..], &b"ab"[..])]);
/// ```
pub fn trailer_fields(bytes: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    bytes.split(|&b| b == b'\n').filter_map(|line| {
        let line = line.strip_suffix(b"\r")?;
        let colon = line.iter().position(|&b| b == b':')?;
        Some((&line[..colon], trim_ows(&line[colon + 1..])))
    })
}

/// Appends one chunk holding `data`: size line, data, CRLF. Writes nothing for empty `data`,
/// since a zero-size chunk would end the body.
///
/// # Examples
/// ```
/// use peregrine::http1::chunked::{encode_chunk, encode_last_chunk};
/// let mut out = Vec::new();
/// encode_chunk(b"hello world, hello world", &mut out);
/// encode_last_chunk(&[], &mut out).unwrap();
/// assert_eq!(out, b"18\r\nhello world, hello world\r\n0\r\n\r\n");
/// ```
pub fn encode_chunk(data: &[u8], out: &mut Vec<u8>) {
    if !data.is_empty() {
        encode_chunk_head(data.len() as u64, out);
        out.extend_from_slice(data);
        out.extend_from_slice(CRLF);
    }
}

/// Appends the size line of a chunk of `len` bytes (`{len:x}\r\n`), for callers that write the
/// data themselves (for example with a vectored write) and then [`CRLF`]. Writes nothing for
/// `len == 0`: the caller must then write neither data nor CRLF.
pub fn encode_chunk_head(len: u64, out: &mut Vec<u8>) {
    if len == 0 {
        return;
    }
    let mut buf = [0u8; 18];
    let digits = (64 - len.leading_zeros() as usize).div_ceil(4);
    for (i, digit) in buf[..digits].iter_mut().enumerate() {
        let nibble = (len >> ((digits - 1 - i) * 4)) & 0xF;
        *digit = b"0123456789abcdef"[nibble as usize];
    }
    buf[digits..digits + 2].copy_from_slice(CRLF);
    out.extend_from_slice(&buf[..digits + 2]);
}

/// The CRLF that ends chunk data and every line of the chunked framing.
pub const CRLF: &[u8] = b"\r\n";

/// Appends the last chunk, the trailer fields and the final CRLF: `0\r\n` `name: value\r\n`…
/// `\r\n`.
///
/// # Errors
/// The trailers are checked like response headers ([`EncodeError`]): a name that is not a
/// token, a value with CR, LF, NUL or another control byte, or a framing field
/// (Content-Length, Transfer-Encoding; RFC 9110 §6.5.1). Nothing is appended then.
pub fn encode_last_chunk(trailers: &[(&str, &[u8])], out: &mut Vec<u8>) -> Result<(), EncodeError> {
    for &(name, value) in trailers {
        check_field(name, value)?;
    }
    out.extend_from_slice(b"0\r\n");
    for &(name, value) in trailers {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.extend_from_slice(CRLF);
    }
    out.extend_from_slice(CRLF);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ChunkedError as E;
    use proptest::prelude::*;

    /// What a caller sees after feeding `pieces` in order: the body, then either the error or
    /// (done, total bytes consumed).
    fn feed(
        limits: ChunkedLimits,
        pieces: &[&[u8]],
    ) -> (Vec<u8>, Result<(bool, usize), ChunkedError>) {
        let mut dec = ChunkedDecoder::with_limits(limits);
        let (mut body, mut buf, mut total) = (Vec::new(), Vec::new(), 0);
        for piece in pieces {
            buf.extend_from_slice(piece);
            loop {
                let out = match dec.decode(&buf) {
                    Ok(out) => out,
                    Err(e) => return (body, Err(e)),
                };
                // Progress guarantee: non-empty input is taken unless the body is done.
                assert!(out.consumed > 0 || buf.is_empty() || out.done);
                assert!(out.data.end <= out.consumed);
                body.extend_from_slice(&buf[out.data.clone()]);
                buf.drain(..out.consumed);
                total += out.consumed;
                if out.done {
                    return (body, Ok((true, total)));
                }
                if buf.is_empty() {
                    break;
                }
            }
        }
        (body, Ok((false, total)))
    }

    /// Feeds `input` whole, byte at a time, split at every point and (for short inputs) in
    /// three pieces at every pair of points; all must agree with the whole-input result.
    fn all_splits(
        limits: ChunkedLimits,
        input: &[u8],
    ) -> (Vec<u8>, Result<(bool, usize), ChunkedError>) {
        let whole = feed(limits, &[input]);
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(feed(limits, &bytes), whole, "byte at a time: {:?}", input.escape_ascii());
        for i in 0..=input.len() {
            let (a, b) = input.split_at(i);
            assert_eq!(feed(limits, &[a, b]), whole, "split {i}: {:?}", input.escape_ascii());
            if input.len() <= 64 {
                for j in i..=input.len() {
                    let (b1, c) = input[i..].split_at(j - i);
                    assert_eq!(feed(limits, &[a, b1, c]), whole, "split {i},{j}");
                }
            }
        }
        whole
    }

    struct Case {
        rfc: &'static str,
        input: &'static [u8],
        /// Ok(body, bytes of the chunked body) for a complete body, or the error.
        expect: Result<(&'static [u8], usize), ChunkedError>,
    }

    fn ok(input: &'static [u8], body: &'static [u8]) -> Case {
        Case { rfc: "RFC 9112 §7.1", input, expect: Ok((body, input.len())) }
    }

    fn err(rfc: &'static str, input: &'static [u8], e: ChunkedError) -> Case {
        Case { rfc, input, expect: Err(e) }
    }

    #[test]
    fn table_every_split() {
        let cases = [
            ok(b"0\r\n\r\n", b""),
            ok(b"5\r\nhello\r\n0\r\n\r\n", b"hello"),
            ok(b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", b"hello world"),
            ok(b"A\r\n0123456789\r\n0\r\n\r\n", b"0123456789"),
            ok(b"a\r\n0123456789\r\n0\r\n\r\n", b"0123456789"),
            ok(b"005\r\nhello\r\n000\r\n\r\n", b"hello"),
            ok(b"000000000000005\r\nhello\r\n0000000000000000\r\n\r\n", b"hello"),
            ok(b"1\r\n\r\r\n1\r\n\n\r\n0\r\n\r\n", b"\r\n"),
            // RFC 9112 §7.1.1 chunk extensions: skipped, but their syntax is checked.
            ok(b"5;a\r\nhello\r\n0\r\n\r\n", b"hello"),
            ok(b"5;a=b\r\nhello\r\n0;last\r\n\r\n", b"hello"),
            ok(b"5 ; a = b ;c\t;d=e\r\nhello\r\n0\r\n\r\n", b"hello"),
            ok(b"5;a=\"q \\\" s\";b=\"\"\r\nhello\r\n0\r\n\r\n", b"hello"),
            ok(b"5;a=\"\xff\\\xfe\"\r\nhello\r\n0\r\n\r\n", b"hello"),
            // RFC 9112 §7.1.2 trailer section: header rules, discarded.
            ok(b"0\r\nX-A: 1\r\nX-B:\r\n\r\n", b""),
            ok(b"3\r\nabc\r\n0\r\nExpires: a\tb \xff\r\n\r\n", b"abc"),
            err("RFC 9112 §7.1", b"\r\n", E::InvalidChunkSize),
            err("RFC 9112 §7.1", b"g\r\n", E::InvalidChunkSize),
            err("RFC 9112 §7.1", b"-5\r\n", E::InvalidChunkSize),
            err("RFC 9112 §7.1", b"+5\r\n", E::InvalidChunkSize),
            err("RFC 9112 §7.1", b" 5\r\n", E::InvalidChunkSize),
            err("RFC 9112 §7.1", b"5 \r\n", E::InvalidChunkSize),
            err("RFC 9112 §7.1", b"5x\r\n", E::InvalidChunkSize),
            err("RFC 9112 §7.1", b"0x5\r\n", E::InvalidChunkSize),
            err("RFC 9112 §7.1", b"ffffffffffffffff0\r\n", E::ChunkSizeOverflow),
            err("RFC 9112 §7.1", b"10000000000000000\r\n", E::ChunkSizeOverflow),
            err("RFC 9112 §7.1", b"00000000000000001\r\n", E::ChunkSizeOverflow),
            err("RFC 9112 §7.1, §2.2", b"5\nhello\r\n", E::InvalidLineEnding),
            err("RFC 9112 §7.1, §2.2", b"5\rhello\r\n", E::InvalidLineEnding),
            err("RFC 9112 §7.1, §2.2", b"5;a\nhello\r\n", E::InvalidLineEnding),
            err("RFC 9112 §7.1", b"5\r\nhelloX\r\n0\r\n\r\n", E::MissingCrlfAfterData),
            err("RFC 9112 §7.1", b"5\r\nhello\n0\r\n\r\n", E::MissingCrlfAfterData),
            err("RFC 9112 §7.1", b"5\r\nhello\r0\r\n\r\n", E::MissingCrlfAfterData),
            err("RFC 9112 §7.1.1", b"5;\r\nhello\r\n", E::InvalidExtension),
            err("RFC 9112 §7.1.1", b"5;=a\r\nhello\r\n", E::InvalidExtension),
            err("RFC 9112 §7.1.1", b"5;a=\r\nhello\r\n", E::InvalidExtension),
            err("RFC 9112 §7.1.1", b"5;a \r\nhello\r\n", E::InvalidExtension),
            err("RFC 9112 §7.1.1", b"5;a=b \r\nhello\r\n", E::InvalidExtension),
            err("RFC 9112 §7.1.1", b"5;a=b=c\r\nhello\r\n", E::InvalidExtension),
            err("RFC 9112 §7.1.1", b"5;a=\"b\r\nhello\r\n", E::InvalidExtension),
            err("RFC 9112 §7.1.1", b"5;a=\"\x01\"\r\nhello\r\n", E::InvalidExtension),
            err("RFC 9112 §7.1.1", b"5;a=\"\\\x7f\"\r\nhello\r\n", E::InvalidExtension),
            err("RFC 9112 §7.1.1", b"5;a=\"x\"y\r\nhello\r\n", E::InvalidExtension),
            err("RFC 9112 §7.1.1", b"5;a\x00\r\nhello\r\n", E::InvalidExtension),
            err("RFC 9112 §7.1.1", b"5;a@b\r\nhello\r\n", E::InvalidExtension),
            err("RFC 9112 §5.2", b"0\r\n X: 1\r\n\r\n", E::TrailerObsFold),
            err("RFC 9112 §5.2", b"0\r\nX: 1\r\n folded\r\n\r\n", E::TrailerObsFold),
            err("RFC 9112 §5.1", b"0\r\nX : 1\r\n\r\n", E::InvalidTrailerName),
            err("RFC 9110 §5.1", b"0\r\n: 1\r\n\r\n", E::InvalidTrailerName),
            err("RFC 9110 §5.1", b"0\r\nX\r\n\r\n", E::InvalidTrailerName),
            err("RFC 9110 §5.1", b"0\r\nX(: 1\r\n\r\n", E::InvalidTrailerName),
            err("RFC 9110 §5.5", b"0\r\nX: a\x00b\r\n\r\n", E::InvalidTrailerValue),
            err("RFC 9110 §5.5", b"0\r\nX: a\nb\r\n\r\n", E::InvalidTrailerValue),
            err("RFC 9110 §5.5", b"0\r\nX: a\x7f\r\n\r\n", E::InvalidTrailerValue),
            err("RFC 9112 §2.2", b"0\r\nX: a\rb\r\n\r\n", E::InvalidLineEnding),
            err("RFC 9112 §2.2", b"0\r\n\r\r", E::InvalidLineEnding),
            err("RFC 9112 §2.2", b"0\r\n\n", E::InvalidLineEnding),
            err("RFC 9112 §2.2", b"0\r\nX: 1\n\r\n", E::InvalidTrailerValue),
        ];
        for c in cases {
            let (body, got) = all_splits(ChunkedLimits::default(), c.input);
            let got = got.map(|(done, n)| {
                assert!(done, "{}: {:?} not done", c.rfc, c.input.escape_ascii());
                (&body[..], n)
            });
            let want = c.expect;
            assert_eq!(got, want, "{}: {:?}", c.rfc, c.input.escape_ascii());
        }
    }

    #[test]
    fn stops_at_the_end_of_the_body_rfc9112_7_1() {
        let input = b"5\r\nhello\r\n0\r\nX: y\r\n\r\nGET / HTTP/1.1\r\n";
        let (body, got) = all_splits(ChunkedLimits::default(), input);
        assert_eq!(body, b"hello");
        assert_eq!(got, Ok((true, input.len() - 16)));
        let mut dec = ChunkedDecoder::new();
        // One call takes a chunk's data and the framing after it, here up to the body's end.
        let out = dec.decode(input).unwrap();
        assert_eq!(out, Decoded { consumed: 21, data: 3..8, done: true, trailers: 13..19 });
        assert!(dec.is_done());
        assert_eq!(
            dec.decode(b"more").unwrap(),
            Decoded { consumed: 0, data: 0..0, done: true, trailers: 0..0 }
        );
    }

    /// The trailer bytes `Decoded::trailers` reports over a whole body fed in `pieces`.
    fn trailer_bytes(pieces: &[&[u8]]) -> Vec<u8> {
        let mut dec = ChunkedDecoder::new();
        let (mut trailers, mut buf) = (Vec::new(), Vec::new());
        for piece in pieces {
            buf.extend_from_slice(piece);
            while !buf.is_empty() && !dec.is_done() {
                let out = dec.decode(&buf).unwrap();
                assert!(out.trailers.end <= out.consumed);
                assert!(
                    out.data.is_empty()
                        || out.trailers.is_empty()
                        || out.data.end <= out.trailers.start
                );
                trailers.extend_from_slice(&buf[out.trailers.clone()]);
                buf.drain(..out.consumed);
            }
        }
        assert!(dec.is_done());
        trailers
    }

    /// RFC 9112 §7.1.2: the trailer section's field lines are reported, however the input is
    /// split, without the final empty line and without chunk data or extensions.
    #[test]
    fn trailer_bytes_every_split_rfc9112_7_1_2() {
        let cases: [(&[u8], &[u8]); 5] = [
            (b"0\r\n\r\n", b""),
            (b"5\r\nhello\r\n0\r\n\r\n", b""),
            (b"0\r\nX-A: 1\r\nX-B:\r\n\r\n", b"X-A: 1\r\nX-B:\r\n"),
            (b"3;x=\"X: 1\"\r\nX:2\r\n0;y\r\nGrpc-Status: 0\r\n\r\n", b"Grpc-Status: 0\r\n"),
            (b"3\r\nabc\r\n0\r\nExpires: a\tb \xff\r\n\r\n", b"Expires: a\tb \xff\r\n"),
        ];
        for (input, want) in cases {
            assert_eq!(trailer_bytes(&[input]), want, "{:?}", input.escape_ascii());
            let bytes: Vec<&[u8]> = input.chunks(1).collect();
            assert_eq!(trailer_bytes(&bytes), want, "byte at a time: {:?}", input.escape_ascii());
            for i in 0..=input.len() {
                let (a, b) = input.split_at(i);
                assert_eq!(trailer_bytes(&[a, b]), want, "split {i}: {:?}", input.escape_ascii());
            }
        }
    }

    #[test]
    fn incomplete_input_is_not_an_error() {
        for input in
            [&b""[..], b"5", b"5\r", b"5\r\nhel", b"5\r\nhello\r", b"5;a=\"x", b"0\r\nX: 1"]
        {
            let (_, got) = all_splits(ChunkedLimits::default(), input);
            assert_eq!(got, Ok((false, input.len())), "{:?}", input.escape_ascii());
        }
        // The largest chunk-size is accepted; its data simply has not arrived.
        let input = b"ffffffffffffffff\r\nabc";
        assert_eq!(all_splits(ChunkedLimits::default(), input), (b"abc".to_vec(), Ok((false, 21))));
    }

    #[test]
    fn limits_rfc9112_7_1_1() {
        let limits = ChunkedLimits { max_extension_bytes: 8, max_trailer_bytes: 12 };
        // 8 extension bytes over the body pass, 9 do not, across chunks too.
        let (_, got) = all_splits(limits, b"1;abcdefg\r\nx\r\n0\r\n\r\n");
        assert_eq!(got, Ok((true, 19)));
        let (_, got) = all_splits(limits, b"1;abcdefgh\r\nx\r\n0\r\n\r\n");
        assert_eq!(got, Err(E::ExtensionsTooLarge));
        let (_, got) = all_splits(limits, b"1;abcd\r\nx\r\n1;abcd\r\ny\r\n0\r\n\r\n");
        assert_eq!(got, Err(E::ExtensionsTooLarge));
        // The trailer section counts from the line after the last chunk, final CRLF included.
        let (_, got) = all_splits(limits, b"0\r\nX: 12345\r\n\r\n");
        assert_eq!(got, Ok((true, 15)));
        let (_, got) = all_splits(limits, b"0\r\nX: 123456\r\n\r\n");
        assert_eq!(got, Err(E::TrailersTooLarge));
        assert_eq!(E::ExtensionsTooLarge.status(), 413);
        assert_eq!(E::TrailersTooLarge.status(), 431);
        assert_eq!(E::InvalidChunkSize.to_string(), "invalid chunk size (400)");
    }

    #[test]
    fn encoder_writes_rfc9112_7_1_framing() {
        let mut out = Vec::new();
        encode_chunk(b"", &mut out);
        assert_eq!(out, b"");
        encode_chunk(b"hello", &mut out);
        encode_chunk(&[b'x'; 255], &mut out);
        encode_chunk_head(u64::MAX, &mut out);
        encode_chunk_head(0, &mut out);
        assert!(out.starts_with(b"5\r\nhello\r\nff\r\nxxx"));
        assert!(out.ends_with(b"x\r\nffffffffffffffff\r\n"));
        let mut out = Vec::new();
        encode_last_chunk(&[("X-Sum", b"abc"), ("Y", b"")], &mut out).unwrap();
        assert_eq!(out, b"0\r\nX-Sum: abc\r\nY: \r\n\r\n");
        for bad in [("X", &b"a\r\nInjected: 1"[..]), ("X\r\nY", b"1"), ("Content-Length", b"1")] {
            let mut out = b"keep".to_vec();
            assert!(encode_last_chunk(&[bad], &mut out).is_err());
            assert_eq!(out, b"keep");
        }
    }

    proptest! {
        /// Whatever the encoder writes, the decoder reads back, however the input is split.
        #[test]
        fn round_trip(chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 0..6),
                      cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..5)) {
            let mut wire = Vec::new();
            for c in &chunks {
                encode_chunk(c, &mut wire);
            }
            encode_last_chunk(&[("X", b"1")], &mut wire).unwrap();
            let mut points: Vec<usize> = cuts.iter().map(|i| i.index(wire.len() + 1)).collect();
            points.sort_unstable();
            let mut pieces = Vec::new();
            let mut last = 0;
            for p in points {
                pieces.push(&wire[last..p]);
                last = p;
            }
            pieces.push(&wire[last..]);
            let (body, got) = feed(ChunkedLimits::default(), &pieces);
            prop_assert_eq!(body, chunks.concat());
            prop_assert_eq!(got, Ok((true, wire.len())));
        }

        /// Arbitrary input never panics and decodes the same split as whole.
        #[test]
        fn arbitrary_input_split_agrees(input in proptest::collection::vec(
            prop::sample::select(b"0123456789abcdefABCDEFgx;= \t\"\\\r\n:X\x00".to_vec()), 0..40),
            cut in any::<prop::sample::Index>()) {
            let whole = feed(ChunkedLimits::default(), &[&input]);
            let (a, b) = input.split_at(cut.index(input.len() + 1));
            prop_assert_eq!(feed(ChunkedLimits::default(), &[a, b]), whole);
        }
    }
}
