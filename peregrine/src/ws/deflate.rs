//! permessage-deflate's compression and decompression of a message (RFC 7692 §7.2), over
//! flate2's zlib-rs backend (the crate feature `ws-deflate`; without it this module is empty
//! and the extension is never negotiated).
//!
//! A message is one raw deflate stream piece: the sender compresses it ending with a sync
//! flush and removes the empty stored block's `00 00 ff ff` that the flush ends with
//! (§7.2.1); the receiver appends those four octets back and inflates (§7.2.2). With context
//! takeover the LZ77 window carries from message to message; without it each message starts
//! afresh.

/// Whether this build can negotiate permessage-deflate.
pub const AVAILABLE: bool = cfg!(feature = "ws-deflate");

#[cfg(feature = "ws-deflate")]
pub use imp::{Compressor, Inflater};

#[cfg(feature = "ws-deflate")]
mod imp {
    use bytes::BytesMut;
    use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

    use crate::ws::error::Error;

    /// What a sync flush ends with (RFC 7692 §7.2.1), removed by the sender, appended back by
    /// the receiver.
    const TAIL: [u8; 4] = [0x00, 0x00, 0xff, 0xff];

    /// The most output space one inflate call gets: the unit of the size check.
    const INFLATE_CHUNK: usize = 16 * 1024;

    /// The output space of an inflate call's first round: this many times the compressed
    /// input, then doubling while the rounds fill it, up to [`INFLATE_CHUNK`]. The room is
    /// zeroed before zlib writes into it, so a small message must not pay for a whole chunk.
    const INFLATE_RATIO: usize = 8;

    /// The least output space of a round (the flush's 4-octet tail may release more).
    const INFLATE_MIN: usize = 256;

    /// One end's compressor.
    pub struct Compressor {
        inner: Compress,
        /// No context takeover: reset after every message.
        reset: bool,
        /// The last message compressed, reused.
        out: Vec<u8>,
    }

    impl Compressor {
        /// A compressor at `level` (0-9) with a 2^`window_bits` window (clamped to 9..=15: see
        /// [`DeflateConfig::server_max_window_bits`](crate::ws::DeflateConfig) on 8).
        pub fn new(level: u32, window_bits: u8, no_context_takeover: bool) -> Compressor {
            let level = Compression::new(level.min(9));
            let inner = Compress::new_with_window_bits(level, false, window_bits.clamp(9, 15));
            Compressor { inner, reset: no_context_takeover, out: Vec::new() }
        }

        /// Compresses a whole message and returns its payload: raw deflate ending in a sync
        /// flush, without the flush's final `00 00 ff ff` (RFC 7692 §7.2.1).
        ///
        /// # Examples
        /// ```
        /// use peregrine::ws::deflate::{Compressor, Inflater};
        /// let mut c = Compressor::new(6, 15, false);
        /// // RFC 7692 §7.2.3.1: "Hello" compressed.
        /// assert_eq!(c.compress(b"Hello"), b"\xf2\x48\xcd\xc9\xc9\x07\x00");
        /// ```
        pub fn compress(&mut self, msg: &[u8]) -> &[u8] {
            self.out.clear();
            let mut input = msg;
            loop {
                self.out.reserve((input.len() / 2).max(64));
                let before = self.inner.total_in();
                // A zlib error here would be a misuse of the stream, which this loop does not
                // do; the output then ends short and the peer fails the message.
                if self.inner.compress_vec(input, &mut self.out, FlushCompress::Sync).is_err() {
                    break;
                }
                let used = (self.inner.total_in() - before) as usize;
                input = &input[used..];
                // zlib: the flush is complete once a call returns with output space left.
                if input.is_empty() && self.out.len() < self.out.capacity() {
                    break;
                }
            }
            if self.out.ends_with(&TAIL) {
                self.out.truncate(self.out.len() - TAIL.len());
            }
            // zlib makes nothing of a sync flush right after another (an empty message with
            // context takeover); RFC 7692 §7.2.3.6: an empty message is the single octet 0x00
            // (an empty stored block's header bits, the tail then completing the block).
            if self.out.is_empty() {
                self.out.push(0x00);
            }
            if self.reset {
                self.inner.reset();
            }
            &self.out
        }

        /// Releases the output buffer's memory.
        pub fn shrink(&mut self) {
            self.out = Vec::new();
        }
    }

    /// One end's inflater.
    pub struct Inflater {
        inner: Decompress,
        /// No context takeover: reset after every message.
        reset: bool,
        /// The stream ended with a final block (BFINAL): what follows in the message is
        /// ignored and the next message starts a new stream.
        ended: bool,
    }

    impl Inflater {
        /// An inflater for a peer compressing with at most a 2^`window_bits` window (a larger
        /// window decodes a smaller one's output: 8 is inflated with 9).
        pub fn new(window_bits: u8, no_context_takeover: bool) -> Inflater {
            let inner = Decompress::new_with_window_bits(false, window_bits.clamp(9, 15));
            Inflater { inner, reset: no_context_takeover, ended: false }
        }

        /// Inflates the next piece of a compressed message's payload, appending to `out`,
        /// which may hold at most `limit` octets.
        ///
        /// # Errors
        /// [`Error::MessageTooBig`] as soon as the output would pass `limit` (it is never
        /// given more than one chunk of room past what it may hold: a deflate bomb costs
        /// `limit` octets at most); [`Error::Inflate`] for data that does not inflate.
        ///
        /// # Examples
        /// ```
        /// use bytes::BytesMut;
        /// use peregrine::ws::deflate::Inflater;
        /// let mut i = Inflater::new(15, false);
        /// let mut out = BytesMut::new();
        /// i.inflate(b"\xf2\x48\xcd\xc9\xc9\x07\x00", &mut out, 1024).unwrap();
        /// i.finish(&mut out, 1024).unwrap();
        /// assert_eq!(&out[..], b"Hello");
        /// ```
        pub fn inflate(
            &mut self,
            mut input: &[u8],
            out: &mut BytesMut,
            limit: usize,
        ) -> Result<(), Error> {
            // Past the limit already (a call after `MessageTooBig`): no more room at all.
            if out.len() > limit {
                return Err(Error::MessageTooBig);
            }
            let mut chunk =
                input.len().saturating_mul(INFLATE_RATIO).clamp(INFLATE_MIN, INFLATE_CHUNK);
            while !self.ended {
                let start = out.len();
                // One octet of room past the limit: producing it proves the message too big.
                let room = limit.saturating_sub(start).saturating_add(1).min(chunk);
                out.resize(start + room, 0);
                let (in_before, out_before) = (self.inner.total_in(), self.inner.total_out());
                let status = self.inner.decompress(input, &mut out[start..], FlushDecompress::None);
                let used = (self.inner.total_in() - in_before) as usize;
                let made = (self.inner.total_out() - out_before) as usize;
                out.truncate(start + made);
                input = &input[used..];
                match status {
                    Ok(Status::StreamEnd) => self.ended = true,
                    Ok(Status::Ok | Status::BufError) => {}
                    Err(_) => return Err(Error::Inflate),
                }
                if out.len() > limit {
                    return Err(Error::MessageTooBig);
                }
                // Done when the input is used and the inflater did not fill its room (it may
                // hold output back when the room runs out).
                if (input.is_empty() && made < room) || (used == 0 && made == 0) {
                    break;
                }
                chunk = chunk.saturating_mul(2).min(INFLATE_CHUNK);
            }
            Ok(())
        }

        /// The message ended: inflates the flush's tail (RFC 7692 §7.2.2: "Append 4 octets of
        /// 0x00 0x00 0xff 0xff to the tail end of the payload of the message"), then resets for
        /// the next message when there is no context takeover (or the stream ended).
        ///
        /// # Errors
        /// As [`Inflater::inflate`].
        pub fn finish(&mut self, out: &mut BytesMut, limit: usize) -> Result<(), Error> {
            let result = self.inflate(&TAIL, out, limit);
            if self.reset || self.ended {
                self.inner.reset(false);
                self.ended = false;
            }
            result
        }
    }
}

#[cfg(all(test, feature = "ws-deflate"))]
mod tests {
    use super::*;
    use bytes::BytesMut;

    use crate::ws::error::Error;

    fn inflate_all(i: &mut Inflater, payload: &[u8], limit: usize) -> Result<Vec<u8>, Error> {
        let mut out = BytesMut::new();
        i.inflate(payload, &mut out, limit)?;
        i.finish(&mut out, limit)?;
        Ok(out.to_vec())
    }

    /// RFC 7692 §7.2.3: the examples of the section, inflated.
    #[test]
    fn rfc7692_7_2_3_examples() {
        let mut i = Inflater::new(15, false);
        assert_eq!(inflate_all(&mut i, b"\xf2\x48\xcd\xc9\xc9\x07\x00", 100).unwrap(), b"Hello");
        // §7.2.3.2: the same message again, with context takeover: a back-reference.
        assert_eq!(inflate_all(&mut i, b"\xf2\x00\x11\x00\x00", 100).unwrap(), b"Hello");
        // §7.2.3.3: a stored (uncompressed) block.
        let mut i = Inflater::new(15, true);
        let stored = b"\x00\x05\x00\xfa\xffHello\x00";
        assert_eq!(inflate_all(&mut i, stored, 100).unwrap(), b"Hello");
        // §7.2.3.4: a BFINAL block, then the next message in a new stream.
        let mut i = Inflater::new(15, false);
        assert_eq!(
            inflate_all(&mut i, b"\xf3\x48\xcd\xc9\xc9\x07\x00\x00", 100).unwrap(),
            b"Hello"
        );
        assert_eq!(inflate_all(&mut i, b"\xf2\x48\xcd\xc9\xc9\x07\x00", 100).unwrap(), b"Hello");
        // §7.2.3.6: an empty message.
        let mut i = Inflater::new(15, false);
        assert_eq!(inflate_all(&mut i, b"\x00", 100).unwrap(), b"");
    }

    /// Every combination of window and context takeover round-trips, message after message,
    /// fed to the inflater in pieces.
    #[test]
    fn round_trips_with_and_without_context_takeover() {
        let text = b"The quick brown fox jumps over the lazy dog; the lazy dog sleeps. ".repeat(40);
        for bits in [8u8, 9, 12, 15] {
            for nct in [false, true] {
                let mut c = Compressor::new(6, bits, nct);
                let mut i = Inflater::new(bits, nct);
                for n in 0..6 {
                    let msg = &text[..text.len() * n / 5];
                    let payload = c.compress(msg).to_vec();
                    let mut out = BytesMut::new();
                    for piece in payload.chunks(7) {
                        i.inflate(piece, &mut out, 1 << 20).unwrap();
                    }
                    i.finish(&mut out, 1 << 20).unwrap();
                    assert_eq!(&out[..], msg, "bits {bits} nct {nct} n {n}");
                }
            }
        }
        // An empty message is the single octet 0x00 (§7.2.3.6), also right after another
        // message with context takeover (when zlib's second sync flush makes nothing).
        let mut c = Compressor::new(1, 15, false);
        let mut i = Inflater::new(15, false);
        for msg in [&b""[..], b"abc", b"", b"", b"abc"] {
            let payload = c.compress(msg).to_vec();
            assert!(!payload.is_empty());
            assert_eq!(inflate_all(&mut i, &payload, 100).unwrap(), msg);
        }
    }

    /// 100 MB of zeros compressed (~100 KB): inflation stops at the limit with memory to
    /// match.
    #[test]
    fn a_deflate_bomb_stops_at_the_limit() {
        let mut c = Compressor::new(9, 15, false);
        let mut bomb = Vec::new();
        let zeros = vec![0u8; 1 << 20];
        // One stream, a megabyte at a time (sync flushes between are valid deflate).
        for _ in 0..100 {
            bomb.extend_from_slice(c.compress(&zeros));
            bomb.extend_from_slice(&[0, 0, 0xff, 0xff]);
        }
        assert!(bomb.len() < 1 << 20, "{}", bomb.len());
        let limit = 1 << 20;
        let mut i = Inflater::new(15, false);
        let mut out = BytesMut::new();
        let got = bomb.chunks(4096).try_for_each(|piece| i.inflate(piece, &mut out, limit));
        assert_eq!(got, Err(Error::MessageTooBig));
        assert!(out.len() <= limit + 1 && out.capacity() <= 4 * limit, "{}", out.capacity());
    }

    /// Fuzzer regression (`ws_conn`, the inflater alone): after a message met the limit,
    /// `finish` (or another `inflate`) added one octet more each time: a call starting past
    /// the limit was still given one octet of room. It now fails at once.
    #[test]
    fn fuzz_no_output_past_the_limit_after_the_limit_was_met() {
        let mut c = Compressor::new(6, 15, false);
        let payload = c.compress(&[b'a'; 1000]).to_vec();
        let mut i = Inflater::new(15, false);
        let mut out = BytesMut::new();
        assert_eq!(i.inflate(&payload, &mut out, 100), Err(Error::MessageTooBig));
        assert_eq!(out.len(), 101);
        assert_eq!(i.finish(&mut out, 100), Err(Error::MessageTooBig));
        assert_eq!(i.inflate(&payload, &mut out, 100), Err(Error::MessageTooBig));
        assert_eq!(out.len(), 101);
    }

    #[test]
    fn garbage_does_not_inflate() {
        let mut i = Inflater::new(15, false);
        assert_eq!(inflate_all(&mut i, b"\xff\xff\xff\xff", 100), Err(Error::Inflate));
    }
}
