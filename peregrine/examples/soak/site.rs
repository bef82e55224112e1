//! The served directory (files of known content) and the TLS certificate, written by `soak gen`
//! and read back by `soak run`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use crate::ctx::Rng;

/// Name, size; `app.js` is text, so the server compresses it on the fly.
pub const FILES: [(&str, usize); 4] =
    [("small.txt", 2 << 10), ("mid.bin", 64 << 10), ("big.bin", 512 << 10), ("app.js", 96 << 10)];

/// A file for a request, weighted so most are small: small 50%, app.js 20%, mid 25%, big 5%.
pub fn pick(rng: &mut Rng) -> &'static str {
    match rng.below(20) {
        0..=9 => "small.txt",
        10..=13 => "app.js",
        14..=18 => "mid.bin",
        _ => "big.bin",
    }
}

fn contents(name: &str, size: usize) -> Vec<u8> {
    let mut rng = Rng::new(size as u64 ^ 0x50a4);
    if name.ends_with(".bin") {
        return rng.bytes(size);
    }
    let words = ["peregrine", "soak", "falcon", "request", "verified", "byte", "function", "let"];
    let mut out = Vec::with_capacity(size + 16);
    while out.len() < size {
        out.extend_from_slice(words[rng.below(words.len())].as_bytes());
        out.push(if rng.below(12) == 0 { b'\n' } else { b' ' });
    }
    out.truncate(size);
    out
}

pub fn generate(dir: &Path) -> std::io::Result<()> {
    let site = dir.join("site");
    std::fs::create_dir_all(&site)?;
    for (name, size) in FILES {
        std::fs::write(site.join(name), contents(name, size))?;
    }
    let cert = rcgen::generate_simple_self_signed(["localhost".to_owned(), "127.0.0.1".to_owned()])
        .map_err(std::io::Error::other)?;
    std::fs::write(dir.join("cert.pem"), cert.cert.pem())?;
    std::fs::write(dir.join("key.pem"), cert.signing_key.serialize_pem())?;
    Ok(())
}

/// The files as served, read back from `DIR/site` (checked against what `gen` writes).
pub fn load(dir: &Path) -> std::io::Result<HashMap<&'static str, Arc<Vec<u8>>>> {
    let mut files = HashMap::new();
    for (name, size) in FILES {
        let got = std::fs::read(dir.join("site").join(name))?;
        if got != contents(name, size) {
            return Err(std::io::Error::other(format!("{name} is not what `soak gen` wrote")));
        }
        files.insert(name, Arc::new(got));
    }
    Ok(files)
}
