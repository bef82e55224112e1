//! Huffman decoding (RFC 7541 §5.2) with a multi-symbol table: each lookup of the next
//! [`WIDTH`] input bits yields every symbol whose code lies entirely inside them (up to
//! [`MAX_SYMBOLS`]), the bits they use and the field-byte classes of those symbols, so the
//! §8.2.1 check rides along. Codes longer than the window (rare: control bytes, obs-text, a
//! few punctuation marks) take a canonical-code slow path.
//!
//! The input is read through a 64-bit buffer refilled eight bytes at a time (at least 56 valid
//! bits after a refill), so [`LOOKUPS`] table lookups run between refills with no bounds
//! decisions.

use super::codes::{EOS, decode_one};
use super::decode_table::{TABLE, WIDTH};

// Entry layout (u32). The bits used sit in the low bits so `buf << (entry & 63)` needs no
// extraction on the critical path (the shift masks to 6 bits anyway).
/// Bits 0..6: total bits the entry's symbols use.
pub(super) const USED_MASK: u32 = 0x3f;
/// Bits 6..8: how many symbols (0: the window starts a code longer than `WIDTH`).
pub(super) const COUNT_SHIFT: u32 = 6;
/// Bits 8..16: first symbol; bits 16..24: second symbol.
pub(super) const SYM0_SHIFT: u32 = 8;
pub(super) const SYM1_SHIFT: u32 = 16;
// The two symbols are stored with one little-endian two-byte write of `e >> SYM0_SHIFT`.
const _: () = assert!(SYM1_SHIFT == SYM0_SHIFT + 8);
/// Bits 24..29: the first symbol's code length (to stop at the end of input mid-entry).
pub(super) const LEN0_SHIFT: u32 = 24;
/// Bits 29..31: the OR of the symbols' `field_bytes::CLASS` bits.
pub(super) const CLASS_SHIFT: u32 = 29;
/// Symbols an entry holds at most.
pub(super) const MAX_SYMBOLS: usize = 2;
/// Lookups between refills: each uses at most `WIDTH` of the >= 56 valid bits.
const LOOKUPS: u32 = 56 / WIDTH;

/// A Huffman string that is not a valid encoding (RFC 7541 §5.2).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum HuffmanError {
    /// The EOS symbol inside the string: "MUST be treated as a decoding error".
    Eos,
    /// More than 7 bits of padding: "MUST be treated as a decoding error".
    PaddingTooLong,
    /// Padding that is not the most significant bits of EOS (all ones): "MUST be treated as
    /// a decoding error".
    PaddingNotOnes,
}

/// The most bytes `len` octets of Huffman code can decode to (the shortest code is 5 bits).
#[inline]
pub(crate) const fn max_decoded_len(len: usize) -> usize {
    len * 8 / 5
}

/// Room `out` needs past [`max_decoded_len`]: an entry stores both its symbol slots.
pub(crate) const SLACK: usize = MAX_SYMBOLS;

/// Decodes the Huffman string `src`; with `STORE` writes the octets to `out` (which must hold
/// at least `max_decoded_len(src.len()) + SLACK` bytes), without it only checks the code.
/// Returns the decoded length and the OR of the decoded bytes' `field_bytes::CLASS` bits.
///
/// # Errors
///
/// [`HuffmanError`] when `src` is not a valid Huffman string.
///
/// # Panics
///
/// With `STORE`, if `out` is shorter than stated above.
pub(crate) fn decode<const STORE: bool>(
    src: &[u8],
    out: &mut [u8],
) -> Result<(usize, u8), HuffmanError> {
    let mut buf = 0u64; // valid bits at the top
    let mut bits = 0u32;
    let mut i = 0;
    let mut n = 0;
    let mut class = 0u32;

    macro_rules! emit {
        ($e:expr) => {{
            let e = $e;
            if STORE {
                // Both slots in one store (`out` has room for the second, see `SLACK`).
                out[n..n + 2].copy_from_slice(&((e >> SYM0_SHIFT) as u16).to_le_bytes());
            }
            n += ((e >> COUNT_SHIFT) & 3) as usize;
            class |= e;
            let used = e & USED_MASK;
            buf <<= used;
            bits -= used;
        }};
    }

    // Fast path: while eight input bytes can be loaded at once.
    // One bounds check per load rather than one per byte.
    while let Some(&eight) = src.get(i..).and_then(|rest| rest.first_chunk::<8>()) {
        let word = u64::from_be_bytes(eight);
        buf |= word >> bits;
        i += ((63 - bits) >> 3) as usize;
        bits |= 56;
        let e = TABLE[(buf >> (64 - WIDTH)) as usize];
        if (e >> COUNT_SHIFT) & 3 == 0 {
            // A long code: decoded from the >= 56 valid bits just loaded.
            let (s, len) = decode_one((buf >> 34) as u32);
            if s == EOS {
                return Err(HuffmanError::Eos);
            }
            long_symbol::<STORE>(out, &mut n, &mut class, s);
            buf <<= len;
            bits -= len;
            continue;
        }
        emit!(e);
        for _ in 1..LOOKUPS {
            let e = TABLE[(buf >> (64 - WIDTH)) as usize];
            if (e >> COUNT_SHIFT) & 3 == 0 {
                break;
            }
            emit!(e);
        }
    }

    // Tail: the last < 8 bytes, a byte at a time.
    loop {
        while i < src.len() && bits <= 56 {
            buf |= u64::from(src[i]) << (56 - bits);
            i += 1;
            bits += 8;
        }
        if bits < WIDTH {
            break;
        }
        let e = TABLE[(buf >> (64 - WIDTH)) as usize];
        if (e >> COUNT_SHIFT) & 3 != 0 {
            emit!(e);
            continue;
        }
        let (s, len) = decode_one((buf >> 34) as u32);
        if len > bits {
            // The input ends inside a long code (or inside EOS): more than 7 bits left that
            // do not form a symbol.
            return Err(if buf >> (64 - bits) == (1 << bits) - 1 {
                HuffmanError::PaddingTooLong
            } else {
                HuffmanError::PaddingNotOnes
            });
        }
        if s == EOS {
            return Err(HuffmanError::Eos);
        }
        long_symbol::<STORE>(out, &mut n, &mut class, s);
        buf <<= len;
        bits -= len;
    }

    // Fewer than WIDTH bits left: look them up padded with ones and keep only the symbols
    // that end inside the input.
    while bits >= 5 {
        let e = TABLE[((buf >> (64 - WIDTH)) | ((1 << (WIDTH - bits)) - 1)) as usize];
        let len0 = (e >> LEN0_SHIFT) & 0x1f;
        if (e >> COUNT_SHIFT) & 3 == 0 || len0 > bits {
            break;
        }
        if STORE {
            out[n] = (e >> SYM0_SHIFT) as u8;
        }
        n += 1;
        class |=
            u32::from(crate::field_codec::field_bytes::CLASS[(e >> SYM0_SHIFT) as u8 as usize])
                << CLASS_SHIFT;
        buf <<= len0;
        bits -= len0;
    }

    // RFC 7541 §5.2: "A padding strictly longer than 7 bits MUST be treated as a decoding
    // error. A padding not corresponding to the most significant bits of the code for the EOS
    // symbol MUST be treated as a decoding error."
    if bits > 0 && buf >> (64 - bits) != (1 << bits) - 1 {
        return Err(HuffmanError::PaddingNotOnes);
    }
    if bits > 7 {
        return Err(HuffmanError::PaddingTooLong);
    }
    Ok((n, (class >> CLASS_SHIFT) as u8))
}

/// Emits a symbol decoded by the slow path.
#[cold]
fn long_symbol<const STORE: bool>(out: &mut [u8], n: &mut usize, class: &mut u32, s: usize) {
    if STORE {
        out[*n] = s as u8;
    }
    *n += 1;
    *class |= u32::from(crate::field_codec::field_bytes::CLASS[s & 0xff]) << CLASS_SHIFT;
}
