#![no_main]
//! `ServeDir::respond` with every option on (compression, CORS, Basic auth, SPA, a 404 page,
//! listings) on arbitrary request fields: never panics, never answers with a file outside the
//! root, and an in-memory body always has the length the answer announces.
use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use peregrine::Method;
use peregrine::files::{BasicAuth, Compression, Cors, FileBody, FileRequest, ServeDir};

const SECRET: &[u8] = b"OUTSIDE-THE-ROOT";

fn files() -> &'static ServeDir {
    static FILES: OnceLock<ServeDir> = OnceLock::new();
    FILES.get_or_init(|| {
        let base: PathBuf = std::env::temp_dir().join(format!("peregrine-fuzz-files-{}", std::process::id()));
        let root = base.join("root");
        std::fs::create_dir_all(root.join("docs/sub")).unwrap();
        std::fs::write(base.join("secret.txt"), SECRET).unwrap();
        std::fs::write(root.join("index.html"), b"<div id=app>").unwrap();
        std::fs::write(root.join("404.html"), b"gone").unwrap();
        std::fs::write(root.join("app.js"), "let x = 1;\n".repeat(200)).unwrap();
        std::fs::write(root.join("docs/a.txt"), b"a").unwrap();
        std::fs::write(root.join(".env"), SECRET).unwrap();
        let _ = std::os::unix::fs::symlink(base.join("secret.txt"), root.join("leak.txt"));
        ServeDir::new(&root)
            .unwrap()
            .compression(Compression::default())
            .cors(Cors::origins(["https://a.example"]))
            .basic_auth(BasicAuth::new("u", "p"))
            .spa(true)
            .not_found_page(root.join("404.html"))
            .unwrap()
    })
}

fuzz_target!(|data: &[u8]| {
    // Fields separated by 0xFF; the first byte picks the method.
    let Some((&m, rest)) = data.split_first() else { return };
    let method = [Method::Get, Method::Head, Method::Options, Method::Post][usize::from(m & 3)];
    let mut f = rest.split(|&b| b == 0xff);
    let mut next = || f.next().filter(|v| !v.is_empty());
    let path = next().unwrap_or(b"/");
    let req = FileRequest {
        query: next(),
        accept_encoding: next(),
        // Half the inputs carry the right credentials, so the answers past auth are reached.
        authorization: if m & 4 == 0 { Some(b"Basic dTpw") } else { next() },
        origin: next(),
        access_control_request_method: next(),
        access_control_request_headers: next(),
        accept: next(),
        range: next(),
        if_none_match: next(),
        if_range: next(),
        ..FileRequest::new(method, path)
    };
    let reply = files().respond(&req);
    let status = reply.status();
    assert!((200..600).contains(&status));
    let len = reply.content_length();
    match reply.into_body() {
        FileBody::Bytes(b) => {
            assert_eq!(Some(b.len() as u64), len);
            assert!(!b.windows(SECRET.len()).any(|w| w == SECRET));
        }
        FileBody::File(mut span) => {
            while let Ok(Some(chunk)) = span.read_chunk(1 << 16) {
                assert!(!chunk.windows(SECRET.len()).any(|w| w == SECRET));
            }
        }
        FileBody::Empty => {}
    }
});
