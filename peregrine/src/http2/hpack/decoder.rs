//! [`Decoder`]: header blocks in, [`FieldList`] out (RFC 7541 §3, §6).

use super::field_list::{FieldList, Span};
use super::static_table::{STATIC, STATIC_LEN, StaticName, name_id};
use super::{DecodeError, FieldError, huffman, integer};
use crate::field_codec::field_bytes::{NAME_BAD, check_name, check_value, classify};
use crate::field_codec::table::Table;

/// The HPACK decoder of one connection's inbound direction: owns the peer's dynamic table as
/// this side sees it.
///
/// # Examples
///
/// ```
/// use peregrine::http2::hpack::{Decoder, FieldList};
/// let mut decoder = Decoder::new(4096);
/// let mut fields = FieldList::new(64 * 1024);
/// // RFC 7541 C.2.1: a literal with incremental indexing, "custom-key: custom-header".
/// let block = b"\x40\x0acustom-key\x0dcustom-header";
/// decoder.decode(block, &mut fields)?;
/// let f = fields.iter().next().unwrap();
/// assert_eq!((f.name, f.value), (&b"custom-key"[..], &b"custom-header"[..]));
/// // The entry is now dynamic index 62.
/// decoder.decode(&[0xbe], &mut fields)?;
/// assert_eq!(fields.iter().next().unwrap().value, b"custom-header");
/// # Ok::<(), peregrine::http2::hpack::DecodeError>(())
/// ```
pub struct Decoder {
    /// Entries carry the §8.2.1 verdicts of their name and value (`FieldError` codes, 0 = ok)
    /// so a reference to a malformed entry flags every list it lands in.
    pub(super) table: Table<[u8; 2]>,
    /// Our SETTINGS_HEADER_TABLE_SIZE: the largest size update we accept.
    max_allowed: usize,
    /// The smallest setting we advertised below the table's current maximum since the last
    /// block: the next block must start with a size update at most this (RFC 7541 §4.2).
    required_update: Option<usize>,
    /// Moves whenever the table, its maximum or a size update owed may have changed.
    generation: u64,
    /// The last block decoded to its list from its bytes alone (see [`Decoder::replays`]).
    replayable: bool,
    /// The block being decoded referred to the dynamic table or updated its size: its list
    /// or its effect on the table is more than a function of its bytes.
    stateful: bool,
}

/// How a literal field relates to the dynamic table (RFC 7541 §6.2).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Incremental,
    Without,
    Never,
}

/// A string read from the block: its decoded length, whether its bytes were written to the
/// arena (they are not when longer than the caller's limit), and its byte classes.
struct Str {
    len: usize,
    stored: bool,
    class: u8,
}

impl Decoder {
    /// A decoder whose table may grow to `max_table_size` octets: our
    /// SETTINGS_HEADER_TABLE_SIZE as the peer knows it (4,096 until it acknowledges another
    /// value; RFC 9113 §6.5.2). Size updates above it are errors. Allocates nothing until
    /// the first indexed literal.
    pub fn new(max_table_size: usize) -> Decoder {
        Decoder {
            table: Table::new(max_table_size),
            max_allowed: max_table_size,
            required_update: None,
            generation: 0,
            replayable: false,
            stateful: false,
        }
    }

    /// Our new SETTINGS_HEADER_TABLE_SIZE, once the peer acknowledged it. If it is below the
    /// table's current maximum, the next block must start with a size update to at most `n`
    /// (RFC 7541 §4.2: "the encoder MUST signal"); until then the table keeps its entries.
    pub fn set_max_table_size(&mut self, n: usize) {
        self.generation += 1;
        self.max_allowed = n;
        if n < self.table.max_size() {
            self.required_update = Some(self.required_update.map_or(n, |m| m.min(n)));
        }
    }

    /// The dynamic table's current maximum size (as the peer's last size update set it).
    pub fn table_max_size(&self) -> usize {
        self.table.max_size()
    }

    /// Number of entries in the dynamic table.
    pub fn table_len(&self) -> usize {
        self.table.len()
    }

    /// The decoder's generation: it changes whenever the table, its maximum or a size update
    /// owed may have (a size update or an incremental literal decoded, a new setting). A
    /// block's decoding depends only on its bytes and that state (RFC 7541 §3.2), so a block
    /// decoded at generation `g` that left it at `g` decodes to the same list again while the
    /// generation stays `g`: a connection can keep the list instead of decoding it again.
    ///
    /// # Examples
    /// ```
    /// use peregrine::http2::hpack::{Decoder, FieldList};
    /// let mut decoder = Decoder::new(4096);
    /// let mut fields = FieldList::new(64 * 1024);
    /// let g = decoder.generation();
    /// decoder.decode(&[0x82, 0x84], &mut fields)?; // indexed fields only
    /// assert_eq!(decoder.generation(), g);
    /// decoder.decode(b"\x40\x01k\x01v", &mut fields)?; // incremental indexing
    /// assert_ne!(decoder.generation(), g);
    /// # Ok::<(), peregrine::http2::hpack::DecodeError>(())
    /// ```
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Decodes one complete header block (a HEADERS or PUSH_PROMISE fragment and its
    /// CONTINUATIONs, concatenated) into `out`, which it clears first.
    ///
    /// A field that breaks RFC 9113 §8.2.1 does not stop decoding: it is stored and
    /// [`FieldList::malformed`] reports it (a stream error). Past the list budget fields are
    /// dropped and [`FieldList::too_large`] is set; decoding still runs to the end of the
    /// block, at a cost bounded by the block's length, so the table stays in step.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when the block cannot be decoded: a connection error of type
    /// COMPRESSION_ERROR (RFC 9113 §4.3). The decoder is then unusable (its table may be
    /// half-updated), as is the connection.
    pub fn decode(&mut self, block: &[u8], out: &mut FieldList) -> Result<(), DecodeError> {
        out.clear();
        // Set at the end, when the block decoded: one that fails is never replayed.
        self.replayable = false;
        self.stateful = false;
        self.decode_fields(block, out)?;
        self.replayable = !self.stateful && !out.too_large && out.malformed.is_none();
        Ok(())
    }

    unstable_pub! {
        /// Whether the last block decoded can be taken again by [`Decoder::replay`] now, should
        /// the same bytes arrive again: its list was a function of its bytes alone. No field
        /// referred to the dynamic table and no size update came, so (RFC 7541 §3.2) only the
        /// table depended on the decoder, and the block's effect on it is its incremental
        /// literals, in order (§6.2.1). The list was also stored whole (not
        /// [`too_large`](FieldList::too_large)) and well formed, and no size update is owed now
        /// (§4.2: the same bytes would then fail).
        ///
        /// nginx encodes every response so: each field a literal indexed again, never a
        /// reference. Its blocks change the table, so [`generation`](Decoder::generation) cannot
        /// tell a repeat apart; this can.
        ///
        /// # Examples
        /// ```
        /// use peregrine::http2::hpack::{Decoder, FieldList};
        /// let mut decoder = Decoder::new(4096);
        /// let mut fields = FieldList::new(64 * 1024);
        /// // :status 200, then "server: nginx" indexed (static name 54).
        /// let block = b"\x88\x76\x05nginx";
        /// decoder.decode(block, &mut fields)?;
        /// assert!(decoder.replays());
        /// // The same bytes again: `fields` is their list, and the table gets its second entry.
        /// decoder.replay(&fields);
        /// assert_eq!(decoder.table_len(), 2);
        /// // A block that refers to the table does not replay.
        /// decoder.decode(&[0x88, 0xbe], &mut fields)?;
        /// assert!(!decoder.replays());
        /// # Ok::<(), peregrine::http2::hpack::DecodeError>(())
        /// ```
        pub fn replays(&self) -> bool {
            self.replayable && self.required_update.is_none()
        }

        /// The last block decoded arrived again while [`Decoder::replays`]: `list` must be the
        /// list it decoded to, unchanged. The list is the new block's list, and the block's
        /// incremental literals are inserted again from it instead of decoded (§6.2.1). Nothing
        /// else in the decoder depends on the block, so the decoder ends where decoding the
        /// block again would leave it, for a fraction of the cost: a Huffman literal is a copy.
        ///
        /// Given another list, the table would no longer be the peer's, and later blocks would
        /// decode to wrong fields: the caller keeps the list untouched between the two.
        ///
        /// # Panics
        ///
        /// In debug builds, when [`Decoder::replays`] is false.
        pub fn replay(&mut self, list: &FieldList) {
            debug_assert!(self.replays(), "replay of a block that does not replay");
            for (name, value, known) in list.indexed() {
                self.generation += 1;
                // Only well-formed lists replay: the entries carry no §8.2.1 verdict.
                self.table.insert(name, value, known, [0, 0]);
            }
        }
    }

    fn decode_fields(&mut self, block: &[u8], out: &mut FieldList) -> Result<(), DecodeError> {
        let mut p = 0;
        // RFC 7541 §4.2: "This dynamic table size update MUST occur at the beginning of the
        // first header block following the change to the dynamic table size." ... "at most
        // two dynamic table size updates" (the smallest, then the final).
        let mut updates = 0;
        let mut smallest = usize::MAX;
        while let Some(&b) = block.get(p) {
            if b & 0xe0 != 0x20 {
                break;
            }
            let n = integer::decode(block, &mut p, 5)?;
            // §6.3: "The new maximum size MUST be lower than or equal to the limit".
            if n > self.max_allowed {
                return Err(DecodeError::SizeUpdateTooLarge);
            }
            updates += 1;
            if updates > 2 {
                return Err(DecodeError::TooManySizeUpdates);
            }
            smallest = smallest.min(n);
            self.generation += 1;
            self.table.set_max_size(n);
        }
        if let Some(m) = self.required_update.take() {
            if smallest > m {
                return Err(DecodeError::MissingSizeUpdate);
            }
        }
        self.stateful = updates > 0;

        while let Some(&b) = block.get(p) {
            if b & 0x80 != 0 {
                // §6.1 indexed field: 1xxxxxxx.
                let index = integer::decode(block, &mut p, 7)?;
                self.indexed(index, out)?;
            } else if b & 0x40 != 0 {
                // §6.2.1 literal with incremental indexing: 01xxxxxx.
                self.generation += 1;
                let index = integer::decode(block, &mut p, 6)?;
                self.literal(block, &mut p, index, Mode::Incremental, out)?;
            } else if b & 0x20 != 0 {
                // §6.3 size update after a field: 001xxxxx.
                return Err(DecodeError::SizeUpdateAfterField);
            } else {
                // §6.2.2 without indexing 0000xxxx, §6.2.3 never indexed 0001xxxx.
                let mode = if b & 0x10 != 0 { Mode::Never } else { Mode::Without };
                let index = integer::decode(block, &mut p, 4)?;
                self.literal(block, &mut p, index, mode, out)?;
            }
        }
        Ok(())
    }

    #[inline]
    fn indexed(&mut self, index: usize, out: &mut FieldList) -> Result<(), DecodeError> {
        if index == 0 {
            // §6.1: "The index value of 0 is not used. It MUST be treated as a decoding error".
            return Err(DecodeError::InvalidIndex);
        }
        if index <= STATIC_LEN {
            let (n, v) = STATIC[index - 1];
            let size = n.len() + v.len();
            if out.fits(size) {
                let span = Span::static_entry(index);
                out.push(span, span, size, StaticName::of_index(index), false, false);
            } else {
                out.too_large = true;
            }
            return Ok(());
        }
        // The list now depends on the table, not only on the block.
        self.stateful = true;
        // §2.3.3: "Indices strictly greater than the sum of the lengths of both tables MUST
        // be treated as a decoding error."
        let e = *self.table.get(index - STATIC_LEN - 1).ok_or(DecodeError::InvalidIndex)?;
        let size = e.name_len + e.value_len;
        if out.fits(size) {
            let at = out.used;
            out.ensure(at + size);
            out.arena[at..at + size].copy_from_slice(self.table.bytes(&e));
            out.used = at + size;
            out.push(
                Span { off: at, len: e.name_len },
                Span { off: at + e.name_len, len: e.value_len },
                size,
                e.known,
                false,
                false,
            );
            if let Some(err) =
                FieldError::from_code(e.extra[0]).or(FieldError::from_code(e.extra[1]))
            {
                out.flag(err);
            }
        } else {
            out.too_large = true;
        }
        Ok(())
    }

    /// A literal field (§6.2): name by index or as a string, then the value string.
    #[inline]
    fn literal(
        &mut self,
        block: &[u8],
        p: &mut usize,
        index: usize,
        mode: Mode,
        out: &mut FieldList,
    ) -> Result<(), DecodeError> {
        let room = if out.too_large { 0 } else { out.room() };
        // Bytes worth holding: what the list can still store, or, when the field goes into
        // the table, what fits there (the table needs the bytes even past the list budget).
        let table_room =
            if mode == Mode::Incremental { self.table.max_size().saturating_sub(32) } else { 0 };
        let limit = room.max(table_room);
        let base = out.used;

        let (name_span, name_len, name_stored, known, name_err, static_name) = match index {
            0 => {
                let s = read_string(block, p, out, base, limit)?;
                let (known, err) = if s.stored {
                    let name = &out.arena[base..base + s.len];
                    (
                        name_id(name),
                        if s.class & NAME_BAD != 0 || s.len == 0 { check_name(name) } else { None },
                    )
                } else {
                    (0, None)
                };
                (Span { off: base, len: s.len }, s.len, s.stored, known, err, None)
            }
            1..=STATIC_LEN => {
                let name = STATIC[index - 1].0;
                (
                    Span::static_entry(index),
                    name.len(),
                    true,
                    StaticName::of_index(index),
                    None,
                    Some(name),
                )
            }
            _ => {
                self.stateful = true;
                let e = *self.table.get(index - STATIC_LEN - 1).ok_or(DecodeError::InvalidIndex)?;
                let stored = e.name_len <= limit;
                if stored {
                    // Copied out before the insert below can evict the entry (§4.4).
                    out.ensure(base + e.name_len);
                    out.arena[base..base + e.name_len].copy_from_slice(self.table.name(&e));
                }
                (
                    Span { off: base, len: e.name_len },
                    e.name_len,
                    stored,
                    e.known,
                    FieldError::from_code(e.extra[0]),
                    None,
                )
            }
        };

        let vbase = if static_name.is_some() { base } else { base + name_len };
        let v = read_string(block, p, out, vbase, limit.saturating_sub(name_len))?;
        let stored = name_stored && v.stored;
        let value_err =
            if v.stored { check_value(&out.arena[vbase..vbase + v.len], v.class) } else { None };
        let size = name_len + v.len;

        if !out.too_large {
            if stored && out.fits(size) {
                if let Some(e) = name_err.or(value_err) {
                    out.flag(e);
                }
                out.used = vbase + v.len;
                out.push(
                    name_span,
                    Span { off: vbase, len: v.len },
                    size,
                    known,
                    mode == Mode::Never,
                    mode == Mode::Incremental,
                );
            } else {
                out.too_large = true;
            }
        }
        if mode == Mode::Incremental {
            if stored {
                let name = match static_name {
                    Some(n) => n,
                    None => &out.arena[base..base + name_len],
                };
                let codes = [FieldError::code(name_err), FieldError::code(value_err)];
                self.table.insert(name, &out.arena[vbase..vbase + v.len], known, codes);
            } else {
                // Not held because longer than the table's maximum less 32: inserting it
                // would only empty the table (§4.4).
                self.table.clear();
            }
        }
        Ok(())
    }
}

/// Reads a string literal (§5.2) at `*p`: writes its bytes to `out.arena[at..]` when its
/// decoded length is at most `limit`, else only checks it (a Huffman string is still decoded
/// to find its length and errors, without storing: the work stays bounded by the block).
#[inline]
fn read_string(
    block: &[u8],
    p: &mut usize,
    out: &mut FieldList,
    at: usize,
    limit: usize,
) -> Result<Str, DecodeError> {
    let Some(&first) = block.get(*p) else { return Err(DecodeError::Truncated) };
    let len = integer::decode(block, p, 7)?;
    let src =
        p.checked_add(len).and_then(|end| block.get(*p..end)).ok_or(DecodeError::Truncated)?;
    *p += len;
    if first & 0x80 == 0 {
        if len > limit {
            return Ok(Str { len, stored: false, class: 0 });
        }
        out.ensure(at + len);
        out.arena[at..at + len].copy_from_slice(src);
        return Ok(Str { len, stored: true, class: classify(src) });
    }
    let max = huffman::max_decoded_len(len);
    let room = if max <= limit {
        max
    } else {
        let (n, _) = huffman::decode::<false>(src, &mut [])?;
        if n > limit {
            return Ok(Str { len: n, stored: false, class: 0 });
        }
        n
    };
    out.ensure(at + room + huffman::SLACK);
    let (n, class) = huffman::decode::<true>(src, &mut out.arena[at..at + room + huffman::SLACK])?;
    Ok(Str { len: n, stored: true, class })
}
