//! Extension negotiation: the `Sec-WebSocket-Extensions` grammar (RFC 6455 §9.1), and the
//! permessage-deflate parameters (RFC 7692 §7.1) for both ends ([`negotiate`], [`offer`],
//! [`check_response`]).
//!
//! ```text
//! Sec-WebSocket-Extensions = extension-list
//! extension-list = 1#extension
//! extension = extension-token *( ";" extension-param )
//! extension-param = token [ "=" (token | quoted-string) ]
//! ```
//!
//! Parsing allocates nothing: extensions and parameters are slices of the field values.
//! Optional whitespace is accepted around `;`, `=` and `,` and empty list elements are skipped
//! (RFC 9110 §5.6.1); names compare case-insensitively.

mod permessage_deflate;

pub use permessage_deflate::{
    DeflateConfig, DeflateParams, ExtensionValue, ResponseError, check_response, negotiate, offer,
};

use crate::http1::field_syntax::{is_ows, is_tchar};

/// The name of the permessage-deflate extension (RFC 7692 §7).
pub const PERMESSAGE_DEFLATE: &str = "permessage-deflate";

/// One extension of a `Sec-WebSocket-Extensions` list: its name and its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extension<'a> {
    /// The extension's token.
    pub name: &'a [u8],
    /// The parameters' text (syntax checked), from the first `;`.
    params: &'a [u8],
}

impl<'a> Extension<'a> {
    /// The extension's parameters, in order.
    pub fn params(&self) -> Params<'a> {
        Params { rest: self.params }
    }
}

/// A parameter: its name and its value, if it has one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param<'a> {
    /// The parameter's token.
    pub name: &'a [u8],
    /// Its value, if it has one.
    pub value: Option<Value<'a>>,
}

/// A parameter's value: a token, or the inside of a quoted-string whose unescaped value is a
/// token (RFC 6455 §9.1: "the value after quoted-string unescaping MUST conform to the
/// 'token' ABNF").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Value<'a> {
    raw: &'a [u8],
    quoted: bool,
}

impl Value<'_> {
    /// The value's octets, unescaped.
    pub fn bytes(&self) -> impl Iterator<Item = u8> + '_ {
        let mut escaped = false;
        self.raw.iter().filter_map(move |&b| {
            if self.quoted && !escaped && b == b'\\' {
                escaped = true;
                return None;
            }
            escaped = false;
            Some(b)
        })
    }

    /// The value as a decimal integer without leading zeros (RFC 7692 §7.1.2.1), up to 255.
    pub(crate) fn small_int(&self) -> Option<u8> {
        let mut n: u8 = 0;
        let mut digits = 0;
        for b in self.bytes() {
            if !b.is_ascii_digit() || (digits == 1 && n == 0) {
                return None;
            }
            n = n.checked_mul(10)?.checked_add(b - b'0')?;
            digits += 1;
        }
        (digits > 0).then_some(n)
    }
}

/// The extension list of a `Sec-WebSocket-Extensions` field, across all its field lines.
///
/// # Examples
/// ```
/// use peregrine::ws::extension::extensions;
/// let lines: [&[u8]; 2] = [b"permessage-deflate; client_max_window_bits, foo", b"bar; x=\"1\""];
/// let names: Vec<&[u8]> = extensions(lines).map(|e| e.unwrap().name).collect();
/// assert_eq!(names, [&b"permessage-deflate"[..], b"foo", b"bar"]);
/// ```
pub fn extensions<'a, I>(lines: I) -> Extensions<'a, I::IntoIter>
where
    I: IntoIterator<Item = &'a [u8]>,
{
    Extensions { lines: lines.into_iter(), line: &[], failed: false }
}

/// The iterator of [`extensions`]: each extension, or [`Malformed`] (after which it ends).
#[derive(Clone, Debug)]
pub struct Extensions<'a, I> {
    lines: I,
    line: &'a [u8],
    failed: bool,
}

/// A `Sec-WebSocket-Extensions` value that does not follow the grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Malformed;

impl<'a, I: Iterator<Item = &'a [u8]>> Iterator for Extensions<'a, I> {
    type Item = Result<Extension<'a>, Malformed>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            let mut lx = Lexer { s: self.line, i: 0 };
            lx.ows();
            if lx.done() {
                self.line = self.lines.next()?;
                continue;
            }
            if lx.eat(b',') {
                self.line = &self.line[lx.i..];
                continue;
            }
            let ext = lx.extension();
            self.line = &self.line[lx.i..];
            if ext.is_err() {
                self.failed = true;
            }
            return Some(ext);
        }
    }
}

/// The iterator of [`Extension::params`].
#[derive(Clone, Debug)]
pub struct Params<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Params<'a> {
    type Item = Param<'a>;

    fn next(&mut self) -> Option<Param<'a>> {
        let mut lx = Lexer { s: self.rest, i: 0 };
        let param = lx.param()?;
        self.rest = &self.rest[lx.i..];
        Some(param)
    }
}

/// A cursor over one field line.
struct Lexer<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Lexer<'a> {
    fn done(&self) -> bool {
        self.i >= self.s.len()
    }

    fn ows(&mut self) {
        while self.s.get(self.i).is_some_and(|&b| is_ows(b)) {
            self.i += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        let hit = self.s.get(self.i) == Some(&b);
        self.i += usize::from(hit);
        hit
    }

    fn token(&mut self) -> Option<&'a [u8]> {
        let start = self.i;
        while self.s.get(self.i).is_some_and(|&b| is_tchar(b)) {
            self.i += 1;
        }
        (self.i > start).then(|| &self.s[start..self.i])
    }

    /// `token / quoted-string` (RFC 9110 §5.6.4), a quoted one unescaping to a token.
    fn value(&mut self) -> Option<Value<'a>> {
        if !self.eat(b'"') {
            return self.token().map(|raw| Value { raw, quoted: false });
        }
        let start = self.i;
        loop {
            match *self.s.get(self.i)? {
                b'"' => break,
                b'\\' => self.i += 2,
                _ => self.i += 1,
            }
        }
        let raw = self.s.get(start..self.i)?;
        self.i += 1;
        let value = Value { raw, quoted: true };
        (value.bytes().next().is_some() && value.bytes().all(is_tchar)).then_some(value)
    }

    /// `OWS ";" OWS token [ OWS "=" OWS value ]`, or `None` (nothing consumed that counts).
    fn param(&mut self) -> Option<Param<'a>> {
        self.ows();
        if !self.eat(b';') {
            return None;
        }
        self.ows();
        let name = self.token()?;
        let save = self.i;
        self.ows();
        let value = if self.eat(b'=') {
            self.ows();
            Some(self.value()?)
        } else {
            self.i = save;
            None
        };
        Some(Param { name, value })
    }

    /// One list element: a token, its parameters, then a `,` or the end of the line.
    fn extension(&mut self) -> Result<Extension<'a>, Malformed> {
        let name = self.token().ok_or(Malformed)?;
        let start = self.i;
        loop {
            let save = self.i;
            self.ows();
            match self.s.get(self.i) {
                Some(b';') => {
                    self.i = save;
                    self.param().ok_or(Malformed)?;
                }
                None | Some(b',') => {
                    let params = &self.s[start..save];
                    self.eat(b',');
                    return Ok(Extension { name, params });
                }
                Some(_) => return Err(Malformed),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names_and_params(lines: &[&'static [u8]]) -> Result<Vec<String>, Malformed> {
        let show = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        extensions(lines.iter().copied())
            .map(|e| {
                let e = e?;
                let mut out = show(e.name);
                for p in e.params() {
                    out += &format!(";{}", show(p.name));
                    if let Some(v) = p.value {
                        out += &format!("={}", show(&v.bytes().collect::<Vec<u8>>()));
                    }
                }
                Ok(out)
            })
            .collect()
    }

    struct Case {
        input: &'static [&'static [u8]],
        expect: Result<&'static [&'static str], Malformed>,
    }

    #[test]
    fn the_grammar_rfc6455_9_1() {
        let cases = [
            Case { input: &[b""], expect: Ok(&[]) },
            Case { input: &[b"foo"], expect: Ok(&["foo"]) },
            Case { input: &[b"foo, bar"], expect: Ok(&["foo", "bar"]) },
            Case { input: &[b" ,foo ,, bar ,"], expect: Ok(&["foo", "bar"]) },
            Case { input: &[b"foo", b"bar;x"], expect: Ok(&["foo", "bar;x"]) },
            Case { input: &[b"a; x=1 ;y ; z = \"2\""], expect: Ok(&["a;x=1;y;z=2"]) },
            Case { input: &[b"a;x=\"1,2\""], expect: Err(Malformed) },
            Case { input: &[b"a;x=\"\\1\", b"], expect: Ok(&["a;x=1", "b"]) },
            Case { input: &[b"a;x=\"\""], expect: Err(Malformed) },
            Case { input: &[b"a;x=\"1"], expect: Err(Malformed) },
            Case { input: &[b"a;x="], expect: Err(Malformed) },
            Case { input: &[b"a;"], expect: Err(Malformed) },
            Case { input: &[b"a b"], expect: Err(Malformed) },
            Case { input: &[b";x"], expect: Err(Malformed) },
            Case { input: &[b"a;x=1=2"], expect: Err(Malformed) },
            Case { input: &[b"a;x=\"a b\""], expect: Err(Malformed) },
        ];
        for c in &cases {
            let got = names_and_params(c.input);
            let want = c.expect.map(|v| v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
            assert_eq!(got, want, "{:?}", c.input);
        }
    }
}
