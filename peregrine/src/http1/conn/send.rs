//! The sending side: a server's response heads and a client's request heads with the framing
//! and persistence the connection decides, bodies framed to match, the end of a body, and what
//! the connection queues itself (`100 Continue`, refusals).

use super::{Clock, Conn, InFlight, Pending, Recv, RequestId, ResponsePlan, Role, Send, SendError};
use crate::date::ImfFixdate;
use crate::http1::chunked::{CRLF, encode_chunk, encode_chunk_head, encode_last_chunk};
use crate::http1::encode::{CONTINUE, EncodeError, ResponseHeadOut, encode_head};
use crate::http1::framing::{BodyLength, response_body};
use crate::{Method, Version};

/// Whether a trailer field may be sent (RFC 9110 §6.5.1): not the fields that frame the
/// message or belong to the connection.
pub fn trailer_allowed(name: &str) -> bool {
    const REFUSED: [&str; 8] = [
        "content-length",
        "transfer-encoding",
        "connection",
        "te",
        "trailer",
        "upgrade",
        "keep-alive",
        "proxy-connection",
    ];
    !REFUSED.iter().any(|r| r.eq_ignore_ascii_case(name))
}

impl Conn {
    /// Server: answers the request received last (after [`Conn::settle`], when its body was
    /// not read to its end). The connection decides the plan — the framing from the status,
    /// the request's method and version and the body's `size` when known (RFC 9110 §6.4.1,
    /// §8.6; RFC 9112 §6.1, §6.3), and whether the connection goes on (the request's wish, a
    /// shutdown, a body that failed or cannot be drained) — and `write` appends the head for
    /// it to `out`, and may append the whole body after it (a `Length` plan's bytes, when
    /// `send_body`): it returns the body bytes it appended. `trailers`: the body may end with
    /// trailer fields, so it goes chunked to an HTTP/1.1 client whatever its size (RFC 9112
    /// §7.1.2).
    ///
    /// A `101` switches protocols after its head (only for a request that asked to upgrade,
    /// RFC 9110 §15.2.2): [`Conn::is_upgraded`]. A body that does not follow
    /// (`send_body` false) or was appended whole ends the exchange here; otherwise
    /// [`Conn::send_data`], [`Conn::send_payload`] and [`Conn::finish`] send it.
    ///
    /// # Errors
    /// [`SendError::NotReady`] when no request waits for this response;
    /// [`SendError::InvalidStatus`] for a status outside 200..=999 (or a `101` not asked for);
    /// [`SendError::Encode`] from `write`. Nothing is appended then.
    #[inline]
    pub fn send_response(
        &mut self,
        status: u16,
        size: Option<u64>,
        trailers: bool,
        out: &mut Vec<u8>,
        write: impl FnOnce(&ResponsePlan, &mut Vec<u8>) -> Result<u64, EncodeError>,
    ) -> Result<ResponsePlan, SendError> {
        let ex = self.exchange;
        if self.role != Role::Server || ex.responded || self.send != Send::Idle {
            return Err(SendError::NotReady);
        }
        let upgrade = status == 101;
        if (upgrade && !ex.upgrade) || (!upgrade && !(200..=999).contains(&status)) {
            return Err(SendError::InvalidStatus);
        }
        let size = if trailers && ex.version == Version::Http11 { None } else { size };
        let outgoing = response_body(status, ex.is_head, ex.version, size);
        let length = if upgrade { BodyLength::Length(0) } else { outgoing.length };
        // A body neither read to its end nor settled cannot be drained.
        let unread = self.recv == Recv::Body && !ex.settled;
        let close = !upgrade
            && (!ex.keep_alive
                || ex.close
                || self.shutdown
                || unread
                || self.recv == Recv::Closed
                || length == BodyLength::CloseDelimited);
        let plan = ResponsePlan {
            status,
            version: ex.version,
            close,
            length,
            send_body: outgoing.send && !upgrade,
        };
        let start = out.len();
        // A `100 Continue` still queued goes first: the client may be reading the body's way.
        if self.pending == Pending::Continue {
            out.extend_from_slice(CONTINUE);
        }
        let written = match write(&plan, out) {
            Ok(n) => n,
            Err(e) => {
                out.truncate(start);
                return Err(SendError::Encode(e));
            }
        };
        self.pending = Pending::Nothing;
        self.cont = false;
        self.exchange.responded = true;
        self.exchange.close = close;
        if upgrade {
            self.recv = Recv::Upgraded;
            self.send = Send::Upgraded;
            return Ok(plan);
        }
        match length {
            _ if !plan.send_body => self.end_exchange(),
            BodyLength::Length(n) if written >= n => self.end_exchange(),
            BodyLength::Length(n) => {
                self.send = Send::Body { length, left: n - written, crlf: false };
            }
            _ => self.send = Send::Body { length, left: 0, crlf: false },
        }
        Ok(plan)
    }

    /// Client: sends a request. `write` appends its head to `out` for the framing the
    /// connection chose: `Content-Length` for a `length` given (RFC 9110 §8.6 leaves a zero
    /// length out for methods that anticipate no content: the encoder's part), chunked for a
    /// body of unknown length. `body`, the first body bytes (all of them for a `length` they
    /// fill), follows at once; the rest with [`Conn::send_data`] and [`Conn::finish`].
    ///
    /// # Errors
    /// [`SendError::NotReady`] when the connection cannot take it ([`Conn::can_send`]);
    /// [`SendError::TooLong`] for a body longer than `length`; [`SendError::Encode`] from
    /// `write`. Nothing is appended then.
    #[inline]
    pub fn send_request(
        &mut self,
        method: Method,
        length: Option<u64>,
        body: &[u8],
        out: &mut Vec<u8>,
        write: impl FnOnce(BodyLength, &mut Vec<u8>) -> Result<(), EncodeError>,
    ) -> Result<RequestId, SendError> {
        if !self.can_send(method) {
            return Err(SendError::NotReady);
        }
        let given = body.len() as u64;
        if length.is_some_and(|n| given > n) {
            return Err(SendError::TooLong);
        }
        let framing = length.map_or(BodyLength::Chunked, BodyLength::Length);
        let start = out.len();
        if let Err(e) = write(framing, out) {
            out.truncate(start);
            return Err(SendError::Encode(e));
        }
        let id = self.next_id;
        self.next_id = id.wrapping_add(1).max(1);
        match length {
            Some(n) => {
                out.extend_from_slice(body);
                if n > given {
                    self.send = Send::Body { length: framing, left: n - given, crlf: false };
                }
            }
            None => {
                encode_chunk(body, out);
                self.send = Send::Body { length: framing, left: 0, crlf: false };
            }
        }
        self.in_flight.push_back(InFlight { id, method });
        self.unsafe_in_flight += u32::from(!method.is_idempotent());
        self.wait_since = None;
        Ok(RequestId(id))
    }

    /// Appends body bytes with the framing the head announced (a chunk for chunked).
    ///
    /// # Errors
    /// [`SendError::NoBody`] when no body is being sent; [`SendError::TooLong`] past the
    /// announced length (nothing is appended).
    pub fn send_data(&mut self, data: &[u8], out: &mut Vec<u8>) -> Result<(), SendError> {
        self.frame(data.len() as u64, out)?;
        match self.send {
            Send::Body { length: BodyLength::Chunked, .. } => encode_chunk(data, out),
            _ => out.extend_from_slice(data),
        }
        self.body_written();
        Ok(())
    }

    /// Frames `len` body bytes the driver writes itself, right after `out` and before anything
    /// a later call appends (a large buffer sent as it is, a file sent with `sendfile(2)`): for
    /// chunked, the chunk's size line now, its CRLF with the next call.
    ///
    /// # Errors
    /// As [`Conn::send_data`].
    pub fn send_payload(&mut self, len: u64, out: &mut Vec<u8>) -> Result<(), SendError> {
        self.frame(len, out)?;
        if let Send::Body { length: BodyLength::Chunked, crlf, .. } = &mut self.send {
            encode_chunk_head(len, out);
            *crlf = len > 0;
        }
        self.body_written();
        Ok(())
    }

    /// Checks and counts `len` more body bytes against the framing; writes a CRLF still due.
    fn frame(&mut self, len: u64, out: &mut Vec<u8>) -> Result<(), SendError> {
        let Send::Body { length, left, crlf } = &mut self.send else {
            return Err(SendError::NoBody);
        };
        if let BodyLength::Length(_) = length {
            *left = left.checked_sub(len).ok_or(SendError::TooLong)?;
        }
        if std::mem::take(crlf) {
            out.extend_from_slice(CRLF);
        }
        Ok(())
    }

    /// A Content-Length body ends with its last byte.
    fn body_written(&mut self) {
        if let Send::Body { length: BodyLength::Length(_), left: 0, .. } = self.send {
            self.end_body_sent();
        }
    }

    /// Ends the body being sent: the last chunk with `trailers` (those RFC 9110 §6.5.1 allows:
    /// the others are left out) for chunked. A Content-Length body ends with its last byte,
    /// and a message without a body with its head: then this does nothing.
    ///
    /// # Errors
    /// [`SendError::TooShort`] for a Content-Length body not sent whole: the message cannot be
    /// completed, and the connection closes ([`Conn::is_closed`]).
    /// [`SendError::Encode`] for a trailer field that cannot be encoded (nothing is appended;
    /// the body is still open). [`SendError::NotReady`] for a server that has not responded.
    pub fn finish(
        &mut self,
        trailers: &[(&str, &[u8])],
        out: &mut Vec<u8>,
    ) -> Result<(), SendError> {
        let Send::Body { length, left, crlf } = self.send else {
            let unanswered = self.role == Role::Server && !self.exchange.responded;
            return if unanswered || self.send == Send::Closed && self.role == Role::Client {
                Err(SendError::NotReady)
            } else {
                Ok(())
            };
        };
        match length {
            BodyLength::Length(_) if left > 0 => {
                // The peer waits for bytes that will not come: only the close ends it.
                self.exchange.close = true;
                self.reusable = false;
                self.close();
                return Err(SendError::TooShort);
            }
            BodyLength::Length(_) => {}
            BodyLength::Chunked => {
                let start = out.len();
                if crlf {
                    out.extend_from_slice(CRLF);
                }
                // Usually every field is allowed and the list is sent as it is.
                let filtered: Vec<(&str, &[u8])>;
                let fields = if trailers.iter().all(|(name, _)| trailer_allowed(name)) {
                    trailers
                } else {
                    filtered = trailers
                        .iter()
                        .copied()
                        .filter(|(name, _)| trailer_allowed(name))
                        .collect();
                    &filtered
                };
                if let Err(e) = encode_last_chunk(fields, out) {
                    out.truncate(start);
                    return Err(SendError::Encode(e));
                }
            }
            // RFC 9112 §6.3 rule 8: only the close ends this body.
            BodyLength::CloseDelimited => self.exchange.close = true,
        }
        self.end_body_sent();
        Ok(())
    }

    /// The body being sent is complete: a server's exchange ends, a client may send again.
    fn end_body_sent(&mut self) {
        match self.role {
            Role::Server => self.end_exchange(),
            Role::Client => self.send = Send::Idle,
        }
    }

    /// Server: the response is complete. The connection goes on to the next request (first
    /// draining a body left unread), or closes.
    fn end_exchange(&mut self) {
        if self.exchange.close || self.recv == Recv::Closed {
            self.close();
            return;
        }
        self.send = Send::Idle;
        self.recv = match self.recv {
            Recv::Body => Recv::Drain,
            Recv::Waiting => Recv::Head,
            other => other,
        };
        self.head_clock = Clock::Off;
        self.wait_since = None;
        self.body_clock = Clock::Off;
    }

    /// Appends what the connection queued itself since the last call — `100 Continue`, or the
    /// refusal of a bad head with `date` (after which the connection is closed) — to `out`,
    /// after what is there. True when it appended something. Call it before writing the output.
    pub fn poll_transmit(&mut self, out: &mut Vec<u8>, date: &ImfFixdate) -> bool {
        match std::mem::replace(&mut self.pending, Pending::Nothing) {
            Pending::Nothing => false,
            Pending::Continue => {
                out.extend_from_slice(CONTINUE);
                true
            }
            Pending::Refusal { status, reason, is_head } => {
                let head = ResponseHeadOut {
                    close: true,
                    date: Some(date),
                    ..ResponseHeadOut::new(status, &[])
                };
                let length = BodyLength::Length(reason.len() as u64);
                // A status from the error tables, no fields: nothing to refuse.
                if encode_head(&head, length, out).is_ok() && !is_head {
                    out.extend_from_slice(reason.as_bytes());
                }
                true
            }
        }
    }
}
