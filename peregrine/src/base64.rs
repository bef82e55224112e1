//! Base64 (RFC 4648), for the places HTTP carries it: decoding Basic credentials (RFC 7617 §2:
//! the standard alphabet, padded), `HTTP2-Settings` (RFC 7540 §3.2.1: the URL-safe alphabet,
//! padding omitted) and `Sec-WebSocket-Key`; encoding the WebSocket handshake's key and accept
//! values (RFC 6455 §4.1, §4.2.2: the standard alphabet, padded). Each caller states its
//! alphabet and how strict to be.

/// Which 64 characters encode the sextets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Alphabet {
    /// RFC 4648 §4: `A-Z a-z 0-9 + /`.
    Standard,
    /// RFC 4648 §5: `A-Z a-z 0-9 - _`.
    UrlSafe,
}

/// Whether the `=` padding must be there (RFC 4648 §3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Padding {
    /// The length is a multiple of four, the last group completed with `=`.
    Required,
    /// Padding may be left out; where present it completes the last group.
    Optional,
}

/// Whether the unused bits of the last character must be zero (RFC 4648 §3.5: decoders "MAY"
/// reject an encoding whose pad bits are not, so only the canonical encoding is accepted).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PadBits {
    /// Any value: they are dropped.
    Any,
    /// Zero, or the input is refused.
    Zero,
}

/// Decodes `s`. `None` for a character outside the alphabet, `=` anywhere but as one or two
/// characters completing the last group to four, padding missing where it is required, a last
/// group of a single character (it carries no whole octet), or pad bits refused.
pub(crate) fn decode(
    s: &[u8],
    alphabet: Alphabet,
    padding: Padding,
    pad_bits: PadBits,
) -> Option<Vec<u8>> {
    let pad = s.iter().rev().take_while(|&&b| b == b'=').count();
    let whole_groups = s.len() % 4 == 0;
    if pad > 2 || (pad > 0 && !whole_groups) || (padding == Padding::Required && !whole_groups) {
        return None;
    }
    let data = &s[..s.len() - pad];
    if data.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(data.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for &b in data {
        acc = (acc << 6) | u32::from(sextet(b, alphabet)?);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    if pad_bits == PadBits::Zero && acc & ((1 << bits) - 1) != 0 {
        return None;
    }
    Some(out)
}

/// The characters of the standard alphabet, by sextet value (RFC 4648 Table 1).
const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Encodes `N` octets with the standard alphabet, padded, into `out` (`M` = 4 * ceil(N / 3)
/// characters, checked at compile time): fixed-size values (a WebSocket key, a SHA-1 digest)
/// encoded on the stack.
pub(crate) fn encode_padded<const N: usize, const M: usize>(input: &[u8; N]) -> [u8; M] {
    const { assert!(M == N.div_ceil(3) * 4, "M must be 4 * ceil(N / 3)") };
    let mut out = [b'='; M];
    for (group, dst) in input.chunks(3).zip(out.chunks_mut(4)) {
        let b = [group[0], *group.get(1).unwrap_or(&0), *group.get(2).unwrap_or(&0)];
        let word = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        // One character per sextet the group's octets reach: 2, 3 or 4; `=` fills the rest.
        for (i, c) in dst.iter_mut().take(group.len() + 1).enumerate() {
            *c = STANDARD[(word >> (18 - 6 * i)) as usize & 63];
        }
    }
    out
}

/// The value of one base64 character (RFC 4648 Table 1, Table 2).
fn sextet(b: u8, alphabet: Alphabet) -> Option<u8> {
    Some(match (b, alphabet) {
        (b'A'..=b'Z', _) => b - b'A',
        (b'a'..=b'z', _) => b - b'a' + 26,
        (b'0'..=b'9', _) => b - b'0' + 52,
        (b'+', Alphabet::Standard) | (b'-', Alphabet::UrlSafe) => 62,
        (b'/', Alphabet::Standard) | (b'_', Alphabet::UrlSafe) => 63,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 4648 §10's test vectors, and what each rule refuses.
    #[test]
    fn rfc4648_10_and_the_rules() {
        struct Case {
            input: &'static [u8],
            alphabet: Alphabet,
            padding: Padding,
            pad_bits: PadBits,
            expect: Option<&'static [u8]>,
        }
        use Alphabet::{Standard, UrlSafe};
        use PadBits::{Any, Zero};
        use Padding::{Optional, Required};
        let case = |input, alphabet, padding, pad_bits, expect| Case {
            input,
            alphabet,
            padding,
            pad_bits,
            expect,
        };
        let cases = [
            case(b"", Standard, Required, Any, Some(b"")),
            case(b"Zg==", Standard, Required, Any, Some(b"f")),
            case(b"Zm8=", Standard, Required, Any, Some(b"fo")),
            case(b"Zm9v", Standard, Required, Any, Some(b"foo")),
            case(b"Zm9vYg==", Standard, Required, Any, Some(b"foob")),
            case(b"Zm9vYmE=", Standard, Required, Any, Some(b"fooba")),
            case(b"Zm9vYmFy", Standard, Required, Any, Some(b"foobar")),
            case(b"Zm9vYg", Standard, Required, Any, None),
            case(b"Zm9vYg", Standard, Optional, Any, Some(b"foob")),
            case(b"Zm9vYg=", Standard, Optional, Any, None),
            case(b"Zm9vY", Standard, Optional, Any, None),
            case(b"Z===", Standard, Required, Any, None),
            case(b"Zg=a", Standard, Required, Any, None),
            case(b"Zg==Zg==", Standard, Required, Any, None),
            case(b"Zh==", Standard, Required, Any, Some(b"f")),
            case(b"Zh==", Standard, Required, Zero, None),
            case(b"+/8=", Standard, Required, Any, Some(&[0xfb, 0xff])),
            case(b"+/8=", UrlSafe, Required, Any, None),
            case(b"-_8", UrlSafe, Optional, Zero, Some(&[0xfb, 0xff])),
            case(b"-_8", Standard, Optional, Zero, None),
            case(b"Zm9v!A==", Standard, Required, Any, None),
        ];
        for c in cases {
            let got = decode(c.input, c.alphabet, c.padding, c.pad_bits);
            assert_eq!(got.as_deref(), c.expect, "{:?}", String::from_utf8_lossy(c.input));
        }
    }

    /// RFC 4648 §10's vectors encoded, and decoded back.
    #[test]
    fn encode_rfc4648_10() {
        assert_eq!(&encode_padded::<1, 4>(b"f"), b"Zg==");
        assert_eq!(&encode_padded::<2, 4>(b"fo"), b"Zm8=");
        assert_eq!(&encode_padded::<3, 4>(b"foo"), b"Zm9v");
        assert_eq!(&encode_padded::<4, 8>(b"foob"), b"Zm9vYg==");
        assert_eq!(&encode_padded::<5, 8>(b"fooba"), b"Zm9vYmE=");
        assert_eq!(&encode_padded::<6, 8>(b"foobar"), b"Zm9vYmFy");
        assert_eq!(&encode_padded::<2, 4>(&[0xfb, 0xff]), b"+/8=");
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..100 {
            let mut raw = [0u8; 16];
            for b in &mut raw {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = x as u8;
            }
            let enc = encode_padded::<16, 24>(&raw);
            let dec = decode(&enc, Alphabet::Standard, Padding::Required, PadBits::Zero);
            assert_eq!(dec.as_deref(), Some(&raw[..]));
        }
    }
}
