//! Every kernel against the [`CLASS`] table, for all 256 byte values in every lane position,
//! at block boundaries and in the overlapping tail block.

use super::scalar::Scalar;
use super::*;

/// Random cases per test: all `n` natively, a few hundred under Miri (which interprets every
/// load and is thousands of times slower), enough to reach every block-boundary length.
fn scaled(n: usize) -> usize {
    if cfg!(miri) { n.min(300) } else { n }
}

fn reference_first(buf: &[u8], start: usize, bit: u8) -> usize {
    (start..buf.len()).find(|&i| CLASS[usize::from(buf[i])] & bit == 0).unwrap_or(buf.len())
}

fn reference_line(buf: &[u8], start: usize) -> (usize, usize) {
    let c = reference_first(buf, start, TOKEN);
    if c >= buf.len() { (buf.len(), buf.len()) } else { (c, reference_first(buf, c + 1, VALUE)) }
}

/// Runs `check` with every kernel this machine can execute.
fn each_kernel(mut check: impl FnMut(&str, &dyn Fn(&[u8], usize) -> [usize; 4])) {
    fn answers<K: Kernel>(k: K) -> impl Fn(&[u8], usize) -> [usize; 4] {
        move |buf, start| {
            let (c, e) = k.line(buf, start);
            [k.non_token(buf, start), k.non_target(buf, start), c, e]
        }
    }
    check("scalar", &answers(Scalar));
    #[cfg(target_arch = "x86_64")]
    {
        if let Some(k) = sse42::Sse42::detect() {
            check("sse42", &answers(Vector(k)));
        }
        if let Some(k) = avx2::Avx2::detect() {
            check("avx2", &answers(Vector(k)));
        }
    }
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    check("neon", &answers(Vector(neon::Neon::new())));
}

fn expected(buf: &[u8], start: usize) -> [usize; 4] {
    let (c, e) = reference_line(buf, start);
    [reference_first(buf, start, TOKEN), reference_first(buf, start, TARGET), c, e]
}

#[test]
#[cfg_attr(miri, ignore = "exhaustive: hours under Miri; the random tests cover it")]
fn every_byte_in_every_position_matches_the_table() {
    each_kernel(|name, k| {
        for len in [1, 15, 16, 17, 31, 32, 33, 47, 65, 79] {
            for pos in 0..len {
                for b in 0..=255u8 {
                    for filler in [b'a', b'/'] {
                        let mut buf = vec![filler; len];
                        buf[pos] = b;
                        for start in [0, pos.saturating_sub(1), 17.min(len)] {
                            assert_eq!(
                                k(&buf, start),
                                expected(&buf, start),
                                "{name}: byte {b:#04x} at {pos} of {len}, start {start}"
                            );
                        }
                    }
                }
            }
        }
    });
}

#[test]
#[cfg_attr(miri, ignore = "exhaustive: hours under Miri; the random tests cover it")]
fn header_line_value_phase_every_byte_every_position() {
    // "name:" then a value; the probe byte sits somewhere in the value, possibly in the block
    // that holds the colon, possibly in a later (or the overlapping tail) block.
    each_kernel(|name, k| {
        for name_len in [1, 4, 14, 15, 31, 32, 40] {
            // 140: values long enough for the two-blocks-per-step value loop of every kernel.
            for len in [name_len + 2, 33, 48, 70, 140] {
                // (The long value with two name lengths only: it is the slowest row.)
                if len <= name_len + 1 || (len == 140 && ![4, 31].contains(&name_len)) {
                    continue;
                }
                for pos in name_len + 1..len {
                    for b in 0..=255u8 {
                        let mut buf = vec![b'v'; len];
                        buf[..name_len].fill(b'n');
                        buf[name_len] = b':';
                        buf[pos] = b;
                        for start in [0, name_len] {
                            assert_eq!(
                                k(&buf, start),
                                expected(&buf, start),
                                "{name}: byte {b:#04x} at {pos}, name {name_len}, len {len}"
                            );
                        }
                    }
                }
            }
        }
    });
}

#[test]
fn random_buffers_match_the_table() {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    each_kernel(|name, k| {
        for _ in 0..scaled(20_000) {
            let len = (next() % 100) as usize;
            // Mostly good bytes with an occasional outlier, so the scans run far.
            let buf: Vec<u8> = (0..len)
                .map(|_| {
                    let r = next();
                    if r % 13 == 0 { (r >> 8) as u8 } else { b"aZ9-:/ \t"[(r >> 8) as usize % 8] }
                })
                .collect();
            let start = if len == 0 { 0 } else { (next() as usize) % (len + 1) };
            assert_eq!(k(&buf, start), expected(&buf, start), "{name}: {buf:?} from {start}");
        }
    });
}

#[test]
fn class_table_follows_the_rfc_grammar() {
    struct Case {
        bytes: &'static [u8],
        class: u8,
        member: bool,
        rfc: &'static str,
    }
    let cases = [
        Case { bytes: b"!#$%&'*+-.^_`|~09azAZ", class: TOKEN, member: true, rfc: "9110 5.6.2" },
        Case {
            bytes: b"\"(),/:;<=>?@[\\]{} \t\x00\x7f\x80",
            class: TOKEN,
            member: false,
            rfc: "9110 5.6.2",
        },
        Case { bytes: b"\t !~\x80\xff\"", class: VALUE, member: true, rfc: "9110 5.5" },
        Case {
            bytes: b"\r\n\x00\x01\x08\x0b\x1f\x7f",
            class: VALUE,
            member: false,
            rfc: "9110 5.5",
        },
        Case { bytes: b"azAZ09-._~:/?[]@!$&'()*+,;=%", class: TARGET, member: true, rfc: "3986 2" },
        Case {
            bytes: b" #\"<>\\^`{|}\x00\t\r\n\x7f\x80\xff",
            class: TARGET,
            member: false,
            rfc: "3986 2, 9112 3.2",
        },
    ];
    for c in cases {
        for &b in c.bytes {
            assert_eq!(CLASS[usize::from(b)] & c.class != 0, c.member, "{b:#04x} RFC {}", c.rfc);
        }
    }
}

#[test]
fn dispatch_picks_a_kernel() {
    let name = kernel_name();
    #[cfg(feature = "force-scalar")]
    assert_eq!(name, "scalar");
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    if std::is_x86_feature_detected!("avx2") {
        assert_eq!(name, "avx2");
    }
    assert!(!name.is_empty());
}

/// The reference for [`Kernel::field_line`]: the table-driven line scan and the usual-line
/// rule (non-empty name, colon, value bytes, CR LF).
fn reference_field_line(buf: &[u8], start: usize) -> Option<(usize, usize, usize)> {
    let (c, e) = reference_line(buf, start);
    let usual = c > start && buf.get(c) == Some(&b':') && buf.get(e..e + 2) == Some(&b"\r\n"[..]);
    usual.then(|| (c - start, e - c - 1, e + 2))
}

/// Runs `check` with [`Kernel::field_line`] of every kernel this machine can execute, its
/// answer as (name length, raw value length, next line) with the spans checked against `buf`.
fn each_field_line(
    mut check: impl FnMut(&str, &dyn Fn(&[u8], usize) -> Option<(usize, usize, usize)>),
) {
    fn answer<K: Kernel>(k: K) -> impl Fn(&[u8], usize) -> Option<(usize, usize, usize)> {
        move |buf, start| {
            let line = k.field_line(buf, start)?;
            // The spans are the bytes of `buf` they claim to be.
            let colon = start + line.name.len();
            assert_eq!(line.name, &buf[start..colon]);
            assert_eq!(line.value, &buf[colon + 1..colon + 1 + line.value.len()]);
            Some((line.name.len(), line.value.len(), line.next))
        }
    }
    check("scalar", &answer(Scalar));
    #[cfg(target_arch = "x86_64")]
    {
        if let Some(k) = sse42::Sse42::detect() {
            check("sse42", &answer(Vector(k)));
        }
        if let Some(k) = avx2::Avx2::detect() {
            check("avx2", &answer(Vector(k)));
        }
    }
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    check("neon", &answer(Vector(neon::Neon::new())));
}

#[test]
#[cfg_attr(miri, ignore = "exhaustive: hours under Miri; the random tests cover it")]
fn usual_field_line_every_byte_every_position_rfc9112_5() {
    // "name: value\r\n" followed by more bytes (another line, or the end of the head), with
    // one byte replaced by every value at every position of the line and just past it; the
    // line starts at the beginning, inside, or near the end of a block, so the in-block, the
    // long-line, the overlapping-tail and the exact paths all answer.
    each_field_line(|kernel, k| {
        for (name_len, value_len) in [(1, 0), (4, 9), (10, 10), (14, 30), (31, 2), (33, 40)] {
            for lead in [0, 5, 20] {
                for tail in [&b""[..], b"\r\n", b"X-Next: 1\r\n\r\n", &[b'a'; 40]] {
                    let mut line = vec![b'-'; lead];
                    line.extend(std::iter::repeat_n(b'n', name_len));
                    line.extend_from_slice(b": ");
                    line.extend(std::iter::repeat_n(b'v', value_len));
                    line.extend_from_slice(b"\r\n");
                    let probe_end = line.len() + 1;
                    line.extend_from_slice(tail);
                    for pos in lead..probe_end.min(line.len()) {
                        for b in 0..=255u8 {
                            let mut buf = line.clone();
                            buf[pos] = b;
                            assert_eq!(
                                k(&buf, lead),
                                reference_field_line(&buf, lead),
                                "{kernel}: byte {b:#04x} at {pos} of {:?} from {lead}",
                                buf.escape_ascii().to_string()
                            );
                        }
                    }
                }
            }
        }
    });
}

#[test]
fn random_field_lines_match_the_table() {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    each_field_line(|kernel, k| {
        for _ in 0..scaled(50_000) {
            let len = (next() % 90) as usize;
            // Header-ish bytes, with CR LF and colons common enough to make usual lines.
            let buf: Vec<u8> = (0..len)
                .map(|_| {
                    let r = next();
                    if r % 29 == 0 {
                        (r >> 8) as u8
                    } else {
                        b"aZ9-: \t\r\n:v"[(r >> 8) as usize % 11]
                    }
                })
                .collect();
            let start = if len == 0 { 0 } else { (next() as usize) % (len + 1) };
            assert_eq!(
                k(&buf, start),
                reference_field_line(&buf, start),
                "{kernel}: {buf:?} from {start}"
            );
        }
    });
}

#[test]
fn record_known_matches_the_table_record() {
    // Every kernel's vector bookkeeping against `KnownHeaders::record`: random kinds
    // (`Other` included) at random indices, with counts driven to saturation in one kind.
    fn check<K: Kernel>(name: &str, k: K) {
        const KINDS: [HeaderId; 16] = [
            HeaderId::Host,
            HeaderId::ContentLength,
            HeaderId::TransferEncoding,
            HeaderId::Connection,
            HeaderId::Expect,
            HeaderId::Upgrade,
            HeaderId::Te,
            HeaderId::Trailer,
            HeaderId::AcceptEncoding,
            HeaderId::Range,
            HeaderId::IfRange,
            HeaderId::IfMatch,
            HeaderId::IfNoneMatch,
            HeaderId::IfModifiedSince,
            HeaderId::IfUnmodifiedSince,
            HeaderId::Other,
        ];
        let mut x: u64 = 0x1234_5678_9abc_def1;
        for round in 0..scaled(200) {
            let (mut ours, mut want) = (KnownHeaders::EMPTY, KnownHeaders::EMPTY);
            let steps = if round == 0 { scaled(70_000) } else { 40 };
            for i in 0..steps {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let id = if round == 0 { HeaderId::Te } else { KINDS[(x % 16) as usize] };
                let index = if round == 1 { 70_000 + i } else { (x >> 8) as usize % 100 };
                k.record_known(&mut ours, id, index);
                want.record(id, index);
            }
            assert_eq!(ours, want, "{name}: round {round}");
        }
    }
    check("scalar", Scalar);
    #[cfg(target_arch = "x86_64")]
    {
        if let Some(k) = sse42::Sse42::detect() {
            check("sse42", Vector(k));
        }
        if let Some(k) = avx2::Avx2::detect() {
            check("avx2", Vector(k));
        }
    }
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    check("neon", Vector(neon::Neon::new()));
}
