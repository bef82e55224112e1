//! The hash of the encoders' dynamic-table indexes (HPACK's and QPACK's): a field's name, and
//! its name and value, hashed to find the newest entry holding them without walking the table.

/// A fast 64-bit hash of `bytes` (eight bytes per multiply), seeded so the name's hash
/// seeds the (name, value) hash.
#[inline]
pub(crate) fn hash(seed: u64, bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = (seed ^ bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(K).rotate_left(29);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(K).rotate_left(29);
    }
    h ^ (h >> 32)
}
