//! HPACK header compression (RFC 7541).

mod field_bytes;
mod huffman;
mod integer;
mod static_table;

pub use static_table::StaticName;

/// A header block that cannot be decoded: a connection error of type COMPRESSION_ERROR
/// (RFC 9113 §4.3).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DecodeError {
    /// The block ends inside a representation.
    Truncated,
    /// An integer above 2^32 - 1 (RFC 7541 §5.1).
    IntegerOverflow,
}

/// A field that violates RFC 9113 §8.2.1.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FieldError {
    /// Empty name.
    EmptyName,
    /// Uppercase name.
    UppercaseName,
    /// Bad name byte.
    InvalidNameByte,
    /// Bad value byte.
    InvalidValueByte,
    /// Leading or trailing whitespace.
    ValueWhitespace,
}
