//! RFC 7541 Appendix C, every example: C.1 (integers) lives in `integer.rs`, C.2–C.6 here,
//! each sequence on one decoder with the table contents and size the RFC prints.

use crate::http2::hpack::{Decoder, Encoder, FieldList};

pub(super) fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

pub(super) fn list(fields: &FieldList) -> Vec<(String, String)> {
    fields
        .iter()
        .map(|f| {
            (
                String::from_utf8_lossy(f.name).into_owned(),
                String::from_utf8_lossy(f.value).into_owned(),
            )
        })
        .collect()
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
}

fn table(d: &Decoder) -> (Vec<(String, String)>, usize) {
    let t = &d.table;
    let entries = (0..t.len())
        .map(|i| {
            let e = t.get(i).unwrap();
            (
                String::from_utf8_lossy(t.name(e)).into_owned(),
                String::from_utf8_lossy(t.value(e)).into_owned(),
            )
        })
        .collect();
    (entries, t.size())
}

struct Step {
    wire: &'static str,
    fields: &'static [(&'static str, &'static str)],
    table: &'static [(&'static str, &'static str)],
    size: usize,
}

fn run(max: usize, steps: &[Step]) {
    let mut d = Decoder::new(max);
    let mut out = FieldList::new(1 << 16);
    for (i, s) in steps.iter().enumerate() {
        d.decode(&hex(s.wire), &mut out).unwrap_or_else(|e| panic!("step {i}: {e:?}"));
        assert_eq!(list(&out), pairs(s.fields), "step {i} fields");
        assert_eq!(table(&d), (pairs(s.table), s.size), "step {i} table");
        assert_eq!(out.malformed(), None);
    }
}

#[test]
fn c2_literal_field_representations() {
    // C.2.1 literal with indexing.
    run(
        4096,
        &[Step {
            wire: "400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572",
            fields: &[("custom-key", "custom-header")],
            table: &[("custom-key", "custom-header")],
            size: 55,
        }],
    );
    // C.2.2 literal without indexing.
    run(
        4096,
        &[Step {
            wire: "040c 2f73 616d 706c 652f 7061 7468",
            fields: &[(":path", "/sample/path")],
            table: &[],
            size: 0,
        }],
    );
    // C.2.3 never indexed: the flag survives decoding.
    run(
        4096,
        &[Step {
            wire: "1008 7061 7373 776f 7264 0673 6563 7265 74",
            fields: &[("password", "secret")],
            table: &[],
            size: 0,
        }],
    );
    let mut d = Decoder::new(4096);
    let mut out = FieldList::new(1 << 16);
    d.decode(&hex("1008 7061 7373 776f 7264 0673 6563 7265 74"), &mut out).unwrap();
    assert!(out.iter().next().unwrap().never_indexed);
    // C.2.4 indexed field.
    run(4096, &[Step { wire: "82", fields: &[(":method", "GET")], table: &[], size: 0 }]);
}

const REQ1: &[(&str, &str)] =
    &[(":method", "GET"), (":scheme", "http"), (":path", "/"), (":authority", "www.example.com")];
const REQ2: &[(&str, &str)] = &[
    (":method", "GET"),
    (":scheme", "http"),
    (":path", "/"),
    (":authority", "www.example.com"),
    ("cache-control", "no-cache"),
];
const REQ3: &[(&str, &str)] = &[
    (":method", "GET"),
    (":scheme", "https"),
    (":path", "/index.html"),
    (":authority", "www.example.com"),
    ("custom-key", "custom-value"),
];
const T1: &[(&str, &str)] = &[(":authority", "www.example.com")];
const T2: &[(&str, &str)] = &[("cache-control", "no-cache"), (":authority", "www.example.com")];
const T3: &[(&str, &str)] = &[
    ("custom-key", "custom-value"),
    ("cache-control", "no-cache"),
    (":authority", "www.example.com"),
];

#[test]
fn c3_requests_without_huffman() {
    run(
        4096,
        &[
            Step {
                wire: "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
                fields: REQ1,
                table: T1,
                size: 57,
            },
            Step { wire: "8286 84be 5808 6e6f 2d63 6163 6865", fields: REQ2, table: T2, size: 110 },
            Step {
                wire: "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
                fields: REQ3,
                table: T3,
                size: 164,
            },
        ],
    );
}

const C4: [&str; 3] = [
    "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff",
    "8286 84be 5886 a8eb 1064 9cbf",
    "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
];

#[test]
fn c4_requests_with_huffman() {
    run(
        4096,
        &[
            Step { wire: C4[0], fields: REQ1, table: T1, size: 57 },
            Step { wire: C4[1], fields: REQ2, table: T2, size: 110 },
            Step { wire: C4[2], fields: REQ3, table: T3, size: 164 },
        ],
    );
}

#[test]
fn c4_is_also_what_our_encoder_writes() {
    let mut e = Encoder::new();
    for (wire, fields) in C4.iter().zip([REQ1, REQ2, REQ3]) {
        let mut dst = vec![];
        e.encode(fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())), &mut dst);
        assert_eq!(dst, hex(wire));
    }
}

const RESP1: &[(&str, &str)] = &[
    (":status", "302"),
    ("cache-control", "private"),
    ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
    ("location", "https://www.example.com"),
];
const RESP2: &[(&str, &str)] = &[
    (":status", "307"),
    ("cache-control", "private"),
    ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
    ("location", "https://www.example.com"),
];
const RESP3: &[(&str, &str)] = &[
    (":status", "200"),
    ("cache-control", "private"),
    ("date", "Mon, 21 Oct 2013 20:13:22 GMT"),
    ("location", "https://www.example.com"),
    ("content-encoding", "gzip"),
    ("set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"),
];
const RT1: &[(&str, &str)] = &[
    ("location", "https://www.example.com"),
    ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
    ("cache-control", "private"),
    (":status", "302"),
];
const RT2: &[(&str, &str)] = &[
    (":status", "307"),
    ("location", "https://www.example.com"),
    ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
    ("cache-control", "private"),
];
const RT3: &[(&str, &str)] = &[
    ("set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"),
    ("content-encoding", "gzip"),
    ("date", "Mon, 21 Oct 2013 20:13:22 GMT"),
];

#[test]
fn c5_responses_without_huffman_evict() {
    run(
        256,
        &[
            Step {
                wire: "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
                fields: RESP1,
                table: RT1,
                size: 222,
            },
            Step { wire: "4803 3330 37c1 c0bf", fields: RESP2, table: RT2, size: 222 },
            Step {
                wire: "88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31",
                fields: RESP3,
                table: RT3,
                size: 215,
            },
        ],
    );
}

#[test]
fn c6_responses_with_huffman_evict() {
    run(
        256,
        &[
            Step {
                wire: "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
                fields: RESP1,
                table: RT1,
                size: 222,
            },
            Step { wire: "4883 640e ffc1 c0bf", fields: RESP2, table: RT2, size: 222 },
            Step {
                wire: "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07",
                fields: RESP3,
                table: RT3,
                size: 215,
            },
        ],
    );
}

#[test]
fn c6_round_trips_through_our_encoder_with_a_256_octet_table() {
    let mut e = Encoder::new();
    e.set_peer_max_table_size(256);
    let mut d = Decoder::new(4096);
    let mut out = FieldList::new(1 << 16);
    for fields in [RESP1, RESP2, RESP3] {
        let mut dst = vec![];
        e.encode(fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())), &mut dst);
        d.decode(&dst, &mut out).unwrap();
        assert_eq!(list(&out), pairs(fields));
    }
    assert_eq!(d.table_max_size(), 256);
}
