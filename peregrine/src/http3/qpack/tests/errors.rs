//! Invalid input, each with the error it draws (RFC 9204 §6's codes) and its cause.

use super::super::{Cause, Decoder, Encoder, Error, Section};
use super::hex;
use crate::http2::hpack::FieldList;
use crate::http3::{Code, StreamId};

/// B.2's encoder stream: capacity 220, two entries.
/// Set capacity 100; insert `:authority` with 59 octets: 10 + 59 + 32 = 101.
const ENTRY_101: &str = "3f45 c03b 6161616161616161616161616161616161616161616161616161616161616161616161616161616161616161616161616161616161616161616161";

const B2: &str =
    "3fbd01 c00f 7777 772e 6578 616d 706c 652e 636f 6d c10c 2f73 616d 706c 652f 7061 7468";

#[test]
fn field_sections() {
    struct Case {
        why: &'static str,
        encoder: &'static str,
        section: &'static str,
        expect: Cause,
    }
    let cases = [
        Case { why: "empty", encoder: "", section: "", expect: Cause::Truncated },
        Case { why: "no delta base", encoder: "", section: "00", expect: Cause::Truncated },
        Case { why: "static 99", encoder: "", section: "0000 ff24", expect: Cause::StaticIndex },
        Case {
            why: "dynamic, RIC 0",
            encoder: "",
            section: "0000 80",
            expect: Cause::DynamicIndex,
        },
        Case {
            why: "post-base, RIC 0",
            encoder: "",
            section: "0000 10",
            expect: Cause::DynamicIndex,
        },
        Case {
            why: "name ref, RIC 0",
            encoder: "",
            section: "0000 4000",
            expect: Cause::DynamicIndex,
        },
        Case {
            why: "post-base name ref at RIC",
            encoder: B2,
            section: "0381 0200",
            expect: Cause::DynamicIndex,
        },
        Case {
            why: "relative past the base",
            encoder: B2,
            section: "0381 80",
            expect: Cause::DynamicIndex,
        },
        Case {
            why: "RIC 2, only absolute 0 referenced",
            encoder: B2,
            section: "0381 10",
            expect: Cause::RequiredInsertCountTooLarge,
        },
        Case {
            why: "RIC 2, no reference",
            encoder: B2,
            section: "0381 c1",
            expect: Cause::RequiredInsertCountTooLarge,
        },
        Case { why: "negative base", encoder: B2, section: "0283", expect: Cause::Base },
        Case {
            why: "RIC above full range",
            encoder: B2,
            section: "0d00",
            expect: Cause::RequiredInsertCount,
        },
        Case {
            why: "value cut short",
            encoder: "",
            section: "0000 5105 2f",
            expect: Cause::Truncated,
        },
        Case {
            why: "huffman EOS in a value",
            encoder: "",
            section: "0000 5184 ffff ffff",
            expect: Cause::HuffmanEos,
        },
    ];
    for c in cases {
        let mut d = Decoder::new(220, 4);
        d.feed_encoder_stream(&hex(c.encoder)).unwrap();
        let mut list = FieldList::new(1 << 16);
        let got = d.decode_section(StreamId::new(0), &hex(c.section), &mut list);
        assert_eq!(
            got,
            Err(Error { code: Code::QPACK_DECOMPRESSION_FAILED, cause: c.expect }),
            "{}",
            c.why
        );
    }
}

#[test]
fn too_many_blocked_streams() {
    let mut d = Decoder::new(220, 2);
    let mut list = FieldList::new(1 << 16);
    let blocked = hex("0381 10 11");
    for s in [0, 4] {
        assert_eq!(d.decode_section(StreamId::new(s), &blocked, &mut list), Ok(Section::Blocked));
    }
    let err = d.decode_section(StreamId::new(8), &blocked, &mut list).unwrap_err();
    assert_eq!(
        (err.code, err.cause),
        (Code::QPACK_DECOMPRESSION_FAILED, Cause::TooManyBlockedStreams)
    );
    // A cancelled stream frees its place.
    let mut d = Decoder::new(220, 1);
    assert_eq!(d.decode_section(StreamId::new(0), &blocked, &mut list), Ok(Section::Blocked));
    d.cancel_stream(StreamId::new(0));
    assert_eq!(d.decode_section(StreamId::new(4), &blocked, &mut list), Ok(Section::Blocked));
    // No dynamic table: blocking is impossible, any reference is an error.
    let mut d = Decoder::new(0, 0);
    let err = d.decode_section(StreamId::new(0), &blocked, &mut list).unwrap_err();
    assert_eq!(err.cause, Cause::RequiredInsertCount);
}

#[test]
fn encoder_stream() {
    struct Case {
        why: &'static str,
        max_capacity: u64,
        bytes: &'static str,
        expect: Cause,
    }
    let cases = [
        Case {
            why: "capacity 101 > 100",
            max_capacity: 100,
            bytes: "3f46",
            expect: Cause::CapacityAboveMaximum,
        },
        Case {
            why: "insert at capacity 0",
            max_capacity: 100,
            bytes: "c000",
            expect: Cause::EntryTooLarge,
        },
        Case {
            why: "literal insert at capacity 0",
            max_capacity: 100,
            bytes: "4000",
            expect: Cause::EntryTooLarge,
        },
        Case {
            why: "static 99",
            max_capacity: 100,
            bytes: "3f45 ff2400",
            expect: Cause::StaticIndex,
        },
        Case {
            why: "duplicate, empty table",
            max_capacity: 100,
            bytes: "3f45 00",
            expect: Cause::DynamicIndex,
        },
        Case {
            why: "name ref, empty table",
            max_capacity: 100,
            bytes: "3f45 8000",
            expect: Cause::DynamicIndex,
        },
        Case {
            // 10 + 59 + 32 = 101 > 100.
            why: "entry one octet too large",
            max_capacity: 100,
            bytes: ENTRY_101,
            expect: Cause::EntryTooLarge,
        },
        Case {
            why: "capacity shrunk below the entry",
            max_capacity: 100,
            bytes: "3f45 3f01 c001 61",
            expect: Cause::EntryTooLarge,
        },
        Case {
            why: "integer overflow",
            max_capacity: 100,
            bytes: "3fffffffffffffffffffff01",
            expect: Cause::IntegerOverflow,
        },
        Case {
            why: "huffman EOS",
            max_capacity: 100,
            bytes: "3f45 c084ffffffff",
            expect: Cause::HuffmanEos,
        },
    ];
    for c in cases {
        let bytes = hex(c.bytes);
        // Whole, and one octet at a time: the same verdict.
        for chunk in [bytes.len(), 1] {
            let mut d = Decoder::new(c.max_capacity, 4);
            let r: Result<(), Error> =
                bytes.chunks(chunk).try_for_each(|b| d.feed_encoder_stream(b));
            assert_eq!(
                r,
                Err(Error { code: Code::QPACK_ENCODER_STREAM_ERROR, cause: c.expect }),
                "{}",
                c.why
            );
        }
    }
}

/// An instruction that could only insert an entry larger than the table is refused before
/// it is whole, so the buffer stays bounded.
#[test]
fn an_endless_instruction_is_refused_early() {
    let mut d = Decoder::new(100, 4);
    // Set capacity 100; Insert with Literal Name, name length 2,048.
    d.feed_encoder_stream(&hex("3f45 5fe10f")).unwrap();
    let mut fed = 0;
    let err = loop {
        match d.feed_encoder_stream(&[b'a'; 50]) {
            Ok(()) => fed += 50,
            Err(e) => break e,
        }
        assert!(fed < 1000);
    };
    assert_eq!(
        (err.code, err.cause),
        (Code::QPACK_ENCODER_STREAM_ERROR, Cause::InstructionTooLong)
    );
}

/// The QPACK bomb: one-octet Duplicates of an entry as large as the table. Credit runs out
/// after a bounded number, with H3_EXCESSIVE_LOAD; copying stays within a constant factor of
/// the bytes received.
#[test]
fn duplicate_flood_runs_out_of_churn_credit() {
    let mut d = Decoder::new(4096, 4);
    // Capacity 4096 (3f e1 1f), then Insert with Literal Name "a" and a 4,000-octet value.
    let mut setup = hex("3fe11f 4161 7fa11e");
    setup.extend(std::iter::repeat_n(b'v', 4000));
    d.feed_encoder_stream(&setup).unwrap();
    let mut dups = 0;
    let err = loop {
        match d.feed_encoder_stream(&[0x00]) {
            Ok(()) => dups += 1,
            Err(e) => break e,
        }
        assert!(dups < 100, "no budget");
    };
    assert_eq!((err.code, err.cause), (Code::H3_EXCESSIVE_LOAD, Cause::ChurnBudget));
    // The burst allows a few (twice the capacity plus 4,096 octets of credit: 3 entries of
    // 4,033), never more.
    assert!(dups <= 3, "{dups}");
    // Duplicates of a small entry are fine at any pace: 64 octets earned per octet.
    let mut d = Decoder::new(4096, 4);
    d.feed_encoder_stream(&hex("3fe11f 4161 0162")).unwrap();
    for _ in 0..10_000 {
        d.feed_encoder_stream(&[0x00]).unwrap();
    }
}

#[test]
fn decoder_stream() {
    struct Case {
        why: &'static str,
        bytes: &'static str,
        expect: Cause,
    }
    let cases = [
        Case { why: "ack, nothing outstanding", bytes: "84", expect: Cause::UnexpectedAck },
        Case { why: "increment 0", bytes: "00", expect: Cause::InsertCountIncrement },
        Case {
            why: "increment past the inserts",
            bytes: "02",
            expect: Cause::InsertCountIncrement,
        },
        Case { why: "second ack for one section", bytes: "80 80", expect: Cause::UnexpectedAck },
        Case {
            why: "integer overflow",
            bytes: "ffffffffffffffffffffff01",
            expect: Cause::IntegerOverflow,
        },
    ];
    for c in cases {
        // One insert and one section on stream 0 outstanding.
        let mut e = Encoder::new(4096);
        e.apply_peer_settings(4096, 16);
        let mut section = Vec::new();
        e.encode(StreamId::new(0), [(&b"x-a"[..], &b"1"[..], false)], &mut section);
        assert_eq!(e.insert_count(), 1);
        let bytes = hex(c.bytes);
        let r = e.feed_decoder_stream(&bytes);
        assert_eq!(
            r,
            Err(Error { code: Code::QPACK_DECODER_STREAM_ERROR, cause: c.expect }),
            "{}",
            c.why
        );
    }
    // Stream Cancellation of a stream the encoder does not know is ignored.
    let mut e = Encoder::new(4096);
    e.feed_decoder_stream(&hex("4c")).unwrap();
}

/// Regression (fuzz `qpack_decode`): a section that blocked was read again, once unblocked,
/// against the new Insert Count, where its encoded Required Insert Count can decode to
/// another value (here 2 at arrival, 6 after four inserts) and block again forever. It is
/// now read against the Insert Count it arrived at; its entries are gone by then, an error.
#[test]
fn an_unblocked_section_is_read_as_it_arrived() {
    // Capacity 64: MaxEntries 2, FullRange 4.
    let mut d = Decoder::new(64, 4);
    let mut list = FieldList::new(1 << 16);
    let s = StreamId::new(0);
    let section = hex("0381 10 11");
    assert_eq!(d.decode_section(s, &section, &mut list), Ok(Section::Blocked));
    d.feed_encoder_stream(&hex("3f21 416100 416100 416100 416100")).unwrap();
    assert_eq!(d.poll_unblocked(), Some(s));
    let err = d.decode_section(s, &section, &mut list).unwrap_err();
    assert_eq!((err.code, err.cause), (Code::QPACK_DECOMPRESSION_FAILED, Cause::DynamicIndex));
}

/// A peer that never reads our decoder stream while its requests keep being abandoned: with
/// a table it has used, each abandoned stream queues a Stream Cancellation, and past
/// `MAX_DECODER_BACKLOG` octets not polled the next section is refused (H3_EXCESSIVE_LOAD);
/// polled, the stream goes on. A peer whose encoder never set a capacity queues nothing (it
/// has no references to cancel; the h3 crate's client is one, and it never reads that stream).
#[test]
fn an_unread_decoder_stream_has_a_budget() {
    let cancel_all = |d: &mut Decoder| {
        for i in 0..20_000u64 {
            d.cancel_stream(StreamId::new(i * 4));
        }
    };
    let mut list = FieldList::new(1 << 16);
    // No dynamic table: nothing queued, sections decode.
    let mut d = Decoder::new(4096, 16);
    cancel_all(&mut d);
    let mut out = Vec::new();
    d.poll_decoder_stream(&mut out);
    assert!(out.is_empty(), "{} octets queued", out.len());
    assert_eq!(
        d.decode_section(StreamId::new(0), &hex("0000 d1"), &mut list),
        Ok(Section::Decoded)
    );
    // The encoder set a capacity: the cancellations are queued, and past the budget refused.
    let mut d = Decoder::new(4096, 16);
    d.feed_encoder_stream(&hex("3f61")).unwrap();
    cancel_all(&mut d);
    let err = d.decode_section(StreamId::new(0), &hex("0000 d1"), &mut list).unwrap_err();
    assert_eq!((err.code, err.cause), (Code::H3_EXCESSIVE_LOAD, Cause::DecoderBacklog));
    d.poll_decoder_stream(&mut out);
    assert!(out.len() > super::super::MAX_DECODER_BACKLOG);
    assert_eq!(
        d.decode_section(StreamId::new(0), &hex("0000 d1"), &mut list),
        Ok(Section::Decoded)
    );
}
