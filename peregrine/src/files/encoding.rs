//! Content codings and the client's preference among them by `Accept-Encoding`
//! (RFC 9110 §12.5.3), for precompressed siblings (`file.br`, `file.zst`, `file.gz`) and
//! compression on the fly.

use crate::http1::field_syntax::trim_ows;

/// A content coding: a precompressed sibling file, or compression on the fly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Coding {
    /// Brotli (RFC 7932), sibling `NAME.br`.
    Brotli,
    /// Zstandard (RFC 8878), sibling `NAME.zst`.
    Zstd,
    /// Gzip (RFC 9110 §8.4.1.3), sibling `NAME.gz`.
    Gzip,
}

impl Coding {
    /// Every coding, in the order preferred when the client weighs them equally: brotli and
    /// zstd make smaller files than gzip, and brotli's are the smallest for text.
    pub(crate) const ALL: [Coding; 3] = [Coding::Brotli, Coding::Zstd, Coding::Gzip];

    /// The content-coding token, as sent in `Content-Encoding`.
    pub fn as_str(self) -> &'static str {
        match self {
            Coding::Brotli => "br",
            Coding::Zstd => "zstd",
            Coding::Gzip => "gzip",
        }
    }

    /// The suffix of the sibling file name.
    pub(crate) fn extension(self) -> &'static str {
        match self {
            Coding::Brotli => ".br",
            Coding::Zstd => ".zst",
            Coding::Gzip => ".gz",
        }
    }

    /// Appended to the entity-tag so each coding has its own tag.
    pub(crate) fn tag_suffix(self) -> &'static str {
        match self {
            Coding::Brotli => "-br",
            Coding::Zstd => "-zst",
            Coding::Gzip => "-gz",
        }
    }

    /// The position in [`Coding::ALL`].
    pub(crate) fn index(self) -> usize {
        match self {
            Coding::Brotli => 0,
            Coding::Zstd => 1,
            Coding::Gzip => 2,
        }
    }
}

/// The codings to try, best first; at most one entry per coding.
pub(crate) type Preference = [Option<Coding>; 3];

/// The acceptable sibling codings for an `Accept-Encoding` value, best first.
///
/// RFC 9110 §12.5.3: a coding is acceptable when listed with a non-zero weight, or matched by
/// `*` with a non-zero weight and not listed itself; `q=0` excludes. `x-gzip` counts as `gzip`
/// (§8.4.1.3). A malformed weight counts as 0. Equal weights go in [`Coding::ALL`] order. A
/// coding weighed
/// strictly below an explicit `identity` is not used. Without the field we send identity:
/// the RFC would allow any coding, but clients that cannot decode do not send the field.
pub(crate) fn preferred(accept_encoding: Option<&[u8]>) -> Preference {
    let mut out = [None; 3];
    let Some(field) = accept_encoding else {
        return out;
    };
    let mut q = [None::<u16>; 3];
    let mut star = None::<u16>;
    let mut identity = None::<u16>;
    for element in field.split(|&b| b == b',') {
        let mut parts = element.split(|&b| b == b';');
        let coding = trim_ows(parts.next().unwrap_or_default());
        if coding.is_empty() {
            continue;
        }
        let weight = weight(parts);
        let kept = if coding.eq_ignore_ascii_case(b"br") {
            &mut q[0]
        } else if coding.eq_ignore_ascii_case(b"zstd") {
            &mut q[1]
        } else if coding.eq_ignore_ascii_case(b"gzip") || coding.eq_ignore_ascii_case(b"x-gzip") {
            &mut q[2]
        } else if coding == b"*" {
            &mut star
        } else if coding.eq_ignore_ascii_case(b"identity") {
            &mut identity
        } else {
            continue;
        };
        // A repeated coding keeps its first weight.
        kept.get_or_insert(weight);
    }
    let floor = identity.unwrap_or(0);
    let mut ranked = Coding::ALL.map(|c| (q[c.index()].or(star).unwrap_or(0), c));
    // A stable sort keeps the order of `Coding::ALL` on equal weights.
    ranked.sort_by_key(|r| std::cmp::Reverse(r.0));
    let mut n = 0;
    for (w, c) in ranked {
        if w > 0 && w >= floor {
            out[n] = Some(c);
            n += 1;
        }
    }
    out
}

/// The weight of one element from its parameters: `q=` qvalue, default 1 (RFC 9110 §12.4.2).
/// `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`, in thousandths.
fn weight<'a>(params: impl Iterator<Item = &'a [u8]>) -> u16 {
    for p in params {
        let p = trim_ows(p);
        let Some(v) = p.strip_prefix(b"q=").or_else(|| p.strip_prefix(b"Q=")) else {
            continue;
        };
        return qvalue(v).unwrap_or(0);
    }
    1000
}

fn qvalue(v: &[u8]) -> Option<u16> {
    let (int, frac) = match v.iter().position(|&b| b == b'.') {
        Some(dot) => (&v[..dot], &v[dot + 1..]),
        None => (v, &b""[..]),
    };
    if frac.len() > 3 || !frac.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut thousandths = 0u16;
    for i in 0..3 {
        thousandths = thousandths * 10 + frac.get(i).map_or(0, |d| u16::from(d - b'0'));
    }
    match int {
        b"0" => Some(thousandths),
        b"1" if thousandths == 0 => Some(1000),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Coding::*;

    #[test]
    fn accept_encoding_rfc9110_12_5_3() {
        struct Case {
            input: Option<&'static [u8]>,
            expect: Preference,
        }
        let cases = [
            Case { input: None, expect: [None, None, None] },
            Case { input: Some(b""), expect: [None, None, None] },
            Case { input: Some(b"gzip"), expect: [Some(Gzip), None, None] },
            Case { input: Some(b"x-gzip"), expect: [Some(Gzip), None, None] },
            Case { input: Some(b"GZIP, BR"), expect: [Some(Brotli), Some(Gzip), None] },
            Case {
                input: Some(b"gzip, deflate, br, zstd"),
                expect: [Some(Brotli), Some(Zstd), Some(Gzip)],
            },
            Case { input: Some(b"zstd;q=1, br;q=0.9"), expect: [Some(Zstd), Some(Brotli), None] },
            Case { input: Some(b"ZSTD, gzip;q=0.1"), expect: [Some(Zstd), Some(Gzip), None] },
            Case { input: Some(b"br;q=0.5, gzip;q=0.8"), expect: [Some(Gzip), Some(Brotli), None] },
            Case {
                input: Some(b"br ; q=0.5 ,gzip ;Q=1"),
                expect: [Some(Gzip), Some(Brotli), None],
            },
            // q=0 excludes (§12.4.2), in every spelling.
            Case { input: Some(b"br;q=0, gzip"), expect: [Some(Gzip), None, None] },
            Case { input: Some(b"br;q=0.000, gzip;q=0.0"), expect: [None, None, None] },
            // "*" matches what is not listed.
            Case { input: Some(b"*"), expect: [Some(Brotli), Some(Zstd), Some(Gzip)] },
            Case { input: Some(b"*;q=0.5, br;q=0"), expect: [Some(Zstd), Some(Gzip), None] },
            Case { input: Some(b"*;q=0"), expect: [None, None, None] },
            Case { input: Some(b"gzip, *;q=0"), expect: [Some(Gzip), None, None] },
            // identity preferred explicitly over a coding.
            Case { input: Some(b"identity, gzip;q=0.5"), expect: [None, None, None] },
            Case { input: Some(b"identity;q=0.5, gzip"), expect: [Some(Gzip), None, None] },
            // Malformed weights count as 0.
            Case { input: Some(b"br;q=2, gzip;q=0.5"), expect: [Some(Gzip), None, None] },
            Case { input: Some(b"br;q=1.5, gzip;q=0.1234"), expect: [None, None, None] },
            Case { input: Some(b"br;q=, gzip;q=1.000"), expect: [Some(Gzip), None, None] },
            // A repeated coding keeps its first weight.
            Case { input: Some(b"br;q=0, br"), expect: [None, None, None] },
        ];
        for c in cases {
            assert_eq!(preferred(c.input), c.expect, "{:?}", c.input.map(String::from_utf8_lossy));
        }
    }
}
