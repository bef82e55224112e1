//! A received header section: the decoded field list with its pseudo-headers picked out.

use crate::http2::hpack::{Field, FieldList};

/// "No such field" in an [`Info`] index.
pub(crate) const NONE: u8 = u8::MAX;

/// What validation learned about a field list: where its pseudo-headers are (they come first,
/// RFC 9113 §8.3, so their indices are small) and the numbers it carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Info {
    pub method: u8,
    pub scheme: u8,
    pub authority: u8,
    pub path: u8,
    pub protocol: u8,
    /// `:status`, 0 when absent.
    pub status: u16,
    pub content_length: Option<u64>,
    /// How many pseudo-headers lead the list.
    pub pseudo: u8,
}

impl Info {
    pub const EMPTY: Info = Info {
        method: NONE,
        scheme: NONE,
        authority: NONE,
        path: NONE,
        protocol: NONE,
        status: 0,
        content_length: None,
        pseudo: 0,
    };
}

/// The header section of an [`Event::Headers`](super::Event::Headers): request pseudo-headers,
/// the response status, content-length, and the regular fields.
///
/// Owned by the connection and reused for every section (no allocation per request once its
/// buffers have grown).
#[derive(Debug)]
pub struct FieldSection {
    pub(crate) list: FieldList,
    pub(crate) info: Info,
}

impl FieldSection {
    pub(crate) fn new(max_list_size: usize) -> FieldSection {
        FieldSection { list: FieldList::new(max_list_size), info: Info::EMPTY }
    }

    /// The list, for a new section to be decoded into. The last section's pseudo-header
    /// positions are forgotten first: they would not describe the new list (one that blocks,
    /// fails or is refused is never checked), and must never index into it.
    pub(crate) fn decode_into(&mut self) -> &mut FieldList {
        self.info = Info::EMPTY;
        &mut self.list
    }

    fn at(&self, i: u8) -> Option<&[u8]> {
        if i == NONE {
            return None;
        }
        self.list.get(usize::from(i)).map(|f| f.value)
    }

    /// `:method` (requests).
    pub fn method(&self) -> Option<&[u8]> {
        self.at(self.info.method)
    }

    /// `:scheme` (requests other than plain CONNECT).
    pub fn scheme(&self) -> Option<&[u8]> {
        self.at(self.info.scheme)
    }

    /// `:authority` (requests, when sent).
    pub fn authority(&self) -> Option<&[u8]> {
        self.at(self.info.authority)
    }

    /// `:path` (requests other than plain CONNECT).
    pub fn path(&self) -> Option<&[u8]> {
        self.at(self.info.path)
    }

    /// `:protocol` (extended CONNECT, RFC 8441).
    pub fn protocol(&self) -> Option<&[u8]> {
        self.at(self.info.protocol)
    }

    /// `:status` (responses).
    pub fn status(&self) -> Option<u16> {
        (self.info.status != 0).then_some(self.info.status)
    }

    /// The content-length, when the section has one (checked against the DATA received).
    pub fn content_length(&self) -> Option<u64> {
        self.info.content_length
    }

    /// The regular fields (pseudo-headers excluded), in order.
    pub fn fields(&self) -> impl Iterator<Item = Field<'_>> {
        self.list.iter_from(usize::from(self.info.pseudo))
    }

    /// Regular field `index` (pseudo-headers excluded).
    pub fn field(&self, index: usize) -> Option<Field<'_>> {
        self.list.get(usize::from(self.info.pseudo) + index)
    }

    /// How many regular fields there are.
    pub fn len(&self) -> usize {
        self.list.len() - usize::from(self.info.pseudo)
    }

    /// Whether there are no regular fields.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The whole decoded list, pseudo-headers included.
    pub fn list(&self) -> &FieldList {
        &self.list
    }
}
