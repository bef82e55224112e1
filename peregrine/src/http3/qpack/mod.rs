//! QPACK field compression (RFC 9204), both directions, with the dynamic table.
//!
//! # API
//!
//! - [`Decoder`] (one per connection, inbound): [`Decoder::new`]`(max_table_capacity,
//!   max_blocked_streams)` with our SETTINGS_QPACK_MAX_TABLE_CAPACITY and
//!   SETTINGS_QPACK_BLOCKED_STREAMS; [`Decoder::feed_encoder_stream`] with the peer's encoder
//!   stream bytes (any split); [`Decoder::decode_section`] per HEADERS payload, which answers
//!   [`Section::Blocked`] when the section needs entries not yet received (the caller keeps
//!   the payload and retries when [`Decoder::poll_unblocked`] names the stream);
//!   [`Decoder::cancel_stream`] when a request stream is reset; [`Decoder::poll_decoder_stream`]
//!   for the bytes to write on our decoder stream.
//! - [`Encoder`] (one per connection, outbound): [`Encoder::new`]`(max_table_capacity)` with
//!   the most table we are willing to keep for the peer; [`Encoder::apply_peer_settings`] with
//!   the peer's two QPACK settings; [`Encoder::encode`] per field section;
//!   [`Encoder::feed_decoder_stream`] with the peer's decoder stream bytes;
//!   [`Encoder::poll_encoder_stream`] for the bytes to write on our encoder stream.
//! - Decoded fields land in the same [`FieldList`](crate::http2::hpack::FieldList) HTTP/2
//!   uses, with the same validation (RFC 9114 §4.2 states RFC 9113 §8.2.1's rules).
//!
//! # Errors and their scope
//!
//! Every [`Error`] is a connection error (RFC 9204 §6): [`Code::QPACK_DECOMPRESSION_FAILED`]
//! for a field section, [`Code::QPACK_ENCODER_STREAM_ERROR`] for the peer's encoder stream,
//! [`Code::QPACK_DECODER_STREAM_ERROR`] for its decoder stream, and
//! [`Code::H3_EXCESSIVE_LOAD`] when a budget below runs out. [`Error::cause`] says why.
//!
//! # Budgets (floods and their reactions)
//!
//! - **Table churn** (a "QPACK bomb": one-octet Duplicates each copying an entry as large as
//!   the table): the decoder earns [`CHURN_PER_BYTE`] octets of insertion credit per octet of
//!   encoder stream or field section received, holding at most twice the table capacity plus
//!   [`CHURN_BURST`]; an insertion (its entry size, name + value + 32) spends it. Out of credit:
//!   `H3_EXCESSIVE_LOAD`. So copying work stays within a constant factor of the bytes received.
//! - **Instructions**: every instruction is at least one octet and costs O(1) plus the octets
//!   it copies (counted above), so instructions per byte are bounded by construction; an
//!   instruction that is not yet whole is buffered only up to what an entry that fits the
//!   table can take ([`Cause::InstructionTooLong`] past it), and re-parsing a trickled
//!   instruction reads only its integers.
//! - **Blocked streams**: more than our SETTINGS_QPACK_BLOCKED_STREAMS streams blocked at
//!   once is `QPACK_DECOMPRESSION_FAILED` (RFC 9204 §2.1.2).
//! - **Decoded fields**: bounded by the [`FieldList`](crate::http2::hpack::FieldList) budget
//!   (our SETTINGS_MAX_FIELD_SECTION_SIZE); past it, fields are not stored and the caller
//!   refuses the request (RFC 9114 §4.2.2), while decoding still runs to the end.
//! - **Our decoder stream's backlog** (a peer that never reads our decoder stream, so its flow
//!   control stops our writes while its requests keep adding Section Acknowledgments and
//!   Stream Cancellations): past [`MAX_DECODER_BACKLOG`] octets not yet polled, the next field
//!   section is refused with `H3_EXCESSIVE_LOAD` ([`Cause::DecoderBacklog`]). Stream
//!   Cancellations are not queued at all for a peer whose encoder never gave its table a
//!   capacity (it cannot have references to cancel), so a peer that uses no dynamic table
//!   adds nothing to that stream.
//! - **Unacknowledged sections** (a peer that never acknowledges): the encoder keeps at most
//!   [`MAX_OUTSTANDING`] sections awaiting acknowledgment; past that it encodes with the
//!   static table and literals only (no error: the peer only loses compression).
//!
//! # Examples
//!
//! ```
//! use peregrine::http2::hpack::FieldList;
//! use peregrine::http3::StreamId;
//! use peregrine::http3::qpack::{Decoder, Encoder, Section};
//!
//! let (mut encoder, mut decoder) = (Encoder::new(4096), Decoder::new(4096, 16));
//! encoder.apply_peer_settings(4096, 16);
//! let stream = StreamId::new(0);
//! let mut section = Vec::new();
//! let fields: [(&[u8], &[u8], bool); 2] = [(b":path", b"/a", false), (b"x-id", b"7", false)];
//! encoder.encode(stream, fields, &mut section);
//!
//! let mut list = FieldList::new(16 * 1024);
//! // The section refers to entries the encoder stream brings: blocked until they arrive.
//! assert_eq!(decoder.decode_section(stream, &section, &mut list)?, Section::Blocked);
//! let mut instructions = Vec::new();
//! encoder.poll_encoder_stream(&mut instructions);
//! decoder.feed_encoder_stream(&instructions)?;
//! assert_eq!(decoder.poll_unblocked(), Some(stream));
//! assert_eq!(decoder.decode_section(stream, &section, &mut list)?, Section::Decoded);
//! let got: Vec<_> = list.iter().map(|f| (f.name, f.value)).collect();
//! assert_eq!(got, [(&b":path"[..], &b"/a"[..]), (&b"x-id"[..], &b"7"[..])]);
//! // The acknowledgments go back on the decoder stream.
//! let mut acks = Vec::new();
//! decoder.poll_decoder_stream(&mut acks);
//! encoder.feed_decoder_stream(&acks)?;
//! assert_eq!(encoder.known_received_count(), 2);
//! # Ok::<(), peregrine::http3::qpack::Error>(())
//! ```

mod decoder;
mod encoder;
pub(crate) mod instruction;
pub(crate) mod integer;
mod literal;
pub(crate) mod prefix;
pub(crate) mod static_table;
#[cfg(test)]
mod tests;

use std::fmt;

pub use decoder::{Decoder, Section};
pub use encoder::{Encoder, MAX_OUTSTANDING};

use super::Code;

/// Octets of insertion credit the decoder earns per octet received (see the module's
/// budgets).
pub const CHURN_PER_BYTE: u64 = 64;
/// Credit the decoder may hold beyond twice the table capacity (see the module's budgets).
pub const CHURN_BURST: u64 = 4096;
/// Octets of our decoder stream not yet polled past which the peer is taken not to read it
/// (see the module's budgets): about 13,000 Stream Cancellations of 5 octets.
pub const MAX_DECODER_BACKLOG: usize = 64 * 1024;

/// Why QPACK input was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Cause {
    /// The input ends inside a representation (a field section is always whole).
    Truncated,
    /// An integer above 2^62 - 1 (RFC 9204 §4.1.1).
    IntegerOverflow,
    /// A Huffman string holds the EOS symbol (RFC 7541 §5.2).
    HuffmanEos,
    /// Huffman padding longer than 7 bits (RFC 7541 §5.2).
    HuffmanPaddingTooLong,
    /// Huffman padding that is not the EOS prefix (RFC 7541 §5.2).
    HuffmanPaddingNotOnes,
    /// An encoded Required Insert Count no encoder produces (§4.5.1.1).
    RequiredInsertCount,
    /// A negative Base (§4.5.1.2).
    Base,
    /// A static index past the table (§3.1).
    StaticIndex,
    /// A dynamic reference to an entry evicted, not yet inserted, or at or above the
    /// section's Required Insert Count (§2.2.3, §3.2.5).
    DynamicIndex,
    /// The section's Required Insert Count is above one plus its largest reference (§2.2.3:
    /// the encoder declares exactly what the section needs).
    RequiredInsertCountTooLarge,
    /// More streams blocked than our SETTINGS_QPACK_BLOCKED_STREAMS (§2.1.2).
    TooManyBlockedStreams,
    /// Set Dynamic Table Capacity above our SETTINGS_QPACK_MAX_TABLE_CAPACITY (§4.3.1).
    CapacityAboveMaximum,
    /// An insert of an entry larger than the table's capacity (§3.2.2).
    EntryTooLarge,
    /// An encoder stream instruction longer than any entry that fits the table.
    InstructionTooLong,
    /// An Insert Count Increment of 0, or past what the encoder inserted (§4.4.3).
    InsertCountIncrement,
    /// A Section Acknowledgment for a stream with no section awaiting one (§4.4.1).
    UnexpectedAck,
    /// A QPACK stream closed (RFC 9204 §4.2: "Closure of either unidirectional stream type
    /// MUST be treated as a connection error of type H3_CLOSED_CRITICAL_STREAM").
    StreamClosed,
    /// The table churn budget ran out (see the module's budgets).
    ChurnBudget,
    /// Our decoder stream's bytes not yet sent passed [`MAX_DECODER_BACKLOG`] (the peer does
    /// not read that stream; see the module's budgets).
    DecoderBacklog,
}

impl Cause {
    /// A few words for a CONNECTION_CLOSE reason phrase.
    pub const fn why(self) -> &'static str {
        match self {
            Cause::Truncated => "qpack: representation cut short",
            Cause::IntegerOverflow => "qpack: integer overflow",
            Cause::HuffmanEos => "qpack: huffman EOS",
            Cause::HuffmanPaddingTooLong => "qpack: huffman padding too long",
            Cause::HuffmanPaddingNotOnes => "qpack: huffman padding not ones",
            Cause::RequiredInsertCount => "qpack: invalid required insert count",
            Cause::Base => "qpack: negative base",
            Cause::StaticIndex => "qpack: invalid static index",
            Cause::DynamicIndex => "qpack: invalid dynamic index",
            Cause::RequiredInsertCountTooLarge => "qpack: required insert count too large",
            Cause::TooManyBlockedStreams => "qpack: too many blocked streams",
            Cause::CapacityAboveMaximum => "qpack: capacity above maximum",
            Cause::EntryTooLarge => "qpack: entry larger than the table",
            Cause::InstructionTooLong => "qpack: instruction too long",
            Cause::InsertCountIncrement => "qpack: invalid insert count increment",
            Cause::UnexpectedAck => "qpack: unexpected section acknowledgment",
            Cause::StreamClosed => "qpack: critical stream closed",
            Cause::ChurnBudget => "qpack: table churn budget exceeded",
            Cause::DecoderBacklog => "qpack: decoder stream not read by the peer",
        }
    }
}

/// A QPACK error: always a connection error (RFC 9204 §6), with its code and cause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Error {
    /// The code to close the connection with.
    pub code: Code,
    /// Why.
    pub cause: Cause,
}

impl Error {
    pub(crate) const fn section(cause: Cause) -> Error {
        Error { code: Code::QPACK_DECOMPRESSION_FAILED, cause }
    }

    pub(crate) const fn encoder_stream(cause: Cause) -> Error {
        Error { code: Code::QPACK_ENCODER_STREAM_ERROR, cause }
    }

    pub(crate) const fn decoder_stream(cause: Cause) -> Error {
        Error { code: Code::QPACK_DECODER_STREAM_ERROR, cause }
    }

    /// The code and cause of a flood.
    pub(crate) const fn excessive(cause: Cause) -> Error {
        Error { code: Code::H3_EXCESSIVE_LOAD, cause }
    }

    /// The cause.
    pub const fn cause(self) -> Cause {
        self.cause
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.code, self.cause.why())
    }
}

impl std::error::Error for Error {}

impl From<Error> for super::Error {
    fn from(e: Error) -> super::Error {
        super::Error::connection(e.code, e.cause.why())
    }
}
