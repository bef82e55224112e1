use super::codes::{CODES, EOS, LENGTHS, decode_one};
use super::*;
use crate::field_codec::field_bytes::classify;

fn dec(src: &[u8]) -> Result<Vec<u8>, HuffmanError> {
    let mut out = vec![0; max_decoded_len(src.len()) + SLACK];
    let (n, class) = decode::<true>(src, &mut out)?;
    out.truncate(n);
    assert_eq!(class, classify(&out), "class bits of {out:?}");
    // The check-only mode agrees.
    assert_eq!(decode::<false>(src, &mut []), Ok((n, class)));
    Ok(out)
}

fn enc(src: &[u8]) -> Vec<u8> {
    let mut out = vec![];
    encode(src, &mut out);
    assert_eq!(out.len(), encoded_len(src));
    out
}

/// A bit-at-a-time reference decoder straight from the code table.
fn reference(src: &[u8]) -> Result<Vec<u8>, HuffmanError> {
    let total = src.len() * 8;
    let bit = |i: usize| u32::from(src[i / 8] >> (7 - i % 8) & 1);
    let (mut pos, mut out) = (0, vec![]);
    loop {
        let mut v = 0u32;
        for k in 0..30 {
            v = v << 1 | if pos + k < total { bit(pos + k) } else { 1 };
        }
        let (s, len) = decode_one(v);
        let len = len as usize;
        if pos + len > total {
            break;
        }
        if s == EOS {
            return Err(HuffmanError::Eos);
        }
        out.push(s as u8);
        pos += len;
    }
    let rest = total - pos;
    if (pos..total).any(|i| bit(i) == 0) {
        return Err(HuffmanError::PaddingNotOnes);
    }
    if rest > 7 {
        return Err(HuffmanError::PaddingTooLong);
    }
    Ok(out)
}

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

#[test]
fn rfc7541_appendix_c_strings() {
    // (plain, Huffman) pairs from C.4 and C.6.
    let cases = [
        ("www.example.com", "f1e3 c2e5 f23a 6ba0 ab90 f4ff"),
        ("no-cache", "a8eb 1064 9cbf"),
        ("custom-key", "25a8 49e9 5ba9 7d7f"),
        ("custom-value", "25a8 49e9 5bb8 e8b4 bf"),
        ("302", "6402"),
        ("private", "aec3 771a 4b"),
        ("Mon, 21 Oct 2013 20:13:21 GMT", "d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff"),
        ("https://www.example.com", "9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3"),
        ("307", "640e ff"),
        ("gzip", "9bd9 ab"),
        (
            "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
            "94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07",
        ),
    ];
    for (plain, code) in cases {
        assert_eq!(enc(plain.as_bytes()), hex(code), "{plain}");
        assert_eq!(dec(&hex(code)).unwrap(), plain.as_bytes(), "{plain}");
    }
}

#[test]
fn every_symbol_round_trips_alone_and_in_runs() {
    for b in 0..=255u8 {
        for n in [1, 2, 3, 7, 8, 9, 17, 40] {
            let plain = vec![b; n];
            assert_eq!(dec(&enc(&plain)).unwrap(), plain, "byte {b:#04x} x{n}");
        }
    }
}

/// xorshift: deterministic pseudo-random inputs without a dependency.
fn rng(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

#[test]
fn random_strings_round_trip_and_match_the_reference() {
    let mut seed = 0x9e37_79b9_7f4a_7c15;
    let alphabet = b"abcdefghijklmnopqrstuvwxyz0123456789-_./=;%ABCDEFGHIJKLMNOPQRSTUVWXYZ{}<>\\^~|\x00\x7f\xff\x80";
    for _ in 0..3000 {
        let len = (rng(&mut seed) % 70) as usize;
        let plain: Vec<u8> = (0..len)
            .map(|_| {
                let r = rng(&mut seed);
                if r % 8 == 0 {
                    r as u8 >> 1 | (r as u8 & 0x80)
                } else {
                    alphabet[(r >> 8) as usize % alphabet.len()]
                }
            })
            .collect();
        let code = enc(&plain);
        assert_eq!(reference(&code).unwrap(), plain);
        assert_eq!(dec(&code).unwrap(), plain);
    }
    // Arbitrary bytes: mostly invalid; both decoders must agree on the verdict and output.
    for _ in 0..20000 {
        let len = (rng(&mut seed) % 24) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| rng(&mut seed) as u8 | if rng(&mut seed) % 3 == 0 { 0xf0 } else { 0 })
            .collect();
        assert_eq!(dec(&bytes), reference(&bytes), "{bytes:02x?}");
    }
}

#[test]
fn invalid_strings() {
    // EOS (30 ones) as a symbol, then padding.
    let eos = [0xff, 0xff, 0xff, 0xff];
    assert_eq!(dec(&eos), Err(HuffmanError::Eos));
    // 'a' (00011) then EOS then padding.
    let mut v = vec![];
    let bits = (((u64::from(CODES[b'a' as usize]) << 30) | u64::from(CODES[EOS])) << (64 - 35))
        | ((1 << (64 - 35)) - 1);
    v.extend_from_slice(&bits.to_be_bytes()[..5]);
    assert_eq!(dec(&v), Err(HuffmanError::Eos));
    // Eight or more bits of ones after the last symbol: padding too long.
    assert_eq!(dec(&[0xff]), Err(HuffmanError::PaddingTooLong));
    assert_eq!(dec(&[0x1f, 0xff]), Err(HuffmanError::PaddingTooLong)); // '0' (00000) + 11 ones
    assert_eq!(dec(&[0xff, 0xff, 0xff]), Err(HuffmanError::PaddingTooLong));
    // Padding with a zero bit: 'a' (00011) + 000.
    assert_eq!(dec(&[0x18]), Err(HuffmanError::PaddingNotOnes));
    // A long code cut short: '\' is 19 bits (1111111111111110000); give 16 bits of it.
    assert_eq!(dec(&[0xff, 0xfe]), Err(HuffmanError::PaddingNotOnes));
    // Valid: 'a' + 111 padding; empty string.
    assert_eq!(dec(&[0x1f]).unwrap(), b"a");
    assert_eq!(dec(&[]).unwrap(), b"");
    assert_eq!(LENGTHS[EOS], 30);
}
