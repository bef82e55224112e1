//! QPACK against ls-qpack (the library under aioquic and others, through PyPI's pylsqpack):
//! sections peregrine's encoder writes with its dynamic table decode in ls-qpack to the same
//! fields (all given before the encoder stream, so ls-qpack blocks on them and resumes), its
//! acknowledgments are accepted and cover every insert, and sections
//! ls-qpack encodes with its dynamic table decode in peregrine's decoder.
//!
//! Needs `python3` with `pylsqpack` (`pip install pylsqpack`), hence ignored by default:
//! `cargo test -p peregrine --test qpack_lsqpack -- --ignored`.

use std::io::Write;
use std::process::{Command, Stdio};

use peregrine::http2::hpack::FieldList;
use peregrine::http3::StreamId;
use peregrine::http3::qpack::{Decoder, Encoder, Section};

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

type Fields = Vec<(Vec<u8>, Vec<u8>)>;

/// Requests like a browser's: the same headers, paths and cookies that vary.
fn requests(n: u64) -> Vec<Fields> {
    (0..n)
        .map(|i| {
            let f: [(&str, String); 8] = [
                (":method", if i % 7 == 3 { "POST".into() } else { "GET".into() }),
                (":scheme", "https".into()),
                (":authority", "www.example.com".into()),
                (":path", format!("/assets/{}/app.js?v={}", i % 9, i % 4)),
                ("user-agent", "Mozilla/5.0 (X11; Linux x86_64) peregrine-interop".into()),
                ("accept-language", "en-US,en;q=0.5".into()),
                ("cookie", format!("session={:032x}", i / 5)),
                ("x-request-id", format!("{i}")),
            ];
            f.iter().map(|(n, v)| (n.as_bytes().to_vec(), v.as_bytes().to_vec())).collect()
        })
        .collect()
}

#[test]
#[ignore = "needs python3 with pylsqpack (PyPI)"]
fn both_directions_with_the_dynamic_table() {
    let reqs = requests(60);
    // Ours, encoded as a client would with the peer's settings.
    let mut enc = Encoder::new(4096);
    enc.apply_peer_settings(4096, 16);
    let mut input = String::new();
    let mut encoder_stream = Vec::new();
    for (i, f) in reqs.iter().enumerate() {
        let mut section = Vec::new();
        let stream = StreamId::new(4 * i as u64);
        enc.encode(stream, f.iter().map(|(n, v)| (&n[..], &v[..], false)), &mut section);
        input += &format!("S {} {}\n", stream.get(), hex(&section));
    }
    enc.poll_encoder_stream(&mut encoder_stream);
    assert!(enc.insert_count() > 8, "the dynamic table is used");
    input += &format!("E {}\n", hex(&encoder_stream));
    // Theirs: the same requests for ls-qpack to encode.
    for (i, f) in reqs.iter().enumerate() {
        let pairs: Vec<String> = f.iter().map(|(n, v)| format!("{}:{}", hex(n), hex(v))).collect();
        input += &format!("F {} {}\n", 4 * i, pairs.join(" "));
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/lsqpack_peer.py");
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the ls-qpack peer failed");
    let out = String::from_utf8(out.stdout).unwrap();

    let mut dec = Decoder::new(4096, 16);
    let mut list = FieldList::new(1 << 16);
    let mut decoded_by_them = 0;
    let mut ours_decoded = 0;
    for line in out.lines() {
        let mut parts = line.split(' ');
        match parts.next().unwrap() {
            "D" => {
                let stream: usize = parts.next().unwrap().parse().unwrap();
                let got: Fields = parts
                    .filter(|p| !p.is_empty())
                    .map(|p| {
                        let (n, v) = p.split_once(':').unwrap();
                        (unhex(n), unhex(v))
                    })
                    .collect();
                assert_eq!(got, reqs[stream / 4], "ls-qpack decoded stream {stream}");
                decoded_by_them += 1;
            }
            "A" => {
                enc.feed_decoder_stream(&unhex(parts.next().unwrap_or(""))).unwrap();
                assert_eq!(enc.known_received_count(), enc.insert_count());
            }
            "E" => {
                let bytes = unhex(parts.next().unwrap_or(""));
                assert!(bytes.len() > 100, "ls-qpack used its dynamic table");
                dec.feed_encoder_stream(&bytes).unwrap();
            }
            "S" => {
                // After ls-qpack's encoder stream (the line before them).
                let stream: u64 = parts.next().unwrap().parse().unwrap();
                let section = unhex(parts.next().unwrap());
                let s = StreamId::new(stream);
                assert_eq!(dec.decode_section(s, &section, &mut list), Ok(Section::Decoded));
                let got: Fields =
                    list.iter().map(|f| (f.name.to_vec(), f.value.to_vec())).collect();
                assert_eq!(got, reqs[stream as usize / 4], "peregrine decoded stream {stream}");
                ours_decoded += 1;
            }
            other => panic!("unexpected line {other}"),
        }
    }
    assert_eq!(decoded_by_them, reqs.len());
    assert_eq!(ours_decoded, reqs.len());
}
