//! The application router over a real loopback socket: parameters, priority, 404, 405 with
//! `Allow`, `OPTIONS`, `HEAD` via `GET`, the 308 trailing-slash redirect, nesting, fallbacks.
//! One table of raw requests and the responses they must get.

mod support;

use http::StatusCode;
use peregrine::routing::{any, get, post, put};
use peregrine::{Request, Response, Router};
use support::{RawClient, spawn};

/// Answers `route=<template> k=v ...`: what the handler saw.
async fn show(req: Request) -> String {
    let mut out = format!("route={}", req.matched_route().unwrap_or("-"));
    for (name, value) in req.params() {
        out.push_str(&format!(" {name}={value}"));
    }
    out
}

async fn decoded(req: Request) -> Response {
    match req.param_decoded("v") {
        Ok(v) => Response::new(format!("decoded={v}")),
        Err(e) => Response::with_status(StatusCode::BAD_REQUEST, format!("{e}")),
    }
}

fn api() -> Router {
    Router::new()
        .route("/", get(show))
        .route("/items/{id}", get(show).put(|_req: Request| async { "put item" }))
        .fallback(|req: Request| async move {
            (StatusCode::NOT_FOUND, format!("api fallback {}", req.path()))
        })
}

fn app() -> Router {
    Router::new()
        .route("/", get(|_req: Request| async { "index" }))
        .route("/users/new", get(show))
        .route("/users/{id}", get(show).put(|_req: Request| async { "updated" }))
        .route("/users/{id}/posts/{post}", get(show))
        .route("/files/{*path}", get(show))
        .route("/dec/{v}", get(decoded))
        .route("/form", post(|_req: Request| async { "posted" }))
        .route("/dir/", get(show))
        .route("/opts", get(show).options(|_req: Request| async { "custom options" }))
        .route("/any", any(|req: Request| async move { format!("any {}", req.method_str()) }))
        .route(
            "/dav",
            peregrine::routing::MethodRoutes::new()
                .on_extension("PROPFIND", |_req: Request| async { "propfind" }),
        )
        .nest("/api/{version}", api())
        .redirect_trailing_slash(true)
        .fallback(|req: Request| async move {
            (StatusCode::NOT_FOUND, format!("fallback {} {}", req.method_str(), req.path()))
        })
}

/// A router with neither fallback nor redirect: the router's own 404. Under `/static`, a
/// nested router with only a fallback, the way a directory of files is mounted.
fn bare() -> Router {
    let files =
        Router::new().fallback(|req: Request| async move { format!("file {}", req.path()) });
    Router::new()
        .route("/a", get(|_req: Request| async { "a" }))
        .route("/b", put(|_req: Request| async { "b" }))
        .route("/static/special", get(|_req: Request| async { "special" }))
        .nest("/static", files)
}

struct Case {
    name: &'static str,
    method: &'static str,
    target: &'static str,
    status: u16,
    /// Expected body; `None` to skip (HEAD and bodiless statuses have none).
    body: Option<&'static str>,
    headers: &'static [(&'static str, &'static str)],
}

fn run(router: Router, cases: &[Case]) {
    let server = spawn(router);
    let mut c = RawClient::connect(server.local_addr());
    for case in cases {
        c.send(format!("{} {} HTTP/1.1\r\nHost: t\r\n\r\n", case.method, case.target).as_bytes());
        let res = if case.method == "HEAD" { c.head_response() } else { c.response() };
        assert_eq!(res.status, case.status, "{}: {res:?}", case.name);
        if let Some(body) = case.body {
            assert_eq!(String::from_utf8_lossy(&res.body), body, "{}", case.name);
        }
        for (name, value) in case.headers {
            assert_eq!(res.header(name), Some(*value), "{}: header {name} in {res:?}", case.name);
        }
    }
}

#[test]
fn routes_params_priority_and_method_answers() {
    let ok = 200;
    let cases = [
        // Parameters reach the handler, raw, in template order.
        Case {
            name: "root",
            method: "GET",
            target: "/",
            status: ok,
            body: Some("index"),
            headers: &[],
        },
        Case {
            name: "one param",
            method: "GET",
            target: "/users/42",
            status: ok,
            body: Some("route=/users/{id} id=42"),
            headers: &[],
        },
        Case {
            name: "two params",
            method: "GET",
            target: "/users/7/posts/hello%20world?x=1",
            status: ok,
            body: Some("route=/users/{id}/posts/{post} id=7 post=hello%20world"),
            headers: &[],
        },
        Case {
            name: "catch-all keeps slashes",
            method: "GET",
            target: "/files/a/b/c.txt",
            status: ok,
            body: Some("route=/files/{*path} path=a/b/c.txt"),
            headers: &[],
        },
        Case {
            name: "percent-decoded access",
            method: "GET",
            target: "/dec/caf%C3%A9%2Fx",
            status: ok,
            body: Some("decoded=café/x"),
            headers: &[],
        },
        Case {
            name: "decoding rejects bad UTF-8",
            method: "GET",
            target: "/dec/%FF",
            status: 400,
            body: None,
            headers: &[],
        },
        // router module docs, "Matching priority": static beats parameter.
        Case {
            name: "static beats param",
            method: "GET",
            target: "/users/new",
            status: ok,
            body: Some("route=/users/new"),
            headers: &[],
        },
        // RFC 9110 §9.3.2: HEAD is answered by GET's handler, without content.
        Case {
            name: "HEAD via GET",
            method: "HEAD",
            target: "/users/42",
            status: ok,
            body: None,
            headers: &[("content-length", "23")],
        },
        Case {
            name: "other method on a param route",
            method: "PUT",
            target: "/users/42",
            status: ok,
            body: Some("updated"),
            headers: &[],
        },
        // RFC 9110 §15.5.6: 405 with Allow listing the route's methods.
        Case {
            name: "405 with Allow",
            method: "DELETE",
            target: "/users/42",
            status: 405,
            body: Some("Method Not Allowed"),
            headers: &[("allow", "GET, HEAD, PUT, OPTIONS")],
        },
        Case {
            name: "405 for GET on a POST route",
            method: "GET",
            target: "/form",
            status: 405,
            body: None,
            headers: &[("allow", "POST, OPTIONS")],
        },
        Case {
            name: "405 for an extension method",
            method: "PROPPATCH",
            target: "/dav",
            status: 405,
            body: None,
            headers: &[("allow", "OPTIONS, PROPFIND")],
        },
        Case {
            name: "extension method routed",
            method: "PROPFIND",
            target: "/dav",
            status: ok,
            body: Some("propfind"),
            headers: &[],
        },
        // RFC 9110 §9.3.7: OPTIONS answered by the router with Allow, unless routed.
        Case {
            name: "OPTIONS by the router",
            method: "OPTIONS",
            target: "/users/42",
            status: 204,
            body: None,
            headers: &[("allow", "GET, HEAD, PUT, OPTIONS")],
        },
        Case {
            name: "explicit OPTIONS handler",
            method: "OPTIONS",
            target: "/opts",
            status: ok,
            body: Some("custom options"),
            headers: &[],
        },
        Case {
            name: "any answers every standard method",
            method: "PATCH",
            target: "/any",
            status: ok,
            body: Some("any PATCH"),
            headers: &[],
        },
        // RFC 9110 §15.4.9: 308 keeps the method; the query is kept too.
        Case {
            name: "308 adds the slash, query kept",
            method: "GET",
            target: "/dir?a=1&b",
            status: 308,
            body: None,
            headers: &[("location", "/dir/?a=1&b")],
        },
        Case {
            name: "308 removes the slash",
            method: "POST",
            target: "/form/",
            status: 308,
            body: None,
            headers: &[("location", "/form")],
        },
        // Nesting: prefix parameters and the nested router's own parameters.
        Case {
            name: "nested root",
            method: "GET",
            target: "/api/v2",
            status: ok,
            body: Some("route=/api/{version} version=v2"),
            headers: &[],
        },
        Case {
            name: "nested route with params of both",
            method: "GET",
            target: "/api/v1/items/9",
            status: ok,
            body: Some("route=/api/{version}/items/{id} version=v1 id=9"),
            headers: &[],
        },
        Case {
            name: "nested 405",
            method: "POST",
            target: "/api/v1/items/9",
            status: 405,
            body: None,
            headers: &[("allow", "GET, HEAD, PUT, OPTIONS")],
        },
        Case {
            name: "nested fallback below the prefix",
            method: "GET",
            target: "/api/v1/nothing/here",
            status: 404,
            body: Some("api fallback /api/v1/nothing/here"),
            headers: &[],
        },
        Case {
            name: "the redirect comes before fallbacks",
            method: "DELETE",
            target: "/api/v1/",
            status: 308,
            body: None,
            headers: &[("location", "/api/v1")],
        },
        // The fallback answers what matches nothing, whatever the method.
        Case {
            name: "fallback",
            method: "POST",
            target: "/nothing",
            status: 404,
            body: Some("fallback POST /nothing"),
            headers: &[],
        },
        Case {
            name: "param needs a non-empty segment",
            method: "GET",
            target: "/users/",
            status: 404,
            body: Some("fallback GET /users/"),
            headers: &[],
        },
    ];
    run(app(), &cases);
}

#[test]
fn bare_router_answers_404_and_options_star() {
    let cases = [
        Case {
            name: "404",
            method: "GET",
            target: "/nope",
            status: 404,
            body: Some("Not Found"),
            headers: &[("content-type", "text/plain; charset=utf-8")],
        },
        Case {
            name: "no redirect unless enabled",
            method: "GET",
            target: "/a/",
            status: 404,
            body: Some("Not Found"),
            headers: &[],
        },
        Case {
            name: "HEAD on a PUT-only route",
            method: "HEAD",
            target: "/b",
            status: 405,
            body: None,
            headers: &[("allow", "PUT, OPTIONS")],
        },
        // RFC 9110 §9.3.7: OPTIONS * is about the server.
        Case {
            name: "OPTIONS *",
            method: "OPTIONS",
            target: "*",
            status: 204,
            body: None,
            headers: &[],
        },
        Case {
            name: "route",
            method: "GET",
            target: "/a",
            status: 200,
            body: Some("a"),
            headers: &[],
        },
        Case {
            name: "absolute-form target routes by its path",
            method: "GET",
            target: "http://t/a?q",
            status: 200,
            body: Some("a"),
            headers: &[],
        },
    ];
    let mounted = [
        ("/static", "file /static"),
        ("/static/", "file /static/"),
        ("/static/css/site.css", "file /static/css/site.css"),
        ("/static/special", "special"),
        ("/static/special/x", "file /static/special/x"),
    ];
    let mounted = mounted.map(|(target, body)| Case {
        name: target,
        method: "GET",
        target,
        status: 200,
        body: Some(body),
        headers: &[],
    });
    run(bare(), &cases);
    run(bare(), &mounted);
}

#[test]
fn conflicts_are_reported_at_build_time() {
    use peregrine::router::Conflict;
    let h = |_req: Request| async { "" };
    let err = Router::new().route("/a", get(h)).try_route("/a", get(h).post(h)).unwrap_err();
    assert_eq!(err.conflict(), Some(Conflict::Method));
    let err = Router::new().route("/f/{id}", get(h)).try_route("/f/{*rest}", get(h)).unwrap_err();
    assert_eq!(err.conflict(), Some(Conflict::CatchAllParam));
    assert!(Router::new().try_route("no-slash", get(h)).unwrap_err().malformed().is_some());
    let nested = Router::new().route("/x", get(h));
    let err = Router::new().route("/p/x", get(h)).try_nest("/p", nested).unwrap_err();
    assert_eq!(err.conflict(), Some(Conflict::Method));
    assert!(Router::new().try_nest("/p/", Router::new()).is_err(), "trailing slash prefix");
}

#[test]
#[should_panic(expected = "/users/{name}")]
fn route_panics_with_the_insert_error() {
    let h = |_req: Request| async { "" };
    let _ = Router::new().route("/users/{id}", get(h)).route("/users/{name}", get(h));
}

/// A handler holding `!Send` state (`Rc`) in its future works: the server runs it on the
/// worker thread that accepted the connection.
#[test]
fn non_send_futures_are_routed() {
    let router = Router::new().route(
        "/rc/{n}",
        get(|req: Request| async move {
            let n = std::rc::Rc::new(req.param("n").unwrap_or_default().to_owned());
            tokio::task::yield_now().await;
            format!("rc {n}")
        }),
    );
    let server = spawn(router);
    let mut c = RawClient::connect(server.local_addr());
    c.send(b"GET /rc/5 HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(c.response().body, b"rc 5");
}

/// A handler whose future is larger than a pooled future buffer is still served (boxed).
#[test]
fn oversized_futures_are_boxed_and_served() {
    let router = Router::new().route(
        "/big",
        get(|_req: Request| async move {
            let big = [1u8; peregrine::routing::POOLED_FUTURE_BYTES * 2];
            tokio::task::yield_now().await;
            format!("sum {}", big.iter().map(|&b| u32::from(b)).sum::<u32>())
        }),
    );
    let server = spawn(router);
    let mut c = RawClient::connect(server.local_addr());
    c.send(b"GET /big HTTP/1.1\r\nHost: t\r\n\r\n");
    let expect = format!("sum {}", peregrine::routing::POOLED_FUTURE_BYTES * 2);
    assert_eq!(c.response().body, expect.as_bytes());
}
