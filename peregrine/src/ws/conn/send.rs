//! Sending: messages framed (fragmented, compressed, masked) into the output queue, control
//! frames, and our Close (RFC 6455 §5.2-§5.5; RFC 7692 §6.1, §7.2.1).

use bytes::Bytes;

use super::{Conn, Control, State};
use crate::ws::close::{ClosePayload, MAX_REASON};
use crate::ws::close_code::CloseCode;
use crate::ws::error::SendError;
use crate::ws::frame::{Header, MAX_HEADER, Opcode};
use crate::ws::mask::{self, MaskKeys};

/// The shortest message [`Conn::send_binary_bytes`] queues shared: below it, copying the
/// payload next to its header costs less than a second buffer in the write (and keeps a small
/// message from holding on to a large read buffer).
pub const SHARE_MIN: usize = 1024;

impl Conn {
    /// Queues a text message.
    ///
    /// # Errors
    /// [`SendError::Closed`] once we sent a Close (RFC 6455 §5.5.1: "the endpoint MUST NOT
    /// send any more data frames") or the connection closed.
    pub fn send_text(&mut self, text: &str) -> Result<(), SendError> {
        self.send_message(Opcode::Text, text.as_bytes())
    }

    /// Queues a binary message.
    ///
    /// # Errors
    /// As [`Conn::send_text`].
    pub fn send_binary(&mut self, data: &[u8]) -> Result<(), SendError> {
        self.send_message(Opcode::Binary, data)
    }

    /// Queues a binary message held in shared bytes: a server queues a message of at least
    /// [`SHARE_MIN`] octets that goes uncompressed in one frame as its header and `data`
    /// itself, not a copy, for [`Conn::poll_transmit_vectored`] to hand to a vectored write
    /// (an echo sends back the received message's bytes, which share the read buffer). A
    /// client's frames are masked, which needs a copy of their own; shorter, compressed and
    /// fragmented messages are framed as [`Conn::send_binary`] frames them.
    ///
    /// # Errors
    /// As [`Conn::send_text`].
    pub fn send_binary_bytes(&mut self, data: Bytes) -> Result<(), SendError> {
        self.send_shared(Opcode::Binary, data)
    }

    /// Queues a text message held in shared bytes, as [`Conn::send_binary_bytes`] does.
    /// `text` must be UTF-8 (RFC 6455 §5.6: a peer fails the connection with 1007 otherwise);
    /// it is not checked again here (a `&str` the caller made, or text received, was), except
    /// in debug builds.
    ///
    /// # Errors
    /// As [`Conn::send_text`].
    pub fn send_text_bytes(&mut self, text: Bytes) -> Result<(), SendError> {
        debug_assert!(std::str::from_utf8(&text).is_ok(), "send_text_bytes: not UTF-8");
        self.send_shared(Opcode::Text, text)
    }

    /// Queues a Ping (RFC 6455 §5.5.2), sent ahead of queued messages; one waits at a time,
    /// a later one replacing it. The peer's Pong arrives as [`Event::Pong`](super::Event::Pong).
    ///
    /// # Errors
    /// [`SendError::ControlTooLong`] over 125 octets; [`SendError::Closed`] as for messages.
    pub fn send_ping(&mut self, payload: &[u8]) -> Result<(), SendError> {
        self.ping = Some(self.control(payload)?);
        Ok(())
    }

    /// Queues an unsolicited Pong (RFC 6455 §5.5.3: "A Pong frame MAY be sent unsolicited.
    /// This serves as a unidirectional heartbeat"), replacing a Pong owed.
    ///
    /// # Errors
    /// As [`Conn::send_ping`].
    pub fn send_pong(&mut self, payload: &[u8]) -> Result<(), SendError> {
        self.pong = Some(self.control(payload)?);
        Ok(())
    }

    fn control(&self, payload: &[u8]) -> Result<Control, SendError> {
        if self.state != State::Open {
            return Err(SendError::Closed);
        }
        Control::new(payload).ok_or(SendError::ControlTooLong)
    }

    /// Starts the closing handshake (RFC 6455 §7.1.2): queues our Close, after the messages
    /// already queued, with `code` and `reason` ([`CloseCode::NO_STATUS`]: a Close without a
    /// payload). Messages are still received until the peer's Close
    /// ([`Event::Close`](super::Event::Close)), or until [`Limits::close_timeout`] passes, counted
    /// from the next [`Conn::poll_timeout`].
    ///
    /// [`Limits::close_timeout`]: crate::ws::Limits::close_timeout
    ///
    /// # Errors
    /// [`SendError::InvalidCloseCode`] for a code not allowed on the wire;
    /// [`SendError::ReasonTooLong`] over 123 octets; [`SendError::Closed`] if we already sent
    /// a Close or the connection is closed.
    pub fn close(&mut self, code: CloseCode, reason: &str) -> Result<(), SendError> {
        if self.state != State::Open {
            return Err(SendError::Closed);
        }
        if !code.is_allowed_on_wire() && code != CloseCode::NO_STATUS {
            return Err(SendError::InvalidCloseCode);
        }
        if reason.len() > MAX_REASON {
            return Err(SendError::ReasonTooLong);
        }
        self.queue_close(code, reason);
        self.state = State::CloseSent;
        self.close_clock = super::Clock::Started;
        Ok(())
    }

    /// Appends our Close frame to the queue.
    pub(super) fn queue_close(&mut self, code: CloseCode, reason: &str) {
        let payload = ClosePayload::new(code, reason);
        let masks = self.masks.as_deref_mut();
        write_frame(self.out.octets_mut(), masks, Opcode::Close, false, true, payload.as_bytes());
    }

    #[inline]
    fn send_shared(&mut self, opcode: Opcode, data: Bytes) -> Result<(), SendError> {
        if data.len() < SHARE_MIN || !self.shares(data.len()) {
            return self.send_message(opcode, &data);
        }
        if self.state != State::Open {
            return Err(SendError::Closed);
        }
        // RFC 6455 §5.2: one frame, FIN set, unmasked (a server's), the payload as it is.
        let header = Header { fin: true, rsv1: false, opcode, mask: None, len: data.len() as u64 };
        self.out.octets_mut().extend_from_slice(header.encode().as_bytes());
        self.out.push_shared(data);
        Ok(())
    }

    /// Whether a message of `len` octets goes out shared rather than copied: a server's
    /// (unmasked), long enough for a vectored write to beat a copy, in one frame, not
    /// compressed.
    fn shares(&self, len: usize) -> bool {
        if self.masks.is_some()
            || len < SHARE_MIN
            || self.config.fragment_size.is_some_and(|f| len > f.max(1))
        {
            return false;
        }
        #[cfg(feature = "ws-deflate")]
        if let Some(d) = &self.deflate {
            // As `send_message` decides (RFC 7692 §6).
            if d.own_bits >= 9 && len >= d.min_size {
                return false;
            }
        }
        true
    }

    fn send_message(&mut self, opcode: Opcode, data: &[u8]) -> Result<(), SendError> {
        if self.state != State::Open {
            return Err(SendError::Closed);
        }
        let fragment = self.config.fragment_size.unwrap_or(usize::MAX).max(1);
        let masks = self.masks.as_deref_mut();
        #[cfg(feature = "ws-deflate")]
        if let Some(d) = self.deflate.as_mut() {
            // RFC 7692 §6: a message may go uncompressed (RSV1 clear) even when the
            // extension is in force; ours do when short, or when our window was limited to 8
            // (see `DeflateConfig::server_max_window_bits`).
            if d.own_bits >= 9 && data.len() >= d.min_size {
                let (level, bits, reset) = (d.level, d.own_bits, d.own_reset);
                let c = d
                    .compressor
                    .get_or_insert_with(|| crate::ws::deflate::Compressor::new(level, bits, reset));
                write_message(
                    self.out.octets_mut(),
                    masks,
                    opcode,
                    true,
                    c.compress(data),
                    fragment,
                );
                return Ok(());
            }
        }
        write_message(self.out.octets_mut(), masks, opcode, false, data, fragment);
        Ok(())
    }
}

/// Appends a message as frames of at most `fragment` payload octets (RFC 6455 §5.4): the
/// first with the opcode (and RSV1 if `compressed`: RFC 7692 §6.1 "the first fragment"), the
/// rest continuations, FIN on the last.
fn write_message(
    out: &mut Vec<u8>,
    mut masks: Option<&mut MaskKeys>,
    opcode: Opcode,
    compressed: bool,
    payload: &[u8],
    fragment: usize,
) {
    let frames = payload.len().div_ceil(fragment).max(1);
    out.reserve(payload.len().saturating_add(frames.saturating_mul(MAX_HEADER)));
    let mut rest = payload;
    let mut first = true;
    loop {
        let (chunk, tail) = rest.split_at(rest.len().min(fragment));
        let op = if first { opcode } else { Opcode::Continuation };
        write_frame(out, masks.as_deref_mut(), op, first && compressed, tail.is_empty(), chunk);
        if tail.is_empty() {
            return;
        }
        first = false;
        rest = tail;
    }
}

/// Appends one frame, masked with the next key when `masks` is given (a client's: RFC 6455
/// §5.3 "a client MUST mask all frames that it sends to the server").
pub(super) fn write_frame(
    out: &mut Vec<u8>,
    masks: Option<&mut MaskKeys>,
    opcode: Opcode,
    rsv1: bool,
    fin: bool,
    payload: &[u8],
) {
    let key = masks.map(MaskKeys::next_key);
    let header = Header { fin, rsv1, opcode, mask: key, len: payload.len() as u64 };
    out.extend_from_slice(header.encode().as_bytes());
    let start = out.len();
    out.extend_from_slice(payload);
    if let Some(key) = key {
        mask::apply(&mut out[start..], key, 0);
    }
}
