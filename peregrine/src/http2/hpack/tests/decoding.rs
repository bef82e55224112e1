//! Decoder behaviour beyond Appendix C: size updates (§4.2), errors, §8.2.1 checks, known
//! names, the list budget.

use super::appendix_c::{hex, list};
use crate::http2::hpack::{DecodeError, Decoder, FieldError, FieldList, StaticName};

fn decode(d: &mut Decoder, wire: &[u8]) -> Result<FieldList, DecodeError> {
    let mut out = FieldList::new(1 << 16);
    d.decode(wire, &mut out).map(|()| out)
}

/// A literal with incremental indexing and a literal name (no Huffman).
fn lit(name: &[u8], value: &[u8]) -> Vec<u8> {
    let mut v = vec![0x40, name.len() as u8];
    v.extend_from_slice(name);
    v.push(value.len() as u8);
    v.extend_from_slice(value);
    v
}

struct Case {
    name: &'static str,
    wire: &'static str,
    expect: Result<(), DecodeError>,
}

#[test]
fn decode_errors() {
    let cases = [
        Case { name: "index 0", wire: "80", expect: Err(DecodeError::InvalidIndex) },
        Case {
            name: "index past the static table, empty dynamic table",
            wire: "be",
            expect: Err(DecodeError::InvalidIndex),
        },
        Case {
            name: "literal name index past the tables",
            wire: "7f00 0161",
            expect: Err(DecodeError::InvalidIndex),
        },
        Case { name: "truncated index", wire: "ff", expect: Err(DecodeError::Truncated) },
        Case { name: "truncated string length", wire: "40", expect: Err(DecodeError::Truncated) },
        Case {
            name: "string longer than the block",
            wire: "4005 6162",
            expect: Err(DecodeError::Truncated),
        },
        Case { name: "value missing", wire: "4001 61", expect: Err(DecodeError::Truncated) },
        Case {
            name: "integer overflow",
            wire: "ff ff ff ff ff 7f",
            expect: Err(DecodeError::IntegerOverflow),
        },
        Case {
            name: "string length overflow",
            wire: "40 7f ff ff ff ff 7f",
            expect: Err(DecodeError::IntegerOverflow),
        },
        Case {
            name: "Huffman EOS",
            wire: "4084 ffff ffff 0161",
            expect: Err(DecodeError::HuffmanEos),
        },
        Case {
            name: "Huffman padding too long",
            wire: "4082 1fff 0161",
            expect: Err(DecodeError::HuffmanPaddingTooLong),
        },
        Case {
            name: "Huffman padding not ones",
            wire: "4081 18 0161",
            expect: Err(DecodeError::HuffmanPaddingNotOnes),
        },
        Case {
            name: "Huffman error in an unstored value",
            wire: "0001 61 81 18",
            expect: Err(DecodeError::HuffmanPaddingNotOnes),
        },
        Case {
            name: "size update after a field",
            wire: "82 3f e1 1f",
            expect: Err(DecodeError::SizeUpdateAfterField),
        },
        Case {
            name: "size update above the setting",
            wire: "3f e2 1f",
            expect: Err(DecodeError::SizeUpdateTooLarge),
        },
        Case {
            name: "three size updates",
            wire: "20 20 20 82",
            expect: Err(DecodeError::TooManySizeUpdates),
        },
        Case { name: "two size updates", wire: "20 3f e1 1f 82", expect: Ok(()) },
        Case { name: "size update to the setting", wire: "3f e1 1f", expect: Ok(()) },
        Case { name: "empty block", wire: "", expect: Ok(()) },
    ];
    for c in &cases {
        let mut d = Decoder::new(4096);
        assert_eq!(decode(&mut d, &hex(c.wire)).map(|_| ()), c.expect, "{}", c.name);
    }
}

#[test]
fn size_updates_follow_the_setting() {
    let mut d = Decoder::new(4096);
    decode(&mut d, &lit(b"a", b"1")).unwrap();
    decode(&mut d, &lit(b"b", b"2")).unwrap();
    assert_eq!(d.table_len(), 2);
    // Our setting drops to 40 (one 34-octet entry): the next block must start with an update.
    d.set_max_table_size(40);
    assert_eq!(decode(&mut d, &hex("82")).map(|_| ()), Err(DecodeError::MissingSizeUpdate));

    let mut d = Decoder::new(4096);
    decode(&mut d, &lit(b"a", b"1")).unwrap();
    decode(&mut d, &lit(b"b", b"2")).unwrap();
    d.set_max_table_size(40);
    assert_eq!(
        decode(&mut d, &hex("3f 0a 82")).map(|_| ()),
        Err(DecodeError::SizeUpdateTooLarge),
        "41 > 40"
    );
    let mut d = Decoder::new(4096);
    decode(&mut d, &lit(b"a", b"1")).unwrap();
    decode(&mut d, &lit(b"b", b"2")).unwrap();
    d.set_max_table_size(40);
    let out = decode(&mut d, &hex("3f 09 be")).unwrap(); // update to 40, then index 62
    assert_eq!(list(&out), [("b".into(), "2".into())]);
    assert_eq!((d.table_len(), d.table_max_size()), (1, 40));
    // The requirement is met; later blocks need no update.
    decode(&mut d, &hex("be")).unwrap();

    // Shrink then grow before a block: the update must reach the smallest (§4.2).
    let mut d = Decoder::new(4096);
    d.set_max_table_size(100);
    d.set_max_table_size(4096);
    assert_eq!(
        decode(&mut d, &hex("3f e1 1f 82")).map(|_| ()),
        Err(DecodeError::MissingSizeUpdate)
    );
    let mut d = Decoder::new(4096);
    d.set_max_table_size(100);
    d.set_max_table_size(4096);
    decode(&mut d, &hex("3f 45 3f e1 1f 82")).unwrap();
    // A raised setting needs no update; the peer may grow the table to it.
    let mut d = Decoder::new(4096);
    d.set_max_table_size(8192);
    decode(&mut d, &hex("82")).unwrap();
    decode(&mut d, &hex("3f e1 3f 82")).unwrap();
    assert_eq!(d.table_max_size(), 8192);
    // Size 0 empties the table.
    decode(&mut d, &lit(b"a", b"1")).unwrap();
    decode(&mut d, &hex("20")).unwrap();
    assert_eq!(d.table_len(), 0);
    assert_eq!(decode(&mut d, &hex("be")).map(|_| ()), Err(DecodeError::InvalidIndex));
}

#[test]
fn an_entry_larger_than_the_table_empties_it() {
    let mut d = Decoder::new(64);
    decode(&mut d, &lit(b"a", b"1")).unwrap();
    assert_eq!(d.table_len(), 1);
    let big = lit(b"name", &[b'v'; 40]); // 4 + 40 + 32 > 64
    let out = decode(&mut d, &big).unwrap();
    assert_eq!(out.len(), 1, "still a field of the list");
    assert_eq!(d.table_len(), 0);
    // A literal whose name refers to the entry it evicts (§4.4): the name survives.
    let mut d = Decoder::new(70);
    decode(&mut d, &lit(b"aaaa", b"1")).unwrap(); // 37 octets
    let out = decode(&mut d, &hex("7e 01 32")).unwrap(); // name = index 62 ("aaaa"), value "2"
    assert_eq!(list(&out), [("aaaa".into(), "2".into())]);
    assert_eq!(d.table_len(), 1);
    assert_eq!(list(&decode(&mut d, &hex("be")).unwrap()), [("aaaa".into(), "2".into())]);
}

#[test]
fn field_errors_flag_the_list_and_decoding_goes_on() {
    struct FCase {
        wire: Vec<u8>,
        expect: Option<FieldError>,
    }
    let cases = [
        FCase { wire: lit(b"", b"v"), expect: Some(FieldError::EmptyName) },
        FCase { wire: lit(b"Host", b"v"), expect: Some(FieldError::UppercaseName) },
        FCase { wire: lit(b"a b", b"v"), expect: Some(FieldError::InvalidNameByte) },
        FCase { wire: lit(b"a:b", b"v"), expect: Some(FieldError::InvalidNameByte) },
        FCase { wire: lit(b":path", b"/"), expect: None },
        FCase { wire: lit(b"x", b"a\0b"), expect: Some(FieldError::InvalidValueByte) },
        FCase { wire: lit(b"x", b"a\rb"), expect: Some(FieldError::InvalidValueByte) },
        FCase { wire: lit(b"x", b"a\nb"), expect: Some(FieldError::InvalidValueByte) },
        FCase { wire: lit(b"x", b" a"), expect: Some(FieldError::ValueWhitespace) },
        FCase { wire: lit(b"x", b"a\t"), expect: Some(FieldError::ValueWhitespace) },
        FCase { wire: lit(b"x", b"a\tb c"), expect: None },
        // Huffman name "A" (100001 + 11 padding) and value with a NUL: the checks ride the
        // Huffman path too.
        FCase { wire: hex("4081 87 0161"), expect: Some(FieldError::UppercaseName) },
        FCase { wire: hex("0001 61 82 ffc7"), expect: Some(FieldError::InvalidValueByte) },
    ];
    for c in &cases {
        let mut d = Decoder::new(4096);
        let mut wire = c.wire.clone();
        wire.extend_from_slice(&hex("82")); // a field after the bad one is still decoded
        let out = decode(&mut d, &wire).unwrap();
        assert_eq!(out.malformed(), c.expect, "{:02x?}", c.wire);
        assert_eq!(out.len(), 2);
        // The entry remembers its verdict: a reference to it flags the next list too.
        if c.wire[0] == 0x40 {
            assert_eq!(
                decode(&mut d, &hex("be")).unwrap().malformed(),
                c.expect,
                "by reference {:02x?}",
                c.wire
            );
        }
    }
}

#[test]
fn known_names_however_they_arrive() {
    let mut d = Decoder::new(4096);
    // Literal name "content-length" (incremental), static name index 4 (:path) with a
    // literal value, a literal "x-id", then a reference to the dynamic entry.
    let mut wire = lit(b"content-length", b"5");
    wire.extend_from_slice(&hex("0402 2f61"));
    wire.extend_from_slice(&lit(b"x-id", b"1"));
    wire.extend_from_slice(&hex("bf 83"));
    let out = decode(&mut d, &wire).unwrap();
    let known: Vec<_> = out.iter().map(|f| f.known).collect();
    assert_eq!(
        known,
        [
            Some(StaticName::CONTENT_LENGTH),
            Some(StaticName::PATH),
            None,
            Some(StaticName::CONTENT_LENGTH),
            Some(StaticName::METHOD)
        ]
    );
}

/// The header-list bomb: one 4 KB entry referenced 16,000 times must cost no more memory
/// than the budget (and work bounded by the block, which the fuzz target's time limit and
/// this test's size keep honest): the fields past the budget are counted, not stored.
#[test]
fn a_reference_repeated_past_the_budget_is_not_stored() {
    let budget = 16 * 1024;
    let mut d = Decoder::new(8192);
    let mut out = FieldList::new(budget);
    let mut wire = vec![0x40, 0x01, b'x', 0x7f, 0x81, 0x1f]; // value length 127 + 3969 = 4096
    wire.extend_from_slice(&[b'v'; 4096]);
    wire.extend(std::iter::repeat_n(0xbe, 16_000));
    d.decode(&wire, &mut out).unwrap();
    assert!(out.too_large());
    assert_eq!(out.len(), 3, "three 4,129-octet fields fit in 16 KiB");
    assert!(
        out.arena_capacity() <= 2 * budget,
        "arena {} for a budget of {budget}",
        out.arena_capacity()
    );
    // The table still holds the entry: the next block (within budget) decodes it.
    d.decode(&[0xbe], &mut out).unwrap();
    assert!(!out.too_large());
    assert_eq!(out.iter().next().unwrap().value.len(), 4096);

    // Literals past the budget: never stored, the arena stays bounded even for a Huffman
    // string far longer than the budget.
    let mut d = Decoder::new(4096);
    let mut out = FieldList::new(1000);
    let mut wire = vec![0x00, 0x01, b'x', 0xff, 0x91, 0x4d]; // 127 + 9873 = 10000 Huffman octets
    wire.extend(std::iter::repeat_n(0x00, 10_000)); // "0" x 16000
    d.decode(&wire, &mut out).unwrap();
    assert!(out.too_large());
    assert_eq!(out.len(), 0);
    assert!(out.arena_capacity() <= 2 * 1000, "{}", out.arena_capacity());
}

/// Empty fields cost their 32 octets too: once the overhead no longer fits, an empty field
/// is past the budget (it once slipped in, room being 0 and its size 0; the fuzz target found
/// it).
#[test]
fn empty_fields_past_the_budget_are_not_stored() {
    let mut d = Decoder::new(4096);
    // Budget 100: "a: b" (34), then empty fields (32 each): one fits (66), the next (98)
    // too, the third (130) not, nor anything after it.
    let mut out = FieldList::new(100);
    let mut wire = lit(b"a", b"b");
    wire.extend(hex("00 00 00 00 00 00 00 00 00 00 00 00"));
    d.decode(&wire, &mut out).unwrap();
    assert!(out.too_large());
    assert_eq!(out.len(), 3);
    let size: usize = out.iter().map(|f| f.name.len() + f.value.len() + 32).sum();
    assert_eq!(size, 98);
    // Exactly at the budget is within it.
    let mut out = FieldList::new(98);
    d.decode(&wire[..wire.len() - 6], &mut out).unwrap();
    assert!(!out.too_large());
    assert_eq!(out.len(), 3);
}

#[test]
fn the_list_is_reused_and_cleared() {
    let mut d = Decoder::new(4096);
    let mut out = FieldList::new(1 << 16);
    d.decode(&lit(b"Bad", b"v"), &mut out).unwrap();
    assert!(out.malformed().is_some());
    d.decode(&hex("82 84"), &mut out).unwrap();
    assert_eq!(out.malformed(), None);
    assert_eq!(list(&out), [(":method".into(), "GET".into()), (":path".into(), "/".into())]);
    assert_eq!(format!("{out:?}"), r#"[":method": "GET", ":path": "/"]"#);
}

/// A repeat replays its incremental literals, however many: replayed, the table is what
/// decoding again makes it.
#[test]
fn replays_every_insert() {
    for n in [0, 1, 2, 30] {
        let block: Vec<u8> = (0..n).flat_map(|i| lit(b"k", format!("{i}").as_bytes())).collect();
        let (mut d, mut plain) = (Decoder::new(4096), Decoder::new(4096));
        let (mut out, mut plain_out) = (FieldList::new(1 << 16), FieldList::new(1 << 16));
        d.decode(&block, &mut out).unwrap();
        plain.decode(&block, &mut plain_out).unwrap();
        assert!(d.replays(), "{n} inserts");
        let g = d.generation();
        d.replay(&out);
        assert_eq!(d.generation() != g, n > 0, "the generation moves with the table");
        plain.decode(&block, &mut plain_out).unwrap();
        assert_eq!(d.table_len(), 2 * n);
        // Every entry, newest first, as the plain decoder has it.
        let all: Vec<u8> = (0..2 * n).map(|i| 0xbe + i as u8).collect();
        d.decode(&all, &mut out).unwrap();
        plain.decode(&all, &mut plain_out).unwrap();
        assert_eq!(list(&out), list(&plain_out), "{n} inserts");
    }
    // A list past its budget is not replayed: its fields are not all there to insert from.
    let mut d = Decoder::new(4096);
    let mut out = FieldList::new(40);
    d.decode(&[lit(b"k", b"v"), lit(b"k", b"w")].concat(), &mut out).unwrap();
    assert!(out.too_large());
    assert!(!d.replays());
}
