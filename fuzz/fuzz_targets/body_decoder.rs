#![no_main]
//! The body decoder (Content-Length, chunked, close-delimited, with a size limit) on arbitrary
//! bytes: never panics, never reports data outside its input or past the limit, and decoding
//! the input whole or split at arbitrary points (the first bytes choose them) gives the same
//! body, the same end and the same trailers, or the same error.
use libfuzzer_sys::fuzz_target;
use peregrine::http1::body_decoder::{BodyDecodeError, BodyDecoder};
use peregrine::http1::framing::BodyLength;

type Outcome = (Vec<u8>, Result<bool, BodyDecodeError>, usize, Option<usize>);

fn feed(length: BodyLength, max: u64, pieces: &[&[u8]]) -> Outcome {
    let mut dec = BodyDecoder::new(length, max);
    let (mut body, mut buf, mut taken) = (Vec::new(), Vec::new(), 0);
    for piece in pieces {
        buf.extend_from_slice(piece);
        while !dec.is_done() {
            let out = match dec.decode(&buf) {
                Ok(out) => out,
                // How much data came before the error depends on the split (a limit is passed
                // by one large piece or by the last of many small ones): compare the error.
                Err(e) => return (Vec::new(), Err(e), 0, None),
            };
            assert!(out.consumed <= buf.len());
            assert!(out.data.start <= out.data.end && out.data.end <= out.consumed);
            body.extend_from_slice(&buf[out.data.clone()]);
            assert!(body.len() as u64 <= max, "data past the limit");
            assert_eq!(dec.received(), body.len() as u64);
            buf.drain(..out.consumed);
            taken += out.consumed;
            if out.consumed == 0 {
                break;
            }
        }
    }
    let done = dec.is_done();
    let trailers = dec.take_trailers().map(|t| t.len());
    (body, Ok(done), taken, trailers)
}

fuzz_target!(|data: &[u8]| {
    let Some((&seed, input)) = data.split_first() else { return };
    let length = match seed & 3 {
        0 => BodyLength::Length(u64::from(seed >> 2) * 3),
        1 | 2 => BodyLength::Chunked,
        _ => BodyLength::CloseDelimited,
    };
    let max = 8 + u64::from(seed >> 1);
    let whole = feed(length, max, &[input]);
    let mut pieces = Vec::new();
    let mut rest = input;
    let mut step = usize::from(seed % 5) + 1;
    while !rest.is_empty() {
        let n = step.min(rest.len());
        pieces.push(&rest[..n]);
        rest = &rest[n..];
        step = step % 11 + 1;
    }
    let split = feed(length, max, &pieces);
    assert_eq!(whole, split);
});
