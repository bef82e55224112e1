//! Huffman encoding (RFC 7541 §5.2): codes packed most significant bit first, the last octet
//! padded with the high bits of EOS (ones).

use super::codes::{CODES, LENGTHS};

/// The length in octets of `src` Huffman-encoded.
#[inline]
pub(crate) fn encoded_len(src: &[u8]) -> usize {
    let bits: usize = src.iter().map(|&b| LENGTHS[b as usize] as usize).sum();
    bits.div_ceil(8)
}

/// Appends `src` Huffman-encoded to `dst` ([`encoded_len`] octets).
pub(crate) fn encode(src: &[u8], dst: &mut Vec<u8>) {
    // Up to 31 pending bits plus a code of up to 30 bits fit in 64.
    let mut acc = 0u64;
    let mut pending = 0u32;
    for &b in src {
        let len = u32::from(LENGTHS[b as usize]);
        acc = (acc << len) | u64::from(CODES[b as usize]);
        pending += len;
        if pending >= 32 {
            pending -= 32;
            dst.extend_from_slice(&((acc >> pending) as u32).to_be_bytes());
        }
    }
    while pending >= 8 {
        pending -= 8;
        dst.push((acc >> pending) as u8);
    }
    if pending > 0 {
        // "padding corresponding to the most significant bits of the code for the EOS symbol"
        dst.push(((acc << (8 - pending)) as u8) | (0xff >> pending));
    }
}
