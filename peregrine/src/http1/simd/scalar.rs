//! The scalar kernel: a walk over the [`CLASS`] table, the truth every vector kernel is tested
//! against, and the path `force-scalar` pins.

use super::{CLASS, Kernel, TARGET, TOKEN, VALUE, sealed};

/// The table-driven kernel; works on every target.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scalar;

impl sealed::Sealed for Scalar {}

/// Index of the first byte at or after `start` whose class lacks `bit`, or `buf.len()`.
#[inline(always)]
fn first_outside(buf: &[u8], start: usize, bit: u8) -> usize {
    let mut i = start;
    // Four bytes per step keeps the loop-carried branch count down on long values.
    while i + 4 <= buf.len() {
        let c = [
            CLASS[usize::from(buf[i])],
            CLASS[usize::from(buf[i + 1])],
            CLASS[usize::from(buf[i + 2])],
            CLASS[usize::from(buf[i + 3])],
        ];
        if c[0] & c[1] & c[2] & c[3] & bit == 0 {
            let mut k = 0;
            while c[k] & bit != 0 {
                k += 1;
            }
            return i + k;
        }
        i += 4;
    }
    while i < buf.len() {
        if CLASS[usize::from(buf[i])] & bit == 0 {
            return i;
        }
        i += 1;
    }
    buf.len()
}

impl Kernel for Scalar {
    #[inline(always)]
    fn non_token(self, buf: &[u8], start: usize) -> usize {
        first_outside(buf, start, TOKEN)
    }

    #[inline(always)]
    fn non_target(self, buf: &[u8], start: usize) -> usize {
        first_outside(buf, start, TARGET)
    }

    #[inline(always)]
    fn line(self, buf: &[u8], start: usize) -> (usize, usize) {
        let colon = first_outside(buf, start, TOKEN);
        if colon >= buf.len() {
            return (buf.len(), buf.len());
        }
        (colon, first_outside(buf, colon + 1, VALUE))
    }
}
