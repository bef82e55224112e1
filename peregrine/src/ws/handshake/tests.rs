//! The handshake's rules as table rows, both ends.

use super::*;
use crate::Version;
use crate::ws::extension::{DeflateConfig, DeflateParams};

const KEY: &[u8] = b"dGhlIHNhbXBsZSBub25jZQ==";

/// A valid HTTP/1.1 upgrade request's fields, with `change` applied: `(name, None)` removes
/// the field, `(name, Some(v))` replaces (or adds) it.
fn request(change: &[(&'static str, Option<&'static str>)]) -> Vec<(&'static [u8], &'static [u8])> {
    let mut fields: Vec<(&str, &str)> = vec![
        ("Host", "example.com"),
        ("Upgrade", "websocket"),
        ("Connection", "Upgrade"),
        ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ("Sec-WebSocket-Version", "13"),
    ];
    for &(name, value) in change {
        let at = fields.iter().position(|(n, _)| n.eq_ignore_ascii_case(name));
        match (at, value) {
            (Some(i), Some(v)) => fields[i].1 = v,
            (Some(i), None) => {
                fields.remove(i);
            }
            (None, Some(v)) => fields.push((name, v)),
            (None, None) => {}
        }
    }
    fields.into_iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())).collect()
}

struct Case {
    method: &'static [u8],
    version: Version,
    change: &'static [(&'static str, Option<&'static str>)],
    expect: Result<(), RequestError>,
}

/// RFC 6455 §4.2.1, rule by rule.
#[test]
fn the_servers_checks_rfc6455_4_2_1() {
    use RequestError as E;
    let ok = Ok(());
    let h11 = Version::Http11;
    let case = |method, version, change, expect| Case { method, version, change, expect };
    let cases = [
        case(b"GET", h11, &[], ok),
        case(b"GET", Version::Http2, &[], ok),
        case(b"POST", h11, &[], Err(E::Method)),
        case(b"get", h11, &[], Err(E::Method)),
        case(b"GET", Version::Http10, &[], Err(E::HttpVersion)),
        case(b"GET", h11, &[("upgrade", Some("WebSocket"))], ok),
        case(b"GET", h11, &[("upgrade", Some("h2c, websocket"))], ok),
        case(b"GET", h11, &[("upgrade", Some("h2c"))], Err(E::Upgrade)),
        case(b"GET", h11, &[("upgrade", None)], Err(E::Upgrade)),
        case(b"GET", h11, &[("connection", Some("keep-alive, UPGRADE"))], ok),
        case(b"GET", h11, &[("connection", Some("keep-alive"))], Err(E::Connection)),
        case(b"GET", h11, &[("connection", Some("upgraded"))], Err(E::Connection)),
        case(b"GET", h11, &[("connection", None)], Err(E::Connection)),
        case(b"GET", h11, &[("sec-websocket-key", None)], Err(E::Key)),
        case(b"GET", h11, &[("sec-websocket-key", Some(" dGhlIHNhbXBsZSBub25jZQ== "))], ok),
        // 15 and 17 octets; not base64; non-canonical pad bits.
        case(b"GET", h11, &[("sec-websocket-key", Some("dGhlIHNhbXBsZSBub25jZQ="))], Err(E::Key)),
        case(b"GET", h11, &[("sec-websocket-key", Some("dGhlIHNhbXBsZSBub25jZXM="))], Err(E::Key)),
        case(b"GET", h11, &[("sec-websocket-key", Some("dGhlIHNhbXBsZSBub25jZ!=="))], Err(E::Key)),
        case(b"GET", h11, &[("sec-websocket-key", Some("dGhlIHNhbXBsZSBub25jZR=="))], Err(E::Key)),
        case(b"GET", h11, &[("sec-websocket-version", Some("8"))], Err(E::Version)),
        case(b"GET", h11, &[("sec-websocket-version", Some("13, 8"))], Err(E::Version)),
        case(b"GET", h11, &[("sec-websocket-version", None)], Err(E::Version)),
        case(b"GET", h11, &[("sec-websocket-protocol", Some("chat, superchat"))], ok),
        case(
            b"GET",
            h11,
            &[("sec-websocket-protocol", Some("chat, super chat"))],
            Err(E::ProtocolList),
        ),
        case(b"GET", h11, &[("sec-websocket-protocol", Some("a/b"))], Err(E::ProtocolList)),
    ];
    for c in &cases {
        let fields = request(c.change);
        let got = check_request(c.method, c.version, fields.iter().copied()).map(|_| ());
        assert_eq!(got, c.expect, "{:?} {:?}", String::from_utf8_lossy(c.method), c.change);
    }
    // A repeated key is refused; so is a repeated version.
    let mut fields = request(&[]);
    fields.push((b"Sec-WebSocket-Key", KEY));
    assert_eq!(check_request(b"GET", h11, fields).unwrap_err(), E::Key);
    let mut fields = request(&[]);
    fields.push((b"Sec-WebSocket-Version", b"13"));
    assert_eq!(check_request(b"GET", h11, fields).unwrap_err(), E::Version);
    // More lines than kept.
    let mut fields = request(&[]);
    fields.extend(std::iter::repeat_n((&b"sec-websocket-protocol"[..], &b"a"[..]), 9));
    assert_eq!(check_request(b"GET", h11, fields).unwrap_err(), E::TooManyLines);
}

/// RFC 6455 §4.2.2: the 101's fields, the accept value from the key, the subprotocol in the
/// server's order of preference.
#[test]
fn the_servers_response_rfc6455_4_2_2() {
    let fields = request(&[
        ("sec-websocket-protocol", Some("chat, superchat")),
        ("origin", Some("https://example.com")),
    ]);
    let mut fields = fields;
    fields.push((b"Sec-WebSocket-Protocol", b"v2.json"));
    let req = check_request(b"GET", Version::Http11, fields.iter().copied()).unwrap();
    assert_eq!(req.origin(), Some(&b"https://example.com"[..]));
    let offered: Vec<&[u8]> = req.protocols().collect();
    assert_eq!(offered, [&b"chat"[..], b"superchat", b"v2.json"]);
    assert_eq!(req.select_protocol(&["v2.json", "chat"]), Some("v2.json"));
    assert_eq!(req.select_protocol(&["mqtt"]), None);
    let accept = req.accept(&["superchat"], None);
    let got: Vec<(&str, &[u8])> = accept.fields().collect();
    assert_eq!(
        got,
        [
            ("upgrade", &b"websocket"[..]),
            ("connection", b"Upgrade"),
            ("sec-websocket-accept", b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
            ("sec-websocket-protocol", b"superchat"),
        ]
    );
    assert_eq!(accept.status(), 101);
    assert_eq!(accept.deflate(), None);
}

/// RFC 8441 §4, §5: the extended CONNECT's checks and its 200.
#[test]
fn extended_connect_rfc8441() {
    use RequestError as E;
    let v13: [(&[u8], &[u8]); 2] =
        [(b"sec-websocket-version", b"13"), (b"sec-websocket-extensions", b"permessage-deflate")];
    assert!(check_connect(b"CONNECT", Some(b"websocket"), v13).is_ok());
    assert_eq!(check_connect(b"GET", Some(b"websocket"), v13).unwrap_err(), E::Method);
    assert_eq!(check_connect(b"CONNECT", None, v13).unwrap_err(), E::Protocol);
    assert_eq!(check_connect(b"CONNECT", Some(b"h2c"), v13).unwrap_err(), E::Protocol);
    let v8: [(&[u8], &[u8]); 1] = [(b"sec-websocket-version", b"8")];
    assert_eq!(check_connect(b"CONNECT", Some(b"websocket"), v8).unwrap_err(), E::Version);
    let req = check_connect(b"CONNECT", Some(b"websocket"), v13).unwrap();
    let accept = req.accept(&[], Some(&DeflateConfig::default()));
    assert_eq!(accept.status(), 200);
    let names: Vec<&str> = accept.fields().map(|(n, _)| n).collect();
    if crate::ws::deflate::AVAILABLE {
        assert_eq!(names, ["sec-websocket-extensions"]);
        assert_eq!(accept.deflate(), Some(DeflateParams::default()));
    } else {
        assert!(names.is_empty());
    }
}

struct Response {
    status: u16,
    fields: &'static [(&'static str, &'static str)],
    expect: Result<(Option<&'static str>, bool), ResponseError>,
}

/// RFC 6455 §4.1, the client's checks of the response.
#[test]
fn the_clients_checks_rfc6455_4_1() {
    use crate::ws::extension::ResponseError as X;
    use ResponseError as E;
    let hs = ClientHandshake::new(*b"the sample nonce")
        .protocols(&["chat", "superchat"])
        .deflate(DeflateConfig::default());
    assert_eq!(hs.key(), KEY);
    const UP: (&str, &str) = ("Upgrade", "websocket");
    const CONN: (&str, &str) = ("Connection", "Upgrade");
    const ACC: (&str, &str) = ("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    let deflate = crate::ws::deflate::AVAILABLE;
    let cases = [
        Response { status: 101, fields: &[UP, CONN, ACC], expect: Ok((None, false)) },
        Response {
            status: 101,
            fields: &[("upgrade", "WebSocket"), ("connection", "upgrade"), ACC],
            expect: Ok((None, false)),
        },
        Response { status: 200, fields: &[UP, CONN, ACC], expect: Err(E::Status(200)) },
        Response { status: 101, fields: &[CONN, ACC], expect: Err(E::Upgrade) },
        Response { status: 101, fields: &[UP, ACC], expect: Err(E::Connection) },
        Response { status: 101, fields: &[UP, CONN], expect: Err(E::Accept) },
        Response {
            status: 101,
            fields: &[UP, CONN, ("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOp=")],
            expect: Err(E::Accept),
        },
        Response { status: 101, fields: &[UP, CONN, ACC, ACC], expect: Err(E::Accept) },
        Response {
            status: 101,
            fields: &[UP, CONN, ACC, ("Sec-WebSocket-Protocol", "superchat")],
            expect: Ok((Some("superchat"), false)),
        },
        Response {
            status: 101,
            fields: &[UP, CONN, ACC, ("Sec-WebSocket-Protocol", "mqtt")],
            expect: Err(E::Protocol),
        },
        Response {
            status: 101,
            fields: &[UP, CONN, ACC, ("Sec-WebSocket-Protocol", "chat, superchat")],
            expect: Err(E::Protocol),
        },
        Response {
            status: 101,
            fields: &[UP, CONN, ACC, ("Sec-WebSocket-Extensions", "permessage-deflate")],
            expect: if deflate { Ok((None, true)) } else { Err(E::Extensions(X::NotOffered)) },
        },
        Response {
            status: 101,
            fields: &[UP, CONN, ACC, ("Sec-WebSocket-Extensions", "x-webkit-deflate-frame")],
            expect: Err(E::Extensions(X::NotOffered)),
        },
    ];
    for c in &cases {
        let fields: Vec<(&[u8], &[u8])> =
            c.fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())).collect();
        let got = hs
            .check_response(c.status, fields.iter().copied())
            .map(|a| (a.protocol, a.deflate.is_some()));
        assert_eq!(got, c.expect, "{} {:?}", c.status, c.fields);
    }
    // Over HTTP/2: a 2xx, no accept value.
    let none: [(&[u8], &[u8]); 0] = [];
    assert!(hs.check_connect_response(200, none).is_ok());
    assert_eq!(hs.check_connect_response(101, none), Err(E::Status(101)));
}

/// The client's request fields over HTTP/1.1 and HTTP/2 pass the server's checks.
#[test]
fn the_clients_request_passes_the_servers_checks() {
    let hs = ClientHandshake::new([0xab; 16]).protocols(&["a", "b"]);
    let h1: Vec<(&[u8], &[u8])> =
        hs.fields(Version::Http11).map(|(n, v)| (n.as_bytes(), v)).collect();
    let req = check_request(b"GET", Version::Http11, h1.iter().copied()).unwrap();
    assert_eq!(req.key(), Some(hs.key()));
    assert_eq!(req.protocols().count(), 2);
    let h2: Vec<(&[u8], &[u8])> =
        hs.fields(Version::Http2).map(|(n, v)| (n.as_bytes(), v)).collect();
    assert!(h2.iter().all(|(n, _)| !n.eq_ignore_ascii_case(b"upgrade")
        && !n.eq_ignore_ascii_case(b"sec-websocket-key")));
    assert!(check_connect(b"CONNECT", Some(b"websocket"), h2.iter().copied()).is_ok());
}
