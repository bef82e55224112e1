//! DATA frames (RFC 9113 §6.1).
//!
//! ```text
//! DATA Frame {
//!   Length (24), Type (8) = 0x00,
//!   Unused Flags (4), PADDED Flag (1), Unused Flags (2), END_STREAM Flag (1),
//!   Reserved (1), Stream Identifier (31),
//!   [Pad Length (8)], Data (..), Padding (..2040),
//! }
//! ```

use super::head::{Head, Kind, flags};
use super::padding;
use crate::http2::error::{Error, Reason};
use crate::http2::stream_id::StreamId;

/// A decoded DATA frame, borrowing its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Data<'a> {
    /// The stream.
    pub stream: StreamId,
    /// The data, padding removed.
    pub data: &'a [u8],
    /// END_STREAM: the sender's last frame on this stream.
    pub end_stream: bool,
    /// The whole payload length, padding included: what the frame costs in flow control
    /// (RFC 9113 §6.9.1 "The entire DATA frame payload is included in flow control").
    pub flow_len: u32,
}

/// Checks what a DATA header alone can prove.
///
/// # Errors
/// RFC 9113 §6.1: "If a DATA frame is received whose Stream Identifier field is 0x00, the
/// recipient MUST respond with a connection error (Section 5.4.1) of type PROTOCOL_ERROR."
/// Also a connection FRAME_SIZE_ERROR for a PADDED frame with an empty payload.
pub const fn check_head(head: Head) -> Result<(), Error> {
    if head.stream.is_zero() {
        return Err(Error::connection(Reason::PROTOCOL_ERROR, "DATA on stream 0"));
    }
    if head.has(flags::PADDED) && head.len == 0 {
        return Err(Error::connection(Reason::FRAME_SIZE_ERROR, "padded frame without Pad Length"));
    }
    Ok(())
}

impl<'a> Data<'a> {
    /// Decodes a whole DATA payload (`payload.len() == head.len`).
    ///
    /// # Errors
    /// Those of [`check_head`], and connection PROTOCOL_ERROR for padding as long as the
    /// payload (§6.1).
    pub fn decode(head: Head, payload: &'a [u8]) -> Result<Data<'a>, Error> {
        check_head(head)?;
        let data = padding::strip(head, payload)?;
        Ok(Data {
            stream: head.stream,
            data,
            end_stream: head.has(flags::END_STREAM),
            flow_len: head.len,
        })
    }
}

/// Appends one unpadded DATA frame carrying `data` (at most the peer's MAX_FRAME_SIZE; the
/// caller splits).
///
/// # Examples
/// ```
/// use peregrine::http2::StreamId;
/// use peregrine::http2::frame::data;
/// let mut out = Vec::new();
/// data::encode(StreamId::new(1), b"hi", true, &mut out);
/// assert_eq!(out, b"\x00\x00\x02\x00\x01\x00\x00\x00\x01hi");
/// ```
pub fn encode(stream: StreamId, data: &[u8], end_stream: bool, dst: &mut Vec<u8>) {
    encode_head(stream, data.len(), end_stream, dst);
    dst.extend_from_slice(data);
}

/// Appends the header of an unpadded DATA frame of `len` octets (at most the peer's
/// MAX_FRAME_SIZE), whose payload the caller appends next.
///
/// # Examples
/// ```
/// use peregrine::http2::StreamId;
/// use peregrine::http2::frame::data;
/// let mut out = Vec::new();
/// data::encode_head(StreamId::new(1), 2, false, &mut out);
/// assert_eq!(out, b"\x00\x00\x02\x00\x00\x00\x00\x00\x01");
/// ```
pub fn encode_head(stream: StreamId, len: usize, end_stream: bool, dst: &mut Vec<u8>) {
    let f = if end_stream { flags::END_STREAM } else { 0 };
    Head::new(Kind::DATA, f, stream, len as u32).encode(dst);
}

#[cfg(test)]
mod tests {
    use super::{Data, encode};
    use crate::http2::error::Reason;
    use crate::http2::frame::head::{HEAD_LEN, Head, Kind, flags};
    use crate::http2::stream_id::StreamId;

    fn head(f: u8, stream: u32, len: usize) -> Head {
        Head::new(Kind::DATA, f, StreamId::new(stream), len as u32)
    }

    #[test]
    fn decode_rules() {
        struct Case {
            flags: u8,
            stream: u32,
            payload: &'static [u8],
            expect: Result<(&'static [u8], bool), Reason>,
        }
        let cases = [
            Case { flags: 0, stream: 1, payload: b"abc", expect: Ok((b"abc", false)) },
            Case { flags: flags::END_STREAM, stream: 1, payload: b"", expect: Ok((b"", true)) },
            // Unknown flags are ignored (§4.1); 0x20 is PRIORITY, meaningless on DATA.
            Case { flags: 0xf6, stream: 1, payload: b"x", expect: Ok((b"x", false)) },
            Case { flags: flags::PADDED, stream: 3, payload: b"\x01ab", expect: Ok((b"a", false)) },
            Case {
                flags: flags::PADDED,
                stream: 3,
                payload: b"\x03ab",
                expect: Err(Reason::PROTOCOL_ERROR),
            },
            Case {
                flags: flags::PADDED,
                stream: 3,
                payload: b"",
                expect: Err(Reason::FRAME_SIZE_ERROR),
            },
            Case { flags: 0, stream: 0, payload: b"abc", expect: Err(Reason::PROTOCOL_ERROR) },
        ];
        for c in cases {
            let got = Data::decode(head(c.flags, c.stream, c.payload.len()), c.payload);
            match (got, c.expect) {
                (Ok(d), Ok((data, end))) => {
                    assert_eq!((d.data, d.end_stream), (data, end));
                    assert_eq!(
                        d.flow_len as usize,
                        c.payload.len(),
                        "padding counts in flow control"
                    );
                }
                (Err(e), Err(r)) => assert!(e.is_connection() && e.reason() == r, "{e:?}"),
                (got, want) => panic!("{:?}: got {got:?}, want {want:?}", c.payload),
            }
        }
    }

    #[test]
    fn encode_then_decode() {
        let mut out = Vec::new();
        encode(StreamId::new(5), b"hello", false, &mut out);
        let h = Head::parse(out[..HEAD_LEN].try_into().unwrap());
        let d = Data::decode(h, &out[HEAD_LEN..]).unwrap();
        assert_eq!((d.stream, d.data, d.end_stream), (StreamId::new(5), &b"hello"[..], false));
    }
}
