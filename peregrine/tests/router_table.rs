//! Table-driven insert and match tests for `peregrine::router` (the rules in its module docs).

use peregrine::Method;
use peregrine::router::{Conflict, InsertError, Malformed, MethodRouter, Resolution, Tree};

fn tree(routes: &[&'static str]) -> Tree<&'static str> {
    let mut t = Tree::new();
    for r in routes {
        t.insert(r, *r).unwrap_or_else(|e| panic!("{e}"));
    }
    t
}

#[test]
fn matches_by_priority_with_backtracking() {
    struct Case {
        path: &'static str,
        expect: Option<(&'static str, &'static [(&'static str, &'static str)])>,
    }
    let t = tree(&[
        "/",
        "/users",
        "/users/",
        "/users/new",
        "/users/{id}",
        "/users/{id}/posts/{post}",
        "/users/{id}/settings",
        "/a/b/c",
        "/a/{x}/d",
        "/a/{x}/{y}/e",
        "/a/b/{z}/e/f",
        "/files/{*path}",
        "/files/readme",
        "/s/{*rest}",
        "/s/x/y",
        "/{{literal}}",
        "/{top}/deep/{*tail}",
        "/empty//gap",
        "/longsegment-over-eight-bytes/{id}",
        "/longsegment-over-eight-bytez",
    ]);
    let cases = [
        Case { path: "/", expect: Some(("/", &[])) },
        Case { path: "/users", expect: Some(("/users", &[])) },
        Case { path: "/users/", expect: Some(("/users/", &[])) },
        Case { path: "/users/new", expect: Some(("/users/new", &[])) },
        Case { path: "/users/newer", expect: Some(("/users/{id}", &[("id", "newer")])) },
        Case { path: "/users/ne", expect: Some(("/users/{id}", &[("id", "ne")])) },
        Case {
            path: "/users/7/posts/9",
            expect: Some(("/users/{id}/posts/{post}", &[("id", "7"), ("post", "9")])),
        },
        Case {
            path: "/users/new/settings",
            expect: Some(("/users/{id}/settings", &[("id", "new")])),
        },
        Case { path: "/users/7/posts/", expect: None },
        Case { path: "/users//settings", expect: None },
        // Static dead end falls back to the parameter.
        Case { path: "/a/b/c", expect: Some(("/a/b/c", &[])) },
        Case { path: "/a/b/d", expect: Some(("/a/{x}/d", &[("x", "b")])) },
        Case { path: "/a/b/q/e", expect: Some(("/a/{x}/{y}/e", &[("x", "b"), ("y", "q")])) },
        Case { path: "/a/b/q/e/f", expect: Some(("/a/b/{z}/e/f", &[("z", "q")])) },
        Case { path: "/a/b/q/e/g", expect: None },
        // Catch-all: non-empty rest, slashes included; static still wins.
        Case { path: "/files/readme", expect: Some(("/files/readme", &[])) },
        Case { path: "/files/a/b.txt", expect: Some(("/files/{*path}", &[("path", "a/b.txt")])) },
        Case { path: "/files/readme/x", expect: Some(("/files/{*path}", &[("path", "readme/x")])) },
        Case { path: "/files//", expect: Some(("/files/{*path}", &[("path", "/")])) },
        Case { path: "/files/", expect: None },
        Case { path: "/files", expect: None },
        Case { path: "/s/x/y", expect: Some(("/s/x/y", &[])) },
        Case { path: "/s/x/z", expect: Some(("/s/{*rest}", &[("rest", "x/z")])) },
        Case { path: "/s/x", expect: Some(("/s/{*rest}", &[("rest", "x")])) },
        Case { path: "/{literal}", expect: Some(("/{{literal}}", &[])) },
        Case {
            path: "/lit/deep/a/b",
            expect: Some(("/{top}/deep/{*tail}", &[("top", "lit"), ("tail", "a/b")])),
        },
        Case {
            path: "/users/deep/x",
            expect: Some(("/{top}/deep/{*tail}", &[("top", "users"), ("tail", "x")])),
        },
        Case { path: "/empty//gap", expect: Some(("/empty//gap", &[])) },
        Case { path: "/empty/gap", expect: None },
        Case {
            path: "/longsegment-over-eight-bytes/1",
            expect: Some(("/longsegment-over-eight-bytes/{id}", &[("id", "1")])),
        },
        Case {
            path: "/longsegment-over-eight-bytez",
            expect: Some(("/longsegment-over-eight-bytez", &[])),
        },
        Case { path: "/longsegment-over-eight-bytey", expect: None },
        // Raw comparison: no decoding, no case folding.
        Case { path: "/USERS", expect: None },
        Case { path: "/user%73", expect: None },
        // Not a path.
        Case { path: "", expect: None },
        Case { path: "users", expect: None },
        Case { path: "*", expect: None },
    ];
    for c in cases {
        let got = t.at(c.path).ok().map(|m| (m.template, m.params.iter().collect::<Vec<_>>()));
        let want = c.expect.map(|(t, p)| (t, p.to_vec()));
        assert_eq!(got, want, "path {:?}", c.path);
        if let Ok(m) = t.at(c.path) {
            assert_eq!(*m.value, m.template);
        }
    }
}

#[test]
fn conflicts_name_both_templates() {
    struct Case {
        existing: &'static [&'static str],
        insert: &'static str,
        expect: Result<(), (Conflict, &'static str)>,
    }
    let cases = [
        Case { existing: &["/a"], insert: "/a", expect: Err((Conflict::Duplicate, "/a")) },
        Case { existing: &["/"], insert: "/", expect: Err((Conflict::Duplicate, "/")) },
        Case {
            existing: &["/u/{id}"],
            insert: "/u/{id}",
            expect: Err((Conflict::Duplicate, "/u/{id}")),
        },
        Case {
            existing: &["/f/{*p}"],
            insert: "/f/{*p}",
            expect: Err((Conflict::Duplicate, "/f/{*p}")),
        },
        Case {
            existing: &["/{{a}}"],
            insert: "/{{a}}",
            expect: Err((Conflict::Duplicate, "/{{a}}")),
        },
        Case {
            existing: &["/u/{id}"],
            insert: "/u/{name}",
            expect: Err((Conflict::ParamName, "/u/{id}")),
        },
        Case {
            existing: &["/u/{id}/x"],
            insert: "/u/{name}",
            expect: Err((Conflict::ParamName, "/u/{id}/x")),
        },
        Case {
            existing: &["/u/{id}"],
            insert: "/u/{name}/posts",
            expect: Err((Conflict::ParamName, "/u/{id}")),
        },
        Case {
            existing: &["/f/{*a}"],
            insert: "/f/{*b}",
            expect: Err((Conflict::ParamName, "/f/{*a}")),
        },
        Case {
            existing: &["/f/{id}"],
            insert: "/f/{*rest}",
            expect: Err((Conflict::CatchAllParam, "/f/{id}")),
        },
        Case {
            existing: &["/f/{id}/x/y"],
            insert: "/f/{*rest}",
            expect: Err((Conflict::CatchAllParam, "/f/{id}/x/y")),
        },
        Case {
            existing: &["/f/{*rest}"],
            insert: "/f/{id}",
            expect: Err((Conflict::CatchAllParam, "/f/{*rest}")),
        },
        Case {
            existing: &["/f/{*rest}"],
            insert: "/f/{id}/more",
            expect: Err((Conflict::CatchAllParam, "/f/{*rest}")),
        },
        // Allowed overlaps: static with parameter or catch-all, different prefixes, names reused.
        Case { existing: &["/u/{id}"], insert: "/u/new", expect: Ok(()) },
        Case { existing: &["/u/new"], insert: "/u/{id}", expect: Ok(()) },
        Case { existing: &["/f/{*p}"], insert: "/f/x", expect: Ok(()) },
        Case { existing: &["/f/{*p}"], insert: "/f", expect: Ok(()) },
        Case { existing: &["/f/{*p}"], insert: "/f/", expect: Ok(()) },
        Case { existing: &["/a/{x}"], insert: "/b/{y}", expect: Ok(()) },
        Case { existing: &["/a/{x}"], insert: "/a/{x}/{y}", expect: Ok(()) },
        Case { existing: &["/a/b/{x}"], insert: "/a/{y}/c", expect: Ok(()) },
        Case { existing: &["/a"], insert: "/a/", expect: Ok(()) },
    ];
    for c in cases {
        let mut t = tree(c.existing);
        let got = t.insert(c.insert, c.insert);
        match (got, c.expect) {
            (Ok(()), Ok(())) => assert_eq!(t.len(), c.existing.len() + 1),
            (Err(InsertError::Conflict { template, with, kind }), Err((k, w))) => {
                assert_eq!((&*template, &*with, kind), (c.insert, w, k), "{:?}", c.insert);
                // A failed insert leaves the table unchanged.
                assert_eq!(t.len(), c.existing.len());
                for r in c.existing {
                    assert_eq!(t.iter().filter(|(tt, _)| tt == r).count(), 1);
                }
            }
            (got, want) => {
                panic!("{:?} after {:?}: got {got:?}, want {want:?}", c.insert, c.existing)
            }
        }
    }
}

#[test]
fn malformed_templates_are_rejected() {
    struct Case {
        input: &'static str,
        expect: Malformed,
    }
    let cases = [
        Case { input: "", expect: Malformed::MissingLeadingSlash },
        Case { input: "users", expect: Malformed::MissingLeadingSlash },
        Case { input: "/{id", expect: Malformed::UnclosedBrace },
        Case { input: "/a}", expect: Malformed::UnmatchedClosingBrace },
        Case { input: "/{}", expect: Malformed::EmptyName },
        Case { input: "/{*}", expect: Malformed::EmptyName },
        Case { input: "/{a:b}", expect: Malformed::InvalidName },
        Case { input: "/{id}.json", expect: Malformed::PartialSegment },
        Case { input: "/img-{id}", expect: Malformed::PartialSegment },
        Case { input: "/{*rest}/x", expect: Malformed::CatchAllNotLast },
        Case { input: "/{id}/{id}", expect: Malformed::DuplicateName },
        Case { input: "/a b", expect: Malformed::InvalidByte },
        Case { input: "/a?q", expect: Malformed::InvalidByte },
    ];
    let mut t: Tree<()> = Tree::new();
    for c in cases {
        let e = t.insert(c.input, ()).unwrap_err();
        assert_eq!(e.malformed(), Some(c.expect), "{:?}: {e}", c.input);
        assert!(e.to_string().contains(c.input), "{e}");
    }
    assert!(t.is_empty());
    // The same tree still works afterwards.
    t.insert("/ok", ()).unwrap();
    assert!(t.at("/ok").is_ok());
}

#[test]
fn decodes_parameters_on_request() {
    let t = tree(&["/p/{v}", "/c/{*rest}"]);
    let m = t.at("/p/caf%C3%A9").unwrap();
    assert_eq!(m.params.get("v"), Some("caf%C3%A9"));
    assert_eq!(m.params.decoded("v").unwrap(), "café");
    let m = t.at("/c/a%2Fb/c").unwrap();
    assert_eq!(m.params.decoded("rest").unwrap(), "a/b/c");
    assert!(t.at("/p/%FF").unwrap().params.decoded("v").is_err());
    assert!(t.at("/p/%zz").unwrap().params.decoded("v").is_err());
}

#[test]
fn many_parameters_spill_and_stay_ordered() {
    let template: String = (0..12).map(|i| format!("/{{p{i}}}")).collect();
    let path: String = (0..12).map(|i| format!("/v{i}")).collect();
    let mut t = Tree::new();
    t.insert(&template, ()).unwrap();
    let m = t.at(&path).unwrap();
    assert_eq!(m.params.len(), 12);
    for (i, (n, v)) in m.params.iter().enumerate() {
        assert_eq!((n, v), (format!("p{i}").as_str(), format!("v{i}").as_str()));
    }
}

#[test]
fn nest_mounts_with_conflicts_checked() {
    let mut api = Tree::new();
    api.insert("/", "api-index").unwrap();
    api.insert("/users/{id}", "user").unwrap();
    api.insert("/files/{*p}", "files").unwrap();
    let mut app = Tree::new();
    app.insert("/", "home").unwrap();
    app.insert("/api/v1/users/{uid}/x", "clash").unwrap();
    // The nested `/users/{id}` would give `/api/v1/users/{id}` next to `{uid}`.
    let e = app.nest("/api/v1", api.clone()).unwrap_err();
    assert_eq!(e.conflict(), Some(Conflict::ParamName));
    assert_eq!(app.len(), 2, "failed nest changes nothing");
    assert!(app.at("/api/v1").is_err());
    app.nest("/api/{v}", api.clone()).unwrap();
    app.nest("/api/v2", api.clone()).unwrap();
    assert_eq!(app.at("/api/v9/users/3").unwrap().template, "/api/{v}/users/{id}");
    assert_eq!(app.at("/api/v9/users/3").unwrap().params.get("v"), Some("v9"));
    assert_eq!(*app.at("/api/v2").unwrap().value, "api-index");
    assert_eq!(app.at("/api/v2/users/3").unwrap().template, "/api/v2/users/{id}");
    assert_eq!(app.at("/api/v2/files/a/b").unwrap().params.get("p"), Some("a/b"));
    let bad = |p: &str| Tree::<()>::new().nest(p, Tree::new()).unwrap_err().malformed();
    assert_eq!(bad("/api/"), Some(Malformed::InvalidPrefix));
    assert_eq!(bad("/api/{*x}"), Some(Malformed::InvalidPrefix));
    assert_eq!(bad("api"), Some(Malformed::MissingLeadingSlash));
    // Prefix `/` merges; duplicates are reported.
    let mut other = Tree::new();
    other.insert("/", "dup").unwrap();
    assert_eq!(app.nest("/", other).unwrap_err().conflict(), Some(Conflict::Duplicate));
    // Prefix parameters and nested parameters share one namespace.
    let mut inner = Tree::new();
    inner.insert("/{v}", ()).unwrap();
    let e = Tree::new().nest("/x/{v}", inner).unwrap_err();
    assert_eq!(e.malformed(), Some(Malformed::DuplicateName));
}

fn kind<T>(r: &Resolution<'_, '_, T>) -> String {
    match r {
        Resolution::Found { template, .. } => format!("found {template}"),
        Resolution::MethodNotAllowed { allow } => format!("405 {allow}"),
        Resolution::Options { allow } => format!("options {allow}"),
        Resolution::RedirectTrailingSlash { location } => format!("308 {location}"),
        Resolution::NotFound => "404".into(),
    }
}

#[test]
fn methods_resolve_rfc9110() {
    struct Case {
        method: &'static str,
        path: &'static str,
        expect: &'static str,
    }
    let mut r = MethodRouter::new();
    r.insert("/users/{id}", Method::Get, "show").unwrap();
    r.insert("/users/{id}", Method::Put, "update").unwrap();
    r.insert("/users/{id}", Method::Delete, "delete").unwrap();
    r.insert("/users", Method::Post, "create").unwrap();
    r.insert_extension("/users", "PROPFIND", "propfind").unwrap();
    r.insert("/head", Method::Get, "get").unwrap();
    r.insert("/head", Method::Head, "head").unwrap();
    r.insert("/opt", Method::Options, "opt").unwrap();
    r.insert("/dir/", Method::Get, "dir").unwrap();
    // Regression: `/dir` then has two static children, so the redirect probe hashes the empty
    // segment after the virtual slash, which starts one past the end of the path.
    r.insert("/dir/sub", Method::Get, "sub").unwrap();
    r.insert("/file", Method::Get, "file").unwrap();
    let cases = [
        // RFC 9110 §9.3.1 / §9.3.2: HEAD answered by GET unless it has its own value.
        Case { method: "GET", path: "/users/1", expect: "found /users/{id}" },
        Case { method: "HEAD", path: "/users/1", expect: "found /users/{id}" },
        Case { method: "HEAD", path: "/head", expect: "found /head" },
        // RFC 9110 §15.5.6 / §10.2.1: 405 with Allow.
        Case { method: "POST", path: "/users/1", expect: "405 GET, HEAD, PUT, DELETE, OPTIONS" },
        Case { method: "GET", path: "/users", expect: "405 POST, OPTIONS, PROPFIND" },
        Case { method: "HEAD", path: "/users", expect: "405 POST, OPTIONS, PROPFIND" },
        Case { method: "PROPFIND", path: "/users", expect: "found /users" },
        Case { method: "propfind", path: "/users", expect: "405 POST, OPTIONS, PROPFIND" },
        Case { method: "MKCOL", path: "/users/1", expect: "405 GET, HEAD, PUT, DELETE, OPTIONS" },
        // RFC 9110 §9.3.7: OPTIONS answered with Allow unless routed.
        Case {
            method: "OPTIONS",
            path: "/users/1",
            expect: "options GET, HEAD, PUT, DELETE, OPTIONS",
        },
        Case { method: "OPTIONS", path: "/opt", expect: "found /opt" },
        Case { method: "OPTIONS", path: "/nope", expect: "404" },
        Case { method: "GET", path: "/nope", expect: "404" },
        Case { method: "MKCOL", path: "/nope", expect: "404" },
        // Redirect is off by default.
        Case { method: "GET", path: "/dir", expect: "404" },
    ];
    let resolve = |r: &MethodRouter<&str>, c: &Case| {
        let m = Method::from_token(c.method.as_bytes());
        if m == Method::Extension {
            kind(&r.resolve_extension(c.method, c.path))
        } else {
            kind(&r.resolve(m, c.path))
        }
    };
    for c in &cases {
        assert_eq!(resolve(&r, c), c.expect, "{} {}", c.method, c.path);
    }
    // RFC 9110 §15.4.9: 308 only when the other form exists; the method is kept by the client.
    r.set_redirect_trailing_slash(true);
    let redirects = [
        Case { method: "GET", path: "/dir", expect: "308 /dir/" },
        Case { method: "POST", path: "/dir", expect: "308 /dir/" },
        Case { method: "GET", path: "/file/", expect: "308 /file" },
        Case { method: "GET", path: "/users/1/", expect: "308 /users/1" },
        Case { method: "GET", path: "/users/", expect: "308 /users" },
        Case { method: "GET", path: "/dir/", expect: "found /dir/" },
        Case { method: "GET", path: "/nope/", expect: "404" },
        Case { method: "GET", path: "/", expect: "404" },
        Case { method: "GET", path: "/users/1/x", expect: "404" },
    ];
    for c in &redirects {
        assert_eq!(resolve(&r, c), c.expect, "{} {}", c.method, c.path);
    }
}

#[test]
fn method_conflicts_and_nesting() {
    let mut r = MethodRouter::new();
    r.insert("/a", Method::Get, 1).unwrap();
    let e = r.insert("/a", Method::Get, 2).unwrap_err();
    assert_eq!(e.conflict(), Some(Conflict::Method));
    assert_eq!(e.to_string(), "route `/a` conflicts with `/a`: method already routed");
    r.insert_extension("/a", "PURGE", 3).unwrap();
    assert_eq!(
        r.insert_extension("/a", "PURGE", 4).unwrap_err().conflict(),
        Some(Conflict::Method)
    );
    // A standard name given as a token is the standard method.
    assert_eq!(r.insert_extension("/a", "GET", 5).unwrap_err().conflict(), Some(Conflict::Method));
    assert_eq!(
        r.insert_extension("/a", "BAD METHOD", 5).unwrap_err().malformed(),
        Some(Malformed::InvalidMethod)
    );
    assert_eq!(
        r.insert("/a", Method::Extension, 5).unwrap_err().malformed(),
        Some(Malformed::InvalidMethod)
    );
    assert_eq!(r.insert("/a/{x}", Method::Get, 5).map(|_| ()), Ok(()));
    assert_eq!(
        r.insert("/a/{y}", Method::Post, 5).unwrap_err().conflict(),
        Some(Conflict::ParamName)
    );

    let mut sub = MethodRouter::new();
    sub.insert("/", Method::Post, 10).unwrap();
    sub.insert("/items/{id}", Method::Get, 11).unwrap();
    let mut app = MethodRouter::new();
    app.insert("/shop", Method::Get, 0).unwrap();
    app.nest("/shop", sub.clone()).unwrap();
    assert!(matches!(app.resolve(Method::Get, "/shop"), Resolution::Found { value: 0, .. }));
    assert!(matches!(app.resolve(Method::Post, "/shop"), Resolution::Found { value: 10, .. }));
    assert!(matches!(
        app.resolve(Method::Get, "/shop/items/2"),
        Resolution::Found { value: 11, .. }
    ));
    // Same method on the same route: conflict, nothing changed.
    let mut clash = MethodRouter::new();
    clash.insert("/", Method::Get, 20).unwrap();
    clash.insert("/new", Method::Get, 21).unwrap();
    assert_eq!(app.nest("/shop", clash).unwrap_err().conflict(), Some(Conflict::Method));
    assert!(matches!(app.resolve(Method::Get, "/shop/new"), Resolution::NotFound));
    assert_eq!(app.len(), 2);
}
