//! Whether the first bytes of a connection can begin an HTTP/1 request line: what decides, when
//! a connection's first request is malformed, between answering it (an HTTP/1 client reads the
//! 400) and closing unanswered (to an HTTP/2 client with a mangled preface, or TLS sent to a
//! plain port, an HTTP/1.1 answer is noise; RFC 9113 §3.4 treats a bad preface as a connection
//! error, which before any frame is a plain close).

use super::field_syntax::is_tchar;

/// Whether `buf`, the start of a connection's input, can begin an HTTP/1 request line
/// (RFC 9112 §3): `method SP request-target`, the target in one of its four forms as far as
/// its first bytes show. Bytes that end before they decide count as a start. A line with the
/// method `PRI` is not one: RFC 9113 §3.4 reserves it for the HTTP/2 connection preface
/// (`PRI * HTTP/2.0`), so it comes from an HTTP/2 client, its preface mangled.
pub(crate) fn may_start_request_line(buf: &[u8]) -> bool {
    // RFC 9112 §2.2: empty lines before the request line are ignored.
    let mut line = buf;
    while let Some(rest) = line.strip_prefix(b"\r\n") {
        line = rest;
    }
    if line.starts_with(b"PRI ") {
        return false;
    }
    // RFC 9110 §9.1: method = token, then one SP (RFC 9112 §3). A method with a stray byte
    // inside ("G\x01T") is still an HTTP/1 client's line, and gets its 400; a first byte that
    // is not a token's (a TLS record's 0x16) or a line ending before any SP is not.
    if !line.first().is_some_and(|&b| is_tchar(b)) {
        return line.is_empty();
    }
    // The verdict is made at the first byte that is not the method's, whatever follows: the
    // parser refuses the line at that byte, and the bytes after it may or may not have arrived
    // by then (the same line whole or in pieces gets the same verdict).
    let method = line.iter().position(|&b| !is_tchar(b)).unwrap_or(line.len());
    let rest = &line[method..];
    match rest.first() {
        None => return true,
        Some(b' ') => {}
        // A line that ends, or an HTAB, after a bare token: no request line.
        Some(b'\t' | b'\r' | b'\n') => return false,
        // A stray byte inside the method: an HTTP/1 client's line, answered 400.
        Some(_) => return true,
    }
    let target = &rest[1..];
    match target.first() {
        None => true,
        // RFC 9112 §3.2.1, §3.2.4: origin-form and asterisk-form.
        Some(b'/' | b'*') => true,
        // RFC 9112 §3.2.3: authority-form, CONNECT's only form: a host.
        Some(&b) if &line[..method] == b"CONNECT" => b.is_ascii_alphanumeric() || b == b'[',
        // RFC 9112 §3.2.2: absolute-form, `scheme "://"` (RFC 3986 §3.1).
        Some(b) if b.is_ascii_alphabetic() => {
            let scheme = target
                .iter()
                .position(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))
                .unwrap_or(target.len());
            let after = &target[scheme..];
            let n = after.len().min(3);
            after[..n] == b"://"[..n]
        }
        Some(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_line_starts() {
        struct Case {
            input: &'static [u8],
            expect: bool,
            why: &'static str,
        }
        let cases = [
            Case { input: b"GET / HTTP/1.1\r\n", expect: true, why: "origin-form" },
            Case { input: b"GET /plaintext HTTX/1.1\r\n", expect: true, why: "bad version" },
            Case { input: b"GET /a<b HTTP/1.1\r\n", expect: true, why: "bad target byte" },
            Case { input: b"G\x01T / HTTP/1.1\r\n", expect: true, why: "bad method byte" },
            Case { input: b"OPTIONS * HTTP/1.1\r\n", expect: true, why: "asterisk-form" },
            Case { input: b"GET http://a/ HTTP/1.1\r\n", expect: true, why: "absolute-form" },
            Case { input: b"GET ht", expect: true, why: "a scheme, cut" },
            Case { input: b"GET http:/", expect: true, why: "\"://\", cut" },
            Case { input: b"CONNECT a.example:443 HTTP/1.1\r\n", expect: true, why: "authority" },
            Case { input: b"CONNECT [::1]:443 HTTP/1.1\r\n", expect: true, why: "IP literal" },
            Case { input: b"\r\n\r\nGET / HTTP/1.1\r\n", expect: true, why: "empty lines first" },
            Case { input: b"PROPFIND /x HTTP/1.1\r\n", expect: true, why: "extension method" },
            Case { input: b"GET", expect: true, why: "cut in the method" },
            Case { input: b"GET ", expect: true, why: "cut after the method" },
            Case { input: b"", expect: true, why: "nothing yet" },
            Case { input: b"HELLO\r\n\r\n", expect: false, why: "no SP after a token" },
            Case {
                input: b"INVALID CONNECTION PREFACE\r\n\r\n",
                expect: false,
                why: "h2spec's bad preface: no target form",
            },
            Case { input: b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n", expect: false, why: "preface" },
            Case { input: b"PRI * HTTX/2.0\r\n", expect: false, why: "a mangled preface" },
            Case { input: b"\x16\x03\x01\x02\x00\x01", expect: false, why: "TLS ClientHello" },
            // The verdict is made at the byte that ends the method, whatever follows it, so it
            // does not depend on how much of the line has arrived (found by the http1_conn fuzz
            // target: `T\xff\t42\t\r\n\r\n` whole was closed unanswered, in 4-byte pieces
            // answered 400).
            Case { input: b"T\xff", expect: true, why: "a stray byte, cut after it" },
            Case { input: b"T\xff\t42\t\r\n\r\n", expect: true, why: "a stray byte, whole" },
            Case { input: b"GET/ HTTP/1.1\r\n", expect: true, why: "a stray byte, then SP" },
            Case { input: b"GET\r\n", expect: false, why: "CR after a token" },
            Case { input: b"GET  / HTTP/1.1\r\n", expect: false, why: "two SPs" },
            Case { input: b"GET\t/ HTTP/1.1\r\n", expect: false, why: "HTAB: no target form" },
            Case { input: b" GET / HTTP/1.1\r\n", expect: false, why: "leading SP" },
            Case {
                input: b"GET a.b:80 HTTP/1.1\r\n",
                expect: false,
                why: "authority, not CONNECT",
            },
        ];
        for case in cases {
            assert_eq!(may_start_request_line(case.input), case.expect, "{}", case.why);
        }
    }
}
