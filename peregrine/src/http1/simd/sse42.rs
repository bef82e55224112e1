//! The SSE4.2-level kernel (x86_64): 16 bytes per block. Class membership by the PSHUFB nibble
//! lookup (SSSE3), value bytes by unsigned range compares; no PCMPESTRI (its latency loses to
//! two shuffles on current cores).
#![allow(unsafe_code)]

use super::{Block, Nibbles, TARGET_NIBBLES, TOKEN_NIBBLES};
use std::arch::x86_64::*;

/// Proof that the CPU has SSE4.2 and SSSE3; only [`Sse42::new_unchecked`] makes one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sse42 {
    _proof: (),
}

impl Sse42 {
    /// The kernel if this CPU supports it.
    #[cfg(test)]
    pub(crate) fn detect() -> Option<Self> {
        (std::is_x86_feature_detected!("sse4.2") && std::is_x86_feature_detected!("ssse3"))
            .then_some(Sse42 { _proof: () })
    }

    /// # Safety
    /// The CPU must support SSE4.2 and SSSE3.
    pub(crate) unsafe fn new_unchecked() -> Self {
        Sse42 { _proof: () }
    }
}

/// Mask of bytes NOT in the nibble class.
///
/// # Safety
/// SSSE3 must be available.
#[inline(always)]
unsafe fn outside(v: __m128i, t: &Nibbles) -> u64 {
    // SAFETY: the caller guarantees SSSE3; the table loads read 16 bytes from 16-byte arrays.
    unsafe {
        let lo = _mm_loadu_si128(t.lo.as_ptr().cast());
        let hi = _mm_loadu_si128(t.hi.as_ptr().cast());
        let nib = _mm_set1_epi8(0x0f);
        let l = _mm_shuffle_epi8(lo, _mm_and_si128(v, nib));
        let h = _mm_shuffle_epi8(hi, _mm_and_si128(_mm_srli_epi16(v, 4), nib));
        let hit = _mm_and_si128(l, h);
        let miss = _mm_cmpeq_epi8(hit, _mm_setzero_si128());
        u64::from(_mm_movemask_epi8(miss) as u16)
    }
}

impl Block for Sse42 {
    const W: usize = 16;
    const S: u32 = 1;

    #[inline(always)]
    unsafe fn name_value(self, ptr: *const u8) -> (u64, u64) {
        // SAFETY: the caller guarantees 16 readable bytes; `self` proves SSE4.2 + SSSE3.
        unsafe {
            let v = _mm_loadu_si128(ptr.cast());
            let tok = outside(v, &TOKEN_NIBBLES);
            // Value bytes: b >= 0x20 (unsigned) or HTAB, and not DEL.
            let ge20 = _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8(0x20)), v);
            let tab = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x09));
            let del = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f));
            let good = _mm_andnot_si128(del, _mm_or_si128(ge20, tab));
            let val = u64::from(!(_mm_movemask_epi8(good) as u16));
            (tok, val)
        }
    }

    const DELIMS: bool = true;

    #[inline(always)]
    unsafe fn delims(self, ptr: *const u8) -> (u64, u64) {
        // SAFETY: the caller guarantees 16 readable bytes; `self` proves the features.
        unsafe {
            let v = _mm_loadu_si128(ptr.cast());
            let colon = _mm_cmpeq_epi8(v, _mm_set1_epi8(b':' as i8));
            let cr = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\r' as i8));
            (u64::from(_mm_movemask_epi8(colon) as u16), u64::from(_mm_movemask_epi8(cr) as u16))
        }
    }

    #[inline(always)]
    unsafe fn target(self, ptr: *const u8) -> u64 {
        // SAFETY: the caller guarantees 16 readable bytes; `self` proves SSSE3.
        unsafe { outside(_mm_loadu_si128(ptr.cast()), &TARGET_NIBBLES) }
    }
}
