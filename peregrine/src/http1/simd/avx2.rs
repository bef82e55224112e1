//! The AVX2 kernel (x86_64): 32 bytes per block, so most header lines are settled by a single
//! load. Class membership by the VPSHUFB nibble lookup (tables broadcast to both lanes), value
//! bytes by unsigned range compares.
#![allow(unsafe_code)]

use super::{Block, Nibbles, TARGET_NIBBLES, TOKEN_NIBBLES};
use std::arch::x86_64::*;

/// Proof that the CPU has AVX2; only [`Avx2::new_unchecked`] makes one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2 {
    _proof: (),
}

impl Avx2 {
    /// The kernel if this CPU supports it.
    #[cfg(test)]
    pub(crate) fn detect() -> Option<Self> {
        std::is_x86_feature_detected!("avx2").then_some(Avx2 { _proof: () })
    }

    /// # Safety
    /// The CPU must support AVX2.
    pub(crate) unsafe fn new_unchecked() -> Self {
        Avx2 { _proof: () }
    }
}

/// Mask of bytes NOT in the nibble class.
///
/// # Safety
/// AVX2 must be available.
#[inline(always)]
unsafe fn outside(v: __m256i, t: &Nibbles) -> u64 {
    // SAFETY: the caller guarantees AVX2; the table loads read 16 bytes from 16-byte arrays.
    unsafe {
        let lo = _mm256_broadcastsi128_si256(_mm_loadu_si128(t.lo.as_ptr().cast()));
        let hi = _mm256_broadcastsi128_si256(_mm_loadu_si128(t.hi.as_ptr().cast()));
        let nib = _mm256_set1_epi8(0x0f);
        let l = _mm256_shuffle_epi8(lo, _mm256_and_si256(v, nib));
        let h = _mm256_shuffle_epi8(hi, _mm256_and_si256(_mm256_srli_epi16(v, 4), nib));
        let hit = _mm256_and_si256(l, h);
        let miss = _mm256_cmpeq_epi8(hit, _mm256_setzero_si256());
        u64::from(_mm256_movemask_epi8(miss) as u32)
    }
}

impl Block for Avx2 {
    const W: usize = 32;
    const S: u32 = 1;

    #[inline(always)]
    unsafe fn name_value(self, ptr: *const u8) -> (u64, u64) {
        // SAFETY: the caller guarantees 32 readable bytes; `self` proves AVX2.
        unsafe {
            let v = _mm256_loadu_si256(ptr.cast());
            let tok = outside(v, &TOKEN_NIBBLES);
            // Value bytes: b >= 0x20 (unsigned) or HTAB, and not DEL.
            let ge20 = _mm256_cmpeq_epi8(_mm256_max_epu8(v, _mm256_set1_epi8(0x20)), v);
            let tab = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(0x09));
            let del = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(0x7f));
            let good = _mm256_andnot_si256(del, _mm256_or_si256(ge20, tab));
            let val = u64::from(!(_mm256_movemask_epi8(good) as u32));
            (tok, val)
        }
    }

    #[inline(always)]
    fn record_known(self, first: &mut [u16; 16], count: &mut [u16; 16], k: u16, index: u16) {
        // SAFETY: `self` proves AVX2; each array is 32 bytes, read and written whole.
        unsafe {
            let f = _mm256_loadu_si256(first.as_ptr().cast());
            let c = _mm256_loadu_si256(count.as_ptr().cast());
            let lanes = _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
            let hit = _mm256_cmpeq_epi16(lanes, _mm256_set1_epi16(k as i16));
            let fresh = _mm256_and_si256(hit, _mm256_cmpeq_epi16(c, _mm256_setzero_si256()));
            let f = _mm256_or_si256(f, _mm256_and_si256(fresh, _mm256_set1_epi16(index as i16)));
            // A hit lane is all ones; shifted down it is the 1 to add.
            let c = _mm256_adds_epu16(c, _mm256_srli_epi16(hit, 15));
            _mm256_storeu_si256(first.as_mut_ptr().cast(), f);
            _mm256_storeu_si256(count.as_mut_ptr().cast(), c);
        }
    }

    const DELIMS: bool = true;

    #[inline(always)]
    unsafe fn delims(self, ptr: *const u8) -> (u64, u64) {
        // SAFETY: the caller guarantees 32 readable bytes; `self` proves the features.
        unsafe {
            let v = _mm256_loadu_si256(ptr.cast());
            let colon = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b':' as i8));
            let cr = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\r' as i8));
            (
                u64::from(_mm256_movemask_epi8(colon) as u32),
                u64::from(_mm256_movemask_epi8(cr) as u32),
            )
        }
    }

    #[inline(always)]
    unsafe fn target(self, ptr: *const u8) -> u64 {
        // SAFETY: the caller guarantees 32 readable bytes; `self` proves AVX2.
        unsafe { outside(_mm256_loadu_si256(ptr.cast()), &TARGET_NIBBLES) }
    }
}
