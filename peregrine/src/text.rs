//! A short string stored inline: header values formatted per request (the file handler's
//! ETags, dates and ranges, the router's `Allow`) without allocating.

use std::fmt;

/// A short string stored inline (header values we format per request, without allocating).
#[derive(Clone, Copy)]
pub(crate) struct Text<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> Text<N> {
    pub(crate) const fn new() -> Self {
        Text { buf: [0; N], len: 0 }
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl<const N: usize> fmt::Write for Text<N> {
    /// Writes all of `s` or nothing (the value stays a whole, valid string).
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let dst = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

impl<const N: usize> fmt::Debug for Text<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&String::from_utf8_lossy(self.as_bytes()), f)
    }
}
