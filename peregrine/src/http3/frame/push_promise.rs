//! PUSH_PROMISE frames (RFC 9114 §7.2.5). We never enable server push: as a client we never send
//! MAX_PUSH_ID, so a PUSH_PROMISE we receive names a push ID above the (unset) maximum, a
//! connection error H3_ID_ERROR (§4.6); as a server we answer one with H3_FRAME_UNEXPECTED ("A client MUST NOT send a PUSH_PROMISE frame. A server MUST treat
//! the receipt of a PUSH_PROMISE frame as a connection error of type H3_FRAME_UNEXPECTED").
//!
//! ```text
//! PUSH_PROMISE Frame {
//!   Type (i) = 0x05,
//!   Length (i),
//!   Push ID (i),
//!   Encoded Field Section (..),
//! }
//! ```

use super::{Head, Kind};
use crate::http3::error::{Code, Error};
use crate::http3::varint;

/// A decoded PUSH_PROMISE frame, borrowing its field section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PushPromise<'a> {
    /// The push ID.
    pub push_id: u64,
    /// The encoded field section of the promised request.
    pub section: &'a [u8],
}

impl<'a> PushPromise<'a> {
    /// Decodes a PUSH_PROMISE payload.
    ///
    /// # Errors
    /// Connection H3_FRAME_ERROR when the payload ends inside the push ID (§7.1).
    pub fn decode(payload: &'a [u8]) -> Result<PushPromise<'a>, Error> {
        let Some((push_id, n)) = varint::decode(payload) else {
            return Err(Error::connection(Code::H3_FRAME_ERROR, "PUSH_PROMISE without a push ID"));
        };
        Ok(PushPromise { push_id, section: &payload[n..] })
    }

    /// Appends the frame.
    pub fn encode(&self, dst: &mut Vec<u8>) {
        let len = varint::encoded_len(self.push_id) + self.section.len();
        Head { kind: Kind::PUSH_PROMISE, len: len as u64 }.encode(dst);
        varint::encode(self.push_id, dst);
        dst.extend_from_slice(self.section);
    }
}

#[cfg(test)]
mod tests {
    use super::PushPromise;
    use crate::http3::error::Code;
    use crate::http3::frame::{Frame, Head, decode};

    #[test]
    fn decode_and_encode() {
        let p = PushPromise { push_id: 300, section: b"\x00\x00\xd1" };
        let mut out = Vec::new();
        p.encode(&mut out);
        let (h, n) = Head::parse(&out).unwrap();
        assert_eq!(decode(h.kind, &out[n..]), Ok(Frame::PushPromise(p)));
        assert_eq!(PushPromise::decode(b"").unwrap_err().code(), Code::H3_FRAME_ERROR);
        assert_eq!(PushPromise::decode(b"\x41").unwrap_err().code(), Code::H3_FRAME_ERROR);
    }
}
