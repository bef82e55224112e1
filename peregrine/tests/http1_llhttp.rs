//! The llhttp conformance corpus against the head parsers, through triage tables.
//!
//! Corpus: `tests/data/llhttp_cases.jsonl` (copied from llhttp's test/request/*.md and
//! test/response/*.md; MIT, copyright Fedor Indutny and llhttp contributors; see
//! `tests/data/llhttp_README.md`). Tables: `tests/llhttp_triage.tsv` (request cases) and
//! `tests/llhttp_response_triage.tsv` (response cases), one row per case:
//!
//! `id  llhttp  verdict  class  reason`
//!
//! - `llhttp`: llhttp's outcome (`ok`, `upgrade`, `error`) for the case's mode (strict, or the
//!   lenient flag its type names), to notice a changed corpus.
//! - `verdict`: what we say about the FIRST head in the raw bytes: `accept`, `partial` (the
//!   bytes end inside the head), or `reject:<ParseError>`. For responses the head goes on to
//!   `http1::framing::response_framing` (as the answer to a GET), which owns the
//!   Content-Length and Transfer-Encoding rules: its refusal is `framing:<ParseError>`; and a
//!   chunked body goes through `http1::chunked::ChunkedDecoder`, whose refusal is
//!   `body:<ChunkedError>` (a body that ends early is not an error here).
//! - `class`: `agree` when the verdict points the same way as llhttp (accept ↔ ok/upgrade,
//!   reject/framing ↔ error); otherwise `differs` (a deliberate strictness or leniency
//!   difference, with its RFC section) or `out-of-scope` (llhttp's verdict is about something
//!   after the head: the body, chunked framing, a later pipelined message, connection
//!   management, or for requests a `Host`/Content-Length rule that belongs to
//!   `http1::framing`, not the head parser). Every row that does not agree carries a reason.
//!
//! Only the verdict on the first message is compared: bodies, chunked data and later pipelined
//! messages are left to the framing and chunked tests. Most llhttp requests lack `Host`; Host
//! rules live in framing, so they do not affect the request table.
//!
//! A test fails when a case is missing from its table, a row names no case, or any verdict
//! differs. `LLHTTP_TRIAGE_PRINT=1 cargo test --test http1_llhttp -- --nocapture` prints the
//! current verdicts in table form.

use base64::Engine;
use peregrine::Method;
use peregrine::http1::chunked::ChunkedDecoder;
use peregrine::http1::framing::{BodyLength, response_framing};
use peregrine::http1::{
    EMPTY_HEADER, HeadScanner, LastHead, LastResponseHead, Limits, Status, parse_request,
    parse_response,
};
use std::collections::BTreeMap;
use std::mem::MaybeUninit;

const CORPUS: &str = include_str!("data/llhttp_cases.jsonl");
const TRIAGE: &str = include_str!("llhttp_triage.tsv");
const RESPONSE_TRIAGE: &str = include_str!("llhttp_response_triage.tsv");

struct Row<'a> {
    llhttp: &'a str,
    verdict: &'a str,
    class: &'a str,
    reason: &'a str,
}

fn request_verdict(raw: &[u8]) -> String {
    let mut headers = [EMPTY_HEADER; 64];
    let parsed = parse_request(raw, &mut headers, &Limits::default());
    // The memo of the last head gives the parser's outcome, and so does a repeat of a complete
    // head (answered from memory), followed by the next message's bytes.
    let len = match parsed {
        Ok(Status::Complete(ref head)) => head.len,
        _ => 0,
    };
    let mut last = LastHead::new();
    for input in [raw.to_vec(), [&raw[..len], raw].concat()] {
        let mut scanner = HeadScanner::new();
        let mut storage = [const { MaybeUninit::uninit() }; 64];
        let memo = last.parse_uninit(&mut scanner, &input, &mut storage, &Limits::default());
        let mut headers = [EMPTY_HEADER; 64];
        let plain = parse_request(&input, &mut headers, &Limits::default());
        assert_eq!(format!("{memo:?}"), format!("{plain:?}"), "{}", String::from_utf8_lossy(raw));
    }
    match parsed {
        Ok(Status::Complete(_)) => "accept".into(),
        Ok(Status::Partial) => "partial".into(),
        Err(e) => format!("reject:{e:?}"),
    }
}

/// The head parser's verdict, then framing's for the response to a GET (llhttp's response
/// cases assume no particular request; none of them answers HEAD or CONNECT), then the chunked
/// decoder's on a chunked body.
fn response_verdict(raw: &[u8]) -> String {
    // The memo of the last head gives the parser's outcome, for the case and for its head
    // repeated (answered from memory) before the case's bytes again.
    let mut headers = [EMPTY_HEADER; 64];
    let len = match parse_response(raw, &mut headers, &Limits::default()) {
        Ok(Status::Complete(head)) => head.len,
        _ => 0,
    };
    let mut last = LastResponseHead::new();
    for input in [raw.to_vec(), [&raw[..len], raw].concat()] {
        let mut scanner = HeadScanner::new();
        let mut storage = [const { MaybeUninit::uninit() }; 64];
        let memo = last.parse_uninit(&mut scanner, &input, &mut storage, &Limits::default());
        let mut headers = [EMPTY_HEADER; 64];
        let plain = parse_response(&input, &mut headers, &Limits::default());
        assert_eq!(format!("{memo:?}"), format!("{plain:?}"), "{}", String::from_utf8_lossy(raw));
    }
    let mut headers = [EMPTY_HEADER; 64];
    let head = match parse_response(raw, &mut headers, &Limits::default()) {
        Ok(Status::Complete(head)) => head,
        Ok(Status::Partial) => return "partial".into(),
        Err(e) => return format!("reject:{e:?}"),
    };
    let framing = response_framing(Method::Get, head.status, head.version, head.headers);
    // The client's path (the parser's identified fields) gives the same verdict.
    assert_eq!(head.framing(Method::Get), framing, "{}", String::from_utf8_lossy(raw));
    match framing {
        Ok(f) if f.body == BodyLength::Chunked => {
            let mut body = &raw[head.len..];
            let mut decoder = ChunkedDecoder::new();
            while !decoder.is_done() {
                match decoder.decode(body) {
                    Ok(d) if d.consumed == 0 => break,
                    Ok(d) => body = &body[d.consumed..],
                    Err(e) => return format!("body:{e:?}"),
                }
            }
            "accept".into()
        }
        Ok(_) => "accept".into(),
        Err(e) => format!("framing:{e:?}"),
    }
}

fn agrees(llhttp: &str, verdict: &str) -> bool {
    match llhttp {
        "ok" | "upgrade" => verdict == "accept",
        _ => verdict != "accept" && verdict != "partial",
    }
}

/// Checks every corpus case of `kind` (`request` or `response`) against `triage`; returns how
/// many cases there are.
fn check_corpus(kind: &str, triage: &str, verdict: fn(&[u8]) -> String) -> usize {
    let mut table = BTreeMap::new();
    for (n, line) in triage.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        assert!(f.len() == 5, "{kind} triage line {}: want 5 tab-separated fields: {line}", n + 1);
        let row = Row { llhttp: f[1], verdict: f[2], class: f[3], reason: f[4] };
        assert!(table.insert(f[0], row).is_none(), "{kind} triage line {}: duplicate id", n + 1);
    }

    let print = std::env::var_os("LLHTTP_TRIAGE_PRINT").is_some();
    let (mut cases, mut differs, mut out_of_scope) = (0, 0, 0);
    let mut failures = Vec::new();
    let mut seen = Vec::new();
    for line in CORPUS.lines() {
        let case: serde_json::Value = serde_json::from_str(line).expect("corpus line is JSON");
        let id = case["id"].as_str().expect("id");
        let ty = case["type"].as_str().expect("type");
        assert!(ty.starts_with("request") || ty.starts_with("response"), "{id}: unknown type {ty}");
        if !ty.starts_with(kind) {
            continue;
        }
        cases += 1;
        let raw = base64::engine::general_purpose::STANDARD
            .decode(case["raw_b64"].as_str().expect("raw_b64"))
            .expect("base64");
        let expect = case["expect"].as_str().expect("expect");
        let ours = verdict(&raw);
        if print {
            let class = if agrees(expect, &ours) { "agree" } else { "?" };
            println!("{id}\t{expect}\t{ours}\t{class}\t{}", case["name"].as_str().unwrap_or(""));
        }
        seen.push(id.to_string());
        let Some(row) = table.get(id) else {
            failures
                .push(format!("{id}: not in the triage table (ours: {ours}, llhttp: {expect})"));
            continue;
        };
        if row.llhttp != expect {
            failures.push(format!("{id}: corpus says llhttp {expect}, table says {}", row.llhttp));
        }
        if row.verdict != ours {
            failures.push(format!("{id}: verdict {ours}, table says {}", row.verdict));
        }
        let agree = agrees(expect, &ours);
        match (agree, row.class) {
            (true, "agree") => {}
            (false, "differs") if !row.reason.trim().is_empty() => differs += 1,
            (false, "out-of-scope") if !row.reason.trim().is_empty() => out_of_scope += 1,
            _ => failures.push(format!(
                "{id}: class {:?} with reason {:?} does not fit (agree: {agree})",
                row.class, row.reason
            )),
        }
    }
    for id in table.keys() {
        if !seen.iter().any(|s| s == id) {
            failures.push(format!("{id}: in the {kind} triage table but not a {kind} case"));
        }
    }
    println!(
        "llhttp: {cases} {kind} cases checked: {} agree, {differs} differ, {out_of_scope} out of \
         scope",
        cases - differs - out_of_scope
    );
    assert!(failures.is_empty(), "{} problems:\n{}", failures.len(), failures.join("\n"));
    cases
}

#[test]
fn llhttp_request_corpus_matches_the_triage_table() {
    let cases = check_corpus("request", TRIAGE, request_verdict);
    assert!(cases > 100, "corpus looks truncated");
}

#[test]
fn llhttp_response_corpus_matches_the_triage_table() {
    let cases = check_corpus("response", RESPONSE_TRIAGE, response_verdict);
    assert!(cases > 80, "corpus looks truncated");
}
