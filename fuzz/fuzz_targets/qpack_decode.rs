#![no_main]
//! The QPACK decoder on arbitrary encoder-stream bytes and field sections, interleaved on one
//! decoder: never panics; on success the decoded list stays within its budget, the table
//! within the capacity, the capacity within our setting, and the blocked streams within our
//! limit. The first two octets pick our SETTINGS_QPACK_MAX_TABLE_CAPACITY (x 16) and
//! SETTINGS_QPACK_BLOCKED_STREAMS (mod 8); then each command is an octet (its low two bits
//! the operation) and, for the first two, a length octet and that many octets:
//! 0 encoder stream bytes, 1 a field section (on stream 4 * (command >> 2)), 2 a stream
//! cancelled, 3 the decoder stream polled and unblocked sections retried.
use libfuzzer_sys::fuzz_target;
use peregrine::http2::hpack::FieldList;
use peregrine::http3::StreamId;
use peregrine::http3::qpack::{Decoder, Section};

const BUDGET: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let [cap, blocked, rest @ ..] = data else { return };
    let max_capacity = u64::from(*cap) * 16;
    let max_blocked = u64::from(*blocked % 8);
    let mut d = Decoder::new(max_capacity, max_blocked);
    let mut list = FieldList::new(BUDGET);
    let mut held: Vec<(StreamId, Vec<u8>)> = Vec::new();
    let mut out = Vec::new();
    let mut rest = rest;
    while let Some((&cmd, tail)) = rest.split_first() {
        rest = tail;
        let stream = StreamId::new(4 * u64::from(cmd >> 2));
        let result = match cmd & 3 {
            0 | 1 => {
                let Some((&len, tail)) = rest.split_first() else { return };
                let n = usize::from(len).min(tail.len());
                let (bytes, tail) = tail.split_at(n);
                rest = tail;
                if cmd & 3 == 0 {
                    d.feed_encoder_stream(bytes)
                } else if held.iter().any(|(s, _)| *s == stream) {
                    // A stream's sections are decoded in order: the next waits for the one
                    // blocked (the driver's contract, `Decoder::decode_section`).
                    Ok(())
                } else {
                    d.decode_section(stream, bytes, &mut list).map(|s| {
                        if s == Section::Blocked {
                            held.push((stream, bytes.to_vec()));
                        }
                    })
                }
            }
            2 => {
                d.cancel_stream(stream);
                held.retain(|(s, _)| *s != stream);
                Ok(())
            }
            _ => {
                out.clear();
                d.poll_decoder_stream(&mut out);
                let mut r = Ok(());
                while let Some(s) = d.poll_unblocked() {
                    let Some(i) = held.iter().position(|(h, _)| *h == s) else { continue };
                    let (_, bytes) = held.remove(i);
                    r = d.decode_section(s, &bytes, &mut list).map(|state| {
                        assert_eq!(state, Section::Decoded, "an unblocked section blocks");
                    });
                    if r.is_err() {
                        break;
                    }
                }
                r
            }
        };
        if result.is_err() {
            return; // a connection error: the connection (and this decoder) ends
        }
        let size: usize = list.iter().map(|f| f.name.len() + f.value.len() + 32).sum();
        assert!(size <= BUDGET, "list of {size} octets past a budget of {BUDGET}");
        assert!(d.table_size() <= d.capacity());
        assert!(d.capacity() as u64 <= max_capacity);
        assert!(d.blocked_streams() as u64 <= max_blocked);
    }
});
