//! Writing prefixed integers (RFC 7541 §5.1; RFC 9204 §4.1.1 reuses it). Reading stays with
//! each codec: HPACK stops at 32 bits and QPACK must read 62 (RFC 9204 §4.1.1), with their
//! own errors.

/// Appends `value` with an `n`-bit prefix (1..=8); `high` carries the representation's
/// pattern bits above the prefix (e.g. `0x80` for an indexed field line).
#[inline]
pub(crate) fn encode(dst: &mut Vec<u8>, high: u8, n: u32, value: u64) {
    let mask = (1u64 << n) - 1;
    if value < mask {
        dst.push(high | value as u8);
        return;
    }
    dst.push(high | mask as u8);
    let mut rest = value - mask;
    while rest >= 0x80 {
        dst.push(0x80 | (rest & 0x7f) as u8);
        rest >>= 7;
    }
    dst.push(rest as u8);
}
