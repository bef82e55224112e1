//! [`FieldList`]: the reusable output of [`Decoder::decode`](super::Decoder::decode).

use super::FieldError;
use super::static_table::{STATIC, StaticName};

/// Reusable storage for one decoded field list: a byte arena plus one entry per field. It
/// grows to the largest block seen (bounded by the list budget), then allocates no more.
///
/// The budget is our SETTINGS_MAX_HEADER_LIST_SIZE (RFC 9113 §6.5.2: "the uncompressed size
/// of field lines, including the length of the name and value in octets plus an overhead of
/// 32 octets for each field line"). A block whose list exceeds it is still decoded to the end
/// (the dynamic table must stay in step with the peer's), but from the first field that does
/// not fit no field is stored or checked: [`too_large`](FieldList::too_large) says so, and
/// the caller refuses the stream (431, or RST_STREAM REFUSED_STREAM).
///
/// # Examples
///
/// ```
/// use peregrine::http2::hpack::{Decoder, FieldList, StaticName};
/// let mut decoder = Decoder::new(4096);
/// let mut fields = FieldList::new(16 * 1024);
/// // :method GET, :path /, :scheme https (RFC 7541 C.3.1 without :authority)
/// decoder.decode(&[0x82, 0x84, 0x87], &mut fields)?;
/// let f: Vec<_> = fields.iter().collect();
/// assert_eq!((f[1].name, f[1].value), (&b":path"[..], &b"/"[..]));
/// assert_eq!(f[1].known, Some(StaticName::PATH));
/// assert!(fields.malformed().is_none() && !fields.too_large());
/// # Ok::<(), peregrine::http2::hpack::DecodeError>(())
/// ```
pub struct FieldList {
    /// Field bytes; `arena.len()` is the zero-filled room, `used` what the list holds.
    pub(crate) arena: Vec<u8>,
    pub(crate) used: usize,
    fields: Vec<StoredField>,
    max_list_size: usize,
    pub(crate) list_size: usize,
    pub(crate) too_large: bool,
    pub(crate) malformed: Option<FieldError>,
}

/// One stored field: its name and value as spans of the arena or static-table entries.
#[derive(Clone, Copy)]
struct StoredField {
    name: Span,
    value: Span,
    known: u8,
    never_indexed: bool,
    /// Inserted into the dynamic table (RFC 7541 §6.2.1), for [`Decoder::replay`].
    ///
    /// [`Decoder::replay`]: super::Decoder::replay
    indexed: bool,
}

/// Bytes of a field: the arena's `[off, off + len)`, or (`STATIC_SPAN` in `len`) the name or
/// value of static entry `off` (0-based).
#[derive(Clone, Copy)]
pub(crate) struct Span {
    pub off: usize,
    pub len: usize,
}

const STATIC_SPAN: usize = usize::MAX;

impl Span {
    /// Static entry `index` (1..=61)'s name or value.
    #[inline]
    pub fn static_entry(index: usize) -> Span {
        Span { off: index - 1, len: STATIC_SPAN }
    }
}

/// One decoded field, borrowed from a [`FieldList`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Field<'a> {
    /// The name (lowercase unless [`FieldList::malformed`] says otherwise).
    pub name: &'a [u8],
    /// The value.
    pub value: &'a [u8],
    /// The static-table name equal to `name`, however the name arrived (static index,
    /// dynamic entry, or literal), so callers dispatch on it without comparing strings.
    /// `None` for names not in the static table (e.g. `te`, `connection`, `x-*`).
    pub known: Option<StaticName>,
    /// Sent as never indexed (RFC 7541 §6.2.3): an intermediary must forward it so.
    pub never_indexed: bool,
}

impl FieldList {
    /// An empty list whose fields may total `max_list_size` (our
    /// SETTINGS_MAX_HEADER_LIST_SIZE; name + value + 32 per field). Allocates nothing yet.
    pub fn new(max_list_size: usize) -> FieldList {
        FieldList {
            arena: Vec::new(),
            used: 0,
            fields: Vec::new(),
            max_list_size,
            list_size: 0,
            too_large: false,
            malformed: None,
        }
    }

    /// The fields, in block order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Field<'_>> + '_ {
        self.fields.iter().map(|s| self.field(s))
    }

    /// The fields from `start` on, in block order (skipping the first ones without resolving
    /// them, as `iter().skip(start)` would).
    pub(crate) fn iter_from(&self, start: usize) -> impl Iterator<Item = Field<'_>> + '_ {
        self.fields.get(start..).unwrap_or_default().iter().map(|s| self.field(s))
    }

    /// The field at `index` in block order.
    pub fn get(&self, index: usize) -> Option<Field<'_>> {
        self.fields.get(index).map(|s| self.field(s))
    }

    fn field(&self, s: &StoredField) -> Field<'_> {
        Field {
            name: self.resolve(s.name, true),
            value: self.resolve(s.value, false),
            known: StaticName::from_id(s.known),
            never_indexed: s.never_indexed,
        }
    }

    /// Number of stored fields.
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// Whether no field is stored.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The first RFC 9113 §8.2.1 violation among the stored fields, if any: the message is
    /// malformed, a stream error of type PROTOCOL_ERROR (RFC 9113 §8.1.1). The decoder still
    /// decoded the whole block, so the connection goes on.
    pub fn malformed(&self) -> Option<FieldError> {
        self.malformed
    }

    /// Whether the list passed the budget given to [`FieldList::new`]: the fields from the
    /// first one that did not fit on are missing (the caller answers 431 or refuses the
    /// stream; RFC 9113 §6.5.2, §8.2.2 wording: "MAY ... treat as a stream error").
    pub fn too_large(&self) -> bool {
        self.too_large
    }

    /// The list budget (name + value + 32 per field).
    pub fn max_list_size(&self) -> usize {
        self.max_list_size
    }

    /// Bytes the arena holds room for (how much memory decoding has needed; tests use it to
    /// check the budget bounds memory).
    pub fn arena_capacity(&self) -> usize {
        self.arena.capacity()
    }

    /// The fields the block inserted into the dynamic table, in order: name, value and
    /// known-name id, as the decoder inserted them.
    pub(crate) fn indexed(&self) -> impl Iterator<Item = (&[u8], &[u8], u8)> + '_ {
        self.fields
            .iter()
            .filter(|s| s.indexed)
            .map(|s| (self.resolve(s.name, true), self.resolve(s.value, false), s.known))
    }

    #[inline]
    fn resolve(&self, span: Span, name: bool) -> &[u8] {
        if span.len == STATIC_SPAN {
            let (n, v) = STATIC[span.off];
            if name { n } else { v }
        } else {
            &self.arena[span.off..span.off + span.len]
        }
    }

    /// Empties the list for the next block, keeping its memory.
    #[inline]
    pub(crate) fn clear(&mut self) {
        self.fields.clear();
        self.used = 0;
        self.list_size = 0;
        self.too_large = false;
        self.malformed = None;
    }

    /// Room the budget leaves for the next field's name and value (0 once too large).
    #[inline]
    pub(crate) fn room(&self) -> usize {
        if self.too_large { 0 } else { self.max_list_size.saturating_sub(self.list_size + 32) }
    }

    /// Whether a field of `size` (name + value) fits the budget with its 32 octets of
    /// overhead. Not `size <= room()`: once the overhead alone does not fit, the room is 0
    /// and an empty field would still pass.
    #[inline]
    pub(crate) fn fits(&self, size: usize) -> bool {
        !self.too_large && self.list_size + 32 + size <= self.max_list_size
    }

    /// Makes `arena[..n]` writable.
    #[inline]
    pub(crate) fn ensure(&mut self, n: usize) {
        if self.arena.len() < n {
            self.grow(n);
        }
    }

    #[cold]
    fn grow(&mut self, n: usize) {
        self.arena.resize(n, 0);
    }

    /// Stores a field whose `size` (name + value) passed the budget check.
    #[inline]
    pub(crate) fn push(
        &mut self,
        name: Span,
        value: Span,
        size: usize,
        known: u8,
        never_indexed: bool,
        indexed: bool,
    ) {
        self.list_size += size + 32;
        self.fields.push(StoredField { name, value, known, never_indexed, indexed });
    }

    /// Records a §8.2.1 violation (the first one wins).
    #[inline]
    pub(crate) fn flag(&mut self, e: FieldError) {
        if self.malformed.is_none() {
            self.malformed = Some(e);
        }
    }
}

impl std::fmt::Debug for FieldList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl std::fmt::Debug for Field<'_> {
    /// `"name": "value"` (lossy UTF-8).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?}: {:?}",
            String::from_utf8_lossy(self.name),
            String::from_utf8_lossy(self.value)
        )
    }
}
