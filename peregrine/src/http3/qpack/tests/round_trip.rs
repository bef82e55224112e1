//! Round trips through a simulated exchange: an encoder and a decoder joined by the encoder
//! and decoder streams with random delays and splits, sections decoded in random order,
//! some streams cancelled. Every decoded section must equal what was encoded; a broken
//! eviction or blocking rule shows up as a decoder error.

use super::super::{Decoder, Encoder, Section};
use super::fields;
use crate::http2::hpack::FieldList;
use crate::http3::StreamId;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const NAMES: [&str; 10] = [
    ":path",
    ":authority",
    "user-agent",
    "cookie",
    "x-request-id",
    "accept",
    "content-type",
    "x-trace",
    "authorization",
    "x-long",
];

fn field(rng: &mut Rng) -> (String, String, bool) {
    let name = NAMES[rng.below(NAMES.len() as u64) as usize];
    let value = match rng.below(4) {
        0 => "*/*".to_string(),
        1 => format!("v{}", rng.below(8)),
        2 => format!("value-{}", rng.below(200)),
        _ => "x".repeat(rng.below(120) as usize),
    };
    (name.to_string(), value, name == "authorization")
}

struct Pending {
    stream: StreamId,
    section: Vec<u8>,
    expect: Vec<(String, String)>,
}

fn simulate(seed: u64, ours: u64, theirs: u64, blocked: u64, rounds: usize) -> (u64, usize) {
    let mut rng = Rng(seed);
    let mut enc = Encoder::new(ours);
    enc.apply_peer_settings(theirs, blocked);
    let mut dec = Decoder::new(theirs, blocked);
    let mut to_decoder: Vec<u8> = Vec::new();
    let mut to_encoder: Vec<u8> = Vec::new();
    let mut pending: Vec<Pending> = Vec::new();
    let mut list = FieldList::new(1 << 20);
    let mut decoded = 0usize;
    let mut next_stream = 0u64;
    let mut section_bytes = 0u64;

    let try_decode =
        |dec: &mut Decoder, pending: &mut Vec<Pending>, list: &mut FieldList, i: usize| {
            let p = &pending[i];
            match dec.decode_section(p.stream, &p.section, list).unwrap() {
                Section::Blocked => false,
                Section::Decoded => {
                    assert_eq!(fields(list), p.expect, "seed {seed} stream {}", p.stream);
                    pending.remove(i);
                    true
                }
            }
        };

    for _ in 0..rounds {
        match rng.below(6) {
            0 | 1 => {
                let n = 1 + rng.below(8);
                let owned: Vec<_> = (0..n).map(|_| field(&mut rng)).collect();
                let stream = StreamId::new(next_stream);
                next_stream += 4;
                let mut section = Vec::new();
                enc.encode(
                    stream,
                    owned.iter().map(|(n, v, s)| (n.as_bytes(), v.as_bytes(), *s)),
                    &mut section,
                );
                section_bytes += section.len() as u64;
                enc.poll_encoder_stream(&mut to_decoder);
                let expect = owned.into_iter().map(|(n, v, _)| (n, v)).collect();
                pending.push(Pending { stream, section, expect });
            }
            2 => {
                let k = rng.below(to_decoder.len() as u64 + 1) as usize;
                dec.feed_encoder_stream(&to_decoder[..k]).unwrap();
                to_decoder.drain(..k);
            }
            3 => {
                if !pending.is_empty() {
                    let i = rng.below(pending.len() as u64) as usize;
                    decoded += usize::from(try_decode(&mut dec, &mut pending, &mut list, i));
                }
                while let Some(s) = dec.poll_unblocked() {
                    if let Some(i) = pending.iter().position(|p| p.stream == s) {
                        decoded += usize::from(try_decode(&mut dec, &mut pending, &mut list, i));
                    }
                }
            }
            4 => {
                dec.poll_decoder_stream(&mut to_encoder);
                let k = rng.below(to_encoder.len() as u64 + 1) as usize;
                enc.feed_decoder_stream(&to_encoder[..k]).unwrap();
                to_encoder.drain(..k);
            }
            _ => {
                if rng.below(8) == 0 && !pending.is_empty() {
                    let i = rng.below(pending.len() as u64) as usize;
                    dec.cancel_stream(pending.remove(i).stream);
                }
            }
        }
    }
    // Deliver everything; every section left decodes.
    dec.feed_encoder_stream(&to_decoder).unwrap();
    while !pending.is_empty() {
        assert!(
            try_decode(&mut dec, &mut pending, &mut list, 0),
            "seed {seed}: blocked at the end"
        );
        decoded += 1;
    }
    dec.poll_decoder_stream(&mut to_encoder);
    enc.feed_decoder_stream(&to_encoder).unwrap();
    assert_eq!(enc.known_received_count(), enc.insert_count(), "seed {seed}");
    (section_bytes, decoded)
}

#[test]
fn random_exchanges_round_trip() {
    // (our capacity, the peer's maximum, the peer's blocked streams)
    let configs = [
        (4096, 4096, 16),
        (256, 256, 2),
        (300, 220, 0),
        (4096, 0, 0),
        (100, 4096, 1),
        (1024, 1024, 1),
    ];
    for (k, &(ours, theirs, blocked)) in configs.iter().enumerate() {
        for seed in 1..=12u64 {
            let (_, decoded) = simulate(seed * 7919 + k as u64, ours, theirs, blocked, 600);
            assert!(decoded > 50);
        }
    }
}

/// The dynamic table pays: the random mix above (high-entropy values, a table that churns)
/// takes fewer section octets with a table than without, and browser-like requests (the same
/// headers, a few paths) take under a third.
#[test]
fn the_dynamic_table_compresses() {
    let (with, _) = simulate(42, 4096, 4096, 16, 600);
    let (without, _) = simulate(42, 4096, 0, 0, 600);
    assert!(with < without, "{with} vs {without}");
    let (with, without) = (lockstep(4096, 16), lockstep(0, 0));
    assert!(with * 3 < without, "{with} vs {without}");
}

/// 100 browser-like requests encoded, delivered, decoded and acknowledged in turn; the
/// section octets they took.
fn lockstep(theirs: u64, blocked: u64) -> usize {
    let mut enc = Encoder::new(4096);
    enc.apply_peer_settings(theirs, blocked);
    let mut dec = Decoder::new(theirs, blocked);
    let mut list = FieldList::new(1 << 16);
    let (mut total, mut bytes, mut section) = (0, Vec::new(), Vec::new());
    for i in 0..100u64 {
        let path = format!("/static/app-{}.js", i % 5);
        let fields: [(&[u8], &[u8], bool); 7] = [
            (b":method", b"GET", false),
            (b":scheme", b"https", false),
            (b":authority", b"www.example.com", false),
            (b":path", path.as_bytes(), false),
            (
                b"user-agent",
                b"Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
                false,
            ),
            (b"accept-language", b"en-US,en;q=0.5", false),
            (b"cookie", b"session=8f14e45fceea167a5a36dedd4bea2543", false),
        ];
        section.clear();
        enc.encode(StreamId::new(4 * i), fields, &mut section);
        total += section.len();
        bytes.clear();
        enc.poll_encoder_stream(&mut bytes);
        dec.feed_encoder_stream(&bytes).unwrap();
        assert_eq!(
            dec.decode_section(StreamId::new(4 * i), &section, &mut list),
            Ok(Section::Decoded)
        );
        assert_eq!(list.len(), 7);
        bytes.clear();
        dec.poll_decoder_stream(&mut bytes);
        enc.feed_decoder_stream(&bytes).unwrap();
    }
    total
}

/// A request repeated once its inserts are acknowledged is one octet per field.
#[test]
fn a_repeated_section_is_indexed() {
    let mut enc = Encoder::new(4096);
    enc.apply_peer_settings(4096, 0);
    let mut dec = Decoder::new(4096, 0);
    let fields: [(&[u8], &[u8], bool); 3] = [
        (b":authority", b"example.com", false),
        (b"user-agent", b"peregrine", false),
        (b"x-id", b"1", false),
    ];
    let mut section = Vec::new();
    // No blocked streams allowed: the first section inserts nothing it references.
    enc.encode(StreamId::new(0), fields, &mut section);
    let mut list = FieldList::new(1 << 16);
    assert_eq!(dec.decode_section(StreamId::new(0), &section, &mut list), Ok(Section::Decoded));
    assert_eq!(enc.insert_count(), 0);
    // With one blocked stream allowed, the inserts happen and are acknowledged.
    let mut enc = Encoder::new(4096);
    enc.apply_peer_settings(4096, 1);
    let mut dec = Decoder::new(4096, 1);
    let mut bytes = Vec::new();
    for (i, s) in [0u64, 4].into_iter().enumerate() {
        section.clear();
        enc.encode(StreamId::new(s), fields, &mut section);
        bytes.clear();
        enc.poll_encoder_stream(&mut bytes);
        dec.feed_encoder_stream(&bytes).unwrap();
        assert_eq!(dec.decode_section(StreamId::new(s), &section, &mut list), Ok(Section::Decoded));
        bytes.clear();
        dec.poll_decoder_stream(&mut bytes);
        enc.feed_decoder_stream(&bytes).unwrap();
        if i == 1 {
            assert_eq!(section.len(), 2 + 3, "{section:02x?}");
        }
    }
    assert_eq!(enc.insert_count(), 3);
}

/// Regression (fuzz `qpack_roundtrip`): with the inserts of two cancelled streams still on
/// their way to the decoder, the encoder evicted them for new entries, and a section
/// referring to the newest ran more than MaxEntries ahead of the decoder's Insert Count:
/// its Required Insert Count decoded wrongly (QPACK_DECOMPRESSION_FAILED). Unacknowledged
/// entries are no longer evicted.
#[test]
fn unacknowledged_entries_are_not_evicted() {
    // Capacity 80: MaxEntries 2, room for two 36-octet entries.
    let mut enc = Encoder::new(80);
    enc.apply_peer_settings(80, 3);
    let mut dec = Decoder::new(80, 3);
    let mut to_dec = Vec::new();
    let mut sections = Vec::new();
    // Distinct names, so no insert refers to (and pins) an older entry.
    for (s, n) in [(0u64, &b"x-a"[..]), (4, b"x-b")] {
        let mut section = Vec::new();
        enc.encode(StreamId::new(s), [(n, &b"1"[..], false)], &mut section);
        dec.cancel_stream(StreamId::new(s));
    }
    let mut back = Vec::new();
    dec.poll_decoder_stream(&mut back);
    enc.feed_decoder_stream(&back).unwrap();
    for (s, n) in [(8u64, &b"x-c"[..]), (12, b"x-d")] {
        let mut section = Vec::new();
        enc.encode(StreamId::new(s), [(n, &b"1"[..], false)], &mut section);
        sections.push((s, section, n));
    }
    enc.poll_encoder_stream(&mut to_dec);
    let mut list = FieldList::new(1 << 16);
    // The sections arrive before the encoder stream: they block, or decode, never fail.
    for (s, section, _) in &sections {
        let _ = dec.decode_section(StreamId::new(*s), section, &mut list).unwrap();
    }
    dec.feed_encoder_stream(&to_dec).unwrap();
    for (s, section, n) in &sections {
        assert_eq!(dec.decode_section(StreamId::new(*s), section, &mut list), Ok(Section::Decoded));
        assert_eq!(list.iter().next().unwrap().name, *n);
    }
}

/// A section identical to the last, with the table unchanged and its references acknowledged,
/// is sent as a copy of the last one's bytes: it decodes to the same fields, and its Section
/// Acknowledgment is expected (§4.4.1: an unexpected one is a connection error). A different
/// value, or an insert since, is encoded afresh.
#[test]
fn an_identical_section_is_copied_while_the_table_is_unchanged() {
    let mut enc = Encoder::new(4096);
    enc.apply_peer_settings(4096, 1);
    let mut dec = Decoder::new(4096, 1);
    let mut list = FieldList::new(1 << 16);
    let mut stream = 0u64;
    // One section through both sides, the instructions each way delivered; returns its bytes.
    let mut round = |enc: &mut Encoder, fields: &[(&[u8], &[u8], bool)]| {
        let (mut section, mut bytes) = (Vec::new(), Vec::new());
        enc.encode(StreamId::new(stream), fields.iter().copied(), &mut section);
        enc.poll_encoder_stream(&mut bytes);
        dec.feed_encoder_stream(&bytes).unwrap();
        let decoded = dec.decode_section(StreamId::new(stream), &section, &mut list);
        assert_eq!(decoded, Ok(Section::Decoded));
        let got: Vec<(Vec<u8>, Vec<u8>)> =
            list.iter().map(|f| (f.name.to_vec(), f.value.to_vec())).collect();
        let want: Vec<(Vec<u8>, Vec<u8>)> =
            fields.iter().map(|(n, v, _)| (n.to_vec(), v.to_vec())).collect();
        assert_eq!(got, want, "stream {stream}");
        bytes.clear();
        dec.poll_decoder_stream(&mut bytes);
        enc.feed_decoder_stream(&bytes).expect("every acknowledgment expected");
        stream += 4;
        section
    };
    let head: [(&[u8], &[u8], bool); 4] = [
        (b":status", b"200", false),
        (b"server", b"peregrine", false),
        (b"date", b"Sun, 29 Nov 2026 08:00:00 GMT", false),
        (b"content-length", b"13", false),
    ];
    // The first inserts (and so is not kept); the second references acknowledged entries.
    round(&mut enc, &head);
    let second = round(&mut enc, &head);
    assert_eq!(enc.copies, 0);
    for _ in 0..3 {
        assert_eq!(round(&mut enc, &head), second);
    }
    assert_eq!(enc.copies, 3);
    // Another Date: encoded afresh (and inserted), then copied once acknowledged.
    let mut next = head;
    next[2].1 = b"Sun, 29 Nov 2026 08:00:01 GMT";
    let inserting = round(&mut enc, &next);
    assert_ne!(inserting, second);
    assert_eq!(enc.copies, 3);
    round(&mut enc, &next);
    round(&mut enc, &next);
    assert_eq!(enc.copies, 4);
    // The old head after an insert: afresh, and right.
    round(&mut enc, &head);
    assert_eq!(enc.copies, 4);
    // A sensitive flag is part of the match.
    let mut secret = next;
    secret[1].2 = true;
    round(&mut enc, &secret);
    assert_eq!(enc.copies, 4);
}
