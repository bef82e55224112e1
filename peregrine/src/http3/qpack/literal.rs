//! String literals (RFC 9204 §4.1.2: RFC 7541 §5.2's, with a prefix of any width): a Huffman
//! flag `H` just above an `N`-bit length prefix, then the octets, Huffman-coded with HPACK's
//! code when `H` is set.

use super::Cause;
use super::instruction::Str;
use super::integer::{self, IntError};
use crate::field_codec::field_bytes::classify;
use crate::field_codec::huffman;
use crate::http2::hpack::FieldList;

impl From<huffman::HuffmanError> for Cause {
    fn from(e: huffman::HuffmanError) -> Cause {
        match e {
            huffman::HuffmanError::Eos => Cause::HuffmanEos,
            huffman::HuffmanError::PaddingTooLong => Cause::HuffmanPaddingTooLong,
            huffman::HuffmanError::PaddingNotOnes => Cause::HuffmanPaddingNotOnes,
        }
    }
}

/// Appends `s` as a literal with an `n`-bit length prefix (the H flag is `1 << n`), `high`
/// carrying the pattern bits above it; Huffman-coded when strictly shorter.
#[inline]
pub(crate) fn encode(dst: &mut Vec<u8>, high: u8, n: u32, s: &[u8]) {
    let h = 1u8 << n;
    let limit = (1usize << n) - 1;
    if s.len() < limit {
        // A one-octet length either way: code in place and fall back to the raw octets when
        // that was not shorter (rare: most text codes to 5-7 bits an octet).
        let at = dst.len();
        dst.push(0);
        huffman::encode(s, dst);
        let coded = dst.len() - at - 1;
        if coded < s.len() {
            dst[at] = high | h | coded as u8;
        } else {
            dst.truncate(at);
            dst.push(high | s.len() as u8);
            dst.extend_from_slice(s);
        }
        return;
    }
    let coded = huffman::encoded_len(s);
    if coded < s.len() {
        integer::encode(dst, high | h, n, coded as u64);
        huffman::encode(s, dst);
    } else {
        integer::encode(dst, high, n, s.len() as u64);
        dst.extend_from_slice(s);
    }
}

/// Decodes an instruction's string into `out` (cleared first); returns the OR of the octets'
/// field-byte classes.
///
/// # Errors
/// The Huffman errors.
pub(crate) fn decode_into(s: Str<'_>, out: &mut Vec<u8>) -> Result<u8, Cause> {
    out.clear();
    if !s.huffman {
        out.extend_from_slice(s.bytes);
        return Ok(classify(s.bytes));
    }
    out.resize(huffman::max_decoded_len(s.bytes.len()) + huffman::SLACK, 0);
    let (n, class) = huffman::decode::<true>(s.bytes, out)?;
    out.truncate(n);
    Ok(class)
}

/// A string read from a field section.
pub(crate) struct Read {
    /// Decoded length.
    pub len: usize,
    /// Written to the list's arena (not when longer than the caller's limit).
    pub stored: bool,
    /// The OR of the octets' field-byte classes (when stored).
    pub class: u8,
}

/// Reads the literal at `block[*p]` (length prefix of `n` bits): writes its octets to
/// `out.arena[at..]` when they decode to at most `limit` octets, else only checks them (a
/// Huffman string is decoded without storing, to find its errors: the work stays bounded by
/// the section's length, the memory by `limit`).
///
/// # Errors
/// [`Cause::Truncated`], [`Cause::IntegerOverflow`], the Huffman errors.
#[inline]
pub(crate) fn read(
    block: &[u8],
    p: &mut usize,
    n: u32,
    out: &mut FieldList,
    at: usize,
    limit: usize,
) -> Result<Read, Cause> {
    let Some(&first) = block.get(*p) else { return Err(Cause::Truncated) };
    let len = integer::decode(block, p, n).map_err(|e| match e {
        IntError::Truncated => Cause::Truncated,
        IntError::Overflow => Cause::IntegerOverflow,
    })?;
    let src = usize::try_from(len)
        .ok()
        .and_then(|l| p.checked_add(l))
        .and_then(|end| block.get(*p..end))
        .ok_or(Cause::Truncated)?;
    *p += src.len();
    if first & (1 << n) == 0 {
        if src.len() > limit {
            return Ok(Read { len: src.len(), stored: false, class: 0 });
        }
        out.ensure(at + src.len());
        out.arena[at..at + src.len()].copy_from_slice(src);
        return Ok(Read { len: src.len(), stored: true, class: classify(src) });
    }
    let max = huffman::max_decoded_len(src.len());
    let room = if max <= limit {
        max
    } else {
        let (n, _) = huffman::decode::<false>(src, &mut [])?;
        if n > limit {
            return Ok(Read { len: n, stored: false, class: 0 });
        }
        n
    };
    out.ensure(at + room + huffman::SLACK);
    let (n, class) = huffman::decode::<true>(src, &mut out.arena[at..at + room + huffman::SLACK])?;
    Ok(Read { len: n, stored: true, class })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huffman_only_when_shorter_at_every_prefix() {
        for n in [3, 5, 7] {
            for s in [&b""[..], b"a", b"www.example.com", b"\x00\x01\x02", &[b'x'; 300]] {
                let mut out = Vec::new();
                encode(&mut out, 0, n, s);
                let mut p = 0;
                let h = out[0] & (1 << n) != 0;
                let len = integer::decode(&out, &mut p, n).unwrap() as usize;
                assert_eq!(p + len, out.len());
                assert_eq!(h, huffman::encoded_len(s) < s.len(), "{s:?}");
                let mut back = Vec::new();
                decode_into(Str { huffman: h, bytes: &out[p..] }, &mut back).unwrap();
                assert_eq!(back, s);
                // Into a field list, stored or not by the limit.
                let mut list = FieldList::new(1 << 16);
                let mut q = 0;
                let r = read(&out, &mut q, n, &mut list, 0, 1000).unwrap();
                assert!(r.stored && r.len == s.len() && q == out.len());
                assert_eq!(&list.arena[..r.len], s);
                let mut q = 0;
                let r = read(&out, &mut q, n, &mut list, 0, s.len().saturating_sub(1)).unwrap();
                assert_eq!((r.stored, r.len), (s.is_empty(), s.len()));
            }
        }
    }

    #[test]
    fn section_strings_cut_short_or_bad() {
        let mut list = FieldList::new(1 << 16);
        let cases: [(&[u8], Cause); 4] = [
            (b"", Cause::Truncated),
            (b"\x05abc", Cause::Truncated),
            (b"\x7f", Cause::Truncated),
            // Huffman, one octet of 0x00: a 5-bit '0' then three zero padding bits.
            (b"\x81\x00", Cause::HuffmanPaddingNotOnes),
        ];
        for (bytes, cause) in cases {
            let mut p = 0;
            assert_eq!(
                read(bytes, &mut p, 7, &mut list, 0, 100).err(),
                Some(cause),
                "{bytes:02x?}"
            );
        }
    }
}
