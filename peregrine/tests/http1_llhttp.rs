//! The llhttp conformance corpus against the head parser, through a triage table.
//!
//! Corpus: `tests/data/llhttp_cases.jsonl` (copied from llhttp's test/request/*.md; MIT,
//! copyright Fedor Indutny and llhttp contributors; see `tests/data/llhttp_README.md`).
//! Table: `tests/llhttp_triage.tsv`, one row per request case:
//!
//! `id  llhttp  verdict  class  reason`
//!
//! - `llhttp`: llhttp's strict-mode outcome (`ok`, `upgrade`, `error`), to notice a changed
//!   corpus.
//! - `verdict`: what `parse_request` says about the FIRST head in the raw bytes: `accept`,
//!   `partial` (the bytes end inside the head), or `reject:<ParseError>`.
//! - `class`: `agree` when the verdict points the same way as llhttp (accept ↔ ok/upgrade,
//!   reject ↔ error); otherwise `differs` (a deliberate strictness or leniency difference in
//!   the head) or `out-of-scope` (llhttp's verdict is about something after the head: the body,
//!   chunked framing, a later pipelined message, or a `Host`/Content-Length rule that belongs to
//!   `http1::framing`, not the head parser). Every row that does not agree carries a reason.
//!
//! Only the head parser's verdict on the first message is compared: bodies, framing and later
//! pipelined messages are left to the framing tests. Most llhttp requests lack `Host`; Host
//! rules live in framing, so they do not affect this table. Response cases are skipped (kept
//! for the client's parser) and counted.
//!
//! The test fails when a request case is missing from the table, a row names no case, or any
//! verdict differs. `LLHTTP_TRIAGE_PRINT=1 cargo test --test http1_llhttp -- --nocapture`
//! prints the current verdicts in table form.

use base64::Engine;
use peregrine::http1::{EMPTY_HEADER, Limits, Status, parse_request};
use std::collections::BTreeMap;

const CORPUS: &str = include_str!("data/llhttp_cases.jsonl");
const TRIAGE: &str = include_str!("llhttp_triage.tsv");

struct Row<'a> {
    llhttp: &'a str,
    verdict: &'a str,
    class: &'a str,
    reason: &'a str,
}

fn verdict(raw: &[u8]) -> String {
    let mut headers = [EMPTY_HEADER; 64];
    match parse_request(raw, &mut headers, &Limits::default()) {
        Ok(Status::Complete(_)) => "accept".into(),
        Ok(Status::Partial) => "partial".into(),
        Err(e) => format!("reject:{e:?}"),
    }
}

fn agrees(llhttp: &str, verdict: &str) -> bool {
    match llhttp {
        "ok" | "upgrade" => verdict == "accept",
        _ => verdict.starts_with("reject"),
    }
}

#[test]
fn llhttp_request_corpus_matches_the_triage_table() {
    let mut table = BTreeMap::new();
    for (n, line) in TRIAGE.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        assert!(f.len() == 5, "triage line {}: want 5 tab-separated fields: {line}", n + 1);
        let row = Row { llhttp: f[1], verdict: f[2], class: f[3], reason: f[4] };
        assert!(table.insert(f[0], row).is_none(), "triage line {}: duplicate id {}", n + 1, f[0]);
    }

    let print = std::env::var_os("LLHTTP_TRIAGE_PRINT").is_some();
    let (mut requests, mut responses, mut disagreements) = (0, 0, 0);
    let mut failures = Vec::new();
    let mut seen = Vec::new();
    for line in CORPUS.lines() {
        let case: serde_json::Value = serde_json::from_str(line).expect("corpus line is JSON");
        let id = case["id"].as_str().expect("id");
        let kind = case["type"].as_str().expect("type");
        if kind.starts_with("response") {
            responses += 1;
            continue;
        }
        assert!(kind.starts_with("request"), "{id}: unknown type {kind}");
        requests += 1;
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
            (false, "differs" | "out-of-scope") if !row.reason.trim().is_empty() => {
                disagreements += 1;
            }
            _ => failures.push(format!(
                "{id}: class {:?} with reason {:?} does not fit (agree: {agree})",
                row.class, row.reason
            )),
        }
    }
    for id in table.keys() {
        if !seen.iter().any(|s| s == id) {
            failures.push(format!("{id}: in the triage table but not a request case"));
        }
    }
    println!(
        "llhttp: {requests} request cases checked ({disagreements} documented differences), \
         {responses} response cases skipped"
    );
    assert!(failures.is_empty(), "{} problems:\n{}", failures.len(), failures.join("\n"));
    assert!(requests > 100, "corpus looks truncated");
}
