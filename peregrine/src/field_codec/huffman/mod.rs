//! The Huffman code of HPACK (RFC 7541 §5.2, Appendix B), which QPACK uses unchanged (RFC 9204
//! §4.1.2): decoding with a generated multi-symbol table, and encoding.

mod codes;
mod decode;
mod decode_table;
mod encode;
#[cfg(test)]
mod generate;
#[cfg(test)]
mod tests;

pub(crate) use decode::{HuffmanError, SLACK, decode, max_decoded_len};
pub(crate) use encode::{encode, encoded_len};
