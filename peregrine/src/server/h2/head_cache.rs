//! The last response head a connection encoded, kept with its HPACK header block: a response
//! head identical to it (status and fields, Date and content-length included) is sent by
//! copying those bytes while the encoder's table is unchanged (its generation), skipping the
//! encoding. A connection serving one resource over and over (a load generator, an API
//! poller, a page's many small images of one size) encodes each distinct head about once a
//! second (when Date changes). The client does the same with its requests
//! (`client::conn::template`).

/// A response head's parts and its header block.
#[derive(Debug, Default)]
pub(super) struct HeadCache {
    valid: bool,
    status: u16,
    /// Field names and values, one after the other.
    bytes: Vec<u8>,
    /// Where each field's name ends and its value ends in `bytes`.
    ends: Vec<(u32, u32)>,
    /// The header block.
    block: Vec<u8>,
    /// The HPACK generation the block is valid at.
    generation: u64,
}

impl HeadCache {
    /// The header block of a head identical to the kept one, at `generation`.
    #[inline]
    pub(super) fn get<'f>(
        &self,
        status: u16,
        fields: impl Iterator<Item = (&'f [u8], &'f [u8])>,
        generation: u64,
    ) -> Option<&[u8]> {
        if !self.valid || self.status != status || self.generation != generation {
            return None;
        }
        let mut at = 0;
        let mut ends = self.ends.iter();
        for (name, value) in fields {
            let &(n, v) = ends.next()?;
            let (n, v) = (n as usize, v as usize);
            if self.bytes.get(at..n) != Some(name) || self.bytes.get(n..v) != Some(value) {
                return None;
            }
            at = v;
        }
        ends.next().is_none().then_some(&self.block[..])
    }

    /// Keeps a head and its block (`None`: nothing reusable, forget the old one).
    pub(super) fn keep<'f>(
        &mut self,
        status: u16,
        fields: impl Iterator<Item = (&'f [u8], &'f [u8])>,
        block: Option<(&[u8], u64)>,
    ) {
        let Some((block, generation)) = block else {
            self.valid = false;
            return;
        };
        self.bytes.clear();
        self.ends.clear();
        for (name, value) in fields {
            self.bytes.extend_from_slice(name);
            let n = self.bytes.len();
            self.bytes.extend_from_slice(value);
            let (Ok(n), Ok(v)) = (u32::try_from(n), u32::try_from(self.bytes.len())) else {
                self.valid = false;
                return;
            };
            self.ends.push((n, v));
        }
        self.status = status;
        self.block.clear();
        self.block.extend_from_slice(block);
        self.generation = generation;
        self.valid = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Fields = &'static [(&'static [u8], &'static [u8])];

    #[test]
    fn only_an_identical_head_at_the_same_generation_matches() {
        let kept: Fields = &[(b"content-type", b"text/plain"), (b"date", b"x")];
        let mut c = HeadCache::default();
        assert!(c.get(200, kept.iter().copied(), 0).is_none());
        c.keep(200, kept.iter().copied(), Some((b"BLOCK", 7)));
        assert_eq!(c.get(200, kept.iter().copied(), 7), Some(&b"BLOCK"[..]));
        struct Case {
            status: u16,
            fields: Fields,
            generation: u64,
        }
        let misses = [
            Case { status: 404, fields: kept, generation: 7 },
            Case { status: 200, fields: kept, generation: 8 },
            Case { status: 200, fields: &[(b"content-type", b"text/plain")], generation: 7 },
            Case {
                status: 200,
                fields: &[(b"content-type", b"text/plain"), (b"date", b"x"), (b"a", b"")],
                generation: 7,
            },
            Case {
                status: 200,
                fields: &[(b"content-type", b"text/plain"), (b"date", b"y")],
                generation: 7,
            },
            // The same octets split differently between name and value.
            Case {
                status: 200,
                fields: &[(b"content-typ", b"etext/plain"), (b"date", b"x")],
                generation: 7,
            },
            Case { status: 200, fields: &[], generation: 7 },
        ];
        for m in misses {
            assert!(
                c.get(m.status, m.fields.iter().copied(), m.generation).is_none(),
                "{} {:?} {}",
                m.status,
                m.fields,
                m.generation
            );
        }
        // Nothing reusable: the old head is forgotten.
        c.keep(200, kept.iter().copied(), None);
        assert!(c.get(200, kept.iter().copied(), 7).is_none());
    }
}
