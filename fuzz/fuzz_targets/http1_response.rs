#![no_main]
//! Response-head parser (the client's side): arbitrary bytes through `parse_response` and then
//! `response_framing`. Checks: no panic; uninitialised header storage gives the same outcome; a
//! complete head has `len <= input`, a status in 100..=599, and re-parsing `input[..len]`
//! gives the same head; every prefix of an accepted head is `Partial`; every prefix of a
//! refused input is `Partial` or the same error; the trickle path (`HeadScanner`) agrees; the
//! memo of the last head (`LastResponseHead`) gives the parser's outcome, also for a repeat it
//! answers from memory and for the input with one byte changed.
use libfuzzer_sys::fuzz_target;
use peregrine::Method;
use peregrine::http1::framing::response_framing;
use peregrine::http1::{
    EMPTY_HEADER, HeadScanner, LastResponseHead, Limits, ParseError, parse_response,
    parse_response_uninit,
};
use std::mem::MaybeUninit;

/// A comparable summary of a parse outcome.
fn outcome(input: &[u8], limits: &Limits) -> Result<Option<String>, ParseError> {
    let mut headers = [EMPTY_HEADER; 32];
    let status = parse_response(input, &mut headers, limits);
    let mut uninit = [const { MaybeUninit::uninit() }; 32];
    assert_eq!(parse_response_uninit(input, &mut uninit, limits), status, "uninit storage differs");
    Ok(status?.complete().map(|h| {
        assert!(h.len <= input.len() && h.len <= limits.max_head_bytes, "len beyond input");
        assert!((100..=599).contains(&h.status), "status {}", h.status);
        // Framing never panics, whatever the request's method.
        for method in [Method::Get, Method::Head, Method::Connect] {
            let _ = response_framing(method, h.status, h.version, h.headers);
        }
        format!("{h:?}")
    }))
}

fuzz_target!(|data: &[u8]| {
    // Small limits so the fuzzer reaches them; the first byte varies the header count.
    let limits = Limits {
        max_head_bytes: 512,
        max_headers: usize::from(data.first().copied().unwrap_or(8) % 16),
        max_target_bytes: 0,
    };
    let whole = outcome(data, &limits);
    // Through the memo: the input, the head again followed by the input (a repeat when the
    // head was complete), and the input with its middle byte changed.
    let len = match &whole {
        Ok(Some(_)) => {
            let mut headers = [EMPTY_HEADER; 32];
            parse_response(data, &mut headers, &limits).unwrap().complete().unwrap().len
        }
        _ => 0,
    };
    let mut changed = data.to_vec();
    if let Some(b) = changed.get_mut(data.len() / 2) {
        *b ^= 0x20;
    }
    let mut last = LastResponseHead::new();
    for input in [data.to_vec(), [&data[..len], data].concat(), changed, data.to_vec()] {
        // A scanner per input: each is a new head, not more bytes of the last one.
        let mut scanner = HeadScanner::new();
        let mut storage = [const { MaybeUninit::uninit() }; 32];
        let memo = last.parse_uninit(&mut scanner, &input, &mut storage, &limits);
        let memo = memo.map(|s| s.complete().map(|h| format!("{h:?}")));
        assert_eq!(memo, outcome(&input, &limits), "through the memo");
    }
    if let Ok(Some(_)) = &whole {
        let mut headers = [EMPTY_HEADER; 32];
        let head = parse_response(data, &mut headers, &limits).unwrap().complete().unwrap();
        let len = head.len;
        assert_eq!(outcome(&data[..len], &limits), whole, "re-parsing input[..len] differs");
        for n in 0..len {
            assert_eq!(outcome(&data[..n], &limits), Ok(None), "prefix {n} of an accepted head");
        }
    } else if whole.is_err() {
        for n in 0..data.len().min(128) {
            // Errors are found left to right, so a prefix proves the whole's error or none.
            let prefix = outcome(&data[..n], &limits);
            assert!(
                prefix == Ok(None) || prefix == whole,
                "prefix {n}: {prefix:?}, whole: {whole:?}"
            );
        }
    }
    // Trickle: the bytes one at a time through the scanner.
    let mut scanner = HeadScanner::new();
    for end in 1..=data.len() {
        let mut headers = [EMPTY_HEADER; 32];
        match scanner.parse_response(&data[..end], &mut headers, &limits) {
            Ok(s) if s.is_partial() => continue,
            Ok(s) => {
                let v = Ok(s.complete().map(|h| format!("{h:?}")));
                assert_eq!(v, whole, "trickled to {end}");
                break;
            }
            Err(e) => {
                assert!(whole.is_err(), "trickled error {e:?} at {end}, whole: {whole:?}");
                break;
            }
        }
    }
});
