//! A received field block that repeats the last one: its decoded list and its §8 verdict are
//! kept instead of worked out again.
//!
//! A peer answering the same way sends the same block again and again (a server's response
//! head between two Date changes, a load generator's request): after the first, every field
//! is an index or a literal the table does not keep. HPACK decoding depends only on the
//! block's bytes and the decoder's state (RFC 7541 §3.2), and the message checks (RFC 9113
//! §8.1-§8.3) only on the list and the kind of section. So a block equal to the last one,
//! arriving while the decoder's generation is the one that block left unchanged, decodes to
//! the list the connection still holds, and passes or fails the same checks: done once per
//! run of repeats, not once per message. A block that changes the table (an incremental
//! literal, a size update) is never kept: decoding it again would change the table again.

use super::section::Info;
use super::validate::{self, Section};
use crate::http2::hpack::FieldList;

/// Blocks longer than this are not kept: comparing and copying them on every block would
/// cost more than decoding them does (response heads that repeat are a few dozen bytes).
const MAX_KEPT: usize = 256;

/// The last block decoded, while the list it decoded to is the connection's current one.
#[derive(Debug)]
pub(super) struct Repeat {
    bytes: Vec<u8>,
    /// The decoder generation that block was decoded at and left unchanged (blocks that change
    /// the table are never held).
    generation: u64,
    /// `bytes` is a block that can be repeated.
    held: bool,
    /// The verdict of the checks on the current list, for the section they were run for.
    checked: Option<(Section, Result<Info, &'static str>)>,
}

impl Repeat {
    /// Nothing kept; allocates nothing until a block is.
    pub fn new() -> Repeat {
        Repeat { bytes: Vec::new(), generation: 0, held: false, checked: None }
    }

    /// Whether decoding `block` at the decoder's `generation` would give the current list.
    #[inline]
    pub fn is_repeat(&self, block: &[u8], generation: u64) -> bool {
        self.held && self.generation == generation && self.bytes == block
    }

    /// `block` was decoded into the current list, the decoder's generation going from
    /// `before` to `after` (the list and its verdict are new).
    pub fn decoded(&mut self, block: &[u8], before: u64, after: u64) {
        self.checked = None;
        self.held = before == after && block.len() <= MAX_KEPT;
        if self.held {
            self.bytes.clear();
            self.bytes.extend_from_slice(block);
            self.generation = after;
        }
    }

    /// The block did not decode: nothing is kept (the connection is failing anyway).
    pub fn forget(&mut self) {
        self.held = false;
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

    #[test]
    fn only_an_equal_block_at_the_same_generation_repeats() {
        struct Case {
            kept: &'static [u8],
            before: u64,
            after: u64,
            block: &'static [u8],
            now: u64,
            repeat: bool,
        }
        let cases = [
            Case {
                kept: b"\x88\xbe",
                before: 3,
                after: 3,
                block: b"\x88\xbe",
                now: 3,
                repeat: true,
            },
            // Other bytes, or a prefix of the kept ones.
            Case {
                kept: b"\x88\xbe",
                before: 3,
                after: 3,
                block: b"\x88\xbf",
                now: 3,
                repeat: false,
            },
            Case { kept: b"\x88\xbe", before: 3, after: 3, block: b"\x88", now: 3, repeat: false },
            // The table changed since (a setting, another block).
            Case {
                kept: b"\x88\xbe",
                before: 3,
                after: 3,
                block: b"\x88\xbe",
                now: 4,
                repeat: false,
            },
            // The block changed the table itself: decoding it again would change it again.
            Case {
                kept: b"\x40\x01k\x01v",
                before: 3,
                after: 4,
                block: b"\x40\x01k\x01v",
                now: 4,
                repeat: false,
            },
            // Empty blocks repeat too (an empty trailer section).
            Case { kept: b"", before: 0, after: 0, block: b"", now: 0, repeat: true },
        ];
        for c in cases {
            let mut r = Repeat::new();
            r.decoded(c.kept, c.before, c.after);
            assert_eq!(r.is_repeat(c.block, c.now), c.repeat, "{:?} then {:?}", c.kept, c.block);
        }
        let long = [0x88; MAX_KEPT + 1];
        let mut r = Repeat::new();
        r.decoded(&long, 0, 0);
        assert!(!r.is_repeat(&long, 0), "a block past MAX_KEPT is not kept");
        r.decoded(b"\x88", 0, 0);
        r.forget();
        assert!(!r.is_repeat(b"\x88", 0), "a failed decode forgets");
    }

    #[test]
    fn the_verdict_is_kept_per_list_and_section() {
        let mut decoder = crate::http2::hpack::Decoder::new(4096);
        let mut list = FieldList::new(4096);
        let mut r = Repeat::new();
        // :status 200
        decoder.decode(b"\x88", &mut list).unwrap();
        r.decoded(b"\x88", 0, 0);
        assert_eq!(r.check(&list, Section::Response).map(|i| i.status), Ok(200));
        // The same list as trailers fails: the verdict is the section's, not the list's.
        assert!(r.check(&list, Section::Trailers).is_err());
        assert_eq!(r.check(&list, Section::Trailers), validate::check(&list, Section::Trailers));
        // A new list is checked afresh: :status 404 over the kept verdict for 200.
        r.check(&list, Section::Response).unwrap();
        decoder.decode(b"\x8d", &mut list).unwrap();
        r.decoded(b"\x8d", 0, 0);
        assert_eq!(r.check(&list, Section::Response).map(|i| i.status), Ok(404));
    }
}
