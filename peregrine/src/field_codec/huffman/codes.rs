//! The HPACK Huffman code (RFC 7541 Appendix B), as the code length of each symbol.
//!
//! The code is canonical: within one length, codes are consecutive in symbol order, and each
//! length's first code follows the previous length's last (shifted left). So the lengths alone
//! define it; [`CODES`] is derived from them when the crate compiles, and the tests check it
//! against code values printed in Appendix B and against the Kraft equality.

/// Symbols 0..=255 are octets; 256 is EOS.
pub(crate) const EOS: usize = 256;

/// `LENGTHS[s]`: the length in bits of symbol `s`'s code (RFC 7541 Appendix B, "len in bits").
#[rustfmt::skip]
pub(crate) const LENGTHS: [u8; 257] = [
    // 0x00-0x1f: control bytes.
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,
    28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
    //  SP   !   "   #   $   %   &   '   (   )   *   +   ,   -   .   /
         6, 10, 10, 12, 13,  6,  8, 11, 10, 10,  8, 11,  8,  6,  6,  6,
    //   0   1   2   3   4   5   6   7   8   9   :   ;   <   =   >   ?
         5,  5,  5,  6,  6,  6,  6,  6,  6,  6,  7,  8, 15,  6, 12, 10,
    //   @   A   B   C   D   E   F   G   H   I   J   K   L   M   N   O
        13,  6,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,
    //   P   Q   R   S   T   U   V   W   X   Y   Z   [   \   ]   ^   _
         7,  7,  7,  7,  7,  7,  7,  7,  8,  7,  8, 13, 19, 13, 14,  6,
    //   `   a   b   c   d   e   f   g   h   i   j   k   l   m   n   o
        15,  5,  6,  5,  6,  5,  6,  6,  6,  5,  7,  7,  6,  6,  6,  5,
    //   p   q   r   s   t   u   v   w   x   y   z   {   |   }   ~ DEL
         6,  7,  6,  5,  5,  6,  7,  7,  7,  7,  7, 15, 11, 14, 13, 28,
    // 0x80-0xff: obs-text.
    20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,
    24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
    22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,
    21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
    26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
    19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
    20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,
    26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
    // EOS
    30,
];

/// The longest code (EOS's).
pub(crate) const MAX_LEN: usize = 30;

/// `CODES[s]`: symbol `s`'s code, right-aligned (the "code as hex aligned to LSB" column).
pub(crate) const CODES: [u32; 257] = {
    let mut codes = [0u32; 257];
    let mut code = 0u32;
    let mut len = 1;
    while len <= MAX_LEN {
        let mut s = 0;
        while s < 257 {
            if LENGTHS[s] as usize == len {
                codes[s] = code;
                code += 1;
            }
            s += 1;
        }
        code <<= 1;
        len += 1;
    }
    codes
};

/// Canonical decoding of one code from its leading bits (for codes longer than the fast
/// table's window): `FIRST[len]` is the first code of that length, `COUNT[len]` how many there
/// are, `START[len]` where their symbols begin in [`SORTED`].
pub(crate) struct Canonical {
    pub first: [u32; MAX_LEN + 1],
    pub count: [u32; MAX_LEN + 1],
    pub start: [u16; MAX_LEN + 1],
    /// Symbols ordered by (length, symbol), i.e. by code.
    pub sorted: [u16; 257],
}

pub(crate) const CANONICAL: Canonical = {
    let mut c = Canonical {
        first: [0; MAX_LEN + 1],
        count: [0; MAX_LEN + 1],
        start: [0; MAX_LEN + 1],
        sorted: [0; 257],
    };
    let mut n = 0;
    let mut len = 1;
    while len <= MAX_LEN {
        c.start[len] = n as u16;
        let mut s = 0;
        while s < 257 {
            if LENGTHS[s] as usize == len {
                if c.count[len] == 0 {
                    c.first[len] = CODES[s];
                }
                c.count[len] += 1;
                c.sorted[n] = s as u16;
                n += 1;
            }
            s += 1;
        }
        len += 1;
    }
    c
};

/// Decodes the symbol whose code starts at the top of `bits30` (the next 30 bits of input,
/// right-aligned): `(symbol, length)`. Every 30-bit string starts with a code, the code being
/// complete (Kraft sum 1), so this always finds one.
#[inline]
pub(crate) fn decode_one(bits30: u32) -> (usize, u32) {
    let c = &CANONICAL;
    let mut len = 5;
    while len <= MAX_LEN {
        let code = bits30 >> (MAX_LEN - len);
        let offset = code.wrapping_sub(c.first[len]);
        if offset < c.count[len] {
            return (c.sorted[c.start[len] as usize + offset as usize] as usize, len as u32);
        }
        len += 1;
    }
    (EOS, MAX_LEN as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_appendix_b_samples() {
        // (symbol, code as hex aligned to LSB, length), read from RFC 7541 Appendix B.
        let samples: &[(usize, u32, u8)] = &[
            (0, 0x1ff8, 13),
            (1, 0x7fffd8, 23),
            (9, 0xffffea, 24),
            (10, 0x3ffffffc, 30),
            (b' ' as usize, 0x14, 6),
            (b'$' as usize, 0x1ff9, 13),
            (b'0' as usize, 0x0, 5),
            (b'A' as usize, 0x21, 6),
            (b'\\' as usize, 0x7fff0, 19),
            (b'a' as usize, 0x3, 5),
            (b'z' as usize, 0x7b, 7),
            (b'~' as usize, 0x1ffd, 13),
            (127, 0xffffffc, 28),
            (128, 0xfffe6, 20),
            (153, 0x1fffdc, 21),
            (199, 0x1ffffec, 25),
            (203, 0x7ffffde, 27),
            (220, 0xffffffd, 28),
            (240, 0x3ffffeb, 26),
            (249, 0xffffffe, 28),
            (254, 0x7fffff0, 27),
            (255, 0x3ffffee, 26),
            (EOS, 0x3fffffff, 30),
        ];
        for &(s, code, len) in samples {
            assert_eq!((CODES[s], LENGTHS[s]), (code, len), "symbol {s}");
        }
    }

    #[test]
    fn the_code_is_complete_and_prefix_free() {
        // Kraft: sum of 2^-len over all symbols is exactly 1 (scaled by 2^30).
        let sum: u64 = LENGTHS.iter().map(|&l| 1u64 << (MAX_LEN - l as usize)).sum();
        assert_eq!(sum, 1 << MAX_LEN);
        for s in 0..257 {
            let bits30 = CODES[s] << (MAX_LEN - LENGTHS[s] as usize);
            assert_eq!(decode_one(bits30), (s, u32::from(LENGTHS[s])));
            // Any continuation after the code decodes to the same symbol.
            let tail = (1u32 << (MAX_LEN - LENGTHS[s] as usize)) - 1;
            assert_eq!(decode_one(bits30 | tail), (s, u32::from(LENGTHS[s])));
        }
    }
}
