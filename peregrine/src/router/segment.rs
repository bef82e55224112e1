//! Finding the end of a path segment and hashing it in the same pass, a machine word at a time.
//!
//! The static-child table ([`super::edges`]) is keyed by (parent node, segment bytes). Both sides
//! of that key are produced here: [`scan`] for a segment of a request path, [`hash_label`] for a
//! template's static segment. They must agree byte for byte, so they share `mix` and the
//! chunking: 8-byte little-endian words, the last (possibly empty) one zero-padded.

const SLASHES: u64 = u64::from_le_bytes([b'/'; 8]);
const LOW: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;
const K: u64 = 0x9E37_79B9_7F4A_7C15;

/// A segment of a path: where it ends, its first word, and its hash.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scanned {
    /// Byte index of the `/` that ends the segment, or the path length.
    pub end: usize,
    /// The first 8 bytes of the segment, little-endian, zero-padded.
    pub word: u64,
    /// Hash of all the segment's bytes (see [`hash_label`]).
    pub hash: u64,
}

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
/// there.
#[inline(always)]
fn load(path: &[u8], pos: usize) -> u64 {
    match path
        .get(pos..pos + 8)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
    {
        Some(bytes) => u64::from_le_bytes(bytes),
        None => {
            let mut buf = [b'/'; 8];
            let tail = path.get(pos..).unwrap_or_default();
            let n = tail.len().min(8);
            buf[..n].copy_from_slice(&tail[..n]);
            u64::from_le_bytes(buf)
        }
    }
}

/// Index (0..8) of the first `/` in `w`, or 8 when there is none.
///
/// The classic zero-byte test on `w ^ SLASHES`: its lowest set bit is exact (false positives can
/// only appear in bytes above a true zero byte).
#[inline(always)]
fn first_slash(w: u64) -> u32 {
    let x = w ^ SLASHES;
    let z = x.wrapping_sub(LOW) & !x & HIGH;
    z.trailing_zeros() / 8
}

/// Scans the segment starting at `pos` (which may be `path.len()` or one past it: an empty
/// segment) and hashes it.
#[inline]
pub(crate) fn scan(path: &[u8], pos: usize) -> Scanned {
    let w = load(path, pos);
    let k = first_slash(w);
    if k < 8 {
        let word = w & low_bytes(k);
        return Scanned {
            end: pos + k as usize,
            word,
            hash: mix(0, word),
        };
    }
    let mut h = mix(0, w);
    let mut at = pos + 8;
    loop {
        let next = load(path, at);
        let k = first_slash(next);
        if k < 8 {
            let chunk = next & low_bytes(k);
            return Scanned {
                end: at + k as usize,
                word: w,
                hash: mix(h, chunk),
            };
        }
        h = mix(h, next);
        at += 8;
    }
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

/// The first word and hash of a static label, equal to what [`scan`] yields for a path segment
/// with the same bytes.
pub(crate) fn hash_label(label: &[u8]) -> (u64, u64) {
    let mut h = 0;
    let mut first = None;
    let mut chunks = label.chunks_exact(8);
    for c in &mut chunks {
        let mut buf = [0u8; 8];
        buf.copy_from_slice(c);
        let w = u64::from_le_bytes(buf);
        first.get_or_insert(w);
        h = mix(h, w);
    }
    let rem = chunks.remainder();
    let mut buf = [0u8; 8];
    buf[..rem.len()].copy_from_slice(rem);
    let w = u64::from_le_bytes(buf);
    (*first.get_or_insert(w), mix(h, w))
}

/// Combines a segment hash with its parent node into a table index of `bits` bits.
#[inline(always)]
pub(crate) fn slot_of(hash: u64, parent: u32, bits: u32) -> usize {
    let h = (hash.rotate_left(5) ^ u64::from(parent)).wrapping_mul(K);
    // The high bits of a multiplicative hash are the well-mixed ones.
    (h >> (64 - bits)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_agrees_with_hash_label_at_every_length_and_offset() {
        let text = "abcdefghijklmnopqrstuvwxyz0123456789";
        for len in 0..=text.len() {
            let label = &text[..len];
            let (word, hash) = hash_label(label.as_bytes());
            for prefix in ["/", "/x/", "/xxxxxxxxxxx/"] {
                for suffix in ["", "/", "/tail", "/more/and/more"] {
                    let path = format!("{prefix}{label}{suffix}");
                    let s = scan(path.as_bytes(), prefix.len());
                    assert_eq!(s.end, prefix.len() + len, "{path}");
                    assert_eq!((s.word, s.hash), (word, hash), "{path}");
                    assert_eq!(segment_end(path.as_bytes(), prefix.len()), s.end, "{path}");
                }
            }
        }
    }

    #[test]
    fn scan_past_the_end_is_an_empty_segment() {
        let path = b"/ab";
        let s = scan(path, 3);
        assert_eq!((s.end, s.word, s.hash), (3, 0, hash_label(b"").1));
        let s = scan(path, 4);
        assert_eq!((s.end, s.word), (4, 0));
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
