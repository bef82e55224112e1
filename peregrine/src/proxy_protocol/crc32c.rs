//! CRC32C (Castagnoli, RFC 4960 Appendix B), the checksum of the PROXY v2 `CRC32C` TLV.
//!
//! Byte-at-a-time over a table: a header is at most [`super::V2_MAX_LEN`] bytes and is checked
//! once per connection, only when the balancer sends the TLV.

/// The reflected Castagnoli polynomial (RFC 4960 Appendix B).
const POLY: u32 = 0x82F6_3B78;

/// The remainder of every byte value, built at compile time.
const TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ POLY } else { crc >> 1 };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

/// A running CRC32C: feed bytes with [`Crc32c::update`], read it with [`Crc32c::finish`].
#[derive(Clone, Copy, Debug)]
pub(super) struct Crc32c(u32);

impl Crc32c {
    pub(super) fn new() -> Crc32c {
        Crc32c(!0)
    }

    pub(super) fn update(mut self, bytes: &[u8]) -> Crc32c {
        for &b in bytes {
            self.0 = TABLE[usize::from((self.0 as u8) ^ b)] ^ (self.0 >> 8);
        }
        self
    }

    pub(super) fn finish(self) -> u32 {
        !self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The check values of RFC 3720 Appendix B.4 (iSCSI uses the same CRC32C) and the
    /// catalogue's "123456789".
    #[test]
    fn known_values() {
        struct Case {
            input: &'static [u8],
            expect: u32,
        }
        let cases = [
            Case { input: b"", expect: 0 },
            Case { input: b"123456789", expect: 0xE306_9283 },
            Case { input: &[0; 32], expect: 0x8A91_36AA },
            Case { input: &[0xff; 32], expect: 0x62A8_AB43 },
        ];
        for case in cases {
            assert_eq!(Crc32c::new().update(case.input).finish(), case.expect, "{:?}", case.input);
        }
        let ascending: Vec<u8> = (0..32).collect();
        assert_eq!(Crc32c::new().update(&ascending).finish(), 0x46DD_794E);
        // Fed in pieces, the same value.
        assert_eq!(Crc32c::new().update(b"1234").update(b"56789").finish(), 0xE306_9283);
    }
}
