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
use super::field_syntax::{is_ows, is_tchar, is_value_ctl};

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
/// the header rules and discarded (RFC 9112 §7.1.2 lets a recipient discard them).
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
    /// A [`ChunkedError`] at the first byte that breaks the grammar or a limit. The decoder is
    /// then unusable: the connection must close.
    pub fn decode(&mut self, input: &[u8]) -> Result<Decoded, ChunkedError> {
        let mut i = 0;
        let mut data = 0..0;
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
                _ => {
                    self.step(b)?;
                    i += 1;
                }
            }
        }
        Ok(Decoded { consumed: i, data, done: self.state == State::Done })
    }

    /// Advances the state machine over one framing byte.
    #[inline]
    fn step(&mut self, b: u8) -> Result<(), ChunkedError> {
        use State::*;
        let s = self.state;
        if matches!(s, SizeWs | ExtNameStart | ExtName | ExtAfter { .. } | ExtValStart)
            || matches!(s, ExtValToken | ExtQuoted | ExtQuotedEscape)
        {
            self.ext_bytes += 1;
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
            Size | SizeDigits => match hex_value(b) {
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

#[inline(always)]
fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
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
    for (i, slot) in buf[..digits].iter_mut().enumerate() {
        let nibble = (len >> ((digits - 1 - i) * 4)) & 0xF;
        *slot = b"0123456789abcdef"[nibble as usize];
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
