//! [`Encoder`]: field lists in, header blocks out (RFC 7541 §6), with an indexing policy.
//!
//! # Indexing policy (RFC 7541 §7.1)
//!
//! Per field, in order:
//! 1. A full match in the static table (`:method GET`, `:status 200`, a name whose static
//!    value is empty with an empty value ...) → indexed field, one octet.
//! 2. **Never indexed** (§6.2.3) when the field is a credential an attacker could confirm
//!    by guessing (§7.1.3, CRIME-style probing of the compression context): `authorization`,
//!    `proxy-authorization`, `cookie` values under 20 octets (short enough to brute-force), and
//!    any field the caller passes to [`BlockEncoder::never_indexed`]. Never looked up in the
//!    dynamic table either, so no entry can confirm a guess.
//! 3. A full match in the dynamic table → indexed field.
//! 4. **Not indexed** (§6.2.2) when inserting would only churn the table: values that change
//!    on nearly every message (`:path`, `content-length`, `age`, `etag`, `location`,
//!    `set-cookie`, `if-modified-since`, `if-none-match`), and any field larger than 3/4 of
//!    the table (it would flush everything else for one likely single use).
//! 5. Otherwise **incremental indexing** (§6.2.1): the next identical field costs one or two
//!    octets.
//!
//! The name is given by index whenever the static table (preferred: smaller index) or the
//! dynamic table holds it. Strings are Huffman-coded only when that is strictly shorter.
//! The categories follow nghttp2's deflater, so the two produce blocks of similar size (the
//! `hpack` bench prints the byte ratio).
//!
//! # Table size
//!
//! Our table is capped at [`Encoder::TABLE_CAP`] (4,096 octets, the protocol default): the
//! peer's larger SETTINGS_HEADER_TABLE_SIZE would let us keep more, but every byte is memory
//! per connection on both sides, and the corpus gains under 1 % from 4 KiB to 16 KiB (nghttp2
//! makes the same choice). A smaller peer setting is honoured: the next block starts with the
//! size update (§4.2, §6.3).

use super::static_table::{STATIC_LEN, StaticName, full_match, name_id};
use super::{huffman, integer};
use crate::decimal::Decimal;
use crate::field_codec::field_hash::{Chain, Chains, Links, hash};
use crate::field_codec::table::Table;

/// The HPACK encoder of one connection's outbound direction.
///
/// # Examples
///
/// ```
/// use peregrine::http2::hpack::Encoder;
/// let mut encoder = Encoder::new();
/// let mut dst = Vec::new();
/// let mut block = encoder.block(&mut dst);
/// block.status(200);
/// block.content_length(5);
/// block.field(b"content-type", b"text/plain");
/// assert_eq!(dst[0], 0x88); // :status 200 is static index 8
/// ```
pub struct Encoder {
    table: Table<Links>,
    chains: Chains,
    /// Size updates owed at the start of the next block: (smallest, final) (§4.2).
    update: Option<(usize, usize)>,
    /// Bumped whenever the table changes (an insertion, a size change): a block encoded at an
    /// unchanged generation, whose encoding changed nothing, encodes the same fields to the
    /// same bytes again, so a caller may keep and resend it.
    generation: u64,
}

impl Default for Encoder {
    fn default() -> Self {
        Encoder::new()
    }
}

/// The fields of one header block being encoded; made by [`Encoder::block`], which wrote the
/// size updates the block must start with.
pub struct BlockEncoder<'a> {
    enc: &'a mut Encoder,
    dst: &'a mut Vec<u8>,
}

/// How a literal relates to the dynamic table (§6.2).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Incremental,
    Without,
    Never,
}

impl Encoder {
    /// The most dynamic table we keep, whatever the peer allows (see the module docs).
    pub const TABLE_CAP: usize = 4096;

    /// An encoder with the protocol's initial table size (4,096, RFC 9113 §6.5.2).
    /// Allocates nothing until the first indexed field.
    pub fn new() -> Encoder {
        Encoder {
            table: Table::new(Self::TABLE_CAP),
            chains: Chains::new(),
            update: None,
            generation: 0,
        }
    }

    /// The peer's SETTINGS_HEADER_TABLE_SIZE: our table becomes `min(n, TABLE_CAP)`, and the
    /// next block starts with the size update(s) saying so (§4.2: the smallest size since the
    /// last block, then the final one, when they differ).
    pub fn set_peer_max_table_size(&mut self, n: usize) {
        let size = n.min(Self::TABLE_CAP);
        if size == self.table.max_size() && self.update.is_none() {
            return;
        }
        let smallest = self.update.map_or(size.min(self.table.max_size()), |(s, _)| s.min(size));
        self.update = Some((smallest, size));
        self.generation += 1;
        // Entries the peer evicts when it reads the update go now: our view is the
        // decoder's after the block's first octets.
        self.table.set_max_size(smallest);
        self.table.set_max_size(size);
    }

    /// Our dynamic table's maximum size.
    pub fn table_max_size(&self) -> usize {
        self.table.max_size()
    }

    /// The table's generation: it changes whenever the table (or a size update owed) does. Two
    /// blocks encoded at the same generation, the first leaving it unchanged, are
    /// byte-identical for identical fields.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Number of entries in our dynamic table.
    pub fn table_len(&self) -> usize {
        self.table.len()
    }

    /// Starts a header block in `dst`, writing any size update it owes first.
    pub fn block<'a>(&'a mut self, dst: &'a mut Vec<u8>) -> BlockEncoder<'a> {
        if let Some((smallest, size)) = self.update.take() {
            if smallest < size {
                integer::encode(dst, 0x20, 5, smallest);
            }
            integer::encode(dst, 0x20, 5, size);
        }
        BlockEncoder { enc: self, dst }
    }

    /// Appends the header block for `fields` (lowercase names) to `dst`. Allocates nothing
    /// once `dst` has room and the table is warm.
    ///
    /// # Examples
    ///
    /// ```
    /// use peregrine::http2::hpack::Encoder;
    /// let mut encoder = Encoder::new();
    /// let mut dst = Vec::new();
    /// encoder.encode([(&b":method"[..], &b"GET"[..]), (b":path", b"/")], &mut dst);
    /// assert_eq!(dst, [0x82, 0x84]);
    /// ```
    pub fn encode<'f>(
        &mut self,
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
        dst: &mut Vec<u8>,
    ) {
        let mut block = self.block(dst);
        for (name, value) in fields {
            block.field(name, value);
        }
    }

    fn field(&mut self, dst: &mut Vec<u8>, name: &[u8], id: u8, value: &[u8], sensitive: bool) {
        let mode = policy(
            id,
            value.len(),
            name.len() + value.len() + 32,
            self.table.max_size(),
            sensitive,
        );
        if mode != Mode::Never && id != 0 {
            if let Some(i) = full_match(id, value) {
                integer::encode(dst, 0x80, 7, i);
                return;
            }
        }
        if mode == Mode::Never || (mode == Mode::Without && never_entered(id)) {
            // Never in our table (only this encoder inserts, and never such a field): no
            // hashing, no lookup; a static name by its index.
            let high = if mode == Mode::Never { 0x10 } else { 0x00 };
            let name_index = if id != 0 { id as usize } else { self.name_index(name) };
            integer::encode(dst, high, 4, name_index);
            if name_index == 0 {
                string(dst, name);
            }
            string(dst, value);
            return;
        }
        let name_hash = hash(0, name);
        let nv_hash = if mode == Mode::Never { 0 } else { hash(name_hash, value) };
        if mode != Mode::Never {
            if let Some(pos) = self.find(nv_hash, name, Some(value)) {
                integer::encode(dst, 0x80, 7, STATIC_LEN + 1 + pos);
                return;
            }
        }
        let name_index = if id != 0 {
            id as usize
        } else {
            self.find(name_hash, name, None).map_or(0, |pos| STATIC_LEN + 1 + pos)
        };
        match mode {
            Mode::Incremental => integer::encode(dst, 0x40, 6, name_index),
            Mode::Without => integer::encode(dst, 0x00, 4, name_index),
            Mode::Never => integer::encode(dst, 0x10, 4, name_index),
        }
        if name_index == 0 {
            string(dst, name);
        }
        string(dst, value);
        if mode == Mode::Incremental {
            self.insert(name, id, value, name_hash, nv_hash);
        }
    }

    /// Encodes a `:path` field as [`BlockEncoder::known`] with [`StaticName::PATH`] would,
    /// outside a block: for a caller splicing a new path into a block it encoded earlier at
    /// the current [`Encoder::generation`]. `:path` is never entered in the table (policy 4 of
    /// the module docs), so its encoding depends on its value alone and changes nothing here.
    ///
    /// # Examples
    ///
    /// ```
    /// use peregrine::http2::hpack::Encoder;
    /// let mut encoder = Encoder::new();
    /// let mut dst = Vec::new();
    /// encoder.path(b"/", &mut dst);
    /// assert_eq!(dst, [0x84]); // `:path /` is static index 4
    /// ```
    pub fn path(&mut self, path: &[u8], dst: &mut Vec<u8>) {
        let generation = self.generation;
        self.field(dst, b":path", StaticName::PATH.index(), path, false);
        debug_assert_eq!(generation, self.generation, ":path entered the table");
    }

    /// The index of a name without a static entry: its newest dynamic entry's, or 0.
    fn name_index(&self, name: &[u8]) -> usize {
        self.find(hash(0, name), name, None).map_or(0, |pos| STATIC_LEN + 1 + pos)
    }

    /// The dynamic position of the newest entry with this name (and value, if given).
    #[inline]
    fn find(&self, h: u64, name: &[u8], value: Option<&[u8]>) -> Option<usize> {
        let chain = if value.is_some() { Chain::NameValue(h) } else { Chain::Name(h) };
        let table = &self.table;
        let id = self.chains.find(table, chain, |_, e| {
            table.name(e) == name && value.is_none_or(|v| table.value(e) == v)
        })?;
        Some(table.position(id))
    }

    fn insert(&mut self, name: &[u8], id: u8, value: &[u8], name_hash: u64, nv_hash: u64) {
        self.generation += 1;
        self.chains.insert(&mut self.table, name, value, id, name_hash, nv_hash);
    }
}

impl BlockEncoder<'_> {
    /// The length of the destination buffer so far (from its start, not the block's): where
    /// the next field's encoding begins, for a caller that notes a field's span.
    pub fn dst_len(&self) -> usize {
        self.dst.len()
    }

    /// Encodes one field; `name` must be lowercase (RFC 9113 §8.2.2).
    pub fn field(&mut self, name: &[u8], value: &[u8]) {
        self.enc.field(self.dst, name, name_id(name), value, false);
    }

    /// Encodes a field whose name the caller knows as a static name: no name lookup.
    pub fn known(&mut self, name: StaticName, value: &[u8]) {
        self.enc.field(self.dst, name.as_bytes(), name.index(), value, false);
    }

    /// Encodes a sensitive field as never indexed (RFC 7541 §6.2.3, §7.1.3): it is not
    /// entered in the table, and intermediaries must keep it unindexed too.
    pub fn never_indexed(&mut self, name: &[u8], value: &[u8]) {
        self.enc.field(self.dst, name, name_id(name), value, true);
    }

    /// Encodes `:status`: one octet for 200, 204, 206, 304, 400, 404, 500 (static entries),
    /// otherwise the digits (indexed, so a repeated 302 costs one octet next time).
    pub fn status(&mut self, status: u16) {
        let index = match status {
            200 => 8,
            204 => 9,
            206 => 10,
            304 => 11,
            400 => 12,
            404 => 13,
            500 => 14,
            _ => {
                let digits = Decimal::new(u64::from(status));
                let digits = digits.as_bytes();
                self.enc.field(self.dst, b":status", StaticName::STATUS.index(), digits, false);
                return;
            }
        };
        self.dst.push(0x80 | index);
    }

    /// Encodes `content-length: n` (not indexed: lengths rarely repeat).
    pub fn content_length(&mut self, n: u64) {
        let digits = Decimal::new(n);
        self.enc.field(
            self.dst,
            b"content-length",
            StaticName::CONTENT_LENGTH.index(),
            digits.as_bytes(),
            false,
        );
    }
}

/// The indexing decision for a field that has no full static match (module docs).
#[inline]
fn policy(id: u8, value_len: usize, size: usize, table_max: usize, sensitive: bool) -> Mode {
    const AUTHORIZATION: u8 = StaticName::AUTHORIZATION.index();
    const PROXY_AUTHORIZATION: u8 = StaticName::PROXY_AUTHORIZATION.index();
    const COOKIE: u8 = StaticName::COOKIE.index();
    match id {
        _ if sensitive => Mode::Never,
        AUTHORIZATION | PROXY_AUTHORIZATION => Mode::Never,
        COOKIE if value_len < 20 => Mode::Never,
        _ if never_entered(id) => Mode::Without,
        _ if size > table_max * 3 / 4 => Mode::Without,
        _ => Mode::Incremental,
    }
}

/// Whether a field with this static name id is always sent without indexing, whatever its
/// value and the table's size (policy 4): such a field is never in the dynamic table.
#[inline]
fn never_entered(id: u8) -> bool {
    const PATH: u8 = StaticName::PATH.index();
    const CONTENT_LENGTH: u8 = StaticName::CONTENT_LENGTH.index();
    const AGE: u8 = StaticName::AGE.index();
    const ETAG: u8 = StaticName::ETAG.index();
    const LOCATION: u8 = StaticName::LOCATION.index();
    const SET_COOKIE: u8 = StaticName::SET_COOKIE.index();
    const IF_MODIFIED_SINCE: u8 = StaticName::IF_MODIFIED_SINCE.index();
    const IF_NONE_MATCH: u8 = StaticName::IF_NONE_MATCH.index();
    matches!(
        id,
        PATH | CONTENT_LENGTH
            | AGE
            | ETAG
            | LOCATION
            | SET_COOKIE
            | IF_MODIFIED_SINCE
            | IF_NONE_MATCH
    )
}

/// Appends a string literal (§5.2), Huffman-coded when strictly shorter.
#[inline]
fn string(dst: &mut Vec<u8>, s: &[u8]) {
    if s.len() < 0x7f {
        // A one-octet length either way: Huffman-code in place, one pass, and fall back to the
        // raw octets when that was not shorter (rare: most text codes to 5-7 bits a byte).
        let at = dst.len();
        dst.push(0);
        huffman::encode(s, dst);
        let huffman_len = dst.len() - at - 1;
        if huffman_len < s.len() {
            if let Some(prefix) = dst.get_mut(at) {
                *prefix = 0x80 | huffman_len as u8;
            }
        } else {
            dst.truncate(at);
            dst.push(s.len() as u8);
            dst.extend_from_slice(s);
        }
        return;
    }
    let huffman_len = huffman::encoded_len(s);
    if huffman_len < s.len() {
        integer::encode(dst, 0x80, 7, huffman_len);
        huffman::encode(s, dst);
    } else {
        integer::encode(dst, 0x00, 7, s.len());
        dst.extend_from_slice(s);
    }
}
