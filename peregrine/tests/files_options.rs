//! `ServeDir` options: configured header fields, CORS, OPTIONS, the SPA fallback, a custom
//! 404 page and Basic authentication, through the public `respond` API and over loopback.

mod support;

use std::path::PathBuf;

use http::{HeaderName, HeaderValue};
use peregrine::Method;
use peregrine::files::{BasicAuth, Cors, FileBody, FileReply, FileRequest, ServeDir};
use support::{RawClient, spawn};

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn dir(tag: &str) -> Dir {
    let d = std::env::temp_dir().join(format!("peregrine-files-opt-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("docs")).unwrap();
    std::fs::write(d.join("index.html"), b"<div id=app></div>").unwrap();
    std::fs::write(d.join("hello.txt"), b"hello world\n").unwrap();
    std::fs::write(d.join("docs/a.txt"), b"a").unwrap();
    std::fs::write(d.join("404.html"), b"<h1>gone</h1>").unwrap();
    Dir(d)
}

fn header(reply: &FileReply, name: &str) -> Option<String> {
    reply.header(name).map(|v| v.to_str().unwrap().to_owned())
}

fn body(reply: FileReply) -> Vec<u8> {
    match reply.into_body() {
        FileBody::Bytes(b) => b.to_vec(),
        FileBody::Empty => Vec::new(),
        FileBody::File(mut span) => {
            let mut out = Vec::new();
            while let Some(c) = span.read_chunk(65_536).unwrap() {
                out.extend_from_slice(&c);
            }
            out
        }
    }
}

const BROWSER: &[u8] = b"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

#[test]
fn configured_fields_on_every_answer() {
    let d = dir("fields");
    let files = ServeDir::new(&d.0)
        .unwrap()
        .header(HeaderName::from_static("x-frame-options"), HeaderValue::from_static("DENY"))
        .header(HeaderName::from_static("x-extra"), HeaderValue::from_static("1"));
    for (method, path, status) in [
        (Method::Get, &b"/hello.txt"[..], 200),
        (Method::Get, b"/docs/", 200),
        (Method::Get, b"/docs", 301),
        (Method::Get, b"/missing", 404),
        (Method::Get, b"/../x", 400),
        (Method::Post, b"/hello.txt", 405),
        (Method::Options, b"/hello.txt", 204),
    ] {
        let r = files.respond(&FileRequest::new(method, path));
        assert_eq!(r.status(), status, "{path:?}");
        assert_eq!(header(&r, "x-frame-options").as_deref(), Some("DENY"), "{path:?}");
        assert_eq!(header(&r, "x-extra").as_deref(), Some("1"), "{path:?}");
    }
}

#[test]
fn cors_simple_and_preflight_fetch_standard() {
    let d = dir("cors");
    struct Case {
        name: &'static str,
        cors: Cors,
        method: Method,
        origin: Option<&'static [u8]>,
        acrm: Option<&'static [u8]>,
        status: u16,
        allow_origin: Option<&'static str>,
        vary: Option<&'static str>,
        allow_methods: Option<&'static str>,
    }
    let list = || Cors::origins(["https://app.example"]);
    let cases = [
        Case {
            name: "any origin, simple GET",
            cors: Cors::any(),
            method: Method::Get,
            origin: Some(b"https://x.example"),
            acrm: None,
            status: 200,
            allow_origin: Some("*"),
            vary: None,
            allow_methods: None,
        },
        Case {
            name: "listed origin, simple GET: the origin and Vary: Origin",
            cors: list(),
            method: Method::Get,
            origin: Some(b"https://app.example"),
            acrm: None,
            status: 200,
            allow_origin: Some("https://app.example"),
            vary: Some("origin"),
            allow_methods: None,
        },
        Case {
            name: "unlisted origin: no grant, still Vary",
            cors: list(),
            method: Method::Get,
            origin: Some(b"https://evil.example"),
            acrm: None,
            status: 200,
            allow_origin: None,
            vary: Some("origin"),
            allow_methods: None,
        },
        Case {
            name: "no Origin with a list: still Vary (the answer depends on it)",
            cors: list(),
            method: Method::Get,
            origin: None,
            acrm: None,
            status: 200,
            allow_origin: None,
            vary: Some("origin"),
            allow_methods: None,
        },
        Case {
            name: "preflight, any origin",
            cors: Cors::any(),
            method: Method::Options,
            origin: Some(b"https://x.example"),
            acrm: Some(b"GET"),
            status: 204,
            allow_origin: Some("*"),
            vary: None,
            allow_methods: Some("GET, HEAD, OPTIONS"),
        },
        Case {
            name: "preflight, listed origin",
            cors: list(),
            method: Method::Options,
            origin: Some(b"https://app.example"),
            acrm: Some(b"GET"),
            status: 204,
            allow_origin: Some("https://app.example"),
            vary: Some("origin"),
            allow_methods: Some("GET, HEAD, OPTIONS"),
        },
        Case {
            name: "preflight, unlisted origin: a plain OPTIONS answer",
            cors: list(),
            method: Method::Options,
            origin: Some(b"https://evil.example"),
            acrm: Some(b"GET"),
            status: 204,
            allow_origin: None,
            vary: Some("origin"),
            allow_methods: None,
        },
    ];
    for c in cases {
        let files = ServeDir::new(&d.0).unwrap().cors(c.cors);
        let req = FileRequest {
            origin: c.origin,
            access_control_request_method: c.acrm,
            access_control_request_headers: c.acrm.map(|_| &b"range, x-custom"[..]),
            ..FileRequest::new(c.method, b"/hello.txt")
        };
        let r = files.respond(&req);
        assert_eq!(r.status(), c.status, "{}", c.name);
        assert_eq!(
            header(&r, "access-control-allow-origin").as_deref(),
            c.allow_origin,
            "{}",
            c.name
        );
        assert_eq!(header(&r, "vary").as_deref(), c.vary, "{}", c.name);
        assert_eq!(
            header(&r, "access-control-allow-methods").as_deref(),
            c.allow_methods,
            "{}",
            c.name
        );
        if c.allow_methods.is_some() {
            assert_eq!(header(&r, "access-control-max-age").as_deref(), Some("7200"), "{}", c.name);
            assert_eq!(
                header(&r, "access-control-allow-headers").as_deref(),
                Some("range, x-custom"),
                "{}",
                c.name
            );
        }
        if c.status == 204 {
            assert_eq!(header(&r, "allow").as_deref(), Some("GET, HEAD, OPTIONS"), "{}", c.name);
            assert_eq!(r.content_length(), None, "{}", c.name);
        }
    }
}

#[test]
fn spa_fallback_and_custom_404() {
    let d = dir("spa");
    struct Case {
        name: &'static str,
        spa: bool,
        page: bool,
        path: &'static [u8],
        accept: Option<&'static [u8]>,
        status: u16,
        body: &'static [u8],
    }
    let cases = [
        Case {
            name: "a route a browser navigates to",
            spa: true,
            page: false,
            path: b"/users/7",
            accept: Some(BROWSER),
            status: 200,
            body: b"<div id=app></div>",
        },
        Case {
            name: "an asset stays 404",
            spa: true,
            page: false,
            path: b"/app.js",
            accept: Some(b"*/*"),
            status: 404,
            body: b"404 Not Found\n",
        },
        Case {
            name: "files still win",
            spa: true,
            page: false,
            path: b"/hello.txt",
            accept: Some(BROWSER),
            status: 200,
            body: b"hello world\n",
        },
        Case {
            name: "without --spa",
            spa: false,
            page: false,
            path: b"/users/7",
            accept: Some(BROWSER),
            status: 404,
            body: b"404 Not Found\n",
        },
        Case {
            name: "custom page",
            spa: false,
            page: true,
            path: b"/nope",
            accept: Some(BROWSER),
            status: 404,
            body: b"<h1>gone</h1>",
        },
        Case {
            name: "spa first, then the custom page for assets",
            spa: true,
            page: true,
            path: b"/nope.css",
            accept: Some(b"text/css,*/*;q=0.1"),
            status: 404,
            body: b"<h1>gone</h1>",
        },
        Case {
            name: "a traversal is still 400",
            spa: true,
            page: true,
            path: b"/../etc/passwd",
            accept: Some(BROWSER),
            status: 400,
            body: b"400 Bad Request\n",
        },
    ];
    for c in cases {
        let mut files = ServeDir::new(&d.0).unwrap().spa(c.spa);
        if c.page {
            files = files.not_found_page(d.0.join("404.html")).unwrap();
        }
        let req = FileRequest { accept: c.accept, ..FileRequest::new(Method::Get, c.path) };
        let r = files.respond(&req);
        assert_eq!(r.status(), c.status, "{}", c.name);
        if c.page && c.status == 404 {
            assert_eq!(header(&r, "content-type").as_deref(), Some("text/html; charset=utf-8"));
        }
        assert_eq!(body(r), c.body, "{}", c.name);
    }
    assert!(ServeDir::new(&d.0).unwrap().not_found_page(d.0.join("missing.html")).is_err());
}

/// The 401 is the same, field for field and byte for byte, whether the user or the password
/// was wrong (or both, or none given): nothing tells whether a user exists.
#[test]
fn basic_auth_rfc7617_never_tells_which_part_was_wrong() {
    let d = dir("auth");
    #[allow(unused_mut)]
    let mut variants =
        vec![ServeDir::new(&d.0).unwrap().basic_auth(BasicAuth::new("ann", "s3cret"))];
    #[cfg(feature = "bcrypt")]
    {
        let hash = bcrypt::hash("s3cret", 4).unwrap();
        let auth = BasicAuth::bcrypt("ann", &hash).unwrap();
        variants.push(ServeDir::new(&d.0).unwrap().basic_auth(auth));
    }
    use base64::Engine;
    let b64 = |s: &str| format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(s));
    for files in variants {
        let answer = |auth: Option<&str>| {
            let req = FileRequest {
                authorization: auth.map(str::as_bytes),
                ..FileRequest::new(Method::Get, b"/hello.txt")
            };
            let r = files.respond(&req);
            let mut fields = Vec::new();
            r.for_each_header(|n, v| fields.push((n, v.clone())));
            (r.status(), fields, r.content_length(), body(r))
        };
        let ok = answer(Some(&b64("ann:s3cret")));
        assert_eq!((ok.0, ok.3.as_slice()), (200, &b"hello world\n"[..]));
        // Twice: the second time from the remembered verification.
        assert_eq!(answer(Some(&b64("ann:s3cret"))).0, 200);
        let wrong_user = answer(Some(&b64("bob:s3cret")));
        let wrong_password = answer(Some(&b64("ann:guess")));
        let both = answer(Some(&b64("bob:guess")));
        let none = answer(None);
        let malformed = answer(Some("Basic !!!"));
        assert_eq!(wrong_user.0, 401);
        let challenge = wrong_user.1.iter().find(|(n, _)| n == "www-authenticate").unwrap();
        assert_eq!(challenge.1, "Basic realm=\"peregrine\", charset=\"UTF-8\"");
        for other in [&wrong_password, &both, &none, &malformed] {
            assert_eq!(other, &wrong_user);
        }
        // Nothing about the path leaks before authentication.
        let missing = FileRequest::new(Method::Get, b"/missing");
        assert_eq!(files.respond(&missing).status(), 401);
    }
    // A preflight needs no credentials (Fetch §4.8); the actual request does.
    let files = ServeDir::new(&d.0)
        .unwrap()
        .cors(Cors::any())
        .basic_auth(BasicAuth::new("ann", "s3cret").realm("my \"files\""));
    let preflight = FileRequest {
        origin: Some(b"https://x"),
        access_control_request_method: Some(b"GET"),
        ..FileRequest::new(Method::Options, b"/hello.txt")
    };
    assert_eq!(files.respond(&preflight).status(), 204);
    let r = files.respond(&FileRequest::new(Method::Get, b"/hello.txt"));
    assert_eq!(r.status(), 401);
    assert_eq!(
        header(&r, "www-authenticate").as_deref(),
        Some("Basic realm=\"my \\\"files\\\"\", charset=\"UTF-8\"")
    );
    // The CORS grant is on the 401 too, so a script can read why it failed.
    assert_eq!(header(&r, "access-control-allow-origin").as_deref(), Some("*"));
}

/// The handler reads the new fields from a real request: Origin, Accept, Authorization.
#[test]
fn over_loopback_the_handler_reads_every_field() {
    let d = dir("loop");
    let files = ServeDir::new(&d.0)
        .unwrap()
        .spa(true)
        .cors(Cors::origins(["https://app.example"]))
        .basic_auth(BasicAuth::new("ann", "s3cret"));
    let server = spawn(files);
    let mut c = RawClient::connect(server.local_addr());
    // ann:s3cret
    let auth = "Authorization: Basic YW5uOnMzY3JldA==\r\n";
    c.send(format!("GET /route HTTP/1.1\r\nHost: t\r\nAccept: text/html\r\n{auth}\r\n").as_bytes());
    let r = c.response();
    assert_eq!((r.status, r.body.as_slice()), (200, &b"<div id=app></div>"[..]));
    c.send(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\nOrigin: https://app.example\r\n\r\n");
    let r = c.response();
    assert_eq!(r.status, 401);
    assert_eq!(r.header("access-control-allow-origin"), Some("https://app.example"));
    c.send(
        b"OPTIONS /hello.txt HTTP/1.1\r\nHost: t\r\nOrigin: https://app.example\r\n\
          Access-Control-Request-Method: GET\r\nAccess-Control-Request-Headers: range\r\n\r\n",
    );
    let r = c.head_response();
    assert_eq!(r.status, 204);
    assert_eq!(r.header("access-control-allow-headers"), Some("range"));
    assert_eq!(r.header("content-length"), None);
    c.send(format!("OPTIONS /hello.txt HTTP/1.1\r\nHost: t\r\n{auth}\r\n").as_bytes());
    let r = c.head_response();
    assert_eq!((r.status, r.header("allow")), (204, Some("GET, HEAD, OPTIONS")));
}
