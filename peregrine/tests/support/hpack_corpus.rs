//! Reader of the hpack-test-case corpus in `tests/data/hpack/` (see its README), shared by
//! the corpus test and the hpack bench: `#[path = ".../support/hpack_corpus.rs"] mod hpack_corpus;`.
#![allow(dead_code)]

use std::io::Read;

/// A field list: (name, value) pairs.
pub type List = Vec<(Vec<u8>, Vec<u8>)>;

/// One encoded case: the table size in force from it on (if given) and the block.
pub struct Case {
    pub table_size: Option<usize>,
    pub wire: Vec<u8>,
}

/// One encoder's story: which raw-data story it encodes, and its cases.
pub struct Story {
    pub number: usize,
    pub cases: Vec<Case>,
}

/// Encoder folders, in the corpus's naming.
pub const ENCODERS: [&str; 6] = [
    "nghttp2",
    "go-hpack",
    "python-hpack",
    "swift-nio-hpack-huffman",
    "nghttp2-change-table-size",
    "nghttp2-16384-4096",
];

fn data(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/data/hpack/{name}.bin.gz", env!("CARGO_MANIFEST_DIR"));
    let file = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(&file[..]).read_to_end(&mut out).expect("gzip");
    out
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn varint(&mut self) -> usize {
        let (mut v, mut shift) = (0usize, 0);
        loop {
            let b = self.0[0];
            self.0 = &self.0[1..];
            v |= usize::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return v;
            }
            shift += 7;
        }
    }
    fn bytes(&mut self) -> Vec<u8> {
        let n = self.varint();
        let (b, rest) = self.0.split_at(n);
        self.0 = rest;
        b.to_vec()
    }
}

/// The 32 raw-data stories: per story, per case, the field list.
pub fn raw_stories() -> Vec<Vec<List>> {
    let buf = data("headers");
    let mut r = Reader(&buf);
    (0..32)
        .map(|_| {
            let cases = r.varint();
            (0..cases)
                .map(|_| {
                    let fields = r.varint();
                    (0..fields).map(|_| (r.bytes(), r.bytes())).collect()
                })
                .collect()
        })
        .collect()
}

/// One encoder's stories.
pub fn encoded_stories(encoder: &str) -> Vec<Story> {
    let buf = data(encoder);
    let mut r = Reader(&buf);
    let stories = r.varint();
    (0..stories)
        .map(|_| {
            let number = r.varint();
            let cases = r.varint();
            let cases = (0..cases)
                .map(|_| {
                    let size = r.varint();
                    Case { table_size: size.checked_sub(1), wire: r.bytes() }
                })
                .collect();
            Story { number, cases }
        })
        .collect()
}
