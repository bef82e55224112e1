//! Names, sizes and dates as a listing shows them, and the escaping each context needs.

use std::fmt::Write as _;

/// A file name for display: as it is when UTF-8, else percent-encoded (every byte outside
/// printable ASCII as `%XX`, `%` itself too), so it is shown without loss and matches its
/// link.
pub(crate) fn display_name(name: &[u8], out: &mut String) {
    match std::str::from_utf8(name) {
        Ok(s) => out.push_str(s),
        Err(_) => {
            for &b in name {
                if (0x20..0x7f).contains(&b) && b != b'%' {
                    out.push(char::from(b));
                } else {
                    let _ = write!(out, "%{b:02X}");
                }
            }
        }
    }
}

/// Escapes the five characters that matter in HTML text and attribute values.
pub(crate) fn escape_html(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

/// Percent-encodes every byte outside RFC 3986 §2.3 `unreserved` (any bytes: a name that is
/// not UTF-8 gets a link that decodes back to its exact bytes).
pub(crate) fn percent_encode(bytes: &[u8], out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in bytes {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 15)]));
        }
    }
}

/// A JSON string (RFC 8259 §7) of UTF-8 text.
pub(crate) fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A size people read at a glance: `612 B`, `1.5 KiB`, `3.9 MiB` (binary units, one decimal
/// below 10).
pub(crate) fn human_size(n: u64, out: &mut String) {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        let _ = write!(out, "{n} B");
        return;
    }
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if v < 10.0 {
        let _ = write!(out, "{v:.1} {}", UNITS[unit]);
    } else {
        let _ = write!(out, "{v:.0} {}", UNITS[unit]);
    }
}

/// `2026-11-24 05:32` (UTC, to the minute) for people, or with `iso` the full RFC 3339 time
/// `2026-11-24T05:32:30Z` for machines.
pub(crate) fn date(secs: u64, iso: bool, out: &mut String) {
    let t = crate::date::utc(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs));
    let _ = write!(out, "{:04}-{:02}-{:02}", t.year, t.month, t.day);
    if iso {
        let _ = write!(out, "T{:02}:{:02}:{:02}Z", t.hour, t.minute, t.second);
    } else {
        let _ = write!(out, " {:02}:{:02}", t.hour, t.minute);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_escaped_per_context_rfc3986_2_3() {
        struct Case {
            input: &'static [u8],
            shown: &'static str,
            html: &'static str,
            href: &'static str,
        }
        let cases = [
            Case { input: b"a.txt", shown: "a.txt", html: "a.txt", href: "a.txt" },
            Case {
                input: b"<script>&\"'.txt",
                shown: "<script>&\"'.txt",
                html: "&lt;script&gt;&amp;&quot;&#39;.txt",
                href: "%3Cscript%3E%26%22%27.txt",
            },
            Case {
                input: b"a b:c?#%",
                shown: "a b:c?#%",
                html: "a b:c?#%",
                href: "a%20b%3Ac%3F%23%25",
            },
            Case { input: "\u{e9}".as_bytes(), shown: "\u{e9}", html: "\u{e9}", href: "%C3%A9" },
            // Not UTF-8: shown percent-encoded, linked by its bytes.
            Case {
                input: b"caf\xe9 100%.txt",
                shown: "caf%E9 100%25.txt",
                html: "caf%E9 100%25.txt",
                href: "caf%E9%20100%25.txt",
            },
        ];
        for c in cases {
            let (mut shown, mut html, mut href) = (String::new(), String::new(), String::new());
            display_name(c.input, &mut shown);
            escape_html(&shown, &mut html);
            percent_encode(c.input, &mut href);
            assert_eq!((shown.as_str(), html.as_str(), href.as_str()), (c.shown, c.html, c.href));
        }
    }

    #[test]
    fn sizes_and_dates() {
        struct Case {
            input: u64,
            expect: &'static str,
        }
        let cases = [
            Case { input: 0, expect: "0 B" },
            Case { input: 1023, expect: "1023 B" },
            Case { input: 1024, expect: "1.0 KiB" },
            Case { input: 1536, expect: "1.5 KiB" },
            Case { input: 20 * 1024, expect: "20 KiB" },
            Case { input: 1 << 20, expect: "1.0 MiB" },
            Case { input: 5 << 30, expect: "5.0 GiB" },
            Case { input: u64::MAX, expect: "16384 PiB" },
        ];
        for c in cases {
            let mut s = String::new();
            human_size(c.input, &mut s);
            assert_eq!(s, c.expect, "{}", c.input);
        }
        let (mut a, mut b) = (String::new(), String::new());
        date(784_111_777, false, &mut a);
        date(784_111_777, true, &mut b);
        assert_eq!((a.as_str(), b.as_str()), ("1994-11-06 08:49", "1994-11-06T08:49:37Z"));
        let mut j = String::new();
        json_string("a\"b\\c\n\u{1}", &mut j);
        assert_eq!(j, "\"a\\\"b\\\\c\\u000a\\u0001\"");
    }
}
