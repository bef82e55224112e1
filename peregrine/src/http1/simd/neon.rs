//! The NEON kernel (aarch64, where NEON is baseline): 16 bytes per block. Class membership by
//! the TBL nibble lookup, value bytes by unsigned compares; the byte mask is narrowed to four
//! bits per byte (SHRN), hence `S = 4`.
//!
//! Not compiled on the development machine (x86_64 only, no aarch64 target installed): kept to
//! plain, well-known intrinsics; the kernel test in `tests.rs` covers it on an aarch64 host.
#![allow(unsafe_code)]

use super::{Block, Nibbles, TARGET_NIBBLES, TOKEN_NIBBLES};
use std::arch::aarch64::*;

/// The NEON kernel; NEON is part of the aarch64 baseline.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Neon {
    _proof: (),
}

impl Neon {
    /// The kernel (always available with `target_feature = "neon"`).
    pub(crate) fn new() -> Self {
        Neon { _proof: () }
    }
}

/// Four mask bits per byte where `bad` is all-ones.
#[inline(always)]
fn narrow(bad: uint8x16_t) -> u64 {
    // SAFETY: NEON is enabled for this module (cfg target_feature = "neon").
    unsafe {
        let n = vshrn_n_u16::<4>(vreinterpretq_u16_u8(bad));
        vget_lane_u64::<0>(vreinterpret_u64_u8(n))
    }
}

/// All-ones in bytes NOT in the nibble class.
#[inline(always)]
fn outside(v: uint8x16_t, t: &Nibbles) -> uint8x16_t {
    // SAFETY: NEON is enabled; the table loads read 16 bytes from 16-byte arrays.
    unsafe {
        let lo = vld1q_u8(t.lo.as_ptr());
        let hi = vld1q_u8(t.hi.as_ptr());
        let l = vqtbl1q_u8(lo, vandq_u8(v, vdupq_n_u8(0x0f)));
        let h = vqtbl1q_u8(hi, vshrq_n_u8::<4>(v));
        vceqzq_u8(vandq_u8(l, h))
    }
}

impl Block for Neon {
    const W: usize = 16;
    const S: u32 = 4;

    #[inline(always)]
    unsafe fn name_value(self, ptr: *const u8) -> (u64, u64) {
        // SAFETY: the caller guarantees 16 readable bytes; NEON is baseline here.
        unsafe {
            let v = vld1q_u8(ptr);
            let tok = narrow(outside(v, &TOKEN_NIBBLES));
            // Value bytes: b >= 0x20 or HTAB, and not DEL.
            let ge20 = vcgeq_u8(v, vdupq_n_u8(0x20));
            let tab = vceqq_u8(v, vdupq_n_u8(0x09));
            let del = vceqq_u8(v, vdupq_n_u8(0x7f));
            let good = vbicq_u8(vorrq_u8(ge20, tab), del);
            (tok, narrow(vmvnq_u8(good)))
        }
    }

    #[inline(always)]
    unsafe fn target(self, ptr: *const u8) -> u64 {
        // SAFETY: the caller guarantees 16 readable bytes; NEON is baseline here.
        unsafe { narrow(outside(vld1q_u8(ptr), &TARGET_NIBBLES)) }
    }
}
