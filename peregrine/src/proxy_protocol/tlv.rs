//! Version 2 TLVs (spec §2.2: type, 16-bit big-endian length, value), checked once by the
//! parser so that iterating them later cannot fail.

use std::fmt;

use super::ProxyError;

/// A TLV's type: an open `u8` newtype, so unknown and custom types (`0xE0..=0xEF`) round-trip.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TlvType(pub u8);

impl TlvType {
    /// `PP2_TYPE_ALPN` (§2.2.1): the application protocol, as negotiated by TLS ALPN.
    pub const ALPN: TlvType = TlvType(0x01);
    /// `PP2_TYPE_AUTHORITY` (§2.2.2): the host name the client asked for (TLS SNI).
    pub const AUTHORITY: TlvType = TlvType(0x02);
    /// `PP2_TYPE_CRC32C` (§2.2.3): a checksum of the header, verified by the parser.
    pub const CRC32C: TlvType = TlvType(0x03);
    /// `PP2_TYPE_NOOP` (§2.2.4): padding.
    pub const NOOP: TlvType = TlvType(0x04);
    /// `PP2_TYPE_UNIQUE_ID` (§2.2.5): an opaque connection id, at most 128 bytes.
    pub const UNIQUE_ID: TlvType = TlvType(0x05);
    /// `PP2_TYPE_SSL` (§2.2.6): the client's TLS connection; its value holds sub-TLVs.
    pub const SSL: TlvType = TlvType(0x20);
    /// `PP2_SUBTYPE_SSL_VERSION`: the TLS version, e.g. `TLSv1.3`.
    pub const SSL_VERSION: TlvType = TlvType(0x21);
    /// `PP2_SUBTYPE_SSL_CN`: the Common Name of the client certificate's subject.
    pub const SSL_CN: TlvType = TlvType(0x22);
    /// `PP2_SUBTYPE_SSL_CIPHER`: the cipher's name, e.g. `ECDHE-RSA-AES128-GCM-SHA256`.
    pub const SSL_CIPHER: TlvType = TlvType(0x23);
    /// `PP2_SUBTYPE_SSL_SIG_ALG`: the signature algorithm of the balancer's certificate.
    pub const SSL_SIG_ALG: TlvType = TlvType(0x24);
    /// `PP2_SUBTYPE_SSL_KEY_ALG`: the key algorithm of the balancer's certificate.
    pub const SSL_KEY_ALG: TlvType = TlvType(0x25);
    /// `PP2_TYPE_NETNS` (§2.2.7): the network namespace's name.
    pub const NETNS: TlvType = TlvType(0x30);
}

impl fmt::Debug for TlvType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TlvType({:#04x})", self.0)
    }
}

/// One TLV: its type and value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tlv<'a> {
    /// The type byte.
    pub kind: TlvType,
    /// The value (of the length the TLV announced).
    pub value: &'a [u8],
}

/// The TLVs of a header, in the order sent; checked by the parser, so iteration never fails.
///
/// # Examples
/// ```
/// use peregrine::proxy_protocol::{parse, Status, TlvType};
///
/// let mut h = b"\r\n\r\n\0\r\nQUIT\n\x21\x11\x00\x16".to_vec();
/// h.extend_from_slice(&[127, 0, 0, 1, 127, 0, 0, 2, 0x30, 0x39, 0, 80]);
/// h.extend_from_slice(b"\x02\x00\x07example");
/// let Status::Complete(header) = parse(&h).unwrap() else { unreachable!() };
/// assert_eq!(header.tlvs.get(TlvType::AUTHORITY), Some(&b"example"[..]));
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct Tlvs<'a> {
    bytes: &'a [u8],
}

impl<'a> Tlvs<'a> {
    /// No TLVs (a version 1 header).
    pub(super) fn empty() -> Tlvs<'a> {
        Tlvs { bytes: &[] }
    }

    /// Wraps bytes already checked by [`check`].
    pub(super) fn checked(bytes: &'a [u8]) -> Tlvs<'a> {
        Tlvs { bytes }
    }

    /// The TLVs in the order sent.
    pub fn iter(&self) -> TlvIter<'a> {
        TlvIter { rest: self.bytes }
    }

    /// The value of the first TLV of type `kind`.
    pub fn get(&self, kind: TlvType) -> Option<&'a [u8]> {
        self.iter().find(|t| t.kind == kind).map(|t| t.value)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

impl fmt::Debug for Tlvs<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for Tlvs<'a> {
    type Item = Tlv<'a>;
    type IntoIter = TlvIter<'a>;

    fn into_iter(self) -> TlvIter<'a> {
        self.iter()
    }
}

/// An iterator over [`Tlvs`] (or the sub-TLVs of an SSL TLV's value).
#[derive(Clone, Debug)]
pub struct TlvIter<'a> {
    rest: &'a [u8],
}

impl<'a> TlvIter<'a> {
    /// The sub-TLVs of a `PP2_TYPE_SSL` value: what follows its 5-byte fixed part. Empty when
    /// the value is shorter than that.
    pub fn ssl_sub_tlvs(ssl_value: &'a [u8]) -> TlvIter<'a> {
        TlvIter { rest: ssl_value.get(SSL_FIXED..).unwrap_or_default() }
    }
}

impl<'a> Iterator for TlvIter<'a> {
    type Item = Tlv<'a>;

    fn next(&mut self) -> Option<Tlv<'a>> {
        let (tlv, rest) = split_tlv(self.rest)?;
        self.rest = rest;
        Some(tlv)
    }
}

/// The fixed part of an SSL TLV's value: `client` (1 byte) and `verify` (4 bytes).
pub(super) const SSL_FIXED: usize = 5;

/// The longest `PP2_TYPE_UNIQUE_ID` value (§2.2.5: "up to 128 bytes").
const UNIQUE_ID_MAX: usize = 128;

/// The first TLV of `bytes` and what follows it; `None` when `bytes` is empty or the TLV runs
/// past its end.
fn split_tlv(bytes: &[u8]) -> Option<(Tlv<'_>, &[u8])> {
    let (&[kind, hi, lo], rest) = bytes.split_first_chunk::<3>()?;
    let len = usize::from(u16::from_be_bytes([hi, lo]));
    let value = rest.get(..len)?;
    Some((Tlv { kind: TlvType(kind), value }, &rest[len..]))
}

/// Checks the TLVs of a header: each lies within `bytes`, and the registered types whose
/// values have a shape have it. Returns the offset of the CRC32C value within `bytes`, if the
/// header has one.
pub(super) fn check(bytes: &[u8]) -> Result<Option<usize>, ProxyError> {
    let mut rest = bytes;
    let mut crc = None;
    while !rest.is_empty() {
        let (tlv, after) = split_tlv(rest).ok_or(ProxyError::V2Tlv)?;
        let ok = match tlv.kind {
            // §2.2.3: "a 32-bit number".
            // The value's offset is taken only once it is known to be those 4 bytes: a shorter
            // value at the start of the TLVs would put it before offset 0.
            TlvType::CRC32C => {
                let whole = tlv.value.len() == 4;
                if whole {
                    crc = Some(bytes.len() - after.len() - 4);
                }
                whole
            }
            TlvType::UNIQUE_ID => tlv.value.len() <= UNIQUE_ID_MAX,
            // §2.2.6: `client` and `verify`, then sub-TLVs filling the rest exactly.
            TlvType::SSL => tlv.value.len() >= SSL_FIXED && sub_tlvs_fit(&tlv.value[SSL_FIXED..]),
            _ => true,
        };
        if !ok {
            return Err(ProxyError::V2Tlv);
        }
        rest = after;
    }
    Ok(crc)
}

/// Whether `bytes` is a sequence of whole TLVs.
fn sub_tlvs_fit(mut bytes: &[u8]) -> bool {
    while !bytes.is_empty() {
        match split_tlv(bytes) {
            Some((_, rest)) => bytes = rest,
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_bounds_and_shapes() {
        struct Case {
            input: &'static [u8],
            expect: Result<Option<usize>, ProxyError>,
        }
        let cases = [
            Case { input: b"", expect: Ok(None) },
            Case { input: b"\x04\x00\x00", expect: Ok(None) },
            Case { input: b"\x02\x00\x03abc\x01\x00\x02h2", expect: Ok(None) },
            Case { input: b"\x04\x00\x00\x03\x00\x04\0\0\0\0", expect: Ok(Some(6)) },
            Case { input: b"\x02\x00\x04abc", expect: Err(ProxyError::V2Tlv) },
            Case { input: b"\x02\x00", expect: Err(ProxyError::V2Tlv) },
            Case { input: b"\x03\x00\x03\0\0\0", expect: Err(ProxyError::V2Tlv) },
            // A CRC32C TLV shorter than its 4 bytes at the start of the TLVs: refused, not an
            // offset computed below zero (found by the proxy_protocol fuzz target).
            Case { input: b"\x03\x00\x00", expect: Err(ProxyError::V2Tlv) },
            Case { input: b"\x03\x00\x01\x7f", expect: Err(ProxyError::V2Tlv) },
            Case { input: b"\x20\x00\x04\x01\0\0\0", expect: Err(ProxyError::V2Tlv) },
            Case { input: b"\x20\x00\x05\x01\0\0\0\0", expect: Ok(None) },
            Case { input: b"\x20\x00\x0d\x01\0\0\0\0\x21\x00\x05TLSv1", expect: Ok(None) },
            Case {
                input: b"\x20\x00\x10\x01\0\0\0\0\x21\x00\x05TLSv1\x04\x00\x00",
                expect: Ok(None),
            },
            Case {
                input: b"\x20\x00\x0c\x01\0\0\0\0\x21\x00\x05TLS1",
                expect: Err(ProxyError::V2Tlv),
            },
            Case { input: b"\x20\x00\x0c\x01\0\0\0\0\x21\x00\x04TLS1", expect: Ok(None) },
        ];
        for case in cases {
            assert_eq!(check(case.input), case.expect, "{:?}", case.input);
        }
        let mut id = vec![0x05, 0x00, 129];
        id.resize(3 + 129, b'x');
        assert_eq!(check(&id), Err(ProxyError::V2Tlv));
        id[2] = 128;
        id.pop();
        assert_eq!(check(&id), Ok(None));
    }

    #[test]
    fn iterates_what_was_checked() {
        let bytes = b"\x02\x00\x03abc\xe5\x00\x00\x20\x00\x0c\x05\0\0\0\x01\x22\x00\x04alice";
        let tlvs = Tlvs::checked(&bytes[..bytes.len() - 1]);
        let kinds: Vec<u8> = tlvs.iter().map(|t| t.kind.0).collect();
        assert_eq!(kinds, [0x02, 0xe5, 0x20]);
        let ssl = tlvs.get(TlvType::SSL).unwrap();
        let sub: Vec<_> = TlvIter::ssl_sub_tlvs(ssl).collect();
        assert_eq!(sub, [Tlv { kind: TlvType::SSL_CN, value: b"alic" }]);
        assert_eq!(tlvs.get(TlvType::ALPN), None);
    }
}
