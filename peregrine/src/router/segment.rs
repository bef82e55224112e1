//! Finding the end of a path segment and its first word in one pass, a machine word at a time,
//! and hashing labels for the blocks of static children (the edge blocks of `edges.rs`).
//!
//! A label's *word* is its first 8 bytes, little-endian, zero-padded: labels of up to 8 bytes
//! compare as one integer. [`scan`] (request paths) and [`first_word`] (templates) must agree
//! byte for byte, and so must the two callers of [`hash_label`].

use crate::byte_word::first_byte;

const SLASHES: u64 = u64::from_le_bytes([b'/'; 8]);
const K: u64 = 0x9E37_79B9_7F4A_7C15;

#[inline(always)]
fn mix(h: u64, chunk: u64) -> u64 {
    (h.rotate_left(5) ^ chunk).wrapping_mul(K)
}

/// Mask keeping the low `k` bytes of a word, `k < 8`.
#[inline(always)]
fn low_bytes(k: u32) -> u64 {
    (1u64 << (k * 8)) - 1
}

/// Eight bytes at `pos`, with anything past the end of `path` reading as `/` so a scan stops
/// there. `pos` may be up to `path.len() + 1`.
#[inline(always)]
fn load(path: &[u8], pos: usize) -> u64 {
    if let Some(bytes) = path.get(pos..pos + 8).and_then(|b| <[u8; 8]>::try_from(b).ok()) {
        return u64::from_le_bytes(bytes);
    }
    // Fewer than 8 bytes left: shift the path's last word down instead of copying the tail
    // into a buffer (a variable-length copy is a `memcpy` call: 29 instructions per lookup).
    let have = path.len().saturating_sub(pos); // 0..8
    let len = path.len();
    let w = match path.get(len.wrapping_sub(8)..).and_then(|b| <[u8; 8]>::try_from(b).ok()) {
        Some(last) => u64::from_le_bytes(last).checked_shr(64 - 8 * have as u32).unwrap_or(0),
        None => {
            // A path shorter than 8 bytes.
            let tail = path.get(pos..).unwrap_or_default();
            tail.iter().rev().fold(0u64, |w, &b| (w << 8) | u64::from(b))
        }
    };
    w | SLASHES.checked_shl(8 * have as u32).unwrap_or(0)
}

/// Index (0..8) of the first `/` in `w`, or 8 when there is none.
#[inline(always)]
fn first_slash(w: u64) -> u32 {
    first_byte(w, b'/')
}

/// The segment starting at `pos` (which may be `path.len()` or one past it: an empty
/// segment): where it ends (the next `/` or the path's end) and its first word.
#[inline]
pub(crate) fn scan(path: &[u8], pos: usize) -> (usize, u64) {
    let w = load(path, pos);
    let k = first_slash(w);
    if k < 8 {
        return (pos + k as usize, w & low_bytes(k));
    }
    (segment_end(path, pos + 8), w)
}

/// Where the segment starting at `pos` ends: the next `/`, or the end of the path.
#[inline]
pub(crate) fn segment_end(path: &[u8], pos: usize) -> usize {
    let mut at = pos;
    loop {
        let k = first_slash(load(path, at));
        if k < 8 {
            return at + k as usize;
        }
        at += 8;
    }
}

/// The first word of a label, as [`scan`] yields it.
pub(crate) fn first_word(label: &[u8]) -> u64 {
    label.iter().take(8).rev().fold(0u64, |w, &b| (w << 8) | u64::from(b))
}

/// Hash of a label whose first word is `word` (all of its bytes and its length).
#[inline]
pub(crate) fn hash_label(word: u64, label: &[u8]) -> u32 {
    let len = label.len();
    let mut h = mix(len as u64, word);
    let mut at = 8;
    while at < len {
        // Full words, then the last partial one read as the label's last 8 bytes shifted down
        // (no variable-length copy).
        let chunk = match label.get(at..at + 8) {
            Some(b) => <[u8; 8]>::try_from(b).map_or(0, u64::from_le_bytes),
            None => {
                let last = label.get(len - 8..).and_then(|b| <[u8; 8]>::try_from(b).ok());
                last.map_or(0, u64::from_le_bytes) >> (8 * (at + 8 - len))
            }
        };
        h = mix(h, chunk);
        at += 8;
    }
    (h >> 32) as u32
}

/// A label hash as a slot index of `bits` bits (`1..=32`) in a block of static children.
#[inline(always)]
pub(crate) fn slot_of(hash: u32, bits: u32) -> usize {
    let h = u64::from(hash).wrapping_mul(K);
    // The high bits of a multiplicative hash are the well-mixed ones.
    (h >> (64 - bits)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_agrees_with_first_word_at_every_length_and_offset() {
        let text = "abcdefghijklmnopqrstuvwxyz0123456789";
        let mut hashes = std::collections::HashSet::new();
        for len in 0..=text.len() {
            let label = &text[..len];
            let word = first_word(label.as_bytes());
            hashes.insert(hash_label(word, label.as_bytes()));
            for prefix in ["/", "/x/", "/xxxxxxxxxxx/"] {
                for suffix in ["", "/", "/tail", "/more/and/more"] {
                    let path = format!("{prefix}{label}{suffix}");
                    let (end, w) = scan(path.as_bytes(), prefix.len());
                    assert_eq!((end, w), (prefix.len() + len, word), "{path}");
                    assert_eq!(segment_end(path.as_bytes(), prefix.len()), end, "{path}");
                    let seg = &path.as_bytes()[prefix.len()..end];
                    assert_eq!(hash_label(w, seg), hash_label(word, label.as_bytes()));
                }
            }
        }
        assert_eq!(hashes.len(), text.len() + 1, "prefixes of one text hash apart");
    }

    #[test]
    fn load_pads_with_slashes() {
        for path in ["/", "/a", "/abcdefg", "/abcdefgh", "/abcdefghijklmnopq"] {
            let p = path.as_bytes();
            for pos in 0..=p.len() + 1 {
                let mut want = [b'/'; 8];
                for (i, w) in want.iter_mut().enumerate() {
                    if let Some(&b) = p.get(pos + i) {
                        *w = b;
                    }
                }
                assert_eq!(load(p, pos), u64::from_le_bytes(want), "{path} at {pos}");
            }
        }
    }

    #[test]
    fn scan_past_the_end_is_an_empty_segment() {
        let path = b"/ab";
        assert_eq!(scan(path, 3), (3, 0));
        assert_eq!(scan(path, 4), (4, 0));
        assert_eq!(segment_end(path, 4), 4);
    }

    #[test]
    fn first_slash_handles_high_bytes() {
        // 0x2f ^ 0x2f = 0 but 0xaf ^ 0x2f = 0x80: must not count as a slash.
        let w = u64::from_le_bytes([0xaf, 0xff, 0x00, 0x30, b'/', 0x2e, 0xaf, 0x2f]);
        assert_eq!(first_slash(w), 4);
        assert_eq!(first_slash(u64::from_le_bytes(*b"abcdefgh")), 8);
    }
}
