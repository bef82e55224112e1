//! The frame header codec (RFC 6455 §5.2).
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-------+-+-------------+-------------------------------+
//! |F|R|R|R| opcode|M| Payload len |    Extended payload length    |
//! |I|S|S|S|  (4)  |A|     (7)     |             (16/64)           |
//! |N|V|V|V|       |S|             |   (if payload len==126/127)   |
//! | |1|2|3|       |K|             |                               |
//! +-+-+-+-+-------+-+-------------+ - - - - - - - - - - - - - - - +
//! |     Extended payload length continued, if payload len == 127  |
//! + - - - - - - - - - - - - - - - +-------------------------------+
//! |                               |Masking-key, if MASK set to 1  |
//! +-------------------------------+-------------------------------+
//! ```
//!
//! Decoding checks every rule a header alone can break, each as soon as the octets that carry
//! it have arrived: a hostile header fails before its payload is buffered.
//!
//! Length encodings: RFC 6455 §5.2 says "the minimal number of bytes MUST be used to encode
//! the length", a duty of the sender that names no action for a receiver. We always encode the
//! minimal form and accept the others (a 16-bit length under 126, a 64-bit one under 65,536),
//! as Autobahn's test suite and the common implementations do.

use super::error::Error;

/// The longest payload of a control frame (RFC 6455 §5.5).
pub const MAX_CONTROL_PAYLOAD: usize = 125;

/// The longest header: 2 octets, a 64-bit length, a masking key.
pub const MAX_HEADER: usize = 14;

/// A frame's opcode (RFC 6455 §5.2, §11.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Opcode {
    /// 0x0: the continuation of a fragmented message.
    Continuation,
    /// 0x1: the first frame of a text message.
    Text,
    /// 0x2: the first frame of a binary message.
    Binary,
    /// 0x8: a Close frame.
    Close,
    /// 0x9: a Ping frame.
    Ping,
    /// 0xA: a Pong frame.
    Pong,
}

impl Opcode {
    /// The opcode of a 4-bit value, or `None` for a reserved one (0x3-0x7, 0xB-0xF).
    pub const fn from_bits(bits: u8) -> Option<Opcode> {
        Some(match bits {
            0x0 => Opcode::Continuation,
            0x1 => Opcode::Text,
            0x2 => Opcode::Binary,
            0x8 => Opcode::Close,
            0x9 => Opcode::Ping,
            0xa => Opcode::Pong,
            _ => return None,
        })
    }

    /// The 4-bit value.
    pub const fn bits(self) -> u8 {
        match self {
            Opcode::Continuation => 0x0,
            Opcode::Text => 0x1,
            Opcode::Binary => 0x2,
            Opcode::Close => 0x8,
            Opcode::Ping => 0x9,
            Opcode::Pong => 0xa,
        }
    }

    /// Whether this is a control opcode (RFC 6455 §5.5: "the most significant bit of the
    /// opcode is 1").
    pub const fn is_control(self) -> bool {
        self.bits() & 0x8 != 0
    }
}

/// A frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// FIN: the final fragment of a message.
    pub fin: bool,
    /// RSV1: with permessage-deflate, "Per-Message Compressed" on a message's first frame
    /// (RFC 7692 §6).
    pub rsv1: bool,
    /// The opcode.
    pub opcode: Opcode,
    /// The masking key, when the MASK bit is set.
    pub mask: Option<[u8; 4]>,
    /// The payload length.
    pub len: u64,
}

/// What a decoder accepts besides the fixed rules: the endpoint's role and extensions, and
/// its limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    /// Frames must be masked (we are the server) or must not be (we are the client).
    pub masked: bool,
    /// An extension (permessage-deflate) gave RSV1 a meaning on a message's first frame.
    pub rsv1: bool,
    /// The longest payload accepted.
    pub max_len: u64,
}

impl Header {
    /// Decodes a header from the start of `buf`: `Ok(None)` while `buf` holds too few octets
    /// to decide (any split of the input is accepted), else the header and its length.
    ///
    /// # Errors
    /// Each rule of RFC 6455 §5.2 and §5.5 a header can break, and the length limit, as soon
    /// as the octets that carry it are in `buf` (see [`Error`] for the codes):
    /// [`Error::ReservedBits`], [`Error::UnknownOpcode`], [`Error::FragmentedControl`],
    /// [`Error::ControlTooLong`], [`Error::Unmasked`], [`Error::Masked`], [`Error::BadLength`],
    /// [`Error::FrameTooBig`].
    ///
    /// # Examples
    /// ```
    /// use peregrine::ws::frame::{Header, Opcode, Rules};
    /// let rules = Rules { masked: false, rsv1: false, max_len: 1 << 20 };
    /// let (h, n) = Header::decode(b"\x81\x05hello", rules).unwrap().unwrap();
    /// assert_eq!((h.opcode, h.fin, h.len, n), (Opcode::Text, true, 5, 2));
    /// assert_eq!(Header::decode(b"\x81", rules), Ok(None));
    /// ```
    pub fn decode(buf: &[u8], rules: Rules) -> Result<Option<(Header, usize)>, Error> {
        let Some(&b0) = buf.first() else { return Ok(None) };
        let fin = b0 & 0x80 != 0;
        let rsv1 = b0 & 0x40 != 0;
        // RFC 6455 §5.2: RSV1-3 "MUST be 0 unless an extension is negotiated that defines
        // meanings for non-zero values"; only permessage-deflate's RSV1 has one.
        if b0 & 0x30 != 0 || (rsv1 && !rules.rsv1) {
            return Err(Error::ReservedBits);
        }
        // "If an unknown opcode is received, the receiving endpoint MUST _Fail the WebSocket
        // Connection_."
        let opcode = Opcode::from_bits(b0 & 0x0f).ok_or(Error::UnknownOpcode)?;
        // RFC 7692 §6.1: RSV1 is set on the first frame of a compressed message only: never
        // on a control frame or a continuation.
        if rsv1 && (opcode.is_control() || opcode == Opcode::Continuation) {
            return Err(Error::ReservedBits);
        }
        // RFC 6455 §5.5: "Control frames ... MUST NOT be fragmented."
        if opcode.is_control() && !fin {
            return Err(Error::FragmentedControl);
        }
        let Some(&b1) = buf.get(1) else { return Ok(None) };
        let masked = b1 & 0x80 != 0;
        // RFC 6455 §5.1: "The server MUST close the connection upon receiving a frame that is
        // not masked" and "A client MUST close a connection if it detects a masked frame."
        if masked != rules.masked {
            return Err(if rules.masked { Error::Unmasked } else { Error::Masked });
        }
        let len7 = b1 & 0x7f;
        // RFC 6455 §5.5: "All control frames MUST have a payload length of 125 bytes or less".
        if opcode.is_control() && len7 > 125 {
            return Err(Error::ControlTooLong);
        }
        let (len, mut at) = match len7 {
            126 => {
                let Some(b) = buf.get(2..4) else { return Ok(None) };
                (u64::from(u16::from_be_bytes([b[0], b[1]])), 4)
            }
            127 => {
                let Some(b) = buf.get(2..10) else { return Ok(None) };
                let len = u64::from_be_bytes(b.try_into().unwrap_or_default());
                // RFC 6455 §5.2: "the most significant bit MUST be 0".
                if len >> 63 != 0 {
                    return Err(Error::BadLength);
                }
                (len, 10)
            }
            n => (u64::from(n), 2),
        };
        if len > rules.max_len {
            return Err(Error::FrameTooBig);
        }
        let mask = if masked {
            let Some(k) = buf.get(at..at + 4) else { return Ok(None) };
            at += 4;
            Some([k[0], k[1], k[2], k[3]])
        } else {
            None
        };
        Ok(Some((Header { fin, rsv1, opcode, mask, len }, at)))
    }

    /// Encodes this header, with the minimal length encoding (RFC 6455 §5.2), on the stack.
    ///
    /// # Examples
    /// ```
    /// use peregrine::ws::frame::{Header, Opcode};
    /// let h = Header { fin: true, rsv1: false, opcode: Opcode::Binary, mask: None, len: 300 };
    /// assert_eq!(h.encode().as_bytes(), b"\x82\x7e\x01\x2c");
    /// ```
    pub fn encode(&self) -> Encoded {
        let mut buf = [0; MAX_HEADER];
        buf[0] = (u8::from(self.fin) << 7) | (u8::from(self.rsv1) << 6) | self.opcode.bits();
        let mask_bit = if self.mask.is_some() { 0x80 } else { 0 };
        let mut at = match self.len {
            0..=125 => {
                buf[1] = mask_bit | self.len as u8;
                2
            }
            126..=0xffff => {
                buf[1] = mask_bit | 126;
                buf[2..4].copy_from_slice(&(self.len as u16).to_be_bytes());
                4
            }
            _ => {
                buf[1] = mask_bit | 127;
                buf[2..10].copy_from_slice(&self.len.to_be_bytes());
                10
            }
        };
        if let Some(key) = self.mask {
            buf[at..at + 4].copy_from_slice(&key);
            at += 4;
        }
        Encoded { buf, len: at as u8 }
    }
}

/// An encoded header, on the stack.
#[derive(Clone, Copy, Debug)]
pub struct Encoded {
    buf: [u8; MAX_HEADER],
    len: u8,
}

impl Encoded {
    /// The header's octets.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..usize::from(self.len)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SERVER: Rules = Rules { masked: true, rsv1: false, max_len: 1 << 20 };
    const CLIENT: Rules = Rules { masked: false, rsv1: false, max_len: 1 << 20 };
    const DEFLATE: Rules = Rules { masked: false, rsv1: true, max_len: 1 << 20 };

    fn h(fin: bool, rsv1: bool, opcode: Opcode, mask: Option<[u8; 4]>, len: u64) -> Header {
        Header { fin, rsv1, opcode, mask, len }
    }

    struct Case {
        input: &'static [u8],
        rules: Rules,
        expect: Result<(Header, usize), Error>,
    }

    /// Every row is decoded whole and from every prefix: a prefix is `Ok(None)` until the
    /// row's octets decide it, and an error appears as soon as the octets carrying it do.
    #[test]
    fn decode_rfc6455_5_2() {
        use Opcode::*;
        let key = Some(*b"\x01\x02\x03\x04");
        let cases = [
            Case {
                input: b"\x81\x05",
                rules: CLIENT,
                expect: Ok((h(true, false, Text, None, 5), 2)),
            },
            Case {
                input: b"\x01\x00",
                rules: CLIENT,
                expect: Ok((h(false, false, Text, None, 0), 2)),
            },
            Case {
                input: b"\x80\x7d",
                rules: CLIENT,
                expect: Ok((h(true, false, Continuation, None, 125), 2)),
            },
            Case {
                input: b"\x82\x7e\x01\x00",
                rules: CLIENT,
                expect: Ok((h(true, false, Binary, None, 256), 4)),
            },
            Case {
                input: b"\x82\x7f\x00\x00\x00\x00\x00\x01\x00\x00",
                rules: CLIENT,
                expect: Ok((h(true, false, Binary, None, 65536), 10)),
            },
            // Non-minimal length encodings are accepted.
            Case {
                input: b"\x82\x7e\x00\x05",
                rules: CLIENT,
                expect: Ok((h(true, false, Binary, None, 5), 4)),
            },
            Case {
                input: b"\x82\x7f\x00\x00\x00\x00\x00\x00\x00\x05",
                rules: CLIENT,
                expect: Ok((h(true, false, Binary, None, 5), 10)),
            },
            Case {
                input: b"\x89\x80\x01\x02\x03\x04",
                rules: SERVER,
                expect: Ok((h(true, false, Ping, key, 0), 6)),
            },
            Case {
                input: b"\x8a\xfd\x01\x02\x03\x04",
                rules: SERVER,
                expect: Ok((h(true, false, Pong, key, 125), 6)),
            },
            Case {
                input: b"\x88\x82\x01\x02\x03\x04",
                rules: SERVER,
                expect: Ok((h(true, false, Close, key, 2), 6)),
            },
            Case {
                input: b"\x82\xfe\x01\x00\x01\x02\x03\x04",
                rules: SERVER,
                expect: Ok((h(true, false, Binary, key, 256), 8)),
            },
            Case {
                input: b"\xc1\x05",
                rules: DEFLATE,
                expect: Ok((h(true, true, Text, None, 5), 2)),
            },
            // RSV bits.
            Case { input: b"\xc1\x05", rules: CLIENT, expect: Err(Error::ReservedBits) },
            Case { input: b"\xa1\x05", rules: DEFLATE, expect: Err(Error::ReservedBits) },
            Case { input: b"\x91\x05", rules: DEFLATE, expect: Err(Error::ReservedBits) },
            Case { input: b"\xc0\x05", rules: DEFLATE, expect: Err(Error::ReservedBits) },
            Case { input: b"\xc9\x05", rules: DEFLATE, expect: Err(Error::ReservedBits) },
            // Reserved opcodes.
            Case { input: b"\x83\x00", rules: CLIENT, expect: Err(Error::UnknownOpcode) },
            Case { input: b"\x87\x00", rules: CLIENT, expect: Err(Error::UnknownOpcode) },
            Case { input: b"\x8b\x00", rules: CLIENT, expect: Err(Error::UnknownOpcode) },
            Case { input: b"\x8f\x00", rules: CLIENT, expect: Err(Error::UnknownOpcode) },
            // Control frames: never fragmented, at most 125 octets.
            Case { input: b"\x09\x00", rules: CLIENT, expect: Err(Error::FragmentedControl) },
            Case { input: b"\x08\x00", rules: CLIENT, expect: Err(Error::FragmentedControl) },
            Case { input: b"\x89\x7e\x00\x7e", rules: CLIENT, expect: Err(Error::ControlTooLong) },
            Case {
                input: b"\x88\x7f\x00\x00\x00\x00\x00\x00\x00\x00",
                rules: CLIENT,
                expect: Err(Error::ControlTooLong),
            },
            // Masking by role.
            Case { input: b"\x81\x05", rules: SERVER, expect: Err(Error::Unmasked) },
            Case { input: b"\x81\x85\x01\x02\x03\x04", rules: CLIENT, expect: Err(Error::Masked) },
            // 2^63 (the most significant bit set), and 2^62 over the limit.
            Case {
                input: b"\x82\x7f\x80\x00\x00\x00\x00\x00\x00\x00",
                rules: CLIENT,
                expect: Err(Error::BadLength),
            },
            Case {
                input: b"\x82\x7f\xff\xff\xff\xff\xff\xff\xff\xff",
                rules: CLIENT,
                expect: Err(Error::BadLength),
            },
            Case {
                input: b"\x82\x7f\x40\x00\x00\x00\x00\x00\x00\x00",
                rules: CLIENT,
                expect: Err(Error::FrameTooBig),
            },
            Case {
                input: b"\x82\x7f\x00\x00\x00\x00\x00\x10\x00\x01",
                rules: CLIENT,
                expect: Err(Error::FrameTooBig),
            },
        ];
        for c in &cases {
            assert_eq!(Header::decode(c.input, c.rules), c.expect.map(Some), "{:x?}", c.input);
            // Every shorter prefix: undecided, or the same error once its octets are there.
            for cut in 0..c.input.len() {
                let got = Header::decode(&c.input[..cut], c.rules);
                match (got, c.expect) {
                    (Ok(None), _) => {}
                    (Err(e), Err(want)) => assert_eq!(e, want, "{:x?} cut at {cut}", c.input),
                    (got, _) => panic!("{:x?} cut at {cut}: {got:?}", c.input),
                }
            }
        }
        // Errors carried by the first two octets appear before any length or key octet.
        assert_eq!(Header::decode(b"\x09", CLIENT), Err(Error::FragmentedControl));
        assert_eq!(Header::decode(b"\x83", CLIENT), Err(Error::UnknownOpcode));
        assert_eq!(Header::decode(b"\x81\x05", SERVER), Err(Error::Unmasked));
        assert_eq!(Header::decode(b"\x89\xfe", SERVER), Err(Error::ControlTooLong));
    }

    /// Encoding uses the minimal length form and decodes back to the same header.
    #[test]
    fn encode_round_trips_with_minimal_lengths() {
        let lens = [0u64, 1, 125, 126, 127, 0xffff, 0x1_0000, 1 << 32, (1 << 63) - 1];
        for len in lens {
            for mask in [None, Some([9, 8, 7, 6])] {
                for (fin, rsv1) in [(true, false), (false, true)] {
                    let hd = h(fin, rsv1, Opcode::Binary, mask, len);
                    let enc = hd.encode();
                    let want =
                        2 + if len < 126 {
                            0
                        } else if len <= 0xffff {
                            2
                        } else {
                            8
                        } + if mask.is_some() { 4 } else { 0 };
                    assert_eq!(enc.as_bytes().len(), want, "{len}");
                    let rules = Rules { masked: mask.is_some(), rsv1: true, max_len: u64::MAX };
                    assert_eq!(Header::decode(enc.as_bytes(), rules), Ok(Some((hd, want))));
                }
            }
        }
    }
}
