//! The AVX2 kernel of masking (x86_64): 64 octets per loop turn as two 32-octet XORs with the
//! key repeated, against the portable code's 64 as eight `u64` words that the compiler makes
//! SSE2 (16 octets per XOR). Chosen at run time when the CPU has AVX2 and the payload is long
//! enough for it to pay; the rest (and other CPUs) go through `mask::apply`'s
//! portable loop.
#![allow(unsafe_code)]

use std::arch::x86_64::*;

/// XORs the longest prefix of `buf` that is a multiple of 64 octets with `word` (the key,
/// rotated to the prefix's phase, twice); returns its length (0 without AVX2). The prefix
/// being a multiple of four octets, the rest starts at the same phase.
#[inline]
pub(super) fn xor_prefix(buf: &mut [u8], word: u64) -> usize {
    if !std::is_x86_feature_detected!("avx2") {
        return 0;
    }
    // SAFETY: AVX2 was detected just above.
    unsafe { xor_blocks(buf, word) }
}

/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
unsafe fn xor_blocks(buf: &mut [u8], word: u64) -> usize {
    let n = buf.len() & !63;
    let key = _mm256_set1_epi64x(word as i64);
    let p = buf.as_mut_ptr();
    let mut i = 0;
    while i < n {
        // SAFETY: i + 64 <= n <= buf.len(), so the 64 octets at p + i are inside `buf`, which
        // is borrowed mutably here alone; loads and stores are unaligned ones.
        unsafe {
            let a = p.add(i).cast::<__m256i>();
            let b = p.add(i + 32).cast::<__m256i>();
            let (va, vb) = (_mm256_loadu_si256(a), _mm256_loadu_si256(b));
            _mm256_storeu_si256(a, _mm256_xor_si256(va, key));
            _mm256_storeu_si256(b, _mm256_xor_si256(vb, key));
        }
        i += 64;
    }
    n
}
