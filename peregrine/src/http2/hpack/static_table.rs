//! The static table (RFC 7541 Appendix A) and [`StaticName`], the static index of a known
//! field name.
//!
//! Names are recognised without a chain of string compares: a multiplicative hash of the
//! name's length, first and last byte picks the one static name it can be (the hash is
//! collision-free over the 52 distinct static names, checked when the crate compiles), and a
//! single slice compare confirms it.

/// The static table, index 1..=61 at positions 0..=60 (RFC 7541 Appendix A).
pub(crate) const STATIC: [(&[u8], &[u8]); 61] = [
    (b":authority", b""),
    (b":method", b"GET"),
    (b":method", b"POST"),
    (b":path", b"/"),
    (b":path", b"/index.html"),
    (b":scheme", b"http"),
    (b":scheme", b"https"),
    (b":status", b"200"),
    (b":status", b"204"),
    (b":status", b"206"),
    (b":status", b"304"),
    (b":status", b"400"),
    (b":status", b"404"),
    (b":status", b"500"),
    (b"accept-charset", b""),
    (b"accept-encoding", b"gzip, deflate"),
    (b"accept-language", b""),
    (b"accept-ranges", b""),
    (b"accept", b""),
    (b"access-control-allow-origin", b""),
    (b"age", b""),
    (b"allow", b""),
    (b"authorization", b""),
    (b"cache-control", b""),
    (b"content-disposition", b""),
    (b"content-encoding", b""),
    (b"content-language", b""),
    (b"content-length", b""),
    (b"content-location", b""),
    (b"content-range", b""),
    (b"content-type", b""),
    (b"cookie", b""),
    (b"date", b""),
    (b"etag", b""),
    (b"expect", b""),
    (b"expires", b""),
    (b"from", b""),
    (b"host", b""),
    (b"if-match", b""),
    (b"if-modified-since", b""),
    (b"if-none-match", b""),
    (b"if-range", b""),
    (b"if-unmodified-since", b""),
    (b"last-modified", b""),
    (b"link", b""),
    (b"location", b""),
    (b"max-forwards", b""),
    (b"proxy-authenticate", b""),
    (b"proxy-authorization", b""),
    (b"range", b""),
    (b"referer", b""),
    (b"refresh", b""),
    (b"retry-after", b""),
    (b"server", b""),
    (b"set-cookie", b""),
    (b"strict-transport-security", b""),
    (b"transfer-encoding", b""),
    (b"user-agent", b""),
    (b"vary", b""),
    (b"via", b""),
    (b"www-authenticate", b""),
];

/// The number of static entries; dynamic indexes start at `STATIC_LEN + 1` (RFC 7541 §2.3.3).
pub(crate) const STATIC_LEN: usize = STATIC.len();

/// A field name equal to a static-table name, as the lowest static index carrying that name
/// (1..=61): `:method` is 2 whether the field came as index 2, index 3, a literal with name
/// index 3, a dynamic entry whose name was `:method`, or the literal name `:method`.
///
/// The decoder sets it on every [`Field`](super::Field) whose name is a static name, so a
/// caller dispatches on `field.known == Some(StaticName::PATH)` instead of comparing strings;
/// the encoder takes it to skip the name lookup ([`BlockEncoder::known`](super::BlockEncoder::known)).
///
/// # Examples
///
/// ```
/// use peregrine::http2::hpack::StaticName;
/// assert_eq!(StaticName::from_name(b"content-length"), Some(StaticName::CONTENT_LENGTH));
/// assert_eq!(StaticName::CONTENT_LENGTH.index(), 28);
/// assert_eq!(StaticName::METHOD.as_bytes(), b":method");
/// assert_eq!(StaticName::from_name(b"x-request-id"), None);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct StaticName(u8);

macro_rules! static_names {
    ($($name:ident = $idx:literal, $text:literal;)*) => {
        impl StaticName {
            $(
                #[doc = concat!("`", $text, "` (static index ", stringify!($idx), ").")]
                pub const $name: StaticName = StaticName($idx);
            )*
        }
        #[cfg(test)]
        const ALL_NAMES: &[(StaticName, &str)] = &[$((StaticName::$name, $text)),*];
    };
}

static_names! {
    AUTHORITY = 1, ":authority";
    METHOD = 2, ":method";
    PATH = 4, ":path";
    SCHEME = 6, ":scheme";
    STATUS = 8, ":status";
    ACCEPT_CHARSET = 15, "accept-charset";
    ACCEPT_ENCODING = 16, "accept-encoding";
    ACCEPT_LANGUAGE = 17, "accept-language";
    ACCEPT_RANGES = 18, "accept-ranges";
    ACCEPT = 19, "accept";
    ACCESS_CONTROL_ALLOW_ORIGIN = 20, "access-control-allow-origin";
    AGE = 21, "age";
    ALLOW = 22, "allow";
    AUTHORIZATION = 23, "authorization";
    CACHE_CONTROL = 24, "cache-control";
    CONTENT_DISPOSITION = 25, "content-disposition";
    CONTENT_ENCODING = 26, "content-encoding";
    CONTENT_LANGUAGE = 27, "content-language";
    CONTENT_LENGTH = 28, "content-length";
    CONTENT_LOCATION = 29, "content-location";
    CONTENT_RANGE = 30, "content-range";
    CONTENT_TYPE = 31, "content-type";
    COOKIE = 32, "cookie";
    DATE = 33, "date";
    ETAG = 34, "etag";
    EXPECT = 35, "expect";
    EXPIRES = 36, "expires";
    FROM = 37, "from";
    HOST = 38, "host";
    IF_MATCH = 39, "if-match";
    IF_MODIFIED_SINCE = 40, "if-modified-since";
    IF_NONE_MATCH = 41, "if-none-match";
    IF_RANGE = 42, "if-range";
    IF_UNMODIFIED_SINCE = 43, "if-unmodified-since";
    LAST_MODIFIED = 44, "last-modified";
    LINK = 45, "link";
    LOCATION = 46, "location";
    MAX_FORWARDS = 47, "max-forwards";
    PROXY_AUTHENTICATE = 48, "proxy-authenticate";
    PROXY_AUTHORIZATION = 49, "proxy-authorization";
    RANGE = 50, "range";
    REFERER = 51, "referer";
    REFRESH = 52, "refresh";
    RETRY_AFTER = 53, "retry-after";
    SERVER = 54, "server";
    SET_COOKIE = 55, "set-cookie";
    STRICT_TRANSPORT_SECURITY = 56, "strict-transport-security";
    TRANSFER_ENCODING = 57, "transfer-encoding";
    USER_AGENT = 58, "user-agent";
    VARY = 59, "vary";
    VIA = 60, "via";
    WWW_AUTHENTICATE = 61, "www-authenticate";
}

impl StaticName {
    /// The static index of this name (the lowest index that carries it), 1..=61.
    #[inline]
    pub const fn index(self) -> u8 {
        self.0
    }

    /// The name's text, lowercase as in the static table.
    #[inline]
    pub const fn as_bytes(self) -> &'static [u8] {
        STATIC[self.0 as usize - 1].0
    }

    /// The static name equal to `name`, if any (exact bytes: an uppercase name is no static
    /// name, and is malformed in HTTP/2 anyway).
    #[inline]
    pub fn from_name(name: &[u8]) -> Option<StaticName> {
        match name_id(name) {
            0 => None,
            id => Some(StaticName(id)),
        }
    }

    /// The name of static entry `index` (1..=61) as its lowest index; internal, `index` is
    /// checked by the caller.
    #[inline]
    pub(crate) fn of_index(index: usize) -> u8 {
        NAME_OF_INDEX[index]
    }

    /// Wraps an id from [`name_id`] / [`StaticName::of_index`] (nonzero).
    #[inline]
    pub(crate) fn from_id(id: u8) -> Option<StaticName> {
        if id == 0 { None } else { Some(StaticName(id)) }
    }
}

/// `NAME_OF_INDEX[i]`: the lowest static index whose name equals entry `i`'s (`[0]` unused).
const NAME_OF_INDEX: [u8; STATIC_LEN + 1] = {
    let mut out = [0u8; STATIC_LEN + 1];
    let mut i = 1;
    while i <= STATIC_LEN {
        let mut j = 1;
        while !bytes_eq(STATIC[j - 1].0, STATIC[i - 1].0) {
            j += 1;
        }
        out[i] = j as u8;
        i += 1;
    }
    out
};

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

/// Hash multiplier: found by a search for a value that separates the 52 static names in 128
/// buckets with the key `len | first << 8 | last << 16` (the table below fails to compile on a
/// collision).
const HASH_MUL: u32 = 0x10ea_3681;
const HASH_BITS: u32 = 7;

#[inline]
const fn hash(len: usize, first: u8, last: u8) -> usize {
    let key = (len as u32 & 0xff) | (first as u32) << 8 | (last as u32) << 16;
    (key.wrapping_mul(HASH_MUL) >> (32 - HASH_BITS)) as usize
}

/// Bucket → static name id (0 = empty).
const NAME_HASH: [u8; 1 << HASH_BITS] = {
    let mut table = [0u8; 1 << HASH_BITS];
    let mut i = 1;
    while i <= STATIC_LEN {
        if NAME_OF_INDEX[i] as usize == i {
            let name = STATIC[i - 1].0;
            let bucket = hash(name.len(), name[0], name[name.len() - 1]);
            assert!(table[bucket] == 0, "static name hash collision: pick another HASH_MUL");
            table[bucket] = i as u8;
        }
        i += 1;
    }
    table
};

/// The static name id (1..=61) equal to `name`, 0 if none: one hash probe and one compare.
#[inline]
pub(crate) fn name_id(name: &[u8]) -> u8 {
    let (Some(&first), Some(&last)) = (name.first(), name.last()) else { return 0 };
    let id = NAME_HASH[hash(name.len(), first, last)];
    if id != 0 && STATIC[id as usize - 1].0 == name { id } else { 0 }
}

/// The static index carrying exactly `(name, value)` for the name `id` (nonzero), if any:
/// `:method`, `:path`, `:scheme`, `:status` and `accept-encoding` have values in the table,
/// every other entry an empty one.
#[inline]
pub(crate) fn full_match(id: u8, value: &[u8]) -> Option<usize> {
    let range = match id {
        2 => 2..4,
        4 => 4..6,
        6 => 6..8,
        8 => 8..15,
        16 => 16..17,
        // Every other static entry has an empty value.
        _ => return if value.is_empty() { Some(id as usize) } else { None },
    };
    range.into_iter().find(|&i| STATIC[i - 1].1 == value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_static_name_is_found_by_its_lowest_index() {
        for (i, (name, _)) in STATIC.iter().enumerate() {
            let id = name_id(name);
            assert_eq!(STATIC[id as usize - 1].0, *name);
            assert!(id as usize <= i + 1);
            assert_eq!(id, StaticName::of_index(i + 1));
        }
        assert_eq!(ALL_NAMES.len(), 52);
        for (n, text) in ALL_NAMES {
            assert_eq!(n.as_bytes(), text.as_bytes());
            assert_eq!(StaticName::from_name(text.as_bytes()), Some(*n));
        }
    }

    #[test]
    fn other_names_are_not_static() {
        for name in [
            &b""[..],
            b"x",
            b":",
            b"Host",
            b"hosts",
            b"hos",
            b"content-lengtH",
            b"x-forwarded-for",
            b":protocol",
            b"te",
            b"connection",
            b"keep-alive",
        ] {
            assert_eq!(name_id(name), 0, "{}", String::from_utf8_lossy(name));
        }
    }

    #[test]
    fn full_matches() {
        assert_eq!(full_match(2, b"GET"), Some(2));
        assert_eq!(full_match(2, b"POST"), Some(3));
        assert_eq!(full_match(2, b"PUT"), None);
        assert_eq!(full_match(8, b"500"), Some(14));
        assert_eq!(full_match(8, b"302"), None);
        assert_eq!(full_match(16, b"gzip, deflate"), Some(16));
        assert_eq!(full_match(1, b""), Some(1));
        assert_eq!(full_match(19, b"*/*"), None);
        assert_eq!(full_match(2, b""), None);
    }
}
