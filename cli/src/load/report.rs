//! The report: text for people, JSON for programs (fields documented in docs/LOAD.md).

use std::fmt::Write as _;

use hdrhistogram::Histogram;
use serde_json::{Value, json};

use super::stats::{ErrorKind, Stats};

/// A WebSocket run's messages.
pub struct WsMeta {
    pub size: usize,
    pub text: bool,
    /// permessage-deflate agreed (by the first WebSocket opened).
    pub deflate: bool,
}

/// What the run was, beside its figures.
pub struct Meta<'a> {
    pub url: &'a str,
    pub protocol: &'static str,
    /// A WebSocket run.
    pub ws: Option<WsMeta>,
    pub connections: u32,
    pub threads: u16,
    pub streams: u32,
    pub pipeline: u32,
    pub rate: Option<f64>,
    pub duration_s: f64,
    pub interrupted: bool,
}

/// Rows of the text histogram.
const ROWS: usize = 10;
const BAR: usize = 40;

/// A duration in microseconds, in the unit that reads best.
fn human(us: f64) -> String {
    if us < 1_000.0 {
        format!("{us:.0}µs")
    } else if us < 1_000_000.0 {
        format!("{:.2}ms", us / 1_000.0)
    } else {
        format!("{:.2}s", us / 1_000_000.0)
    }
}

fn human_bytes(b: f64) -> String {
    match b {
        b if b >= 1e9 => format!("{:.2} GB", b / 1e9),
        b if b >= 1e6 => format!("{:.2} MB", b / 1e6),
        b if b >= 1e3 => format!("{:.2} kB", b / 1e3),
        b => format!("{b:.0} B"),
    }
}

fn per_second(n: f64, duration_s: f64) -> f64 {
    if duration_s > 0.0 { n / duration_s } else { 0.0 }
}

/// min, mean, p50, p90, p99, p99.9, max of a histogram (zeros when empty).
fn summary(h: &Histogram<u64>) -> Value {
    if h.is_empty() {
        return json!({"min": 0, "mean": 0.0, "stdev": 0.0, "p50": 0, "p90": 0, "p99": 0,
                      "p999": 0, "max": 0});
    }
    json!({
        "min": h.min(),
        "mean": (h.mean() * 10.0).round() / 10.0,
        "stdev": (h.stdev() * 10.0).round() / 10.0,
        "p50": h.value_at_quantile(0.50),
        "p90": h.value_at_quantile(0.90),
        "p99": h.value_at_quantile(0.99),
        "p999": h.value_at_quantile(0.999),
        "max": h.max(),
    })
}

/// Log-spaced buckets from the smallest to the largest latency: (upper bound µs, count).
fn buckets(h: &Histogram<u64>) -> Vec<(u64, u64)> {
    if h.is_empty() {
        return Vec::new();
    }
    let (lo, hi) = (h.min().max(1) as f64, h.max().max(1) as f64);
    let step = (hi / lo).powf(1.0 / ROWS as f64);
    let mut out = Vec::with_capacity(ROWS);
    let mut from = 0u64;
    for row in 1..=ROWS {
        let upper = if row == ROWS { h.max() } else { (lo * step.powi(row as i32)).ceil() as u64 };
        if upper < from {
            continue;
        }
        let n = h.count_between(from, upper);
        out.push((upper, n));
        from = h.next_non_equivalent(upper);
    }
    out
}

fn errors_json(kinds: &[ErrorKind], s: &Stats) -> serde_json::Map<String, Value> {
    kinds.iter().map(|k| (k.name().to_owned(), json!(s.errors[*k as usize]))).collect()
}

/// A WebSocket run's figures as JSON.
fn ws_json(meta: &Meta<'_>, ws: &WsMeta, s: &Stats) -> Value {
    let mut connect = summary(&s.connect);
    connect["count"] = json!(s.connect.len());
    let histogram: Vec<Value> =
        buckets(&s.latency).iter().map(|(le, n)| json!({"le_us": le, "count": n})).collect();
    json!({
        "url": meta.url,
        "protocol": meta.protocol,
        "mode": if meta.rate.is_some() { "open" } else { "closed" },
        "rate": meta.rate,
        "connections": meta.connections,
        "threads": meta.threads,
        "in_flight": meta.pipeline,
        "message_size": ws.size,
        "message_type": if ws.text { "text" } else { "binary" },
        "deflate": ws.deflate,
        "duration_s": (meta.duration_s * 1e6).round() / 1e6,
        "interrupted": meta.interrupted,
        "messages": s.requests(),
        "sent": s.sent,
        "msg_per_s": (per_second(s.requests() as f64, meta.duration_s) * 10.0).round() / 10.0,
        "bytes": s.bytes,
        "bytes_per_s": per_second(s.bytes as f64, meta.duration_s).round(),
        "wire_bytes_sent": s.wire_sent,
        "wire_bytes_received": s.wire_received,
        "latency_us": summary(&s.latency),
        "connect_us": connect,
        "errors": errors_json(&ErrorKind::WS, s),
        "errors_total": s.error_total(),
        "late": s.late,
        "histogram_us": histogram,
    })
}

/// The complete figures as JSON.
pub fn json(meta: &Meta<'_>, s: &Stats) -> Value {
    if let Some(ws) = &meta.ws {
        return ws_json(meta, ws, s);
    }
    let status: serde_json::Map<String, Value> = s
        .status
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(code, n)| (code.to_string(), json!(n)))
        .collect();
    let errors = errors_json(&ErrorKind::HTTP, s);
    let mut connect = summary(&s.connect);
    connect["count"] = json!(s.connect.len());
    let histogram: Vec<Value> =
        buckets(&s.latency).iter().map(|(le, n)| json!({"le_us": le, "count": n})).collect();
    json!({
        "url": meta.url,
        "protocol": meta.protocol,
        "mode": if meta.rate.is_some() { "open" } else { "closed" },
        "rate": meta.rate,
        "connections": meta.connections,
        "threads": meta.threads,
        "streams_per_connection": meta.streams,
        "pipeline": meta.pipeline,
        "duration_s": (meta.duration_s * 1e6).round() / 1e6,
        "interrupted": meta.interrupted,
        "requests": s.requests(),
        "sent": s.sent,
        "req_per_s": (per_second(s.requests() as f64, meta.duration_s) * 10.0).round() / 10.0,
        "bytes": s.bytes,
        "bytes_per_s": per_second(s.bytes as f64, meta.duration_s).round(),
        "latency_us": summary(&s.latency),
        "ttfb_us": summary(&s.ttfb),
        "connect_us": connect,
        "status": status,
        "errors": errors,
        "errors_total": s.error_total(),
        "late": s.late,
        "histogram_us": histogram,
    })
}

/// The report for people.
pub fn text(meta: &Meta<'_>, s: &Stats) -> String {
    let mut o = String::new();
    let mode = match meta.rate {
        Some(r) => format!("open loop at {r} req/s"),
        None => "closed loop".to_owned(),
    };
    let per_conn = match (&meta.ws, meta.protocol, meta.streams, meta.pipeline) {
        (Some(_), _, _, p) if p > 1 => format!(" x {p} messages in flight"),
        (Some(_), _, _, _) => String::new(),
        (None, "HTTP/2", m, _) if m > 1 => format!(" x {m} streams"),
        (None, "HTTP/1.1", _, p) if p > 1 => format!(", pipeline {p}"),
        _ => String::new(),
    };
    let (what, per, bytes_of) = match meta.ws {
        Some(_) => ("messages", "msg/s", "echoed payloads"),
        None => ("requests", "req/s", "response bodies"),
    };
    let messages = match &meta.ws {
        Some(ws) => format!(
            ", {}-byte {} messages{}",
            ws.size,
            if ws.text { "text" } else { "binary" },
            if ws.deflate { ", permessage-deflate" } else { "" },
        ),
        None => String::new(),
    };
    let _ = writeln!(
        o,
        "{} — {}, {} connections{per_conn}, {} threads, {mode}{messages}{}",
        meta.url,
        meta.protocol,
        meta.connections,
        meta.threads,
        if meta.interrupted { " (interrupted)" } else { "" }
    );
    let d = meta.duration_s;
    let _ = writeln!(
        o,
        "  {what:<9} {} in {d:.2}s, {:.1} {per}, {}/s ({bytes_of})",
        s.requests(),
        per_second(s.requests() as f64, d),
        human_bytes(per_second(s.bytes as f64, d)),
    );
    if meta.ws.is_some() && s.requests() > 0 {
        let per = |b: u64| b as f64 / s.requests() as f64;
        let _ = writeln!(
            o,
            "  wire      {:.1} B sent, {:.1} B received per message (frames, as compressed)",
            per(s.wire_sent),
            per(s.wire_received),
        );
    }
    let _ = writeln!(
        o,
        "  {:<9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "", "min", "mean", "p50", "p90", "p99", "p99.9", "max"
    );
    for (name, h) in [("latency", &s.latency), ("ttfb", &s.ttfb), ("connect", &s.connect)] {
        if h.is_empty() {
            continue;
        }
        let q = |x| human(h.value_at_quantile(x) as f64);
        let _ = writeln!(
            o,
            "  {name:<9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
            human(h.min() as f64),
            human(h.mean()),
            q(0.5),
            q(0.9),
            q(0.99),
            q(0.999),
            human(h.max() as f64)
        );
    }
    if meta.ws.is_none() {
        let codes: Vec<String> = s
            .status
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(code, n)| format!("{code}: {n}"))
            .collect();
        let codes = if codes.is_empty() { "none".to_owned() } else { codes.join(", ") };
        let _ = writeln!(o, "  status    {codes}");
    }
    let kinds: &[ErrorKind] = if meta.ws.is_some() { &ErrorKind::WS } else { &ErrorKind::HTTP };
    let errors: Vec<String> = kinds
        .iter()
        .filter(|k| s.errors[**k as usize] > 0)
        .map(|k| format!("{}: {}", k.name(), s.errors[*k as usize]))
        .collect();
    let errors = if errors.is_empty() { "none".to_owned() } else { errors.join(", ") };
    let _ = writeln!(o, "  errors    {errors}");
    if meta.rate.is_some() {
        let _ = writeln!(
            o,
            "  late      {} of {} {what} (their connection was busy when they were due)",
            s.late, s.sent
        );
    }
    let rows = buckets(&s.latency);
    let top = rows.iter().map(|r| r.1).max().unwrap_or(0).max(1);
    if !rows.is_empty() {
        let _ = writeln!(o, "  latency histogram");
    }
    for (le, n) in rows {
        let bar = "#".repeat(((n as f64 / top as f64) * BAR as f64).round() as usize);
        let _ = writeln!(o, "    ≤ {:>9} {bar:<BAR$} {n}", human(le as f64));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_units() {
        struct Case {
            us: f64,
            expect: &'static str,
        }
        let cases = [
            Case { us: 12.0, expect: "12µs" },
            Case { us: 1_500.0, expect: "1.50ms" },
            Case { us: 2_345_000.0, expect: "2.35s" },
        ];
        for c in cases {
            assert_eq!(human(c.us), c.expect);
        }
    }

    #[test]
    fn buckets_cover_every_value_once() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        for v in [10, 20, 40, 80, 1000, 5000, 100_000] {
            h.record(v).unwrap();
        }
        let rows = buckets(&h);
        assert!(rows.len() <= ROWS);
        assert_eq!(rows.iter().map(|r| r.1).sum::<u64>(), 7);
        assert_eq!(rows.last().unwrap().0, h.max());
    }

    #[test]
    fn json_has_the_documented_keys() {
        let meta = Meta {
            url: "http://x/",
            protocol: "HTTP/1.1",
            ws: None,
            connections: 1,
            threads: 1,
            streams: 1,
            pipeline: 1,
            rate: None,
            duration_s: 2.0,
            interrupted: false,
        };
        let mut s = Stats::new();
        s.latency.record(1000).unwrap();
        s.status[200] = 1;
        let v = json(&meta, &s);
        for key in ["requests", "errors", "duration_s", "status", "protocol", "latency_us"] {
            assert!(v.get(key).is_some(), "{key}");
        }
        for key in ["p50", "p90", "p99", "p999", "max", "mean"] {
            assert!(v["latency_us"].get(key).is_some(), "{key}");
        }
        assert_eq!(v["status"]["200"], 1);
        assert_eq!(v["req_per_s"], 0.5);
        assert_eq!(v["errors"]["timeout"], 0);
        assert!(v["errors"].get("mismatch").is_none());
    }

    #[test]
    fn websocket_json_has_the_documented_keys() {
        let meta = Meta {
            url: "ws://x/",
            protocol: "WebSocket",
            ws: Some(WsMeta { size: 20, text: false, deflate: false }),
            connections: 1,
            threads: 1,
            streams: 1,
            pipeline: 4,
            rate: None,
            duration_s: 2.0,
            interrupted: false,
        };
        let mut s = Stats::new();
        s.latency.record(100).unwrap();
        s.bytes = 20;
        s.error(ErrorKind::Mismatch, 2);
        let v = json(&meta, &s);
        let keys = [
            "url",
            "protocol",
            "mode",
            "rate",
            "connections",
            "threads",
            "in_flight",
            "message_size",
            "message_type",
            "deflate",
            "duration_s",
            "interrupted",
            "messages",
            "sent",
            "msg_per_s",
            "bytes",
            "bytes_per_s",
            "wire_bytes_sent",
            "wire_bytes_received",
            "latency_us",
            "connect_us",
            "errors",
            "errors_total",
            "late",
            "histogram_us",
        ];
        for key in keys {
            assert!(v.get(key).is_some(), "{key}");
        }
        assert_eq!(v.as_object().unwrap().len(), keys.len());
        assert_eq!((v["messages"].as_u64(), v["msg_per_s"].as_f64()), (Some(1), Some(0.5)));
        assert_eq!(
            (v["in_flight"].as_u64(), v["message_type"].as_str()),
            (Some(4), Some("binary"))
        );
        for kind in ErrorKind::WS {
            assert!(v["errors"].get(kind.name()).is_some(), "{}", kind.name());
        }
        assert_eq!(v["errors"]["mismatch"], 2);
        assert_eq!(v["errors"].as_object().unwrap().len(), ErrorKind::WS.len());
        assert!(text(&meta, &s).contains("20-byte binary messages"));
    }
}
