//! Decision tests on a real temporary directory.

use super::*;
use std::fs;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A temporary tree: `base/root` is served, `base/outside` is what must stay unreachable.
struct Tree {
    base: PathBuf,
    root: PathBuf,
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.base);
    }
}

const HELLO: &[u8] = b"hello world\n";

fn tree() -> Tree {
    static N: AtomicUsize = AtomicUsize::new(0);
    let base = std::env::temp_dir().join(format!(
        "peregrine-files-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = fs::remove_dir_all(&base);
    let root = base.join("root");
    let w = |rel: &str, data: &[u8]| {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, data).unwrap();
    };
    w("hello.txt", HELLO);
    w("empty.txt", b"");
    w("docs/a.txt", b"a");
    w("docs/<script>&\"'.txt", b"xss");
    w("docs/.hidden", b"h");
    w("docs/sub/z.txt", b"z");
    w("site/index.html", b"<h1>site</h1>");
    w(".env", b"SECRET=1");
    w(".git/config", b"[core]");
    w("app.js", b"console.log(1)");
    w("app.js.gz", b"GZ");
    w("app.js.br", b"BR");
    w("style.css", b"p{}");
    w("style.css.gz", b"GZCSS");
    w("back\\slash.txt", b"b");
    w("big.bin", &(0..200_000u32).map(|i| (i % 251) as u8).collect::<Vec<_>>());
    fs::create_dir_all(base.join("outside")).unwrap();
    fs::write(base.join("outside/secret.txt"), b"TOP SECRET").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::symlink;
        symlink(base.join("outside/secret.txt"), root.join("out.txt")).unwrap();
        symlink("../outside", root.join("outdir")).unwrap();
        symlink("hello.txt", root.join("link.txt")).unwrap();
        symlink(".env", root.join("visible")).unwrap();
        symlink(base.join("outside/secret.txt"), root.join("docs/leak.txt")).unwrap();
        symlink("/", root.join("slash")).unwrap();
    }
    Tree { base, root }
}

fn body(reply: FileReply) -> Vec<u8> {
    match reply.into_body() {
        FileBody::Empty => Vec::new(),
        FileBody::Bytes(b) => b.to_vec(),
        FileBody::File(mut span) => {
            let mut out = Vec::new();
            // An odd chunk size exercises the chunk boundaries.
            while let Some(chunk) = span.read_chunk(7_001).unwrap() {
                assert!(chunk.len() <= 7_001);
                out.extend_from_slice(&chunk);
            }
            out
        }
    }
}

fn header(reply: &FileReply, name: &str) -> Option<String> {
    reply.header(name).map(|v| v.to_str().unwrap().to_owned())
}

fn raw_header(reply: &FileReply, name: &str) -> Option<Vec<u8>> {
    reply.header(name).map(|v| v.as_bytes().to_vec())
}

/// Every rule must hold with and without the open-file cache (and twice in a row with it,
/// so that the second answer comes from the cache).
fn variants(root: &Path) -> [ServeDir; 3] {
    let cached = ServeDir::new(root).unwrap().cache_ttl(Some(Duration::from_secs(60)));
    [ServeDir::new(root).unwrap(), cached.clone(), cached]
}

fn get(path: &[u8]) -> FileRequest<'_> {
    FileRequest::new(Method::Get, path)
}

#[test]
fn path_resolution_never_leaves_the_root() {
    struct Case {
        input: &'static [u8],
        expect: u16,
    }
    let t = tree();
    for files in variants(&t.root) {
        let cases = [
            Case { input: b"/hello.txt", expect: 200 },
            Case { input: b"/hello.txt?x=/../../etc/passwd", expect: 200 },
            Case { input: b"/hel%6Co.txt", expect: 200 },
            Case { input: b"/link.txt", expect: 200 },
            Case { input: b"/missing", expect: 404 },
            Case { input: b"/hello.txt/", expect: 404 },
            Case { input: b"/hello.txt/x", expect: 404 },
            // RFC 3986 §5.2.4 dot-segments, raw and encoded: 400.
            Case { input: b"/../outside/secret.txt", expect: 400 },
            Case { input: b"/docs/../../outside/secret.txt", expect: 400 },
            Case { input: b"/%2e%2e/outside/secret.txt", expect: 400 },
            Case { input: b"/%2E%2E%2Foutside%2Fsecret.txt", expect: 400 },
            Case { input: b"/..%2Foutside/secret.txt", expect: 400 },
            Case { input: b"/./hello.txt", expect: 400 },
            // Encoded NUL (would truncate a C path) and backslashes.
            Case { input: b"/hello.txt%00.png", expect: 400 },
            Case { input: b"/..\\outside\\secret.txt", expect: 400 },
            Case { input: b"/back%5Cslash.txt", expect: 400 },
            Case { input: b"/%ZZ", expect: 400 },
            // Symlinks leaving the root are 404 (the real path is checked on the open file).
            Case { input: b"/out.txt", expect: 404 },
            Case { input: b"/outdir/secret.txt", expect: 404 },
            Case { input: b"/outdir/", expect: 404 },
            Case { input: b"/docs/leak.txt", expect: 404 },
            Case { input: b"/slash/etc/passwd", expect: 404 },
            // Dotfiles hidden, also behind a visible symlink name.
            Case { input: b"/.env", expect: 404 },
            Case { input: b"/.git/config", expect: 404 },
            Case { input: b"/%2Eenv", expect: 404 },
            Case { input: b"/docs/.hidden", expect: 404 },
            Case { input: b"/visible", expect: 404 },
        ];
        for c in cases {
            let reply = files.respond(&get(c.input));
            let status = reply.status();
            let got = body(reply);
            assert_eq!(status, c.expect, "{}", String::from_utf8_lossy(c.input));
            assert!(
                !got.windows(6).any(|w| w == b"SECRET"),
                "{}",
                String::from_utf8_lossy(c.input)
            );
        }
        // Dotfiles served when asked to; the root check still holds.
        let open = ServeDir::new(&t.root).unwrap().hidden_dotfiles(false);
        assert_eq!(open.respond(&get(b"/.env")).status(), 200);
        assert_eq!(open.respond(&get(b"/visible")).status(), 200);
        assert_eq!(open.respond(&get(b"/out.txt")).status(), 404);
    }
}

#[test]
fn file_headers_and_body_rfc9110_8() {
    let t = tree();
    let files = ServeDir::new(&t.root).unwrap().cache_control(Some("public, max-age=60".into()));
    let reply = files.respond(&get(b"/hello.txt"));
    assert_eq!(reply.status(), 200);
    assert_eq!(reply.content_length(), Some(HELLO.len() as u64));
    assert_eq!(header(&reply, "content-type").as_deref(), Some("text/plain; charset=utf-8"));
    assert_eq!(header(&reply, "accept-ranges").as_deref(), Some("bytes"));
    assert_eq!(header(&reply, "cache-control").as_deref(), Some("public, max-age=60"));
    assert_eq!(header(&reply, "vary"), None);
    let etag = header(&reply, "etag").unwrap();
    assert!(etag.starts_with('"') && etag.ends_with('"') && !etag.starts_with("W/"), "{etag}");
    let lm = header(&reply, "last-modified").unwrap();
    assert!(lm.ends_with(" GMT") && lm.len() == 29, "{lm}");
    assert_eq!(body(reply), HELLO);

    // RFC 9110 §9.3.2: HEAD has the same headers and no body.
    let head = files.respond(&FileRequest::new(Method::Head, b"/hello.txt"));
    assert_eq!(head.status(), 200);
    assert_eq!(head.content_length(), Some(HELLO.len() as u64));
    assert_eq!(header(&head, "etag"), Some(etag.clone()));
    assert!(matches!(head.body(), FileBody::Empty));

    // A changed file has a different strong validator (RFC 9110 §8.8.3).
    fs::write(t.root.join("hello.txt"), b"hello world!\n").unwrap();
    assert_ne!(header(&files.respond(&get(b"/hello.txt")), "etag"), Some(etag));

    // Large files stream in chunks and arrive whole.
    let big = files.respond(&get(b"/big.bin"));
    assert_eq!(big.content_length(), Some(200_000));
    assert_eq!(body(big), fs::read(t.root.join("big.bin")).unwrap());

    let empty = files.respond(&get(b"/empty.txt"));
    assert_eq!((empty.status(), empty.content_length()), (200, Some(0)));
    assert_eq!(body(empty), b"");

    // Header values that could split a response are refused.
    let bad = ServeDir::new(&t.root).unwrap().cache_control(Some("x\r\nSet-Cookie: a=b".into()));
    assert_eq!(header(&bad.respond(&get(b"/hello.txt")), "cache-control"), None);
}

#[test]
fn methods_rfc9110_15_5_6() {
    struct Case {
        input: Method,
        expect: u16,
    }
    let t = tree();
    for files in variants(&t.root) {
        let cases = [
            Case { input: Method::Get, expect: 200 },
            Case { input: Method::Head, expect: 200 },
            Case { input: Method::Post, expect: 405 },
            Case { input: Method::Put, expect: 405 },
            Case { input: Method::Delete, expect: 405 },
            // RFC 9110 §9.3.7: OPTIONS on a resource that exists says what it allows.
            Case { input: Method::Options, expect: 204 },
            Case { input: Method::Extension, expect: 405 },
        ];
        for c in cases {
            let reply = files.respond(&FileRequest::new(c.input, b"/hello.txt"));
            assert_eq!(reply.status(), c.expect, "{:?}", c.input);
            let allow = header(&reply, "allow");
            let allowed = matches!(c.expect, 204 | 405).then_some("GET, HEAD, OPTIONS");
            assert_eq!(allow.as_deref(), allowed, "{:?}", c.input);
        }
        for (path, expect) in [(&b"/docs/"[..], 204), (b"/site/", 204), (b"/missing", 404)] {
            let reply = files.respond(&FileRequest::new(Method::Options, path));
            assert_eq!(reply.status(), expect, "{:?}", String::from_utf8_lossy(path));
            assert!(matches!(reply.body(), FileBody::Empty));
        }
    }
}

#[test]
fn directories_redirect_index_listing() {
    let t = tree();
    for files in variants(&t.root) {
        // RFC 9110 §15.4.2: `/docs` → 301 to `docs/` (relative, resolves to `/docs/`).
        let r = files.respond(&get(b"/docs"));
        assert_eq!((r.status(), header(&r, "location").as_deref()), (301, Some("docs/")));
        let r = files.respond(&get(b"/docs/sub"));
        assert_eq!((r.status(), header(&r, "location").as_deref()), (301, Some("sub/")));
        let r = files.respond(&get(b"/site"));
        assert_eq!(r.status(), 301);

        let r = files.respond(&get(b"/site/"));
        assert_eq!(r.status(), 200);
        assert_eq!(header(&r, "content-type").as_deref(), Some("text/html; charset=utf-8"));
        assert_eq!(body(r), b"<h1>site</h1>");

        let r = files.respond(&get(b"/docs/"));
        assert_eq!(r.status(), 200);
        assert_eq!(header(&r, "content-type").as_deref(), Some("text/html; charset=utf-8"));
        let html = String::from_utf8(body(r)).unwrap();
        // Names escaped in text, percent-encoded in hrefs; dotfiles and escaping symlinks hidden.
        assert!(
            html.contains(
                "<a href=\"./%3Cscript%3E%26%22%27.txt\">&lt;script&gt;&amp;&quot;&#39;.txt</a>"
            ),
            "{html}"
        );
        assert!(!html.contains("<script>"), "{html}");
        assert!(!html.contains(".hidden"), "{html}");
        assert!(!html.contains("leak.txt"), "{html}");
        assert!(html.contains("<a href=\"../\">"), "{html}");
        // Sizes shown; directories first, then files by name.
        assert!(
            html.contains(
                "<a href=\"./a.txt\">a.txt</a></td><td class=\"n\" title=\"1 bytes\">1 B</td>"
            ),
            "{html}"
        );
        let (sub, a, script) = (
            html.find("./sub/").unwrap(),
            html.find("./a.txt").unwrap(),
            html.find("./%3Cscript").unwrap(),
        );
        assert!(sub < script && script < a, "{html}");

        // The root listing has no parent link and hides what must stay hidden.
        let root = String::from_utf8(body(files.respond(&get(b"/")))).unwrap();
        assert!(!root.contains("href=\"../\""), "{root}");
        for hidden in [".env", ".git", "out.txt", "outdir", "visible", "slash", "back"] {
            assert!(!root.contains(&format!(">{hidden}")), "{hidden} in {root}");
            assert!(!root.contains(&format!("./{hidden}")), "{hidden} in {root}");
        }
        assert!(root.contains("./link.txt"), "{root}");

        // HEAD on a listing: same length, no body.
        let head = files.respond(&FileRequest::new(Method::Head, b"/docs/"));
        assert!(head.content_length().unwrap() > 0);
        assert!(matches!(head.body(), FileBody::Empty));

        // Listings disabled → 403; index.html still served.
        let quiet = ServeDir::new(&t.root).unwrap().listing(false);
        assert_eq!(quiet.respond(&get(b"/docs/")).status(), 403);
        assert_eq!(quiet.respond(&get(b"/site/")).status(), 200);
    }
}

#[test]
fn conditional_requests_rfc9110_13() {
    let t = tree();
    for files in variants(&t.root).map(|f| f.cache_control(Some("no-cache".into()))) {
        let first = files.respond(&get(b"/hello.txt"));
        let etag = first.header("etag").unwrap().as_bytes().to_vec();
        let lm = first.header("last-modified").unwrap().as_bytes().to_vec();
        struct Case<'a> {
            name: &'static str,
            req: FileRequest<'a>,
            expect: u16,
        }
        let base = get(b"/hello.txt");
        let head = FileRequest::new(Method::Head, b"/hello.txt");
        let cases = [
            Case {
                name: "INM match",
                req: FileRequest { if_none_match: Some(&etag), ..base },
                expect: 304,
            },
            Case {
                name: "INM match HEAD",
                req: FileRequest { if_none_match: Some(&etag), ..head },
                expect: 304,
            },
            Case {
                name: "INM star",
                req: FileRequest { if_none_match: Some(b"*"), ..base },
                expect: 304,
            },
            Case {
                name: "INM other",
                req: FileRequest { if_none_match: Some(b"\"nope\""), ..base },
                expect: 200,
            },
            Case {
                name: "IMS equal",
                req: FileRequest { if_modified_since: Some(&lm), ..base },
                expect: 304,
            },
            Case {
                name: "IMS old",
                req: FileRequest {
                    if_modified_since: Some(b"Sun, 06 Nov 1994 08:49:37 GMT"),
                    ..base
                },
                expect: 200,
            },
            Case {
                name: "INM beats IMS (§13.2.2)",
                req: FileRequest {
                    if_none_match: Some(b"\"nope\""),
                    if_modified_since: Some(&lm),
                    ..base
                },
                expect: 200,
            },
            Case {
                name: "IM match",
                req: FileRequest { if_match: Some(&etag), ..base },
                expect: 200,
            },
            Case {
                name: "IM other",
                req: FileRequest { if_match: Some(b"\"nope\""), ..base },
                expect: 412,
            },
            Case {
                name: "IUS old",
                req: FileRequest {
                    if_unmodified_since: Some(b"Sun, 06 Nov 1994 08:49:37 GMT"),
                    ..base
                },
                expect: 412,
            },
            Case {
                name: "IUS equal",
                req: FileRequest { if_unmodified_since: Some(&lm), ..base },
                expect: 200,
            },
        ];
        for c in cases {
            let reply = files.respond(&c.req);
            assert_eq!(reply.status(), c.expect, "{}", c.name);
            if c.expect == 304 {
                // RFC 9110 §15.4.5: validators and Cache-Control, no content headers, no body.
                assert_eq!(raw_header(&reply, "etag"), Some(etag.clone()), "{}", c.name);
                assert_eq!(
                    header(&reply, "cache-control").as_deref(),
                    Some("no-cache"),
                    "{}",
                    c.name
                );
                assert_eq!(reply.header("content-type"), None, "{}", c.name);
                assert_eq!(reply.content_length(), Some(HELLO.len() as u64), "{}", c.name);
                assert!(matches!(reply.body(), FileBody::Empty), "{}", c.name);
            }
        }
    }
}

#[test]
fn ranges_rfc9110_14() {
    let t = tree();
    for files in variants(&t.root) {
        let etag = files.respond(&get(b"/big.bin")).header("etag").unwrap().as_bytes().to_vec();
        let lm =
            files.respond(&get(b"/big.bin")).header("last-modified").unwrap().as_bytes().to_vec();
        let big = fs::read(t.root.join("big.bin")).unwrap();
        struct Case<'a> {
            name: &'static str,
            req: FileRequest<'a>,
            expect: u16,
            content_range: Option<&'static str>,
            span: Option<(usize, usize)>,
        }
        let base = get(b"/big.bin");
        let ranged = |r: &'static [u8]| FileRequest { range: Some(r), ..base };
        let cases = [
            Case {
                name: "a-b",
                req: ranged(b"bytes=0-99"),
                expect: 206,
                content_range: Some("bytes 0-99/200000"),
                span: Some((0, 100)),
            },
            Case {
                name: "a-",
                req: ranged(b"bytes=199990-"),
                expect: 206,
                content_range: Some("bytes 199990-199999/200000"),
                span: Some((199_990, 200_000)),
            },
            Case {
                name: "-n",
                req: ranged(b"bytes=-10"),
                expect: 206,
                content_range: Some("bytes 199990-199999/200000"),
                span: Some((199_990, 200_000)),
            },
            Case {
                name: "clamped",
                req: ranged(b"bytes=100000-999999"),
                expect: 206,
                content_range: Some("bytes 100000-199999/200000"),
                span: Some((100_000, 200_000)),
            },
            Case {
                name: "unsatisfiable",
                req: ranged(b"bytes=200000-"),
                expect: 416,
                content_range: Some("bytes */200000"),
                span: Some((0, 0)),
            },
            Case {
                name: "multiple → 200",
                req: ranged(b"bytes=0-1,5-6"),
                expect: 200,
                content_range: None,
                span: Some((0, 200_000)),
            },
            Case {
                name: "invalid → 200",
                req: ranged(b"bytes=5-1"),
                expect: 200,
                content_range: None,
                span: Some((0, 200_000)),
            },
            Case {
                name: "If-Range etag",
                req: FileRequest { if_range: Some(&etag), ..ranged(b"bytes=0-0") },
                expect: 206,
                content_range: Some("bytes 0-0/200000"),
                span: Some((0, 1)),
            },
            Case {
                name: "If-Range date",
                req: FileRequest { if_range: Some(&lm), ..ranged(b"bytes=0-0") },
                expect: 206,
                content_range: Some("bytes 0-0/200000"),
                span: Some((0, 1)),
            },
            Case {
                name: "If-Range stale → 200",
                req: FileRequest { if_range: Some(b"\"stale\""), ..ranged(b"bytes=0-0") },
                expect: 200,
                content_range: None,
                span: Some((0, 200_000)),
            },
            Case {
                name: "If-Range stale + unsatisfiable → 200",
                req: FileRequest { if_range: Some(b"\"stale\""), ..ranged(b"bytes=999999-") },
                expect: 200,
                content_range: None,
                span: Some((0, 200_000)),
            },
            Case {
                name: "HEAD ignores Range (§14.2)",
                req: FileRequest { method: Method::Head, ..ranged(b"bytes=0-0") },
                expect: 200,
                content_range: None,
                span: None,
            },
            Case {
                name: "412 before range",
                req: FileRequest { if_match: Some(b"\"x\""), ..ranged(b"bytes=0-0") },
                expect: 412,
                content_range: None,
                span: Some((0, 0)),
            },
        ];
        for c in cases {
            let reply = files.respond(&c.req);
            assert_eq!(reply.status(), c.expect, "{}", c.name);
            assert_eq!(header(&reply, "content-range").as_deref(), c.content_range, "{}", c.name);
            let len = reply.content_length();
            let got = body(reply);
            match c.span {
                Some((a, b)) => {
                    assert_eq!(got, &big[a..b], "{}", c.name);
                    assert_eq!(len, Some((b - a) as u64), "{}", c.name);
                }
                None => assert!(got.is_empty(), "{}", c.name),
            }
        }
        // A small file (held in memory by the cache) is sliced the same way.
        let small =
            files.respond(&FileRequest { range: Some(b"bytes=6-10"), ..get(b"/hello.txt") });
        assert_eq!(small.status(), 206);
        assert_eq!(body(small), b"world");
    }
}

#[test]
fn precompressed_siblings_rfc9110_12_5_3() {
    struct Case {
        path: &'static [u8],
        accept: Option<&'static [u8]>,
        encoding: Option<&'static str>,
        vary: bool,
        body: &'static [u8],
    }
    let t = tree();
    for files in variants(&t.root) {
        let cases = [
            Case {
                path: b"/app.js",
                accept: None,
                encoding: None,
                vary: true,
                body: b"console.log(1)",
            },
            Case {
                path: b"/app.js",
                accept: Some(b"gzip, br"),
                encoding: Some("br"),
                vary: true,
                body: b"BR",
            },
            Case {
                path: b"/app.js",
                accept: Some(b"gzip"),
                encoding: Some("gzip"),
                vary: true,
                body: b"GZ",
            },
            Case {
                path: b"/app.js",
                accept: Some(b"br;q=0.5, gzip"),
                encoding: Some("gzip"),
                vary: true,
                body: b"GZ",
            },
            Case {
                path: b"/app.js",
                accept: Some(b"br;q=0, gzip;q=0"),
                encoding: None,
                vary: true,
                body: b"console.log(1)",
            },
            Case {
                path: b"/app.js",
                accept: Some(b"*"),
                encoding: Some("br"),
                vary: true,
                body: b"BR",
            },
            Case {
                path: b"/style.css",
                accept: Some(b"br"),
                encoding: None,
                vary: true,
                body: b"p{}",
            },
            Case {
                path: b"/style.css",
                accept: Some(b"br, gzip"),
                encoding: Some("gzip"),
                vary: true,
                body: b"GZCSS",
            },
            Case {
                path: b"/hello.txt",
                accept: Some(b"br, gzip"),
                encoding: None,
                vary: false,
                body: HELLO,
            },
        ];
        let mut tags = std::collections::HashSet::new();
        for c in cases {
            let name = format!(
                "{} {:?}",
                String::from_utf8_lossy(c.path),
                c.accept.map(String::from_utf8_lossy)
            );
            let reply = files.respond(&FileRequest { accept_encoding: c.accept, ..get(c.path) });
            assert_eq!(reply.status(), 200, "{name}");
            assert_eq!(header(&reply, "content-encoding").as_deref(), c.encoding, "{name}");
            assert_eq!(
                header(&reply, "vary").as_deref(),
                c.vary.then_some("accept-encoding"),
                "{name}"
            );
            if c.path == b"/app.js" {
                // Content-Type from the original name; one ETag per coding.
                assert_eq!(
                    header(&reply, "content-type").as_deref(),
                    Some("text/javascript; charset=utf-8")
                );
                tags.insert((c.encoding, header(&reply, "etag").unwrap()));
            }
            assert_eq!(body(reply), c.body, "{name}");
        }
        let distinct: std::collections::HashSet<_> = tags.iter().map(|(_, t)| t.clone()).collect();
        assert_eq!(distinct.len(), 3, "{tags:?}");

        // The sibling's own ETag validates it (304 for the gzip representation).
        let gz = files.respond(&FileRequest { accept_encoding: Some(b"gzip"), ..get(b"/app.js") });
        let tag = gz.header("etag").unwrap().as_bytes().to_vec();
        let again = FileRequest {
            accept_encoding: Some(b"gzip"),
            if_none_match: Some(&tag),
            ..get(b"/app.js")
        };
        assert_eq!(files.respond(&again).status(), 304);
        let plain = FileRequest { if_none_match: Some(&tag), ..get(b"/app.js") };
        assert_eq!(files.respond(&plain).status(), 200);

        // Off: no lookups, no Vary.
        let off = ServeDir::new(&t.root).unwrap().precompressed(false);
        let r = off.respond(&FileRequest { accept_encoding: Some(b"br"), ..get(b"/app.js") });
        assert_eq!((header(&r, "content-encoding"), header(&r, "vary")), (None, None));
    }
}

#[test]
fn root_must_be_a_directory() {
    let t = tree();
    assert_eq!(ServeDir::new(t.root.join("nope")).unwrap_err().kind(), io::ErrorKind::NotFound);
    assert_eq!(
        ServeDir::new(t.root.join("hello.txt")).unwrap_err().kind(),
        io::ErrorKind::NotADirectory
    );
}

#[cfg(unix)]
#[test]
fn fifo_does_not_block_and_is_not_served() {
    let t = tree();
    let fifo = t.root.join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        return; // mkfifo unavailable: nothing to check.
    }
    for files in variants(&t.root) {
        assert_eq!(files.respond(&get(b"/pipe")).status(), 404);
    }
}

#[test]
fn open_file_cache_serves_a_consistent_snapshot_within_its_ttl() {
    let t = tree();
    let files = ServeDir::new(&t.root).unwrap().cache_ttl(Some(Duration::from_millis(300)));
    let first = files.respond(&get(b"/hello.txt"));
    let etag = raw_header(&first, "etag");
    assert_eq!(body(first), HELLO);
    // Replaced within the TTL: the old snapshot, with its own validators.
    fs::write(t.root.join("hello.txt"), b"changed\n").unwrap();
    let stale = files.respond(&get(b"/hello.txt"));
    assert_eq!(raw_header(&stale, "etag"), etag);
    assert_eq!(body(stale), HELLO);
    // After the TTL the path is resolved afresh.
    std::thread::sleep(Duration::from_millis(350));
    let fresh = files.respond(&get(b"/hello.txt"));
    assert_ne!(raw_header(&fresh, "etag"), etag);
    assert_eq!(body(fresh), b"changed\n");
    // Failures are never cached: a file created after a 404 is found at once.
    assert_eq!(files.respond(&get(b"/new.txt")).status(), 404);
    fs::write(t.root.join("new.txt"), b"new").unwrap();
    assert_eq!(files.respond(&get(b"/new.txt")).status(), 200);
}
