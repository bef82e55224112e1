//! Access-log line formats: Apache/nginx `common` and `combined`, and JSON lines.

use std::io::Write;
use std::time::{Duration, SystemTime};

use peregrine::Version;
use peregrine::server::LogEntry;

/// How each access-log line is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Common Log Format, as Apache's `common` (`%h %l %u %t "%r" %>s %b`) and nginx's
    /// default without the last two fields:
    /// `127.0.0.1 - - [24/Nov/2026:05:32:30 +0000] "GET /a.txt HTTP/1.1" 200 12`; a proxied
    /// request adds `upstream=URL upstream_time=SECONDS` (here and in `combined`).
    Common,
    /// Apache's and nginx's `combined`: `common` then `"%{Referer}i" "%{User-agent}i"`.
    Combined,
    /// One JSON object per line: time (RFC 3339, UTC, milliseconds), remote_addr, method,
    /// target, version (null when unknown), status, body_bytes, duration_ms, user_agent,
    /// referer (null when absent), refused; for a proxied request also upstream and
    /// upstream_ms.
    Json,
}

/// Appends the line for `e` (with its final `\n`) to `out`; `now` is when it is logged.
pub fn write_line(format: Format, e: &LogEntry<'_>, now: SystemTime, out: &mut Vec<u8>) {
    // Apache's %t and nginx's $time_local: when the request was received.
    let start = now.checked_sub(e.duration).unwrap_or(now);
    match format {
        Format::Common | Format::Combined => {
            let _ = write!(out, "{} - - [", e.remote_addr.ip());
            clf_time(start, out);
            out.extend_from_slice(b"] \"");
            request_line(e, out);
            let _ = write!(out, "\" {} ", e.status);
            // %b: bytes of content, "-" for none.
            if e.body_bytes == 0 {
                out.push(b'-');
            } else {
                let _ = write!(out, "{}", e.body_bytes);
            }
            if format == Format::Combined {
                for field in [e.referer, e.user_agent] {
                    out.extend_from_slice(b" \"");
                    match field {
                        Some(v) => clf_escape(v, false, out),
                        None => out.push(b'-'),
                    }
                    out.push(b'"');
                }
            }
            // A proxied request: nginx's $upstream_addr and $upstream_header_time, as
            // key=value after the standard fields so that CLF parsers still read the line.
            if let Some(up) = e.upstream {
                out.extend_from_slice(b" upstream=");
                clf_escape(up.as_bytes(), false, out);
                if let Some(d) = e.upstream_duration {
                    let _ = write!(out, " upstream_time={:.3}", d.as_secs_f64());
                }
            }
        }
        Format::Json => json(e, start, out),
    }
    out.push(b'\n');
}

fn version_str(v: Option<Version>) -> Option<&'static str> {
    match v {
        Some(Version::Http10) => Some("HTTP/1.0"),
        Some(Version::Http11) => Some("HTTP/1.1"),
        Some(Version::Http2) => Some("HTTP/2.0"),
        Some(Version::Http3) => Some("HTTP/3.0"),
        _ => None,
    }
}

/// `%r`: the request line; for a refused request what could be read of it.
fn request_line(e: &LogEntry<'_>, out: &mut Vec<u8>) {
    if e.method == "-" && e.target == "-" && e.version.is_none() {
        out.push(b'-');
        return;
    }
    clf_escape(e.method.as_bytes(), e.refused, out);
    out.push(b' ');
    clf_escape(e.target.as_bytes(), e.refused, out);
    if let Some(v) = version_str(e.version) {
        out.push(b' ');
        out.extend_from_slice(v.as_bytes());
    }
}

/// `[10/Oct/2000:13:55:36 +0000]`'s inside: the CLF date, in UTC.
fn clf_time(t: SystemTime, out: &mut Vec<u8>) {
    let u = peregrine::date::utc(t);
    let _ = write!(
        out,
        "{:02}/{}/{}:{:02}:{:02}:{:02} +0000",
        u.day,
        u.month_name(),
        u.year,
        u.hour,
        u.minute,
        u.second
    );
}

/// Apache's escaping of `%r` and `%{…}i`: `"` and `\` get a backslash, other bytes outside
/// printable ASCII become `\xhh`; a line can be neither split nor forged. `escaped` input
/// (what the server could read of a refused request) already carries `\xhh` sequences for
/// such bytes and its backslashes are theirs.
fn clf_escape(bytes: &[u8], escaped: bool, out: &mut Vec<u8>) {
    for &b in bytes {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' if !escaped => out.extend_from_slice(b"\\\\"),
            0x20..=0x7e => out.push(b),
            _ => {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
    }
}

fn json(e: &LogEntry<'_>, start: SystemTime, out: &mut Vec<u8>) {
    let u = peregrine::date::utc(start);
    let ms = start.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.subsec_millis());
    let _ = write!(
        out,
        "{{\"time\":\"{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{ms:03}Z\",\"remote_addr\":\"{}\",\
         \"method\":",
        u.year, u.month, u.day, u.hour, u.minute, u.second, e.remote_addr
    );
    json_string(e.method.as_bytes(), out);
    out.extend_from_slice(b",\"target\":");
    json_string(e.target.as_bytes(), out);
    out.extend_from_slice(b",\"version\":");
    match version_str(e.version) {
        Some(v) => json_string(v.as_bytes(), out),
        None => out.extend_from_slice(b"null"),
    }
    let _ = write!(
        out,
        ",\"status\":{},\"body_bytes\":{},\"duration_ms\":{:.3},\"user_agent\":",
        e.status,
        e.body_bytes,
        millis(e.duration)
    );
    json_opt(e.user_agent, out);
    out.extend_from_slice(b",\"referer\":");
    json_opt(e.referer, out);
    let _ = write!(out, ",\"refused\":{}", e.refused);
    // Only for a proxied request: serve's lines stay as they were.
    if let Some(up) = e.upstream {
        out.extend_from_slice(b",\"upstream\":");
        json_string(up.as_bytes(), out);
        if let Some(d) = e.upstream_duration {
            let _ = write!(out, ",\"upstream_ms\":{:.3}", millis(d));
        }
    }
    out.push(b'}');
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn json_opt(v: Option<&[u8]>, out: &mut Vec<u8>) {
    match v {
        Some(v) => json_string(v, out),
        None => out.extend_from_slice(b"null"),
    }
}

/// A JSON string (RFC 8259 §7). Field values are bytes: valid UTF-8 is kept, any other byte
/// is read as ISO-8859-1 (`\u00XX`), as HTTP's obs-text historically was.
fn json_string(bytes: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    let mut rest = bytes;
    while !rest.is_empty() {
        let (valid, bad) = match std::str::from_utf8(rest) {
            Ok(s) => (s, None),
            Err(err) => {
                let (ok, after) = rest.split_at(err.valid_up_to());
                (std::str::from_utf8(ok).unwrap_or_default(), after.first().copied())
            }
        };
        for c in valid.chars() {
            match c {
                '"' => out.extend_from_slice(b"\\\""),
                '\\' => out.extend_from_slice(b"\\\\"),
                c if (c as u32) < 0x20 || c == '\u{7f}' => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                c => {
                    let mut b = [0; 4];
                    out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
                }
            }
        }
        rest = &rest[valid.len()..];
        if let Some(b) = bad {
            let _ = write!(out, "\\u{b:04x}");
            rest = &rest[1..];
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    fn entry() -> LogEntry<'static> {
        let mut e = LogEntry::new(
            "127.0.0.1:41234".parse::<SocketAddr>().unwrap(),
            "GET",
            "/a.txt?x=1",
            200,
        );
        e.version = Some(Version::Http11);
        e.body_bytes = 12;
        e.duration = Duration::from_micros(1500);
        e
    }

    #[test]
    fn lines_in_each_format() {
        // The request arrived at 2000-10-10T13:55:36.001Z and took 1.5 ms.
        let now = SystemTime::UNIX_EPOCH + Duration::from_micros(971_186_136_002_500);
        struct Case {
            name: &'static str,
            format: Format,
            entry: LogEntry<'static>,
            expect: &'static str,
        }
        let mut with_fields = entry();
        with_fields.referer = Some(b"http://x/\"q\"");
        with_fields.user_agent = Some(b"curl/8 \\ \xff\x01");
        let mut refused = entry();
        (refused.method, refused.target, refused.version) = ("-", "-", None);
        (refused.status, refused.body_bytes, refused.refused) = (400, 0, true);
        let mut refused_partly = entry();
        (refused_partly.target, refused_partly.version) = ("/a\\x01b\"", None);
        (refused_partly.status, refused_partly.refused) = (400, true);
        let mut proxied = entry();
        proxied.upstream = Some("http://127.0.0.1:9001");
        proxied.upstream_duration = Some(Duration::from_micros(1200));
        let cases = [
            Case {
                name: "common, proxied",
                format: Format::Common,
                entry: proxied,
                expect: "127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] \"GET /a.txt?x=1 HTTP/1.1\" 200 12 upstream=http://127.0.0.1:9001 upstream_time=0.001\n",
            },
            Case {
                name: "json, proxied",
                format: Format::Json,
                entry: proxied,
                expect: "{\"time\":\"2000-10-10T13:55:36.001Z\",\"remote_addr\":\"127.0.0.1:41234\",\"method\":\"GET\",\"target\":\"/a.txt?x=1\",\"version\":\"HTTP/1.1\",\"status\":200,\"body_bytes\":12,\"duration_ms\":1.500,\"user_agent\":null,\"referer\":null,\"refused\":false,\"upstream\":\"http://127.0.0.1:9001\",\"upstream_ms\":1.200}\n",
            },
            Case {
                name: "common",
                format: Format::Common,
                entry: entry(),
                expect: "127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] \"GET /a.txt?x=1 HTTP/1.1\" 200 12\n",
            },
            Case {
                name: "combined, fields absent",
                format: Format::Combined,
                entry: entry(),
                expect: "127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] \"GET /a.txt?x=1 HTTP/1.1\" 200 12 \"-\" \"-\"\n",
            },
            Case {
                name: "combined, fields escaped",
                format: Format::Combined,
                entry: with_fields,
                expect: "127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] \"GET /a.txt?x=1 HTTP/1.1\" 200 12 \"http://x/\\\"q\\\"\" \"curl/8 \\\\ \\xff\\x01\"\n",
            },
            Case {
                name: "refused, nothing readable; no content is -",
                format: Format::Common,
                entry: refused,
                expect: "127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] \"-\" 400 -\n",
            },
            Case {
                name: "refused, escaped by the server already",
                format: Format::Common,
                entry: refused_partly,
                expect: "127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] \"GET /a\\x01b\\\"\" 400 12\n",
            },
            Case {
                name: "json",
                format: Format::Json,
                entry: with_fields,
                expect: "{\"time\":\"2000-10-10T13:55:36.001Z\",\"remote_addr\":\"127.0.0.1:41234\",\"method\":\"GET\",\"target\":\"/a.txt?x=1\",\"version\":\"HTTP/1.1\",\"status\":200,\"body_bytes\":12,\"duration_ms\":1.500,\"user_agent\":\"curl/8 \\\\ \\u00ff\\u0001\",\"referer\":\"http://x/\\\"q\\\"\",\"refused\":false}\n",
            },
            Case {
                name: "json, refused",
                format: Format::Json,
                entry: refused,
                expect: "{\"time\":\"2000-10-10T13:55:36.001Z\",\"remote_addr\":\"127.0.0.1:41234\",\"method\":\"-\",\"target\":\"-\",\"version\":null,\"status\":400,\"body_bytes\":0,\"duration_ms\":1.500,\"user_agent\":null,\"referer\":null,\"refused\":true}\n",
            },
        ];
        for c in cases {
            let mut out = Vec::new();
            write_line(c.format, &c.entry, now, &mut out);
            assert_eq!(String::from_utf8_lossy(&out), c.expect, "{}", c.name);
        }
    }

    #[test]
    fn json_lines_parse_as_json() {
        let mut e = entry();
        e.user_agent = Some("h\u{e9}\n\"".as_bytes());
        let mut out = Vec::new();
        write_line(Format::Json, &e, SystemTime::now(), &mut out);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["user_agent"], "h\u{e9}\n\"");
        assert_eq!(v["status"], 200);
    }
}
