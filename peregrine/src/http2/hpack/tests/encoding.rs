//! Encoder behaviour: the indexing policy, Huffman choice, size updates, round trips.

use super::appendix_c::{hex, list};
use crate::http2::hpack::{Decoder, Encoder, FieldList, StaticName};

fn enc(e: &mut Encoder, fields: &[(&[u8], &[u8])]) -> Vec<u8> {
    let mut dst = vec![];
    e.encode(fields.iter().copied(), &mut dst);
    dst
}

#[test]
fn policy_never_indexes_credentials_and_short_cookies() {
    let mut e = Encoder::new();
    let mut d = Decoder::new(4096);
    let mut out = FieldList::new(1 << 16);
    let fields: [(&[u8], &[u8]); 4] = [
        (b"authorization", b"Bearer abcdefghijklmnopqrstuvwxyz"),
        (b"cookie", b"id=42"),
        (b"cookie", b"session=0123456789abcdefghijklmnop"),
        (b"proxy-authorization", b"Basic Zm9vOmJhcg=="),
    ];
    let wire = enc(&mut e, &fields);
    d.decode(&wire, &mut out).unwrap();
    let never: Vec<bool> = out.iter().map(|f| f.never_indexed).collect();
    assert_eq!(never, [true, true, false, true]);
    assert_eq!(d.table_len(), 1, "only the long cookie is indexed");
    // Sent again: the credentials are literals again, the long cookie one octet.
    let again = enc(&mut e, &fields);
    assert!(again.contains(&0xbe));
    // never_indexed() marks any field.
    let mut dst = vec![];
    e.block(&mut dst).never_indexed(b"x-secret", b"1");
    assert_eq!(dst[0], 0x10);
    d.decode(&dst, &mut out).unwrap();
    assert_eq!(list(&out), [("x-secret".into(), "1".into())]);
    assert!(out.iter().next().unwrap().never_indexed);
}

#[test]
fn policy_does_not_index_per_message_values() {
    let mut e = Encoder::new();
    for (name, value) in [
        (&b":path"[..], &b"/a/b"[..]),
        (b"content-length", b"123"),
        (b"etag", b"\"x\""),
        (b"location", b"/x"),
        (b"set-cookie", b"a=b"),
        (b"age", b"1"),
        (b"if-none-match", b"\"y\""),
        (b"if-modified-since", b"Mon, 21 Oct 2013 20:13:21 GMT"),
    ] {
        let wire = enc(&mut e, &[(name, value)]);
        assert_eq!(wire[0] & 0xf0, 0x00, "{}", String::from_utf8_lossy(name));
    }
    assert_eq!(e.table_len(), 0);
    // A field bigger than 3/4 of the table is not indexed either.
    let big = vec![b'a'; 3100];
    let wire = enc(&mut e, &[(b"x-big", &big)]);
    assert_eq!(wire[0], 0x00);
    // Others are.
    let wire = enc(&mut e, &[(b"user-agent", b"curl/8"), (b"x-custom", b"1")]);
    assert_eq!(wire[0], 0x40 | StaticName::USER_AGENT.index());
    assert_eq!(e.table_len(), 2);
    assert_eq!(
        enc(&mut e, &[(b"user-agent", b"curl/8"), (b"x-custom", b"1"), (b"x-custom", b"2")]),
        hex("bf be 7e 01 32")
    );
}

#[test]
fn huffman_only_when_shorter() {
    let mut e = Encoder::new();
    // "www.example.com" shrinks; bytes >= 0x80 grow (20+ bit codes), so they go raw.
    assert_eq!(enc(&mut e, &[(b"x", b"www.example.com")])[3], 0x8c);
    let wire = enc(&mut e, &[(b"y", b"\xff\xfe\xfd")]);
    assert_eq!(&wire[3..], b"\x03\xff\xfe\xfd");
}

#[test]
fn peer_table_size_is_honoured_and_ours_capped() {
    let mut e = Encoder::new();
    let mut d = Decoder::new(65536);
    let mut out = FieldList::new(1 << 16);
    d.decode(&enc(&mut e, &[(b"x-a", b"1"), (b"x-b", b"2")]), &mut out).unwrap();
    // A larger peer setting: we stay at our cap and say nothing.
    e.set_peer_max_table_size(65536);
    assert_eq!(e.table_max_size(), Encoder::TABLE_CAP);
    assert_eq!(enc(&mut e, &[]), b"");
    // Smaller: one update, and the table shrinks now (36 octets: one entry).
    e.set_peer_max_table_size(36);
    assert_eq!(e.table_len(), 1);
    let wire = enc(&mut e, &[(b"x-a", b"1")]);
    assert_eq!(wire[..1], hex("3f")[..]);
    assert_eq!(wire[1], 36 - 31);
    d.decode(&wire, &mut out).unwrap();
    assert_eq!(d.table_max_size(), 36);
    // Down to 0 and back up before a block: both updates, smallest first.
    e.set_peer_max_table_size(0);
    e.set_peer_max_table_size(4096);
    let wire = enc(&mut e, &[(b"x-a", b"1")]);
    assert_eq!(wire[..4], hex("20 3f e1 1f")[..]);
    d.decode(&wire, &mut out).unwrap();
    assert_eq!(list(&out), [("x-a".into(), "1".into())]);
    assert_eq!(d.table_max_size(), 4096);
}

#[test]
fn known_name_shortcuts() {
    let mut e = Encoder::new();
    let mut dst = vec![];
    let mut b = e.block(&mut dst);
    b.status(200);
    b.status(404);
    b.status(302);
    b.status(302);
    b.content_length(0);
    b.content_length(18_446_744_073_709_551_615);
    b.known(StaticName::METHOD, b"POST");
    b.known(StaticName::CONTENT_TYPE, b"text/html");
    let mut d = Decoder::new(4096);
    let mut out = FieldList::new(1 << 16);
    d.decode(&dst, &mut out).unwrap();
    let got: Vec<(String, String)> = list(&out);
    let want = [
        (":status", "200"),
        (":status", "404"),
        (":status", "302"),
        (":status", "302"),
        ("content-length", "0"),
        ("content-length", "18446744073709551615"),
        (":method", "POST"),
        ("content-type", "text/html"),
    ];
    assert_eq!(got, want.map(|(n, v)| (n.to_string(), v.to_string())));
    assert_eq!(dst[..2], [0x88, 0x8d]);
    let mut dst = vec![];
    e.block(&mut dst).known(StaticName::METHOD, b"POST");
    assert_eq!(dst, [0x83]);
}

/// xorshift: deterministic pseudo-random inputs without a dependency.
fn rng(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

#[test]
fn random_lists_round_trip_through_table_churn() {
    let names: [&[u8]; 10] = [
        b":path",
        b"cookie",
        b"x-a",
        b"x-b",
        b"accept",
        b"authorization",
        b"user-agent",
        b"content-length",
        b"x-long-name-for-a-custom-field",
        b":status",
    ];
    let mut seed = 77u64;
    let mut e = Encoder::new();
    let mut d = Decoder::new(4096);
    let mut out = FieldList::new(1 << 20);
    for round in 0..2000 {
        if round % 300 == 299 {
            let n = [0, 100, 4096, 1000, 65536][(round / 300) % 5];
            e.set_peer_max_table_size(n);
        }
        let n = (rng(&mut seed) % 12) as usize;
        let fields: Vec<(Vec<u8>, Vec<u8>)> = (0..n)
            .map(|_| {
                let name = names[(rng(&mut seed) % 10) as usize].to_vec();
                let len =
                    (rng(&mut seed) % if rng(&mut seed) % 9 == 0 { 3000 } else { 40 }) as usize;
                let value = (0..len)
                    .map(|_| b"abc012/=; %XYZ\x80\xff"[(rng(&mut seed) % 16) as usize])
                    .collect();
                (name, value)
            })
            .collect();
        let mut dst = vec![];
        e.encode(fields.iter().map(|(n, v)| (&n[..], &v[..])), &mut dst);
        d.decode(&dst, &mut out).unwrap();
        let got: Vec<(Vec<u8>, Vec<u8>)> =
            out.iter().map(|f| (f.name.to_vec(), f.value.to_vec())).collect();
        assert_eq!(got, fields, "round {round}");
    }
}
