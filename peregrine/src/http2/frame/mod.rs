//! HTTP/2 frames (RFC 9113 §4, §6): one file per frame type, each with `decode(head, payload)`
//! beside the RFC sentence of every size and flag rule, and an `encode` appending to a
//! `Vec<u8>`.
//!
//! Decoding borrows the payload (no allocation). Errors say their scope ([`Error`]); where a
//! frame's legality depends on connection state (a CONTINUATION's place, a frame on a closed
//! stream) the connection decides, not the frame.
//!
//! # Examples
//! ```
//! use peregrine::http2::frame::{self, Frame, Head, HEAD_LEN};
//! let bytes = b"\x00\x00\x08\x06\x00\x00\x00\x00\x00pingpong";
//! let head = Head::parse(bytes[..HEAD_LEN].try_into().unwrap());
//! let Ok(Frame::Ping(ping)) = frame::decode(head, &bytes[HEAD_LEN..]) else { panic!() };
//! assert_eq!(&ping.payload, b"pingpong");
//! ```

pub mod continuation;
pub mod data;
pub mod goaway;
pub mod head;
pub mod headers;
pub mod padding;
pub mod ping;
pub mod priority;
pub mod push_promise;
pub mod rst_stream;
pub mod settings;
pub mod window_update;

pub use continuation::Continuation;
pub use data::Data;
pub use goaway::GoAway;
pub use head::{DEFAULT_MAX_FRAME_SIZE, HEAD_LEN, Head, Kind, MAX_MAX_FRAME_SIZE, flags};
pub use headers::Headers;
pub use ping::Ping;
pub use priority::{Priority, PrioritySpec};
pub use push_promise::PushPromise;
pub use rst_stream::RstStream;
pub use settings::{SettingId, Settings};
pub use window_update::WindowUpdate;

use crate::http2::error::Error;

/// A decoded frame, borrowing its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame<'a> {
    /// DATA (§6.1).
    Data(Data<'a>),
    /// HEADERS (§6.2).
    Headers(Headers<'a>),
    /// PRIORITY (§6.3).
    Priority(Priority),
    /// RST_STREAM (§6.4).
    RstStream(RstStream),
    /// SETTINGS (§6.5).
    Settings(Settings<'a>),
    /// PUSH_PROMISE (§6.6).
    PushPromise(PushPromise<'a>),
    /// PING (§6.7).
    Ping(Ping),
    /// GOAWAY (§6.8).
    GoAway(GoAway<'a>),
    /// WINDOW_UPDATE (§6.9).
    WindowUpdate(WindowUpdate),
    /// CONTINUATION (§6.10).
    Continuation(Continuation<'a>),
    /// A type RFC 9113 does not define: RFC 9113 §4.1 "Implementations MUST ignore and
    /// discard frames of unknown types" (except inside a field block: the connection's rule).
    Unknown(Head),
}

/// Decodes one whole frame: `payload` is the `head.len` octets after the header.
///
/// The caller checks `head.len` against its SETTINGS_MAX_FRAME_SIZE first
/// ([`Head::check_len`]), before reading the payload.
///
/// # Errors
/// The size, stream-id, padding and value rules of each frame type; see each type's `decode`.
pub fn decode(head: Head, payload: &[u8]) -> Result<Frame<'_>, Error> {
    Ok(match head.kind {
        Kind::DATA => Frame::Data(Data::decode(head, payload)?),
        Kind::HEADERS => Frame::Headers(Headers::decode(head, payload)?),
        Kind::PRIORITY => Frame::Priority(Priority::decode(head, payload)?),
        Kind::RST_STREAM => Frame::RstStream(RstStream::decode(head, payload)?),
        Kind::SETTINGS => Frame::Settings(Settings::decode(head, payload)?),
        Kind::PUSH_PROMISE => Frame::PushPromise(PushPromise::decode(head, payload)?),
        Kind::PING => Frame::Ping(Ping::decode(head, payload)?),
        Kind::GOAWAY => Frame::GoAway(GoAway::decode(head, payload)?),
        Kind::WINDOW_UPDATE => Frame::WindowUpdate(WindowUpdate::decode(head, payload)?),
        Kind::CONTINUATION => Frame::Continuation(Continuation::decode(head, payload)?),
        _ => Frame::Unknown(head),
    })
}

#[cfg(test)]
mod tests {
    use super::{Frame, HEAD_LEN, Head, decode};
    use crate::http2::error::Reason;

    #[test]
    fn each_type_dispatches_and_unknown_types_are_kept_for_discarding() {
        struct Case {
            bytes: &'static [u8],
            expect: Result<&'static str, Reason>,
        }
        let cases = [
            Case { bytes: b"\x00\x00\x01\x00\x01\x00\x00\x00\x01x", expect: Ok("Data") },
            Case { bytes: b"\x00\x00\x01\x01\x04\x00\x00\x00\x01\x82", expect: Ok("Headers") },
            Case {
                bytes: b"\x00\x00\x05\x02\x00\x00\x00\x00\x03\x00\x00\x00\x01\x10",
                expect: Ok("Priority"),
            },
            Case {
                bytes: b"\x00\x00\x04\x03\x00\x00\x00\x00\x01\x00\x00\x00\x08",
                expect: Ok("RstStream"),
            },
            Case { bytes: b"\x00\x00\x00\x04\x01\x00\x00\x00\x00", expect: Ok("Settings") },
            Case {
                bytes: b"\x00\x00\x04\x05\x04\x00\x00\x00\x01\x00\x00\x00\x02",
                expect: Ok("PushPromise"),
            },
            Case { bytes: b"\x00\x00\x08\x06\x00\x00\x00\x00\x0012345678", expect: Ok("Ping") },
            Case {
                bytes: b"\x00\x00\x08\x07\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00",
                expect: Ok("GoAway"),
            },
            Case {
                bytes: b"\x00\x00\x04\x08\x00\x00\x00\x00\x00\x00\x00\x00\x01",
                expect: Ok("WindowUpdate"),
            },
            Case { bytes: b"\x00\x00\x01\x09\x04\x00\x00\x00\x01\x82", expect: Ok("Continuation") },
            // Unknown type 0x16 with any flags and stream: kept, never an error (§4.1, §5.5).
            Case { bytes: b"\x00\x00\x02\x16\xff\x00\x00\x00\x00ab", expect: Ok("Unknown") },
            Case {
                bytes: b"\x00\x00\x08\x06\x00\x00\x00\x00\x011234567",
                expect: Err(Reason::PROTOCOL_ERROR),
            },
        ];
        for c in cases {
            let head = Head::parse(c.bytes[..HEAD_LEN].try_into().unwrap());
            let payload = &c.bytes[HEAD_LEN..];
            match (decode(head, payload), c.expect) {
                (Ok(f), Ok(name)) => {
                    let dbg = format!("{f:?}");
                    assert!(dbg.starts_with(name), "{dbg}");
                    if let Frame::Unknown(h) = f {
                        assert_eq!(h.kind.0, 0x16);
                    }
                }
                (Err(e), Err(r)) => assert_eq!(e.reason(), r),
                (got, want) => panic!("{:?}: got {got:?}, want {want:?}", c.bytes),
            }
        }
    }
}
