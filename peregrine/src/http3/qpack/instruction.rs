//! The instructions of the two QPACK unidirectional streams (RFC 9204 §4.3, §4.4): parsed from
//! any prefix of the stream (an instruction cut short is partial, not an error) and encoded.
//!
//! Encoder stream (encoder → decoder):
//! ```text
//!   0   1   2   3   4   5   6   7
//! +---+---+---+---+---+---+---+---+
//! | 0 | 0 | 1 |   Capacity (5+)   |  Set Dynamic Table Capacity (§4.3.1)
//! | 1 | T |    Name Index (6+)    |  Insert with Name Reference (§4.3.2),
//! | H |     Value Length (7+)     |    then the value
//! | 0 | 1 | H | Name Length (5+)  |  Insert with Literal Name (§4.3.3), the name,
//! | H |     Value Length (7+)     |    then the value
//! | 0 | 0 | 0 |    Index (5+)     |  Duplicate (§4.3.4)
//! +---+---+---+---+---+---+---+---+
//! ```
//! Decoder stream (decoder → encoder):
//! ```text
//! | 1 |      Stream ID (7+)       |  Section Acknowledgment (§4.4.1)
//! | 0 | 1 |     Stream ID (6+)    |  Stream Cancellation (§4.4.2)
//! | 0 | 0 |     Increment (6+)    |  Insert Count Increment (§4.4.3)
//! ```

use super::integer::{self, IntError};
use super::{Cause, literal};
use crate::http3::stream_id::StreamId;

/// A string literal on the encoder stream, still encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Str<'a> {
    pub huffman: bool,
    pub bytes: &'a [u8],
}

/// An encoder stream instruction (RFC 9204 §4.3), borrowing its strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EncoderInstruction<'a> {
    /// §4.3.1.
    SetCapacity(u64),
    /// §4.3.2: `index` is a static index with `static_`, else relative to the Insert Count.
    InsertWithNameRef { static_: bool, index: u64, value: Str<'a> },
    /// §4.3.3.
    InsertWithLiteralName { name: Str<'a>, value: Str<'a> },
    /// §4.3.4: `index` relative to the Insert Count.
    Duplicate(u64),
}

/// Reads a string literal whose length has an `n`-bit prefix with the H bit just above it.
fn string<'a>(buf: &'a [u8], p: &mut usize, n: u32) -> Result<Str<'a>, IntError> {
    let Some(&first) = buf.get(*p) else { return Err(IntError::Truncated) };
    let huffman = first & (1 << n) != 0;
    let len = integer::decode(buf, p, n)?;
    let end = usize::try_from(len).ok().and_then(|l| p.checked_add(l)).ok_or(IntError::Overflow)?;
    let bytes = buf.get(*p..end).ok_or(IntError::Truncated)?;
    *p = end;
    Ok(Str { huffman, bytes })
}

/// Maps an integer error on an instruction stream: cut short is partial (`Ok(None)`).
fn partial<T>(r: Result<T, IntError>) -> Result<Option<T>, Cause> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(IntError::Truncated) => Ok(None),
        Err(IntError::Overflow) => Err(Cause::IntegerOverflow),
    }
}

impl<'a> EncoderInstruction<'a> {
    /// Parses the instruction at the start of `buf`: it and its length, `None` when `buf` ends
    /// inside it. The work is bounded by the integers' lengths until the instruction is
    /// whole (strings are not looked at), so re-parsing a trickled instruction costs little.
    ///
    /// # Errors
    /// [`Cause::IntegerOverflow`].
    pub(crate) fn parse(buf: &'a [u8]) -> Result<Option<(Self, usize)>, Cause> {
        let Some(&b) = buf.first() else { return Ok(None) };
        let mut p = 0;
        let read = |p: &mut usize| -> Result<Self, IntError> {
            Ok(if b & 0x80 != 0 {
                let index = integer::decode(buf, p, 6)?;
                let value = string(buf, p, 7)?;
                EncoderInstruction::InsertWithNameRef { static_: b & 0x40 != 0, index, value }
            } else if b & 0x40 != 0 {
                let name = string(buf, p, 5)?;
                let value = string(buf, p, 7)?;
                EncoderInstruction::InsertWithLiteralName { name, value }
            } else if b & 0x20 != 0 {
                EncoderInstruction::SetCapacity(integer::decode(buf, p, 5)?)
            } else {
                EncoderInstruction::Duplicate(integer::decode(buf, p, 5)?)
            })
        };
        Ok(partial(read(&mut p))?.map(|i| (i, p)))
    }
}

/// Appends Set Dynamic Table Capacity.
pub(crate) fn set_capacity(dst: &mut Vec<u8>, capacity: u64) {
    integer::encode(dst, 0x20, 5, capacity);
}

/// Appends Insert with Name Reference.
pub(crate) fn insert_with_name_ref(dst: &mut Vec<u8>, static_: bool, index: u64, value: &[u8]) {
    integer::encode(dst, if static_ { 0xc0 } else { 0x80 }, 6, index);
    literal::encode(dst, 0x00, 7, value);
}

/// Appends Insert with Literal Name.
pub(crate) fn insert_with_literal_name(dst: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    literal::encode(dst, 0x40, 5, name);
    literal::encode(dst, 0x00, 7, value);
}

/// Appends Duplicate (the encoder does not duplicate yet; tests do).
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn duplicate(dst: &mut Vec<u8>, relative: u64) {
    integer::encode(dst, 0x00, 5, relative);
}

/// A decoder stream instruction (RFC 9204 §4.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DecoderInstruction {
    /// §4.4.1.
    SectionAck(StreamId),
    /// §4.4.2.
    StreamCancel(StreamId),
    /// §4.4.3.
    InsertCountIncrement(u64),
}

impl DecoderInstruction {
    /// Parses the instruction at the start of `buf`, `None` when `buf` ends inside it.
    ///
    /// # Errors
    /// [`Cause::IntegerOverflow`].
    pub(crate) fn parse(buf: &[u8]) -> Result<Option<(Self, usize)>, Cause> {
        let Some(&b) = buf.first() else { return Ok(None) };
        let mut p = 0;
        let i = if b & 0x80 != 0 {
            partial(integer::decode(buf, &mut p, 7))?.map(|id| Self::SectionAck(StreamId::new(id)))
        } else if b & 0x40 != 0 {
            partial(integer::decode(buf, &mut p, 6))?
                .map(|id| Self::StreamCancel(StreamId::new(id)))
        } else {
            partial(integer::decode(buf, &mut p, 6))?.map(Self::InsertCountIncrement)
        };
        Ok(i.map(|i| (i, p)))
    }

    /// Appends the instruction.
    pub(crate) fn encode(self, dst: &mut Vec<u8>) {
        match self {
            Self::SectionAck(s) => integer::encode(dst, 0x80, 7, s.get()),
            Self::StreamCancel(s) => integer::encode(dst, 0x40, 6, s.get()),
            Self::InsertCountIncrement(n) => integer::encode(dst, 0x00, 6, n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoder_instructions_from_rfc_9204_appendix_b() {
        type I = EncoderInstruction<'static>;
        let raw = |bytes| Str { huffman: false, bytes };
        let cases: [(&[u8], I); 5] = [
            (b"\x3f\xbd\x01", I::SetCapacity(220)),
            (
                b"\xc0\x0fwww.example.com",
                I::InsertWithNameRef { static_: true, index: 0, value: raw(b"www.example.com") },
            ),
            (
                b"\x4acustom-key\x0ccustom-value",
                I::InsertWithLiteralName { name: raw(b"custom-key"), value: raw(b"custom-value") },
            ),
            (b"\x02", I::Duplicate(2)),
            (
                b"\x81\x0dcustom-value2",
                I::InsertWithNameRef { static_: false, index: 1, value: raw(b"custom-value2") },
            ),
        ];
        for (bytes, expect) in cases {
            assert_eq!(I::parse(bytes), Ok(Some((expect, bytes.len()))), "{bytes:02x?}");
            for cut in 0..bytes.len() {
                assert_eq!(I::parse(&bytes[..cut]), Ok(None), "{bytes:02x?} cut at {cut}");
            }
            // Encoding gives the same bytes back (these strings are not shorter Huffman-coded
            // ... except where they are: compare by parsing instead).
            let mut out = Vec::new();
            match expect {
                I::SetCapacity(c) => set_capacity(&mut out, c),
                I::InsertWithNameRef { static_, index, value } => {
                    insert_with_name_ref(&mut out, static_, index, value.bytes)
                }
                I::InsertWithLiteralName { name, value } => {
                    insert_with_literal_name(&mut out, name.bytes, value.bytes)
                }
                I::Duplicate(i) => duplicate(&mut out, i),
            }
            let (got, n) = EncoderInstruction::parse(&out).unwrap().unwrap();
            assert_eq!(n, out.len());
            assert_eq!(std::mem::discriminant(&got), std::mem::discriminant(&expect));
        }
        assert_eq!(
            I::parse(b"\x3f\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"),
            Err(Cause::IntegerOverflow)
        );
    }

    #[test]
    fn decoder_instructions() {
        type D = DecoderInstruction;
        let cases: [(&[u8], D); 4] = [
            (b"\x84", D::SectionAck(StreamId::new(4))),
            (b"\x48", D::StreamCancel(StreamId::new(8))),
            (b"\x01", D::InsertCountIncrement(1)),
            (b"\xff\x81\x01", D::SectionAck(StreamId::new(127 + 129))),
        ];
        for (bytes, expect) in cases {
            assert_eq!(D::parse(bytes), Ok(Some((expect, bytes.len()))));
            let mut out = Vec::new();
            expect.encode(&mut out);
            assert_eq!(out, bytes);
            for cut in 0..bytes.len() {
                assert_eq!(D::parse(&bytes[..cut]), Ok(None));
            }
        }
    }
}
