//! Byte-class scanning kernels for the request-head parser.
//!
//! The 256-entry [`CLASS`] table is the truth: it is built from the RFC grammar below and every
//! vector kernel is tested against it for all 256 byte values in every lane position. A kernel
//! answers three questions, each "where is the first byte at or after `start` that leaves the
//! class?":
//!
//! - [`Kernel::non_token`]: the end of a `token` (RFC 9110 §5.6.2), used for extension methods;
//! - [`Kernel::non_target`]: the end of a request-target (RFC 3986 byte rules, RFC 9112 §3.2);
//! - [`Kernel::line`]: for a header line, the first non-`tchar` (where the colon must be) and,
//!   in the same pass over the same loaded vectors, the first byte after it that is not allowed
//!   in a field value (where CR LF must be, RFC 9110 §5.5).
//!
//! The kernel is chosen once per process ([`dispatch`]): AVX2 (with BMI1, BMI2 and LZCNT, which
//! every AVX2 CPU has), else SSE4.2 (+SSSE3), else the scalar table walk; NEON on aarch64. The
//! `force-scalar` feature pins the scalar path so CI can run the whole suite on the truth
//! tables alone.
//!
//! Unsafe lives here because the vector loads and the target-feature trampolines need it, and
//! because the spans the kernels prove to be ASCII are turned into `&str` without a second
//! validation pass ([`ascii_str`]).
#![allow(unsafe_code)]
// With `force-scalar` the vector kernels are only reached by the kernel tests.
#![cfg_attr(feature = "force-scalar", allow(dead_code))]

pub(crate) mod scalar;

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod sse42;

#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
pub(crate) mod neon;

use super::field_syntax::grammar::{is_tchar_by_grammar, is_value_ctl};
use super::uri_syntax::{is_sub_delim, is_unreserved};
use super::{HeaderId, KNOWN_HEADERS, KnownHeaders};

/// Class bit: `tchar` (RFC 9110 §5.6.2).
pub(crate) const TOKEN: u8 = 1;
/// Class bit: allowed inside a field value: HTAB, SP, VCHAR, obs-text (RFC 9110 §5.5).
pub(crate) const VALUE: u8 = 2;
/// Class bit: allowed in a request-target (RFC 3986 §2, §3; no `#`, RFC 9112 §3.2).
pub(crate) const TARGET: u8 = 4;

// RFC 3986 §2: unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~"
//              gen-delims = ":" / "/" / "?" / "#" / "[" / "]" / "@"
//              sub-delims = "!" / "$" / "&" / "'" / "(" / ")" / "*" / "+" / "," / ";" / "="
//              pct-encoded = "%" HEXDIG HEXDIG
// `#` starts a fragment, which a request-target never carries (RFC 9112 §3.2: origin-form is
// absolute-path [ "?" query ]). Everything else — SP, CTLs, DEL, `"` `<` `>` `\` `^` `` ` ``
// `{` `|` `}` and bytes >= 0x80 — is outside RFC 3986 and refused.
const fn is_target_byte(b: u8) -> bool {
    is_unreserved(b)
        || is_sub_delim(b)
        || matches!(b, b':' | b'/' | b'?' | b'[' | b']' | b'@' | b'%')
}

const fn build_class() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        let mut c = 0;
        if is_tchar_by_grammar(b) {
            c |= TOKEN;
        }
        // RFC 9110 §5.5: inside a value, HTAB, SP, VCHAR and obs-text.
        if !is_value_ctl(b) {
            c |= VALUE;
        }
        if is_target_byte(b) {
            c |= TARGET;
        }
        t[i] = c;
        i += 1;
    }
    t
}

/// The truth: class bits of every byte value.
pub(crate) static CLASS: [u8; 256] = build_class();

// The `&str` conversions below rely on tokens and targets being ASCII.
const _: () = {
    let t = build_class();
    let mut i = 0x80;
    while i < 256 {
        assert!(t[i] & (TOKEN | TARGET) == 0);
        i += 1;
    }
};

/// Nibble tables for a vector membership test: a byte `b` is in the class iff
/// `LO[b & 15] & HI[b >> 4] != 0` (the classic PSHUFB / TBL lookup).
///
/// Built from [`CLASS`] at compile time: each distinct non-empty row (high nibble) gets its own
/// bit, so the lookup is exact for all 256 bytes (asserted below and tested per kernel).
#[derive(Clone, Copy)]
pub(crate) struct Nibbles {
    pub(crate) lo: [u8; 16],
    pub(crate) hi: [u8; 16],
}

const fn nibbles(class: u8) -> Nibbles {
    let table = build_class();
    let mut rows = [0u16; 16];
    let mut h = 0;
    while h < 16 {
        let mut l = 0;
        while l < 16 {
            if table[h * 16 + l] & class != 0 {
                rows[h] |= 1 << l;
            }
            l += 1;
        }
        h += 1;
    }
    // Assign a bit per distinct non-empty row.
    let mut distinct = [0u16; 8];
    let mut n = 0;
    let mut hi = [0u8; 16];
    h = 0;
    while h < 16 {
        if rows[h] != 0 {
            let mut k = 0;
            while k < n && distinct[k] != rows[h] {
                k += 1;
            }
            if k == n {
                assert!(n < 8, "more than eight distinct rows");
                distinct[n] = rows[h];
                n += 1;
            }
            hi[h] = 1 << k;
        }
        h += 1;
    }
    let mut lo = [0u8; 16];
    let mut k = 0;
    while k < n {
        let mut l = 0;
        while l < 16 {
            if distinct[k] & (1 << l) != 0 {
                lo[l] |= 1 << k;
            }
            l += 1;
        }
        k += 1;
    }
    // Exactness for every byte.
    let mut b = 0;
    while b < 256 {
        let hit = lo[b & 15] & hi[b >> 4] != 0;
        assert!(hit == (table[b] & class != 0));
        b += 1;
    }
    Nibbles { lo, hi }
}

/// Nibble tables for `tchar`.
pub(crate) const TOKEN_NIBBLES: Nibbles = nibbles(TOKEN);
/// Nibble tables for request-target bytes.
pub(crate) const TARGET_NIBBLES: Nibbles = nibbles(TARGET);

mod sealed {
    pub trait Sealed {}
}

/// A scanning kernel. Sealed: only this module's kernels exist, so callers may trust that the
/// spans they report hold only bytes of the named class.
pub(crate) trait Kernel: Copy + sealed::Sealed {
    /// Index of the first byte at or after `start` that is not a `tchar`, or `buf.len()`.
    fn non_token(self, buf: &[u8], start: usize) -> usize;
    /// Index of the first byte at or after `start` that is not a request-target byte, or
    /// `buf.len()`.
    fn non_target(self, buf: &[u8], start: usize) -> usize;
    /// For a header line starting at `start`: `(c, e)` where `c` is the first non-`tchar` at or
    /// after `start` (or `buf.len()`), and `e` is the first non-value byte after `c` (or
    /// `buf.len()`; also `buf.len()` when `c == buf.len()`).
    fn line(self, buf: &[u8], start: usize) -> (usize, usize);
    /// Records header `index` as kind `id` in `known`: the same as [`KnownHeaders::record`],
    /// with vector operations where the kernel has them (the table stays whole-width in
    /// memory, so copying it into the parsed head never waits on narrow stores).
    #[inline(always)]
    fn record_known(self, known: &mut KnownHeaders, id: HeaderId, index: usize) {
        known.record(id, index);
    }
    /// For a header line starting at `start`: `Some(line)` exactly when the line is a usual
    /// one: a non-empty run of `tchar`s, `:`, value bytes, CR LF. `None` for anything else (an
    /// error, an incomplete line, the empty line ending the head), which [`Kernel::line`] and
    /// the caller's checks then decide.
    #[inline(always)]
    fn field_line(self, buf: &[u8], start: usize) -> Option<FieldLine<'_>> {
        let (colon, end) = self.line(buf, start);
        usual_line(buf, start, colon, end)
    }
}

/// A usual header line (see [`Kernel::field_line`]).
#[derive(Clone, Copy)]
pub(crate) struct FieldLine<'a> {
    /// The field name: one or more `tchar`s.
    pub(crate) name: &'a [u8],
    /// Bytes from the name's start on (at least the name; in the block paths the whole
    /// block), for loading the name in whole words.
    pub(crate) line: &'a [u8],
    /// The bytes between the colon and the CR: value bytes, OWS not yet trimmed.
    pub(crate) value: &'a [u8],
    /// The index just after the line's CR LF.
    pub(crate) next: usize,
}

/// [`Kernel::field_line`]'s answer from [`Kernel::line`]'s `(colon, end)`.
#[inline(always)]
fn usual_line(buf: &[u8], start: usize, colon: usize, end: usize) -> Option<FieldLine<'_>> {
    let usual = colon > start
        && buf.get(colon) == Some(&b':')
        && buf.get(end..end.wrapping_add(2)) == Some(&b"\r\n"[..]);
    if !usual {
        return None;
    }
    FieldLine::spans(buf, start, colon, end)
}

impl<'a> FieldLine<'a> {
    /// The line from `start` whose colon is at `colon` and whose CR LF is at `end`.
    #[inline(always)]
    fn spans(buf: &'a [u8], start: usize, colon: usize, end: usize) -> Option<Self> {
        let line = buf.get(start..)?;
        let name = line.get(..colon.checked_sub(start)?)?;
        Some(FieldLine { name, line, value: buf.get(colon + 1..end)?, next: end + 2 })
    }
}

/// Work to run with the kernel chosen for this machine, monomorphised per kernel so the whole
/// parse is compiled with the kernel's target features and the kernel inlines into it.
pub(crate) trait Job {
    /// The result.
    type Out;
    /// Runs the job with kernel `k`.
    fn run<K: Kernel>(self, k: K) -> Self::Out;
}

/// Converts a span the kernels proved to be `tchar`s or target bytes into `&str`.
///
/// Only called on `buf[start..end]` where `end` came from [`Kernel::non_token`],
/// [`Kernel::non_target`] or [`Kernel::line`] for the same `buf` and `start`.
#[inline(always)]
fn ascii_str(bytes: &[u8]) -> &str {
    debug_assert!(bytes.is_ascii());
    // SAFETY: the bytes were classified TOKEN or TARGET by a sealed kernel, and both classes
    // hold only ASCII (const-asserted above; every kernel is tested against CLASS), so they
    // are valid UTF-8.
    unsafe { std::str::from_utf8_unchecked(bytes) }
}

/// Scans a token from `start`: the token as `&str` and the index just after it.
#[inline(always)]
pub(crate) fn token<K: Kernel>(k: K, buf: &[u8], start: usize) -> (&str, usize) {
    let end = k.non_token(buf, start);
    (ascii_str(buf.get(start..end).unwrap_or_default()), end)
}

/// Scans a request-target from `start`: the target as `&str` and the index just after it.
#[inline(always)]
pub(crate) fn target<K: Kernel>(k: K, buf: &[u8], start: usize) -> (&str, usize) {
    let end = k.non_target(buf, start);
    (ascii_str(buf.get(start..end).unwrap_or_default()), end)
}

/// Scans a header line from `start`: the name (all `tchar`, possibly empty) as `&str`, the
/// index of the byte ending the name, and the index of the byte ending the value (see
/// [`Kernel::line`]).
#[inline(always)]
pub(crate) fn header_line<K: Kernel>(k: K, buf: &[u8], start: usize) -> (&str, usize, usize) {
    let (colon, end) = k.line(buf, start);
    (ascii_str(buf.get(start..colon).unwrap_or_default()), colon, end)
}

/// Scans a usual header line from `start` (see [`Kernel::field_line`]): the name as `&str`,
/// the value with OWS not yet trimmed, and the index just after the line.
#[inline(always)]
pub(crate) fn field_line<K: Kernel>(
    k: K,
    buf: &[u8],
    start: usize,
) -> Option<(&str, &[u8], &[u8], usize)> {
    let line = k.field_line(buf, start)?;
    Some((ascii_str(line.name), line.line, line.value, line.next))
}

/// A fixed-width vector classifier; [`Vector`] turns it into a [`Kernel`].
pub(crate) trait Block: Copy {
    /// Bytes per block.
    const W: usize;
    /// Mask bits per byte (1 for x86 movemask, 4 for the NEON narrowing trick).
    const S: u32;
    /// Masks over `W` bytes at `ptr`: bit(s) of byte `i` set when the byte is NOT a `tchar`
    /// (first) and when it is NOT a value byte (second).
    ///
    /// # Safety
    /// `ptr` must point at `W` readable bytes.
    unsafe fn name_value(self, ptr: *const u8) -> (u64, u64);
    /// Mask over `W` bytes at `ptr`: bit(s) of byte `i` set when it is NOT a target byte.
    ///
    /// # Safety
    /// `ptr` must point at `W` readable bytes.
    unsafe fn target(self, ptr: *const u8) -> u64;
    /// [`Kernel::record_known`] on the lanes: lane `k` (`k < 15`) of `count` is incremented
    /// (saturating) and, if it was 0, lane `k` of `first` set to `index`.
    #[inline(always)]
    fn record_known(self, first: &mut [u16; 16], count: &mut [u16; 16], k: u16, index: u16) {
        let k = usize::from(k);
        if let (Some(f), Some(c)) = (first.get_mut(k), count.get_mut(k)) {
            if *c == 0 {
                *f = index;
            }
            *c = c.saturating_add(1);
        }
    }
    /// Whether [`Block::delims`] is implemented (the header-line fast path).
    const DELIMS: bool = false;
    /// Masks over `W` bytes at `ptr`: bit(s) of byte `i` set when it is `:` (first) and when it
    /// is CR (second). Only called when [`Block::DELIMS`] is true.
    ///
    /// # Safety
    /// `ptr` must point at `W` readable bytes.
    #[inline(always)]
    unsafe fn delims(self, _ptr: *const u8) -> (u64, u64) {
        (0, 0)
    }
}

/// A [`Kernel`] built from a [`Block`] classifier.
#[derive(Clone, Copy)]
pub(crate) struct Vector<B>(pub(crate) B);

impl<B: Block> sealed::Sealed for Vector<B> {}

/// Mask with the low `bits` bits set.
#[inline(always)]
fn low_bits(bits: u32) -> u64 {
    if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 }
}

impl<B: Block> Vector<B> {
    /// Where the block covering `i` starts and how many of its leading bytes lie before `i`.
    /// Near the end of `buf` the block is moved back so it ends at `buf.len()` (an overlapping
    /// load, never a read past the slice). Requires `buf.len() >= W` and `i < buf.len()`.
    #[inline(always)]
    fn base(buf: &[u8], i: usize) -> (usize, usize) {
        if i + B::W <= buf.len() { (i, 0) } else { (buf.len() - B::W, i - (buf.len() - B::W)) }
    }

    #[inline(always)]
    fn masks(self, buf: &[u8], i: usize) -> (u64, u64, usize) {
        let (base, skip) = Self::base(buf, i);
        let chunk = &buf[base..base + B::W];
        // SAFETY: `chunk` holds exactly W bytes.
        let (t, v) = unsafe { self.0.name_value(chunk.as_ptr()) };
        let s = skip as u32 * B::S;
        (t >> s, v >> s, B::W - skip)
    }
}

impl<B: Block> Kernel for Vector<B> {
    #[inline(always)]
    fn record_known(self, known: &mut KnownHeaders, id: HeaderId, index: usize) {
        let k = id as usize;
        if k < KNOWN_HEADERS {
            let (first, count) = known.lanes_mut();
            self.0.record_known(first, count, k as u16, index as u16);
        }
    }

    #[inline(always)]
    fn non_token(self, buf: &[u8], start: usize) -> usize {
        if buf.len() < B::W {
            return scalar::Scalar.non_token(buf, start);
        }
        let mut i = start;
        while i < buf.len() {
            let (t, _, n) = self.masks(buf, i);
            if t != 0 {
                return i + (t.trailing_zeros() / B::S) as usize;
            }
            i += n;
        }
        buf.len()
    }

    #[inline(always)]
    fn non_target(self, buf: &[u8], start: usize) -> usize {
        if buf.len() < B::W {
            return scalar::Scalar.non_target(buf, start);
        }
        // The usual short target ends in the first block.
        if let Some(chunk) = buf.get(start..start + B::W) {
            // SAFETY: `chunk` holds exactly W bytes.
            let m = unsafe { self.0.target(chunk.as_ptr()) };
            if m != 0 {
                return start + (m.trailing_zeros() / B::S) as usize;
            }
        }
        let mut i = start;
        while i < buf.len() {
            let (base, skip) = Self::base(buf, i);
            let chunk = &buf[base..base + B::W];
            // SAFETY: `chunk` holds exactly W bytes.
            let m = unsafe { self.0.target(chunk.as_ptr()) } >> (skip as u32 * B::S);
            if m != 0 {
                return i + (m.trailing_zeros() / B::S) as usize;
            }
            i += B::W - skip;
        }
        buf.len()
    }

    #[inline(always)]
    fn field_line(self, buf: &[u8], start: usize) -> Option<FieldLine<'_>> {
        let len = buf.len();
        if B::DELIMS {
            // The block from `start`; near the end the last block of `buf` (an overlapping
            // load: the head's last field line is usually that close to its end).
            let answer = if start + B::W <= len {
                self.block_line(buf, start)
            } else if len >= B::W && buf.get(start).is_some_and(|&b| b > b' ') {
                // (The empty line ending the head is left to the caller at once.)
                self.tail_line(buf, start)
            } else {
                None
            };
            if let Some(answer) = answer {
                return answer;
            }
        }
        // A usual line starts with a `tchar`: the empty line ending the head goes back to the
        // caller at once.
        if buf.get(start).is_none_or(|&b| b <= b' ') {
            return None;
        }
        let (colon, end) = self.line(buf, start);
        usual_line(buf, start, colon, end)
    }

    #[inline(always)]
    fn line(self, buf: &[u8], start: usize) -> (usize, usize) {
        let len = buf.len();
        if len < B::W {
            return scalar::Scalar.line(buf, start);
        }
        // Fast path for a line that ends within one block from `start`: the colon and the CR
        // are found by single compares, so the next line's load waits only on those; the
        // class masks confirm the answer (no non-`tchar` before the colon, no non-value byte
        // between it and the CR) off that dependency chain, behind a branch that predicts.
        // When they do not confirm it, the exact scan below decides.
        // A line longer than the block whose first block is a clean name, colon and value
        // start goes straight on to the value phase (the usual long line: a user agent, a
        // cookie), so the name phase below does not load and classify that block again.
        let mut resume = None;
        if B::DELIMS && start + B::W <= len {
            let chunk = &buf[start..start + B::W];
            // SAFETY: `chunk` holds exactly W bytes.
            let ((t, v), (c, r)) =
                unsafe { (self.0.name_value(chunk.as_ptr()), self.0.delims(chunk.as_ptr())) };
            if c != 0 {
                let at = c.trailing_zeros() / B::S;
                let after = !low_bits((at + 1) * B::S);
                let name_ok = t & low_bits(at * B::S) == 0;
                // The line's end is the block's first CR, found without waiting for the
                // colon (a valid name holds no CR), which keeps the chain from one line to
                // the next short; a CR before the colon fails `at < e`.
                if r != 0 {
                    let e = r.trailing_zeros() / B::S;
                    let value = low_bits(e * B::S) & after;
                    if at < e && name_ok && v & value == 0 {
                        return (start + at as usize, start + e as usize);
                    }
                } else if name_ok && v & after == 0 {
                    resume = Some((start + at as usize, start + B::W));
                }
            }
        }
        let (colon, i) = match resume {
            Some(state) => state,
            None => {
                let mut i = start;
                // Name phase: the same loaded block answers for the value too, so a typical
                // line ("Host: example.com\r\n") is settled by one load.
                let colon = loop {
                    if i >= len {
                        return (len, len);
                    }
                    let (t, v, n) = self.masks(buf, i);
                    if t != 0 {
                        let at = t.trailing_zeros() / B::S;
                        let v = v & !low_bits((at + 1) * B::S);
                        if v != 0 {
                            return (i + at as usize, i + (v.trailing_zeros() / B::S) as usize);
                        }
                        let colon = i + at as usize;
                        i += n;
                        break colon;
                    }
                    i += n;
                };
                (colon, i)
            }
        };
        (colon, self.value_end(buf, i))
    }
}

impl<B: Block> Vector<B> {
    /// [`Kernel::field_line`] from the block at `start` (`start + W <= buf.len()`; a line in
    /// the last `W` bytes goes to [`Vector::tail_line`]): `Some(answer)` when the block settles
    /// it, `None` to leave the line to the exact scan.
    ///
    /// The colon and the CR are found by single compares, so the next line's start waits only
    /// on those; the class masks confirm the line off that dependency chain, behind a branch
    /// that predicts.
    #[inline(always)]
    fn block_line(self, buf: &[u8], start: usize) -> Option<Option<FieldLine<'_>>> {
        let chunk = buf.get(start..start + B::W)?;
        // SAFETY: `chunk` holds exactly W bytes.
        let ((t, v), (c, r)) =
            unsafe { (self.0.name_value(chunk.as_ptr()), self.0.delims(chunk.as_ptr())) };
        // Where a block's mask has fewer than 64 bits, a stop bit past its end keeps the bit
        // counts below 64 and the masks below them single shifts.
        let narrow = (B::W as u32) * B::S < 64;
        let stop = if narrow { 1u64 << ((B::W as u32 * B::S) & 63) } else { 0 };
        let below = |bits: u32| if narrow { (1u64 << (bits & 63)) - 1 } else { low_bits(bits) };
        let at = ((c | stop).trailing_zeros() / B::S) as usize;
        // The name: no non-`tchar` before the first colon, and not empty (the byte at `start`
        // is a `tchar`; the colon is not one). With no colon in the block `at` is past it and
        // the test needs `t == 0`, which a block holding a CR fails.
        let name_bad = t & (below(at as u32 * B::S) | below(B::S));
        if r != 0 {
            // The block's first CR ends the line. A CR before the colon is a non-`tchar` in
            // the name. Non-value bytes are non-`tchar`s and the colon is a value byte, so
            // only the bytes before the CR need the value test.
            let e = (r.trailing_zeros() / B::S) as usize;
            let bad = name_bad | (v & below(e as u32 * B::S));
            if bad == 0 && buf.get(start + e + 1) == Some(&b'\n') {
                let name = chunk.get(..at)?;
                let value = chunk.get(at + 1..e)?;
                return Some(Some(FieldLine { name, line: chunk, value, next: start + e + 2 }));
            }
        } else if c != 0 && name_bad == 0 && v == 0 {
            // A clean name, colon and value start in a block without CR: the usual long line
            // (a user agent, a cookie); only its value's end is left to find.
            // The name and the colon are proven; the line is usual when that end is CR LF.
            let end = self.value_end(buf, start + B::W);
            if buf.get(end..end.wrapping_add(2)) != Some(&b"\r\n"[..]) {
                return Some(None);
            }
            let name = chunk.get(..at)?;
            let value = buf.get(start + at + 1..end)?;
            return Some(Some(FieldLine { name, line: chunk, value, next: end + 2 }));
        }
        None
    }

    /// [`Kernel::field_line`] for a line starting in the last `W` bytes of `buf` (`buf.len() -
    /// W < start < buf.len()`), from the last block (an overlapping load: the head's last field
    /// line is usually that close to its end): `Some(answer)` when the block settles it, `None`
    /// to leave the line to the exact scan.
    ///
    /// The masks are shifted so bit 0 is `start` (the bytes before it belong to the previous
    /// line); then first-set-bit counts decide: a usual line's first non-`tchar` is its colon,
    /// not at `start`, and its first non-value byte (the colon and the name's bytes are value
    /// bytes) is its CR, followed by LF.
    #[inline(always)]
    fn tail_line(self, buf: &[u8], start: usize) -> Option<Option<FieldLine<'_>>> {
        let base = buf.len().checked_sub(B::W)?;
        let chunk = buf.get(base..)?;
        let skip = start.checked_sub(base)?;
        // SAFETY: `chunk` holds exactly W bytes (it is the last W bytes of `buf`).
        let ((t, v), (c, r)) =
            unsafe { (self.0.name_value(chunk.as_ptr()), self.0.delims(chunk.as_ptr())) };
        let shift = (skip as u32 * B::S) & 63;
        let (t, v, c, r) = (t >> shift, v >> shift, c >> shift, r >> shift);
        let (at, e) = (c.trailing_zeros(), r.trailing_zeros());
        if at == t.trailing_zeros() && at != 0 && e == v.trailing_zeros() && r != 0 {
            let colon = start + (at / B::S) as usize;
            let end = start + (e / B::S) as usize;
            // RFC 9112 §2.2: the line ends with CR LF.
            if buf.get(end + 1) == Some(&b'\n') {
                return Some(FieldLine::spans(buf, start, colon, end));
            }
        }
        None
    }

    /// The value phase of [`Kernel::line`]: the first non-value byte at or after `i`, or
    /// `buf.len()`. Requires `buf.len() >= W`.
    #[inline(always)]
    fn value_end(self, buf: &[u8], mut i: usize) -> usize {
        let len = buf.len();
        // Long values (cookies, user agents) take two blocks per step: half the loop
        // overhead, and the two loads are independent.
        while i + 2 * B::W <= len {
            let chunk = &buf[i..i + 2 * B::W];
            // SAFETY: `chunk` holds exactly 2 * W bytes, so both blocks are readable.
            let (v0, v1) = unsafe {
                let p = chunk.as_ptr();
                (self.0.name_value(p).1, self.0.name_value(p.add(B::W)).1)
            };
            if v0 | v1 != 0 {
                let at = if v0 != 0 {
                    (v0.trailing_zeros() / B::S) as usize
                } else {
                    B::W + (v1.trailing_zeros() / B::S) as usize
                };
                return i + at;
            }
            i += 2 * B::W;
        }
        while i < len {
            let (_, v, n) = self.masks(buf, i);
            if v != 0 {
                return i + (v.trailing_zeros() / B::S) as usize;
            }
            i += n;
        }
        len
    }
}

/// Runs `job` with the kernel for this machine (chosen once, then cached).
#[inline(always)]
pub(crate) fn dispatch<J: Job>(job: J) -> J::Out {
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    {
        match x86::level() {
            x86::AVX2 => {
                // SAFETY: level() reports AVX2 only after detecting avx2, bmi1, bmi2 and lzcnt.
                return unsafe { x86::run_avx2(job) };
            }
            x86::SSE42 => {
                // SAFETY: level() reports SSE42 only after detecting sse4.2 and ssse3.
                return unsafe { x86::run_sse42(job) };
            }
            _ => {}
        }
    }
    #[cfg(all(target_arch = "aarch64", target_feature = "neon", not(feature = "force-scalar")))]
    {
        return job.run(Vector(neon::Neon::new()));
    }
    #[allow(unreachable_code)]
    run_scalar(job)
}

/// The scalar run, kept out of line where a vector kernel is the usual one: inlined, its code
/// made the dispatching function save registers and build a large frame on every call, even
/// when it only forwards to the vector kernel.
#[cfg_attr(
    any(
        all(target_arch = "x86_64", not(feature = "force-scalar")),
        all(target_arch = "aarch64", target_feature = "neon", not(feature = "force-scalar"))
    ),
    inline(never)
)]
#[cfg_attr(
    not(any(
        all(target_arch = "x86_64", not(feature = "force-scalar")),
        all(target_arch = "aarch64", target_feature = "neon", not(feature = "force-scalar"))
    )),
    inline(always)
)]
fn run_scalar<J: Job>(job: J) -> J::Out {
    job.run(scalar::Scalar)
}

/// The header-scanning kernel this process uses: `"avx2"`, `"sse4.2"`, `"neon"` or `"scalar"`
/// (chosen once at first use; `"scalar"` with the `force-scalar` feature). For benches and
/// tests (the `unstable` feature).
///
/// # Examples
/// ```
/// assert!(["avx2", "sse4.2", "neon", "scalar"].contains(&peregrine::http1::kernel_name()));
/// ```
#[cfg(any(test, fuzzing, feature = "unstable"))]
pub fn kernel_name() -> &'static str {
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    {
        match x86::level() {
            x86::AVX2 => return "avx2",
            x86::SSE42 => return "sse4.2",
            _ => {}
        }
    }
    #[cfg(all(target_arch = "aarch64", target_feature = "neon", not(feature = "force-scalar")))]
    {
        return "neon";
    }
    #[allow(unreachable_code)]
    "scalar"
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Job, Vector, avx2::Avx2, sse42::Sse42};
    use std::sync::atomic::{AtomicU8, Ordering};

    pub(super) const SCALAR: u8 = 1;
    pub(super) const SSE42: u8 = 2;
    pub(super) const AVX2: u8 = 3;

    static LEVEL: AtomicU8 = AtomicU8::new(0);

    /// The best kernel level for this CPU, detected on first use.
    #[inline(always)]
    pub(super) fn level() -> u8 {
        let l = LEVEL.load(Ordering::Relaxed);
        if l != 0 { l } else { detect() }
    }

    #[cold]
    fn detect() -> u8 {
        // Every AVX2 CPU also has BMI1/BMI2/LZCNT; requiring them lets the mask arithmetic use
        // `bzhi`, `blsmsk` and a `tzcnt` without a zero-input fix-up.
        let l = if std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("bmi1")
            && std::is_x86_feature_detected!("bmi2")
            && std::is_x86_feature_detected!("lzcnt")
        {
            AVX2
        } else if std::is_x86_feature_detected!("sse4.2") && std::is_x86_feature_detected!("ssse3")
        {
            SSE42
        } else {
            SCALAR
        };
        LEVEL.store(l, Ordering::Relaxed);
        l
    }

    /// # Safety
    /// The CPU must support AVX2, BMI1, BMI2 and LZCNT.
    #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt")]
    pub(super) unsafe fn run_avx2<J: Job>(job: J) -> J::Out {
        // SAFETY: the caller guarantees AVX2.
        job.run(Vector(unsafe { Avx2::new_unchecked() }))
    }

    /// # Safety
    /// The CPU must support SSE4.2 and SSSE3.
    #[target_feature(enable = "sse4.2,ssse3")]
    pub(super) unsafe fn run_sse42<J: Job>(job: J) -> J::Out {
        // SAFETY: the caller guarantees SSE4.2 and SSSE3.
        job.run(Vector(unsafe { Sse42::new_unchecked() }))
    }
}

#[cfg(test)]
mod tests;
