//! The last response head a connection encoded, kept with its HPACK header block: a response
//! head identical to it (status and fields, Date and content-length included) is sent by
//! copying those bytes while the encoder's table is unchanged, skipping the encoding. A
//! connection serving one resource over and over (a load generator, an API poller, a page's
//! many small images of one size) encodes each distinct head about once a second (when Date
//! changes). The client does the same with its requests (`client::conn::last_request`).
//!
//! Whether the bytes are still valid is the connection's to say: the block is an
//! [`HeaderBlock`], which carries the encoder and generation it was made at, and
//! [`Conn::send_response_block`] refuses a stale one.

use crate::http2::{Conn, HeaderBlock};

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
    block: HeaderBlock,
}

impl HeadCache {
    /// The header block of a head identical to the kept one, when `conn` can still send it.
    #[inline]
    pub(super) fn get<'f>(
        &self,
        status: u16,
        fields: impl Iterator<Item = (&'f [u8], &'f [u8])>,
        conn: &Conn,
    ) -> Option<&HeaderBlock> {
        // The connection's check first: it is the cheaper, and after a table change the only
        // one that fails.
        if !self.valid || self.status != status || !conn.can_send_block(&self.block) {
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
        ends.next().is_none().then_some(&self.block)
    }

    /// Keeps a head and the block `conn` just encoded it to, when that block can be sent
    /// again (otherwise forgets the old one).
    pub(super) fn keep<'f>(
        &mut self,
        status: u16,
        fields: impl Iterator<Item = (&'f [u8], &'f [u8])>,
        conn: &Conn,
    ) {
        if !conn.keep_response_block(&mut self.block) {
            self.valid = false;
            return;
        }
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
        self.valid = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Fields = &'static [(&'static [u8], &'static [u8])];

    /// A server connection with stream 1 open, as after an `Upgrade: h2c`.
    fn server() -> Conn {
        Conn::upgraded(crate::http2::Config::default(), &[], std::time::Instant::now()).unwrap()
    }

    #[test]
    fn only_an_identical_head_the_connection_can_still_send_matches() {
        let kept: Fields = &[(b"content-type", b"text/plain"), (b"date", b"x")];
        let mut conn = server();
        let mut c = HeadCache::default();
        assert!(c.get(200, kept.iter().copied(), &conn).is_none());
        // Fields the encoder does not index: the block changes no table, so it is kept.
        let sent: Fields = &[(b"etag", b"\"e\""), (b"content-length", b"5")];
        conn.send_response(crate::http2::StreamId::new(1), 200, sent.iter().copied(), true)
            .unwrap();
        c.keep(200, kept.iter().copied(), &conn);
        let block = c.get(200, kept.iter().copied(), &conn).expect("kept");
        assert!(conn.can_send_block(block));
        struct Case {
            status: u16,
            fields: Fields,
        }
        let misses = [
            Case { status: 404, fields: kept },
            Case { status: 200, fields: &[(b"content-type", b"text/plain")] },
            Case {
                status: 200,
                fields: &[(b"content-type", b"text/plain"), (b"date", b"x"), (b"a", b"")],
            },
            Case { status: 200, fields: &[(b"content-type", b"text/plain"), (b"date", b"y")] },
            // The same octets split differently between name and value.
            Case { status: 200, fields: &[(b"content-typ", b"etext/plain"), (b"date", b"x")] },
            Case { status: 200, fields: &[] },
        ];
        for m in misses {
            let got = c.get(m.status, m.fields.iter().copied(), &conn);
            assert!(got.is_none(), "{} {:?}", m.status, m.fields);
        }
        // Another connection's encoder: its table is another.
        assert!(c.get(200, kept.iter().copied(), &server()).is_none());
        // Nothing reusable (a block that changed the table): the old head is forgotten.
        let mut conn = server();
        let indexed: Fields = &[(b"content-type", b"text/plain")];
        conn.send_response(crate::http2::StreamId::new(1), 200, indexed.iter().copied(), true)
            .unwrap();
        c.keep(200, kept.iter().copied(), &conn);
        assert!(c.get(200, kept.iter().copied(), &conn).is_none());
    }
}
