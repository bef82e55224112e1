//! Eight bytes as one `u64`: finding a byte value a word at a time (SWAR), for short inputs
//! where a vector search's setup costs more than the scan (path segments, request targets).

const LOW: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Index (0..8) of the first byte equal to `byte` in `w` (little-endian: byte 0 is the lowest),
/// or 8 when there is none.
///
/// The classic zero-byte test on `w ^ [byte; 8]`: `(x - LOW) & !x & HIGH` sets the top bit of
/// the lowest zero byte exactly (a borrow can only mark bytes above a true zero byte).
#[inline(always)]
pub(crate) fn first_byte(w: u64, byte: u8) -> u32 {
    let x = w ^ (LOW * u64::from(byte));
    let z = x.wrapping_sub(LOW) & !x & HIGH;
    z.trailing_zeros() / 8
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a byte loop: every byte value at every position, with a decoy value elsewhere.
    #[test]
    fn first_byte_matches_a_byte_loop() {
        for target in [b'/', b'?', 0, 0x80, 0xff] {
            for at in 0..8 {
                for value in 0..=255u8 {
                    for decoy in [target.wrapping_add(1), target.wrapping_sub(1), target] {
                        let mut bytes = [decoy; 8];
                        bytes[at] = value;
                        let want = bytes.iter().position(|&b| b == target).unwrap_or(8) as u32;
                        let got = first_byte(u64::from_le_bytes(bytes), target);
                        assert_eq!(got, want, "{bytes:?} {target}");
                    }
                }
            }
        }
    }
}
