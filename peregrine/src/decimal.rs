//! Writing a `u64` in decimal ASCII, two digits per step from a table of digit pairs, without
//! formatting machinery or allocation: the numbers written per message (`content-length` in
//! HTTP/1.1 heads and HPACK blocks, an HTTP/2 `:status` outside the static table, a port).

/// Pairs of decimal digits "00".."99", so a number is written two digits per step.
const DIGIT_PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// The number of decimal digits of `n` (1 for 0).
#[inline]
pub(crate) fn len(mut n: u64) -> usize {
    let mut len = 1;
    while n >= 10 {
        n /= 10;
        len += 1;
    }
    len
}

/// Writes `n` in decimal into `buf` so that its last digit is `buf[end - 1]`; returns where its
/// first digit is. For a caller that writes the digits in place, after a prefix: `end` is the
/// prefix's end plus [`len`]`(n)`.
///
/// # Panics
/// If `buf[..end]` is shorter than the digits.
#[inline(always)]
pub(crate) fn write_ending_at<const N: usize>(mut n: u64, buf: &mut [u8; N], end: usize) -> usize {
    let mut pos = end;
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        pos -= 2;
        buf[pos..pos + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        let pair = n as usize * 2;
        buf[pos - 2..pos].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
        pos - 2
    } else {
        buf[pos - 1] = b'0' + n as u8;
        pos - 1
    }
}

/// The decimal digits of a number, held inline.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Decimal {
    buf: [u8; 20],
    start: u8,
}

impl Decimal {
    #[inline]
    pub(crate) fn new(n: u64) -> Decimal {
        let mut buf = [0u8; 20];
        let start = write_ending_at(n, &mut buf, 20);
        Decimal { buf, start: start as u8 }
    }

    #[inline]
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.buf[usize::from(self.start)..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits() {
        for n in [0, 7, 9, 10, 99, 100, 101, 999, 12_345, u64::from(u32::MAX), u64::MAX] {
            let want = n.to_string();
            assert_eq!(Decimal::new(n).as_bytes(), want.as_bytes());
            assert_eq!(len(n), want.len());
            let mut buf = [b'x'; 24];
            let start = write_ending_at(n, &mut buf, 22);
            assert_eq!((&buf[start..22], start), (want.as_bytes(), 22 - want.len()));
            assert_eq!(&buf[22..], b"xx");
        }
    }
}
