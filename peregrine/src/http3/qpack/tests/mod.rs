//! QPACK tests across the encoder and decoder: RFC 9204 Appendix B byte for byte, invalid
//! input with its error, and round trips over a simulated exchange with delays.

mod appendix_b;
mod errors;
mod round_trip;

use crate::http2::hpack::FieldList;

/// Parses a hex string with spaces.
pub(super) fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

/// A decoded list as owned strings.
pub(super) fn fields(list: &FieldList) -> Vec<(String, String)> {
    list.iter()
        .map(|f| {
            (
                String::from_utf8_lossy(f.name).into_owned(),
                String::from_utf8_lossy(f.value).into_owned(),
            )
        })
        .collect()
}

/// Owned pairs from `&str` pairs.
pub(super) fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
}
