//! Matched parameters: borrowed spans of the path, stored inline for the common case.

use std::borrow::Cow;
use std::fmt;

use super::error::DecodeError;
use super::percent::percent_decode;

/// How many parameters a match holds without touching the heap. A route with more parameters
/// than this still matches, but its lookups allocate.
pub const INLINE_PARAMS: usize = 8;

/// A parameter value as offsets into the path. Names are not recorded while matching: the
/// matched route knows them (it has one name per parameter, in order), so the walk stores 8
/// bytes per parameter and never reads a name.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Span {
    pub start: u32,
    pub end: u32,
}

/// A parameter name: offset and length in the router's text.
pub(crate) type NameRef = (u32, u32);

/// The parameters of a match, in template order.
///
/// Names borrow the router (`'t`), values borrow the path (`'p`) and are raw: still
/// percent-encoded, exactly as they appeared in the path. Use [`Params::decoded`] to decode one.
///
/// # Examples
/// ```
/// use peregrine::router::Tree;
/// let mut tree = Tree::new();
/// tree.insert("/repos/{owner}/{repo}", ()).unwrap();
/// let m = tree.at("/repos/rust-lang/rust%2Dlang").unwrap();
/// assert_eq!(m.params.get("owner"), Some("rust-lang"));
/// assert_eq!(m.params.get("repo"), Some("rust%2Dlang"));
/// assert_eq!(m.params.decoded("repo").unwrap(), "rust-lang");
/// let all: Vec<_> = m.params.iter().collect();
/// assert_eq!(all, [("owner", "rust-lang"), ("repo", "rust%2Dlang")]);
/// ```
#[derive(Clone)]
pub struct Params<'t, 'p> {
    text: &'t str,
    names: &'t [NameRef],
    path: &'p str,
    len: usize,
    inline: [Span; INLINE_PARAMS],
    spill: Vec<Span>,
}

impl<'t, 'p> Params<'t, 'p> {
    #[inline]
    pub(crate) fn new(text: &'t str, path: &'p str) -> Self {
        Params {
            text,
            names: &[],
            path,
            len: 0,
            inline: [Span::default(); INLINE_PARAMS],
            spill: Vec::new(),
        }
    }

    /// Attaches the matched route's parameter names (one per pushed span, in order).
    #[inline]
    pub(crate) fn set_names(&mut self, names: &'t [NameRef]) {
        self.names = names;
    }

    #[inline]
    pub(crate) fn push(&mut self, raw: Span) {
        match self.inline.get_mut(self.len) {
            Some(slot) => *slot = raw,
            None => self.spill.push(raw),
        }
        self.len += 1;
    }

    /// Forgets the parameters pushed after the first `len` (backtracking).
    #[inline]
    pub(crate) fn truncate(&mut self, len: usize) {
        self.len = len;
        self.spill.truncate(len.saturating_sub(INLINE_PARAMS));
    }

    /// Number of parameters.
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` when the route has no parameters.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The raw (still percent-encoded) value of the parameter `name`.
    pub fn get(&self, name: &str) -> Option<&'p str> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// The value of the parameter `name`, percent-decoded and checked to be UTF-8.
    ///
    /// Borrows from the path when the value holds no `%`.
    ///
    /// # Errors
    /// [`DecodeError::Missing`] when the route has no such parameter, otherwise as for
    /// [`percent_decode`](super::percent_decode).
    pub fn decoded(&self, name: &str) -> Result<Cow<'p, str>, DecodeError> {
        percent_decode(self.get(name).ok_or(DecodeError::Missing)?)
    }

    /// The `(name, raw value)` pairs in template order.
    pub fn iter(&self) -> ParamsIter<'_, 't, 'p> {
        ParamsIter { params: self, next: 0 }
    }

    fn pair(&self, i: usize, raw: &Span) -> (&'t str, &'p str) {
        let (no, nl) = self.names.get(i).map_or((0, 0), |&(o, l)| (o as usize, l as usize));
        let name = self.text.get(no..no + nl).unwrap_or_default();
        let value = self.path.get(raw.start as usize..raw.end as usize).unwrap_or_default();
        (name, value)
    }
}

impl fmt::Debug for Params<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Iterator over [`Params`], yielding `(name, raw value)`.
#[derive(Debug)]
pub struct ParamsIter<'a, 't, 'p> {
    params: &'a Params<'t, 'p>,
    next: usize,
}

impl<'t, 'p> Iterator for ParamsIter<'_, 't, 'p> {
    type Item = (&'t str, &'p str);

    fn next(&mut self) -> Option<Self::Item> {
        let p = self.params;
        if self.next >= p.len {
            return None;
        }
        let i = self.next;
        self.next += 1;
        let raw = match p.inline.get(i) {
            Some(raw) => raw,
            None => p.spill.get(i - INLINE_PARAMS)?,
        };
        Some(p.pair(i, raw))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.params.len.saturating_sub(self.next);
        (n, Some(n))
    }
}

impl ExactSizeIterator for ParamsIter<'_, '_, '_> {}

impl<'a, 't, 'p> IntoIterator for &'a Params<'t, 'p> {
    type Item = (&'t str, &'p str);
    type IntoIter = ParamsIter<'a, 't, 'p>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spills_past_inline_and_truncates_back() {
        let text = "abcdefghijkl";
        let names: Vec<NameRef> = (0..12).map(|i| (i, 1)).collect();
        let path = "0123456789AB";
        let mut p = Params::new(text, path);
        for i in 0..12u32 {
            p.push(Span { start: i, end: i + 1 });
        }
        p.set_names(&names);
        assert_eq!(p.len(), 12);
        assert_eq!(p.get("a"), Some("0"));
        assert_eq!(p.get("l"), Some("B"));
        assert_eq!(p.iter().len(), 12);
        p.truncate(9);
        assert_eq!(p.get("i"), Some("8"));
        assert_eq!(p.get("j"), None);
        p.truncate(3);
        assert_eq!(p.iter().map(|(n, _)| n).collect::<String>(), "abc");
        assert_eq!(p.decoded("zz"), Err(DecodeError::Missing));
    }
}
