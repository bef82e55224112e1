//! The bytes of the field grammar, by the RFC's rules, as `const fn`s: what the byte-class
//! tables are built from (the parser's `CLASS`, HPACK's field bytes). It uses nothing else of
//! the crate, so a table can be built from it without an import loop.

/// `tchar` by its grammar (RFC 9110 §5.6.2), for the byte-class tables built at compile time (the
/// parser's, HPACK's field names); at run time `field_syntax::is_tchar` reads the parser's table.
//   tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." /
//           "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA
pub(crate) const fn is_tchar_by_grammar(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'!' | b'#'
                | b'$'
                | b'%'
                | b'&'
                | b'\''
                | b'*'
                | b'+'
                | b'-'
                | b'.'
                | b'^'
                | b'_'
                | b'`'
                | b'|'
                | b'~'
        )
}

/// Whether `b` is a control byte a field value must not hold: everything below 0x20 except HTAB,
/// and DEL (RFC 9110 §5.5: field-vchar = VCHAR / obs-text, plus SP and HTAB inside).
#[inline(always)]
pub(crate) const fn is_value_ctl(b: u8) -> bool {
    (b < 0x20 && b != b'\t') | (b == 0x7f)
}
