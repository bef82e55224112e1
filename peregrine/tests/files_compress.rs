//! Compression on the fly: negotiation, round trips through the flate2/brotli/zstd decoders,
//! per-encoding ETags, Vary, ranges over the compressed bytes, the size window, the cache, and
//! a changed file never answered from an old copy.
#![cfg(all(feature = "gzip", feature = "brotli", feature = "zstd"))]

use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use peregrine::Method;
use peregrine::files::{Coding, Compression, FileBody, FileReply, FileRequest, ServeDir};

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Text that compresses well but not trivially: 40 KB of JavaScript-like lines.
fn script() -> Vec<u8> {
    (0..800)
        .map(|i| format!("function f{i}(a, b) {{ return a * {i} + b; }} // {}\n", i * 7919 % 1000))
        .collect::<String>()
        .into_bytes()
}

fn dir(tag: &str) -> Dir {
    let d = std::env::temp_dir().join(format!("peregrine-files-z-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("app.js"), script()).unwrap();
    std::fs::write(d.join("small.css"), b"p { color: red }").unwrap();
    std::fs::write(d.join("photo.png"), vec![7u8; 10_000]).unwrap();
    std::fs::write(d.join("big.txt"), "x".repeat(300_000)).unwrap();
    std::fs::write(d.join("pre.js"), script()).unwrap();
    std::fs::write(d.join("pre.js.gz"), b"PRECOMPRESSED").unwrap();
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

fn decode(coding: Option<&str>, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    match coding {
        None => out.extend_from_slice(data),
        Some("gzip") => {
            flate2::read::GzDecoder::new(data).read_to_end(&mut out).unwrap();
        }
        Some("br") => {
            brotli::Decompressor::new(data, 4096).read_to_end(&mut out).unwrap();
        }
        Some("zstd") => out = zstd::stream::decode_all(data).unwrap(),
        Some(other) => panic!("unexpected coding {other}"),
    }
    out
}

fn get<'a>(path: &'a [u8], accept_encoding: Option<&'a [u8]>) -> FileRequest<'a> {
    FileRequest { accept_encoding, ..FileRequest::new(Method::Get, path) }
}

fn files(d: &Dir) -> ServeDir {
    ServeDir::new(&d.0)
        .unwrap()
        .cache_ttl(Some(Duration::from_secs(60)))
        .compression(Compression::default().max_size(200_000))
}

#[test]
fn negotiation_and_round_trips() {
    let d = dir("neg");
    let files = files(&d);
    let js = script();
    struct Case {
        path: &'static [u8],
        accept: Option<&'static [u8]>,
        coding: Option<&'static str>,
        vary: bool,
        tag_suffix: &'static str,
    }
    let cases = [
        Case {
            path: b"/app.js",
            accept: Some(b"gzip"),
            coding: Some("gzip"),
            vary: true,
            tag_suffix: "-gz6\"",
        },
        Case {
            path: b"/app.js",
            accept: Some(b"br"),
            coding: Some("br"),
            vary: true,
            tag_suffix: "-br5\"",
        },
        Case {
            path: b"/app.js",
            accept: Some(b"zstd"),
            coding: Some("zstd"),
            vary: true,
            tag_suffix: "-zst3\"",
        },
        // A browser's list, all weighed 1: brotli first.
        Case {
            path: b"/app.js",
            accept: Some(b"gzip, deflate, br, zstd"),
            coding: Some("br"),
            vary: true,
            tag_suffix: "-br5\"",
        },
        Case {
            path: b"/app.js",
            accept: Some(b"zstd, br;q=0.9"),
            coding: Some("zstd"),
            vary: true,
            tag_suffix: "-zst3\"",
        },
        Case {
            path: b"/app.js",
            accept: Some(b"deflate"),
            coding: None,
            vary: true,
            tag_suffix: "",
        },
        Case { path: b"/app.js", accept: None, coding: None, vary: true, tag_suffix: "" },
        Case {
            path: b"/app.js",
            accept: Some(b"gzip;q=0, identity"),
            coding: None,
            vary: true,
            tag_suffix: "",
        },
        // Outside the window or not compressible: identity, and no Vary.
        Case {
            path: b"/small.css",
            accept: Some(b"gzip"),
            coding: None,
            vary: false,
            tag_suffix: "",
        },
        Case {
            path: b"/photo.png",
            accept: Some(b"gzip"),
            coding: None,
            vary: false,
            tag_suffix: "",
        },
        Case {
            path: b"/big.txt",
            accept: Some(b"gzip"),
            coding: None,
            vary: false,
            tag_suffix: "",
        },
        // A precompressed sibling wins over compressing.
        Case {
            path: b"/pre.js",
            accept: Some(b"gzip"),
            coding: Some("gzip"),
            vary: true,
            tag_suffix: "-gz\"",
        },
    ];
    let mut tags = Vec::new();
    for c in cases {
        let name = format!(
            "{} {:?}",
            String::from_utf8_lossy(c.path),
            c.accept.map(String::from_utf8_lossy)
        );
        let r = files.respond(&get(c.path, c.accept));
        assert_eq!(r.status(), 200, "{name}");
        assert_eq!(header(&r, "content-encoding").as_deref(), c.coding, "{name}");
        assert_eq!(header(&r, "vary").is_some(), c.vary, "{name}");
        let etag = header(&r, "etag").unwrap();
        assert!(etag.ends_with(c.tag_suffix) && !etag.starts_with("W/"), "{name}: {etag}");
        let len = r.content_length().unwrap();
        let ct = header(&r, "content-type");
        let got = body(r);
        assert_eq!(got.len() as u64, len, "{name}");
        if c.path == b"/app.js" {
            assert_eq!(ct.as_deref(), Some("text/javascript; charset=utf-8"), "{name}");
            assert_eq!(decode(c.coding, &got), js, "{name}");
            if c.coding.is_some() {
                assert!(got.len() < js.len() / 3, "{name}: {} of {}", got.len(), js.len());
            }
            tags.push(etag);
        }
        if c.path == b"/pre.js" {
            assert_eq!(got, b"PRECOMPRESSED");
        }
    }
    // One tag per representation.
    tags.sort();
    tags.dedup();
    assert_eq!(tags.len(), 4, "{tags:?}");
}

#[test]
fn validators_ranges_and_head_over_the_compressed_bytes() {
    let d = dir("rng");
    let files = files(&d);
    let full = files.respond(&get(b"/app.js", Some(b"gzip")));
    let etag = header(&full, "etag").unwrap();
    let gz = body(full);
    // RFC 9110 §13.1.2: the compressed tag → 304; the identity tag does not match it.
    let inm =
        FileRequest { if_none_match: Some(etag.as_bytes()), ..get(b"/app.js", Some(b"gzip")) };
    assert_eq!(files.respond(&inm).status(), 304);
    let identity_tag = header(&files.respond(&get(b"/app.js", None)), "etag").unwrap();
    let other = FileRequest {
        if_none_match: Some(identity_tag.as_bytes()),
        ..get(b"/app.js", Some(b"gzip"))
    };
    assert_eq!(files.respond(&other).status(), 200);
    // RFC 9110 §14.1.1: ranges count bytes of the selected (compressed) representation.
    let range = FileRequest { range: Some(b"bytes=10-19"), ..get(b"/app.js", Some(b"gzip")) };
    let r = files.respond(&range);
    assert_eq!(r.status(), 206);
    assert_eq!(header(&r, "content-range"), Some(format!("bytes 10-19/{}", gz.len())));
    assert_eq!(header(&r, "content-encoding").as_deref(), Some("gzip"));
    assert_eq!(body(r), &gz[10..20]);
    // If-Range with the compressed tag holds; with the identity tag it does not (§13.1.5).
    let ir = FileRequest { if_range: Some(etag.as_bytes()), ..range };
    assert_eq!(files.respond(&ir).status(), 206);
    let ir = FileRequest { if_range: Some(identity_tag.as_bytes()), ..range };
    assert_eq!(files.respond(&ir).status(), 200);
    // HEAD: the compressed length, no body.
    let head =
        files.respond(&FileRequest { method: Method::Head, ..get(b"/app.js", Some(b"gzip")) });
    assert_eq!(head.content_length(), Some(gz.len() as u64));
    assert!(matches!(head.body(), FileBody::Empty));
}

/// A hot file is compressed once: the second answer shares the first one's bytes.
#[test]
fn compressed_once_then_from_the_cache() {
    let d = dir("once");
    for files in [files(&d), ServeDir::new(&d.0).unwrap().compression(Compression::default())] {
        let ptr = |r: FileReply| match r.into_body() {
            FileBody::Bytes(b) => b.as_ptr(),
            _ => panic!("compressed bodies are in memory"),
        };
        let a = ptr(files.respond(&get(b"/app.js", Some(b"br"))));
        let b = ptr(files.respond(&get(b"/app.js", Some(b"br"))));
        assert_eq!(a, b);
    }
}

/// Regression guard: a file changed in place must never be answered with the compressed copy
/// of its old contents, with or without the open-file cache.
#[test]
fn a_changed_file_is_never_served_stale() {
    let d = dir("stale");
    for ttl in [None, Some(Duration::from_secs(60))] {
        std::fs::write(d.0.join("app.js"), script()).unwrap();
        let files = ServeDir::new(&d.0).unwrap().cache_ttl(ttl).compression(Compression::default());
        // A large file (not held in memory by the open-file cache): served from its descriptor,
        // checked with fstat on each answer.
        let first = files.respond(&get(b"/app.js", Some(b"gzip")));
        let tag1 = header(&first, "etag").unwrap();
        assert_eq!(decode(Some("gzip"), &body(first)), script());
        let mut changed = script();
        changed.extend_from_slice(b"// appended\n");
        std::fs::OpenOptions::new()
            .append(true)
            .open(d.0.join("app.js"))
            .and_then(|mut f| std::io::Write::write_all(&mut f, b"// appended\n"))
            .unwrap();
        let second = files.respond(&get(b"/app.js", Some(b"gzip")));
        assert_ne!(header(&second, "etag").unwrap(), tag1, "{ttl:?}");
        assert_eq!(decode(Some("gzip"), &body(second)), changed, "{ttl:?}");
    }
}

#[test]
fn codings_switched_off() {
    let d = dir("off");
    let only_gzip = Compression::default().level(Coding::Brotli, None).level(Coding::Zstd, None);
    let files = ServeDir::new(&d.0).unwrap().compression(only_gzip);
    let r = files.respond(&get(b"/app.js", Some(b"br, zstd, gzip;q=0.1")));
    assert_eq!(header(&r, "content-encoding").as_deref(), Some("gzip"));
    let r = files.respond(&get(b"/app.js", Some(b"br, zstd")));
    assert_eq!(
        (header(&r, "content-encoding"), header(&r, "vary").as_deref()),
        (None, Some("accept-encoding"))
    );
    let off = ServeDir::new(&d.0).unwrap().compression(Compression::off());
    let r = off.respond(&get(b"/app.js", Some(b"gzip")));
    assert_eq!((header(&r, "content-encoding"), header(&r, "vary")), (None, None));
}
