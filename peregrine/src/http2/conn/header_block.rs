//! A header block kept to be sent again, stamped with the encoder that made it and the
//! encoder's generation then, so the connection can refuse bytes its table has moved past.
//!
//! An HPACK block's bytes mean what they mean only against the encoder's table as it was when
//! they were made (RFC 7541 §2.3.2, §2.3.3: indices name dynamic-table entries). Copied from one
//! connection to another, or resent after the table changed, they would decode to other fields,
//! or update the peer's table where ours stayed, and every later block would decode wrong (a
//! desynchronised context is a connection error, RFC 9113 §4.3).

use std::sync::atomic::{AtomicU64, Ordering};

/// The next encoder's stamp: each connection's encoder gets its own (0 is no encoder's).
static NEXT_ENCODER: AtomicU64 = AtomicU64::new(1);

/// A stamp no other connection's encoder has in this process.
pub(super) fn new_encoder_stamp() -> u64 {
    NEXT_ENCODER.fetch_add(1, Ordering::Relaxed)
}

/// The header block of a response head a [`Conn`](super::Conn) encoded, kept by the caller to
/// send the same head again by copy ([`Conn::keep_response_block`](super::Conn::keep_response_block),
/// [`Conn::send_response_block`](super::Conn::send_response_block)). Only a connection fills
/// one, with its bytes and where they are valid: that connection's encoder at the generation
/// they were encoded at, which the connection checks before sending them.
#[derive(Clone, Debug, Default)]
pub struct HeaderBlock {
    bytes: Vec<u8>,
    /// The stamp of the encoder that made the bytes (0: none, nothing kept).
    encoder: u64,
    /// The encoder's generation the bytes were encoded at, and left unchanged.
    generation: u64,
}

impl HeaderBlock {
    /// Nothing kept; allocates nothing until a block is.
    pub const fn new() -> HeaderBlock {
        HeaderBlock { bytes: Vec::new(), encoder: 0, generation: 0 }
    }

    /// The block's bytes (empty when nothing is kept).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Whether a block is kept.
    pub fn is_kept(&self) -> bool {
        self.encoder != 0
    }

    /// Keeps `bytes`, encoded by `encoder` at `generation` (reusing the allocation).
    pub(super) fn set(&mut self, bytes: &[u8], encoder: u64, generation: u64) {
        self.bytes.clear();
        self.bytes.extend_from_slice(bytes);
        self.encoder = encoder;
        self.generation = generation;
    }

    /// Keeps nothing.
    pub(super) fn clear(&mut self) {
        self.bytes.clear();
        self.encoder = 0;
    }

    /// Whether the block is valid for the encoder stamped `encoder` at `generation`.
    #[inline]
    pub(super) fn valid_at(&self, encoder: u64, generation: u64) -> bool {
        self.encoder == encoder && encoder != 0 && self.generation == generation
    }
}
