//! Receiving: frames decoded from the input, unmasked, validated and assembled into messages
//! (RFC 6455 §5.2-§5.5, §8.1; RFC 7692 §6.2, §7.2.2).

use std::time::Instant;

use bytes::{Buf, Bytes, BytesMut};

use super::{Conn, Event, Frame, Message, Role, Sink, State};
use crate::ws::close::parse_close;
use crate::ws::error::Error;
use crate::ws::frame::{Header, Opcode, Rules};
use crate::ws::mask;
use crate::ws::utf8::Utf8;

/// An assembly buffer holding more than this after a message is dropped rather than kept
/// for the next one: a large message's memory is not held by an idle connection.
const KEEP_CAPACITY: usize = 64 * 1024;

impl Conn {
    /// Consumes octets from the front of `input` and returns the next event, or `None` when it
    /// needs more input.
    ///
    /// The driver appends what it reads to `input` and calls this until `None`; the octets
    /// left are an unfinished frame, possibly already unmasked in place: keep them, unchanged,
    /// at the front of the buffer. `now` is when the input arrived (a sign of life for the
    /// keep-alive timers).
    ///
    /// A peer's violation is not returned as an error but as [`Event::Error`], after which
    /// the connection is closed and later input is discarded; so is all input after the
    /// peer's Close ([`Event::Close`]).
    ///
    /// Allocates nothing for a message in one uncompressed frame (it is split off `input`),
    /// nor, once the assembly buffer has grown, for a fragmented one.
    pub fn recv(&mut self, input: &mut BytesMut, now: Instant) -> Option<Event> {
        self.close_clock.fix(now);
        if self.state == State::Closed {
            input.clear();
            return None;
        }
        if input.is_empty() {
            // Nothing to decode, and no frame under way that is complete without more input
            // (the driver asks once more after each event: ~60 instructions saved there).
            if self.frame.is_none_or(|f| f.done < f.len) {
                return None;
            }
        } else {
            self.last_recv = now;
        }
        match self.recv_frames(input) {
            Ok(event) => event,
            Err(e) => {
                input.clear();
                if self.state == State::Open {
                    self.queue_close(e.close_code(), e.reason());
                }
                self.set_closed();
                Some(Event::Error(e))
            }
        }
    }

    fn rules(&self) -> Rules {
        #[cfg(feature = "ws-deflate")]
        let rsv1 = self.deflate.is_some();
        #[cfg(not(feature = "ws-deflate"))]
        let rsv1 = false;
        Rules {
            masked: self.role == Role::Server,
            rsv1,
            max_len: self.config.limits.max_frame_size,
        }
    }

    fn recv_frames(&mut self, input: &mut BytesMut) -> Result<Option<Event>, Error> {
        loop {
            let Some(mut f) = self.frame else {
                let Some((header, n)) = Header::decode(input, self.rules())? else {
                    return Ok(None);
                };
                input.advance(n);
                self.frame = Some(self.begin(header)?);
                continue;
            };
            match f.sink {
                Sink::Whole => {
                    let have = (input.len() as u64).min(f.len);
                    if have > f.done {
                        let piece = &mut input[f.done as usize..have as usize];
                        if let Some(key) = f.key {
                            mask::apply(piece, key, f.done);
                        }
                        if f.opcode == Opcode::Text {
                            self.utf8.feed(piece).map_err(|_| Error::InvalidUtf8)?;
                        }
                        f.done = have;
                        self.frame = Some(f);
                    }
                    if f.done < f.len {
                        return Ok(None);
                    }
                    self.frame = None;
                    let payload = input.split_to(f.len as usize).freeze();
                    return self.whole_frame(f.opcode, payload).map(Some);
                }
                Sink::Append | Sink::Inflate => {
                    let n = (input.len() as u64).min(f.len - f.done) as usize;
                    if n == 0 && f.done < f.len {
                        return Ok(None);
                    }
                    let piece = &mut input[..n];
                    if let Some(key) = f.key {
                        mask::apply(piece, key, f.done);
                    }
                    self.take_piece(f.sink, piece, false)?;
                    input.advance(n);
                    f.done += n as u64;
                    if f.done < f.len {
                        self.frame = Some(f);
                        return Ok(None);
                    }
                    self.frame = None;
                    if f.fin {
                        return self.finish_message().map(Some);
                    }
                }
            }
        }
    }

    /// Checks a frame header against the message in progress and the limits, and decides
    /// where its payload goes.
    fn begin(&mut self, h: Header) -> Result<Frame, Error> {
        let limits = &self.config.limits;
        let too_big = |len: u64| len > limits.max_message_size as u64;
        let sink = match h.opcode {
            // RFC 6455 §5.4: "Control frames MAY be injected in the middle of a fragmented
            // message."
            op if op.is_control() => Sink::Whole,
            Opcode::Continuation => {
                // §5.4: a continuation belongs to a message begun by a data frame without FIN.
                let m = self.msg.as_mut().ok_or(Error::UnexpectedContinuation)?;
                m.fragments += 1;
                if m.fragments > limits.max_fragments {
                    return Err(Error::TooManyFragments);
                }
                m.size += h.len;
                // A compressed message's limit applies to what it inflates to.
                if !m.compressed && too_big(m.size) {
                    return Err(Error::MessageTooBig);
                }
                if m.compressed { Sink::Inflate } else { Sink::Append }
            }
            _ => {
                // §5.4: "fragments of one message MUST NOT be interleaved between fragments of
                // another message".
                if self.msg.is_some() {
                    return Err(Error::ExpectedContinuation);
                }
                if !h.rsv1 && too_big(h.len) {
                    return Err(Error::MessageTooBig);
                }
                self.utf8 = Utf8::new();
                if h.fin && !h.rsv1 {
                    Sink::Whole
                } else {
                    let text = h.opcode == Opcode::Text;
                    let compressed = h.rsv1;
                    self.msg = Some(Message { text, compressed, fragments: 1, size: h.len });
                    if compressed { Sink::Inflate } else { Sink::Append }
                }
            }
        };
        Ok(Frame { opcode: h.opcode, fin: h.fin, key: h.mask, len: h.len, done: 0, sink })
    }

    /// A piece of a fragmented or compressed message's payload, unmasked (or, with `end`, a
    /// compressed message's end): appended or inflated into the assembly buffer, new text
    /// validated at once.
    ///
    /// What inflated before an inflation error is validated before the error is reported:
    /// which error a message gets does not depend on how its octets were split into reads.
    fn take_piece(&mut self, sink: Sink, piece: &[u8], end: bool) -> Result<(), Error> {
        let text = self.msg.is_some_and(|m| m.text);
        let start = self.buf.len();
        let taken = if sink == Sink::Append {
            self.buf.extend_from_slice(piece);
            Ok(())
        } else {
            self.inflate(piece, end)
        };
        if text {
            self.utf8.feed(&self.buf[start..]).map_err(|_| Error::InvalidUtf8)?;
        }
        taken
    }

    /// Inflates a compressed message's next piece (or, with `end`, its end) into the
    /// assembly buffer, within the message size limit.
    #[cfg(feature = "ws-deflate")]
    fn inflate(&mut self, piece: &[u8], end: bool) -> Result<(), Error> {
        let limit = self.config.limits.max_message_size;
        // `msg.compressed` is only set when RSV1 was allowed: deflate was negotiated.
        let Some(d) = self.deflate.as_mut() else { return Err(Error::ReservedBits) };
        let (bits, reset) = (d.peer_bits, d.peer_reset);
        let inflater =
            d.inflater.get_or_insert_with(|| crate::ws::deflate::Inflater::new(bits, reset));
        if end {
            inflater.finish(&mut self.buf, limit)
        } else {
            inflater.inflate(piece, &mut self.buf, limit)
        }
    }

    #[cfg(not(feature = "ws-deflate"))]
    fn inflate(&mut self, _piece: &[u8], _end: bool) -> Result<(), Error> {
        Err(Error::ReservedBits)
    }

    /// The last frame of a fragmented or compressed message arrived.
    fn finish_message(&mut self) -> Result<Event, Error> {
        let Some(m) = self.msg else { return Err(Error::UnexpectedContinuation) };
        if m.compressed {
            self.take_piece(Sink::Inflate, &[], true)?;
        }
        if m.text {
            self.utf8.finish().map_err(|_| Error::InvalidUtf8)?;
        }
        self.msg = None;
        let data = self.buf.split().freeze();
        if self.buf.capacity() > KEEP_CAPACITY {
            self.buf = BytesMut::new();
        }
        Ok(if m.text { Event::Text(data) } else { Event::Binary(data) })
    }

    /// A frame received whole: a control frame, or a message in one uncompressed frame.
    fn whole_frame(&mut self, opcode: Opcode, payload: Bytes) -> Result<Event, Error> {
        Ok(match opcode {
            Opcode::Text => {
                self.utf8.finish().map_err(|_| Error::InvalidUtf8)?;
                Event::Text(payload)
            }
            Opcode::Binary => Event::Binary(payload),
            Opcode::Ping => {
                // RFC 6455 §5.5.2: "Upon receipt of a Ping frame, an endpoint MUST send a Pong
                // frame in response, unless it already received a Close frame. It SHOULD
                // respond with Pong frame as soon as is practical." After our own Close we
                // send nothing more (§5.5.1).
                if self.state == State::Open {
                    self.pong = super::Control::new(&payload);
                }
                Event::Ping(payload)
            }
            Opcode::Pong => Event::Pong(payload),
            Opcode::Close => {
                let (code, reason) = parse_close(&payload)?;
                let reason = payload.slice_ref(reason);
                // §5.5.1: "If an endpoint receives a Close frame and did not previously send
                // a Close frame, the endpoint MUST send a Close frame in response. (When
                // sending a Close frame in response, the endpoint typically echos the status
                // code it received.)"
                if self.state == State::Open {
                    self.queue_close(code, "");
                }
                self.set_closed();
                Event::Close { code, reason }
            }
            // Continuations never take this path (`begin`).
            Opcode::Continuation => return Err(Error::UnexpectedContinuation),
        })
    }
}
