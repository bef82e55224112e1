//! HTTP Basic authentication (RFC 7617) for [`ServeDir`](super::ServeDir).

use std::fmt;
#[cfg(feature = "bcrypt")]
use std::sync::{Arc, OnceLock};

use http::HeaderValue;

use crate::base64::{self, Alphabet, PadBits, Padding};
use crate::http1::field_syntax::trim_ows;

/// One user name and password that every request must present (HTTP Basic, RFC 7617).
///
/// The password is kept as given, or as a bcrypt hash (`$2b$…`, what `htpasswd -B` and
/// Caddy's `hash-password` print; feature `bcrypt`, on by default). A request without the
/// right credentials gets `401` with `WWW-Authenticate: Basic realm="…", charset="UTF-8"`,
/// the same status, fields and body whichever part was wrong, and the same work: the user
/// name and the password are both always compared, each in constant time, so neither the
/// answer nor its timing tells whether the user exists. Preflight requests (see
/// [`Cors`](super::Cors)) carry no credentials and are answered without them.
///
/// With a hash, each wrong password costs one bcrypt verification on the thread answering
/// (tens of milliseconds at cost 10: the point of a slow hash); the right credentials are
/// verified once and then recognised by a constant-time comparison.
///
/// `Debug` shows neither the password nor the hash.
///
/// # Examples
/// ```
/// use peregrine::Method;
/// use peregrine::files::{BasicAuth, FileRequest, ServeDir};
/// let files = ServeDir::new(std::env::temp_dir())?
///     .basic_auth(BasicAuth::new("ann", "secret").realm("files"));
/// let reply = files.respond(&FileRequest::new(Method::Get, b"/"));
/// assert_eq!(reply.status(), 401);
/// assert_eq!(
///     reply.header("www-authenticate").unwrap(),
///     "Basic realm=\"files\", charset=\"UTF-8\""
/// );
/// // "ann:secret" in base64.
/// let ok = FileRequest {
///     authorization: Some(b"Basic YW5uOnNlY3JldA=="),
///     ..FileRequest::new(Method::Get, b"/")
/// };
/// assert_ne!(files.respond(&ok).status(), 401);
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone)]
pub struct BasicAuth {
    user: Box<[u8]>,
    secret: Secret,
    challenge: HeaderValue,
}

#[derive(Clone)]
enum Secret {
    Plain(Box<[u8]>),
    #[cfg(feature = "bcrypt")]
    Bcrypt {
        hash: Box<str>,
        /// The password once it verified: later requests compare against it.
        verified: Arc<OnceLock<Box<[u8]>>>,
    },
}

impl fmt::Debug for BasicAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BasicAuth").field("challenge", &self.challenge).finish_non_exhaustive()
    }
}

/// Why a password hash was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthError {
    /// Not a bcrypt hash (`$2a$`, `$2b$` or `$2y$`, cost, 53 characters of salt and hash).
    BadHash,
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a bcrypt hash ($2b$cost$ and 53 characters)")
    }
}

impl std::error::Error for AuthError {}

impl BasicAuth {
    /// A user and a password in clear.
    pub fn new(user: impl Into<String>, password: impl Into<String>) -> BasicAuth {
        BasicAuth::with(user, Secret::Plain(password.into().into_bytes().into()))
    }

    /// A user and a bcrypt hash of the password (`$2b$10$…`).
    ///
    /// # Errors
    /// [`AuthError::BadHash`] when `hash` is not a bcrypt hash.
    #[cfg(feature = "bcrypt")]
    pub fn bcrypt(user: impl Into<String>, hash: &str) -> Result<BasicAuth, AuthError> {
        if !is_bcrypt_hash(hash) || bcrypt::verify("", hash).is_err() {
            return Err(AuthError::BadHash);
        }
        let secret = Secret::Bcrypt { hash: hash.into(), verified: Arc::default() };
        Ok(BasicAuth::with(user, secret))
    }

    fn with(user: impl Into<String>, secret: Secret) -> BasicAuth {
        let user = user.into().into_bytes().into();
        BasicAuth { user, secret, challenge: challenge("peregrine") }
    }

    /// The protection space named in the challenge (default `peregrine`); browsers show it.
    /// `"` and `\` are sent as quoted-pairs, other control characters dropped.
    pub fn realm(mut self, realm: &str) -> BasicAuth {
        self.challenge = challenge(realm);
        self
    }

    /// The `WWW-Authenticate` value of a 401.
    pub(crate) fn challenge_value(&self) -> &HeaderValue {
        &self.challenge
    }

    /// Whether an `Authorization` field value carries the right credentials.
    pub(crate) fn check(&self, authorization: Option<&[u8]>) -> bool {
        let Some(decoded) = authorization.and_then(credentials) else {
            return false;
        };
        // RFC 7617 §2: the user-id cannot contain a colon; the password may.
        let colon = decoded.iter().position(|&b| b == b':').unwrap_or(decoded.len());
        let user = &decoded[..colon];
        let password = decoded.get(colon + 1..).unwrap_or_default();
        let user_ok = ct_eq(user, &self.user);
        let password_ok = match &self.secret {
            Secret::Plain(p) => ct_eq(password, p),
            #[cfg(feature = "bcrypt")]
            Secret::Bcrypt { hash, verified } => {
                let known = verified.get().is_some_and(|v| ct_eq(password, v));
                // The remembered password counts only with the right user, so a wrong user
                // with the right password does the same work as a wrong password.
                if known && user_ok {
                    true
                } else {
                    let ok = bcrypt::verify(password, hash).unwrap_or(false);
                    if ok && user_ok {
                        let _ = verified.set(password.into());
                    }
                    ok
                }
            }
        };
        user_ok & password_ok
    }
}

#[cfg(feature = "bcrypt")]
fn is_bcrypt_hash(h: &str) -> bool {
    let b = h.as_bytes();
    b.len() == 60
        && (h.starts_with("$2a$") || h.starts_with("$2b$") || h.starts_with("$2y$"))
        && b[4].is_ascii_digit()
        && b[5].is_ascii_digit()
        && b[6] == b'$'
}

/// `Basic realm="…", charset="UTF-8"` (RFC 7617 §2, §2.1: the charset parameter tells the
/// client to send user and password in UTF-8).
fn challenge(realm: &str) -> HeaderValue {
    let mut v = String::from("Basic realm=\"");
    for c in realm.chars().filter(|c| !c.is_control()) {
        // RFC 9110 §5.6.4: quoted-pair for '"' and '\' inside a quoted-string.
        if c == '"' || c == '\\' {
            v.push('\\');
        }
        v.push(c);
    }
    v.push_str("\", charset=\"UTF-8\"");
    HeaderValue::try_from(v).unwrap_or(HeaderValue::from_static("Basic realm=\"peregrine\""))
}

/// The decoded `user ":" password` of `Basic <base64>` (RFC 7617 §2); the scheme is
/// case-insensitive (RFC 9110 §11.1). `None` for another scheme or bad base64.
fn credentials(value: &[u8]) -> Option<Vec<u8>> {
    let value = trim_ows(value);
    let (scheme, rest) = value.split_at_checked(6)?;
    if !scheme.eq_ignore_ascii_case(b"basic ") {
        return None;
    }
    decode_base64(trim_ows(rest))
}

/// Standard base64 with padding (RFC 4648 §4), as RFC 7617 §2 uses (`token68`), of at most
/// 4,096 characters.
fn decode_base64(s: &[u8]) -> Option<Vec<u8>> {
    if s.len() > 4096 {
        return None;
    }
    base64::decode(s, Alphabet::Standard, Padding::Required, PadBits::Any)
}

/// Compares `given` with `expected` in time that depends only on the length of `expected`:
/// every byte is looked at whatever the first difference, and no branch depends on the data.
fn ct_eq(given: &[u8], expected: &[u8]) -> bool {
    let mut diff = u8::from(given.len() != expected.len());
    for (i, &e) in expected.iter().enumerate() {
        diff |= e ^ given.get(i).copied().unwrap_or(0);
    }
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_rfc4648_4() {
        struct Case {
            input: &'static [u8],
            expect: Option<&'static [u8]>,
        }
        let cases = [
            Case { input: b"", expect: Some(b"") },
            Case { input: b"Zg==", expect: Some(b"f") },
            Case { input: b"Zm8=", expect: Some(b"fo") },
            Case { input: b"Zm9v", expect: Some(b"foo") },
            Case { input: b"Zm9vYmFy", expect: Some(b"foobar") },
            Case { input: b"YW5uOnNlOmNyZXQ=", expect: Some(b"ann:se:cret") },
            Case { input: b"Zm9", expect: None },
            Case { input: b"Zg=a", expect: None },
            Case { input: b"Zg==Zg==", expect: None },
            Case { input: b"Z===", expect: None },
            Case { input: b"Zm9v!A==", expect: None },
        ];
        for c in cases {
            assert_eq!(decode_base64(c.input).as_deref(), c.expect, "{:?}", c.input);
        }
    }

    #[test]
    fn credentials_rfc7617_2() {
        struct Case {
            auth: &'static BasicAuth,
            input: Option<&'static [u8]>,
            expect: bool,
        }
        let plain: &'static BasicAuth = Box::leak(Box::new(BasicAuth::new("ann", "se:cret")));
        let cases = [
            Case { auth: plain, input: Some(b"Basic YW5uOnNlOmNyZXQ="), expect: true },
            Case { auth: plain, input: Some(b"basic  YW5uOnNlOmNyZXQ= "), expect: true },
            Case { auth: plain, input: Some(b"BASIC YW5uOnNlOmNyZXQ="), expect: true },
            // ann:se:cres, bob:se:cret, ann, "ann:", ":se:cret"
            Case { auth: plain, input: Some(b"Basic YW5uOnNlOmNyZXM="), expect: false },
            Case { auth: plain, input: Some(b"Basic Ym9iOnNlOmNyZXQ="), expect: false },
            Case { auth: plain, input: Some(b"Basic YW5u"), expect: false },
            Case { auth: plain, input: Some(b"Basic YW5uOg=="), expect: false },
            Case { auth: plain, input: Some(b"Basic OnNlOmNyZXQ="), expect: false },
            Case { auth: plain, input: Some(b"Bearer YW5uOnNlOmNyZXQ="), expect: false },
            Case { auth: plain, input: Some(b"Basic"), expect: false },
            Case { auth: plain, input: None, expect: false },
        ];
        for c in cases {
            assert_eq!(
                c.auth.check(c.input),
                c.expect,
                "{:?}",
                c.input.map(String::from_utf8_lossy)
            );
        }
    }

    #[test]
    fn constant_time_compare() {
        struct Case {
            given: &'static [u8],
            expected: &'static [u8],
            expect: bool,
        }
        let cases = [
            Case { given: b"", expected: b"", expect: true },
            Case { given: b"abc", expected: b"abc", expect: true },
            Case { given: b"abd", expected: b"abc", expect: false },
            Case { given: b"ab", expected: b"abc", expect: false },
            Case { given: b"abc\0", expected: b"abc", expect: false },
            Case { given: b"", expected: b"a", expect: false },
        ];
        for c in cases {
            assert_eq!(ct_eq(c.given, c.expected), c.expect, "{:?}", c.given);
        }
    }

    #[cfg(feature = "bcrypt")]
    #[test]
    fn bcrypt_hashes() {
        let hash = bcrypt::hash("se:cret", 4).unwrap();
        let auth = BasicAuth::bcrypt("ann", &hash).unwrap();
        // ann:se:cret twice (the second from the remembered password), then wrong ones.
        assert!(auth.check(Some(b"Basic YW5uOnNlOmNyZXQ=")));
        assert!(auth.check(Some(b"Basic YW5uOnNlOmNyZXQ=")));
        assert!(!auth.check(Some(b"Basic Ym9iOnNlOmNyZXQ=")));
        assert!(!auth.check(Some(b"Basic YW5uOnNlOmNyZXM=")));
        for bad in ["", "secret", "$2b$04$short", &hash.replace("$2b$", "$3b$")] {
            assert_eq!(BasicAuth::bcrypt("ann", bad).err(), Some(AuthError::BadHash), "{bad}");
        }
        assert!(!format!("{auth:?}").contains(&hash));
    }
}
