//! Incremental UTF-8 validation of text messages (RFC 6455 §8.1, RFC 3629 §4).
//!
//! A text message arrives in pieces (frames, reads), and a code point may be split between
//! two of them. [`Utf8`] validates each piece as it comes, carrying an unfinished code point
//! over, and fails as soon as the octets seen can no longer begin valid UTF-8: §8.1 "When an
//! endpoint is to interpret a byte stream as UTF-8 but finds that the byte stream is not, in
//! fact, a valid UTF-8 stream, that endpoint MUST _Fail the WebSocket Connection_", and
//! waiting for the message's end would let a peer make us buffer a message we will refuse.

/// Whether `bytes` are valid UTF-8, whole.
#[inline]
pub(crate) fn is_valid(bytes: &[u8]) -> bool {
    bytes.is_ascii() || std::str::from_utf8(bytes).is_ok()
}

/// The state between pieces: the octets of an unfinished code point (a valid prefix of one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Utf8 {
    partial: [u8; 4],
    len: u8,
}

/// The octets seen cannot begin valid UTF-8.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Invalid;

impl Utf8 {
    /// A validator at the start of a message.
    pub const fn new() -> Utf8 {
        Utf8 { partial: [0; 4], len: 0 }
    }

    /// Validates the next piece of the message.
    ///
    /// # Errors
    /// [`Invalid`] once the octets so far cannot begin valid UTF-8 (an invalid octet, an
    /// overlong form, a surrogate, a code point over U+10FFFF), even if the piece ends in the
    /// middle of the offending sequence.
    ///
    /// # Examples
    /// ```
    /// use peregrine::ws::utf8::Utf8;
    /// let mut v = Utf8::new();
    /// let euro = "\u{20ac}".as_bytes(); // e2 82 ac
    /// assert!(v.feed(&euro[..1]).is_ok());
    /// assert!(v.feed(&euro[1..]).is_ok());
    /// assert!(v.finish().is_ok());
    /// // A surrogate's lead (ed a0) fails at its second octet.
    /// assert!(Utf8::new().feed(b"\xed\xa0").is_err());
    /// ```
    pub fn feed(&mut self, mut piece: &[u8]) -> Result<(), Invalid> {
        if self.len > 0 {
            // Complete the carried code point from the piece's first octets.
            let have = usize::from(self.len);
            let need = width(self.partial[0]) - have;
            let take = need.min(piece.len());
            self.partial[have..have + take].copy_from_slice(&piece[..take]);
            let now = have + take;
            match std::str::from_utf8(&self.partial[..now]) {
                Ok(_) => self.len = 0,
                Err(e) if e.error_len().is_none() => {
                    self.len = now as u8;
                    return Ok(());
                }
                Err(_) => return Err(Invalid),
            }
            piece = &piece[take..];
        }
        if piece.is_ascii() {
            return Ok(());
        }
        match std::str::from_utf8(piece) {
            Ok(_) => Ok(()),
            // `error_len() == None`: the piece ends inside a code point whose octets so far
            // are a valid prefix: carried over to the next piece.
            Err(e) if e.error_len().is_none() => {
                let tail = &piece[e.valid_up_to()..];
                self.partial[..tail.len()].copy_from_slice(tail);
                self.len = tail.len() as u8;
                Ok(())
            }
            Err(_) => Err(Invalid),
        }
    }

    /// The message ended.
    ///
    /// # Errors
    /// [`Invalid`] if it ended inside a code point.
    pub fn finish(&mut self) -> Result<(), Invalid> {
        let ended_inside = self.len > 0;
        *self = Utf8::new();
        if ended_inside { Err(Invalid) } else { Ok(()) }
    }
}

/// The length of the sequence a lead octet begins (the carried octets are a valid prefix, so
/// the lead is 0xC2..=0xF4).
fn width(lead: u8) -> usize {
    match lead {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Case {
        input: &'static [u8],
        /// The octets after which the validator must have failed (`None`: valid whole).
        fails_by: Option<usize>,
    }

    /// Each row fed whole, a byte at a time, and split at every point: all agree, and an
    /// invalid row fails by the octet that makes it so.
    #[test]
    fn any_split_and_fail_fast() {
        let cases = [
            Case { input: b"", fails_by: None },
            Case { input: b"hello", fails_by: None },
            Case { input: "\u{3ba}\u{1f79}\u{3c3}\u{3bc}\u{3b5}".as_bytes(), fails_by: None },
            Case {
                input: "\u{10ffff}\u{fffd}\u{80}\u{7ff}\u{800}\u{ffff}".as_bytes(),
                fails_by: None,
            },
            Case { input: "a\u{1f600}b".as_bytes(), fails_by: None },
            Case { input: b"\xff", fails_by: Some(1) },
            Case { input: b"ab\x80", fails_by: Some(3) },
            Case { input: b"\xc0\xaf", fails_by: Some(1) },
            Case { input: b"\xc1\xbf", fails_by: Some(1) },
            // Overlong 3- and 4-octet forms fail at their second octet.
            Case { input: b"\xe0\x80\xaf", fails_by: Some(2) },
            Case { input: b"\xf0\x80\x80\xaf", fails_by: Some(2) },
            // Surrogates (U+D800..U+DFFF).
            Case { input: b"\xed\xa0\x80", fails_by: Some(2) },
            Case { input: b"\xed\xbf\xbf", fails_by: Some(2) },
            // Over U+10FFFF.
            Case { input: b"\xf4\x90\x80\x80", fails_by: Some(2) },
            Case { input: b"\xf5\x80\x80\x80", fails_by: Some(1) },
            // Autobahn 6.4.1: valid text, then a code point over U+10FFFF.
            Case {
                input: b"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xf4\x90\x80\x80edited",
                fails_by: Some(13),
            },
            // A truncated sequence followed by ASCII.
            Case { input: b"\xe2\x82a", fails_by: Some(3) },
            // Ending inside a code point fails at the end only.
            Case { input: b"ok\xe2\x82", fails_by: Some(5) },
            Case { input: b"\xf0\x9f\x98", fails_by: Some(4) },
        ];
        for c in &cases {
            let n = c.input.len();
            // `fails_by == n + 1` means: only `finish` fails.
            let run = |pieces: &[&[u8]]| -> Option<usize> {
                let mut v = Utf8::new();
                let mut seen = 0;
                for p in pieces {
                    seen += p.len();
                    if v.feed(p).is_err() {
                        return Some(seen);
                    }
                }
                v.finish().err().map(|_| n + 1)
            };
            let want = c.fails_by.map(|at| if at > n { n + 1 } else { at });
            let finish_only = want == Some(n + 1);
            // Whole.
            let whole = run(&[c.input]);
            assert_eq!(whole.is_some(), want.is_some(), "{:x?}", c.input);
            // A byte at a time: fails exactly at the offending octet.
            let bytes: Vec<&[u8]> = c.input.chunks(1).collect();
            let got = run(&bytes);
            let want_exact = if finish_only || want.is_none() { want } else { c.fails_by };
            assert_eq!(got, want_exact, "bytewise {:x?}", c.input);
            // Two pieces at every cut.
            for cut in 0..=n {
                let got = run(&[&c.input[..cut], &c.input[cut..]]);
                assert_eq!(got.is_some(), want.is_some(), "{:x?} cut {cut}", c.input);
            }
        }
    }

    /// Every 1- and 2-octet input, and every 3-octet input led by 0xE0-0xF4, fed a byte at a
    /// time agrees with `std::str::from_utf8` on the whole.
    #[test]
    fn agrees_with_std_on_short_inputs() {
        let check = |input: &[u8]| {
            let mut v = Utf8::new();
            let fed = input.chunks(1).all(|b| v.feed(b).is_ok()) && v.finish().is_ok();
            assert_eq!(fed, std::str::from_utf8(input).is_ok(), "{input:x?}");
        };
        for a in 0..=255u8 {
            check(&[a]);
            for b in 0..=255u8 {
                check(&[a, b]);
            }
        }
        for a in 0xe0..=0xf4u8 {
            for b in 0x70..=0xc0u8 {
                for c in 0x70..=0xc0u8 {
                    check(&[a, b, c]);
                    check(&[a, b, c, 0x80]);
                }
            }
        }
    }
}
