//! The send side: requests (client), responses (server), DATA under flow control, trailers,
//! resets and PING. HEADERS are encoded by HPACK straight into the send buffer.

use std::fmt;
use std::ops::Range;

use super::Conn;
use super::Role;
use super::header_block::HeaderBlock;
use super::inbound::Inbound;
use super::streams::{BLOCKED, Phase, Stream};
use crate::http2::error::Reason;
use crate::http2::frame::{Ping, RstStream, data, headers as headers_frame};
use crate::http2::hpack::{BlockEncoder, StaticName};
use crate::http2::slab::Key;
use crate::http2::stream::Closed;
use crate::http2::stream_id::StreamId;

/// The pseudo-headers of a request (RFC 9113 §8.3.1).
///
/// For CONNECT without `protocol` (RFC 9113 §8.5) `scheme` and `path` are not sent; an empty
/// `authority` is not sent.
#[derive(Clone, Copy, Debug)]
pub struct RequestHead<'a> {
    /// `:method`.
    pub method: &'a [u8],
    /// `:scheme`.
    pub scheme: &'a [u8],
    /// `:authority` (empty: none).
    pub authority: &'a [u8],
    /// `:path`.
    pub path: &'a [u8],
    /// `:protocol` (extended CONNECT, RFC 8441), when the server enabled it.
    pub protocol: Option<&'a [u8]>,
}

/// Where the last request's header block sits in the send buffer.
#[derive(Clone, Debug)]
pub(super) struct LastBlock {
    /// Offset and length of the block in `out`.
    start: usize,
    len: usize,
    /// Where the `:path` field's encoding lies in the block.
    path: Range<usize>,
    /// The encoder generation before and after the block was encoded.
    before: u64,
    after: u64,
}

/// Why a send call was refused. Nothing was queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SendError {
    /// A client-only call on a server connection, or the reverse.
    WrongRole,
    /// The connection is over.
    Closed,
    /// A GOAWAY was sent or received: no new streams (RFC 9113 §6.8).
    GoingAway,
    /// The peer's SETTINGS_MAX_CONCURRENT_STREAMS is reached (RFC 9113 §5.1.2); see
    /// [`Conn::can_open_stream`].
    StreamLimit,
    /// All 2^30 stream ids of this connection were used: open a new connection.
    StreamIdsExhausted,
    /// No live stream with this id (never opened, finished, or reset).
    UnknownStream,
    /// Not possible in the stream's state: a second final head, DATA before the head,
    /// anything after END_STREAM.
    InvalidState,
    /// A status outside the call's range (final: 200-599; informational: 100-199 but 101).
    InvalidStatus,
    /// The caller's `fill` of [`Conn::send_data_with`] failed: nothing was queued.
    FillFailed,
    /// A [`HeaderBlock`] kept from another connection, or from this one before its HPACK
    /// table changed: its bytes would no longer decode to its fields (encode the head again).
    StaleBlock,
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SendError::WrongRole => "call not valid for this role",
            SendError::Closed => "connection closed",
            SendError::GoingAway => "connection going away",
            SendError::StreamLimit => "peer's concurrent stream limit reached",
            SendError::StreamIdsExhausted => "stream ids exhausted",
            SendError::UnknownStream => "unknown stream",
            SendError::InvalidState => "not possible in the stream's state",
            SendError::InvalidStatus => "invalid status for this call",
            SendError::FillFailed => "the body octets could not be produced",
            SendError::StaleBlock => "header block encoded against another HPACK table",
        })
    }
}

impl std::error::Error for SendError {}

/// The regular fields of a header section: lowercase names, no connection-specific fields
/// (RFC 9113 §8.2); the caller's duty.
fn write_fields<'f>(
    b: &mut BlockEncoder<'_>,
    fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
) {
    for (name, value) in fields {
        b.field(name, value);
    }
}

impl Conn {
    /// Whether [`Conn::send_request`] can open a stream now: a client connection not going
    /// away, below the peer's SETTINGS_MAX_CONCURRENT_STREAMS, with ids left.
    pub fn can_open_stream(&self) -> bool {
        self.role == Role::Client
            && !self.closed
            && self.goaway_sent.is_none()
            && self.goaway_recv.is_none()
            && self.streams.next_local.is_some()
            && self.streams.local_active < self.peer.max_concurrent_streams.unwrap_or(u32::MAX)
    }

    /// Opens a stream with a request head (client role): HEADERS (and CONTINUATIONs past the
    /// peer's SETTINGS_MAX_FRAME_SIZE) encoded straight into the send buffer. With
    /// `end_stream` the request has no body; otherwise send it with [`Conn::send_data`] and
    /// end it with `end_stream` there or with [`Conn::send_trailers`].
    ///
    /// `fields` are the regular fields: lowercase names, none connection-specific (RFC 9113
    /// §8.2.2). Allocates nothing once the connection's buffers have grown.
    ///
    /// # Errors
    /// [`SendError::WrongRole`], [`SendError::Closed`], [`SendError::GoingAway`],
    /// [`SendError::StreamLimit`], [`SendError::StreamIdsExhausted`].
    pub fn send_request<'f>(
        &mut self,
        head: &RequestHead<'_>,
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
        end_stream: bool,
    ) -> Result<StreamId, SendError> {
        let id = self.open_local_stream(head.method == b"HEAD", end_stream)?;
        let start = headers_frame::begin_block(&mut self.out);
        let block_start = start + crate::http2::frame::HEAD_LEN;
        let before = self.encoder.generation();
        let mut path = 0..0;
        {
            let mut b = self.encoder.block(&mut self.out);
            b.known(StaticName::METHOD, head.method);
            let tunnel = head.method == b"CONNECT" && head.protocol.is_none();
            if !tunnel {
                b.known(StaticName::SCHEME, head.scheme);
            }
            if !head.authority.is_empty() {
                b.known(StaticName::AUTHORITY, head.authority);
            }
            if !tunnel {
                path.start = b.dst_len();
                b.known(StaticName::PATH, head.path);
                path.end = b.dst_len();
            }
            if let Some(p) = head.protocol {
                b.field(b":protocol", p);
            }
            write_fields(&mut b, fields);
        }
        let len = self.out.len() - block_start;
        let after = self.encoder.generation();
        // `dst_len` counts from the start of `out`.
        let path = path.start.saturating_sub(block_start)..path.end.saturating_sub(block_start);
        self.last_block = (len <= self.peer.max_frame_size as usize && !path.is_empty())
            .then_some(LastBlock { start: block_start, len, path, before, after });
        headers_frame::finish_block(&mut self.out, start, id, end_stream, self.peer.max_frame_size);
        self.budgets.control.credit(1);
        Ok(id)
    }

    /// The checks and the new stream of a request sent by the client.
    fn open_local_stream(&mut self, head: bool, end_stream: bool) -> Result<StreamId, SendError> {
        if self.role != Role::Client {
            return Err(SendError::WrongRole);
        }
        if self.closed {
            return Err(SendError::Closed);
        }
        if self.goaway_sent.is_some() || self.goaway_recv.is_some() {
            return Err(SendError::GoingAway);
        }
        if self.streams.local_active >= self.peer.max_concurrent_streams.unwrap_or(u32::MAX) {
            return Err(SendError::StreamLimit);
        }
        let id = self.streams.take_local_id().ok_or(SendError::StreamIdsExhausted)?;
        let mut s =
            Stream::new(id, true, self.peer.initial_window_size, self.config.initial_window_size);
        s.state.send_open(end_stream);
        s.send_phase = Phase::Body;
        s.head_request = head;
        s.announced = true;
        self.streams.insert(s);
        Ok(id)
    }

    /// Opens a stream with a request header block encoded earlier on this connection (its
    /// bytes from [`Conn::last_request_block`]), when [`Conn::encoder_generation`] is still
    /// the one that block was encoded at and its encoding changed no table: HPACK would
    /// produce the same bytes again, so they are copied instead (a client repeating a request
    /// skips the encoding). `head` says the request is a HEAD (its response has no content).
    ///
    /// # Errors
    /// As [`Conn::send_request`]; [`SendError::InvalidState`] when the block does not fit one
    /// frame of the peer's SETTINGS_MAX_FRAME_SIZE (encode it again instead).
    pub fn send_request_block(
        &mut self,
        block: &[u8],
        head: bool,
        end_stream: bool,
    ) -> Result<StreamId, SendError> {
        if block.len() > self.peer.max_frame_size as usize {
            return Err(SendError::InvalidState);
        }
        let id = self.open_local_stream(head, end_stream)?;
        let start = headers_frame::begin_block(&mut self.out);
        self.out.extend_from_slice(block);
        headers_frame::finish_block(&mut self.out, start, id, end_stream, self.peer.max_frame_size);
        self.budgets.control.credit(1);
        Ok(id)
    }

    /// [`Conn::send_request_block`] for a request that differs from the one encoded earlier
    /// only in its `:path`: `before` and `after` are the block's bytes before and after the
    /// old `:path` encoding (spans from [`Conn::last_request_block`] and
    /// [`Conn::last_request_path`]), `path` the new path, encoded between them. Valid while
    /// [`Conn::encoder_generation`] is the one the block was encoded at and its encoding
    /// changed no table: `:path` never enters the HPACK table, so the other fields encode to
    /// the same bytes and the path's encoding depends on its value alone. The new block then
    /// is the last request block.
    ///
    /// # Errors
    /// As [`Conn::send_request_block`]; [`SendError::InvalidState`] when the block might not
    /// fit one frame (encode the request with [`Conn::send_request`] instead).
    pub fn send_request_with_path(
        &mut self,
        before: &[u8],
        path: &[u8],
        after: &[u8],
        head: bool,
        end_stream: bool,
    ) -> Result<StreamId, SendError> {
        // A literal's encoding is at most its length plus a 5-octet length prefix and the
        // name index octet (RFC 7541 §5.1, §6.2.2; Huffman only when shorter).
        let most = before.len() + path.len() + 6 + after.len();
        if most > self.peer.max_frame_size as usize {
            return Err(SendError::InvalidState);
        }
        let id = self.open_local_stream(head, end_stream)?;
        let start = headers_frame::begin_block(&mut self.out);
        let block_start = start + crate::http2::frame::HEAD_LEN;
        let generation = self.encoder.generation();
        self.out.extend_from_slice(before);
        let path_start = self.out.len() - block_start;
        self.encoder.path(path, &mut self.out);
        let path_end = self.out.len() - block_start;
        self.out.extend_from_slice(after);
        let len = self.out.len() - block_start;
        self.last_block = Some(LastBlock {
            start: block_start,
            len,
            path: path_start..path_end,
            before: generation,
            after: generation,
        });
        headers_frame::finish_block(&mut self.out, start, id, end_stream, self.peer.max_frame_size);
        self.budgets.control.credit(1);
        Ok(id)
    }

    /// The header block of the last [`Conn::send_request`] (or
    /// [`Conn::send_request_with_path`]) when it fit one HEADERS frame and is still in the
    /// send buffer (until [`Conn::poll_transmit`]), with the encoder generation before and
    /// after it was encoded: resendable with [`Conn::send_request_block`] while both equal
    /// [`Conn::encoder_generation`].
    pub fn last_request_block(&self) -> Option<(&[u8], u64, u64)> {
        let b = self.last_block.as_ref()?;
        let block = self.out.get(b.start..b.start + b.len)?;
        Some((block, b.before, b.after))
    }

    /// Where the `:path` field's encoding lies in [`Conn::last_request_block`]'s block.
    pub fn last_request_path(&self) -> Option<Range<usize>> {
        Some(self.last_block.as_ref()?.path.clone())
    }

    /// The HPACK encoder's generation (see [`Encoder::generation`](crate::http2::hpack::Encoder::generation)).
    pub fn encoder_generation(&self) -> u64 {
        self.encoder.generation()
    }

    /// The live stream `id` if it may still send a header section in `phase`.
    fn sendable(&self, id: StreamId, phase: Phase) -> Result<Key, SendError> {
        if self.closed {
            return Err(SendError::Closed);
        }
        let key = self.streams.key(id).ok_or(SendError::UnknownStream)?;
        match self.streams.slab.get(key) {
            Some(s) if s.state.can_send() && s.send_phase == phase => Ok(key),
            Some(_) => Err(SendError::InvalidState),
            None => Err(SendError::UnknownStream),
        }
    }

    /// Writes a header section on `key` and moves its send side along. Returns where its
    /// header block sits in `out` (offset, length).
    fn write_section<'f>(
        &mut self,
        key: Key,
        status: Option<u16>,
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
        end_stream: bool,
    ) -> Option<(usize, usize)> {
        let s = self.streams.get(key)?;
        let id = s.id;
        let start = headers_frame::begin_block(&mut self.out);
        {
            let mut b = self.encoder.block(&mut self.out);
            if let Some(status) = status {
                b.status(status);
            }
            write_fields(&mut b, fields);
        }
        let len = self.out.len() - start - crate::http2::frame::HEAD_LEN;
        headers_frame::finish_block(&mut self.out, start, id, end_stream, self.peer.max_frame_size);
        self.budgets.control.credit(1);
        if end_stream {
            self.end_send(key);
        }
        Some((start + crate::http2::frame::HEAD_LEN, len))
    }

    /// We sent END_STREAM on `key`.
    fn end_send(&mut self, key: Key) {
        if let Some(s) = self.streams.get(key) {
            s.state.send_end();
        }
        self.streams.slab.unlink(BLOCKED, key);
        self.settle(key);
    }

    /// Sends the final response head on a stream the peer opened (server role): `:status`
    /// and `fields` (lowercase names, none connection-specific, RFC 9113 §8.2.2). With
    /// `end_stream` the response has no body.
    ///
    /// # Errors
    /// [`SendError::WrongRole`]; [`SendError::UnknownStream`] if the stream is gone (e.g. the
    /// peer reset it); [`SendError::InvalidState`] after a final head; [`SendError::InvalidStatus`]
    /// for a status outside 200..=599.
    pub fn send_response<'f>(
        &mut self,
        stream: StreamId,
        status: u16,
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
        end_stream: bool,
    ) -> Result<(), SendError> {
        if self.role != Role::Server {
            return Err(SendError::WrongRole);
        }
        if !(200..=599).contains(&status) {
            return Err(SendError::InvalidStatus);
        }
        let key = self.sendable(stream, Phase::Head)?;
        if let Some(s) = self.streams.get(key) {
            s.send_phase = Phase::Body;
        }
        let before = self.encoder.generation();
        let block = self.write_section(key, Some(status), fields, end_stream);
        let after = self.encoder.generation();
        self.last_block = block
            .filter(|&(_, len)| len <= self.peer.max_frame_size as usize)
            .map(|(start, len)| LastBlock { start, len, path: 0..0, before, after });
        Ok(())
    }

    /// Sends a final response head encoded earlier on this connection, by copying its header
    /// block (kept with [`Conn::keep_response_block`]): a server repeating a response skips
    /// the encoding. Only while HPACK would produce the same bytes again: the block is this
    /// connection's and the encoder's table has not changed since ([`Conn::can_send_block`]).
    /// With `end_stream` the response has no body.
    ///
    /// # Errors
    /// [`SendError::StaleBlock`] for a block from another connection or from before a table
    /// change; as [`Conn::send_response`]; [`SendError::InvalidState`] when the block does not
    /// fit one frame of the peer's SETTINGS_MAX_FRAME_SIZE. Nothing is queued: encode the head
    /// with [`Conn::send_response`] instead.
    pub fn send_response_block(
        &mut self,
        stream: StreamId,
        block: &HeaderBlock,
        end_stream: bool,
    ) -> Result<(), SendError> {
        if self.role != Role::Server {
            return Err(SendError::WrongRole);
        }
        // RFC 7541 §2.3.2: the block's indices name entries of the table it was encoded
        // against; sent against another, the peer would decode other fields.
        if !self.can_send_block(block) {
            return Err(SendError::StaleBlock);
        }
        let key = self.sendable(stream, Phase::Head)?;
        let block = block.as_bytes();
        if block.len() > self.peer.max_frame_size as usize {
            return Err(SendError::InvalidState);
        }
        if let Some(s) = self.streams.get(key) {
            s.send_phase = Phase::Body;
        }
        let start = headers_frame::begin_block(&mut self.out);
        self.out.extend_from_slice(block);
        headers_frame::finish_block(
            &mut self.out,
            start,
            stream,
            end_stream,
            self.peer.max_frame_size,
        );
        self.budgets.control.credit(1);
        if end_stream {
            self.end_send(key);
        }
        Ok(())
    }

    /// Keeps the header block of the last [`Conn::send_response`] in `into` (reusing its
    /// allocation) when it can be sent again by [`Conn::send_response_block`]: it fit one
    /// HEADERS frame, is still in the send buffer (until [`Conn::poll_transmit`]) and its
    /// encoding changed no table. Otherwise `into` keeps nothing. Returns whether it keeps the
    /// block.
    pub fn keep_response_block(&self, into: &mut HeaderBlock) -> bool {
        match self.last_request_block() {
            Some((block, before, after)) if before == after => {
                into.set(block, self.encoder_stamp, after);
                true
            }
            _ => {
                into.clear();
                false
            }
        }
    }

    /// Whether `block` is this connection's and still valid: the encoder is at the generation
    /// it was encoded at, so encoding its head again would produce the same bytes.
    #[inline]
    pub fn can_send_block(&self, block: &HeaderBlock) -> bool {
        block.valid_at(self.encoder_stamp, self.encoder.generation())
    }

    /// Sends an interim 1xx response head (server role), before the final one (RFC 9113
    /// §8.1). 101 is not allowed in HTTP/2 (§8.6).
    ///
    /// # Errors
    /// As [`Conn::send_response`]; [`SendError::InvalidStatus`] outside 100..=199 or for 101.
    pub fn send_informational<'f>(
        &mut self,
        stream: StreamId,
        status: u16,
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
    ) -> Result<(), SendError> {
        if self.role != Role::Server {
            return Err(SendError::WrongRole);
        }
        if !(100..=199).contains(&status) || status == 101 {
            return Err(SendError::InvalidStatus);
        }
        let key = self.sendable(stream, Phase::Head)?;
        self.write_section(key, Some(status), fields, false);
        Ok(())
    }

    /// Ends a message with trailers (RFC 9113 §8.1): a HEADERS frame with END_STREAM after
    /// the body. Both roles.
    ///
    /// # Errors
    /// [`SendError::UnknownStream`]; [`SendError::InvalidState`] before the head or after
    /// END_STREAM.
    pub fn send_trailers<'f>(
        &mut self,
        stream: StreamId,
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
    ) -> Result<(), SendError> {
        let key = self.sendable(stream, Phase::Body)?;
        self.write_section(key, None, fields, true);
        Ok(())
    }

    /// Sends body octets on `stream` (both roles), as many as the stream's and the
    /// connection's send windows (RFC 9113 §6.9) and [`Config::max_send_buffer`] allow, in
    /// DATA frames of at most the peer's SETTINGS_MAX_FRAME_SIZE. Returns how many it took;
    /// `end_stream` applies only if it took them all. When it took fewer, the caller keeps the
    /// rest and calls again on [`Event::Writable`](super::Event::Writable) for this stream.
    /// An empty `data` with `end_stream` always goes (an empty DATA frame needs no window).
    ///
    /// # Errors
    /// [`SendError::UnknownStream`] (e.g. the peer reset the stream); [`SendError::InvalidState`]
    /// before the head or after END_STREAM.
    ///
    /// [`Config::max_send_buffer`]: crate::http2::Config::max_send_buffer
    pub fn send_data(
        &mut self,
        stream: StreamId,
        data: &[u8],
        end_stream: bool,
    ) -> Result<usize, SendError> {
        let key = self.sendable(stream, Phase::Body)?;
        let n = self.stream_capacity(key).min(data.len());
        let all = n == data.len();
        let max = self.peer.max_frame_size as usize;
        let mut frames = 0;
        let mut rest = &data[..n];
        while !rest.is_empty() {
            let (chunk, tail) = rest.split_at(rest.len().min(max));
            data::encode(stream, chunk, end_stream && all && tail.is_empty(), &mut self.out);
            rest = tail;
            frames += 1;
        }
        self.data_sent(key, stream, n, frames, all, end_stream);
        Ok(n)
    }

    /// As [`Conn::send_data`], for `len` body octets the caller writes in place: `fill` is
    /// handed the payload of each DATA frame, in order, inside the send buffer, and must fill
    /// it whole, or return `false`. A file is read straight into the frames so, with no
    /// buffer of its own and no copy from it. Returns how many octets were sent, at most `len`
    /// (what the windows allow); `end_stream` applies only if all `len` went.
    ///
    /// # Examples
    /// A server answering with five octets written in place:
    /// ```
    /// use std::time::Instant;
    /// use peregrine::http2::{Config, Conn, Role, StreamId};
    /// let now = Instant::now();
    /// let mut server = Conn::new(Role::Server, Config::default(), now);
    /// let mut input = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    /// input.extend_from_slice(b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"); // SETTINGS
    /// // HEADERS on stream 1, END_STREAM | END_HEADERS: GET, http, /, localhost.
    /// input.extend_from_slice(b"\x00\x00\x0e\x01\x05\x00\x00\x00\x01\x82\x86\x84\x41\x09localhost");
    /// let mut at = 0;
    /// while at < input.len() {
    ///     let (used, _event) = server.recv(&input[at..], now);
    ///     at += used;
    /// }
    /// let stream = StreamId::new(1);
    /// server.send_response(stream, 200, [], false).unwrap();
    /// let sent = server.send_data_with(stream, 5, true, |payload| {
    ///     payload.copy_from_slice(b"hello");
    ///     true
    /// });
    /// assert_eq!(sent, Ok(5));
    /// ```
    ///
    /// # Errors
    /// As [`Conn::send_data`]; [`SendError::FillFailed`] when `fill` returned `false`: nothing
    /// was queued and no window was used.
    pub fn send_data_with(
        &mut self,
        stream: StreamId,
        len: usize,
        end_stream: bool,
        mut fill: impl FnMut(&mut [u8]) -> bool,
    ) -> Result<usize, SendError> {
        let key = self.sendable(stream, Phase::Body)?;
        let n = self.stream_capacity(key).min(len);
        let all = n == len;
        let max = self.peer.max_frame_size as usize;
        let start = self.out.len();
        let mut frames = 0;
        let mut left = n;
        while left > 0 {
            let size = left.min(max);
            left -= size;
            data::encode_head(stream, size, end_stream && all && left == 0, &mut self.out);
            let at = self.out.len();
            self.out.resize(at + size, 0);
            if !fill(&mut self.out[at..]) {
                self.out.truncate(start);
                return Err(SendError::FillFailed);
            }
            frames += 1;
        }
        self.data_sent(key, stream, n, frames, all, end_stream);
        Ok(n)
    }

    /// The bookkeeping after `frames` DATA frames carrying `n` octets were queued on `key`:
    /// an empty END_STREAM frame when nothing else could carry it, the windows, the stream's
    /// state.
    fn data_sent(
        &mut self,
        key: Key,
        stream: StreamId,
        n: usize,
        frames: u32,
        all: bool,
        end_stream: bool,
    ) {
        if n == 0 && all && end_stream {
            data::encode(stream, &[], true, &mut self.out);
        }
        // Two WINDOW_UPDATEs (stream and connection) per DATA frame are the peer's due.
        self.budgets.control.credit(2 * frames);
        let n32 = n as u32;
        self.send_window.consume(n32);
        if let Some(s) = self.streams.get(key) {
            s.send.consume(n32);
        }
        if !all {
            self.streams.slab.push_back(BLOCKED, key);
        } else if end_stream {
            self.end_send(key);
        }
    }

    /// How many octets [`Conn::send_data`] would take on `stream` now (0 for an unknown
    /// stream).
    pub fn send_capacity(&self, stream: StreamId) -> usize {
        self.streams.key(stream).map_or(0, |key| self.stream_capacity(key))
    }

    /// What the peer's flow-control windows let `stream` send (the stream's and the
    /// connection's, the smaller), whatever room the send buffer has: 0 means only the
    /// peer's WINDOW_UPDATE lets it send again (RFC 9113 §6.9). 0 for an unknown stream.
    pub fn send_window(&self, stream: StreamId) -> usize {
        let conn = self.send_window.available() as usize;
        self.streams
            .key(stream)
            .and_then(|key| self.streams.slab.get(key))
            .map_or(0, |s| (s.send.available() as usize).min(conn))
    }

    /// Resets a stream (both roles): RST_STREAM(`reason`) is queued, the stream is closed and
    /// its unreleased received octets are returned to the connection window. Frames the peer
    /// still sends on it are ignored (RFC 9113 §5.1). Resetting an unknown or finished stream
    /// does nothing. A server cancelling a request it will not answer uses `CANCEL` or
    /// `REFUSED_STREAM` (the latter tells the client it may retry, §8.7).
    pub fn reset(&mut self, stream: StreamId, reason: Reason) {
        if self.closed {
            return;
        }
        let Some(key) = self.streams.key(stream) else { return };
        if self.streams.slab.get(key).is_some_and(|s| s.state.is_closed()) {
            return;
        }
        RstStream { stream, reason }.encode(&mut self.out);
        // The rest of a DATA frame arriving for it is dropped, not handed out.
        if let Inbound::Data { stream: s, deliver, .. } = &mut self.inbound {
            if *s == stream {
                *deliver = false;
            }
        }
        // The application reset it: no event tells it so.
        if let Some(s) = self.streams.get(key) {
            s.announced = false;
        }
        self.end_stream(key, Closed::ResetLocally(reason), false);
    }

    /// Sends a PING with `payload`; the peer's answer comes as [`Event::PingAck`](super::Event::PingAck)
    /// (keep-alive, round-trip measurement).
    pub fn ping(&mut self, payload: [u8; 8]) {
        if !self.closed {
            Ping { ack: false, payload }.encode(&mut self.ctrl);
        }
    }
}
