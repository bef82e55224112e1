#![no_main]
//! The chunked decoder on arbitrary bytes: never panics, and decoding the input whole or split
//! at arbitrary points (the first bytes choose them) gives the same body, the same end and the
//! same error. Limits are small so the limit paths are reached too.
use libfuzzer_sys::fuzz_target;
use peregrine::http1::chunked::{ChunkedDecoder, ChunkedError, ChunkedLimits};

type Outcome = (Vec<u8>, Result<(bool, usize), ChunkedError>);

fn feed(limits: ChunkedLimits, pieces: &[&[u8]]) -> Outcome {
    let mut dec = ChunkedDecoder::with_limits(limits);
    let (mut body, mut buf, mut total) = (Vec::new(), Vec::new(), 0);
    for piece in pieces {
        buf.extend_from_slice(piece);
        loop {
            let out = match dec.decode(&buf) {
                Ok(out) => out,
                Err(e) => return (body, Err(e)),
            };
            assert!(out.consumed <= buf.len());
            assert!(out.data.start <= out.data.end && out.data.end <= out.consumed);
            assert!(out.consumed > 0 || buf.is_empty() || out.done, "no progress");
            body.extend_from_slice(&buf[out.data.clone()]);
            buf.drain(..out.consumed);
            total += out.consumed;
            if out.done {
                return (body, Ok((true, total)));
            }
            if buf.is_empty() {
                break;
            }
        }
    }
    (body, Ok((false, total)))
}

fuzz_target!(|data: &[u8]| {
    let Some((&seed, input)) = data.split_first() else { return };
    let limits = ChunkedLimits {
        max_extension_bytes: 16 + usize::from(seed & 0x3f),
        max_trailer_bytes: 16 + usize::from(seed >> 2),
    };
    let whole = feed(limits, &[input]);
    // Cut points derived from the seed and the length: a few pieces of varying sizes.
    let mut pieces = Vec::new();
    let mut rest = input;
    let mut step = usize::from(seed % 7) + 1;
    while !rest.is_empty() {
        let n = step.min(rest.len());
        pieces.push(&rest[..n]);
        rest = &rest[n..];
        step = step * 3 % 11 + 1;
    }
    assert_eq!(feed(limits, &pieces), whole);
    let bytes: Vec<&[u8]> = input.chunks(1).collect();
    assert_eq!(feed(limits, &bytes), whole);
});
