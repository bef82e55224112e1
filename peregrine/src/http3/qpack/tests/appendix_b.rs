//! RFC 9204 Appendix B, each step's bytes fed to the decoder (the encoder stream at every
//! split), with its fields, table size and decoder stream output.

use super::super::{Decoder, Section};
use super::{fields, hex, pairs};
use crate::http2::hpack::FieldList;
use crate::http3::StreamId;

/// A section: its stream, its bytes, the fields it decodes to.
type SectionCase = (u64, &'static str, &'static [(&'static str, &'static str)]);

/// One step: encoder stream bytes, then optionally a section on a stream; what the decoder
/// then holds and says.
struct Step {
    encoder: &'static str,
    section: Option<SectionCase>,
    decoder_stream: &'static str,
    table_size: usize,
    insert_count: u64,
}

const STEPS: [Step; 5] = [
    // B.1: Literal Field Line with Name Reference (static :path), no dynamic table.
    Step {
        encoder: "",
        section: Some((0, "0000 510b 2f69 6e64 6578 2e68 746d 6c", &[(":path", "/index.html")])),
        decoder_stream: "",
        table_size: 0,
        insert_count: 0,
    },
    // B.2: capacity 220, two inserts by static name reference, a section referring to both
    // post-base; the decoder acknowledges the section (84).
    Step {
        encoder: "3fbd01 c00f 7777 772e 6578 616d 706c 652e 636f 6d c10c 2f73 616d 706c 652f 7061 7468",
        section: Some((
            4,
            "0381 10 11",
            &[(":authority", "www.example.com"), (":path", "/sample/path")],
        )),
        decoder_stream: "84",
        table_size: 106,
        insert_count: 2,
    },
    // B.3: a speculative insert with a literal name; acknowledged by Insert Count Increment.
    Step {
        encoder: "4a63 7573 746f 6d2d 6b65 790c 6375 7374 6f6d 2d76 616c 7565",
        section: None,
        decoder_stream: "01",
        table_size: 160,
        insert_count: 3,
    },
    // B.4: Duplicate of absolute 0, then a section with Base 4 (relative and static
    // references). The RFC's stream is reset before it is decoded (Stream Cancellation, 48);
    // decoding it here acknowledges it (88) instead, which covers the duplicate too.
    Step {
        encoder: "02",
        section: Some((
            8,
            "0500 80 c1 81",
            &[(":authority", "www.example.com"), (":path", "/"), ("custom-key", "custom-value")],
        )),
        decoder_stream: "88",
        table_size: 217,
        insert_count: 4,
    },
    // B.5: insert by dynamic name reference (relative 1: custom-key), evicting absolute 0.
    Step {
        encoder: "810d 6375 7374 6f6d 2d76 616c 7565 32",
        section: None,
        decoder_stream: "01",
        table_size: 215,
        insert_count: 5,
    },
];

fn run(split: impl Fn(&[u8]) -> Vec<&[u8]>) {
    let mut d = Decoder::new(220, 16);
    let mut list = FieldList::new(1 << 16);
    for (i, step) in STEPS.iter().enumerate() {
        let enc = hex(step.encoder);
        for part in split(&enc) {
            d.feed_encoder_stream(part).unwrap();
        }
        if let Some((stream, section, expect)) = step.section {
            let got = d.decode_section(StreamId::new(stream), &hex(section), &mut list);
            assert_eq!(got, Ok(Section::Decoded), "step {i}");
            assert_eq!(fields(&list), pairs(expect), "step {i}");
            assert!(list.malformed().is_none());
        }
        let mut out = Vec::new();
        d.poll_decoder_stream(&mut out);
        assert_eq!(out, hex(step.decoder_stream), "step {i}");
        assert_eq!(d.table_size(), step.table_size, "step {i}");
        assert_eq!(d.insert_count(), step.insert_count, "step {i}");
    }
    assert_eq!(d.table_len(), 4);
    // B.4's Stream Cancellation, as a reset stream sends it.
    d.cancel_stream(StreamId::new(8));
    let mut out = Vec::new();
    d.poll_decoder_stream(&mut out);
    assert_eq!(out, hex("48"));
}

#[test]
fn appendix_b_whole() {
    run(|b| vec![b]);
}

#[test]
fn appendix_b_encoder_stream_at_every_split() {
    for cut in 0..40 {
        run(|b| {
            let c = cut.min(b.len());
            vec![&b[..c], &b[c..]]
        });
    }
    // One octet at a time.
    run(|b| b.chunks(1).collect());
}

/// A section that arrives before the encoder stream's inserts blocks, and decodes once they
/// arrive (B.2 reordered).
#[test]
fn appendix_b_section_first_blocks() {
    let mut d = Decoder::new(220, 1);
    let mut list = FieldList::new(1 << 16);
    let s4 = StreamId::new(4);
    let section = hex("0381 10 11");
    assert_eq!(d.decode_section(s4, &section, &mut list), Ok(Section::Blocked));
    assert_eq!(d.blocked_streams(), 1);
    // Asking again does not count the stream twice.
    assert_eq!(d.decode_section(s4, &section, &mut list), Ok(Section::Blocked));
    let enc = hex(STEPS[1].encoder);
    d.feed_encoder_stream(&enc[..20]).unwrap();
    assert_eq!(d.poll_unblocked(), None, "one of two inserts is not enough");
    d.feed_encoder_stream(&enc[20..]).unwrap();
    assert_eq!(d.poll_unblocked(), Some(s4));
    assert_eq!(d.poll_unblocked(), None);
    assert_eq!(d.decode_section(s4, &section, &mut list), Ok(Section::Decoded));
    assert_eq!(
        fields(&list),
        pairs(&[(":authority", "www.example.com"), (":path", "/sample/path")])
    );
    let mut out = Vec::new();
    d.poll_decoder_stream(&mut out);
    assert_eq!(out, hex("84"));
}
