//! [`Decoder`]: the peer's encoder stream and field sections in, [`FieldList`]s and our
//! decoder stream out (RFC 9204 §2.2, §4.3, §4.4, §4.5).

use super::instruction::{DecoderInstruction, EncoderInstruction, Str};
use super::integer::{self, IntError};
use super::static_table::{HPACK_NAME, STATIC, STATIC_LEN};
use super::{CHURN_BURST, CHURN_PER_BYTE, Cause, Error, literal, prefix};
use crate::field_codec::field_bytes::{NAME_BAD, check_name, check_value};
use crate::field_codec::table::Table;
use crate::http2::hpack::static_table::name_id;
use crate::http2::hpack::{FieldError, FieldList, Span};
use crate::http3::stream_id::StreamId;

/// What [`Decoder::decode_section`] did with a section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// Decoded into the list.
    Decoded,
    /// The section needs entries the encoder stream has not brought yet (RFC 9204 §2.1.2):
    /// keep its bytes and call [`Decoder::decode_section`] again once
    /// [`Decoder::poll_unblocked`] names the stream.
    Blocked,
}

/// The QPACK decoder of one connection's inbound direction: owns the peer's dynamic table as
/// this side sees it, the blocked streams, and our decoder stream's pending instructions.
pub struct Decoder {
    /// Entries carry the RFC 9114 §4.2 verdicts of their name and value (`FieldError` codes)
    /// so a reference to a malformed entry flags every list it lands in.
    table: Table<[u8; 2]>,
    /// Our SETTINGS_QPACK_MAX_TABLE_CAPACITY.
    max_capacity: u64,
    /// §4.5.1.1's MaxEntries, from `max_capacity`.
    max_entries: u64,
    /// Our SETTINGS_QPACK_BLOCKED_STREAMS.
    max_blocked: usize,
    /// Streams blocked: the stream, its Required Insert Count, and our Insert Count when the
    /// section arrived.
    blocked: Vec<(StreamId, u64, u64)>,
    /// Streams unblocked by inserts, with our Insert Count when their section arrived.
    unblocked: Vec<(StreamId, u64)>,
    /// Streams unblocked and polled, not yet decoded again.
    polled: Vec<(StreamId, u64)>,
    /// An encoder stream instruction cut short.
    pending: Vec<u8>,
    /// The Insert Count the encoder knows we reached (§2.2.2: acknowledged by Section
    /// Acknowledgments and Insert Count Increments already queued).
    known_received: u64,
    /// Decoder stream bytes not yet polled.
    out: Vec<u8>,
    /// The encoder has set a non-zero table capacity at some time (so its sections may refer
    /// to the table).
    table_used: bool,
    /// Table churn credit, in entry-size octets (see the module's budgets).
    credit: u64,
    name: Vec<u8>,
    value: Vec<u8>,
}

impl Decoder {
    /// A decoder for our SETTINGS_QPACK_MAX_TABLE_CAPACITY `max_capacity` and
    /// SETTINGS_QPACK_BLOCKED_STREAMS `max_blocked`. The table starts at capacity 0 until
    /// the encoder sets it (§3.2.3). Allocates nothing until the first insert.
    pub fn new(max_capacity: u64, max_blocked: u64) -> Decoder {
        // A capacity is an in-memory size: clamp what the caller cannot mean to a usize.
        let max_capacity = max_capacity.min(isize::MAX as u64 / 8);
        Decoder {
            table: Table::new(0),
            max_capacity,
            max_entries: prefix::max_entries(max_capacity),
            max_blocked: usize::try_from(max_blocked).unwrap_or(usize::MAX),
            blocked: Vec::new(),
            unblocked: Vec::new(),
            polled: Vec::new(),
            pending: Vec::new(),
            known_received: 0,
            out: Vec::new(),
            table_used: false,
            credit: churn_cap(max_capacity),
            name: Vec::new(),
            value: Vec::new(),
        }
    }

    /// The table's Insert Count (§3.2.4: entries ever inserted).
    pub fn insert_count(&self) -> u64 {
        self.table.inserted()
    }

    /// Entries in the table.
    pub fn table_len(&self) -> usize {
        self.table.len()
    }

    /// The table's size (§3.2.1: name + value + 32 per entry).
    pub fn table_size(&self) -> usize {
        self.table.size()
    }

    /// The table's current capacity, as the encoder last set it.
    pub fn capacity(&self) -> usize {
        self.table.max_size()
    }

    /// Streams blocked now.
    pub fn blocked_streams(&self) -> usize {
        self.blocked.len()
    }

    fn earn(&mut self, octets: usize) {
        let earned = (octets as u64).saturating_mul(CHURN_PER_BYTE);
        self.credit = self.credit.saturating_add(earned).min(churn_cap(self.max_capacity));
    }

    /// Feeds bytes of the peer's encoder stream (any split) and applies every whole
    /// instruction in them (§4.3). Streams the inserts unblock are queued for
    /// [`Decoder::poll_unblocked`].
    ///
    /// # Errors
    ///
    /// `QPACK_ENCODER_STREAM_ERROR` for an instruction that cannot be applied, and
    /// `H3_EXCESSIVE_LOAD` when the churn budget runs out: connection errors.
    pub fn feed_encoder_stream(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.earn(bytes.len());
        let mut buf = std::mem::take(&mut self.pending);
        let r = if buf.is_empty() {
            let r = self.apply_all(bytes);
            if let Ok(used) = r {
                buf.extend_from_slice(&bytes[used..]);
            }
            r
        } else {
            buf.extend_from_slice(bytes);
            let r = self.apply_all(&buf);
            if let Ok(used) = r {
                buf.drain(..used);
            }
            r
        };
        self.pending = buf;
        r?;
        // An instruction this long inserts an entry larger than the table: a raw string is
        // at most the capacity, a Huffman one at most 30 bits an octet (< 4x), plus two
        // integers of at most 10 octets.
        if self.pending.len() as u64 > 4 * self.max_capacity + 32 {
            return Err(Error::encoder_stream(Cause::InstructionTooLong));
        }
        self.find_unblocked();
        Ok(())
    }

    /// The peer closed its encoder stream: RFC 9204 §4.2, "Closure of either unidirectional
    /// stream type MUST be treated as a connection error of type H3_CLOSED_CRITICAL_STREAM".
    pub fn encoder_stream_closed(&self) -> super::super::Error {
        super::super::Error::connection(
            super::super::Code::H3_CLOSED_CRITICAL_STREAM,
            Cause::StreamClosed.why(),
        )
    }

    /// Applies the whole instructions at the start of `buf`; returns the octets they took.
    fn apply_all(&mut self, buf: &[u8]) -> Result<usize, Error> {
        let mut at = 0;
        while let Some((i, n)) =
            EncoderInstruction::parse(&buf[at..]).map_err(Error::encoder_stream)?
        {
            self.apply(i)?;
            at += n;
        }
        Ok(at)
    }

    fn apply(&mut self, i: EncoderInstruction<'_>) -> Result<(), Error> {
        let err = Error::encoder_stream;
        match i {
            // §4.3.1: "The decoder MUST treat a new dynamic table capacity value that exceeds
            // this limit as a connection error of type QPACK_ENCODER_STREAM_ERROR."
            EncoderInstruction::SetCapacity(c) => {
                if c > self.max_capacity {
                    return Err(err(Cause::CapacityAboveMaximum));
                }
                self.table_used |= c > 0;
                self.table.set_max_size(c as usize);
                Ok(())
            }
            EncoderInstruction::InsertWithNameRef { static_: true, index, value } => {
                let i = usize::try_from(index).ok().filter(|&i| i < STATIC_LEN);
                // §4.3.2 points at §3.1's rule: an invalid static index is an error.
                let i = i.ok_or(err(Cause::StaticIndex))?;
                self.name.clear();
                self.name.extend_from_slice(STATIC[i].0);
                self.insert_value(HPACK_NAME[i], None, value)
            }
            EncoderInstruction::InsertWithNameRef { static_: false, index, value } => {
                let e = *self.relative(index).map_err(err)?;
                self.name.clear();
                self.name.extend_from_slice(self.table.name(&e));
                self.insert_value(e.known, FieldError::from_code(e.extra[0]), value)
            }
            EncoderInstruction::InsertWithLiteralName { name, value } => {
                let mut n = std::mem::take(&mut self.name);
                let class = literal::decode_into(name, &mut n).map_err(err)?;
                let name_err =
                    if class & NAME_BAD != 0 || n.is_empty() { check_name(&n) } else { None };
                let known = name_id(&n);
                self.name = n;
                self.insert_value(known, name_err, value)
            }
            EncoderInstruction::Duplicate(index) => {
                let e = *self.relative(index).map_err(err)?;
                // Copied out first: the insert may evict the entry it duplicates.
                self.name.clear();
                self.name.extend_from_slice(self.table.name(&e));
                self.value.clear();
                self.value.extend_from_slice(self.table.value(&e));
                self.insert(e.known, e.extra)
            }
        }
    }

    /// The entry at `index` relative to the Insert Count (§3.2.5: "relative index 0 refers
    /// to the most recently inserted value"); §4.3.2: a reference to an evicted or absent
    /// entry is an encoder stream error.
    fn relative(&self, index: u64) -> Result<&crate::field_codec::table::Entry<[u8; 2]>, Cause> {
        let inserted = self.table.inserted();
        if index >= inserted {
            return Err(Cause::DynamicIndex);
        }
        self.table.by_id(inserted - 1 - index).ok_or(Cause::DynamicIndex)
    }

    /// Decodes `value` and inserts `(self.name, value)`.
    fn insert_value(
        &mut self,
        known: u8,
        name_err: Option<FieldError>,
        value: Str<'_>,
    ) -> Result<(), Error> {
        let err = Error::encoder_stream;
        // Refused before decoding when the raw string alone cannot fit.
        if !value.huffman && self.name.len() + value.bytes.len() + 32 > self.table.max_size() {
            return Err(err(Cause::EntryTooLarge));
        }
        let mut v = std::mem::take(&mut self.value);
        let class = literal::decode_into(value, &mut v);
        let value_err = class.map(|c| check_value(&v, c));
        self.value = v;
        let value_err = value_err.map_err(err)?;
        self.insert(known, [FieldError::code(name_err), FieldError::code(value_err)])
    }

    /// Inserts `(self.name, self.value)`, spending churn credit.
    fn insert(&mut self, known: u8, codes: [u8; 2]) -> Result<(), Error> {
        let size = (self.name.len() + self.value.len() + 32) as u64;
        // §3.2.2 (via §4.3.2-§4.3.4): "The encoder MUST NOT cause a dynamic table entry to be
        // evicted unless ... and MUST NOT insert an entry larger than the capacity"; the
        // decoder treats such an insert as an encoder stream error.
        if size > self.table.max_size() as u64 {
            return Err(Error::encoder_stream(Cause::EntryTooLarge));
        }
        if size > self.credit {
            return Err(Error::excessive(Cause::ChurnBudget));
        }
        self.credit -= size;
        self.table.insert(&self.name, &self.value, known, codes);
        Ok(())
    }

    fn find_unblocked(&mut self) {
        let inserted = self.table.inserted();
        let unblocked = &mut self.unblocked;
        self.blocked.retain(|&(s, ric, at)| {
            let ready = ric <= inserted;
            if ready {
                unblocked.push((s, at));
            }
            !ready
        });
    }

    /// Forgets what was remembered of `stream`'s blocked section.
    fn forget(&mut self, stream: StreamId) {
        self.blocked.retain(|b| b.0 != stream);
        self.unblocked.retain(|u| u.0 != stream);
        self.polled.retain(|u| u.0 != stream);
    }

    /// A stream whose blocked section can now be decoded, oldest first.
    pub fn poll_unblocked(&mut self) -> Option<StreamId> {
        if self.unblocked.is_empty() {
            return None;
        }
        // Still remembered (with its arrival Insert Count) until decoded or cancelled.
        let first = self.unblocked.remove(0);
        self.polled.push(first);
        Some(first.0)
    }

    /// A request stream was reset or abandoned before its field sections were decoded:
    /// forgets it if blocked and tells the encoder (§4.4.2), so it stops counting the
    /// stream's references.
    pub fn cancel_stream(&mut self, stream: StreamId) {
        let refers = self.blocked.iter().any(|b| b.0 == stream)
            || self.unblocked.iter().chain(&self.polled).any(|u| u.0 == stream);
        self.forget(stream);
        // §2.2.2.2: "A decoder with a maximum dynamic table capacity equal to zero MAY omit
        // sending Stream Cancellations, because the encoder cannot have any dynamic table
        // references." Nor can an encoder that never gave the table a capacity (§3.2.3: it
        // starts at 0; an insert needs room), save in a section already blocked on inserts
        // still on their way, whose Required Insert Count says so. Omitted for such a peer,
        // a cancellation per abandoned request would only grow a stream it need not read.
        if self.max_capacity > 0 && (self.table_used || refers) {
            DecoderInstruction::StreamCancel(stream).encode(&mut self.out);
        }
    }

    /// Moves our decoder stream's bytes into `dst`: Section Acknowledgments and Stream
    /// Cancellations as they happened, then one Insert Count Increment for inserts no
    /// acknowledgment covered (§4.4.3), so the encoder can reference them without blocking.
    pub fn poll_decoder_stream(&mut self, dst: &mut Vec<u8>) {
        let inserted = self.table.inserted();
        if inserted > self.known_received {
            DecoderInstruction::InsertCountIncrement(inserted - self.known_received)
                .encode(&mut self.out);
            self.known_received = inserted;
        }
        dst.extend_from_slice(&self.out);
        self.out.clear();
    }

    /// Decodes the field section `block` (a whole HEADERS or PUSH_PROMISE field section) of
    /// `stream` into `out`, which it clears first; queues its Section Acknowledgment when it
    /// referred to the dynamic table (§4.4.1).
    ///
    /// A stream's sections come in order: once one answers [`Section::Blocked`], give it
    /// again, with the same bytes, before the stream's next section (a request stream's
    /// frames are read in order, so the next is not read yet); the Required Insert Count of
    /// the retried section is read as it was when the section arrived.
    ///
    /// A field that breaks RFC 9114 §4.2 does not stop decoding: [`FieldList::malformed`]
    /// reports it (H3_MESSAGE_ERROR on the stream). Past the list budget,
    /// [`FieldList::too_large`] is set and decoding still runs to the end.
    ///
    /// # Errors
    ///
    /// `QPACK_DECOMPRESSION_FAILED` (§2.2.3, §4.5), and `H3_EXCESSIVE_LOAD` past the blocked
    /// streams limit: connection errors.
    pub fn decode_section(
        &mut self,
        stream: StreamId,
        block: &[u8],
        out: &mut FieldList,
    ) -> Result<Section, Error> {
        out.clear();
        // Our decoder stream is not being read (see the module's budgets).
        if self.out.len() > super::MAX_DECODER_BACKLOG {
            return Err(Error::excessive(Cause::DecoderBacklog));
        }
        let mut p = 0;
        // §4.5.1.1 decodes the Required Insert Count against the Insert Count when the
        // section arrived: a section retried after it blocked is read as it was then, so no
        // input can decode to a different count the second time.
        let arrived = (self.blocked.iter().find(|b| b.0 == stream).map(|b| b.2))
            .or(self.unblocked.iter().chain(&self.polled).find(|u| u.0 == stream).map(|u| u.1))
            .unwrap_or(self.table.inserted());
        let pre =
            prefix::parse(block, &mut p, self.max_entries, arrived).map_err(Error::section)?;
        if pre.ric > self.table.inserted() {
            if !self.blocked.iter().any(|b| b.0 == stream) {
                // §2.1.2: "If a decoder encounters more blocked streams than it promised to
                // support, it MUST treat this as a connection error of type
                // QPACK_DECOMPRESSION_FAILED."
                if self.blocked.len() >= self.max_blocked {
                    return Err(Error::section(Cause::TooManyBlockedStreams));
                }
                self.blocked.push((stream, pre.ric, arrived));
            }
            return Ok(Section::Blocked);
        }
        self.forget(stream);
        self.earn(block.len());
        let mut max_ref = None;
        while p < block.len() {
            self.line(block, &mut p, pre, &mut max_ref, out).map_err(Error::section)?;
        }
        if pre.ric > 0 {
            // §4.5.1.1: the encoder declares the Required Insert Count the section needs, one
            // more than the largest absolute index it references; a larger one is an error.
            if max_ref.map(|m: u64| m + 1) != Some(pre.ric) {
                return Err(Error::section(Cause::RequiredInsertCountTooLarge));
            }
            // §4.4.1: "After processing an encoded field section whose declared Required
            // Insert Count is not zero, the decoder emits a Section Acknowledgment."
            DecoderInstruction::SectionAck(stream).encode(&mut self.out);
            self.known_received = self.known_received.max(pre.ric);
        }
        Ok(Section::Decoded)
    }

    /// One field line representation (§4.5.2-§4.5.6).
    fn line(
        &mut self,
        block: &[u8],
        p: &mut usize,
        pre: prefix::Prefix,
        max_ref: &mut Option<u64>,
        out: &mut FieldList,
    ) -> Result<(), Cause> {
        let b = block[*p];
        let int = |p: &mut usize, n| {
            integer::decode(block, p, n).map_err(|e| match e {
                IntError::Truncated => Cause::Truncated,
                IntError::Overflow => Cause::IntegerOverflow,
            })
        };
        if b & 0x80 != 0 {
            // §4.5.2 Indexed Field Line: 1 T Index(6+).
            let index = int(p, 6)?;
            if b & 0x40 != 0 {
                let i = static_index(index)?;
                let (n, v) = STATIC[i];
                push_entry(out, n, v, HPACK_NAME[i], [0, 0]);
            } else {
                let abs = self.relative_to_base(index, pre)?;
                self.push_dynamic(abs, pre, max_ref, out)?;
            }
        } else if b & 0x40 != 0 {
            // §4.5.4 Literal Field Line with Name Reference: 0 1 N T Index(4+), value.
            let index = int(p, 4)?;
            let never = b & 0x20 != 0;
            if b & 0x10 != 0 {
                let i = static_index(index)?;
                self.literal_value(block, p, Name::Static(i), never, out)?;
            } else {
                let abs = self.relative_to_base(index, pre)?;
                self.literal_value(block, p, self.name_ref(abs, pre, max_ref)?, never, out)?;
            }
        } else if b & 0x20 != 0 {
            // §4.5.6 Literal Field Line with Literal Name: 0 0 1 N H NameLen(3+), name, value.
            let never = b & 0x10 != 0;
            let base = out.used;
            let limit = out.room();
            let name = literal::read(block, p, 3, out, base, limit)?;
            let (known, err) = if name.stored {
                let n = &out.arena[base..base + name.len];
                let err =
                    if name.class & NAME_BAD != 0 || n.is_empty() { check_name(n) } else { None };
                (name_id(n), err)
            } else {
                (0, None)
            };
            let name = Name::Literal { len: name.len, stored: name.stored, known, err };
            self.literal_value(block, p, name, never, out)?;
        } else if b & 0x10 != 0 {
            // §4.5.3 Indexed Field Line with Post-Base Index: 0 0 0 1 Index(4+).
            let index = int(p, 4)?;
            let abs = pre.base.checked_add(index).ok_or(Cause::DynamicIndex)?;
            self.push_dynamic(abs, pre, max_ref, out)?;
        } else {
            // §4.5.5 Literal Field Line with Post-Base Name Reference: 0 0 0 0 N Index(3+).
            let never = b & 0x08 != 0;
            let index = int(p, 3)?;
            let abs = pre.base.checked_add(index).ok_or(Cause::DynamicIndex)?;
            self.literal_value(block, p, self.name_ref(abs, pre, max_ref)?, never, out)?;
        }
        Ok(())
    }

    /// §4.5.2: "absolute index = Base - 1 - relative index" (a relative index at or past the
    /// Base names no entry).
    fn relative_to_base(&self, index: u64, pre: prefix::Prefix) -> Result<u64, Cause> {
        if index >= pre.base {
            return Err(Cause::DynamicIndex);
        }
        Ok(pre.base - 1 - index)
    }

    /// The live entry `abs`, which must be below the section's Required Insert Count
    /// (§2.2.3: "If the decoder encounters a reference ... to a dynamic table entry that has
    /// already been evicted or that has an absolute index greater than or equal to the
    /// declared Required Insert Count ..., it MUST treat this as a connection error of type
    /// QPACK_DECOMPRESSION_FAILED").
    fn entry(
        &self,
        abs: u64,
        pre: prefix::Prefix,
        max_ref: &mut Option<u64>,
    ) -> Result<crate::field_codec::table::Entry<[u8; 2]>, Cause> {
        if abs >= pre.ric {
            return Err(Cause::DynamicIndex);
        }
        let e = *self.table.by_id(abs).ok_or(Cause::DynamicIndex)?;
        *max_ref = Some(max_ref.map_or(abs, |m| m.max(abs)));
        Ok(e)
    }

    fn push_dynamic(
        &self,
        abs: u64,
        pre: prefix::Prefix,
        max_ref: &mut Option<u64>,
        out: &mut FieldList,
    ) -> Result<(), Cause> {
        let e = self.entry(abs, pre, max_ref)?;
        push_entry(out, self.table.name(&e), self.table.value(&e), e.known, e.extra);
        Ok(())
    }

    fn name_ref(
        &self,
        abs: u64,
        pre: prefix::Prefix,
        max_ref: &mut Option<u64>,
    ) -> Result<Name, Cause> {
        let e = self.entry(abs, pre, max_ref)?;
        Ok(Name::Dynamic(abs, e.known, FieldError::from_code(e.extra[0])))
    }

    /// Reads a literal value (H, 7-bit length) after a name and stores the field.
    fn literal_value(
        &self,
        block: &[u8],
        p: &mut usize,
        name: Name,
        never: bool,
        out: &mut FieldList,
    ) -> Result<(), Cause> {
        let base = out.used;
        let room = out.room();
        let (name_len, name_stored, known, name_err) = match name {
            Name::Static(i) => {
                let n = STATIC[i].0;
                let stored = n.len() <= room;
                if stored {
                    out.ensure(base + n.len());
                    out.arena[base..base + n.len()].copy_from_slice(n);
                }
                (n.len(), stored, HPACK_NAME[i], None)
            }
            Name::Dynamic(abs, known, err) => {
                let e = self.table.by_id(abs).ok_or(Cause::DynamicIndex)?;
                let n = self.table.name(e);
                let stored = n.len() <= room;
                if stored {
                    out.ensure(base + n.len());
                    out.arena[base..base + n.len()].copy_from_slice(n);
                }
                (n.len(), stored, known, err)
            }
            Name::Literal { len, stored, known, err } => (len, stored, known, err),
        };
        let vbase = base + name_len;
        let v = literal::read(block, p, 7, out, vbase, room.saturating_sub(name_len))?;
        let stored = name_stored && v.stored;
        let size = name_len + v.len;
        if stored && out.fits(size) {
            let value_err = check_value(&out.arena[vbase..vbase + v.len], v.class);
            if let Some(e) = name_err.or(value_err) {
                out.flag(e);
            }
            out.used = vbase + v.len;
            out.push(
                Span { off: base, len: name_len },
                Span { off: vbase, len: v.len },
                size,
                known,
                never,
                false,
            );
        } else {
            out.too_large = true;
        }
        Ok(())
    }
}

/// A literal line's name.
enum Name {
    Static(usize),
    Dynamic(u64, u8, Option<FieldError>),
    Literal { len: usize, stored: bool, known: u8, err: Option<FieldError> },
}

/// §3.1: "... an invalid static table index ... MUST treat ... as a connection error of
/// type QPACK_DECOMPRESSION_FAILED."
fn static_index(index: u64) -> Result<usize, Cause> {
    usize::try_from(index).ok().filter(|&i| i < STATIC_LEN).ok_or(Cause::StaticIndex)
}

/// Stores a whole `(name, value)` (a static or dynamic entry) with its verdict codes.
fn push_entry(out: &mut FieldList, name: &[u8], value: &[u8], known: u8, codes: [u8; 2]) {
    let size = name.len() + value.len();
    if !out.fits(size) {
        out.too_large = true;
        return;
    }
    let at = out.used;
    out.ensure(at + size);
    out.arena[at..at + name.len()].copy_from_slice(name);
    out.arena[at + name.len()..at + size].copy_from_slice(value);
    out.used = at + size;
    out.push(
        Span { off: at, len: name.len() },
        Span { off: at + name.len(), len: value.len() },
        size,
        known,
        false,
        false,
    );
    if let Some(e) = FieldError::from_code(codes[0]).or(FieldError::from_code(codes[1])) {
        out.flag(e);
    }
}

/// The most churn credit the decoder holds (see the module's budgets).
fn churn_cap(max_capacity: u64) -> u64 {
    max_capacity.saturating_mul(2).saturating_add(CHURN_BURST)
}
