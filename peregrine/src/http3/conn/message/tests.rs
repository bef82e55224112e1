//! Messages on request streams, both roles: table rows of field sections and DATA (at every
//! split) and the events or stream errors they give; the dynamic table's blocked sections,
//! acknowledgments and cancellations between two real connections.

use super::*;
use crate::http3::conn::{Config, Event};
use crate::http3::qpack::Encoder;

/// A peer's request stream: HEADERS with `head` (encoded with the static table only, so any
/// field can be written, even a malformed one), DATA frames, then trailers if any.
fn stream_bytes(head: &[(&str, &str)], data: &[&str], trailers: &[(&str, &str)]) -> Vec<u8> {
    let mut enc = Encoder::new(0);
    let mut out = Vec::new();
    let mut section = |fields: &[(&str, &str)], out: &mut Vec<u8>| {
        let mut s = Vec::new();
        enc.encode(
            StreamId::new(0),
            fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes(), false)),
            &mut s,
        );
        crate::http3::frame::headers::encode(&s, out);
    };
    section(head, &mut out);
    for d in data {
        data::encode(d.as_bytes(), &mut out);
    }
    if !trailers.is_empty() {
        section(trailers, &mut out);
    }
    out
}

/// Feeds `bytes` (then the end) in chunks of `split`; the events as text: `H<path or
/// status>`, `I<status>`, `D<octets>` (joined), `T<n fields>`, `E`; or the stream error.
fn read(conn: &mut Conn, msg: &mut Message, bytes: &[u8], split: usize) -> Result<String, Code> {
    let mut got = String::new();
    let chunks: Vec<&[u8]> = bytes.chunks(split).chain([&[][..]]).collect();
    let last = chunks.len() - 1;
    for (k, mut chunk) in chunks.into_iter().enumerate() {
        loop {
            let (n, event) = conn.recv_message(msg, chunk, k == last).map_err(|e| {
                assert!(!e.is_connection(), "{e}");
                assert!(msg.is_done());
                e.code()
            })?;
            match event {
                None => break,
                Some(MessageEvent::Head) => {
                    let s = conn.section();
                    match s.status() {
                        Some(st) => got.push_str(&format!("H{st} ")),
                        None => got.push_str(&format!(
                            "H{} ",
                            String::from_utf8_lossy(s.path().unwrap_or(b"-"))
                        )),
                    }
                }
                Some(MessageEvent::Informational(s)) => got.push_str(&format!("I{s} ")),
                Some(MessageEvent::Data(r)) => {
                    if !got.ends_with(' ') || !got.rsplit(' ').nth(1).unwrap_or("").starts_with('D')
                    {
                        got.push('D');
                    } else {
                        got.pop();
                    }
                    got.push_str(std::str::from_utf8(&chunk[r]).unwrap());
                    got.push(' ');
                }
                Some(MessageEvent::Trailers) => {
                    got.push_str(&format!("T{} ", conn.section().len()))
                }
                Some(MessageEvent::End) => got.push('E'),
                Some(MessageEvent::Blocked) => panic!("static sections never block"),
            }
            chunk = &chunk[n..];
        }
    }
    Ok(got)
}

const GET: &[(&str, &str)] =
    &[(":method", "GET"), (":scheme", "https"), (":authority", "a.example"), (":path", "/x")];
const POST: &[(&str, &str)] = &[
    (":method", "POST"),
    (":scheme", "https"),
    (":authority", "a.example"),
    (":path", "/up"),
    ("content-length", "5"),
];

struct Case {
    why: &'static str,
    role: Role,
    head: &'static [(&'static str, &'static str)],
    data: &'static [&'static str],
    trailers: &'static [(&'static str, &'static str)],
    /// A client's request was HEAD.
    no_content: bool,
    expect: Result<&'static str, Code>,
}

const fn ok(
    why: &'static str,
    role: Role,
    head: &'static [(&'static str, &'static str)],
    expect: &'static str,
) -> Case {
    Case { why, role, head, data: &[], trailers: &[], no_content: false, expect: Ok(expect) }
}

const fn bad(why: &'static str, head: &'static [(&'static str, &'static str)]) -> Case {
    Case {
        why,
        role: Role::Server,
        head,
        data: &[],
        trailers: &[],
        no_content: false,
        expect: Err(Code::H3_MESSAGE_ERROR),
    }
}

#[test]
fn messages() {
    let s = Role::Server;
    let c = Role::Client;
    let cases = [
        ok("a GET", s, GET, "H/x E"),
        Case { data: &["ab", "cde"], ..ok("a POST with its length", s, POST, "H/up Dabcde E") },
        Case {
            data: &["ab", "cd"],
            trailers: &[("x-sum", "1")],
            ..ok("chunks and trailers", s, GET, "H/x Dabcd T1 E")
        },
        Case {
            data: &["abcdef"],
            expect: Err(Code::H3_MESSAGE_ERROR),
            ..ok("DATA past content-length", s, POST, "")
        },
        Case {
            data: &["abcd"],
            expect: Err(Code::H3_MESSAGE_ERROR),
            ..ok("DATA short of content-length", s, POST, "")
        },
        Case {
            data: &["abcd"],
            trailers: &[("x", "1")],
            expect: Err(Code::H3_MESSAGE_ERROR),
            ..ok("trailers short of content-length", s, POST, "")
        },
        Case {
            trailers: &[(":path", "/")],
            expect: Err(Code::H3_MESSAGE_ERROR),
            ..ok("pseudo-header in trailers", s, GET, "")
        },
        ok(
            "host instead of :authority",
            s,
            &[(":method", "GET"), (":scheme", "http"), (":path", "/"), ("host", "h")],
            "H/ E",
        ),
        bad(
            "neither :authority nor host (§4.3.1)",
            &[(":method", "GET"), (":scheme", "https"), (":path", "/")],
        ),
        bad(
            "empty :authority (§4.3.1)",
            &[(":method", "GET"), (":scheme", "https"), (":authority", ""), (":path", "/")],
        ),
        bad(
            "host differs from :authority",
            &[
                (":method", "GET"),
                (":scheme", "https"),
                (":authority", "a"),
                (":path", "/"),
                ("host", "b"),
            ],
        ),
        bad("no :method", &[(":scheme", "https"), (":authority", "a"), (":path", "/")]),
        bad("no :path", &[(":method", "GET"), (":scheme", "https"), (":authority", "a")]),
        bad(
            "two :path",
            &[
                (":method", "GET"),
                (":scheme", "https"),
                (":authority", "a"),
                (":path", "/"),
                (":path", "/"),
            ],
        ),
        bad(
            "pseudo-header after a field",
            &[
                (":method", "GET"),
                (":scheme", "https"),
                ("accept", "*/*"),
                (":authority", "a"),
                (":path", "/"),
            ],
        ),
        bad(
            "uppercase name (§4.2)",
            &[
                (":method", "GET"),
                (":scheme", "https"),
                (":authority", "a"),
                (":path", "/"),
                ("Accept", "*"),
            ],
        ),
        bad(
            "connection-specific field (§4.2)",
            &[
                (":method", "GET"),
                (":scheme", "https"),
                (":authority", "a"),
                (":path", "/"),
                ("connection", "close"),
            ],
        ),
        bad(
            "te other than trailers (§4.2)",
            &[
                (":method", "GET"),
                (":scheme", "https"),
                (":authority", "a"),
                (":path", "/"),
                ("te", "gzip"),
            ],
        ),
        bad(
            ":status in a request",
            &[
                (":method", "GET"),
                (":scheme", "https"),
                (":authority", "a"),
                (":path", "/"),
                (":status", "200"),
            ],
        ),
        bad(
            ":protocol (no extended CONNECT)",
            &[
                (":method", "CONNECT"),
                (":protocol", "websocket"),
                (":scheme", "https"),
                (":authority", "a"),
                (":path", "/"),
            ],
        ),
        bad(
            "value with a newline",
            &[
                (":method", "GET"),
                (":scheme", "https"),
                (":authority", "a"),
                (":path", "/"),
                ("x", "a\nb"),
            ],
        ),
        ok("CONNECT", s, &[(":method", "CONNECT"), (":authority", "a:443")], "H- E"),
        Case {
            data: &["hello"],
            ..ok("a response", c, &[(":status", "200"), ("content-length", "5")], "H200 Dhello E")
        },
        Case {
            no_content: true,
            ..ok(
                "HEAD's response keeps its length",
                c,
                &[(":status", "200"), ("content-length", "5")],
                "H200 E",
            )
        },
        ok("304 keeps its length", c, &[(":status", "304"), ("content-length", "5")], "H304 E"),
        Case { expect: Err(Code::H3_MESSAGE_ERROR), ..ok("no :status", c, &[("server", "x")], "") },
        Case {
            expect: Err(Code::H3_MESSAGE_ERROR),
            ..ok("101 (§4.5)", c, &[(":status", "101")], "")
        },
        Case { expect: Err(Code::H3_MESSAGE_ERROR), ..ok("a request to a client", c, GET, "") },
    ];
    for case in cases {
        let mut bytes = stream_bytes(case.head, case.data, case.trailers);
        if case.why == "a response" || case.why == "HEAD's response keeps its length" {
            // An informational response first.
            let mut first = stream_bytes(&[(":status", "103"), ("link", "</s>")], &[], &[]);
            first.append(&mut bytes);
            bytes = first;
        }
        for split in [usize::MAX, 1, 2, 7] {
            let mut conn = Conn::new(case.role, Config::default());
            let mut msg = conn.message(StreamId::new(0));
            msg.set_no_content(case.no_content);
            let got = read(&mut conn, &mut msg, &bytes, split);
            let want = case.expect.map(|w| {
                if case.why == "a response" || case.why == "HEAD's response keeps its length" {
                    format!("I103 {w}")
                } else {
                    w.to_string()
                }
            });
            assert_eq!(got, want, "{} (split {split})", case.why);
        }
    }
}

fn pseudo<'a>(authority: &'a [u8], path: &'a [u8]) -> RequestPseudo<'a> {
    RequestPseudo { method: b"GET", scheme: b"https", authority, path }
}

/// A client and a server with their control streams exchanged.
fn pair() -> (Conn, Conn) {
    let mut client = Conn::new(Role::Client, Config::default());
    let mut server = Conn::new(Role::Server, Config::default());
    let (mut a, mut b) = (Vec::new(), Vec::new());
    client.poll_control(&mut a);
    server.poll_control(&mut b);
    server.recv_uni(StreamId::new(2), &a, false).unwrap();
    client.recv_uni(StreamId::new(3), &b, false).unwrap();
    assert_eq!(server.poll_event(), Some(Event::Settings));
    assert_eq!(client.poll_event(), Some(Event::Settings));
    (client, server)
}

#[test]
fn dynamic_table_both_ways_with_a_blocked_request() {
    let (mut client, mut server) = pair();
    let stream = StreamId::new(0);
    let mut req = Vec::new();
    let fields: [(&[u8], &[u8]); 1] = [(b"x-request-id", b"1234")];
    client.encode_request(stream, pseudo(b"a.example", b"/dyn"), fields, &mut req);
    // The server reads the request before the client's encoder stream: blocked.
    let mut msg = server.message(stream);
    let (n, event) = server.recv_message(&mut msg, &req, true).unwrap();
    assert_eq!((n, event), (req.len(), Some(MessageEvent::Blocked)));
    assert!(msg.is_blocked());
    assert_eq!(server.recv_message(&mut msg, &[], true).unwrap(), (0, Some(MessageEvent::Blocked)));
    let mut enc = Vec::new();
    client.poll_encoder_stream(&mut enc);
    server.recv_uni(StreamId::new(6), &enc, false).unwrap();
    assert_eq!(server.poll_event(), Some(Event::Unblocked(stream)));
    assert_eq!(server.resume_message(&mut msg).unwrap(), Some(MessageEvent::Head));
    let s = server.section();
    assert_eq!((s.method(), s.path()), (Some(&b"GET"[..]), Some(&b"/dyn"[..])));
    assert_eq!(s.fields().map(|f| (f.name, f.value)).collect::<Vec<_>>(), fields);
    assert_eq!(server.recv_message(&mut msg, &[], true).unwrap(), (0, Some(MessageEvent::End)));
    // The Section Acknowledgment (and nothing blocks the client's encoder any more).
    let mut dec = Vec::new();
    server.poll_decoder_stream(&mut dec);
    client.recv_uni(StreamId::new(11), &dec, false).unwrap();
    assert!(client.encoder.known_received_count() > 0);

    // The response, through the server's table, read by the client after its encoder stream.
    let mut res = Vec::new();
    let fields: [(&[u8], &[u8]); 2] = [(b"x-powered", b"peregrine"), (b"content-length", b"2")];
    server.encode_response(stream, 200, fields, &mut res);
    Conn::encode_data_head(2, &mut res);
    res.extend_from_slice(b"ok");
    let mut enc = Vec::new();
    server.poll_encoder_stream(&mut enc);
    assert!(enc.len() > 1, "the server's encoder inserted entries");
    client.recv_uni(StreamId::new(7), &enc, false).unwrap();
    let mut msg = client.message(stream);
    let (n, event) = client.recv_message(&mut msg, &res, true).unwrap();
    assert_eq!(event, Some(MessageEvent::Head));
    assert_eq!(client.section().status(), Some(200));
    assert_eq!(client.section().content_length(), Some(2));
    let (m, event) = client.recv_message(&mut msg, &res[n..], true).unwrap();
    assert_eq!(event, Some(MessageEvent::Data(2..4)));
    assert_eq!(
        client.recv_message(&mut msg, &res[n + m..], true).unwrap(),
        (0, Some(MessageEvent::End))
    );

    // A second request reuses the reader and is served from the acknowledged table.
    let stream = StreamId::new(4);
    let mut req = Vec::new();
    let fields: [(&[u8], &[u8]); 1] = [(b"x-request-id", b"1234")];
    client.encode_request(stream, pseudo(b"a.example", b"/dyn"), fields, &mut req);
    let mut more = Vec::new();
    client.poll_encoder_stream(&mut more);
    assert!(more.is_empty(), "every field indexed: no new inserts");
    let mut msg2 = server.message(StreamId::new(0));
    server.reuse_message(&mut msg2, stream);
    assert_eq!(server.recv_message(&mut msg2, &req, false).unwrap().1, Some(MessageEvent::Head));
}

#[test]
fn a_reset_blocked_stream_is_cancelled_on_the_decoder_stream() {
    let (mut client, mut server) = pair();
    let stream = StreamId::new(8);
    let mut req = Vec::new();
    let fields: [(&[u8], &[u8]); 1] = [(b"x-a", b"b")];
    client.encode_request(stream, pseudo(b"a", b"/"), fields, &mut req);
    let mut msg = server.message(stream);
    assert_eq!(server.recv_message(&mut msg, &req, false).unwrap().1, Some(MessageEvent::Blocked));
    let mut dec = Vec::new();
    server.poll_decoder_stream(&mut dec);
    server.cancel_message(&mut msg);
    assert!(msg.is_done() && !msg.is_blocked());
    let mut dec = Vec::new();
    server.poll_decoder_stream(&mut dec);
    // §4.4.2 Stream Cancellation: 01 Stream ID(6+).
    assert_eq!(dec, [0x40 | 8]);
    // Inserts arriving later unblock nothing.
    let mut enc = Vec::new();
    client.poll_encoder_stream(&mut enc);
    server.recv_uni(StreamId::new(6), &enc, false).unwrap();
    assert_eq!(server.poll_event(), None);
    assert_eq!(server.resume_message(&mut msg).unwrap(), None);
}

#[test]
fn a_malformed_message_cancels_its_stream() {
    // The peer's encoder stream before the request: nothing, or a Set Dynamic Table Capacity
    // of 100 (§4.3.1: 001 Capacity(5+), 31 + 69).
    struct Case {
        encoder: &'static [u8],
        decoder: &'static [u8],
    }
    let cases = [
        // §2.2.2.2: an encoder that never gave its table a capacity cannot refer to it, so
        // there is nothing to cancel: only the stream type.
        Case { encoder: &[], decoder: &[0x03] },
        // It may refer to the table now: §4.4.2 Stream Cancellation, 01 Stream ID(6+).
        Case { encoder: &[0x02, 0x3f, 0x45], decoder: &[0x03, 0x40 | 4] },
    ];
    for case in cases {
        let mut server = Conn::new(Role::Server, Config::default());
        if !case.encoder.is_empty() {
            server.recv_uni(StreamId::new(6), case.encoder, false).unwrap();
        }
        let mut msg = server.message(StreamId::new(4));
        let bytes = stream_bytes(POST, &["toolong"], &[]);
        let mut at = 0;
        let err = loop {
            match server.recv_message(&mut msg, &bytes[at..], true) {
                Ok((n, _)) => at += n,
                Err(e) => break e,
            }
        };
        assert_eq!(err, Error::stream(StreamId::new(4), Code::H3_MESSAGE_ERROR));
        let mut dec = Vec::new();
        server.poll_decoder_stream(&mut dec);
        assert_eq!(dec, case.decoder, "encoder stream {:?}", case.encoder);
    }
}

/// The section a caller reads is only ever described by its own pseudo-header positions: a
/// later section on another stream that blocks or is malformed is decoded into the same list,
/// and must not be read through the positions of the last good one (found by fuzzing
/// `h3_conn`: `len()` underflowed after a blocked section, and `path()` could have named a
/// field of another request).
#[test]
fn a_later_section_that_does_not_complete_leaves_no_stale_positions() {
    struct Case {
        name: &'static str,
        /// The later section, on stream 4: the client's encoder may use its table.
        later: fn(&mut Conn) -> Vec<u8>,
        got: Result<Option<MessageEvent>, Code>,
    }
    let cases = [
        Case {
            name: "blocked on inserts not yet received",
            later: |client| {
                let mut req = Vec::new();
                let fields: [(&[u8], &[u8]); 1] = [(b"x-a", b"b")];
                client.encode_request(StreamId::new(4), pseudo(b"a", b"/later"), fields, &mut req);
                req
            },
            got: Ok(Some(MessageEvent::Blocked)),
        },
        Case {
            name: "malformed: no :path",
            later: |_| stream_bytes(&[(":method", "GET"), (":scheme", "https")], &[], &[]),
            got: Err(Code::H3_MESSAGE_ERROR),
        },
    ];
    for case in cases {
        let (mut client, mut server) = pair();
        let first = stream_bytes(
            &[(":method", "GET"), (":scheme", "https"), (":authority", "a"), (":path", "/first")],
            &[],
            &[],
        );
        let mut msg = server.message(StreamId::new(0));
        assert_eq!(
            server.recv_message(&mut msg, &first, false).unwrap().1,
            Some(MessageEvent::Head)
        );
        assert_eq!(server.section().path(), Some(&b"/first"[..]));
        let later = (case.later)(&mut client);
        let mut msg = server.message(StreamId::new(4));
        let got =
            server.recv_message(&mut msg, &later, false).map(|(_, e)| e).map_err(|e| e.code());
        assert_eq!(got, case.got, "{}", case.name);
        let s = server.section();
        assert_eq!((s.method(), s.path()), (None, None), "{}", case.name);
        assert_eq!(s.len(), s.list().len(), "{}", case.name);
    }
}
