//! The QPACK static table (RFC 9204 Appendix A): 99 entries, indexed from 0, and the lookups
//! the encoder needs (a full match, or an entry with the name) and the decoder needs (the
//! HPACK [`StaticName`] of an entry's name, so decoded fields carry the same `known` names as
//! HTTP/2's and share their validation).
//!
//! Names are found with one hash probe (length, first, middle and last octet; linear probing
//! over 128 slots, built when the crate compiles) and a slice compare; the entries sharing a
//! name are chained, so a value match walks at most that name's entries (11 for `:status`).

use crate::http2::hpack::StaticName;
use crate::http2::hpack::static_table::STATIC as HPACK_STATIC;

/// The static table, RFC 9204 Appendix A.
#[rustfmt::skip]
pub(crate) const STATIC: [(&[u8], &[u8]); 99] = [
    (b":authority", b""),
    (b":path", b"/"),
    (b"age", b"0"),
    (b"content-disposition", b""),
    (b"content-length", b"0"),
    (b"cookie", b""),
    (b"date", b""),
    (b"etag", b""),
    (b"if-modified-since", b""),
    (b"if-none-match", b""),
    (b"last-modified", b""),
    (b"link", b""),
    (b"location", b""),
    (b"referer", b""),
    (b"set-cookie", b""),
    (b":method", b"CONNECT"),
    (b":method", b"DELETE"),
    (b":method", b"GET"),
    (b":method", b"HEAD"),
    (b":method", b"OPTIONS"),
    (b":method", b"POST"),
    (b":method", b"PUT"),
    (b":scheme", b"http"),
    (b":scheme", b"https"),
    (b":status", b"103"),
    (b":status", b"200"),
    (b":status", b"304"),
    (b":status", b"404"),
    (b":status", b"503"),
    (b"accept", b"*/*"),
    (b"accept", b"application/dns-message"),
    (b"accept-encoding", b"gzip, deflate, br"),
    (b"accept-ranges", b"bytes"),
    (b"access-control-allow-headers", b"cache-control"),
    (b"access-control-allow-headers", b"content-type"),
    (b"access-control-allow-origin", b"*"),
    (b"cache-control", b"max-age=0"),
    (b"cache-control", b"max-age=2592000"),
    (b"cache-control", b"max-age=604800"),
    (b"cache-control", b"no-cache"),
    (b"cache-control", b"no-store"),
    (b"cache-control", b"public, max-age=31536000"),
    (b"content-encoding", b"br"),
    (b"content-encoding", b"gzip"),
    (b"content-type", b"application/dns-message"),
    (b"content-type", b"application/javascript"),
    (b"content-type", b"application/json"),
    (b"content-type", b"application/x-www-form-urlencoded"),
    (b"content-type", b"image/gif"),
    (b"content-type", b"image/jpeg"),
    (b"content-type", b"image/png"),
    (b"content-type", b"text/css"),
    (b"content-type", b"text/html; charset=utf-8"),
    (b"content-type", b"text/plain"),
    (b"content-type", b"text/plain;charset=utf-8"),
    (b"range", b"bytes=0-"),
    (b"strict-transport-security", b"max-age=31536000"),
    (b"strict-transport-security", b"max-age=31536000; includesubdomains"),
    (b"strict-transport-security", b"max-age=31536000; includesubdomains; preload"),
    (b"vary", b"accept-encoding"),
    (b"vary", b"origin"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-xss-protection", b"1; mode=block"),
    (b":status", b"100"),
    (b":status", b"204"),
    (b":status", b"206"),
    (b":status", b"302"),
    (b":status", b"400"),
    (b":status", b"403"),
    (b":status", b"421"),
    (b":status", b"425"),
    (b":status", b"500"),
    (b"accept-language", b""),
    (b"access-control-allow-credentials", b"FALSE"),
    (b"access-control-allow-credentials", b"TRUE"),
    (b"access-control-allow-headers", b"*"),
    (b"access-control-allow-methods", b"get"),
    (b"access-control-allow-methods", b"get, post, options"),
    (b"access-control-allow-methods", b"options"),
    (b"access-control-expose-headers", b"content-length"),
    (b"access-control-request-headers", b"content-type"),
    (b"access-control-request-method", b"get"),
    (b"access-control-request-method", b"post"),
    (b"alt-svc", b"clear"),
    (b"authorization", b""),
    (b"content-security-policy", b"script-src 'none'; object-src 'none'; base-uri 'none'"),
    (b"early-data", b"1"),
    (b"expect-ct", b""),
    (b"forwarded", b""),
    (b"if-range", b""),
    (b"origin", b""),
    (b"purpose", b"prefetch"),
    (b"server", b""),
    (b"timing-allow-origin", b"*"),
    (b"upgrade-insecure-requests", b"1"),
    (b"user-agent", b""),
    (b"x-forwarded-for", b""),
    (b"x-frame-options", b"deny"),
    (b"x-frame-options", b"sameorigin"),
];

/// The number of static entries: indexes 0..=98.
pub(crate) const STATIC_LEN: usize = STATIC.len();

const NONE: u8 = u8::MAX;

const fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// `HPACK_NAME[i]`: the HPACK static name id (1..=61, [`StaticName`]'s) of entry `i`'s name, 0
/// when HPACK's table has no such name (`x-frame-options`, `alt-svc`, ...).
pub(crate) const HPACK_NAME: [u8; STATIC_LEN] = {
    let mut out = [0u8; STATIC_LEN];
    let mut i = 0;
    while i < STATIC_LEN {
        let mut j = 0;
        while j < HPACK_STATIC.len() {
            if bytes_eq(HPACK_STATIC[j].0, STATIC[i].0) {
                out[i] = j as u8 + 1;
                break;
            }
            j += 1;
        }
        i += 1;
    }
    out
};

/// `NEXT_SAME_NAME[i]`: the next entry after `i` with the same name, or `NONE`.
const NEXT_SAME_NAME: [u8; STATIC_LEN] = {
    let mut out = [NONE; STATIC_LEN];
    let mut i = 0;
    while i < STATIC_LEN {
        let mut j = i + 1;
        while j < STATIC_LEN {
            if bytes_eq(STATIC[j].0, STATIC[i].0) {
                out[i] = j as u8;
                break;
            }
            j += 1;
        }
        i += 1;
    }
    out
};

/// `FIRST_OF_HPACK[id]`: the first entry whose name is HPACK static name `id`, or `NONE`.
const FIRST_OF_HPACK: [u8; HPACK_STATIC.len() + 1] = {
    let mut out = [NONE; HPACK_STATIC.len() + 1];
    let mut i = STATIC_LEN;
    while i > 0 {
        i -= 1;
        if HPACK_NAME[i] != 0 {
            out[HPACK_NAME[i] as usize] = i as u8;
        }
    }
    out
};

const SLOTS: usize = 128;

#[inline]
const fn hash(name: &[u8]) -> usize {
    let n = name.len();
    let key = (n as u32 & 0xff)
        | (name[0] as u32) << 8
        | (name[n / 2] as u32) << 16
        | (name[n - 1] as u32) << 24;
    (key.wrapping_mul(0x9e37_79b1) >> (32 - 7)) as usize
}

/// Slot → the first entry with the name hashed there (`NONE` = empty), linear probing.
const NAME_SLOTS: [u8; SLOTS] = {
    let mut t = [NONE; SLOTS];
    let mut i = 0;
    while i < STATIC_LEN {
        let mut first = 0;
        while !bytes_eq(STATIC[first].0, STATIC[i].0) {
            first += 1;
        }
        if first == i {
            let mut s = hash(STATIC[i].0);
            while t[s] != NONE {
                s = (s + 1) % SLOTS;
            }
            t[s] = i as u8;
        }
        i += 1;
    }
    t
};

/// The first static entry with this name, if any.
#[inline]
fn first_with_name(name: &[u8]) -> Option<usize> {
    if name.is_empty() {
        return None;
    }
    let mut s = hash(name);
    loop {
        let i = NAME_SLOTS[s];
        if i == NONE {
            return None;
        }
        if STATIC[i as usize].0 == name {
            return Some(i as usize);
        }
        s = (s + 1) % SLOTS;
    }
}

/// What the static table holds for a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Match {
    /// The entry with this name and value.
    pub full: Option<usize>,
    /// The first entry with this name.
    pub name: Option<usize>,
}

/// Looks a field up; `hpack_id` is its name's HPACK static name id when the caller knows it
/// (0 otherwise), which skips the hash.
#[inline]
pub(crate) fn find(name: &[u8], hpack_id: u8, value: &[u8]) -> Match {
    let first = if hpack_id != 0 {
        match FIRST_OF_HPACK[hpack_id as usize] {
            NONE => None,
            i => Some(i as usize),
        }
    } else {
        first_with_name(name)
    };
    let Some(first) = first else { return Match { full: None, name: None } };
    let mut i = first;
    loop {
        if STATIC[i].1 == value {
            return Match { full: Some(i), name: Some(first) };
        }
        match NEXT_SAME_NAME[i] {
            NONE => return Match { full: None, name: Some(first) },
            j => i = j as usize,
        }
    }
}

/// The HPACK static name of entry `index`'s name (see [`HPACK_NAME`]).
#[cfg_attr(not(test), allow(dead_code))]
#[inline]
pub(crate) fn hpack_name(index: usize) -> Option<StaticName> {
    StaticName::from_id(HPACK_NAME[index])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appendix_a_spot_checks() {
        assert_eq!(STATIC_LEN, 99);
        assert_eq!(STATIC[0], (&b":authority"[..], &b""[..]));
        assert_eq!(STATIC[17], (&b":method"[..], &b"GET"[..]));
        assert_eq!(STATIC[25], (&b":status"[..], &b"200"[..]));
        assert_eq!(STATIC[31], (&b"accept-encoding"[..], &b"gzip, deflate, br"[..]));
        assert_eq!(STATIC[63], (&b":status"[..], &b"100"[..]));
        assert_eq!(STATIC[98], (&b"x-frame-options"[..], &b"sameorigin"[..]));
    }

    #[test]
    fn every_entry_is_found_by_name_and_value() {
        for (i, (name, value)) in STATIC.iter().enumerate() {
            let m = find(name, 0, value);
            assert_eq!(m.full, Some(i), "{}", String::from_utf8_lossy(name));
            let first = STATIC.iter().position(|(n, _)| n == name);
            assert_eq!(m.name, first);
            // With the HPACK name id, when there is one: the same answer.
            let id = HPACK_NAME[i];
            if id != 0 {
                assert_eq!(find(name, id, value), m);
                assert_eq!(StaticName::from_name(name).map(StaticName::index), Some(id));
                assert_eq!(hpack_name(i).map(StaticName::index), Some(id));
            } else {
                assert_eq!(StaticName::from_name(name), None);
                assert_eq!(hpack_name(i), None);
            }
        }
    }

    #[test]
    fn other_fields() {
        struct Case {
            name: &'static [u8],
            value: &'static [u8],
            expect: Match,
        }
        let cases = [
            Case { name: b":status", value: b"201", expect: Match { full: None, name: Some(24) } },
            Case {
                name: b":method",
                value: b"PATCH",
                expect: Match { full: None, name: Some(15) },
            },
            Case {
                name: b"content-length",
                value: b"12",
                expect: Match { full: None, name: Some(4) },
            },
            Case {
                name: b"x-frame-options",
                value: b"allow",
                expect: Match { full: None, name: Some(97) },
            },
            Case { name: b"host", value: b"", expect: Match { full: None, name: None } },
            Case { name: b"", value: b"", expect: Match { full: None, name: None } },
            Case { name: b"x-request-id", value: b"1", expect: Match { full: None, name: None } },
            Case { name: b"Accept", value: b"*/*", expect: Match { full: None, name: None } },
        ];
        for c in cases {
            assert_eq!(find(c.name, 0, c.value), c.expect, "{}", String::from_utf8_lossy(c.name));
        }
        // HPACK knows `host`, QPACK's table does not.
        assert_eq!(find(b"host", StaticName::HOST.index(), b"a"), Match { full: None, name: None });
    }
}
