#![no_main]
//! Arbitrary field lists → our encoder → our decoder → the same lists, over several blocks on
//! one connection with peer table size changes between them. Names are lowercased (the
//! encoder's callers guarantee lowercase names); values are any bytes. Lossless, and the
//! never-indexed fields arrive marked as such.
use libfuzzer_sys::fuzz_target;
use peregrine::http2::hpack::{Decoder, Encoder, FieldList};

fuzz_target!(|data: &[u8]| {
    let mut encoder = Encoder::new();
    let mut decoder = Decoder::new(4096);
    let mut list = FieldList::new(usize::MAX);
    let mut dst = Vec::new();
    // Blocks separated by 0xff; fields by 0xfe; name and value by 0xfd. A block starting
    // with 0xfc first sets the peer's table size from its next byte.
    for block in data.split(|&b| b == 0xff) {
        let block = match block {
            [0xfc, size, rest @ ..] => {
                encoder.set_peer_max_table_size(usize::from(*size) * 20);
                rest
            }
            _ => block,
        };
        let mut fields: Vec<(Vec<u8>, Vec<u8>, bool)> = Vec::new();
        for field in block.split(|&b| b == 0xfe).filter(|f| !f.is_empty()) {
            let mut parts = field.splitn(2, |&b| b == 0xfd);
            let mut name = parts.next().unwrap_or_default().to_ascii_lowercase();
            // Short names map onto static ones, so the known-name paths run too.
            if let [k] = name[..] {
                const NAMES: [&[u8]; 8] = [
                    b":method",
                    b":path",
                    b":status",
                    b"cookie",
                    b"authorization",
                    b"content-length",
                    b"user-agent",
                    b"accept",
                ];
                name = NAMES[usize::from(k) % 8].to_vec();
            }
            let value = parts.next().unwrap_or_default().to_vec();
            let sensitive = name.first() == Some(&b'!');
            fields.push((name, value, sensitive));
        }
        dst.clear();
        let mut b = encoder.block(&mut dst);
        for (n, v, sensitive) in &fields {
            if *sensitive { b.never_indexed(n, v) } else { b.field(n, v) }
        }
        decoder.decode(&dst, &mut list).expect("our decoder reads our encoder");
        let got: Vec<(&[u8], &[u8])> = list.iter().map(|f| (f.name, f.value)).collect();
        let want: Vec<(&[u8], &[u8])> = fields.iter().map(|(n, v, _)| (&n[..], &v[..])).collect();
        assert_eq!(got, want);
        for (f, (_, _, sensitive)) in list.iter().zip(&fields) {
            assert!(!sensitive || f.never_indexed);
        }
        assert_eq!(decoder.table_len(), encoder.table_len(), "tables in step");
    }
});
