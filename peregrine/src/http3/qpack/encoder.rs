//! [`Encoder`]: field sections and our encoder stream out, the peer's decoder stream in (RFC
//! 9204 §2.1, §4.3, §4.4, §4.5).
//!
//! The policy: a field the static table holds whole is indexed there; one the dynamic table
//! holds whole is indexed there when that reference may be used (acknowledged, or this
//! stream may block); otherwise a field that is not sensitive and fits is inserted (with a
//! name reference when the name is known) and referenced post-base, when the insert needs no
//! eviction of an entry still referenced; otherwise it is a literal, with a name reference
//! when one may be used. Lookups in the dynamic table follow hash chains (by name, and by name
//! and value) from the newest entry, as HPACK's encoder does: a walk of the whole table per
//! field was ~1,300 instructions per HTTP/3 response (bench/callgrind_h3.sh).

use super::instruction::{self, DecoderInstruction};
use super::static_table;
use super::{Cause, Error, integer, literal, prefix};
use crate::field_codec::field_hash::{Chain, Chains, Links, hash};
use crate::field_codec::table::Table;
use crate::http3::stream_id::StreamId;

/// The most field sections awaiting a Section Acknowledgment the encoder keeps; past it, it
/// encodes without the dynamic table (see the module's budgets).
pub const MAX_OUTSTANDING: usize = 1024;

/// A field section sent with dynamic references, awaiting acknowledgment.
#[derive(Clone, Copy, Debug)]
struct Outstanding {
    stream: StreamId,
    /// Its Required Insert Count.
    ric: u64,
    /// The smallest absolute index it references: no entry at or above it may be evicted
    /// until the section is acknowledged or cancelled (§2.1.1).
    min_ref: u64,
}

/// The QPACK encoder of one connection's outbound direction.
pub struct Encoder {
    table: Table<Links>,
    /// The table's index by name and by name and value.
    chains: Chains,
    /// The most capacity we are willing to use.
    our_max: u64,
    /// §4.5.1.1's MaxEntries, from the peer's SETTINGS_QPACK_MAX_TABLE_CAPACITY.
    max_entries: u64,
    /// The peer's SETTINGS_QPACK_BLOCKED_STREAMS.
    max_blocked: usize,
    /// The Insert Count the decoder has acknowledged (§2.1.4).
    known_received: u64,
    outstanding: Vec<Outstanding>,
    /// Inserts that refer to an older entry (by name or Duplicate): `(insert id, referenced
    /// id)`; the referenced entry may not be evicted before the insert is acknowledged.
    pins: Vec<(u64, u64)>,
    /// Our encoder stream bytes not yet polled.
    out: Vec<u8>,
    /// A decoder stream instruction cut short.
    pending: Vec<u8>,
    lines: Vec<u8>,
    /// Scratch for [`Encoder::blocking_streams`].
    streams: Vec<u64>,
    /// The last section, kept to be sent again (see [`LastSection`]).
    last: LastSection,
    /// Sections sent as copies of the last (tests look).
    #[cfg(test)]
    pub(super) copies: u64,
}

/// The last field section encoded and its fields, sent again as it is when the next section's
/// fields are identical and the table is as it was: a connection serving one resource over and
/// over (a load generator, a poller) encodes each distinct head about once a second (when Date
/// changes), as HTTP/2's does (`server::h2`'s head cache). Kept only for a section that
/// inserted nothing and references only acknowledged entries: with no insert since, no entry it
/// references has been evicted (evictions only make room for inserts, §3.2.2) and its Base and
/// Required Insert Count mean the same; the peer has every entry, so the stream cannot block.
/// A fresh encoding could differ only by an insert that has become possible meanwhile, which
/// the next different section makes.
#[derive(Clone, Debug, Default)]
struct LastSection {
    valid: bool,
    /// The Insert Count, Known Received Count and capacity it was encoded at.
    at: (u64, u64, usize),
    /// Its Required Insert Count and smallest reference (as in [`Outstanding`]).
    ric: u64,
    min_ref: u64,
    /// Field names and values, one after the other.
    bytes: Vec<u8>,
    /// Where each field's name and value end in `bytes`, and its sensitive flag.
    ends: Vec<(u32, u32, bool)>,
    /// The encoded section (prefix and lines).
    section: Vec<u8>,
}

impl LastSection {
    /// Whether `fields` are the kept section's, in order.
    fn same<'f>(&self, fields: impl Iterator<Item = (&'f [u8], &'f [u8], bool)>) -> bool {
        let mut at = 0;
        let mut ends = self.ends.iter();
        for (name, value, sensitive) in fields {
            let Some(&(n, v, s)) = ends.next() else { return false };
            let (n, v) = (n as usize, v as usize);
            if s != sensitive || self.bytes[at..n] != *name || self.bytes[n..v] != *value {
                return false;
            }
            at = v;
        }
        ends.next().is_none()
    }

    /// Keeps `fields` and their `section`; forgets them when a field is too long to index.
    fn keep<'f>(
        &mut self,
        fields: impl Iterator<Item = (&'f [u8], &'f [u8], bool)>,
        section: &[u8],
    ) {
        self.bytes.clear();
        self.ends.clear();
        self.valid = false;
        for (name, value, sensitive) in fields {
            self.bytes.extend_from_slice(name);
            let n = self.bytes.len();
            self.bytes.extend_from_slice(value);
            let (Ok(n), Ok(v)) = (u32::try_from(n), u32::try_from(self.bytes.len())) else {
                return;
            };
            self.ends.push((n, v, sensitive));
        }
        self.section.clear();
        self.section.extend_from_slice(section);
        self.valid = true;
    }
}

impl Encoder {
    /// An encoder that will keep at most `max_capacity` octets of table for the peer. Until
    /// [`Encoder::apply_peer_settings`], it uses the static table only (§3.2.3: the peer's
    /// table capacity starts at 0).
    pub fn new(max_capacity: u64) -> Encoder {
        Encoder {
            table: Table::new(0),
            chains: Chains::new(),
            our_max: max_capacity,
            max_entries: 0,
            max_blocked: 0,
            known_received: 0,
            outstanding: Vec::new(),
            pins: Vec::new(),
            out: Vec::new(),
            pending: Vec::new(),
            lines: Vec::new(),
            streams: Vec::new(),
            last: LastSection::default(),
            #[cfg(test)]
            copies: 0,
        }
    }

    /// The peer's SETTINGS_QPACK_MAX_TABLE_CAPACITY and SETTINGS_QPACK_BLOCKED_STREAMS (once,
    /// from its SETTINGS frame). Sets the table capacity to the smaller of its maximum and
    /// ours, with a Set Dynamic Table Capacity instruction when that is not 0 (§4.3.1).
    pub fn apply_peer_settings(&mut self, max_table_capacity: u64, blocked_streams: u64) {
        self.max_entries = prefix::max_entries(max_table_capacity);
        self.max_blocked = usize::try_from(blocked_streams).unwrap_or(usize::MAX);
        let capacity = max_table_capacity.min(self.our_max).min(isize::MAX as u64 / 8);
        if capacity != self.table.max_size() as u64 && self.table.len() == 0 {
            self.table.set_max_size(capacity as usize);
            instruction::set_capacity(&mut self.out, capacity);
        }
    }

    /// The Insert Count the decoder has acknowledged.
    pub fn known_received_count(&self) -> u64 {
        self.known_received
    }

    /// The table's Insert Count.
    pub fn insert_count(&self) -> u64 {
        self.table.inserted()
    }

    /// Entries in the table.
    pub fn table_len(&self) -> usize {
        self.table.len()
    }

    /// Moves our encoder stream's bytes into `dst`. They must be written before (or with)
    /// the field sections encoded since; the peer blocks on sections until they arrive.
    pub fn poll_encoder_stream(&mut self, dst: &mut Vec<u8>) {
        dst.extend_from_slice(&self.out);
        self.out.clear();
    }

    /// Streams with a section that references entries not yet acknowledged: those the peer
    /// may be blocked on (§2.1.2). Sorted and counted in a buffer kept for it: no allocation
    /// per section once warm.
    fn blocking_streams(&mut self) -> usize {
        let mut streams = std::mem::take(&mut self.streams);
        streams.clear();
        let known = self.known_received;
        streams.extend(self.outstanding.iter().filter(|o| o.ric > known).map(|o| o.stream.get()));
        streams.sort_unstable();
        streams.dedup();
        let n = streams.len();
        self.streams = streams;
        n
    }

    /// The oldest entry that may not be evicted: every entry at or above it is referenced by
    /// a section or an insert not yet acknowledged (§2.1.1), or is itself not yet
    /// acknowledged. The last keeps the inserts the decoder may lack within what the table
    /// holds, at most MaxEntries, so every Required Insert Count stays within the window
    /// §4.5.1.1 decodes (found by the `qpack_roundtrip` fuzz target: entries of cancelled
    /// streams evicted before the decoder had them let a later section run more than
    /// MaxEntries ahead of the decoder's Insert Count).
    fn eviction_floor(&self) -> u64 {
        let sections = self.outstanding.iter().map(|o| o.min_ref);
        let pins = self.pins.iter().map(|&(_, r)| r);
        sections.chain(pins).fold(self.known_received, u64::min)
    }

    /// Whether an entry of `size` octets can be inserted: it fits, and what must be evicted
    /// for it is below the eviction floor and below `keep` (§2.1.1: "the encoder MUST NOT
    /// insert that entry" when the entries to evict are not evictable).
    fn can_insert(&self, size: usize, keep: u64) -> bool {
        let max = self.table.max_size();
        if size > max {
            return false;
        }
        let floor = self.eviction_floor().min(keep);
        let mut free = max - self.table.size();
        let mut id = self.table.oldest();
        while free < size {
            if id >= floor {
                return false;
            }
            let Some(e) = self.table.by_id(id) else { return false };
            free += e.size();
            id += 1;
        }
        true
    }

    /// The newest entry below `usable_to` with this name and value, and the newest with this
    /// name.
    fn find(&self, name: &[u8], value: &[u8], usable_to: u64) -> (Option<u64>, Option<u64>) {
        let name_hash = hash(0, name);
        let nv_hash = hash(name_hash, value);
        let table = &self.table;
        let full = self.chains.find(table, Chain::NameValue(nv_hash), |id, e| {
            id < usable_to && table.name(e) == name && table.value(e) == value
        });
        let named = self
            .chains
            .find(table, Chain::Name(name_hash), |id, e| id < usable_to && table.name(e) == name);
        (full, named.or(full))
    }

    /// Encodes one field section for `stream` into `dst` (appended): the prefix, then a line
    /// per field. `fields` yields `(name, value, sensitive)`; a sensitive field is never
    /// inserted and carries the N bit (§4.5.4: "never indexed" by intermediaries).
    /// Instructions it needs go to the encoder stream ([`Encoder::poll_encoder_stream`]).
    ///
    /// A section identical to the last one is sent as a copy of its bytes when it inserted
    /// nothing, referenced only acknowledged entries, and the table has not changed since (a
    /// connection serving one resource over and over encodes each distinct head about once a
    /// second); `fields` is walked once more to compare (hence `Clone`).
    pub fn encode<'f, I>(&mut self, stream: StreamId, fields: I, dst: &mut Vec<u8>)
    where
        I: IntoIterator<Item = (&'f [u8], &'f [u8], bool)>,
        I::IntoIter: Clone,
    {
        let fields = fields.into_iter();
        let at = (self.table.inserted(), self.known_received, self.table.max_size());
        if self.last.valid && self.last.at == at && self.last.same(fields.clone()) {
            // A section with dynamic references awaits its acknowledgment as any other
            // (§4.4.1); past the budget, encode without the table.
            if self.last.ric == 0 || self.outstanding.len() < MAX_OUTSTANDING {
                dst.extend_from_slice(&self.last.section);
                #[cfg(test)]
                {
                    self.copies += 1;
                }
                if self.last.ric > 0 {
                    let (ric, min_ref) = (self.last.ric, self.last.min_ref);
                    self.outstanding.push(Outstanding { stream, ric, min_ref });
                }
                return;
            }
        }
        let start = dst.len();
        let base = self.table.inserted();
        let (ric, min_ref) = self.encode_lines(stream, fields.clone(), dst);
        // Kept when it inserted nothing and its references are acknowledged.
        self.last.valid = false;
        if self.table.inserted() == base && ric <= self.known_received {
            self.last.keep(fields, &dst[start..]);
            self.last.at = (base, self.known_received, self.table.max_size());
            (self.last.ric, self.last.min_ref) = (ric, min_ref);
        }
    }

    /// [`Encoder::encode`] without the last section's copy, for fields not walked twice.
    pub fn encode_fresh<'f>(
        &mut self,
        stream: StreamId,
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8], bool)>,
        dst: &mut Vec<u8>,
    ) {
        self.encode_lines(stream, fields, dst);
    }

    /// Encodes the section (see [`Encoder::encode`]); returns its Required Insert Count and
    /// its smallest reference (as in [`Outstanding`]).
    fn encode_lines<'f>(
        &mut self,
        stream: StreamId,
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8], bool)>,
        dst: &mut Vec<u8>,
    ) -> (u64, u64) {
        let base = self.table.inserted();
        let dynamic = self.table.max_size() > 0 && self.outstanding.len() < MAX_OUTSTANDING;
        // §2.1.2: the stream may reference unacknowledged entries only if it already blocks,
        // or the peer allows one more blocked stream.
        let may_block = dynamic
            && (self.outstanding.iter().any(|o| o.stream == stream && o.ric > self.known_received)
                || self.blocking_streams() < self.max_blocked);
        let mut ric = 0u64;
        let mut min_ref = u64::MAX;
        let mut lines = std::mem::take(&mut self.lines);
        lines.clear();
        for (name, value, sensitive) in fields {
            let st = static_table::find(name, 0, value);
            if let Some(i) = st.full {
                // §4.5.2 Indexed Field Line, T=1.
                integer::encode(&mut lines, 0xc0, 6, i as u64);
                continue;
            }
            let usable_to = if may_block { self.table.inserted() } else { self.known_received };
            let (full, dyn_name) =
                if dynamic { self.find(name, value, usable_to) } else { (None, None) };
            if let Some(id) = full.filter(|_| !sensitive) {
                note(&mut ric, &mut min_ref, id);
                indexed(&mut lines, id, base);
                continue;
            }
            let size = name.len() + value.len() + 32;
            if dynamic && may_block && !sensitive && size <= self.table.max_size() * 3 / 4 {
                if let Some(id) = self.insert(name, value, st.name, dyn_name, size, min_ref) {
                    note(&mut ric, &mut min_ref, id);
                    indexed(&mut lines, id, base);
                    continue;
                }
            }
            let n = if sensitive { 0x20 } else { 0 };
            if let Some(i) = st.name {
                // §4.5.4 Literal Field Line with Name Reference, T=1.
                integer::encode(&mut lines, 0x50 | n, 4, i as u64);
            } else if let Some(id) = dyn_name.filter(|&id| self.table.by_id(id).is_some()) {
                note(&mut ric, &mut min_ref, id);
                if id < base {
                    integer::encode(&mut lines, 0x40 | n, 4, base - 1 - id);
                } else {
                    // §4.5.5 Literal Field Line with Post-Base Name Reference.
                    integer::encode(&mut lines, if sensitive { 0x08 } else { 0 }, 3, id - base);
                }
            } else {
                // §4.5.6 Literal Field Line with Literal Name.
                literal::encode(&mut lines, 0x20 | (n >> 1), 3, name);
            }
            literal::encode(&mut lines, 0, 7, value);
        }
        prefix::write(dst, ric, base, self.max_entries);
        dst.extend_from_slice(&lines);
        self.lines = lines;
        if ric > 0 {
            self.outstanding.push(Outstanding { stream, ric, min_ref });
        }
        (ric, min_ref)
    }

    /// Inserts `(name, value)` when the table can take it; returns its absolute index.
    fn insert(
        &mut self,
        name: &[u8],
        value: &[u8],
        static_name: Option<usize>,
        dyn_name: Option<u64>,
        size: usize,
        section_min_ref: u64,
    ) -> Option<u64> {
        // The entries this section already references are not yet in `outstanding`: they
        // must survive too. A dynamic name reference pins its entry, so it must survive this
        // insert's evictions; else the name goes literally.
        let dyn_name = dyn_name.filter(|_| static_name.is_none());
        let keep = dyn_name.filter(|&id| self.can_insert(size, id.min(section_min_ref)));
        if !self.can_insert(size, section_min_ref) {
            return None;
        }
        let id = self.table.inserted();
        if let Some(i) = static_name {
            instruction::insert_with_name_ref(&mut self.out, true, i as u64, value);
        } else if let Some(r) = keep {
            instruction::insert_with_name_ref(&mut self.out, false, id - 1 - r, value);
            self.pins.push((id, r));
        } else {
            instruction::insert_with_literal_name(&mut self.out, name, value);
        }
        let name_hash = hash(0, name);
        let nv_hash = hash(name_hash, value);
        self.chains.insert(&mut self.table, name, value, 0, name_hash, nv_hash);
        Some(id)
    }

    /// Feeds bytes of the peer's decoder stream (any split) and applies every whole
    /// instruction (§4.4).
    ///
    /// # Errors
    ///
    /// `QPACK_DECODER_STREAM_ERROR` (a connection error): an acknowledgment of a section not
    /// awaiting one (§4.4.1), an Insert Count Increment of 0 or past our inserts (§4.4.3).
    pub fn feed_decoder_stream(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let mut buf = std::mem::take(&mut self.pending);
        buf.extend_from_slice(bytes);
        let mut at = 0;
        let r = loop {
            match DecoderInstruction::parse(&buf[at..]) {
                Ok(Some((i, n))) => {
                    if let Err(e) = self.apply(i) {
                        break Err(e);
                    }
                    at += n;
                }
                Ok(None) => break Ok(()),
                Err(c) => break Err(Error::decoder_stream(c)),
            }
        };
        buf.drain(..at);
        self.pending = buf;
        r
    }

    fn apply(&mut self, i: DecoderInstruction) -> Result<(), Error> {
        match i {
            DecoderInstruction::SectionAck(stream) => {
                // §4.4.1: "If an encoder receives a Section Acknowledgment instruction
                // referring to a stream on which every encoded field section with a non-zero
                // Required Insert Count has already been acknowledged, this MUST be treated as
                // a connection error of type QPACK_DECODER_STREAM_ERROR."
                let at = self.outstanding.iter().position(|o| o.stream == stream);
                let at = at.ok_or(Error::decoder_stream(Cause::UnexpectedAck))?;
                let o = self.outstanding.remove(at);
                self.known_received = self.known_received.max(o.ric);
            }
            DecoderInstruction::StreamCancel(stream) => {
                self.outstanding.retain(|o| o.stream != stream);
            }
            DecoderInstruction::InsertCountIncrement(n) => {
                // §4.4.3: "An encoder that receives an Increment field equal to zero, or one
                // that increases the Known Received Count beyond what the encoder has sent,
                // MUST treat this as a connection error of type QPACK_DECODER_STREAM_ERROR."
                let to = self.known_received.checked_add(n).filter(|_| n > 0);
                let to = to.filter(|&k| k <= self.table.inserted());
                self.known_received =
                    to.ok_or(Error::decoder_stream(Cause::InsertCountIncrement))?;
            }
        }
        let known = self.known_received;
        self.pins.retain(|&(insert, _)| insert >= known);
        Ok(())
    }
}

/// Records a reference to entry `id` in the section's Required Insert Count and smallest
/// reference.
fn note(ric: &mut u64, min_ref: &mut u64, id: u64) {
    *ric = (*ric).max(id + 1);
    *min_ref = (*min_ref).min(id);
}

/// An Indexed Field Line for entry `id`: relative to the Base (§4.5.2) or post-base (§4.5.3).
fn indexed(dst: &mut Vec<u8>, id: u64, base: u64) {
    if id < base {
        integer::encode(dst, 0x80, 6, base - 1 - id);
    } else {
        integer::encode(dst, 0x10, 4, id - base);
    }
}
