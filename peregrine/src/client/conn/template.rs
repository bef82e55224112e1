//! The last request a connection encoded, kept with its encoded bytes: a request identical to
//! it (method, target, fields, body length; the usual case for a load generator, and common
//! for API clients) is sent by copying those bytes, skipping the checks and the encoding it
//! passed before. HTTP/1.1 head bytes never go stale; an HTTP/2 header block only while the
//! HPACK encoder's table is unchanged (its generation).

use std::ops::Range;

/// A request's parts and its encoding.
#[derive(Debug, Default)]
pub(crate) struct Template {
    valid: bool,
    method: Vec<u8>,
    target: Vec<u8>,
    /// Field names and values, one after the other.
    bytes: Vec<u8>,
    fields: Vec<(Range<u32>, Range<u32>)>,
    length: Option<u64>,
    /// The encoded head (HTTP/1.1) or header block (HTTP/2).
    encoded: Vec<u8>,
    /// The HPACK generation the block is valid at (0 for HTTP/1.1).
    generation: u64,
}

fn range(r: &Range<u32>) -> Range<usize> {
    r.start as usize..r.end as usize
}

impl Template {
    /// The encoding of a request identical to the kept one, at `generation`.
    #[inline]
    pub(crate) fn get(
        &self,
        method: &[u8],
        target: &str,
        fields: &[(&str, &[u8])],
        length: Option<u64>,
        generation: u64,
    ) -> Option<&[u8]> {
        let same = self.valid
            && self.generation == generation
            && self.length == length
            && self.fields.len() == fields.len()
            && *self.method == *method
            && *self.target == *target.as_bytes()
            && fields.iter().zip(&self.fields).all(|(&(n, v), (rn, rv))| {
                self.bytes.get(range(rn)) == Some(n.as_bytes())
                    && self.bytes.get(range(rv)) == Some(v)
            });
        same.then_some(&self.encoded[..])
    }

    /// Keeps a request and its encoding (`None`: nothing reusable, forget the old one).
    pub(crate) fn keep(
        &mut self,
        method: &[u8],
        target: &str,
        fields: &[(&str, &[u8])],
        length: Option<u64>,
        encoded: Option<(&[u8], u64)>,
    ) {
        let Some((encoded, generation)) = encoded else {
            self.valid = false;
            return;
        };
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
        self.generation = generation;
        self.valid = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_identical_request_at_the_same_generation_matches() {
        let mut t = Template::default();
        let fields: &[(&str, &[u8])] = &[("accept", b"*/*"), ("x", b"1")];
        assert!(t.get(b"GET", "/", fields, Some(0), 0).is_none());
        t.keep(b"GET", "/", fields, Some(0), Some((b"ENCODED", 7)));
        assert_eq!(t.get(b"GET", "/", fields, Some(0), 7), Some(&b"ENCODED"[..]));
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
                target: "/a",
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
}
