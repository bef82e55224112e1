//! The last request a connection encoded, kept with its encoded bytes: a request identical to
//! it (method, target, fields, body length; the usual case for a load generator, and common
//! for API clients) is sent by copying those bytes, skipping the checks and the encoding it
//! passed before. A request that differs only in its target (the usual case for an API client:
//! the same fields, another path) copies the bytes before and after the target's encoding and
//! checks and encodes only the new target. HTTP/1.1 head bytes never go stale; an HTTP/2
//! header block only while the HPACK encoder's table is unchanged (its generation), and its
//! `:path` encoding depends on nothing else, since `:path` never enters the table.

use std::ops::Range;

/// The last request's parts and its encoding.
#[derive(Debug, Default)]
pub(crate) struct LastRequest {
    valid: bool,
    method: Vec<u8>,
    target: Vec<u8>,
    /// Field names and values, one after the other.
    bytes: Vec<u8>,
    fields: Vec<(Range<u32>, Range<u32>)>,
    length: Option<u64>,
    /// The encoded head (HTTP/1.1) or header block (HTTP/2).
    encoded: Vec<u8>,
    /// Where the target's encoding lies in `encoded`.
    target_at: Range<usize>,
    /// Room to rebuild `encoded` around a new target without allocating.
    spare: Vec<u8>,
    /// The HPACK generation the block is valid at (0 for HTTP/1.1).
    generation: u64,
}

/// What of the kept encoding a request can reuse.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reuse<'a> {
    /// The same request: its whole encoding.
    Whole(&'a [u8]),
    /// The same request but for its target: the encoding before and after the target's.
    Around(&'a [u8], &'a [u8]),
}

fn range(r: &Range<u32>) -> Range<usize> {
    r.start as usize..r.end as usize
}

/// `a == b` for the short strings requests are made of, without a call to `memcmp`: two
/// overlapping word loads from each end cover up to 16 octets.
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    fn word(s: &[u8], at: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(s.get(at..at + 8).unwrap_or(&[0; 8]));
        u64::from_le_bytes(w)
    }
    fn half(s: &[u8], at: usize) -> u32 {
        let mut w = [0u8; 4];
        w.copy_from_slice(s.get(at..at + 4).unwrap_or(&[0; 4]));
        u32::from_le_bytes(w)
    }
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0 => true,
        1..4 => a.iter().zip(b).all(|(x, y)| x == y),
        4..8 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        _ => a == b,
    }
}

impl LastRequest {
    /// What a request can reuse of the kept one's encoding at `generation`: all of it when
    /// identical, all but the target's when only the target differs.
    #[inline]
    pub(crate) fn get(
        &self,
        method: &[u8],
        target: &str,
        fields: &[(&str, &[u8])],
        length: Option<u64>,
        generation: u64,
    ) -> Option<Reuse<'_>> {
        let same_rest = self.valid
            && self.generation == generation
            && self.length == length
            && self.fields.len() == fields.len()
            && same(&self.method, method)
            && fields.iter().zip(&self.fields).all(|(&(n, v), (rn, rv))| {
                let (kn, kv) = (self.bytes.get(range(rn)), self.bytes.get(range(rv)));
                kn.is_some_and(|k| same(k, n.as_bytes())) && kv.is_some_and(|k| same(k, v))
            });
        if !same_rest {
            return None;
        }
        if same(&self.target, target.as_bytes()) {
            return Some(Reuse::Whole(&self.encoded));
        }
        let before = self.encoded.get(..self.target_at.start)?;
        let after = self.encoded.get(self.target_at.end..)?;
        Some(Reuse::Around(before, after))
    }

    /// Keeps a request and its encoding, with where the target's encoding lies in it (`None`:
    /// nothing reusable, forget the old one).
    pub(crate) fn keep(
        &mut self,
        method: &[u8],
        target: &str,
        fields: &[(&str, &[u8])],
        length: Option<u64>,
        encoded: Option<(&[u8], u64, Range<usize>)>,
    ) {
        let Some((encoded, generation, target_at)) = encoded else {
            self.valid = false;
            return;
        };
        if target_at.start > target_at.end || target_at.end > encoded.len() {
            self.valid = false;
            return;
        }
        self.method.clear();
        self.method.extend_from_slice(method);
        self.target.clear();
        self.target.extend_from_slice(target.as_bytes());
        self.bytes.clear();
        self.fields.clear();
        for &(n, v) in fields {
            let at = |b: &Vec<u8>| u32::try_from(b.len()).unwrap_or(u32::MAX);
            let n0 = at(&self.bytes);
            self.bytes.extend_from_slice(n.as_bytes());
            let (n1, v0) = (at(&self.bytes), at(&self.bytes));
            self.bytes.extend_from_slice(v);
            self.fields.push((n0..n1, v0..at(&self.bytes)));
        }
        self.length = length;
        self.encoded.clear();
        self.encoded.extend_from_slice(encoded);
        self.target_at = target_at;
        self.generation = generation;
        self.valid = true;
    }

    /// After a [`Reuse::Around`] send: the kept request takes `target`, encoded as
    /// `encoded_target`, so the next identical request is a [`Reuse::Whole`].
    pub(crate) fn retarget(&mut self, target: &str, encoded_target: &[u8]) {
        self.target.clear();
        self.target.extend_from_slice(target.as_bytes());
        if let Some(old) = self.encoded.get_mut(self.target_at.clone()) {
            if old.len() == encoded_target.len() {
                // Paths of one length (often): overwritten in place.
                old.copy_from_slice(encoded_target);
                return;
            }
        }
        let (Some(before), Some(after)) =
            (self.encoded.get(..self.target_at.start), self.encoded.get(self.target_at.end..))
        else {
            self.valid = false;
            return;
        };
        self.spare.clear();
        self.spare.extend_from_slice(before);
        self.spare.extend_from_slice(encoded_target);
        self.spare.extend_from_slice(after);
        std::mem::swap(&mut self.encoded, &mut self.spare);
        self.target_at = self.target_at.start..self.target_at.start + encoded_target.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_identical_request_at_the_same_generation_matches() {
        let mut t = LastRequest::default();
        let fields: &[(&str, &[u8])] = &[("accept", b"*/*"), ("x", b"1")];
        assert!(t.get(b"GET", "/", fields, Some(0), 0).is_none());
        t.keep(b"GET", "/", fields, Some(0), Some((b"GET / END", 7, 4..5)));
        assert_eq!(t.get(b"GET", "/", fields, Some(0), 7), Some(Reuse::Whole(b"GET / END")));
        struct Case {
            method: &'static [u8],
            target: &'static str,
            fields: &'static [(&'static str, &'static [u8])],
            length: Option<u64>,
            generation: u64,
        }
        let misses = [
            Case {
                method: b"HEAD",
                target: "/",
                fields: &[("accept", b"*/*"), ("x", b"1")],
                length: Some(0),
                generation: 7,
            },
            Case {
                method: b"GET",
                target: "/",
                fields: &[("accept", b"*/*"), ("x", b"2")],
                length: Some(0),
                generation: 7,
            },
            Case {
                method: b"GET",
                target: "/",
                fields: &[("accept", b"*/*"), ("y", b"1")],
                length: Some(0),
                generation: 7,
            },
            Case {
                method: b"GET",
                target: "/",
                fields: &[("accept", b"*/*")],
                length: Some(0),
                generation: 7,
            },
            Case {
                method: b"GET",
                target: "/",
                fields: &[("accept", b"*/*"), ("x", b"1")],
                length: Some(1),
                generation: 7,
            },
            Case {
                method: b"GET",
                target: "/",
                fields: &[("accept", b"*/*"), ("x", b"1")],
                length: Some(0),
                generation: 8,
            },
        ];
        for c in misses {
            assert!(t.get(c.method, c.target, c.fields, c.length, c.generation).is_none());
        }
        t.keep(b"GET", "/", fields, Some(0), None);
        assert!(t.get(b"GET", "/", fields, Some(0), 7).is_none());
    }

    #[test]
    fn same_agrees_with_eq_for_every_length_and_differing_octet() {
        let a: Vec<u8> = (0..40u8).collect();
        for n in 0..=40 {
            assert!(same(&a[..n], &a[..n]), "{n}");
            if n > 0 {
                assert!(!same(&a[..n], &a[..n - 1]), "{n}");
            }
            for i in 0..n {
                let mut b = a[..n].to_vec();
                b[i] ^= 0x20;
                assert!(!same(&a[..n], &b), "{n} {i}");
            }
        }
    }

    #[test]
    fn another_target_reuses_the_bytes_around_it_and_retarget_makes_it_whole() {
        let mut t = LastRequest::default();
        let fields: &[(&str, &[u8])] = &[("accept", b"*/*")];
        t.keep(b"GET", "/", fields, Some(0), Some((b"GET / END", 0, 4..5)));
        assert_eq!(
            t.get(b"GET", "/longer", fields, Some(0), 0),
            Some(Reuse::Around(b"GET ", b" END"))
        );
        // Another target with anything else changed reuses nothing.
        assert!(t.get(b"GET", "/longer", &[("accept", b"x")], Some(0), 0).is_none());
        assert!(t.get(b"GET", "/longer", fields, Some(0), 1).is_none());
        t.retarget("/longer", b"/longer");
        assert_eq!(
            t.get(b"GET", "/longer", fields, Some(0), 0),
            Some(Reuse::Whole(b"GET /longer END"))
        );
        assert_eq!(t.get(b"GET", "/", fields, Some(0), 0), Some(Reuse::Around(b"GET ", b" END")));
        t.retarget("/l", b"/l");
        t.retarget("/k", b"/k");
        assert_eq!(t.get(b"GET", "/k", fields, Some(0), 0), Some(Reuse::Whole(b"GET /k END")));
        // A span outside the encoding keeps nothing.
        t.keep(b"GET", "/", fields, Some(0), Some((b"GET", 0, 4..5)));
        assert!(t.get(b"GET", "/", fields, Some(0), 0).is_none());
    }
}
