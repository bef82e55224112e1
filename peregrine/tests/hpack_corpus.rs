//! The hpack-test-case corpus (tests/data/hpack, MIT; see its README) against our HPACK codec:
//!
//! - every story of every encoder's folder decodes, case after case on one decoder, to exactly
//!   the raw-data header list of that story (table size changes applied as the corpus says);
//! - our encoding of every raw-data story decodes back to the same lists with our decoder and
//!   with nghttp2's (through libnghttp2-sys), and stays within 2 % of nghttp2's output bytes.

#[path = "support/hpack_corpus.rs"]
mod hpack_corpus;
#[path = "support/nghttp2_hd.rs"]
mod nghttp2_hd;

use hpack_corpus::{ENCODERS, List, encoded_stories, raw_stories};
use peregrine::http2::hpack::{Decoder, Encoder, FieldList};

fn fields(list: &FieldList) -> List {
    list.iter().map(|f| (f.name.to_vec(), f.value.to_vec())).collect()
}

#[test]
fn every_encoders_stories_decode_to_the_raw_lists() {
    let raw = raw_stories();
    assert_eq!(raw.iter().map(Vec::len).sum::<usize>(), 3384);
    let mut out = FieldList::new(1 << 20);
    for encoder in ENCODERS {
        let stories = encoded_stories(encoder);
        assert!(stories.len() >= 31, "{encoder}: {} stories", stories.len());
        let mut cases = 0;
        for story in &stories {
            let mut d = Decoder::new(4096);
            let mut setting = 4096;
            for (i, case) in story.cases.iter().enumerate() {
                if let Some(size) = case.table_size.filter(|&s| s != setting) {
                    d.set_max_table_size(size);
                    setting = size;
                }
                d.decode(&case.wire, &mut out)
                    .unwrap_or_else(|e| panic!("{encoder} story {} case {i}: {e:?}", story.number));
                assert!(!out.too_large());
                assert_eq!(
                    fields(&out),
                    raw[story.number][i],
                    "{encoder} story {} case {i}",
                    story.number
                );
                cases += 1;
            }
        }
        assert!(cases >= 3267, "{encoder}: {cases} cases");
    }
}

#[test]
fn our_encoding_of_raw_data_decodes_with_ours_and_nghttp2() {
    let raw = raw_stories();
    let mut out = FieldList::new(1 << 20);
    let (mut ours_bytes, mut ng_bytes) = (0usize, 0usize);
    let mut nvs = Vec::new();
    for (s, story) in raw.iter().enumerate() {
        let mut enc = Encoder::new();
        let mut dec = Decoder::new(4096);
        let mut ng_inflate = nghttp2_hd::Inflater::new();
        let mut ng_deflate = nghttp2_hd::Deflater::new();
        for (i, list) in story.iter().enumerate() {
            let mut block = Vec::new();
            enc.encode(list.iter().map(|(n, v)| (&n[..], &v[..])), &mut block);
            ours_bytes += block.len();
            dec.decode(&block, &mut out).unwrap_or_else(|e| panic!("story {s} case {i}: {e:?}"));
            assert_eq!(&fields(&out), list, "ours: story {s} case {i}");
            let mut theirs = Vec::new();
            assert!(
                ng_inflate.inflate(&block, |n, v| theirs.push((n.to_vec(), v.to_vec()))),
                "nghttp2 refused story {s} case {i}"
            );
            assert_eq!(&theirs, list, "nghttp2: story {s} case {i}");

            let pairs: Vec<(&[u8], &[u8])> = list.iter().map(|(n, v)| (&n[..], &v[..])).collect();
            let mut ng_block = Vec::new();
            ng_deflate.deflate(&pairs, &mut nvs, &mut ng_block);
            ng_bytes += ng_block.len();
        }
    }
    let ratio = ours_bytes as f64 / ng_bytes as f64;
    println!(
        "raw-data encoded: peregrine {ours_bytes} bytes, nghttp2 {ng_bytes} bytes, ratio {ratio:.4}"
    );
    assert!(ratio <= 1.02, "our blocks are {ratio:.4}x nghttp2's");
}

/// Every story of every encoder, each block arriving twice: where the decoder says the repeat
/// can be replayed, replaying it gives the list and the table that decoding it again gives.
/// The later blocks of the story, decoded on both, show the tables in step (their indices
/// now point at doubled entries, so they may decode to other lists or fail: the same way on
/// both).
#[test]
fn a_repeated_block_replayed_decodes_as_decoded_again() {
    let (mut replayed_out, mut decoded_out) = (FieldList::new(1 << 20), FieldList::new(1 << 20));
    let mut replays = 0;
    let mut stories = 0;
    for encoder in ENCODERS {
        for story in encoded_stories(encoder) {
            stories += 1;
            let (mut replayed, mut decoded) = (Decoder::new(4096), Decoder::new(4096));
            'cases: for (i, case) in story.cases.iter().enumerate() {
                if let Some(size) = case.table_size {
                    replayed.set_max_table_size(size);
                    decoded.set_max_table_size(size);
                }
                for arrival in 0..2 {
                    let at = format!("{encoder} story {} case {i} arrival {arrival}", story.number);
                    let theirs = decoded.decode(&case.wire, &mut decoded_out);
                    if arrival == 1 && replayed.replays() {
                        replays += 1;
                        replayed.replay(&replayed_out);
                        assert!(theirs.is_ok(), "{at}: replayed, but decoding fails");
                    } else {
                        let ours = replayed.decode(&case.wire, &mut replayed_out);
                        assert_eq!(ours.is_ok(), theirs.is_ok(), "{at}");
                        if ours.is_err() {
                            break 'cases;
                        }
                    }
                    assert_eq!(fields(&replayed_out), fields(&decoded_out), "{at}");
                    assert_eq!(replayed.table_len(), decoded.table_len(), "{at}");
                }
            }
        }
    }
    // At least every story's first block: the table is empty, so nothing refers to it.
    assert!(replays >= stories, "{replays} replays in {stories} stories");
    println!("{replays} replays in {stories} stories");
}
