#![no_main]
//! QPACK encoder to decoder through a simulated exchange the input drives: field sections
//! built from the input, the encoder and decoder streams delivered in the input's splits and
//! delays, sections decoded in its order, streams cancelled. Whatever the encoder chose
//! (inserts, evictions, blocking), the decoder never errors and every section decodes to
//! exactly the fields encoded.
use libfuzzer_sys::fuzz_target;
use peregrine::http2::hpack::FieldList;
use peregrine::http3::StreamId;
use peregrine::http3::qpack::{Decoder, Encoder, Section};

/// Names the fields draw from (static, HPACK-only, and new).
const NAMES: [&[u8]; 8] =
    [b":path", b":authority", b"cookie", b"x-id", b"user-agent", b"accept", b"", b"X-Up"];

struct Pending {
    stream: StreamId,
    section: Vec<u8>,
    expect: Vec<(Vec<u8>, Vec<u8>)>,
}

fuzz_target!(|data: &[u8]| {
    let [ours, theirs, blocked, rest @ ..] = data else { return };
    let theirs = u64::from(*theirs) * 8;
    let blocked = u64::from(*blocked % 4);
    let mut enc = Encoder::new(u64::from(*ours) * 8);
    enc.apply_peer_settings(theirs, blocked);
    let mut dec = Decoder::new(theirs, blocked);
    let mut list = FieldList::new(1 << 20);
    let (mut to_dec, mut to_enc) = (Vec::new(), Vec::new());
    let mut pending: Vec<Pending> = Vec::new();
    let mut next = 0u64;
    let mut it = rest.iter().copied();
    let check = |p: &Pending, list: &FieldList| {
        let got: Vec<_> = list.iter().map(|f| (f.name.to_vec(), f.value.to_vec())).collect();
        assert_eq!(got, p.expect);
    };
    while let Some(cmd) = it.next() {
        match cmd % 5 {
            0 => {
                // A section of up to 8 fields: name octet, value length octet, value octets.
                let mut owned = Vec::new();
                for _ in 0..(cmd >> 3) {
                    let (Some(n), Some(l)) = (it.next(), it.next()) else { break };
                    let value: Vec<u8> = it.by_ref().take(usize::from(l % 64)).collect();
                    owned.push((NAMES[usize::from(n % 8)].to_vec(), value, n & 0x80 != 0));
                }
                let stream = StreamId::new(next);
                next += 4;
                let mut section = Vec::new();
                enc.encode(
                    stream,
                    owned.iter().map(|(n, v, s)| (&n[..], &v[..], *s)),
                    &mut section,
                );
                enc.poll_encoder_stream(&mut to_dec);
                let expect = owned.into_iter().map(|(n, v, _)| (n, v)).collect();
                pending.push(Pending { stream, section, expect });
            }
            1 => {
                let k = usize::from(it.next().unwrap_or(255)).min(to_dec.len());
                dec.feed_encoder_stream(&to_dec[..k]).expect("encoder stream");
                to_dec.drain(..k);
            }
            2 => {
                if pending.is_empty() {
                    continue;
                }
                let i = usize::from(cmd >> 3) % pending.len();
                let p = &pending[i];
                if dec.decode_section(p.stream, &p.section, &mut list).expect("section")
                    == Section::Decoded
                {
                    check(p, &list);
                    pending.remove(i);
                }
            }
            3 => {
                dec.poll_decoder_stream(&mut to_enc);
                let k = usize::from(it.next().unwrap_or(255)).min(to_enc.len());
                enc.feed_decoder_stream(&to_enc[..k]).expect("decoder stream");
                to_enc.drain(..k);
            }
            _ => {
                if !pending.is_empty() {
                    let i = usize::from(cmd >> 3) % pending.len();
                    dec.cancel_stream(pending.remove(i).stream);
                }
            }
        }
    }
    dec.feed_encoder_stream(&to_dec).expect("encoder stream");
    for p in &pending {
        let state = dec.decode_section(p.stream, &p.section, &mut list).expect("section");
        assert_eq!(state, Section::Decoded);
        check(p, &list);
    }
    dec.poll_decoder_stream(&mut to_enc);
    enc.feed_decoder_stream(&to_enc).expect("decoder stream");
    assert_eq!(enc.known_received_count(), enc.insert_count());
});
