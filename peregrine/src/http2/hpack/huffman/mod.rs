//! The HPACK Huffman code (RFC 7541 §5.2, Appendix B): decoding with a generated
//! multi-symbol table, and encoding.

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
