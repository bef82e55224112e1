//! Text that is known to be UTF-8, held as shared [`Bytes`].
//!
//! A text message arrives as bytes the wire layer validated while they came in (RFC 6455
//! §8.1); handing it out as a `String` would copy it, and as `Bytes` would make every reader
//! validate it again to see it as `&str`. [`Utf8Bytes`] keeps the bytes and the proof.
#![allow(unsafe_code)]

use std::fmt;
use std::ops::Deref;

use bytes::Bytes;

/// Shared bytes that are valid UTF-8: a WebSocket text message or close reason, without a
/// copy. Derefs to `str`.
///
/// # Examples
/// ```
/// use peregrine::websocket::Utf8Bytes;
/// let text = Utf8Bytes::from("héllo");
/// assert_eq!(&*text, "héllo");
/// assert_eq!(text.as_bytes().len(), 6);
/// ```
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Utf8Bytes(Bytes);

impl Utf8Bytes {
    /// Empty text.
    pub const fn new() -> Utf8Bytes {
        Utf8Bytes(Bytes::new())
    }

    /// Text from static bytes; no allocation.
    pub const fn from_static(text: &'static str) -> Utf8Bytes {
        Utf8Bytes(Bytes::from_static(text.as_bytes()))
    }

    /// `bytes` as text, if they are valid UTF-8.
    ///
    /// # Errors
    /// `std::str::Utf8Error` when they are not.
    pub fn try_from_bytes(bytes: Bytes) -> Result<Utf8Bytes, std::str::Utf8Error> {
        std::str::from_utf8(&bytes)?;
        Ok(Utf8Bytes(bytes))
    }

    /// Bytes the wire layer validated as UTF-8 as they arrived (`ws::Event::Text`, a close
    /// reason from `ws::parse_close`); checked again in debug builds.
    pub(crate) fn from_validated(bytes: Bytes) -> Utf8Bytes {
        debug_assert!(std::str::from_utf8(&bytes).is_ok());
        Utf8Bytes(bytes)
    }

    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        // SAFETY: every constructor proves the bytes are UTF-8 (a `str`, `from_utf8`, or the
        // wire layer's incremental validation for `from_validated`), and `Bytes` is immutable.
        unsafe { std::str::from_utf8_unchecked(&self.0) }
    }

    /// The underlying bytes (shared, no copy).
    pub fn as_bytes(&self) -> &Bytes {
        &self.0
    }

    /// The underlying bytes (shared, no copy).
    pub fn into_bytes(self) -> Bytes {
        self.0
    }
}

impl Deref for Utf8Bytes {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Utf8Bytes {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for Utf8Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Utf8Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl From<String> for Utf8Bytes {
    fn from(s: String) -> Utf8Bytes {
        Utf8Bytes(Bytes::from(s))
    }
}

impl From<&str> for Utf8Bytes {
    fn from(s: &str) -> Utf8Bytes {
        Utf8Bytes(Bytes::copy_from_slice(s.as_bytes()))
    }
}

impl From<Utf8Bytes> for Bytes {
    fn from(t: Utf8Bytes) -> Bytes {
        t.0
    }
}

impl PartialEq<str> for Utf8Bytes {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Utf8Bytes {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Case {
        input: &'static [u8],
        valid: bool,
    }

    /// RFC 3629: only well-formed UTF-8 becomes text.
    #[test]
    fn only_utf8_becomes_text() {
        let cases = [
            Case { input: b"", valid: true },
            Case { input: b"hello", valid: true },
            Case { input: "\u{1f600} caf\u{e9}".as_bytes(), valid: true },
            Case { input: b"\xff", valid: false },
            Case { input: b"\xc3", valid: false },
            Case { input: b"\xed\xa0\x80", valid: false },
        ];
        for case in cases {
            let got = Utf8Bytes::try_from_bytes(Bytes::from_static(case.input));
            assert_eq!(got.is_ok(), case.valid, "{:?}", case.input);
            if let Ok(text) = got {
                assert_eq!(text.as_bytes(), case.input);
                assert_eq!(text.as_str().as_bytes(), case.input);
            }
        }
    }
}
