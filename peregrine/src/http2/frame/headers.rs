//! HEADERS frames (RFC 9113 §6.2), and writing a field block as HEADERS + CONTINUATION frames
//! in place in the send buffer.
//!
//! ```text
//! HEADERS Frame {
//!   Length (24), Type (8) = 0x01,
//!   Unused Flags (2), PRIORITY Flag (1), Unused Flag (1), PADDED Flag (1),
//!   END_HEADERS Flag (1), Unused Flag (1), END_STREAM Flag (1),
//!   Reserved (1), Stream Identifier (31),
//!   [Pad Length (8)],
//!   [Exclusive (1), Stream Dependency (31), Weight (8)],
//!   Field Block Fragment (..),
//!   Padding (..2040),
//! }
//! ```

use super::head::{HEAD_LEN, Head, Kind, flags};
use super::padding;
use super::priority::PrioritySpec;
use crate::http2::error::{Error, Reason};
use crate::http2::stream_id::StreamId;

/// A decoded HEADERS frame, borrowing its field block fragment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Headers<'a> {
    /// The stream.
    pub stream: StreamId,
    /// The field block fragment (HPACK), padding and priority removed.
    pub fragment: &'a [u8],
    /// END_STREAM: no DATA follows on this stream.
    pub end_stream: bool,
    /// END_HEADERS: no CONTINUATION follows; the fragment is the whole block.
    pub end_headers: bool,
    /// The deprecated priority fields, when the PRIORITY flag is set. A dependency on the
    /// stream itself is a stream error the connection reports after decoding the block (the
    /// block must still reach HPACK): see [`Headers::depends_on_itself`].
    pub priority: Option<PrioritySpec>,
}

impl<'a> Headers<'a> {
    /// Decodes a whole HEADERS payload.
    ///
    /// # Errors
    /// - RFC 9113 §6.2: "If a HEADERS frame is received whose Stream Identifier field is 0x00,
    ///   the recipient MUST respond with a connection error (Section 5.4.1) of type
    ///   PROTOCOL_ERROR."
    /// - Padding as long as the payload: connection PROTOCOL_ERROR (§6.2, as §6.1).
    /// - Too short for the Pad Length or priority fields: connection FRAME_SIZE_ERROR (§4.2,
    ///   HEADERS carries a field block so a size error is a connection error).
    pub fn decode(head: Head, payload: &'a [u8]) -> Result<Headers<'a>, Error> {
        if head.stream.is_zero() {
            return Err(Error::connection(Reason::PROTOCOL_ERROR, "HEADERS on stream 0"));
        }
        let content = padding::strip(head, payload)?;
        let (priority, fragment) = if head.has(flags::PRIORITY) {
            let Some((fields, rest)) = content.split_first_chunk::<5>() else {
                return Err(Error::connection(
                    Reason::FRAME_SIZE_ERROR,
                    "HEADERS too short for priority",
                ));
            };
            (Some(PrioritySpec::parse(fields)), rest)
        } else {
            (None, content)
        };
        Ok(Headers {
            stream: head.stream,
            fragment,
            end_stream: head.has(flags::END_STREAM),
            end_headers: head.has(flags::END_HEADERS),
            priority,
        })
    }

    /// RFC 7540 §5.3.1: "A stream cannot depend on itself. An endpoint MUST treat this as a
    /// stream error (Section 5.4.2) of type PROTOCOL_ERROR."
    pub fn depends_on_itself(&self) -> bool {
        self.priority.is_some_and(|p| p.dependency == self.stream)
    }
}

/// Appends one HEADERS frame carrying `fragment` (no padding, no priority).
///
/// # Examples
/// ```
/// use peregrine::http2::StreamId;
/// use peregrine::http2::frame::headers;
/// let mut out = Vec::new();
/// headers::encode(StreamId::new(1), b"\x82", true, true, &mut out);
/// assert_eq!(out, b"\x00\x00\x01\x01\x05\x00\x00\x00\x01\x82");
/// ```
pub fn encode(
    stream: StreamId,
    fragment: &[u8],
    end_stream: bool,
    end_headers: bool,
    dst: &mut Vec<u8>,
) {
    let f = if end_stream { flags::END_STREAM } else { 0 }
        | if end_headers { flags::END_HEADERS } else { 0 };
    Head::new(Kind::HEADERS, f, stream, fragment.len() as u32).encode(dst);
    dst.extend_from_slice(fragment);
}

/// Starts a HEADERS frame whose field block the caller's HPACK encoder appends straight into
/// `dst`: reserves the 9-octet header and returns where it starts, for [`finish_block`].
pub fn begin_block(dst: &mut Vec<u8>) -> usize {
    let start = dst.len();
    dst.extend_from_slice(&[0; HEAD_LEN]);
    start
}

/// Completes a field block appended to `dst` after [`begin_block`] returned `start`: writes the
/// HEADERS header, and when the block is larger than `max_frame_size` splits it into HEADERS
/// followed by CONTINUATION frames, in place (RFC 9113 §4.3: "Each field block is transmitted
/// as a contiguous sequence of frames, with no interleaved frames of any other type or from any
/// other stream").
///
/// Allocates only if `dst` lacks room for the extra frame headers of a split.
///
/// # Panics
/// If `start` is not a value [`begin_block`] returned for this `dst` (a caller bug), or
/// `max_frame_size` is 0.
pub fn finish_block(
    dst: &mut Vec<u8>,
    start: usize,
    stream: StreamId,
    end_stream: bool,
    max_frame_size: u32,
) {
    let max = max_frame_size as usize;
    assert!(max > 0 && dst.len() >= start + HEAD_LEN, "finish_block without begin_block");
    let block_len = dst.len() - start - HEAD_LEN;
    let end = if end_stream { flags::END_STREAM } else { 0 };
    if block_len <= max {
        let head = Head::new(Kind::HEADERS, end | flags::END_HEADERS, stream, block_len as u32);
        dst[start..start + HEAD_LEN].copy_from_slice(&head.to_bytes());
        return;
    }
    let frames = block_len.div_ceil(max);
    let body = start + HEAD_LEN;
    dst.resize(dst.len() + (frames - 1) * HEAD_LEN, 0);
    // Move chunks back to front so no chunk overwrites one not yet moved: chunk i goes from
    // body + i*max to body + i*(max + HEAD_LEN), never to an earlier position.
    for i in (1..frames).rev() {
        let from = body + i * max;
        let len = max.min(block_len - i * max);
        let to = body + i * (max + HEAD_LEN);
        dst.copy_within(from..from + len, to);
        let last = i == frames - 1;
        let f = if last { flags::END_HEADERS } else { 0 };
        let head = Head::new(Kind::CONTINUATION, f, stream, len as u32);
        dst[to - HEAD_LEN..to].copy_from_slice(&head.to_bytes());
    }
    let head = Head::new(Kind::HEADERS, end, stream, max as u32);
    dst[start..body].copy_from_slice(&head.to_bytes());
}

#[cfg(test)]
mod tests {
    use super::{Headers, begin_block, finish_block};
    use crate::http2::error::Reason;
    use crate::http2::frame::head::{HEAD_LEN, Head, Kind, flags};
    use crate::http2::frame::priority::PrioritySpec;
    use crate::http2::stream_id::StreamId;

    #[test]
    fn decode_rules() {
        struct Case {
            flags: u8,
            stream: u32,
            payload: &'static [u8],
            expect: Result<(&'static [u8], Option<u32>), Reason>,
        }
        let p = flags::PRIORITY;
        let pad = flags::PADDED;
        let cases = [
            Case {
                flags: flags::END_HEADERS,
                stream: 1,
                payload: b"\x82\x84",
                expect: Ok((b"\x82\x84", None)),
            },
            Case { flags: 0, stream: 1, payload: b"", expect: Ok((b"", None)) },
            Case {
                flags: pad,
                stream: 1,
                payload: b"\x02\x82\x00\x00",
                expect: Ok((b"\x82", None)),
            },
            Case {
                flags: p,
                stream: 3,
                payload: b"\x00\x00\x00\x01\x10\x82",
                expect: Ok((b"\x82", Some(1))),
            },
            Case {
                flags: p | pad,
                stream: 3,
                payload: b"\x01\x80\x00\x00\x01\x10\x82\x00",
                expect: Ok((b"\x82", Some(1))),
            },
            // Priority fields cut short.
            Case {
                flags: p,
                stream: 3,
                payload: b"\x00\x00\x00\x01",
                expect: Err(Reason::FRAME_SIZE_ERROR),
            },
            Case {
                flags: p | pad,
                stream: 3,
                payload: b"\x02\x00\x00\x00\x01\x10",
                expect: Err(Reason::FRAME_SIZE_ERROR),
            },
            Case {
                flags: pad,
                stream: 1,
                payload: b"\x04\x82\x00\x00",
                expect: Err(Reason::PROTOCOL_ERROR),
            },
            Case { flags: pad, stream: 1, payload: b"", expect: Err(Reason::FRAME_SIZE_ERROR) },
            Case {
                flags: flags::END_HEADERS,
                stream: 0,
                payload: b"\x82",
                expect: Err(Reason::PROTOCOL_ERROR),
            },
        ];
        for c in cases {
            let head =
                Head::new(Kind::HEADERS, c.flags, StreamId::new(c.stream), c.payload.len() as u32);
            match (Headers::decode(head, c.payload), c.expect) {
                (Ok(h), Ok((frag, dep))) => {
                    assert_eq!(h.fragment, frag);
                    assert_eq!(h.priority.map(|p| p.dependency.get()), dep);
                    assert_eq!(h.end_headers, c.flags & flags::END_HEADERS != 0);
                }
                (Err(e), Err(r)) => assert!(e.is_connection() && e.reason() == r, "{e:?}"),
                (got, want) => panic!("{:?}: got {got:?}, want {want:?}", c.payload),
            }
        }
    }

    #[test]
    fn self_dependency_is_reported_not_refused() {
        let payload = b"\x00\x00\x00\x05\x10\x82";
        let head =
            Head::new(Kind::HEADERS, flags::PRIORITY | flags::END_HEADERS, StreamId::new(5), 6);
        let h = Headers::decode(head, payload).unwrap();
        assert!(h.depends_on_itself());
        assert_eq!(
            h.priority,
            Some(PrioritySpec { dependency: StreamId::new(5), exclusive: false, weight: 16 })
        );
    }

    /// Parses `out` as a run of frames: (head, payload) pairs.
    fn frames(mut out: &[u8]) -> Vec<(Head, Vec<u8>)> {
        let mut v = Vec::new();
        while !out.is_empty() {
            let h = Head::parse(out[..HEAD_LEN].try_into().unwrap());
            let end = HEAD_LEN + h.len as usize;
            v.push((h, out[HEAD_LEN..end].to_vec()));
            out = &out[end..];
        }
        v
    }

    #[test]
    fn a_block_is_split_into_continuations_in_place() {
        struct Case {
            block: usize,
            max: u32,
            sizes: &'static [usize],
        }
        let cases = [
            Case { block: 0, max: 4, sizes: &[0] },
            Case { block: 4, max: 4, sizes: &[4] },
            Case { block: 5, max: 4, sizes: &[4, 1] },
            Case { block: 8, max: 4, sizes: &[4, 4] },
            Case { block: 11, max: 3, sizes: &[3, 3, 3, 2] },
            Case { block: 1, max: 1, sizes: &[1] },
            Case { block: 3, max: 1, sizes: &[1, 1, 1] },
        ];
        for c in cases {
            for end_stream in [false, true] {
                let mut out = b"prefix".to_vec();
                let start = begin_block(&mut out);
                let block: Vec<u8> = (0..c.block).map(|i| i as u8).collect();
                out.extend_from_slice(&block);
                finish_block(&mut out, start, StreamId::new(9), end_stream, c.max);
                assert_eq!(&out[..6], b"prefix");
                let got = frames(&out[6..]);
                assert_eq!(got.iter().map(|(h, _)| h.len as usize).collect::<Vec<_>>(), c.sizes);
                let joined: Vec<u8> = got.iter().flat_map(|(_, p)| p.clone()).collect();
                assert_eq!(joined, block, "block {} max {}", c.block, c.max);
                for (i, (h, _)) in got.iter().enumerate() {
                    let last = i == got.len() - 1;
                    assert_eq!(h.kind, if i == 0 { Kind::HEADERS } else { Kind::CONTINUATION });
                    assert_eq!(h.has(flags::END_HEADERS), last);
                    assert_eq!(h.has(flags::END_STREAM), i == 0 && end_stream);
                    assert_eq!(h.stream, StreamId::new(9));
                }
            }
        }
    }
}
