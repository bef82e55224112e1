//! A `u64` in decimal ASCII on the stack, for header values written per response
//! (`content-length`) without formatting machinery or allocation.

/// The decimal digits of a number, held inline.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Decimal {
    buf: [u8; 20],
    start: u8,
}

impl Decimal {
    pub(crate) fn new(mut n: u64) -> Decimal {
        let mut buf = [0u8; 20];
        let mut i = buf.len();
        loop {
            i -= 1;
            buf[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        Decimal { buf, start: i as u8 }
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.buf[usize::from(self.start)..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits() {
        for n in [0, 7, 10, 99, 100, 12_345, u64::from(u32::MAX), u64::MAX] {
            assert_eq!(Decimal::new(n).as_bytes(), n.to_string().as_bytes());
        }
    }
}
