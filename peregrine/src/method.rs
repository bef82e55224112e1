//! Request methods as a one-byte tag (RFC 9110 §9).
//!
//! The nine standard methods are recognised by comparing machine words against the start of the
//! request line, so a request never builds a string for its method. Any other token is an
//! extension method; its text stays a borrowed span of the input.

use std::fmt;

/// An HTTP request method: one of the nine standard methods or an extension token.
///
/// Methods are case-sensitive (RFC 9110 §9.1): `get` is an extension method, not `GET`.
///
/// # Examples
/// ```
/// use peregrine::Method;
/// assert_eq!(Method::from_token(b"GET"), Method::Get);
/// assert_eq!(Method::from_token(b"get"), Method::Extension);
/// assert!(Method::Get.is_safe());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Method {
    /// `GET` (RFC 9110 §9.3.1).
    Get,
    /// `HEAD` (RFC 9110 §9.3.2).
    Head,
    /// `POST` (RFC 9110 §9.3.3).
    Post,
    /// `PUT` (RFC 9110 §9.3.4).
    Put,
    /// `DELETE` (RFC 9110 §9.3.5).
    Delete,
    /// `CONNECT` (RFC 9110 §9.3.6).
    Connect,
    /// `OPTIONS` (RFC 9110 §9.3.7).
    Options,
    /// `TRACE` (RFC 9110 §9.3.8).
    Trace,
    /// `PATCH` (RFC 5789).
    Patch,
    /// Any other method token; the text is kept by whoever holds the request line.
    Extension,
}

/// The standard methods in tag order, for iteration.
pub const STANDARD_METHODS: [Method; 9] = [
    Method::Get,
    Method::Head,
    Method::Post,
    Method::Put,
    Method::Delete,
    Method::Connect,
    Method::Options,
    Method::Trace,
    Method::Patch,
];

const fn word(s: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    let mut i = 0;
    while i < s.len() {
        w[i] = s[i];
        i += 1;
    }
    u64::from_le_bytes(w)
}

const fn mask(len: usize) -> u64 {
    if len >= 8 { u64::MAX } else { (1u64 << (len * 8)) - 1 }
}

// Each entry: the method followed by its terminating space, as a little-endian word, and the mask
// covering those bytes.
const WORDS: [(u64, u64, Method, u8); 9] = [
    (word(b"GET "), mask(4), Method::Get, 3),
    (word(b"POST "), mask(5), Method::Post, 4),
    (word(b"HEAD "), mask(5), Method::Head, 4),
    (word(b"PUT "), mask(4), Method::Put, 3),
    (word(b"DELETE "), mask(7), Method::Delete, 6),
    (word(b"OPTIONS "), mask(8), Method::Options, 7),
    (word(b"PATCH "), mask(6), Method::Patch, 5),
    (word(b"CONNECT "), mask(8), Method::Connect, 7),
    (word(b"TRACE "), mask(6), Method::Trace, 5),
];

/// Multiplier of the perfect hash: the first four bytes of the nine methods ("GET ", "HEAD",
/// "POST", "PUT ", "DELE", "CONN", "OPTI", "TRAC", "PATC") times this, top four bits of the
/// 32-bit product, are nine distinct buckets of [`BUCKETS`] (asserted when the table is built).
const HASH_MUL: u32 = 0x2265_b1f5;

/// The bucket of a line whose first eight bytes are `w`.
#[inline(always)]
const fn bucket(w: u64) -> usize {
    ((w as u32).wrapping_mul(HASH_MUL) >> 28) as usize
}

/// A method in the perfect-hash table.
#[derive(Clone, Copy)]
struct MethodEntry {
    /// The method and its space, little-endian, zero-padded.
    word: u64,
    /// Covers the bytes of `word`. Empty buckets have `mask == 0` and `word == 1`, which no line
    /// can match.
    mask: u64,
    method: Method,
    len: u8,
}

const fn build_buckets() -> [MethodEntry; 16] {
    let mut t = [MethodEntry { word: 1, mask: 0, method: Method::Extension, len: 0 }; 16];
    let mut i = 0;
    while i < WORDS.len() {
        let (word, mask, method, len) = WORDS[i];
        let s = bucket(word);
        assert!(t[s].mask == 0, "HASH_MUL is not a perfect hash of the methods");
        t[s] = MethodEntry { word, mask, method, len };
        i += 1;
    }
    t
}

/// The nine standard methods, each in the bucket its first four bytes hash to.
static BUCKETS: [MethodEntry; 16] = build_buckets();

impl Method {
    /// Recognises a standard method at the start of a request line.
    ///
    /// `line` must start with the method; the method counts only when followed by a space.
    /// Returns the method and the length of its token (without the space), or `None` when the
    /// line does not start with a standard method followed by a space (an extension method,
    /// garbage, or fewer than eight bytes of input: callers then fall back to
    /// [`Method::from_token`]).
    #[inline]
    pub fn recognize_prefix(line: &[u8]) -> Option<(Method, usize)> {
        let first8: [u8; 8] = line.get(..8)?.try_into().ok()?;
        let w = u64::from_le_bytes(first8);
        // One multiply picks the only method the line can be; one masked compare confirms it.
        // No data-dependent branch before the result, so a random mix of methods costs the
        // same as a run of GETs.
        let s = BUCKETS[bucket(w)];
        (w & s.mask == s.word).then_some((s.method, usize::from(s.len)))
    }

    /// Maps an exact method token to its tag; anything else is [`Method::Extension`].
    ///
    /// Case-sensitive, allocation-free. Does not check that an extension token is a valid
    /// `token` (RFC 9110 §5.6.2); the request parser does that.
    #[inline]
    pub fn from_token(token: &[u8]) -> Method {
        if token.is_empty() || token.len() > 7 {
            return Method::Extension;
        }
        let w = word_of(token) | (u64::from(b' ') << (token.len() * 8));
        let s = BUCKETS[bucket(w)];
        if s.mask == mask(token.len() + 1) && w == s.word { s.method } else { Method::Extension }
    }

    /// The method's canonical text, or `None` for an extension method.
    #[inline]
    pub const fn as_str(self) -> Option<&'static str> {
        // A table indexed by the tag (a `match` compiled to a jump table on the parse path).
        const TEXT: [Option<&str>; 10] = [
            Some("GET"),
            Some("HEAD"),
            Some("POST"),
            Some("PUT"),
            Some("DELETE"),
            Some("CONNECT"),
            Some("OPTIONS"),
            Some("TRACE"),
            Some("PATCH"),
            None,
        ];
        TEXT[self as usize]
    }

    /// Safe methods do not request a state change (RFC 9110 §9.2.1).
    pub const fn is_safe(self) -> bool {
        matches!(self, Method::Get | Method::Head | Method::Options | Method::Trace)
    }

    /// Idempotent methods may be retried automatically (RFC 9110 §9.2.2).
    pub const fn is_idempotent(self) -> bool {
        self.is_safe() || matches!(self, Method::Put | Method::Delete)
    }
}

fn word_of(token: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w[..token.len()].copy_from_slice(token);
    u64::from_le_bytes(w)
}

/// A method a request can be sent with: a [`Method`] (a standard one: [`Method::Extension`]
/// has no text and is refused), a token such as `"PROPFIND"` (`&str` or `String`), or an
/// [`http::Method`]. Either way the method is recognised once by word compares, never
/// upper-cased, and nothing is allocated.
pub trait AsMethod {
    /// The method's tag and its token.
    fn as_method(&self) -> (Method, &str);
}

impl AsMethod for Method {
    #[inline]
    fn as_method(&self) -> (Method, &str) {
        (*self, self.as_str().unwrap_or(""))
    }
}

impl AsMethod for str {
    #[inline]
    fn as_method(&self) -> (Method, &str) {
        (Method::from_token(self.as_bytes()), self)
    }
}

impl AsMethod for String {
    #[inline]
    fn as_method(&self) -> (Method, &str) {
        self.as_str().as_method()
    }
}

impl AsMethod for http::Method {
    #[inline]
    fn as_method(&self) -> (Method, &str) {
        self.as_str().as_method()
    }
}

impl<T: AsMethod + ?Sized> AsMethod for &T {
    #[inline]
    fn as_method(&self) -> (Method, &str) {
        (**self).as_method()
    }
}

/// `http`'s methods map to the tag with the same text; any other is [`Method::Extension`].
impl From<&http::Method> for Method {
    fn from(m: &http::Method) -> Method {
        Method::from_token(m.as_str().as_bytes())
    }
}

/// Equal when `http`'s method is the standard method this tag names (an extension tag equals
/// no `http::Method`: its text is not in the tag).
impl PartialEq<http::Method> for Method {
    fn eq(&self, other: &http::Method) -> bool {
        self.as_str() == Some(other.as_str())
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str().unwrap_or("<extension>"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognizes_every_standard_method_as_prefix() {
        for m in STANDARD_METHODS {
            let text = m.as_str().unwrap();
            let line = format!("{text} /index.html HTTP/1.1\r\n");
            assert_eq!(Method::recognize_prefix(line.as_bytes()), Some((m, text.len())), "{text}");
            assert_eq!(Method::from_token(text.as_bytes()), m);
        }
    }

    /// The reference: find the space, compare the token with each method's text.
    fn reference(line: &[u8]) -> Option<(Method, usize)> {
        if line.len() < 8 {
            return None;
        }
        let end = line.iter().position(|&b| b == b' ')?;
        STANDARD_METHODS
            .into_iter()
            .find(|m| m.as_str().map(str::as_bytes) == Some(&line[..end]))
            .map(|m| (m, end))
    }

    #[test]
    fn hash_table_holds_all_nine_methods_rfc9110_9() {
        let mut seen = 0;
        for s in BUCKETS.iter().filter(|s| s.mask != 0) {
            let text = s.method.as_str().unwrap();
            assert_eq!(usize::from(s.len), text.len());
            assert_eq!(s.word, word(format!("{text} ").as_bytes()));
            seen += 1;
        }
        assert_eq!(seen, STANDARD_METHODS.len());
    }

    #[test]
    fn every_single_byte_mutation_is_a_near_miss_rfc9110_9_1() {
        // Each method line with any one of its first nine bytes replaced by any byte value:
        // recognised exactly when the mutated line still starts with a standard method and a
        // space (e.g. a mutation after the space), refused otherwise.
        let mut misses = 0;
        for m in STANDARD_METHODS {
            let line = format!("{} /a HTTP/1.1", m.as_str().unwrap()).into_bytes();
            for at in 0..9 {
                for b in 0..=255u8 {
                    let mut l = line.clone();
                    l[at] = b;
                    let want = reference(&l);
                    assert_eq!(Method::recognize_prefix(&l), want, "{:?}", l.escape_ascii());
                    let tok = l.split(|&b| b == b' ').next().unwrap();
                    let tag = want.map_or(Method::Extension, |(m, _)| m);
                    assert_eq!(Method::from_token(tok), tag, "{:?}", tok.escape_ascii());
                    misses += usize::from(want.is_none());
                }
            }
        }
        // Mutations inside the method or its space must all miss: at least len+1 positions x
        // 255 other bytes for each method.
        let inside: usize =
            STANDARD_METHODS.iter().map(|m| (m.as_str().unwrap().len() + 1) * 255).sum();
        assert!(misses >= inside, "{misses} < {inside}");
    }

    #[test]
    fn methods_are_case_sensitive_rfc9110_9_1() {
        struct Case {
            input: &'static [u8],
            prefix: Option<(Method, usize)>,
            token: Method,
        }
        let cases = [
            Case { input: b"get / HTTP/1.1", prefix: None, token: Method::Extension },
            Case { input: b"GETS / HTTP/1.1", prefix: None, token: Method::Extension },
            Case { input: b"GET/ HTTP/1.1", prefix: None, token: Method::Extension },
            Case { input: b"POS / HTTP/1.1", prefix: None, token: Method::Extension },
            Case { input: b"PROPFIND / HTTP/1.1", prefix: None, token: Method::Extension },
            Case { input: b"GET ", prefix: None, token: Method::Get },
        ];
        for c in cases {
            assert_eq!(Method::recognize_prefix(c.input), c.prefix, "{:?}", c.input);
            let tok = c.input.split(|&b| b == b' ').next().unwrap();
            assert_eq!(Method::from_token(tok), c.token, "{:?}", c.input);
        }
        assert_eq!(Method::from_token(b""), Method::Extension);
        assert_eq!(Method::from_token(b"OPTIONSX"), Method::Extension);
    }
}
