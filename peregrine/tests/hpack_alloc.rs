//! Proves HPACK's zero-allocation claims: once a `FieldList` has grown to the largest list
//! and the dynamic table holds its two buffers (allocated at its first insert), decoding and
//! encoding whole corpus stories allocates nothing more.

#[path = "support/thread_allocs.rs"]
mod thread_allocs;

#[path = "support/hpack_corpus.rs"]
mod hpack_corpus;

use peregrine::http2::hpack::{Decoder, Encoder, FieldList};
use thread_allocs::allocations;

#[global_allocator]
static GLOBAL: thread_allocs::Counting = thread_allocs::Counting;

/// Decodes every case of `blocks` on a fresh decoder into `out`; returns the allocations made
/// during blocks after the first.
fn decode_story(blocks: &[Vec<u8>], out: &mut FieldList) -> (usize, usize) {
    let mut d = Decoder::new(4096);
    let before = allocations();
    d.decode(&blocks[0], out).unwrap();
    let first = allocations() - before;
    let before = allocations();
    for b in &blocks[1..] {
        d.decode(b, out).unwrap();
    }
    (first, allocations() - before)
}

#[test]
fn decoding_allocates_nothing_per_block() {
    let mut out = FieldList::new(1 << 20);
    for story in hpack_corpus::encoded_stories("nghttp2") {
        let blocks: Vec<Vec<u8>> = story.cases.into_iter().map(|c| c.wire).collect();
        // Warm-up: the list grows to the story's largest block.
        decode_story(&blocks, &mut out);
        // A fresh decoder: its first block allocates the table's ring and bytes, then none.
        let (first, rest) = decode_story(&blocks, &mut out);
        assert!(first <= 2, "story {}: first block {first} allocations", story.number);
        assert_eq!(rest, 0, "story {}: later blocks allocated", story.number);
    }
}

#[test]
fn encoding_allocates_nothing_per_block() {
    let mut dst = Vec::with_capacity(1 << 16);
    for (s, story) in hpack_corpus::raw_stories().iter().enumerate() {
        let mut e = Encoder::new();
        let before = allocations();
        for (i, list) in story.iter().enumerate() {
            if i == 1 {
                assert!(allocations() - before <= 2, "story {s}: first block");
            }
            let before = allocations();
            dst.clear();
            e.encode(list.iter().map(|(n, v)| (&n[..], &v[..])), &mut dst);
            if i > 0 {
                assert_eq!(allocations() - before, 0, "story {s} case {i}");
            }
        }
        // The known-name shortcuts too.
        let before = allocations();
        dst.clear();
        let mut b = e.block(&mut dst);
        b.status(302);
        b.content_length(1234);
        b.known(peregrine::http2::hpack::StaticName::SERVER, b"peregrine");
        assert_eq!(allocations() - before, 0, "story {s}: shortcuts");
    }
}
