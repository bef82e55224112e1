//! A received field block that repeats the last one: its decoded list and its §8 verdict are
//! kept instead of worked out again.
//!
//! A peer answering the same way sends the same block again and again (a server's response
//! head between two Date changes, a load generator's request). HPACK decoding depends only on
//! the block's bytes and the decoder's state (RFC 7541 §3.2), and the message checks (RFC 9113
//! §8.1-§8.3) only on the list and the kind of section. So a block equal to the last one
//! decodes to the list the connection still holds, and passes or fails the same checks, in
//! two cases:
//! - the block left the decoder's state unchanged (indices, literals the table does not keep)
//!   and the decoder is still at that generation: every field is looked up as before;
//! - the block referred to nothing in the dynamic table and updated no size, so its list
//!   depends on its bytes alone: its incremental literals are inserted again from the list
//!   ([`Decoder::replay`]) instead of decoded again. nginx sends every response this way: each
//!   field a Huffman literal indexed again, never a reference to one.
//!
//! Either way the work is done once per run of repeats, not once per message.

use super::section::Info;
use super::validate::{self, Section};
use crate::http2::hpack::{Decoder, FieldList};

/// Blocks longer than this are not kept: comparing and copying them on every block would
/// cost more than decoding them does (response heads that repeat are a few dozen bytes).
const MAX_KEPT: usize = 256;

/// How the kept block can be taken again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kept {
    Nothing,
    /// While the decoder is at this generation, the one the block was decoded at and left.
    At(u64),
    /// Whenever the decoder [`replays`](Decoder::replays) it.
    Replayed,
}

/// The last block decoded, while the list it decoded to is the connection's current one.
#[derive(Debug)]
pub(super) struct Repeat {
    bytes: Vec<u8>,
    kept: Kept,
    /// The verdict of the checks on the current list, for the section they were run for.
    checked: Option<(Section, Result<Info, &'static str>)>,
}

impl Repeat {
    /// Nothing kept; allocates nothing until a block is.
    pub fn new() -> Repeat {
        Repeat { bytes: Vec::new(), kept: Kept::Nothing, checked: None }
    }

    /// Whether `block` repeats the kept one in a way that gives the current list again: if
    /// so, the decoder is brought to where decoding `block` would leave it, and `list`, which
    /// must be the list the kept block decoded to, is the block's list.
    #[inline]
    pub fn take_again(&mut self, block: &[u8], decoder: &mut Decoder, list: &FieldList) -> bool {
        match self.kept {
            Kept::Nothing => false,
            Kept::At(g) => g == decoder.generation() && self.bytes == block,
            Kept::Replayed => {
                let again = decoder.replays() && self.bytes == block;
                if again {
                    decoder.replay(list);
                }
                again
            }
        }
    }

    /// `block` was decoded into the current list, the decoder's generation going from
    /// `before` to where `decoder` is now (the list and its verdict are new).
    pub fn decoded(&mut self, block: &[u8], before: u64, decoder: &Decoder) {
        self.checked = None;
        self.kept = if block.len() > MAX_KEPT {
            Kept::Nothing
        } else if decoder.replays() {
            Kept::Replayed
        } else if decoder.generation() == before {
            Kept::At(before)
        } else {
            Kept::Nothing
        };
        if self.kept != Kept::Nothing {
            self.bytes.clear();
            self.bytes.extend_from_slice(block);
        }
    }

    /// The block did not decode: nothing is kept (the connection is failing anyway).
    pub fn forget(&mut self) {
        self.kept = Kept::Nothing;
        self.checked = None;
    }

    /// The §8 checks of the current `list` as `section`, run once per list and section.
    pub fn check(&mut self, list: &FieldList, section: Section) -> Result<Info, &'static str> {
        if let Some((s, verdict)) = self.checked {
            if s == section {
                return verdict;
            }
        }
        let verdict = validate::check(list, section);
        self.checked = Some((section, verdict));
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http2::hpack::DecodeError;

    /// What `Conn` does with a block: take the kept list again, or decode. `Ok(true)` for a
    /// repeat.
    fn arrive(
        r: &mut Repeat,
        d: &mut Decoder,
        list: &mut FieldList,
        block: &[u8],
    ) -> Result<bool, DecodeError> {
        let before = d.generation();
        if r.take_again(block, d, list) {
            return Ok(true);
        }
        d.decode(block, list)?;
        r.decoded(block, before, d);
        Ok(false)
    }

    fn fields(list: &FieldList) -> Vec<(Vec<u8>, Vec<u8>)> {
        list.iter().map(|f| (f.name.to_vec(), f.value.to_vec())).collect()
    }

    /// The dynamic table's entries, newest first, read by indexing each.
    fn table(d: &mut Decoder) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut list = FieldList::new(1 << 20);
        let mut block = Vec::new();
        for index in 62..62 + d.table_len() {
            // RFC 7541 §6.1: an indexed field.
            crate::http2::hpack::integer::encode(&mut block, 0x80, 7, index);
        }
        d.decode(&block, &mut list).unwrap();
        fields(&list)
    }

    #[test]
    fn an_equal_block_repeats_while_it_would_decode_the_same() {
        fn nothing(_: &mut Decoder) {}
        fn new_setting(d: &mut Decoder) {
            d.set_max_table_size(4096);
        }
        fn lower_setting(d: &mut Decoder) {
            d.set_max_table_size(64);
        }
        struct Case {
            why: &'static str,
            kept: &'static [u8],
            between: fn(&mut Decoder),
            block: &'static [u8],
            repeat: bool,
        }
        // Every case starts with "k: v" at dynamic index 62 ("\x40\x01k\x01v").
        let cases = [
            Case {
                why: "a reference to the table, at the same generation",
                kept: b"\x88\xbe",
                between: nothing,
                block: b"\x88\xbe",
                repeat: true,
            },
            Case {
                why: "other bytes",
                kept: b"\x88\xbe",
                between: nothing,
                block: b"\x88\xbf",
                repeat: false,
            },
            Case {
                why: "a prefix",
                kept: b"\x88\xbe",
                between: nothing,
                block: b"\x88",
                repeat: false,
            },
            Case {
                why: "a reference to the table, which a setting may have changed since",
                kept: b"\x88\xbe",
                between: new_setting,
                block: b"\x88\xbe",
                repeat: false,
            },
            Case {
                why: "incremental literals, no reference: replayed",
                kept: b"\x88\x76\x05nginx\x40\x01a\x01b",
                between: nothing,
                block: b"\x88\x76\x05nginx\x40\x01a\x01b",
                repeat: true,
            },
            Case {
                why: "replayed after a new setting that owes no size update",
                kept: b"\x40\x01a\x01b",
                between: new_setting,
                block: b"\x40\x01a\x01b",
                repeat: true,
            },
            Case {
                why: "a size update owed: the same bytes would fail (RFC 7541 §4.2)",
                kept: b"\x40\x01a\x01b",
                between: lower_setting,
                block: b"\x40\x01a\x01b",
                repeat: false,
            },
            Case {
                why: "an incremental literal, then a reference to it",
                kept: b"\x40\x01a\x01b\xbe",
                between: nothing,
                block: b"\x40\x01a\x01b\xbe",
                repeat: false,
            },
            Case {
                why: "an incremental literal on a name from the table",
                kept: b"\x7e\x01w",
                between: nothing,
                block: b"\x7e\x01w",
                repeat: false,
            },
            Case {
                why: "a size update",
                kept: b"\x3f\xe1\x1f\x88",
                between: nothing,
                block: b"\x3f\xe1\x1f\x88",
                repeat: false,
            },
            Case {
                why: "a literal without indexing on a new name",
                kept: b"\x00\x01k\x01v",
                between: new_setting,
                block: b"\x00\x01k\x01v",
                repeat: true,
            },
            Case {
                why: "a malformed field (an uppercase name) is decoded again",
                kept: b"\x40\x01K\x01v",
                between: nothing,
                block: b"\x40\x01K\x01v",
                repeat: false,
            },
            Case {
                why: "an empty block (an empty trailer section)",
                kept: b"",
                between: nothing,
                block: b"",
                repeat: true,
            },
        ];
        for c in cases {
            let mut r = Repeat::new();
            // `d` takes the repeat; `plain` decodes every block, as if nothing were kept.
            let (mut d, mut plain) = (Decoder::new(4096), Decoder::new(4096));
            let (mut list, mut plain_list) = (FieldList::new(4096), FieldList::new(4096));
            for block in [&b"\x40\x01k\x01v"[..], c.kept] {
                assert!(!arrive(&mut r, &mut d, &mut list, block).unwrap(), "{}", c.why);
                plain.decode(block, &mut plain_list).unwrap();
            }
            (c.between)(&mut d);
            (c.between)(&mut plain);
            let repeated = arrive(&mut r, &mut d, &mut list, c.block);
            let decoded = plain.decode(c.block, &mut plain_list);
            assert_eq!(repeated.is_ok(), decoded.is_ok(), "{}", c.why);
            assert_eq!(repeated.unwrap_or(false), c.repeat, "{}", c.why);
            if decoded.is_ok() {
                assert_eq!(fields(&list), fields(&plain_list), "{}", c.why);
                assert_eq!(list.malformed(), plain_list.malformed(), "{}", c.why);
                assert_eq!(table(&mut d), table(&mut plain), "{}", c.why);
            }
        }
        let long = [0x88; MAX_KEPT + 1];
        let (mut r, mut d, mut list) = (Repeat::new(), Decoder::new(4096), FieldList::new(4096));
        arrive(&mut r, &mut d, &mut list, &long).unwrap();
        assert!(!arrive(&mut r, &mut d, &mut list, &long).unwrap(), "past MAX_KEPT");
        arrive(&mut r, &mut d, &mut list, b"\x88").unwrap();
        r.forget();
        assert!(!arrive(&mut r, &mut d, &mut list, b"\x88").unwrap(), "a failed decode forgets");
    }

    #[test]
    fn nginx_responses_replayed_keep_the_table_in_step() {
        // Two nginx 1.22 response blocks (h2c, a 13-byte file) one second apart: each field a
        // Huffman literal, server, date, content-type, content-length and last-modified
        // indexed again every time, etag and accept-ranges not indexed.
        let first = hex(
            "887689aa6355e580ae212e1f6196df697e94134a693f75040138a08571b7ee34253168df5f87497ca58ae819aa5c0231336c96df697e94134a693f75040138a08571b7ee34253168df00832a47378afe5c8c0e05c90ab49fcf008919085ad2b583aa62a3848fd24a8f",
        );
        let second = hex(
            "887689aa6355e580ae212e1f6196df697e94134a693f75040138a08571b7ee34ca98b46f5f87497ca58ae819aa5c0231336c96df697e94134a693f75040138a08571b7ee34253168df00832a47378afe5c8c0e05c90ab49fcf008919085ad2b583aa62a3848fd24a8f",
        );
        let mut r = Repeat::new();
        let (mut d, mut plain) = (Decoder::new(4096), Decoder::new(4096));
        let (mut list, mut plain_list) = (FieldList::new(16384), FieldList::new(16384));
        let mut repeats = 0;
        // Enough responses to fill the 4,096-byte table several times over and evict.
        for i in 0..200 {
            let block = if i < 100 { &first } else { &second };
            repeats += usize::from(arrive(&mut r, &mut d, &mut list, block).unwrap());
            plain.decode(block, &mut plain_list).unwrap();
            assert_eq!(fields(&list), fields(&plain_list), "response {i}");
            assert_eq!(r.check(&list, Section::Response).map(|i| i.status), Ok(200));
        }
        assert_eq!(repeats, 198, "all but the first of each second");
        assert_eq!(d.table_len(), plain.table_len());
        assert_eq!(table(&mut d), table(&mut plain));
        assert_eq!(fields(&list)[2], (b"date".to_vec(), b"Tue, 24 Nov 2026 22:59:43 GMT".to_vec()));
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    #[test]
    fn the_verdict_is_kept_per_list_and_section() {
        let mut decoder = Decoder::new(4096);
        let mut list = FieldList::new(4096);
        let mut r = Repeat::new();
        // :status 200
        decoder.decode(b"\x88", &mut list).unwrap();
        r.decoded(b"\x88", 0, &decoder);
        assert_eq!(r.check(&list, Section::Response).map(|i| i.status), Ok(200));
        // The same list as trailers fails: the verdict is the section's, not the list's.
        assert!(r.check(&list, Section::Trailers).is_err());
        assert_eq!(r.check(&list, Section::Trailers), validate::check(&list, Section::Trailers));
        // A new list is checked afresh: :status 404 over the kept verdict for 200.
        r.check(&list, Section::Response).unwrap();
        decoder.decode(b"\x8d", &mut list).unwrap();
        r.decoded(b"\x8d", 0, &decoder);
        assert_eq!(r.check(&list, Section::Response).map(|i| i.status), Ok(404));
    }
}
