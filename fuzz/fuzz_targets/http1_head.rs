#![no_main]
//! Request-head parser: arbitrary bytes, whole and split at every point through the
//! `HeadScanner` (the trickle path). Checks: no panic; a complete head has `len <= input`;
//! re-parsing `input[..len]` gives the same head; the scanner agrees with a one-shot parse;
//! uninitialised header storage (`parse_request_uninit`) gives the same outcome; the memo of
//! the last head (`LastHead`) gives the parser's outcome, also for a repeat it answers from
//! memory and for the input with one byte changed.
use libfuzzer_sys::fuzz_target;
use peregrine::http1::{
    EMPTY_HEADER, HeadScanner, LastHead, Limits, ParseError, parse_request, parse_request_uninit,
};
use std::mem::MaybeUninit;

/// A comparable summary of a parse outcome.
fn outcome(input: &[u8], limits: &Limits) -> Result<Option<String>, ParseError> {
    let mut headers = [EMPTY_HEADER; 32];
    let status = parse_request(input, &mut headers, limits);
    let mut uninit = [const { MaybeUninit::uninit() }; 32];
    assert_eq!(parse_request_uninit(input, &mut uninit, limits), status, "uninit storage differs");
    let status = status?;
    Ok(status.complete().map(|h| {
        assert!(h.len <= input.len(), "len beyond input");
        assert!(h.target.len() <= limits.max_target_bytes);
        assert!(h.len <= limits.max_head_bytes);
        format!("{h:?}")
    }))
}

fuzz_target!(|data: &[u8]| {
    // Small limits so the fuzzer reaches them; the first byte varies the header count.
    let limits = Limits {
        max_head_bytes: 512,
        max_headers: usize::from(data.first().copied().unwrap_or(8) % 16),
        max_target_bytes: 128,
    };
    let whole = outcome(data, &limits);
    if let Ok(Some(_)) = &whole {
        let mut headers = [EMPTY_HEADER; 32];
        let head = parse_request(data, &mut headers, &limits).unwrap().complete().unwrap();
        let len = head.len;
        let again = outcome(&data[..len], &limits);
        assert_eq!(again, whole, "re-parsing input[..len] differs");
    }
    // Through the memo: the input, the head again followed by the input (a repeat when the
    // head was complete), and the input with its middle byte changed.
    let len = match &whole {
        Ok(Some(_)) => {
            let mut headers = [EMPTY_HEADER; 32];
            parse_request(data, &mut headers, &limits).unwrap().complete().unwrap().len
        }
        _ => 0,
    };
    let mut changed = data.to_vec();
    if let Some(b) = changed.get_mut(data.len() / 2) {
        *b ^= 0x20;
    }
    let mut last = LastHead::new();
    for input in [data.to_vec(), [&data[..len], data].concat(), changed, data.to_vec()] {
        // A scanner per input: each is a new head, not more bytes of the last one.
        let mut scanner = HeadScanner::new();
        let mut storage = [const { MaybeUninit::uninit() }; 32];
        let memo = last.parse_uninit(&mut scanner, &input, &mut storage, &limits);
        let memo = memo.map(|s| s.complete().map(|h| format!("{h:?}")));
        assert_eq!(memo, outcome(&input, &limits), "through the memo");
    }
    // Trickle: every split point, then the bytes one at a time.
    for split in 0..=data.len().min(64) {
        let mut scanner = HeadScanner::new();
        let mut headers = [EMPTY_HEADER; 32];
        let mut verdict = None;
        for end in [split, data.len()] {
            match scanner.parse(&data[..end], &mut headers, &limits) {
                Ok(s) if s.is_partial() => continue,
                Ok(s) => verdict = Some(Ok(s.complete().map(|h| format!("{h:?}")))),
                Err(e) => verdict = Some(Err(e)),
            }
            break;
        }
        match verdict {
            // Still waiting: after a first `Partial` the scanner reports an error when the bad
            // line ends (or the head, or the limit), so the one-shot parse may have found one
            // inside an unfinished line already.
            None => assert!(!matches!(whole, Ok(Some(_))), "scanner partial, one-shot complete"),
            // An early verdict on a prefix must be an error the whole input also has, or a
            // head the whole input also starts with.
            Some(v) => assert_eq!(v, whole, "split at {split}"),
        }
    }
    let mut scanner = HeadScanner::new();
    let mut headers = [EMPTY_HEADER; 32];
    for end in 1..=data.len() {
        match scanner.parse(&data[..end], &mut headers, &limits) {
            Ok(s) if s.is_partial() => continue,
            Ok(s) => {
                let v = Ok(s.complete().map(|h| format!("{h:?}")));
                // A head complete in a prefix is the same head in the whole input.
                assert_eq!(v, whole, "trickled to {end}");
                break;
            }
            Err(e) => {
                // An error proven by a prefix stays an error (maybe a more precise one is
                // found first when the limit is reached with more bytes).
                assert!(whole.is_err(), "trickled error {e:?} at {end}, whole: {whole:?}");
                break;
            }
        }
    }
});
