#![no_main]
//! The chunked decoder on arbitrary bytes: never panics, and decoding the input whole or split
//! at arbitrary points (the first bytes choose them) gives the same body, the same end and the
//! same error, and the same trailer bytes, each of whose lines `trailer_fields` reads as a
//! field. Limits are small so the limit paths are reached too.
use libfuzzer_sys::fuzz_target;
use peregrine::http1::chunked::{ChunkedDecoder, ChunkedError, ChunkedLimits, trailer_fields};

type Outcome = (Vec<u8>, Vec<u8>, Result<(bool, usize), ChunkedError>);

fn feed(limits: ChunkedLimits, pieces: &[&[u8]]) -> Outcome {
    let mut dec = ChunkedDecoder::with_limits(limits);
    let (mut body, mut trailers, mut buf, mut total) = (Vec::new(), Vec::new(), Vec::new(), 0);
    for piece in pieces {
        buf.extend_from_slice(piece);
        loop {
            let out = match dec.decode(&buf) {
                Ok(out) => out,
                // Trailer bytes before an error are meaningless (the body failed; the server
                // drops them), and how many were reported depends on the split.
                Err(e) => return (body, Vec::new(), Err(e)),
            };
            assert!(out.consumed <= buf.len());
            assert!(out.data.start <= out.data.end && out.data.end <= out.consumed);
            assert!(out.consumed > 0 || buf.is_empty() || out.done, "no progress");
            assert!(out.trailers.start <= out.trailers.end && out.trailers.end <= out.consumed);
            assert!(out.trailers.is_empty() || out.data.end <= out.trailers.start);
            body.extend_from_slice(&buf[out.data.clone()]);
            trailers.extend_from_slice(&buf[out.trailers.clone()]);
            buf.drain(..out.consumed);
            total += out.consumed;
            if out.done {
                // Validated field lines: every one has a name and a colon.
                let lines = trailers.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count();
                assert_eq!(trailer_fields(&trailers).count(), lines);
                assert!(trailer_fields(&trailers).all(|(name, _)| !name.is_empty()));
                return (body, trailers, Ok((true, total)));
            }
            if buf.is_empty() {
                break;
            }
        }
    }
    (body, trailers, Ok((false, total)))
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
