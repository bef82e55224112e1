//! HPACK header compression (RFC 7541), both directions, allocation-free once warm.
//!
//! # API
//!
//! - [`Decoder`] (one per connection, inbound): [`Decoder::new`]`(max_table_size)` with our
//!   SETTINGS_HEADER_TABLE_SIZE, [`Decoder::set_max_table_size`] when the peer acknowledged a
//!   new one, [`Decoder::decode`]`(block, &mut FieldList)` per complete header block.
//! - [`FieldList`] (reusable output): [`FieldList::new`]`(max_list_size)` with our
//!   SETTINGS_MAX_HEADER_LIST_SIZE; [`iter`](FieldList::iter) yields [`Field`]s (`name`,
//!   `value`, `known: Option<StaticName>`, `never_indexed`); [`malformed`](FieldList::malformed)
//!   and [`too_large`](FieldList::too_large) report a bad or oversized list.
//! - [`Encoder`] (one per connection, outbound): [`Encoder::new`],
//!   [`Encoder::set_peer_max_table_size`], [`Encoder::encode`]`(fields, &mut Vec<u8>)` for
//!   `(&[u8], &[u8])` pairs, or [`Encoder::block`] for a [`BlockEncoder`] whose
//!   [`status`](BlockEncoder::status),
//!   [`content_length`](BlockEncoder::content_length) and [`known`](BlockEncoder::known)
//!   skip the name lookup for fields whose name the caller knows.
//! - [`StaticName`]: a static-table name as its index, with a constant per name.
//!
//! # Errors and their scope
//!
//! - [`DecodeError`]: the block cannot be decoded and the two tables may now disagree: a
//!   **connection error of type COMPRESSION_ERROR** (RFC 9113 §4.3).
//! - [`FieldError`] (from [`FieldList::malformed`]): a decoded field breaks RFC 9113 §8.2.1:
//!   the message is malformed, a **stream error of type PROTOCOL_ERROR** (§8.1.1); the block
//!   was decoded in full, so the connection goes on.
//! - [`FieldList::too_large`]: the list passed SETTINGS_MAX_HEADER_LIST_SIZE: the caller
//!   refuses the stream (431 or RST_STREAM); the connection goes on.
//!
//! # Examples
//!
//! ```
//! use peregrine::http2::hpack::{Decoder, Encoder, FieldList, StaticName};
//! let mut encoder = Encoder::new();
//! let mut block = Vec::new();
//! let fields: [(&[u8], &[u8]); 3] = [(b":method", b"GET"), (b":path", b"/a"), (b"x-id", b"7")];
//! encoder.encode(fields, &mut block);
//!
//! let mut decoder = Decoder::new(4096);
//! let mut list = FieldList::new(16 * 1024);
//! decoder.decode(&block, &mut list)?;
//! let got: Vec<_> = list.iter().map(|f| (f.name, f.value, f.known)).collect();
//! assert_eq!(got[0], (&b":method"[..], &b"GET"[..], Some(StaticName::METHOD)));
//! assert_eq!(got[2], (&b"x-id"[..], &b"7"[..], None));
//! # Ok::<(), peregrine::http2::hpack::DecodeError>(())
//! ```

mod decoder;
mod encoder;
mod field_list;
pub(in crate::http2) mod integer;
pub(crate) mod static_table;
#[cfg(test)]
mod tests;

pub use decoder::Decoder;
pub use encoder::{BlockEncoder, Encoder};
pub(crate) use field_list::Span;
pub use field_list::{Field, FieldList};
pub use static_table::StaticName;

pub use crate::field_codec::FieldError;
use crate::field_codec::huffman;

/// Why a header block could not be decoded. Every variant is a connection error of type
/// COMPRESSION_ERROR (RFC 9113 §4.3).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DecodeError {
    /// The block ends inside a representation, an integer or a string (RFC 7541 §5, §6).
    Truncated,
    /// An integer above 2^32 - 1, or longer than such an integer needs (RFC 7541 §5.1,
    /// "implementation limits").
    IntegerOverflow,
    /// Index 0, or beyond the static and dynamic tables (RFC 7541 §2.3.3, §6.1).
    InvalidIndex,
    /// A Huffman string containing the EOS symbol (RFC 7541 §5.2).
    HuffmanEos,
    /// A Huffman string with more than 7 bits of padding (RFC 7541 §5.2).
    HuffmanPaddingTooLong,
    /// A Huffman string whose padding is not all ones (the high bits of EOS; RFC 7541 §5.2).
    HuffmanPaddingNotOnes,
    /// A dynamic table size update above our SETTINGS_HEADER_TABLE_SIZE (RFC 7541 §6.3).
    SizeUpdateTooLarge,
    /// A dynamic table size update after a field representation (RFC 7541 §4.2: it "MUST
    /// occur at the beginning of the first header block following the change").
    SizeUpdateAfterField,
    /// More than two size updates at the start of a block (RFC 7541 §4.2: "at most two").
    TooManySizeUpdates,
    /// Our setting went below the table's maximum and the next block did not start with a
    /// size update to at most the new value (RFC 7541 §4.2).
    MissingSizeUpdate,
}

impl From<huffman::HuffmanError> for DecodeError {
    fn from(e: huffman::HuffmanError) -> DecodeError {
        match e {
            huffman::HuffmanError::Eos => DecodeError::HuffmanEos,
            huffman::HuffmanError::PaddingTooLong => DecodeError::HuffmanPaddingTooLong,
            huffman::HuffmanError::PaddingNotOnes => DecodeError::HuffmanPaddingNotOnes,
        }
    }
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HPACK decoding error: {self:?}")
    }
}

impl std::error::Error for DecodeError {}
